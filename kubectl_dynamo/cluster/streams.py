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
from kubectl_dynamo.errors import ApiError, ClusterUnreachable


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
            own_queue: bool = False, max_line: Optional[int] = None) -> queue.Queue[Item]:
        """Start reading ``stream``; its items go to the shared queue, or to a new queue of its own.
        ``max_line``: this stream's longest line, where it is not the readers' (a watch's whole objects)."""
        q: queue.Queue[Item] = queue.Queue(self.per_stream) if own_queue else self.shared
        with self._lock:
            self.streams[key] = stream
        threading.Thread(target=self._read, args=(key, stream, q, decode, max_line or self.max_line), daemon=True,
                         name=f"stream {key}").start()
        return q

    def _read(self, key, stream: Stream, q: queue.Queue[Item], decode, max_line: int) -> None:
        try:
            for batch in stream.batches(max_line):
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
    params = {"labelSelector": label_selector, "fieldSelector": field_selector}
    for _ in range(3):
        body = cluster.get(path, params)
        version = (body.get("metadata") or {}).get("resourceVersion")
        items: List[dict] = []
        while True:
            for item in body.get("items") or []:
                (item.get("metadata") or {}).pop("managedFields", None)
                items.append(item)
            token = (body.get("metadata") or {}).get("continue")
            if not token:  # a LIST without a limit is whole, unless something pages it anyway: follow it
                return items, version
            try:
                body = cluster.get(path, {**params, "continue": token})
            except ApiError as e:
                if e.status != 410:
                    raise
                break  # the continue token expired: list again from the start (client-go's pager)
    raise ClusterUnreachable(f"GET {path}: every LIST expired before its last page (410 Expired)")


# A watch event is one line holding a whole object: it must never be cut (a LeaderWorkerSet with its two
# pod templates is ~60 KB, a DGD with many components more). etcd refuses objects above 1.5 MiB
# (--max-request-bytes): 4 MiB bounds the line with room for the event's envelope.
WATCH_MAX_LINE = 4 * 1024 * 1024


class Watched:
    """The objects of several kinds, each listed once and then followed by one WATCH (as ``kubectl
    get -w``): a watch the server ends is resumed from its last resourceVersion, one whose version
    expired (410 Gone, an ERROR event) lists its kind again. ``kinds``: name -> (path, label
    selector, field selector); ``listed``: name -> (items, resourceVersion) already read.

    ``readers``: the caller's, when it waits on other streams too (``logs -f``: the pods' logs and their
    WATCH): it takes each item from ``readers.shared`` and hands the watches' (``owns``) to ``apply``.
    Otherwise ``wait`` does both."""

    def __init__(self, cluster, kinds: Dict[str, tuple], listed: Optional[Dict[str, tuple]] = None,
                 readers: Optional[Readers] = None):
        self.cluster, self.kinds = cluster, kinds
        self.state: Dict[str, Dict[str, dict]] = {}
        self.versions: Dict[str, Optional[str]] = {}
        self.serial: Dict[str, int] = {}  # each kind's current watch: a stopped one's late end is ignored
        self._shared = readers is not None
        self.readers = readers if readers is not None else Readers()  # each watch stream sets its own max_line
        for kind in kinds:
            items, version = (listed or {}).get(kind) or self._list(kind)
            self.state[kind], self.versions[kind] = {uid(o): o for o in items}, version

    def _list(self, kind: str) -> tuple:
        path, labels, fields = self.kinds[kind]
        return list_with_version(self.cluster, path, label_selector=labels, field_selector=fields)

    def items(self, kind: str) -> List[dict]:
        return list(self.state[kind].values())

    def start(self) -> None:
        for kind in self.kinds:
            self._open(kind)

    def _key(self, kind: str) -> tuple:
        return (self, kind, self.serial[kind])  # this Watched's own: other streams may share the readers

    def _open(self, kind: str) -> None:
        path, labels, fields = self.kinds[kind]
        self.serial[kind] = self.serial.get(kind, 0) + 1
        self.readers.add(self._key(kind), open_watch(self.cluster, path, self.versions[kind], label_selector=labels,
                                                     field_selector=fields),
                         decode=watch_event, max_line=WATCH_MAX_LINE)

    def owns(self, item: Item) -> bool:
        return isinstance(item.key, tuple) and len(item.key) == 3 and item.key[0] is self

    def wait(self, tick: float = 0.5) -> Optional[str]:
        """Apply the next batch of events (waiting at most ``tick`` seconds, so Ctrl-C and deadlines
        stay responsive); the kind that changed, or None."""
        try:
            item = self.readers.shared.get(timeout=tick)
        except queue.Empty:
            return None
        return self.apply(item)

    def apply(self, item: Item) -> Optional[str]:
        """Apply one item of a watch of this Watched: the kind that changed, or None."""
        kind: str = item.key[1]  # type: ignore[index]
        serial: int = item.key[2]  # type: ignore[index]
        if serial != self.serial[kind]:
            return None  # a watch already replaced
        if item.end:
            if isinstance(item.error, ValueError):  # an undecodable event: reopening would replay it forever
                raise item.error
            self._open(kind)  # the server ends watches after a while: resume from the last version
            return None
        state = self.state[kind]
        for event in item.lines:
            obj = event.get("object") or {}
            if event.get("type") == "ERROR":  # 410 Gone: re-list that kind and watch from there
                fresh, self.versions[kind] = self._list(kind)
                self.state[kind] = {uid(o): o for o in fresh}
                self.readers.stop(item.key)
                self._open(kind)
                return kind
            self.versions[kind] = (obj.get("metadata") or {}).get("resourceVersion") or self.versions[kind]
            if event.get("type") == "BOOKMARK":
                continue
            (obj.get("metadata") or {}).pop("managedFields", None)
            if event.get("type") == "DELETED":
                state.pop(uid(obj), None)
            else:
                state[uid(obj)] = obj
        return kind

    def close(self) -> None:
        if not self._shared:
            self.readers.close()
            return
        for kind in self.serial:  # the caller's readers: only this Watched's watches
            self.readers.stop(self._key(kind))


def uid(obj: dict) -> str:
    meta = obj.get("metadata") or {}
    return meta.get("uid") or f"{meta.get('namespace')}/{meta.get('name')}"
