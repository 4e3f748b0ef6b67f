"""Many concurrent API streams (pod logs, watches) read by one reader thread each into a bounded queue.

A reader thread per open stream, never per line; each queue holds at most ``maxsize`` lines of at
most ``Stream.lines``' ``max_line`` bytes, and a full queue blocks its readers (back-pressure down to
the TCP connection), so memory stays bounded however fast pods log. ``close()`` shuts every stream
down from the consuming thread, which ends the blocked reads (Ctrl-C exits at once).
"""

from __future__ import annotations

import json
import queue
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, Hashable, Iterator, Optional

from .client import Stream

END = object()  # a reader's last item: its stream ended


@dataclass
class Item:
    key: Hashable  # which stream
    line: Any  # bytes of a log line, a decoded watch event, or END
    error: Optional[Exception] = None  # with END: why the stream broke, None when it ended normally


class Readers:
    """Readers of several streams into one bounded queue (or one queue per stream, for merging)."""

    def __init__(self, maxsize: int = 1024, max_line: int = 16 * 1024):
        self.maxsize = maxsize
        self.max_line = max_line
        self.shared: queue.Queue[Item] = queue.Queue(maxsize)
        self.streams: Dict[Hashable, Stream] = {}
        self._lock = threading.Lock()

    def add(self, key: Hashable, stream: Stream, *, decode: Optional[Callable[[bytes], Any]] = None,
            own_queue: bool = False) -> queue.Queue[Item]:
        """Start reading ``stream``; its items go to the shared queue, or to a new queue of its own."""
        q: queue.Queue[Item] = queue.Queue(self.maxsize) if own_queue else self.shared
        with self._lock:
            self.streams[key] = stream
        threading.Thread(target=self._read, args=(key, stream, q, decode), daemon=True,
                         name=f"stream {key}").start()
        return q

    def _read(self, key, stream: Stream, q: queue.Queue[Item], decode) -> None:
        try:
            for line in stream.lines(self.max_line):
                if stream.closed:
                    break
                q.put(Item(key, decode(line) if decode else line))
            error = stream.error
        except Exception as e:  # a decode error or a broken connection ends this stream only
            error = e
        q.put(Item(key, END, error))

    def stop(self, key: Hashable) -> None:
        with self._lock:
            stream = self.streams.pop(key, None)
        if stream is not None:
            stream.close()

    def close(self) -> None:
        with self._lock:
            streams, self.streams = list(self.streams.values()), {}
        for s in streams:
            s.close()


def drain(q: queue.Queue[Item], tick: float = 0.5) -> Iterator[Item]:
    """The items of one stream's own queue up to its END (exclusive); the END item's error is raised
    as the caller decides, so it is yielded too. ``tick`` only keeps the wait interruptible by Ctrl-C."""
    while True:
        try:
            item = q.get(timeout=tick)
        except queue.Empty:
            continue
        yield item
        if item.line is END:
            return


def watch_event(line: bytes) -> dict:
    """One line of a watch stream: ``{"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": {...}}``."""
    return json.loads(line)


def open_watch(cluster, path: str, resource_version: Optional[str], *, label_selector: Optional[str] = None,
               field_selector: Optional[str] = None) -> Stream:
    """One WATCH from ``resource_version`` (what a LIST returned), with bookmarks so a reconnect can
    resume where it left off."""
    return cluster.stream(path, {"watch": "true", "resourceVersion": resource_version,
                                 "allowWatchBookmarks": "true", "labelSelector": label_selector,
                                 "fieldSelector": field_selector})


def list_with_version(cluster, path: str, *, label_selector: Optional[str] = None,
                      field_selector: Optional[str] = None) -> tuple:
    """(items, resourceVersion) of one LIST: the version a following WATCH starts from."""
    body = cluster.get(path, {"labelSelector": label_selector, "fieldSelector": field_selector})
    items = body.get("items") or []
    for item in items:
        (item.get("metadata") or {}).pop("managedFields", None)
    return items, (body.get("metadata") or {}).get("resourceVersion")
