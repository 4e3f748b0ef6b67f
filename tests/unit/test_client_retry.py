"""client-go's retry policy, the pager's re-list and "no answer from a failed read", against a small real
HTTP server on 127.0.0.1 that answers from a script (real sockets, resets and cut bodies; no mocks).

The rules under test are client-go's (k8s.io/client-go@v0.33.13): rest/with_retry.go checkWait (a 429 or
5xx is retried only with an integer Retry-After, waiting that long), rest/request.go (maxRetries 10; a GET
whose connection was reset or ended early is retried, a POST is not; the request's context bounds it all),
tools/pager/pager.go (410 Expired on a continue request lists again), rest/config.go (User-Agent shape).
"""

from __future__ import annotations

import json
import re
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from kubectl_dynamo import __version__
from kubectl_dynamo.cluster.client import MAX_RETRIES, Cluster, Target
from kubectl_dynamo.errors import ApiError, ClusterUnreachable, ExitCode, Forbidden, NotFound
from tests.unit.test_client import kubeconfig, one_error, run

OK = (200, {}, b'{"gitVersion": "v1.33.0"}')


def status(code: int, reason: str = "", message: str = "m") -> bytes:
    return json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code,
                       "reason": reason, "message": message}).encode()


class Script(BaseHTTPRequestHandler):
    """Answers each path from its list of steps, in order (the last repeats, unless the path has ``pages``
    to answer from then): (status, headers, body),
    "reset" (RST instead of an answer) or "cut" (headers and half the body, then close). ``seen``
    records (method, path, query, headers) of every request."""

    protocol_version = "HTTP/1.1"
    steps: dict = {}
    seen: list = []
    pages: dict = {}  # path -> items served as a paged LIST (limit/continue), when no step is left

    def _answer(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.seen.append((self.command, url.path, query, dict(self.headers)))
        todo = self.steps.get(url.path) or []
        once = len(todo) > 1 or url.path in self.pages  # a paged path answers from its pages after the steps
        step = todo.pop(0) if todo and once else (todo[0] if todo else None)
        if step is None and url.path in self.pages:
            step = self.page(self.pages[url.path], query)
        if step is None:
            step = (404, {}, status(404, "NotFound"))
        if step == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
            return
        code, headers, body = step
        if callable(body):
            body = body(query)
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        for k, v in headers.items():
            self.send_header(k, v)
        if headers.get("cut"):
            self.send_header("Content-Length", str(len(body) * 2))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    @staticmethod
    def page(items: list, query: dict):
        start = int(query.get("continue") or 0)
        limit = int(query.get("limit") or 0) or len(items)
        end = start + limit
        meta = {"resourceVersion": "7", **({"continue": str(end)} if end < len(items) else {})}
        return (200, {}, json.dumps({"kind": "List", "metadata": meta, "items": items[start:end]}).encode())

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


@pytest.fixture
def api(tmp_path):
    handler = type("S", (Script,), {"steps": {}, "seen": [], "pages": {}})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield handler, kubeconfig(tmp_path, f"http://127.0.0.1:{httpd.server_address[1]}")
    httpd.shutdown()
    httpd.server_close()


def cluster(config: str, timeout: str = "10s", verbose: bool = False) -> Cluster:
    return Cluster(Target(config, request_timeout=timeout, verbose=verbose))


def attempts(handler, path: str) -> int:
    return sum(1 for s in handler.seen if s[1] == path)


@pytest.mark.parametrize("code", [429, 500, 503, 504])
def test_retry_after_is_waited_and_retried(api, code):
    handler, config = api
    handler.steps["/version"] = [(code, {"Retry-After": "1"}, status(code)), OK]
    c = cluster(config)
    start = time.monotonic()
    assert c.server_version() == "v1.33.0"
    assert time.monotonic() - start >= 1.0  # the second asked for, waited
    assert attempts(handler, "/version") == 2 and c.requests == 2 and c.retried == 1


@pytest.mark.parametrize("code", [500, 502, 503])
def test_5xx_without_retry_after_is_not_retried(api, code):
    handler, config = api
    handler.steps["/version"] = [(code, {}, status(code)), OK]
    with pytest.raises(ClusterUnreachable, match=f"HTTP {code}"):
        cluster(config).server_version()
    assert attempts(handler, "/version") == 1


def test_4xx_other_than_429_is_never_retried(api):
    """Every client error status but 429, even with a Retry-After (checkWait: 429 and >= 500 only)."""
    handler, config = api
    c = cluster(config)
    for code in range(400, 500):
        if code in (401, 403, 404, 429):  # their own classes (test_client.py); 429 above
            continue
        handler.seen.clear()
        handler.steps["/version"] = [(code, {"Retry-After": "0"}, status(code))]
        with pytest.raises(ApiError):
            c.server_version()
        assert attempts(handler, "/version") == 1, code


def test_at_most_ten_retries_then_throttled_not_forbidden(api):
    handler, config = api
    handler.steps["/version"] = [(429, {"Retry-After": "0"}, status(429, "TooManyRequests", "slow down"))]
    with pytest.raises(ClusterUnreachable) as e:
        cluster(config).server_version()
    assert attempts(handler, "/version") == MAX_RETRIES + 1 == 11
    assert "throttling" in e.value.message and "forbidden" not in e.value.message.lower()
    assert "after 10 retries" in e.value.message and e.value.exit_code == ExitCode.UNREACHABLE


def test_retries_stay_within_the_request_deadline(api):
    handler, config = api
    handler.steps["/version"] = [(503, {"Retry-After": "1"}, status(503))]
    start = time.monotonic()
    with pytest.raises(ClusterUnreachable, match="HTTP 503"):
        cluster(config, "2500ms").server_version()
    assert time.monotonic() - start < 2.5  # the user's deadline, not 10 waits of a second
    assert attempts(handler, "/version") == 3  # at 0, 1 and 2 s; a wait to 3 s would pass the deadline
    handler.seen.clear()
    handler.steps["/version"] = [(429, {"Retry-After": "30"}, status(429))]
    start = time.monotonic()
    with pytest.raises(ClusterUnreachable, match="throttling"):
        cluster(config, "5s").server_version()
    assert time.monotonic() - start < 1 and attempts(handler, "/version") == 1  # no wait that cannot end in time


@pytest.mark.parametrize("fault", ["reset", "cut"])
def test_a_get_whose_connection_broke_is_sent_again(api, fault):
    handler, config = api
    broken = "reset" if fault == "reset" else (200, {"cut": "1"}, b'{"gitVersion": "v1.33.0", "pad": "xxxxxxxx"}')
    handler.steps["/version"] = [broken, OK]
    assert cluster(config).server_version() == "v1.33.0"
    assert attempts(handler, "/version") == 2


def test_a_post_whose_connection_broke_is_not_sent_again(api):
    handler, config = api
    path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    handler.steps[path] = ["reset", (201, {}, b'{"status": {"allowed": true}}')]
    with pytest.raises(ClusterUnreachable):
        cluster(config).can_i("list", "pods")
    assert attempts(handler, path) == 1  # not idempotent: never resent


def test_a_post_throttled_with_retry_after_is_retried(api):
    """checkWait holds for every verb: the server did not run a request it throttled."""
    handler, config = api
    path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    handler.steps[path] = [(429, {"Retry-After": "0"}, status(429)), (201, {}, b'{"status": {"allowed": true}}')]
    assert cluster(config).can_i("list", "pods") is True
    assert attempts(handler, path) == 2


def test_user_agent_names_the_plugin_its_version_os_and_arch(api):
    handler, config = api
    handler.steps["/version"] = [OK]
    cluster(config).server_version()
    agent = handler.seen[0][3]["User-Agent"]
    assert re.fullmatch(rf"kubectl-dynamo/v{re.escape(__version__)} \({sys.platform}/[a-z0-9_]+\)", agent), agent


def test_verbose_says_what_was_retried_and_why(api):
    handler, config = api
    handler.steps["/version"] = [(429, {"Retry-After": "0"}, status(429)), "reset", OK]
    handler.pages["/apis/apps/v1/deployments"] = []
    code, err, _ = run("version", "--kubeconfig", config, "-v")
    assert code == 0, err
    lines = [line for line in err.splitlines() if line.startswith("retrying")]
    assert len(lines) == 2, err
    assert "GET /version" in lines[0] and "HTTP 429 with Retry-After: 0" in lines[0] and "retry 1 of 10" in lines[0]
    assert "connection broke (connection reset by peer)" in lines[1] and "retry 2 of 10" in lines[1]
    handler.steps["/version"] = [(429, {"Retry-After": "0"}, status(429)), OK]
    code, err, _ = run("version", "--kubeconfig", config)
    assert code == 0 and "retrying" not in err  # quiet without -v


def test_opening_a_stream_is_retried_on_retry_after(api):
    handler, config = api
    path = "/api/v1/namespaces/team/pods/p/log"
    handler.steps[path] = [(503, {"Retry-After": "0"}, status(503)), (200, {}, b"one\ntwo\n")]
    stream = cluster(config).stream(path, read_timeout=5)
    assert list(stream.lines()) == [b"one", b"two"]
    assert attempts(handler, path) == 2


def test_a_log_cut_midway_is_read_again_after_what_was_read(api):
    """A finite stream (a log read once) that breaks continues where it broke: every line once."""
    handler, config = api
    path = "/api/v1/namespaces/team/pods/p/log"
    body = b"".join(b"line %d\n" % i for i in range(2000))
    handler.steps[path] = [(200, {"cut": "1"}, body[: len(body) // 2]), (200, {}, body)]
    stream = cluster(config).stream(path, {"container": "main"}, read_timeout=5)
    assert list(stream.lines()) == [b"line %d" % i for i in range(2000)] and stream.error is None
    assert attempts(handler, path) == 2 and stream.resumed == 1


def test_an_error_answer_to_a_stream_cut_midway_is_sent_again(api):
    """A log GET answered 400 (no previous container) and cut: resent, then that 400 as the API said it."""
    handler, config = api
    path = "/api/v1/namespaces/team/pods/p/log"
    handler.steps[path] = [(400, {"cut": "1"}, status(400, "BadRequest", "previous terminated container not found")),
                           (400, {}, status(400, "BadRequest", "previous terminated container not found"))]
    with pytest.raises(ApiError, match="previous terminated container"):
        cluster(config).stream(path, {"previous": "true"}, read_timeout=5)
    assert attempts(handler, path) == 2


def test_a_watch_cut_midway_ends_for_its_reader_to_resume(api):
    """A watch is resumed from its resourceVersion (streams.Watched), never by skipping bytes."""
    handler, config = api
    path = "/api/v1/pods"
    handler.steps[path] = [(200, {"cut": "1"}, b'{"type": "ADDED"}\n'), (200, {}, b"")]
    stream = cluster(config).stream(path, {"watch": "true"}, read_timeout=5)
    assert list(stream.lines()) == [b'{"type": "ADDED"}'] and stream.error is not None
    assert attempts(handler, path) == 1


# -- the pager ---------------------------------------------------------------------------------------
PODS = "/api/v1/pods"
EXPIRED = (410, {}, status(410, "Expired", "The provided continue parameter is too old"))


def pods(n: int) -> list:
    return [{"metadata": {"name": f"p{i}", "managedFields": [{}]}} for i in range(n)]


def test_an_expired_continue_token_lists_again_paged(api, monkeypatch):
    monkeypatch.setattr("kubectl_dynamo.cluster.client.PAGE_SIZE", 3)
    handler, config = api
    handler.pages[PODS] = pods(8)
    page1 = handler.page(pods(8), {"limit": "3"})
    handler.steps[PODS] = [page1, EXPIRED]  # the 2nd request (a continue) expires once, then pages again
    c = cluster(config)
    got = c.list(PODS, each=lambda p: p["metadata"]["name"])
    assert got == [f"p{i}" for i in range(8)]  # no page of the expired list kept, none twice
    limits = [(s[2].get("limit"), s[2].get("continue")) for s in handler.seen]
    assert limits == [("3", None), ("3", "3"), ("3", None), ("3", "3"), ("3", "6")]


def test_a_list_that_keeps_expiring_is_read_in_full(api, monkeypatch):
    monkeypatch.setattr("kubectl_dynamo.cluster.client.PAGE_SIZE", 3)
    handler, config = api
    handler.pages[PODS] = pods(5)
    handler.steps[PODS] = [handler.page(pods(5), {"limit": "3"}), EXPIRED,
                           handler.page(pods(5), {"limit": "3"}), EXPIRED,
                           handler.page(pods(5), {})]  # every continue expires
    got = cluster(config).list(PODS)
    assert [p["metadata"]["name"] for p in got] == [f"p{i}" for i in range(5)]
    assert all("managedFields" not in p["metadata"] for p in got)
    last = handler.seen[-1][2]
    assert "limit" not in last and "continue" not in last  # client-go's FullListIfExpired: Limit 0, no Continue


def test_an_expired_first_page_is_an_error_not_a_relist(api):
    """The pager re-lists only when the continue request expired (options.Continue != "")."""
    handler, config = api
    handler.steps[PODS] = [EXPIRED]
    with pytest.raises(ApiError) as e:
        cluster(config).list(PODS)
    assert e.value.status == 410 and attempts(handler, PODS) == 1


# -- no answer from a failed read ----------------------------------------------------------------------
def test_a_failed_list_is_never_an_empty_one(api):
    """Only 403 (may not read) and 404 (not served) make a kind "skipped"; any other failure of a LIST
    the snapshot reads ends with exit 3 naming the kind, whatever the status, and so does a broken
    connection."""
    from kubectl_dynamo.model.platform import Facts
    from kubectl_dynamo.model.snapshot import Snapshot, list_kind

    handler, config = api
    c = cluster(config, "1s")
    for step in [(code, {}, status(code)) for code in range(400, 600) if code not in (401, 403, 404)] + ["reset"]:
        handler.steps[PODS] = [step]
        snap = Snapshot(Facts(), None)
        with pytest.raises(ClusterUnreachable) as e:
            list_kind(c, snap, "pods", "", "v1", "pods")
        assert e.value.message.startswith("cannot read pods: ") and e.value.exit_code == ExitCode.UNREACHABLE
        assert snap.skipped == [] and snap.denied == [], step


@pytest.mark.parametrize("code,exc,word", [(403, Forbidden, "forbidden"), (404, NotFound, "not served")])
def test_forbidden_or_not_served_is_skipped(api, code, exc, word):
    from kubectl_dynamo.model.platform import Facts
    from kubectl_dynamo.model.snapshot import Snapshot, list_kind

    handler, config = api
    handler.steps[PODS] = [(code, {}, status(code))]
    snap = Snapshot(Facts(), None)
    assert list_kind(cluster(config), snap, "pods", "", "v1", "pods") is None
    assert snap.skipped[0]["check"] == "pods" and snap.skipped[0]["reason"].startswith(word)


def test_detect_under_a_throttled_read_exits_3_naming_it(api):
    """A read of detect's that stays throttled past the deadline: exit 3 naming the kind, never an
    answer without it (before: "permission-denied" and exit 0 with the queues missing)."""
    handler, config = api
    handler.steps["/version"] = [OK]
    handler.steps["/apis"] = [(200, {}, b'{"groups": []}')]
    handler.steps["/apis/apps/v1/deployments"] = [(429, {"Retry-After": "1"}, status(429, "TooManyRequests"))]
    code, err, seconds = run("detect", "--kubeconfig", config, "--request-timeout", "2s")
    line = one_error(err)
    assert code == 3 and "controller deployments" in line and "throttling" in line, err
    assert "permission" not in line


def test_the_list_before_a_watch_follows_pages_and_lists_again_on_expiry(api):
    """get -w's LIST asks for no limit; if something pages it anyway it follows the continue token, and
    lists again when that expired: never a watch started from part of a list."""
    from kubectl_dynamo.cluster.streams import list_with_version

    handler, config = api
    handler.pages[PODS] = pods(5)
    handler.steps[PODS] = [handler.page(pods(5), {"limit": "2"}), EXPIRED, handler.page(pods(5), {"limit": "2"}),
                           handler.page(pods(5), {"limit": "2", "continue": "2"})]
    items, version = list_with_version(cluster(config), PODS)
    assert [p["metadata"]["name"] for p in items] == [f"p{i}" for i in range(5)] and version == "7"
    assert [s[2].get("continue") for s in handler.seen] == [None, "2", None, "2", "4"]
