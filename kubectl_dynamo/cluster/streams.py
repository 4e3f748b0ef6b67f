"""Many concurrent API streams (pod logs, watches) read by one reader thread each into a bounded queue.

A reader thread per open stream, never per line. Queues move batches (the lines of one read of at
most ``Stream.CHUNK`` bytes, plus at most one cut ``max_line``): the shared queue holds at most
``maxsize`` of them, a stream's own queue ``per_stream``, and a full queue blocks its readers
(back-pressure down to the TCP connection), so memory stays bounded however fast pods log.
``close()`` shuts every stream down from the consuming thread, which ends the blocked reads (Ctrl-C
exits at once).
"""

from __future__ import annotations

import json
import queue
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, Hashable, Iterator, List, Optional

from kubectl_dynamo.cluster.client import Stream


@dataclass
class Item:
    key: Hashable  # which stream
    lines: List[Any]  # log lines (bytes) or decoded watch events, in order
    end: bool = False  # the stream's last item (with no lines)
    error: Optional[Exception] = None  # with end: why the stream broke, None when it ended normally


class Readers:
    """Readers of several streams into one bounded queue (or one queue per stream, for merging)."""

    def __init__(self, maxsize: int = 64, max_line: int = 16 * 1024, per_stream: int = 8):
        self.per_stream = per_stream
        self.max_line = max_line
        self.shared: queue.Queue[Item] = queue.Queue(maxsize)
        self.streams: Dict[Hashable, Stream] = {}
        self._lock = threading.Lock()

    def add(self, key: Hashable, stream: Stream, *, decode: Optional[Callable[[bytes], Any]] = None,
            own_queue: bool = False) -> queue.Queue[Item]:
        """Start reading ``stream``; its items go to the shared queue, or to a new queue of its own."""
        q: queue.Queue[Item] = queue.Queue(self.per_stream) if own_queue else self.shared
        with self._lock:
            self.streams[key] = stream
        threading.Thread(target=self._read, args=(key, stream, q, decode), daemon=True,
                         name=f"stream {key}").start()
        return q

    def _read(self, key, stream: Stream, q: queue.Queue[Item], decode) -> None:
        try:
            for batch in stream.batches(self.max_line):
                if stream.closed:
                    break
                q.put(Item(key, [decode(line) for line in batch] if decode else batch))
            error = stream.error
        except Exception as e:  # a decode error or a broken connection ends this stream only
            error = e
        q.put(Item(key, [], True, error))

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
    """The items of one stream's own queue up to and with its end item (whose error the caller
    judges). ``tick`` only keeps the wait interruptible by Ctrl-C."""
    while True:
        try:
            item = q.get(timeout=tick)
        except queue.Empty:
            continue
        yield item
        if item.end:
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
