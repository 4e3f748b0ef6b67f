"""doctor's physical floor: the same requests, fetched raw and parsed as JSON, nothing kept.

    python benchmarks/doctor_floor.py --kubeconfig FILE --requests FILE

FILE of --requests holds one request URI per line (path and query, e.g.
``/api/v1/pods?labelSelector=...&limit=500``), the first page of each read doctor made, in its
order; ``benchmarks/doctor_scale.py`` writes it from the apiserver's audit log of a doctor run. A
LIST that answers with ``metadata.continue`` is followed page by page with the same query, as
doctor's client does. One keep-alive HTTPS connection (doctor's client keeps one too), no gzip
(neither does doctor's), each page ``json.loads``-ed and dropped. Prints one JSON line:
``{"requests", "bytes", "seconds"}``. Only the standard library and PyYAML (for the kubeconfig).
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import ssl
import sys
import tempfile
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


def pages(conn: http.client.HTTPSConnection, prefix: str, uri: str) -> Iterator[int]:
    """GET ``uri`` and, while the answer carries ``metadata.continue``, its next pages: bytes per page."""
    url = urlsplit(uri)
    query = parse_qsl(url.query, keep_blank_values=True)
    token = None
    while True:
        q = query + ([("continue", token)] if token else [])
        conn.request("GET", prefix + url.path + ("?" + urlencode(q) if q else ""),
                     headers={"Accept": "application/json"})
        resp = conn.getresponse()
        raw = resp.read()
        if resp.status != 200:
            raise SystemExit(f"GET {uri}: HTTP {resp.status}: {raw[:300]!r}")
        page = json.loads(raw)
        token = (page.get("metadata") or {}).get("continue") if isinstance(page.get("items"), list) else None
        del page
        yield len(raw)
        del raw
        if not token:
            return


def main(argv: List[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kubeconfig", required=True)
    ap.add_argument("--requests", required=True, help="one request URI per line (first pages)")
    args = ap.parse_args(argv)
    with open(args.requests) as f:
        uris = [line.strip() for line in f if line.strip()]
    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        conn, prefix = connect(args.kubeconfig, tmp)
        sizes = [n for uri in uris for n in pages(conn, prefix, uri)]
        conn.close()
    print(json.dumps({"requests": len(sizes), "bytes": sum(sizes), "seconds": time.perf_counter() - t}))


if __name__ == "__main__":
    main(sys.argv[1:])
