"""The small client core: kubeconfig resolution and raw-JSON requests to the API server.

Only this package talks to the API server. The ``kubernetes`` package is imported lazily, inside
``Cluster.__init__``, so ``--help`` and offline commands never pay for it (about 0.35 s).
Requests go through the client's transport (auth, exec plugins, TLS) but responses are parsed
with ``json.loads``: model deserialisation is slow on large lists.

Every request has one deadline, ``--request-timeout`` (default 10 s), covering the connection, the
answer and any retries: a server that accepts and never answers costs exactly that. Retries follow
client-go's (``retry``): a 429 or 5xx with ``Retry-After`` waits what the server asked, a GET whose
connection broke is sent again, at most 10 times; a paged LIST whose continue token expired lists
again (``list``). Whatever is not the API's answer (HTML from a proxy, 5xx, a 403) is one line naming
the request, exit 3. The kubeconfig is read through the input layer first, so a malformed one is exit 2 naming
the file, and library noise (urllib3 warnings, the client's root-logger lines) never reaches stderr.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import re
import shutil
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple
from urllib.parse import urlencode

from kubectl_dynamo.durations import seconds
from kubectl_dynamo.errors import (
    ApiError,
    ClusterUnreachable,
    DynamoError,
    Forbidden,
    InputError,
    NotFound,
    Unauthorized,
    UsageError,
)

SA_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
DEFAULT_TIMEOUT = 10.0  # seconds per request (kubectl waits forever by default; a diagnosis should not)
PAGE_SIZE = 500

# client-go's retry policy (k8s.io/client-go@v0.33.13 rest/request.go, rest/with_retry.go):
# NewRequest's maxRetries is 10; checkWait retries a 429 or any 5xx only when it carries an integer
# Retry-After (retryAfterSeconds), waiting that many seconds; request()'s isErrRetryableFunc retries a
# GET whose connection was reset or ended early (net.IsConnectionReset, IsProbableEOF), as if the
# server had said Retry-After: 1 (retryAfterResponse). The request's context (--request-timeout)
# bounds the whole, waits included; a timeout itself is not retried.
MAX_RETRIES = 10
BROKEN_WAIT = 1.0  # seconds before resending a GET whose connection broke (retryAfterResponse's "1")
MAX_WAIT = 60.0  # the longest Retry-After we wait when --request-timeout is 0 (no deadline)
# connection errors that mean "the connection broke", not "no server" or "no answer in time"
_BROKEN = ("connection reset", "connection aborted", "connection broken", "incompleteread", "remotedisconnected",
           "protocolerror", "broken pipe", "eof occurred", "unexpected eof", "server disconnected")


def user_agent() -> str:
    """``kubectl-dynamo/v0.1.0 (linux/amd64)``: client-go's DefaultKubernetesUserAgent shape
    (rest/config.go buildUserAgent "%s/%s (%s/%s)") so admins can match it in a FlowSchema or an audit log."""
    from kubectl_dynamo import __version__

    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine().lower(), platform.machine().lower())
    return f"kubectl-dynamo/v{__version__} ({sys.platform}/{arch or 'unknown'})"


def parse_duration(text: Optional[str]) -> Optional[float]:
    """kubectl's --request-timeout: "0" = none, a bare number = seconds, else 1h2m3s-style units."""
    if text is None or text == "":
        return DEFAULT_TIMEOUT
    text = str(text).strip()
    total = seconds(text)
    if total is None:
        raise UsageError(f'invalid --request-timeout "{text}": use a duration such as 30s, 2m or 0 (no timeout)')
    return None if total == 0 else total


@dataclass
class Target:
    """Where a command points: resolved from the shared kube options."""

    kubeconfig: Optional[str] = None
    context: Optional[str] = None
    namespace: Optional[str] = None  # -n; None = the context's namespace
    request_timeout: Optional[str] = None
    verbose: bool = False  # -v: say on stderr what was retried and why


class _Collect(logging.Handler):
    """Keeps the kubernetes client's root-logger lines (``ERROR:root:...``) for our own message."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: List[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


_LOG = _Collect()


def _quiet_libraries() -> None:
    root = logging.getLogger()
    if _LOG not in root.handlers:
        root.addHandler(_LOG)  # also stops logging.error() from installing a stderr handler
    logging.getLogger("urllib3").propagate = False
    logging.getLogger("urllib3").addHandler(logging.NullHandler())
    import urllib3

    warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)  # the kubeconfig asked for it


def kubeconfig_paths(target: Target) -> List[str]:
    paths = target.kubeconfig or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
    return [os.path.expanduser(p) for p in paths.split(os.pathsep) if p]


def check_kubeconfig(paths: List[str], context: Optional[str]) -> None:
    """Read every kubeconfig through the input layer and check what the client would trip on:
    a file that is not a mapping, entries without names, the chosen context's cluster without a
    server, an exec credential plugin that is not installed. InputError (exit 2) names the file."""
    from kubectl_dynamo.inputs.manifests import load_mapping

    merged: dict = {"clusters": {}, "users": {}, "contexts": {}}
    current = None
    for path in paths:
        if not os.path.exists(path):
            continue
        data = load_mapping(path, "kubeconfig")
        for key, entries in merged.items():
            listed = data.get(key)
            if listed is None:
                continue
            if not isinstance(listed, list):
                raise InputError(f"kubeconfig {path}: {key} must be a list")
            for i, item in enumerate(listed):
                name = item.get("name") if isinstance(item, dict) else None
                if not isinstance(name, str) or not isinstance(item.get(key[:-1]), dict):
                    raise InputError(f"kubeconfig {path}: {key}[{i}] needs a name and a {key[:-1]} mapping")
                entries.setdefault(name, (path, item[key[:-1]]))  # the first file to name it wins
        if current is None and isinstance(data.get("current-context"), str) and data["current-context"]:
            current = data["current-context"]
    chosen = context or current
    if context and context not in merged["contexts"]:  # the client would call that an invalid kubeconfig
        known = ", ".join(sorted(merged["contexts"])) or "none"
        raise InputError(f'context "{context}" does not exist in the kubeconfig {os.pathsep.join(paths)} '
                         f"(contexts: {known})")
    if not chosen or chosen not in merged["contexts"]:
        return  # the client's own message (no current context) is clear enough
    path, ctx = merged["contexts"][chosen]
    cluster = merged["clusters"].get(ctx.get("cluster"))
    if cluster is None:
        raise InputError(f"kubeconfig {path}: context {chosen!r} names cluster {ctx.get('cluster')!r}, "
                         "which no kubeconfig file defines")
    if not isinstance(cluster[1].get("server"), str) or not cluster[1]["server"].strip():
        raise InputError(f"kubeconfig {cluster[0]}: cluster {ctx.get('cluster')!r} has no server")
    user = merged["users"].get(ctx.get("user"))
    plugin = (user[1].get("exec") if user else None) or {}
    command = plugin.get("command") if isinstance(plugin, dict) else None
    if isinstance(command, str) and command and shutil.which(command) is None:
        raise InputError(f"kubeconfig {user[0]}: exec plugin {command!r} (user {ctx.get('user')!r}) not found"
                         + ("" if os.sep in command else " on $PATH"))


def _with_scheme(host: str, tls: bool) -> str:
    """client-go's ``DefaultServerURL`` (rest/url_utils.go): a server without a scheme is https
    when TLS is configured, else http."""
    if "://" in host:
        return host
    return ("https://" if tls else "http://") + host


def _configuration_class() -> type:
    """The client's Configuration with client-go's scheme default for ``host``; a property, because
    the kubeconfig loader re-applies the kubeconfig's host before every request."""
    from kubectl_dynamo.cluster import lean_kubernetes

    lean_kubernetes()
    from kubernetes.client import Configuration as base  # lazy: see the module docstring

    # base.host is the property object; mypy types a property read off its class as the getter
    # function (python/mypy#16090), hence the two attr-defined ignores.
    class Configuration(base):
        @property
        def host(self) -> str:
            return _with_scheme(base.host.fget(self),  # type: ignore[attr-defined]
                                bool(self.ssl_ca_cert or self.cert_file or not self.verify_ssl))

        @host.setter
        def host(self, value: str) -> None:
            base.host.fset(self, value)  # type: ignore[attr-defined]

    return Configuration


class Cluster:
    """One connection to one API server, built from kubeconfig or in-cluster configuration."""

    def __init__(self, target: Target):
        from kubectl_dynamo.cluster import lean_kubernetes

        lean_kubernetes()
        from kubernetes import client, config  # lazy: see the module docstring
        from kubernetes.config.config_exception import ConfigException

        _quiet_libraries()
        self.timeout = parse_duration(target.request_timeout)
        cfg = _configuration_class()()
        paths = kubeconfig_paths(target)
        have_file = any(os.path.exists(p) for p in paths)
        joined = os.pathsep.join(paths)
        context_namespace = None
        del _LOG.lines[:]
        try:
            if have_file:
                check_kubeconfig(paths, target.context)
                config.load_kube_config(config_file=joined, context=target.context,
                                        client_configuration=cfg, persist_config=False)
                contexts, active = config.list_kube_config_contexts(config_file=joined)
                chosen = active
                if target.context:
                    chosen = next((c for c in contexts if c.get("name") == target.context), active)
                context_namespace = ((chosen or {}).get("context") or {}).get("namespace")
            elif os.environ.get("KUBERNETES_SERVICE_HOST"):
                config.load_incluster_config(client_configuration=cfg)
                if os.path.exists(SA_NAMESPACE_FILE):
                    with open(SA_NAMESPACE_FILE) as f:
                        context_namespace = f.read().strip() or None
            else:
                raise UsageError(
                    f"no kubeconfig found at {joined} and not running in a cluster "
                    "(set --kubeconfig or KUBECONFIG)")
        except ConfigException as e:
            raise UsageError(f"invalid kubeconfig: {_one_line(str(e))}") from e
        except (OSError, ValueError, TypeError, AttributeError, KeyError) as e:
            # the client's loader on content check_kubeconfig let through (e.g. a bad certificate field)
            raise UsageError(f"cannot read kubeconfig {joined}: {_one_line(str(e))}") from e
        if _LOG.lines:  # e.g. an exec plugin that ran and failed: the client logs it and carries on
            raise Unauthorized(f"cannot get credentials for the cluster: {_one_line(_LOG.lines[0])}")
        cfg.retries = False  # one attempt: the deadline is the user's, not doubled by a silent retry
        self.server = cfg.host
        self.context = target.context
        self.namespace = target.namespace or context_namespace or "default"
        self._api = client.ApiClient(cfg)
        self._api.user_agent = user_agent()
        self.verbose = target.verbose
        self.requests = 0  # counted for benchmarks and tests (every attempt: a retry is a request)
        self.retried = 0  # attempts after the first
        # (path, labelSelector, fieldSelector) -> resourceVersion of its last LIST: a WATCH that follows
        # the read (get -w) starts there instead of listing again.
        self.list_versions: Dict[Tuple[str, Optional[str], Optional[str]], Optional[str]] = {}

    # -- transport ---------------------------------------------------------------------------
    def _prepare(self, method: str, path: str, params: Optional[dict], headers: dict, body):
        """(method, url with the query, headers with credentials, body) of one counted attempt."""
        query = "?" + urlencode({k: v for k, v in (params or {}).items() if v is not None}) if params else ""
        if hasattr(self._api, "param_serialize"):  # kubernetes >= 37
            method, url, headers, body, _ = self._api.param_serialize(
                method, path, header_params=dict(headers), body=body, auth_settings=["BearerToken"])
        else:  # kubernetes <= 36, the krew archive's (37 needs pydantic-core, compiled: docs/distribution.md)
            headers = {**self._api.default_headers, **headers}
            self._api.update_params_for_auth(headers, [], ["BearerToken"])  # type: ignore[call-arg]
            url = self._api.configuration.host + path
        self.requests += 1
        return method, url + query, headers, body

    def _deadline(self) -> Optional[float]:
        return time.monotonic() + self.timeout if self.timeout else None

    def _left(self, deadline: Optional[float], method: str, path: str) -> Optional[float]:
        """What is left of the request's deadline for its next attempt."""
        if deadline is None:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            raise ClusterUnreachable(f"{method} {path}: no answer from {self.server} within {self.timeout:g} s "
                                     "(--request-timeout)")
        return left

    def _retry(self, attempt: int, deadline: Optional[float], wait: float, method: str, path: str, why: str) -> bool:
        """Wait before attempt ``attempt + 2`` and say so with -v; False when client-go would stop here:
        10 retries done, or the wait would outlast the request's deadline (its context)."""
        if attempt >= MAX_RETRIES:
            return False
        wait = min(max(wait, 0.0), MAX_WAIT)
        if deadline is not None and time.monotonic() + wait >= deadline:
            return False
        if self.verbose:
            print(f"retrying {method} {path} in {wait:g}s (retry {attempt + 1} of {MAX_RETRIES}): {why}",
                  file=sys.stderr, flush=True)
        time.sleep(wait)  # what the server asked for: the retry policy itself, not synchronisation
        self.retried += 1
        return True

    def _call(self, method: str, url: str, headers: dict, body, timeout):
        """The open response (status, reason, headers, read(), response: the urllib3 one)."""
        if hasattr(self._api, "param_serialize"):  # kubernetes >= 37
            return self._api.call_api(method, url, header_params=headers, body=body, _request_timeout=timeout)
        # kubernetes <= 36: its REST client raises on any non-2xx status and JSON-encodes a string body
        # again, so urllib3 is called as kubernetes 37's REST client calls it.
        import urllib3

        if body is not None and not isinstance(body, (str, bytes)):
            body = json.dumps(body)
        if isinstance(timeout, tuple):
            timeout = urllib3.Timeout(connect=timeout[0], read=timeout[1])
        elif timeout:
            timeout = urllib3.Timeout(total=timeout)
        resp = self._api.rest_client.pool_manager.request(method, url, body=body, headers=headers,
                                                          preload_content=False, timeout=timeout)
        resp.response = resp  # type: ignore[attr-defined]  # what kubernetes 37's RESTResponse calls the urllib3 response
        return resp

    def request(self, method: str, path: str, params: Optional[dict] = None, body=None,
                content_type: str = "application/json") -> dict:
        """Send one request (retried as ``_retry`` allows); return the decoded JSON body or raise a
        DynamoError subclass."""
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        deadline = self._deadline()
        attempt = 0
        while True:
            m, url, h, b = self._prepare(method, path, params, headers, body)
            try:
                # a single number is urllib3's Timeout(total=...): connect and answer share one deadline
                resp = self._call(m, url, h, b, self._left(deadline, method, path))
                raw = resp.read()
            except Exception as e:  # urllib3 and the client raise many types for one meaning
                if isinstance(e, DynamoError):
                    raise
                if _LOG.lines:
                    raise Unauthorized(f"cannot get credentials for {self.server}: {_one_line(_LOG.lines[0])}") from e
                reason = _reason(e)
                if reason == "timed out":
                    after = f"{self.timeout:g} s" if self.timeout else "the system's limit"
                    raise ClusterUnreachable(f"{method} {path}: no answer from {self.server} within {after} "
                                             "(--request-timeout)", detail=repr(e)) from e
                if method == "GET" and _broken(e) and self._retry(attempt, deadline, BROKEN_WAIT, method, path,
                                                                   f"the connection broke ({reason})"):
                    attempt += 1
                    continue
                raise ClusterUnreachable(f"cannot reach the cluster at {self.server}: {reason}"
                                         + _after(attempt), detail=repr(e)) from e
            status = resp.status
            if 200 <= status < 300:
                if not raw:
                    return {}
                data = _decode(raw)
                if not isinstance(data, dict):
                    raise ClusterUnreachable(f"{method} {path}: the answer from {self.server} is not the Kubernetes "
                                             f"API's ({_what(_ctype(resp), raw)}; a proxy or login page in the way?)")
                return data
            wait = _retry_after(resp, status)
            if wait is not None and self._retry(attempt, deadline, wait, method, path,
                                                f"the server answered HTTP {status} with Retry-After: {wait:g}"):
                attempt += 1
                continue
            raise self._error(status, raw, resp.reason, method, path, _ctype(resp), attempt)

    def _error(self, status: int, raw: bytes, reason: Optional[str], method: str, path: str,
               ctype: str = "", retried: int = 0) -> DynamoError:
        message = _status_message(raw) or _one_line(reason or "") or f"HTTP {status}"
        if status == 401:
            return Unauthorized(f"unauthorized: the cluster at {self.server} rejected the credentials ({message})")
        if status == 403:
            return Forbidden(f"forbidden: cannot {_describe(method, path)} ({method} {path}): {message}")
        if status == 404:
            return NotFound(message)
        if status == 429:  # API Priority and Fairness: throttled, never "forbidden"
            return ClusterUnreachable(f"{method} {path}: the server at {self.server} is throttling requests "
                                      f"(HTTP 429: {message}){_after(retried)}")
        if status >= 500 or _decode(raw) is None:
            return ClusterUnreachable(f"{method} {path}: the server at {self.server} answered HTTP {status}: "
                                      f"{message if _status_message(raw) else _what(ctype, raw)}{_after(retried)}")
        return ApiError(f"{method} {path}: {message}", status, _decode(raw))

    def stream(self, path: str, params: Optional[dict] = None, *, read_timeout: Optional[float] = None) -> Stream:
        """A streaming GET (pod logs, watches): the open response, read line by line as it arrives.
        No read timeout by default: a followed log may stay quiet for hours. Opening it is retried as a
        request is (client-go's Stream and Watch: a Retry-After answer; a broken connection, as watchInternal).
        A stream that ends (no ``watch``, no ``follow``: a log read once) and breaks midway is opened again
        and continues after the bytes already read; a watch is resumed by its reader from its last
        resourceVersion (streams.Watched), a followed log by ``logs -f``."""
        endless = any((params or {}).get(k) in ("true", True) for k in ("watch", "follow"))
        raw = self._open(path, params, read_timeout)
        return Stream(raw, reopen=None if endless else lambda: self._open(path, params, read_timeout))

    def _resend_or_raise(self, e: Exception, attempt: int, deadline: Optional[float], path: str) -> None:
        """A stream's GET that broke: return after the wait when it is to be sent again, else exit 3."""
        if _broken(e) and self._retry(attempt, deadline, BROKEN_WAIT, "GET", path,
                                      f"the connection broke ({_reason(e)})"):
            return
        raise ClusterUnreachable(f"cannot reach the cluster at {self.server}: {_reason(e)}" + _after(attempt),
                                 detail=repr(e)) from e

    def _open(self, path: str, params: Optional[dict], read_timeout: Optional[float]):
        connect = min(self.timeout, 10.0) if self.timeout else None
        deadline = self._deadline()
        attempt = 0
        while True:
            method, url, headers, _ = self._prepare("GET", path, params, {"Accept": "*/*"}, None)
            try:
                resp = self._call(method, url, headers, None, (connect, read_timeout))
            except Exception as e:
                self._resend_or_raise(e, attempt, deadline, path)
                attempt += 1
                continue
            if 200 <= resp.status < 300:
                return resp.response
            try:
                raw = resp.read()
            except Exception as e:  # an error answer cut midway: as a broken connection
                self._resend_or_raise(e, attempt, deadline, path)
                attempt += 1
                continue
            wait = _retry_after(resp, resp.status)
            if wait is not None and self._retry(attempt, deadline, wait, "GET", path,
                                                f"the server answered HTTP {resp.status} with Retry-After: {wait:g}"):
                attempt += 1
                continue
            raise self._error(resp.status, raw, resp.reason, "GET", path, _ctype(resp), attempt)

    def get(self, path: str, params: Optional[dict] = None) -> dict:
        return self.request("GET", path, params)

    def list(self, path: str, *, label_selector: Optional[str] = None, field_selector: Optional[str] = None,
             managed_fields: bool = False, each: Optional[Callable[[dict], Any]] = None) -> list:
        """All items of a collection (``each(item)`` of each, as it arrives), paginated; one logical LIST.

        A continue request answered 410 Expired (etcd compacted the first page's resourceVersion while
        we read) lists again from the start, as client-go's pager does (k8s.io/client-go@v0.33.13
        tools/pager/pager.go, FullListIfExpired: only on a continue request, only for reason Expired):
        first paged again, so the bound of two pages in flight holds, then, if that expires too, in
        one full LIST as the pager does. What was read of the expired list is dropped: pages of two
        resourceVersions never mix."""
        selectors = {"label_selector": label_selector, "field_selector": field_selector}
        for _ in range(2):
            out: list = []
            try:
                for item in self.iter_list(path, managed_fields=managed_fields, **selectors):
                    out.append(each(item) if each else item)
                return out
            except ListExpired:
                del out
                if self.verbose:
                    print(f"listing {path} again from the start: its continue token expired (HTTP 410 Expired)",
                          file=sys.stderr, flush=True)
        body = self.get(path, {"labelSelector": label_selector, "fieldSelector": field_selector})
        self.list_versions[(path, label_selector, field_selector)] = (body.get("metadata") or {}).get("resourceVersion")
        out = []
        while True:
            for item in body.get("items") or []:
                if not managed_fields:
                    (item.get("metadata") or {}).pop("managedFields", None)
                out.append(each(item) if each else item)
            token = (body.get("metadata") or {}).get("continue")
            if not token:  # the server pages even a LIST without a limit (or a proxy does): follow it
                return out
            body = self.get(path, {"continue": token, "labelSelector": label_selector, "fieldSelector": field_selector})

    def iter_list(self, path: str, *, label_selector: Optional[str] = None,
                  field_selector: Optional[str] = None, managed_fields: bool = False) -> Iterator[dict]:
        """Items page by page. ``metadata.managedFields`` is dropped unless asked for (kubectl hides
        it too): it is about half of a pod's JSON, and 10,000 pods kept whole cost ~0.5 GB.

        The next page is requested as soon as a page arrives, on a second thread, while the caller
        consumes this one: the server reads and encodes page n+1 while we process page n (waiting
        on the socket releases the GIL). At most two pages are alive at once. A continue token that
        expired raises ``ListExpired`` (``list`` starts again)."""
        from concurrent.futures import ThreadPoolExecutor

        def fetch(token: Optional[str]) -> dict:
            try:
                return self.get(path, {"limit": PAGE_SIZE, "continue": token,
                                       "labelSelector": label_selector, "fieldSelector": field_selector})
            except ApiError as e:
                # apimachinery's IsResourceExpired: the Status reason is Expired (HTTP 410)
                if token and e.status == 410 and isinstance(e.body, dict) and e.body.get("reason") == "Expired":
                    raise ListExpired(e.message, e.status, e.body) from e
                raise

        page = fetch(None)
        # every page of a LIST is read at the first page's resourceVersion (the continue token keeps it)
        self.list_versions[(path, label_selector, field_selector)] = (page.get("metadata") or {}).get("resourceVersion")
        with ThreadPoolExecutor(1, thread_name_prefix="kubectl-dynamo-page") as pool:
            while True:
                token = (page.get("metadata") or {}).get("continue")
                ahead = pool.submit(fetch, token) if token else None
                items = page.get("items") or []
                del page  # only the items stay alive while the caller consumes them
                for item in items:
                    if not managed_fields:
                        (item.get("metadata") or {}).pop("managedFields", None)
                    yield item
                del items
                if ahead is None:
                    return
                page = ahead.result()

    def groups(self) -> dict:
        """Served API groups: ``{group: [versions, preferred first]}`` from ``GET /apis``."""
        data = self.get("/apis")
        out = {}
        for g in data.get("groups") or []:
            versions = [v["version"] for v in g.get("versions") or []]
            preferred = (g.get("preferredVersion") or {}).get("version")
            if preferred in versions:
                versions.remove(preferred)
                versions.insert(0, preferred)
            out[g["name"]] = versions
        return out

    def server_version(self) -> str:
        return self.get("/version").get("gitVersion", "unknown")

    def can_i(self, verb: str, resource: str, group: str = "", namespace: Optional[str] = None,
              name: Optional[str] = None) -> bool:
        """SelfSubjectAccessReview: may the current user do this?"""
        attrs = {"verb": verb, "resource": resource, "group": group}
        if namespace:
            attrs["namespace"] = namespace
        if name:
            attrs["name"] = name
        review = self.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                              body={"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                                    "spec": {"resourceAttributes": attrs}})
        return bool((review.get("status") or {}).get("allowed"))


class ListExpired(ApiError):
    """410 Expired on a continue request: the LIST must start again (``Cluster.list``)."""


class Stream:
    """An open streaming response. ``lines()`` yields complete lines (bytes, without the newline),
    ``batches()`` the same a chunk at a time;
    a line longer than ``max_line`` is cut into pieces of that size, so memory stays bounded whatever
    a container prints. ``close()`` may be called from another thread: it shuts the socket down,
    which ends a blocked read."""

    CHUNK = 64 * 1024

    def __init__(self, raw, reopen: Optional[Callable[[], Any]] = None):
        self._raw = raw  # a urllib3 HTTPResponse, not preloaded
        self._reopen = reopen  # a finite stream: opens it again, to continue after what was read
        self.closed = False
        self.error: Optional[Exception] = None  # why the stream ended early, if it did
        self.resumed = 0

    def _read(self, done: int) -> bytes:
        """The next chunk; a finite stream that broke is opened again (at most MAX_RETRIES times, as a
        GET is resent) and its first ``done`` bytes, already read, are skipped."""
        skip = 0
        while True:
            try:
                while skip > 0:
                    got = self._raw.read1(min(skip, self.CHUNK))
                    if not got:
                        return b""  # shorter than before (a log rotated away): it ends here
                    skip -= len(got)
                return self._raw.read1(self.CHUNK)
            except Exception as e:  # a reset or a cut only: a read timeout is an answer that did not come
                if self.closed or self._reopen is None or self.resumed >= MAX_RETRIES or not _broken(e):
                    raise
                self.resumed += 1
                self._raw = self._reopen()
                skip = done

    def batches(self, max_line: int = 16 * 1024) -> Iterator[List[bytes]]:
        """The complete lines of each chunk as it arrives (one list per read: queues then move
        chunks, not lines)."""
        buf = b""
        done = 0
        try:
            while True:
                chunk = self._read(done)
                if not chunk:
                    break
                done += len(chunk)
                parts = (buf + chunk).split(b"\n")
                buf = parts.pop()
                out: List[bytes] = []
                for line in parts:
                    out.extend(_pieces(line, max_line))
                while len(buf) >= max_line:  # a line without its end yet: never hold more than max_line
                    out.append(buf[:max_line])
                    buf = buf[max_line:]
                if out:
                    yield out
        except Exception as e:  # the server or close() ended the connection mid-stream: the stream ends
            self.error = None if self.closed else e
            return
        if buf:
            yield [buf]

    def lines(self, max_line: int = 16 * 1024) -> Iterator[bytes]:
        for batch in self.batches(max_line):
            yield from batch

    def close(self) -> None:
        self.closed = True
        shutdown = getattr(self._raw, "shutdown", None)  # urllib3 >= 2.3: unblocks a reader thread
        try:
            if shutdown:
                shutdown()
            self._raw.close()
        except Exception:  # closing a broken connection: nothing left to do
            pass


def _pieces(line: bytes, size: int) -> Iterator[bytes]:
    if len(line) <= size:
        yield line
        return
    for i in range(0, len(line), size):
        yield line[i:i + size]


def _decode(raw: bytes):
    try:
        return json.loads(raw)
    except (ValueError, TypeError, RecursionError):
        return None


def _status_message(raw: bytes) -> Optional[str]:
    body = _decode(raw)
    message = body.get("message") if isinstance(body, dict) else None
    return _one_line(message) if isinstance(message, str) and message else None


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _ctype(resp) -> str:
    return (resp.headers or {}).get("Content-Type") or ""


def _what(ctype: str, raw: bytes) -> str:
    """A short description of a body that is not JSON: its content type and first words."""
    kind = ctype.split(";")[0] or "no content type"
    start = _one_line(raw[:200].decode("utf-8", "replace"), 60)
    return f"{kind}: {start!r}" if start else kind


_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def _describe(method: str, path: str) -> str:
    """``list pods in namespace "x"`` from a REST path (for a 403 whose body says nothing)."""
    resource, name, namespace = _parse_path(path)
    verb = _VERBS.get(method) or ("get" if name else "list")
    what = f"{verb} {resource}" + (f" {name!r}" if name else "")
    return what + (f" in namespace {namespace!r}" if namespace else (" (cluster-wide)" if resource else ""))


def _parse_path(path: str) -> Tuple[str, Optional[str], Optional[str]]:
    """(resource[.group], name, namespace) of a REST path; the path itself when it is not one."""
    parts = [p for p in path.split("?")[0].split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 2:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        return path, None, None
    namespace = None
    if rest[:1] == ["namespaces"] and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    if not rest:
        return path, None, namespace
    return rest[0] + (f".{group}" if group else ""), (rest[1] if len(rest) > 1 else None), namespace


def _retry_after(resp, status: int) -> Optional[float]:
    """Seconds to wait before retrying, or None: client-go's checkWait (rest/with_retry.go) waits only on
    a 429 or 5xx, and only with an integer Retry-After (retryAfterSeconds: strconv.Atoi)."""
    if status != 429 and status < 500:
        return None
    text = ((resp.headers or {}).get("Retry-After") or "").strip()
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    return float(max(int(text), 0))


def _broken(exc: Exception) -> bool:
    """The connection was reset or ended before the whole answer (client-go's net.IsConnectionReset,
    IsProbableEOF): worth resending a GET; a refused connection or a timeout is not."""
    words = f"{type(exc).__name__} {exc!r} {getattr(exc, 'reason', '')}".lower()
    return any(w in words for w in _BROKEN)


def _after(retried: int) -> str:
    return f" (after {retried} {'retry' if retried == 1 else 'retries'})" if retried else ""


def _reason(exc: Exception) -> str:
    """The innermost useful words of a connection error (urllib3 nests them deeply)."""
    text = str(getattr(exc, "reason", None) or exc)
    for marker in ("Connection refused", "timed out", "Name or service not known",
                   "certificate verify failed", "No route to host", "Temporary failure in name resolution",
                   "Connection reset by peer"):
        if marker in text:
            return marker.lower()
    if "IncompleteRead" in text or "Response ended prematurely" in text:
        return "the connection closed before the whole answer arrived"
    if "RemoteDisconnected" in text or "without response" in text:
        return "the connection closed without an answer"
    return text.splitlines()[0][:200]


def path_for(group: str, version: str, plural: str, namespace: Optional[str] = None, name: Optional[str] = None) -> str:
    """The REST path of a resource; always fully qualified (KAI and Volcano both define queues)."""
    base = f"/api/{version}" if group == "" else f"/apis/{group}/{version}"
    if namespace:
        base += f"/namespaces/{namespace}"
    base += f"/{plural}"
    return base + (f"/{name}" if name else "")
