import pytest

from kubectl_dynamo.cluster.client import DEFAULT_TIMEOUT, parse_duration, path_for
from kubectl_dynamo.errors import UsageError


@pytest.mark.parametrize("text,seconds", [("0", None), ("", DEFAULT_TIMEOUT), ("5", 5.0), ("30s", 30.0),
                                          ("2m", 120.0), ("1h2m3s", 3723.0), ("500ms", 0.5)])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["soon", "5x", "1m junk", "-1s"])
def test_parse_duration_rejects(text):
    with pytest.raises(UsageError):
        parse_duration(text)


def test_paths_are_fully_qualified():
    assert path_for("scheduling.run.ai", "v2", "queues") == "/apis/scheduling.run.ai/v2/queues"
    assert path_for("", "v1", "configmaps", "ns", "x") == "/api/v1/namespaces/ns/configmaps/x"


# -- against small real servers (http.server on 127.0.0.1; real sockets, no mocks) -------------------
import json  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402
import ssl  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # noqa: E402

from tests.conftest import REPO  # noqa: E402

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "{server}"{tls}}}}}]
users: [{{name: u, user: {user}}}]
contexts: [{{name: x, context: {{cluster: c, user: u, namespace: team}}}}]
current-context: x
"""


def kubeconfig(tmp_path, server, *, user="{token: t}", tls="", name="config"):
    path = tmp_path / name
    path.write_text(KUBECONFIG.format(server=server, user=user, tls=tls))
    return str(path)


def run(*args, timeout=60):
    """The plugin as a user runs it: a fresh process, its exit code and stderr."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "kubectl_dynamo", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, env={**os.environ, "NO_COLOR": "1"})
    return proc.returncode, proc.stderr, time.monotonic() - start


def one_error(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


class Handler(BaseHTTPRequestHandler):
    routes: dict = {}  # path -> (status, content type, body)

    def do_GET(self):  # http.server's name
        status, ctype, body = self.routes.get(self.path.split("?")[0], (404, "application/json", b'{"message":"nf"}'))
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # keep the test output clean
        pass


@pytest.fixture
def server():
    """An HTTP server; set ``routes`` on the returned handler class."""
    handler = type("H", (Handler,), {"routes": {}})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd, handler, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def silent_server():
    """Accepts connections and never answers (a hung proxy or API server)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held = []
    stop = threading.Event()

    def accept():
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(sock.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}", held
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    sock.close()


VERSION = (200, "application/json", b'{"gitVersion": "v1.33.0"}')
NO_ITEMS = (200, "application/json", json.dumps({"items": []}).encode())


def test_request_timeout_is_one_deadline_not_retried(tmp_path, silent_server):
    url, held = silent_server
    code, err, seconds = run("version", "--kubeconfig", kubeconfig(tmp_path, url), "--request-timeout", "2s")
    assert code == 3
    assert "GET /version: no answer from" in one_error(err) and "within 2 s" in err
    assert 1.9 < seconds < 4.5, seconds  # one 2 s deadline (plus start-up), not 2 x 2 s
    assert len(held) == 1  # no silent second attempt


def test_default_timeout_is_ten_seconds(tmp_path, silent_server):
    from kubectl_dynamo.cluster.client import Cluster, Target
    from kubectl_dynamo.errors import ClusterUnreachable

    assert parse_duration(None) == DEFAULT_TIMEOUT == 10.0
    url, _ = silent_server
    cluster = Cluster(Target(kubeconfig(tmp_path, url)))
    start = time.monotonic()
    with pytest.raises(ClusterUnreachable, match="within 10 s"):
        cluster.server_version()
    assert 9.9 < time.monotonic() - start < 12


def test_html_login_page_with_200(tmp_path, server):
    _, handler, url = server
    handler.routes["/version"] = (200, "text/html", b"<html><body>Please log in</body></html>")
    code, err, _ = run("version", "--kubeconfig", kubeconfig(tmp_path, url))
    line = one_error(err)
    assert code == 3 and "GET /version" in line and "not the Kubernetes API's" in line and "text/html" in line


@pytest.mark.parametrize("body", [b'{"kind":"Status","message":"etcd is down"}', b"Bad Gateway"])
def test_server_errors_exit_3_naming_the_request(tmp_path, server, body):
    _, handler, url = server
    handler.routes["/version"] = (502 if body == b"Bad Gateway" else 500, "text/plain", body)
    code, err, _ = run("version", "--kubeconfig", kubeconfig(tmp_path, url))
    line = one_error(err)
    assert code == 3 and "GET /version" in line and "HTTP 50" in line


def test_forbidden_names_verb_resource_and_namespace(tmp_path, server):
    from kubectl_dynamo.cluster.client import Cluster, Target
    from kubectl_dynamo.errors import Forbidden

    _, handler, url = server
    handler.routes["/apis/nvidia.com/v1beta1/namespaces/team/dynamographdeployments/x"] = (
        403, "text/plain", b"nope")
    cluster = Cluster(Target(kubeconfig(tmp_path, url)))
    with pytest.raises(Forbidden) as e:
        cluster.get(path_for("nvidia.com", "v1beta1", "dynamographdeployments", "team", "x"))
    assert e.value.message.startswith("forbidden: cannot get dynamographdeployments.nvidia.com 'x' in namespace "
                                      "'team' (GET /apis/nvidia.com/v1beta1/namespaces/team/")
    code, err, _ = run("explain", "dgd", "x", "--kubeconfig", kubeconfig(tmp_path, url))
    assert code == 3 and "forbidden: cannot get dynamographdeployments.nvidia.com 'x'" in one_error(err)


def test_other_api_errors_carry_status_and_body(tmp_path, server):
    """A 409 is neither unreachable nor forbidden: callers (server dry run, install) read its status and
    Status body. The body is the metav1.Status shape the API server answers an existing name with."""
    from kubectl_dynamo.cluster.client import Cluster, Target
    from kubectl_dynamo.errors import ApiError, ExitCode

    _, handler, url = server
    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "AlreadyExists", "code": 409,
              "message": 'configmaps "x" already exists'}
    handler.routes["/api/v1/namespaces/team/configmaps/x"] = (409, "application/json", json.dumps(status).encode())
    with pytest.raises(ApiError) as e:
        Cluster(Target(kubeconfig(tmp_path, url))).get("/api/v1/namespaces/team/configmaps/x")
    assert (e.value.status, e.value.body, e.value.exit_code) == (409, status, ExitCode.FINDINGS)
    assert e.value.message == 'GET /api/v1/namespaces/team/configmaps/x: configmaps "x" already exists'


@pytest.mark.parametrize("content,message", [
    ("a: [\n", "invalid YAML"),
    ("- a\n- b\n", "must be a YAML mapping, not a list"),
    ("apiVersion: v1\nclusters: [{name: c, cluster: {}}]\nusers: [{name: u, user: {}}]\n"
     "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n", "cluster 'c' has no server"),
    ("clusters: {c: 1}\n", "clusters must be a list"),
    ("a: \xff\n", "not valid UTF-8"),
])
def test_bad_kubeconfig_is_exit_2_naming_the_file(tmp_path, content, message):
    path = tmp_path / "kc"
    path.write_bytes(content.encode("latin-1") if "\xff" in content else content.encode())
    code, err, _ = run("version", "--kubeconfig", str(path))
    line = one_error(err)
    assert code == 2 and str(path) in line and message in line, line


def test_missing_exec_plugin_is_named(tmp_path, server):
    _, handler, url = server
    user = "{exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: kd-no-such-plugin}}"
    code, err, _ = run("version", "--kubeconfig", kubeconfig(tmp_path, url, user=user))
    line = one_error(err)  # no ERROR:root: line, no "connection refused"
    assert code == 2 and "exec plugin 'kd-no-such-plugin'" in line and "not found" in line


def test_failing_exec_plugin_is_one_line(tmp_path, server):
    _, handler, url = server
    plugin = tmp_path / "kd-failing-plugin"
    plugin.write_text("#!/bin/sh\necho 'token expired' >&2\nexit 1\n")
    plugin.chmod(0o755)
    user = f"{{exec: {{apiVersion: client.authentication.k8s.io/v1beta1, command: {plugin}}}}}"
    code, err, _ = run("version", "--kubeconfig", kubeconfig(tmp_path, url, user=user))
    line = one_error(err)
    assert code == 3 and "credentials" in line


def test_server_without_scheme_gives_no_future_warning(tmp_path, server):
    _, handler, url = server
    handler.routes["/version"] = VERSION
    handler.routes["/apis/apps/v1/deployments"] = NO_ITEMS
    code, err, _ = run("version", "--kubeconfig", kubeconfig(tmp_path, url.removeprefix("http://")))
    assert code == 0 and err == "", err  # no scheme and no TLS settings: http, as client-go does


@pytest.fixture
def tls_server(tmp_path, server):
    httpd, handler, url = server
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"], check=True, capture_output=True)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(cert), str(key))
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    return handler, url.replace("http://", "https://")


def test_insecure_skip_tls_verify_gives_no_warning(tmp_path, tls_server):
    handler, url = tls_server
    handler.routes["/version"] = VERSION
    handler.routes["/apis/apps/v1/deployments"] = NO_ITEMS
    code, err, _ = run("version", "--kubeconfig", kubeconfig(tmp_path, url, tls=", insecure-skip-tls-verify: true"))
    assert code == 0 and err == "", err
