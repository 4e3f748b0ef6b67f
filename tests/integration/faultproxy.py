"""A fault-injecting reverse proxy in front of the sandbox's real kube-apiserver (bad weather on a schedule).

It answers on plain HTTP on 127.0.0.1 and forwards every request to the real API server with the
sandbox admin's client certificate, as ``kubectl proxy`` does; what it forwards and relays is the real
server's. On a schedule it answers some requests the way a busy API server or the network in front of
one does, in the shapes the real components use:

- ``throttle``: 429 with ``Retry-After: 1`` and the Status API Priority and Fairness writes
  (k8s.io/apiserver@v0.33.13 pkg/server/filters/priority-and-fairness.go: tooManyRequests, reason
  TooManyRequests, an X-Kubernetes-PF-FlowSchema-UID header);
- ``failover``: a window of 503s with ``Retry-After: 1`` (an API server restarting behind a load balancer);
- ``expire``: 410 with reason Expired on continue requests (k8s.io/apiserver@v0.33.13
  pkg/storage/errors.go, the "continue parameter is too old" Status etcd3's list answers once compacted);
- ``reset``: the connection reset (RST) instead of an answer;
- ``cut``: the answer's headers and half its body, then the connection closed;
- ``slow``: the first byte held back a while;
- ``watch-end``: every watch ended by the server after a short while.

``page`` rewrites each LIST's ``limit`` to that size, so that every paged LIST continues (the client
asks for 500). ``seen`` lists (method, path and query as the client sent them) of every request.
Watches and followed logs are relayed as they arrive; the loop of each connection is bounded by the
upstream's own answer, and the server stops with ``close()``.
"""

from __future__ import annotations

import http.client
import json
import queue
import socket
import ssl
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import List, Optional, Tuple
from urllib.parse import parse_qsl, urlencode, urlsplit

import yaml

FAULTS = ("throttle", "failover", "expire", "reset", "cut", "slow", "watch-end")
HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "te", "trailer", "upgrade",
       "proxy-authorization", "proxy-authenticate", "authorization", "host"}


def _status(code: int, reason: str, message: str, details: Optional[dict] = None) -> bytes:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}
    if details:
        body["details"] = details
    return json.dumps(body).encode()


class Schedule:
    """Which request gets which fault: deterministic, by the order requests arrive."""

    def __init__(self, fault: Optional[str], every: int = 4, window: Tuple[int, int] = (3, 6)):
        self.fault, self.every, self.window = fault, every, window
        self.count = 0
        self.continues = 0
        self.injected = 0
        self.lock = threading.Lock()

    def pick(self, query: dict, watch: bool) -> Optional[str]:
        """The fault for the next request, or None."""
        with self.lock:
            self.count += 1
            n = self.count
            if query.get("continue"):
                self.continues += 1
            c = self.continues
        f = self.fault
        hit = None
        if f == "watch-end":
            hit = f if watch else None
        elif f == "expire":
            hit = f if query.get("continue") and c % 2 == 1 else None  # every other continue request expires
        elif f == "failover":
            hit = f if self.window[0] <= n < self.window[1] else None
        elif f in ("throttle", "slow"):
            hit = f if n % self.every == 0 else None
        elif f in ("reset", "cut"):
            hit = f if n % self.every == 0 and not watch else None
        if hit:
            with self.lock:
                self.injected += 1
        return hit


class FaultProxy:
    def __init__(self, kubeconfig: Path, fault: Optional[str] = None, *, page: Optional[int] = 2, every: int = 4,
                 window: Tuple[int, int] = (3, 6), watch_seconds: float = 1.0, slow_seconds: float = 1.0):
        cfg = yaml.safe_load(Path(kubeconfig).read_text())
        cluster = cfg["clusters"][0]["cluster"]
        user = cfg["users"][0]["user"]
        url = urlsplit(cluster["server"])
        self.upstream = (url.hostname, url.port)
        self.tls = ssl.create_default_context(cafile=cluster["certificate-authority"])
        self.tls.load_cert_chain(user["client-certificate"], user["client-key"])
        self.schedule = Schedule(fault, every, window)
        self.page, self.watch_seconds, self.slow_seconds = page, watch_seconds, slow_seconds
        self.seen: List[Tuple[str, str]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _any(self):
                proxy._handle(self)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True, name="fault-proxy").start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def kubeconfig(self, path: Path) -> Path:
        """A kubeconfig for the plugin that points at the proxy (which holds the credentials)."""
        path.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "weather",
            "clusters": [{"name": "weather", "cluster": {"server": self.url}}],
            "users": [{"name": "weather", "user": {"token": "the-proxy-authenticates"}}],
            "contexts": [{"name": "weather", "context": {"cluster": "weather", "user": "weather"}}]}))
        return path

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- one request ----------------------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        url = urlsplit(h.path)
        query = dict(parse_qsl(url.query, keep_blank_values=True))
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else None
        self.seen.append((h.command, h.path))
        watch = query.get("watch") in ("true", "1") or query.get("follow") == "true"
        fault = self.schedule.pick(query, watch)
        h.close_connection = True
        if fault == "throttle":
            return self._answer(h, 429, {"Retry-After": "1", "X-Kubernetes-PF-FlowSchema-UID": "weather-fs",
                                         "X-Kubernetes-PF-PriorityLevel-UID": "weather-pl"},
                                _status(429, "TooManyRequests", "Too many requests, please try again later.",
                                        {"retryAfterSeconds": 1}))
        if fault == "failover":
            return self._answer(h, 503, {"Retry-After": "1"},
                                _status(503, "ServiceUnavailable", "the server is currently unable to handle the request",
                                        {"retryAfterSeconds": 1}))
        if fault == "expire":
            return self._answer(h, 410, {}, _status(
                410, "Expired", "The provided continue parameter is too old to display a consistent list result. "
                "You can start a new list without the continue parameter, or use the continue token in this "
                "response to retrieve the remainder of the results. Continuing with the provided token results "
                "in an inconsistent list - objects that were created, modified, or deleted between the time the "
                "first chunk was returned and now may show up in the list."))
        if fault == "reset":
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.connection.close()
            return None
        if fault == "slow":
            time.sleep(self.slow_seconds)  # the fault itself: a slow first byte
        if self.page and "limit" in query:
            query["limit"] = str(self.page)
        path = url.path + ("?" + urlencode(query) if query else "")
        headers = {k: v for k, v in h.headers.items() if k.lower() not in HOP}
        conn = http.client.HTTPSConnection(*self.upstream, context=self.tls, timeout=None if watch else 60)
        try:
            conn.request(h.command, path, body=body, headers=headers)
            resp = conn.getresponse()
            relay = [(k, v) for k, v in resp.getheaders() if k.lower() not in HOP]
            if watch:
                return self._stream(h, resp, relay, fault == "watch-end")
            data = resp.read()
            if fault == "cut" and len(data) > 1:
                h.send_response(resp.status)
                for k, v in relay:
                    h.send_header(k, v)
                h.send_header("Content-Length", str(len(data)))
                h.end_headers()
                h.wfile.write(data[: len(data) // 2])
                h.wfile.flush()
                h.connection.shutdown(socket.SHUT_RDWR)
                return None
            return self._answer(h, resp.status, dict(relay), data)
        except OSError:
            return None  # the client went away
        finally:
            conn.close()

    def _answer(self, h, code: int, headers: dict, body: bytes) -> None:
        h.send_response(code)
        if not any(k.lower() == "content-type" for k in headers):
            h.send_header("Content-Type", "application/json")
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.send_header("Connection", "close")
        h.end_headers()
        h.wfile.write(body)

    def _stream(self, h, resp, relay, end_early: bool) -> None:
        """Relay a watch or a followed log as it arrives; ``end_early``: the server ends it after a while,
        as a real one does, between two events (each line is one whole event)."""
        h.send_response(resp.status)
        for k, v in relay:
            h.send_header(k, v)
        h.send_header("Connection", "close")
        h.end_headers()
        lines: queue.Queue = queue.Queue(64)

        def pump() -> None:  # ends when the upstream answer ends or its connection is closed (finally above)
            try:
                for line in resp:
                    lines.put(line)
            except (OSError, ValueError, AttributeError, http.client.HTTPException):  # closed under it
                pass
            lines.put(None)

        threading.Thread(target=pump, daemon=True, name="fault-proxy-stream").start()
        until = time.monotonic() + self.watch_seconds if end_early else None
        while until is None or time.monotonic() < until:
            try:
                line = lines.get(timeout=0.1)
            except queue.Empty:
                continue
            if line is None:
                return
            h.wfile.write(line)
            h.wfile.flush()
