"""A recorded cluster state (docs/snapshot-format.md) served through the live ``Cluster``'s read interface.

``RecordedCluster(path)`` answers what ``cluster/facts.py`` and ``cluster/snapshot.py`` ask of a live
server — ``server_version``, ``groups``, ``get``, ``list``/``iter_list`` with label and field
selectors, ``can_i`` — from a snapshot directory or ``.tar.gz``, raising the same ``NotFound`` /
``Forbidden`` errors, so ``doctor`` runs unchanged on a recording or a ``collect`` bundle.

Selectors are evaluated as the API server evaluates them. Grammar and semantics follow
k8s.io/apimachinery ``pkg/labels/selector.go`` and ``pkg/fields/selector.go`` (v0.33.13, the sandbox's
Kubernetes 1.33.13); the fields each kind can be selected by follow k8s.io/kubernetes
``pkg/apis/core/v1/conversion.go`` (which fields a kind accepts) and
``pkg/registry/core/{pod,event,node,secret,service,namespace}/strategy.go`` (their values), v1.33.13;
every other kind takes ``metadata.name`` and ``metadata.namespace`` only (apimachinery
``runtime.DefaultMetaV1FieldSelectorConversion``).
"""

from __future__ import annotations

import copy
import json
import os
import tarfile
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from kubectl_dynamo.errors import DynamoError, Forbidden, InputError, NotFound

FORMAT = "kubectl-dynamo/snapshot"
FORMAT_VERSION = 1
READ_VERBS = ("get", "list", "watch")
NOT_SERVED = "the server could not find the requested resource"  # the API server's 404 wording


class BadRequest(DynamoError):
    """What the API server answers 400 to: a selector it cannot parse or a field it cannot select by."""

    status = 400


# -- label selectors (k8s.io/apimachinery pkg/labels/selector.go) ---------------------------

SPECIAL = "=!(),><"  # isSpecialSymbol
WHITESPACE = " \t\r\n"  # isWhitespace
TOKENS = {")", ",", "!", "==", "=", ">", "in", "<", "!=", "notin", "("}  # string2token


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # "=", "==", "!=", "in", "notin", "exists", "!", ">", "<"
    values: Tuple[str, ...] = ()

    def matches(self, labels: Dict[str, str]) -> bool:
        """Requirement.Matches."""
        has = self.key in labels
        if self.op in ("=", "==", "in"):
            return has and labels[self.key] in self.values
        if self.op in ("!=", "notin"):  # a missing key matches: these also select the key's absence
            return not has or labels[self.key] not in self.values
        if self.op == "exists":
            return has
        if self.op == "!":
            return not has
        if not has:  # ">" / "<": both sides integers; a label value that is not one never matches
            return False
        try:
            value = int(labels[self.key])
        except ValueError:
            return False
        bound = int(self.values[0])
        return value > bound if self.op == ">" else value < bound


def _lex(text: str) -> List[str]:
    """Lexer: runs of special symbols become the longest known token; anything else up to the next
    special symbol or blank is an identifier (``in``/``notin`` too: the parser decides by position)."""
    out, i = [], 0
    while i < len(text):
        if text[i] in WHITESPACE:
            i += 1
            continue
        j = i + 1
        if text[i] in SPECIAL:
            while j < len(text) and text[i:j + 1] in TOKENS:
                j += 1
            if text[i:j] not in TOKENS:
                raise BadRequest(f"unable to parse requirement: error parsing token '{text[i:j]}'")
        else:
            while j < len(text) and text[j] not in SPECIAL and text[j] not in WHITESPACE:
                j += 1
        out.append(text[i:j])
        i = j
    return out


def _value(token: Optional[str]) -> bool:
    """An identifier where a key or value is expected (the parser's Values context, where the
    keywords ``in``/``notin`` are plain identifiers)."""
    return token is not None and (token not in TOKENS or token in ("in", "notin"))


def parse_labels(text: Optional[str]) -> List[Requirement]:
    """``a=b,c!=d,e,!f,g in (h,i),j notin (k)`` -> requirements, ANDed; empty selects everything."""
    tokens = _lex(text or "")
    reqs: List[Requirement] = []
    pos = 0

    def peek() -> Optional[str]:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> Optional[str]:
        nonlocal pos
        token = peek()
        pos += 1
        return token

    def fail(found: Optional[str], expected: str) -> BadRequest:
        return BadRequest(f"unable to parse requirement: found '{found or ''}', expected: {expected}")

    while peek() is not None:
        if not (_value(peek()) or peek() == "!"):
            raise fail(peek(), "!, identifier, or 'end of string'")
        negate = peek() == "!"
        if negate:
            take()
        key = take()
        if key is None or not _value(key):
            raise fail(key, "identifier")
        if negate or peek() in (None, ","):
            reqs.append(Requirement(key, "!" if negate else "exists"))
        else:
            op = take()
            if op in ("in", "notin"):
                reqs.append(Requirement(key, op, _parse_set(take, peek, fail)))
            elif op in ("=", "==", "!=", ">", "<"):
                value = "" if peek() in (None, ",") else take()
                if value is None or not (value == "" or _value(value)):
                    raise fail(value, "identifier")
                if op in (">", "<") and not value.lstrip("-").isdigit():
                    raise BadRequest(f"unable to parse requirement: for 'Gt', 'Lt' operators, the value must be "
                                     f"an integer: '{value}'")
                reqs.append(Requirement(key, op, (value,)))
            else:
                raise fail(op, "!=, =, ==, >, <, in, notin")
        after = take()
        if after is None:
            break
        if after != ",":
            raise fail(after, "',' or 'end of string'")
        if not (_value(peek()) or peek() == "!"):
            raise fail(peek(), "identifier after ','")
    return reqs


def _parse_set(take: Callable, peek: Callable, fail: Callable) -> Tuple[str, ...]:
    """parseValues / parseIdentifiersList: ``(a,b)``; ``()`` and empty members are the empty value."""
    if take() != "(":
        raise fail(None, "'('")
    values: List[str] = []
    if peek() == ")":
        take()
        return ("",)
    while True:
        tok = take()
        if tok == ",":
            if not values:
                values.append("")
            if peek() == ")":
                values.append("")
                break
            if peek() == ",":
                take()
                values.append("")
        elif _value(tok):
            values.append(tok)
            if peek() == ")":
                break
            if peek() != ",":
                raise fail(peek(), "',' or ')'")
        else:
            raise fail(tok, "',', or identifier")
    take()  # ")"
    return tuple(dict.fromkeys(values))


def labels_match(reqs: List[Requirement], obj: dict) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return all(r.matches(labels) for r in reqs)


# -- field selectors (k8s.io/apimachinery pkg/fields/selector.go) ----------------------------

def _split_terms(text: str) -> List[str]:
    """splitTerms: commas split terms; a backslash escapes the next character."""
    terms, start, escaped = [], 0, False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    return terms + [text[start:]]


def _unescape(value: str) -> str:
    """UnescapeValue: ``\\\\``, ``\\,`` and ``\\=`` are the only escapes; a bare ``,`` or ``=`` is an error."""
    out, escaped = [], False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise BadRequest(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise BadRequest(f"invalid field selector: unescaped character in value: {ch}")
        else:
            out.append(ch)
    if escaped:
        raise BadRequest("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def parse_fields(text: Optional[str]) -> List[Tuple[str, bool, str]]:
    """``f=v,g!=w`` -> [(field, equal?, value)], ANDed; ``==`` is ``=`` (splitTerm: first operator wins)."""
    terms = []
    for term in _split_terms(text or ""):
        if not term:
            continue
        for i in range(len(term)):
            op = next((o for o in ("!=", "==", "=") if term.startswith(o, i)), None)
            if op:
                terms.append((term[:i], op != "!=", _unescape(term[i + len(op):])))
                break
        else:
            raise BadRequest(f"invalid selector: '{text}'; can't understand '{term}'")
    return terms


def _pod_fields(o: dict) -> Dict[str, str]:
    """pod/strategy.go ToSelectableFields."""
    spec, status = o.get("spec") or {}, o.get("status") or {}
    ips = status.get("podIPs") or []
    return {"spec.nodeName": spec.get("nodeName") or "", "spec.restartPolicy": spec.get("restartPolicy") or "",
            "spec.schedulerName": spec.get("schedulerName") or "",
            "spec.serviceAccountName": spec.get("serviceAccountName") or "",
            "spec.hostNetwork": "true" if spec.get("hostNetwork") else "false",
            "status.phase": status.get("phase") or "", "status.podIP": (ips[0].get("ip") or "") if ips else "",
            "status.nominatedNodeName": status.get("nominatedNodeName") or ""}


def _event_fields(o: dict) -> Dict[str, str]:
    """event/strategy.go ToSelectableFields (``source`` falls back to the reporting controller)."""
    involved = o.get("involvedObject") or {}
    out = {f"involvedObject.{k}": involved.get(k) or ""
           for k in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")}
    reporting = o.get("reportingComponent") or ""
    out.update({"reason": o.get("reason") or "", "reportingComponent": reporting,
                "source": (o.get("source") or {}).get("component") or reporting, "type": o.get("type") or ""})
    return out


def _get(*keys: str) -> Callable[[dict], str]:
    def value(o: dict) -> str:
        for key in keys:
            o = o.get(key) or {} if isinstance(o, dict) else {}
        return o if isinstance(o, str) else ""
    return value


# Core kinds with their own field label conversion (k8s.io/kubernetes pkg/apis/core/v1/conversion.go): the
# fields they accept beyond metadata.* and how each is read; an other field is "field label not supported".
# Every other kind (apps, custom resources) takes only metadata.name and metadata.namespace
# (apimachinery runtime.DefaultMetaV1FieldSelectorConversion).
KIND_FIELDS: Dict[Tuple[str, str], Tuple[Tuple[str, ...], Callable[[dict], Dict[str, str]]]] = {
    ("", "pods"): (("metadata.name", "metadata.namespace"), _pod_fields),
    ("", "events"): (("metadata.name", "metadata.namespace"), _event_fields),
    ("", "nodes"): (("metadata.name",), lambda o: {
        "spec.unschedulable": "true" if (o.get("spec") or {}).get("unschedulable") else "false"}),
    ("", "namespaces"): (("metadata.name",), lambda o: {"status.phase": _get("status", "phase")(o)}),
    ("", "secrets"): (("metadata.name", "metadata.namespace"), lambda o: {"type": o.get("type") or ""}),
    ("", "services"): (("metadata.name", "metadata.namespace"), lambda o: {
        "spec.clusterIP": _get("spec", "clusterIP")(o), "spec.type": _get("spec", "type")(o)}),
}
ALIASES = {("", "pods"): {"spec.host": "spec.nodeName"}}  # conversion.go: old v1 clients


def selectable_fields(group: str, resource: str, obj: dict) -> Dict[str, str]:
    meta = obj.get("metadata") or {}
    special = KIND_FIELDS.get((group, resource))
    if special is None:  # a cluster-scoped object's namespace is "" (so "metadata.namespace=x" selects none)
        return {"metadata.name": meta.get("name") or "", "metadata.namespace": meta.get("namespace") or ""}
    meta_fields, extract = special
    out = {k: meta.get(k.split(".", 1)[1]) or "" for k in meta_fields}
    out.update(extract(obj))
    return out


def fields_filter(text: Optional[str], group: str, resource: str) -> Callable[[dict], bool]:
    """A predicate for one LIST; a field the kind cannot be selected by is refused up front (400),
    in the API server's words."""
    aliases = ALIASES.get((group, resource), {})
    terms = [(aliases.get(name, name), equal, value) for name, equal, value in parse_fields(text)]
    known = selectable_fields(group, resource, {})
    for name, _, _ in terms:
        if name not in known:
            if (group, resource) in KIND_FIELDS:
                raise BadRequest(f"field label not supported: {name}")
            raise BadRequest(f'"{name}" is not a known field selector: only "metadata.name", "metadata.namespace"')

    def match(obj: dict) -> bool:
        values = selectable_fields(group, resource, obj)
        return all((values[name] == value) == equal for name, equal, value in terms)

    return match


# -- the snapshot tree -----------------------------------------------------------------------

def resource_file(group: str, version: str, resource: str) -> str:
    return f"resources/{group or 'core'}/{version}/{resource}.json"


class _Tree:
    """The files of a snapshot: a directory, or a .tar.gz holding the tree at its root or in one
    top-level directory (what ``tar czf x.tar.gz dir`` makes)."""

    def __init__(self, path: str, held: Optional[Dict[str, bytes]] = None):
        self.path = path
        self._files: Optional[Dict[str, bytes]] = held  # already in memory (collect, before it writes)
        if held is not None or os.path.isdir(path):
            return
        if not os.path.isfile(path):
            raise InputError(f"snapshot {path}: no such file or directory")
        try:
            files: Dict[str, bytes] = {}
            with tarfile.open(path, "r:*") as tar:
                for member in tar.getmembers():
                    data = tar.extractfile(member) if member.isfile() else None
                    if data is not None:
                        files[member.name.removeprefix("./")] = data.read()
        except (tarfile.TarError, OSError) as e:
            raise InputError(f"snapshot {path}: not a directory or a readable .tar.gz ({e})") from e
        roots = {name.split("/", 1)[0] for name in files if name.endswith("manifest.json") and name.count("/") == 1}
        if "manifest.json" not in files and len(roots) == 1:
            prefix = roots.pop() + "/"
            files = {name[len(prefix):]: data for name, data in files.items() if name.startswith(prefix)}
        self._files = files

    def raw(self, name: str) -> Optional[bytes]:
        """One file of the tree as stored, None when absent."""
        try:
            if self._files is not None:
                return self._files.get(name)
            full = os.path.join(self.path, name)
            if not os.path.exists(full):
                return None
            with open(full, "rb") as f:
                return f.read()
        except OSError as e:
            raise InputError(f"snapshot {self.path}: cannot read {name}: {e}") from e

    def read(self, name: str) -> Optional[dict]:
        """One JSON file of the tree, None when absent."""
        raw = self.raw(name)
        try:
            return None if raw is None else json.loads(raw)
        except ValueError as e:
            raise InputError(f"snapshot {self.path}: cannot read {name}: {e}") from e


class RecordedCluster:
    """The read side of ``client.Cluster``, answered from a snapshot. Mutating requests are refused."""

    def __init__(self, path: str, namespace: Optional[str] = None, *, files: Optional[Dict[str, bytes]] = None):
        self._tree = _Tree(path, files)
        manifest = self._tree.read("manifest.json")
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise InputError(f"snapshot {path}: no manifest.json of format {FORMAT}")
        if manifest.get("formatVersion") != FORMAT_VERSION:
            raise InputError(f"snapshot {path}: formatVersion {manifest.get('formatVersion')} is not supported "
                             f"(this version reads {FORMAT_VERSION})")
        self.manifest = manifest
        self.path = path
        self.server = f"snapshot {path}"
        self.context = None
        self.scope: Optional[str] = manifest.get("namespace")  # the recording's namespace; None = all
        # a collect bundle of one DGD or namespace also holds the controllers' namespaces (manifest "namespaces")
        self.held = set(manifest.get("namespaces") or ([self.scope] if self.scope else []))
        self.namespace = namespace or self.scope or "default"
        self.requests = 0
        self._version = self._tree.read("version.json") or {}
        self._groups: Dict[str, List[str]] = self._tree.read("discovery.json") or {}
        self._kinds = {(r["group"], r["version"], r["resource"]): r for r in manifest.get("resources") or []}
        self._forbidden = {(f["group"], f["version"], f["resource"]): f.get("reason") or "forbidden"
                           for f in manifest.get("forbidden") or []}
        self._items: Dict[Tuple[str, str, str], List[dict]] = {}

    def read_json(self, name: str) -> Optional[dict]:
        """A file of the recording beside the snapshot (a collect bundle's collect.json, detect.json)."""
        return self._tree.read(name)

    def read_bytes(self, name: str) -> Optional[bytes]:
        return self._tree.raw(name)

    # -- the live Cluster's interface ----------------------------------------------------------
    def server_version(self) -> str:
        self.requests += 1
        return self._version.get("gitVersion", "unknown")

    def groups(self) -> dict:
        self.requests += 1
        return copy.deepcopy(self._groups)

    def request(self, method: str, path: str, params: Optional[dict] = None, body=None,
                content_type: str = "application/json") -> dict:
        if method != "GET":
            raise DynamoError(f"{method} {path}: {self.server} is a recording and cannot be changed")
        return self.get(path, params)

    def get(self, path: str, params: Optional[dict] = None) -> dict:
        self.requests += 1
        clean = path.rstrip("/")
        if clean == "/version":
            return copy.deepcopy(self._version)
        if clean == "/apis":
            return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in vs],
                 "preferredVersion": {"groupVersion": f"{g}/{vs[0]}", "version": vs[0]}}
                for g, vs in self._groups.items() if vs]}
        parts = [p for p in clean.split("/") if p]
        if parts == ["api", "v1"] or (len(parts) == 3 and parts[0] == "apis"):
            return self._resource_list(*(("", "v1") if parts[0] == "api" else parts[1:]))
        group, version, resource, namespace, name = parse_path(path)
        items = self._select(group, version, resource, namespace, params or {})
        if name is None:
            return {"kind": "List", "apiVersion": "v1", "metadata": {}, "items": items}
        found = next((o for o in items if (o.get("metadata") or {}).get("name") == name), None)
        if found is None:
            raise NotFound(f'{resource}{"." + group if group else ""} "{name}" not found')
        return found

    def list(self, path: str, *, label_selector: Optional[str] = None, field_selector: Optional[str] = None,
             managed_fields: bool = False, each: Optional[Callable[[dict], Any]] = None) -> list:
        items = self.iter_list(path, label_selector=label_selector, field_selector=field_selector,
                               managed_fields=managed_fields)
        return [each(o) for o in items] if each else list(items)

    def iter_list(self, path: str, *, label_selector: Optional[str] = None, field_selector: Optional[str] = None,
                  managed_fields: bool = False) -> Iterator[dict]:
        """One LIST; ``managed_fields`` is accepted for the live signature (a snapshot never holds them)."""
        group, version, resource, namespace, name = parse_path(path)
        if name is not None:
            raise DynamoError(f"GET {path}: a LIST takes a collection path, not one object")
        self.requests += 1
        yield from self._select(group, version, resource, namespace,
                                {"labelSelector": label_selector, "fieldSelector": field_selector})

    def can_i(self, verb: str, resource: str, group: str = "", namespace: Optional[str] = None,
              name: Optional[str] = None) -> bool:
        """Read verbs: allowed unless the recording was refused that kind; anything else: a recording
        cannot be changed."""
        self.requests += 1
        if verb not in READ_VERBS:
            return False
        return not any(g == group and r == resource for g, _, r in self._forbidden)

    # -- internals -------------------------------------------------------------------------------
    def _resource_list(self, group: str, version: str) -> dict:
        """The discovery document of one group/version, as far as the recording knows it: the kinds it holds."""
        if not self._served(group, version):
            raise NotFound(NOT_SERVED)
        gv = f"{group}/{version}" if group else version
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                "resources": [{"name": r, "namespaced": bool(k.get("namespaced"))}
                              for (g, v, r), k in self._kinds.items() if (g, v) == (group, version)]}

    def _served(self, group: str, version: str) -> bool:
        return version == "v1" if group == "" else version in self._groups.get(group, [])

    def _select(self, group: str, version: str, resource: str, namespace: Optional[str], params: dict) -> List[dict]:
        key = (group, version, resource)
        if key in self._forbidden:
            raise Forbidden(self._forbidden[key])
        if not self._served(group, version):
            raise NotFound(NOT_SERVED)
        kind = self._kinds.get(key)
        if kind is None:
            raise DynamoError(f"{resource}{'.' + group if group else ''} {version} was not recorded in {self.server}")
        namespaced = bool(kind.get("namespaced"))
        if namespaced and namespace and self.held and namespace not in self.held:
            raise DynamoError(f"{self.server} holds namespace {self.scope} only, not {namespace}")
        if not namespaced and namespace:
            raise NotFound(NOT_SERVED)  # a cluster-scoped kind has no namespaced path
        labels = parse_labels(params.get("labelSelector"))
        fields = fields_filter(params.get("fieldSelector"), group, resource)
        out = []
        for obj in self._load(key):
            if namespace and (obj.get("metadata") or {}).get("namespace") != namespace:
                continue
            if labels_match(labels, obj) and fields(obj):
                out.append(copy.deepcopy(obj))  # callers slim and pop what they read, as with live JSON
        return out

    def _load(self, key: Tuple[str, str, str]) -> List[dict]:
        if key not in self._items:
            data = self._tree.read(resource_file(*key)) or {}
            self._items[key] = data.get("items") or []
        return self._items[key]


def parse_path(path: str) -> Tuple[str, str, str, Optional[str], Optional[str]]:
    """``/api/v1[/namespaces/NS]/RES[/NAME]`` or ``/apis/G/V[/namespaces/NS]/RES[/NAME]`` ->
    (group, version, resource, namespace, name). ``/api/v1/namespaces/NS`` is the Namespace NS."""
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        raise DynamoError(f"GET {path}: not an API resource path")
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 2:
        raise DynamoError(f"GET {path}: subresources and discovery documents are not recorded")
    return group, version, rest[0], namespace, (rest[1] if len(rest) == 2 else None)
