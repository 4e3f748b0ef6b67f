"""The small client core: kubeconfig resolution and raw-JSON requests to the API server.

Only this package talks to the API server. The ``kubernetes`` package is imported lazily, inside
``Cluster.__init__``, so ``--help`` and offline commands never pay for it (about 0.35 s).
Requests go through the client's transport (auth, exec plugins, TLS) but responses are parsed
with ``json.loads``: model deserialisation is slow on large lists.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Iterator, List, Optional
from urllib.parse import urlencode

from ..errors import ClusterUnreachable, DynamoError, Forbidden, NotFound, Unauthorized, UsageError

SA_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
DEFAULT_TIMEOUT = 30.0
PAGE_SIZE = 500


def parse_duration(text: Optional[str]) -> Optional[float]:
    """kubectl's --request-timeout: "0" = none, a bare number = seconds, else 1h2m3s-style units."""
    if text is None or text == "":
        return DEFAULT_TIMEOUT
    text = str(text).strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        value = float(text)
        return None if value == 0 else value
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise UsageError(f'invalid --request-timeout "{text}": use a duration such as 30s, 2m or 0 (no timeout)')
    scale = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
    total = sum(float(n) * scale[u] for n, u in parts)
    return None if total == 0 else total


@dataclass
class Target:
    """Where a command points: resolved from the shared kube options."""

    kubeconfig: Optional[str] = None
    context: Optional[str] = None
    namespace: Optional[str] = None  # -n; None = the context's namespace
    request_timeout: Optional[str] = None


class Cluster:
    """One connection to one API server, built from kubeconfig or in-cluster configuration."""

    def __init__(self, target: Target):
        from kubernetes import client, config  # lazy: see the module docstring
        from kubernetes.config.config_exception import ConfigException

        self.timeout = parse_duration(target.request_timeout)
        cfg = client.Configuration()
        paths = target.kubeconfig or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
        have_file = any(os.path.exists(os.path.expanduser(p)) for p in paths.split(os.pathsep) if p)
        context_namespace = None
        try:
            if have_file:
                config.load_kube_config(config_file=paths, context=target.context,
                                        client_configuration=cfg, persist_config=False)
                contexts, active = config.list_kube_config_contexts(config_file=paths)
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
                    f"no kubeconfig found at {paths} and not running in a cluster "
                    "(set --kubeconfig or KUBECONFIG)")
        except ConfigException as e:
            raise UsageError(f"invalid kubeconfig: {e}") from e
        except (OSError, ValueError) as e:
            raise UsageError(f"cannot read kubeconfig {paths}: {e}") from e
        cfg.retries = 1  # fail fast when the server is down; kubectl does not retry either
        self.server = cfg.host
        self.context = target.context
        self.namespace = target.namespace or context_namespace or "default"
        self._api = client.ApiClient(cfg)
        self.requests = 0  # counted for benchmarks and tests

    # -- transport ---------------------------------------------------------------------------
    def request(self, method: str, path: str, params: Optional[dict] = None, body=None,
                content_type: str = "application/json") -> dict:
        """Send one request; return the decoded JSON body or raise a DynamoError subclass."""
        query = "?" + urlencode({k: v for k, v in (params or {}).items() if v is not None}) if params else ""
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        method, url, headers, body, _ = self._api.param_serialize(
            method, path, header_params=headers, body=body, auth_settings=["BearerToken"])
        url += query
        timeout = (min(self.timeout, 10.0), self.timeout) if self.timeout else None
        self.requests += 1
        try:
            resp = self._api.call_api(method, url, header_params=headers, body=body, _request_timeout=timeout)
            raw = resp.read()
        except Exception as e:  # urllib3 and the client raise many types for one meaning
            raise ClusterUnreachable(f"cannot reach the cluster at {self.server}: {_reason(e)}",
                                     detail=repr(e)) from e
        status = resp.status
        if 200 <= status < 300:
            return json.loads(raw) if raw else {}
        raise self._error(status, raw, resp.reason, method, path)

    def _error(self, status: int, raw: bytes, reason: Optional[str], method: str, path: str) -> DynamoError:
        message = _status_message(raw) or reason or f"HTTP {status}"
        if status == 401:
            return Unauthorized(f"unauthorized: the cluster at {self.server} rejected the credentials ({message})")
        if status == 403:
            return Forbidden(message)
        if status == 404:
            return NotFound(message)
        err = DynamoError(f"{method} {path}: {message}")
        err.status = status
        err.body = _decode(raw)
        return err

    def stream(self, path: str, params: Optional[dict] = None, *, read_timeout: Optional[float] = None) -> Stream:
        """A streaming GET (pod logs, watches): the open response, read line by line as it arrives.
        No read timeout by default: a followed log may stay quiet for hours."""
        query = "?" + urlencode({k: v for k, v in (params or {}).items() if v is not None}) if params else ""
        method, url, headers, _, _ = self._api.param_serialize(
            "GET", path, header_params={"Accept": "*/*"}, auth_settings=["BearerToken"])
        connect = min(self.timeout, 10.0) if self.timeout else None
        self.requests += 1
        try:
            resp = self._api.call_api(method, url + query, header_params=headers,
                                      _request_timeout=(connect, read_timeout))
        except Exception as e:
            raise ClusterUnreachable(f"cannot reach the cluster at {self.server}: {_reason(e)}",
                                     detail=repr(e)) from e
        if not 200 <= resp.status < 300:
            raise self._error(resp.status, resp.read(), resp.reason, "GET", path)
        return Stream(resp.response)

    def get(self, path: str, params: Optional[dict] = None) -> dict:
        return self.request("GET", path, params)

    def list(self, path: str, *, label_selector: Optional[str] = None,
             field_selector: Optional[str] = None, managed_fields: bool = False) -> list:
        """All items of a collection, paginated; one logical LIST per call."""
        return list(self.iter_list(path, label_selector=label_selector, field_selector=field_selector,
                                   managed_fields=managed_fields))

    def iter_list(self, path: str, *, label_selector: Optional[str] = None,
                  field_selector: Optional[str] = None, managed_fields: bool = False) -> Iterator[dict]:
        """Items page by page. ``metadata.managedFields`` is dropped unless asked for (kubectl hides
        it too): it is about half of a pod's JSON, and 10,000 pods kept whole cost ~0.5 GB."""
        token = None
        while True:
            page = self.get(path, {"limit": PAGE_SIZE, "continue": token,
                                   "labelSelector": label_selector, "fieldSelector": field_selector})
            token = (page.get("metadata") or {}).get("continue")
            items = page.get("items") or []
            del page  # only the items stay alive while the caller consumes them
            for item in items:
                if not managed_fields:
                    (item.get("metadata") or {}).pop("managedFields", None)
                yield item
            del items
            if not token:
                return

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


class Stream:
    """An open streaming response. ``lines()`` yields complete lines (bytes, without the newline),
    ``batches()`` the same a chunk at a time;
    a line longer than ``max_line`` is cut into pieces of that size, so memory stays bounded whatever
    a container prints. ``close()`` may be called from another thread: it shuts the socket down,
    which ends a blocked read."""

    CHUNK = 64 * 1024

    def __init__(self, raw):
        self._raw = raw  # a urllib3 HTTPResponse, not preloaded
        self.closed = False
        self.error: Optional[Exception] = None  # why the stream ended early, if it did

    def batches(self, max_line: int = 16 * 1024) -> Iterator[List[bytes]]:
        """The complete lines of each chunk as it arrives (one list per read: queues then move
        chunks, not lines)."""
        buf = b""
        try:
            while True:
                chunk = self._raw.read1(self.CHUNK)
                if not chunk:
                    break
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
    except (ValueError, TypeError):
        return None


def _status_message(raw: bytes) -> Optional[str]:
    body = _decode(raw)
    return body.get("message") if isinstance(body, dict) else None


def _reason(exc: Exception) -> str:
    """The innermost useful words of a connection error (urllib3 nests them deeply)."""
    text = str(getattr(exc, "reason", None) or exc)
    for marker in ("Connection refused", "timed out", "Name or service not known",
                   "certificate verify failed", "No route to host", "Temporary failure in name resolution"):
        if marker in text:
            return marker.lower() if marker != "Connection refused" else "connection refused"
    return text.splitlines()[0][:200]


def path_for(group: str, version: str, plural: str, namespace: Optional[str] = None, name: Optional[str] = None) -> str:
    """The REST path of a resource; always fully qualified (KAI and Volcano both define queues)."""
    base = f"/api/{version}" if group == "" else f"/apis/{group}/{version}"
    if namespace:
        base += f"/namespaces/{namespace}"
    base += f"/{plural}"
    return base + (f"/{name}" if name else "")
