"""A fake HTTP body for stream tests (pod logs, watches): it hands out the given chunks, then blocks as
an open follow or watch does, until the reader closes it; an empty chunk ends it (the server closing)."""

from __future__ import annotations

import queue
import threading
from typing import Iterable


class Body:
    def __init__(self, chunks: Iterable[bytes] = ()):
        self.q: queue.Queue = queue.Queue()
        for chunk in chunks:
            self.q.put(chunk)
        self.closed = threading.Event()

    def read1(self, n: int) -> bytes:
        while not self.closed.is_set():
            try:
                return self.q.get(timeout=0.02)
            except queue.Empty:
                continue
        return b""

    def shutdown(self) -> None:
        self.closed.set()

    def close(self) -> None:
        self.closed.set()
