"""doctor's physical floor: the same requests, fetched raw and parsed as JSON, nothing kept.

    python benchmarks/doctor_floor.py --kubeconfig FILE --requests FILE [--mode sequential|prefetched]

FILE of --requests holds one request URI per line (path and query, e.g.
``/api/v1/pods?labelSelector=...&limit=500``), the first page of each read doctor made, in its
order; ``benchmarks/doctor_scale.py`` writes it from the apiserver's audit log of a doctor run. A
LIST that answers with ``metadata.continue`` is followed page by page with the same query, as
doctor's client does. No gzip (neither does doctor's client), each page ``json.loads``-ed and
dropped.

``--mode sequential``: one keep-alive HTTPS connection, each page requested after the previous one
is parsed. ``--mode prefetched`` (the default): doctor's pipelining (``Cluster.iter_list``): as soon
as a page arrives its next page is requested on a second thread and connection, while this one is
parsed; at most two pages alive. ``doctor_scale.py`` runs both and takes the faster as the floor of
a round, so doctor can only meet it, not beat it by pipelining alone.

Prints one JSON line: ``{"mode", "requests", "bytes", "seconds"}``. Only the standard library and
PyYAML (for the kubeconfig).
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import re
import ssl
import sys
import tempfile
import threading
import time
from typing import Dict, Iterator, List, Tuple
from urllib.parse import parse_qsl, urlencode, urlsplit


def _file(entry: Dict[str, str], key: str, tmp: str) -> str:
    """A kubeconfig credential as a file path (``key`` or ``key-data``)."""
    if entry.get(key):
        return os.path.expanduser(entry[key])
    path = os.path.join(tmp, key)
    with open(path, "wb") as f:
        f.write(base64.b64decode(entry[f"{key}-data"]))
    return path


def connect(kubeconfig: str, tmp: str) -> Tuple[http.client.HTTPSConnection, str]:
    """A connection to the current context's server with its client certificate (what the sandbox's
    users have); returns it and the server's path prefix."""
    import yaml

    with open(kubeconfig) as f:
        cfg = yaml.safe_load(f)
    ctx = next(c["context"] for c in cfg["contexts"] if c["name"] == cfg["current-context"])
    cluster = next(c["cluster"] for c in cfg["clusters"] if c["name"] == ctx["cluster"])
    user = next(u["user"] for u in cfg["users"] if u["name"] == ctx["user"])
    tls = ssl.create_default_context(cafile=_file(cluster, "certificate-authority", tmp))
    tls.load_cert_chain(_file(user, "client-certificate", tmp), _file(user, "client-key", tmp))
    url = urlsplit(cluster["server"])
    return http.client.HTTPSConnection(url.hostname, url.port or 443, context=tls, timeout=120), url.path.rstrip("/")


def fetch(conn: http.client.HTTPSConnection, prefix: str, uri: str, token) -> bytes:
    """One page of ``uri`` (the first, or the one ``token`` continues to), raw."""
    url = urlsplit(uri)
    q = parse_qsl(url.query, keep_blank_values=True) + ([("continue", token)] if token else [])
    conn.request("GET", prefix + url.path + ("?" + urlencode(q) if q else ""), headers={"Accept": "application/json"})
    resp = conn.getresponse()
    raw = resp.read()
    if resp.status not in (200, 404):  # doctor reads some objects that may be absent
        raise SystemExit(f"GET {uri}: HTTP {resp.status}: {raw[:300]!r}")
    return raw


def _next(page) -> object:
    return (page.get("metadata") or {}).get("continue") if isinstance(page.get("items"), list) else None


def pages(conn: http.client.HTTPSConnection, prefix: str, uri: str) -> Iterator[int]:
    """GET ``uri`` and, while the answer carries ``metadata.continue``, its next pages, one after the
    other on one connection: bytes per page."""
    token = None
    while True:
        raw = fetch(conn, prefix, uri, token)
        page = json.loads(raw)
        token = _next(page)
        del page
        yield len(raw)
        del raw
        if not token:
            return


class Ahead:
    """The next page, fetched on a second thread and connection (doctor's client: a one-thread pool)."""

    def __init__(self, conn: http.client.HTTPSConnection, prefix: str, uri: str, token) -> None:
        self.raw: bytes = b""
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(conn, prefix, uri, token), daemon=True)
        self.thread.start()

    def _run(self, conn, prefix, uri, token) -> None:
        try:
            self.raw = fetch(conn, prefix, uri, token)
        except BaseException as e:  # handed to the caller
            self.error = e

    def result(self) -> bytes:
        self.thread.join()
        if self.error:
            raise self.error
        return self.raw


CONTINUE = re.compile(rb'"metadata":\{[^{}]*?"continue":"([^"]*)"')


def head_token(raw: bytes):
    """The continue token from the page's first bytes (the API server writes ``metadata`` before
    ``items``), so the next page can be asked for before this one is parsed; None if not there."""
    m = CONTINUE.search(raw, 0, 4096)
    return m.group(1).decode() if m else None


def prefetched(conn: http.client.HTTPSConnection, second: http.client.HTTPSConnection, prefix: str,
               uri: str) -> Iterator[int]:
    """The same pages, pipelined: the next page is requested (on ``second``) as soon as this one has
    arrived, and this one is parsed while the server encodes and sends the next. Doctor's client
    (``Cluster.iter_list``) overlaps one page's processing with the next page's fetch and decoding;
    this overlaps as much as a client can, so it is the lower of the two."""
    raw = fetch(conn, prefix, uri, None)
    conns = [conn, second]
    while True:
        token = head_token(raw)
        ahead = Ahead(conns[1], prefix, uri, token) if token else None
        page = json.loads(raw)
        if ahead is None and _next(page):  # the token was not in the head: fetch it now
            ahead = Ahead(conns[1], prefix, uri, _next(page))
        del page
        yield len(raw)
        del raw
        if ahead is None:
            return
        raw = ahead.result()
        conns.reverse()  # the next page goes out on the connection that is now idle


def main(argv: List[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kubeconfig", required=True)
    ap.add_argument("--requests", required=True, help="one request URI per line (first pages)")
    ap.add_argument("--mode", choices=("sequential", "prefetched"), default="prefetched")
    args = ap.parse_args(argv)
    with open(args.requests) as f:
        uris = [line.strip() for line in f if line.strip()]
    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        conn, prefix = connect(args.kubeconfig, tmp)
        if args.mode == "sequential":
            sizes = [n for uri in uris for n in pages(conn, prefix, uri)]
        else:
            second, _ = connect(args.kubeconfig, tmp)
            sizes = [n for uri in uris for n in prefetched(conn, second, prefix, uri)]
            second.close()
        conn.close()
    print(json.dumps({"mode": args.mode, "requests": len(sizes), "bytes": sum(sizes),
                      "seconds": time.perf_counter() - t}))


if __name__ == "__main__":
    main(sys.argv[1:])
