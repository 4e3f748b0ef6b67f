"""What a ``collect`` bundle holds: the asked scope, without private values (pure; ``commands/collect.py`` reads
and writes).

**Scope.** ``narrow`` keeps, of a cluster-wide read, what the asked scope needs:

- ``dgd``: the DGD, its lineage (whatever is labelled with its name, owned by a kept object, or linked by Grove's
  ``part-of`` / LWS's name label), its pods and the Jobs (and their pods) that mount the same claims, the namespace
  objects those reference (by name, anywhere in the lineage: Services, ConfigMaps, Secrets, ServiceAccounts, claims,
  PodGroups), RoleBindings of its ServiceAccounts and their Roles, the namespace's ResourceQuotas, and the events
  of every kept object;
- ``namespace``: every object of the namespace;
- ``cluster``: everything.

Every scope adds the cluster state a diagnosis needs: the nodes its pods sit on (or, for a pod not placed, every node
its nodeSelector admits), the PersistentVolumes of its claims and their StorageClasses, the PriorityClasses and
queues (with their parents) it names, every CRD and webhook configuration, and the operator's and orchestrators'
Deployments, ReplicaSets, pods and the operator's config (``model.platform.controller_deployments``).

**Redaction.** ``Redactor`` blanks env values (names and ``valueFrom`` kept), credential-looking annotations,
token-carrying command-line arguments and every string shaped like a known token (HF, NGC, AWS, GitHub, bearer,
JWT), also when base64-encoded; ``kubectl apply``'s last-applied annotation is dropped (it repeats the spec).

**Pseudonyms.** ``Pseudonyms`` replaces the scope's namespaces, DGD names, node names, other object names and IPs
with stable pseudonyms, as substrings at name boundaries, so that names derived from a DGD's (``<dgd>-0-decode``)
stay derived from its pseudonym and a diagnosis finds the same causes.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Set, Tuple

from kubectl_dynamo.model.labels import DGD_LABEL, LWS_NAME, PART_OF
from kubectl_dynamo.model.lineage import needs
from kubectl_dynamo.model.platform import controller_deployments, operator_config_map
from kubectl_dynamo.operator.selection import DEFAULT_KAI_QUEUE

Key = Tuple[str, str, str]  # (group, version, plural)
Objects = Dict[Key, List[dict]]
SCOPES = ("dgd", "namespace", "cluster")
REDACTED = "REDACTED"  # a plain word: a command line that holds it quotes it as before (no shell metacharacter)

# the kinds narrow() treats by what they are (group, plural)
NAMESPACES, NODES, PODS, EVENTS = ("", "namespaces"), ("", "nodes"), ("", "pods"), ("", "events")
CLAIMS, VOLUMES, CLASSES = ("", "persistentvolumeclaims"), ("", "persistentvolumes"), ("storage.k8s.io", "storageclasses")
JOBS, DEPLOYMENTS, REPLICASETS = ("batch", "jobs"), ("apps", "deployments"), ("apps", "replicasets")
ROLEBINDINGS, ROLES, SERVICES = ("rbac.authorization.k8s.io", "rolebindings"), ("rbac.authorization.k8s.io", "roles"), ("", "services")
SLICES, CONFIGMAPS = ("discovery.k8s.io", "endpointslices"), ("", "configmaps")
PRIORITIES = ("scheduling.k8s.io", "priorityclasses")
QUEUES = {("scheduling.volcano.sh", "queues"), ("scheduling.run.ai", "queues")}
# cluster-scoped kinds a diagnosis reads whole: API versions and admission, not tenants' data
WHOLE = {("apiextensions.k8s.io", "customresourcedefinitions"),
         ("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
         ("admissionregistration.k8s.io", "mutatingwebhookconfigurations")}
# the schedulers' own queues (Volcano's default and root: a PodGroup without spec.queue is in "default") and the
# one the operator uses when a DGD names none
PLATFORM_QUEUES = ("default", "root", DEFAULT_KAI_QUEUE)
# namespace objects kept in a DGD's scope when the lineage names them
REFERENCED = {("", "configmaps"), ("", "secrets"), ("", "serviceaccounts"), CLAIMS, SERVICES,
              ("scheduling.volcano.sh", "podgroups"), ("scheduling.run.ai", "podgroups")}


@dataclass(frozen=True)
class Scope:
    kind: str  # dgd | namespace | cluster
    namespace: Optional[str] = None
    dgd: Optional[str] = None

    def describe(self) -> str:
        if self.kind == "dgd":
            return f"DGD {self.namespace}/{self.dgd}"
        if self.kind == "namespace":
            return f"namespace {self.namespace}"
        return "cluster (every namespace)"

    def as_json(self) -> dict:
        return {"kind": self.kind, "namespace": self.namespace, "dgd": self.dgd}


def _meta(o: dict) -> dict:
    return o.get("metadata") or {}


def _strings(obj, out: Set[str]) -> Set[str]:
    """Every string value (not key) of a JSON value."""
    if isinstance(obj, str):
        out.add(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            _strings(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _strings(v, out)
    return out


def _template_claims(obj: dict) -> Set[str]:
    spec = (((obj.get("spec") or {}).get("template") or {}).get("spec")) or {}
    return {c for v in spec.get("volumes") or [] if (c := (v.get("persistentVolumeClaim") or {}).get("claimName"))}


def _selects(selector: dict, labels: dict) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


class _Keep:
    """The kept objects, by kind, as the identity of each (its uid, else namespace/name)."""

    def __init__(self, objects: Objects):
        self.objects = objects
        self.kept: Dict[Key, Set[str]] = {k: set() for k in objects}

    @staticmethod
    def ident(o: dict) -> str:
        m = _meta(o)
        return m.get("uid") or f"{m.get('namespace')}/{m.get('name')}"

    def of(self, gp: Tuple[str, str]) -> Iterator[Tuple[Key, dict]]:
        for key, items in self.objects.items():
            if key[0] == gp[0] and key[2] == gp[1]:
                for o in items:
                    yield key, o

    def add(self, key: Key, o: dict) -> bool:
        i = self.ident(o)
        if i in self.kept[key]:
            return False
        self.kept[key].add(i)
        return True

    def has(self, key: Key, o: dict) -> bool:
        return self.ident(o) in self.kept[key]

    def kept_of(self, gp: Tuple[str, str]) -> List[dict]:
        return [o for key, o in self.of(gp) if self.has(key, o)]

    def all_kept(self) -> Iterator[Tuple[Key, dict]]:
        for key, items in self.objects.items():
            for o in items:
                if self.has(key, o):
                    yield key, o

    def result(self) -> Objects:
        return {key: [o for o in items if self.has(key, o)] for key, items in self.objects.items()}


def narrow(objects: Objects, scope: Scope) -> Objects:
    """The objects of ``scope`` and the cluster state its diagnosis needs (module docstring)."""
    if scope.kind == "cluster":
        return objects
    keep = _Keep(objects)
    ns = scope.namespace
    namespaced = [(key, o) for key, items in objects.items() for o in items if _meta(o).get("namespace") == ns]
    if scope.kind == "namespace":
        for key, o in namespaced:
            keep.add(key, o)
    else:
        _lineage(keep, namespaced, scope)
    _cluster_state(keep, ns)
    return keep.result()


def _lineage(keep: _Keep, namespaced: List[Tuple[Key, dict]], scope: Scope) -> None:
    """The DGD, what is linked to it, what that references (module docstring)."""
    uids: Set[str] = set()
    names: Set[str] = set()  # PodCliqueSet and LeaderWorkerSet names (Grove's part-of, LWS's name label)

    def linked(key: Key, o: dict) -> bool:
        m = _meta(o)
        labels = m.get("labels") or {}
        if key[2] == "dynamographdeployments":
            return m.get("name") == scope.dgd
        if key[2] == "events":
            return False  # events follow the objects they are about (_events)
        return (labels.get(DGD_LABEL) == scope.dgd or any(r.get("uid") in uids for r in m.get("ownerReferences") or [])
                or labels.get(PART_OF) in names or labels.get(LWS_NAME) in names)

    changed = True
    while changed:  # owners before owned, in any listing order
        changed = False
        for key, o in namespaced:
            if not keep.has(key, o) and linked(key, o):
                keep.add(key, o)
                m = _meta(o)
                uids.add(m.get("uid") or "")
                if key[2] in ("podcliquesets", "leaderworkersets"):
                    names.add(m.get("name") or "")
                changed = True
    # the claims the pods mount, and the Jobs (with their pods) that mount the same claims: the model download
    claims = {n for p in keep.kept_of(PODS) for kind, n, _ in needs(p) if kind == "PersistentVolumeClaim"}
    for key, o in namespaced:
        if (key[0], key[2]) == JOBS and _template_claims(o) & claims and keep.add(key, o):
            uids.add(_meta(o).get("uid") or "")
    for key, o in namespaced:
        if (key[0], key[2]) == PODS and any(r.get("uid") in uids for r in _meta(o).get("ownerReferences") or []):
            keep.add(key, o)
    # what the lineage names: ConfigMaps, Secrets, ServiceAccounts, claims, Services, PodGroups
    named: Set[str] = set()
    for _, o in keep.all_kept():
        _strings(o.get("spec"), named)
        _strings(_meta(o).get("annotations"), named)
    for p in keep.kept_of(PODS):
        named.update(n for _, n, _ in needs(p))
        named.add((p.get("spec") or {}).get("serviceAccountName") or "default")
    pods = keep.kept_of(PODS)
    for key, o in namespaced:
        gp = (key[0], key[2])
        if gp in REFERENCED and _meta(o).get("name") in named or gp == SERVICES and any(_selects((o.get("spec") or {}).get("selector") or {},
                                             _meta(p).get("labels") or {}) for p in pods):
            keep.add(key, o)
        elif gp == ("", "resourcequotas"):
            keep.add(key, o)  # the namespace's limits explain a pod that is not created
    accounts = {_meta(o).get("name") for o in keep.kept_of(("", "serviceaccounts"))}
    roles = set()
    for key, o in namespaced:
        if (key[0], key[2]) == ROLEBINDINGS and any(s.get("kind") == "ServiceAccount" and s.get("name") in accounts
                                                   for s in o.get("subjects") or []):
            keep.add(key, o)
            if (o.get("roleRef") or {}).get("kind") == "Role":
                roles.add(o["roleRef"].get("name"))
    services = {_meta(o).get("name") for o in keep.kept_of(SERVICES)}
    for key, o in namespaced:
        gp = (key[0], key[2])
        if gp == ROLES and _meta(o).get("name") in roles or gp == SLICES and (_meta(o).get("labels") or {}).get("kubernetes.io/service-name") in services:
            keep.add(key, o)
    _events(keep, namespaced)


def _events(keep: _Keep, candidates: Iterable[Tuple[Key, dict]]) -> None:
    """The events about a kept object (by uid, else kind, namespace and name)."""
    uids, refs = set(), set()
    for _, o in keep.all_kept():
        m = _meta(o)
        if m.get("uid"):
            uids.add(m["uid"])
        refs.add((m.get("namespace"), m.get("name")))
    for key, o in candidates:
        if (key[0], key[2]) != EVENTS:
            continue
        io = o.get("involvedObject") or o.get("regarding") or {}
        if io.get("uid") in uids or (io.get("namespace"), io.get("name")) in refs:
            keep.add(key, o)


def _cluster_state(keep: _Keep, ns: Optional[str]) -> None:
    """What a diagnosis of the kept objects reads beyond them (module docstring)."""
    pods = keep.kept_of(PODS)
    # a pod not placed (or none made yet): the scheduler weighs every node, and why none fits is the diagnosis;
    # else the nodes they sit on
    placed = {(p.get("spec") or {}).get("nodeName") for p in pods}
    every = not placed or None in placed or "" in placed
    for key, node in keep.of(NODES):
        if every or _meta(node).get("name") in placed:
            keep.add(key, node)
    claims = {(_meta(c).get("namespace"), _meta(c).get("name")): c for c in keep.kept_of(CLAIMS)}
    classes = {(c.get("spec") or {}).get("storageClassName") for c in claims.values()}
    for key, pv in keep.of(VOLUMES):
        ref = (pv.get("spec") or {}).get("claimRef") or {}
        if (ref.get("namespace"), ref.get("name")) in claims or any(
                (c.get("spec") or {}).get("volumeName") == _meta(pv).get("name") for c in claims.values()):
            keep.add(key, pv)
            classes.add((pv.get("spec") or {}).get("storageClassName"))
    for key, sc in keep.of(CLASSES):
        if _meta(sc).get("name") in classes:
            keep.add(key, sc)
    for key, pc in keep.of(PRIORITIES):
        if _meta(pc).get("name") in {(p.get("spec") or {}).get("priorityClassName") for p in pods}:
            keep.add(key, pc)
    for key, items in keep.objects.items():
        if (key[0], key[2]) in WHOLE:
            for o in items:
                keep.add(key, o)
    # the controllers: their Deployments, ReplicaSets and pods, the operator's config, their namespaces
    deployments = [o for _, o in keep.of(DEPLOYMENTS)]
    controllers = controller_deployments(deployments)
    homes = {ns} | {_meta(d).get("namespace") for d in controllers}
    uids = set()
    configs = set()
    for key, d in keep.of(DEPLOYMENTS):
        if any(d is c for c in controllers):
            keep.add(key, d)
            uids.add(_meta(d).get("uid"))
            configs.add((_meta(d).get("namespace"), operator_config_map(d)))
    for key, rs in keep.of(REPLICASETS):
        if any(r.get("uid") in uids for r in _meta(rs).get("ownerReferences") or []):
            keep.add(key, rs)
            uids.add(_meta(rs).get("uid"))
    for key, p in keep.of(PODS):  # by owner, or by selector (a recording may hold no ReplicaSets)
        if any(r.get("uid") in uids for r in _meta(p).get("ownerReferences") or []) or any(
                _meta(d).get("namespace") == _meta(p).get("namespace") and _selects(
                    ((d.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}, _meta(p).get("labels") or {})
                for d in controllers):
            keep.add(key, p)
    for key, cm in keep.of(CONFIGMAPS):
        if (_meta(cm).get("namespace"), _meta(cm).get("name")) in configs:
            keep.add(key, cm)
    # the Services the webhook configurations call, and their EndpointSlices (does the webhook answer?)
    called = {(svc.get("namespace"), svc.get("name")) for gp in WHOLE for _, c in keep.of(gp)
              for w in c.get("webhooks") or [] for svc in [(w.get("clientConfig") or {}).get("service") or {}]
              if svc.get("name")}
    for key, o in keep.of(SERVICES):
        if (_meta(o).get("namespace"), _meta(o).get("name")) in called:
            keep.add(key, o)
    for key, o in keep.of(SLICES):
        if (_meta(o).get("namespace"), (_meta(o).get("labels") or {}).get("kubernetes.io/service-name")) in called:
            keep.add(key, o)
    homes |= {n for n, _ in called}
    for key, o in keep.of(NAMESPACES):
        if _meta(o).get("name") in homes:
            keep.add(key, o)
    # the queues the kept objects name (a PodGroup's spec.queue, a pod's queue label), and their parents
    named: Set[str] = set(PLATFORM_QUEUES)
    for _, o in keep.all_kept():
        if _meta(o).get("namespace") == ns:
            for part in (o.get("spec"), _meta(o).get("labels"), _meta(o).get("annotations")):
                _strings(part, named)
    # the operator's config may name its queue (config.yaml, kept above): a word of its text
    named.update(w for (cns, cname) in configs for key, cm in keep.of(CONFIGMAPS)
                 if (_meta(cm).get("namespace"), _meta(cm).get("name")) == (cns, cname)
                 for text in (cm.get("data") or {}).values() if isinstance(text, str) for w in re.findall(r"[\w.-]+", text))
    queues = [(key, q) for gp in QUEUES for key, q in keep.of(gp)]
    changed = True
    while changed:
        changed = False
        for key, q in queues:
            if not keep.has(key, q) and _meta(q).get("name") in named:
                keep.add(key, q)
                parent = (q.get("spec") or {}).get("parentQueue") or (q.get("spec") or {}).get("parent")
                if parent:
                    named.add(parent)
                changed = True


def scope_of(objects: Objects) -> Dict[str, int]:
    """Objects per kind (plural, qualified by group), for summaries."""
    return {(f"{k[2]}.{k[0]}" if k[0] else k[2]): len(v) for k, v in sorted(objects.items()) if v}


# -- redaction ---------------------------------------------------------------------------------------

# Known token shapes (the providers' documented prefixes): Hugging Face user access tokens (hf_), NGC API keys
# (nvapi-), AWS access key ids (AKIA/ASIA + 16), GitHub tokens (ghp_/gho_/ghs_/ghu_/github_pat_), JSON Web Tokens,
# an Authorization header's bearer/basic credential, and key=value pairs whose key names a secret.
TOKENS = re.compile(
    r"hf_[A-Za-z0-9]{20,}|nvapi-[A-Za-z0-9_-]{20,}|(?:AKIA|ASIA)[A-Z0-9]{16}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+"
    r"|(?i:(?<=bearer )|(?<=basic ))[A-Za-z0-9._~+/=-]{8,}")
SECRET_WORD = r"(?:token|secret|passw(?:or)?d|api[-_]?key|access[-_]?key|private[-_]?key|credentials?|auth)"
# --flag=VALUE, --flag VALUE, NAME=VALUE, name: "value" whose flag or name names a secret (not a name of one:
# sshSecretName, secretRef, tokenPath) and whose value is not a reference ($(HF_TOKEN), ${X})
SECRET_ASSIGN = re.compile(r"(?i)(--?[A-Za-z0-9_.-]*" + SECRET_WORD + r"[A-Za-z0-9_.-]*(?:=|\s+)"
                           r"|(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*" + SECRET_WORD + r"[A-Za-z0-9_.-]*\"?\s*[:=]\s*\"?)"
                           r"(?![-$]|REDACTED)([^\s\"',;]+)")
NOT_A_VALUE = re.compile(r"(?i)(?:name|names|namespace|ref|path|file|dir|mount|type|kind|class)\W*$")
SECRET_FLAG = re.compile(r"(?i)^--?[A-Za-z0-9_.-]*" + SECRET_WORD + r"[A-Za-z0-9_.-]*$")
SECRET_ANNOTATION = re.compile(r"(?i)" + SECRET_WORD)
BASE64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# annotations whose key contains a secret word yet hold none (what the controllers write)
SAFE_ANNOTATIONS = ("kubernetes.io/service-account.name", "kubernetes.io/service-account.uid")


@dataclass
class Redactor:
    """Blanks private values in objects and log lines; ``counts`` says what was blanked, for the manifest."""

    include_env: bool = False
    counts: Dict[str, int] = field(default_factory=dict)

    def _count(self, what: str, n: int = 1) -> None:
        if n:
            self.counts[what] = self.counts.get(what, 0) + n

    def text(self, s: str) -> str:
        """Token shapes, secret assignments, and base64 runs that decode to either."""
        if not s or s == REDACTED:
            return s
        out, n = TOKENS.subn(REDACTED, s)
        self._count("token-shaped strings", n)
        out = SECRET_ASSIGN.sub(self._assign, out)
        return BASE64.sub(self._base64, out)

    def _assign(self, m: re.Match[str]) -> str:
        if NOT_A_VALUE.search(m.group(1).rstrip(" =:\"")):
            return m.group(0)
        self._count("values of secret-named flags and keys")
        return m.group(1) + REDACTED

    def _base64(self, m: re.Match[str]) -> str:
        raw = m.group(0)
        try:
            decoded = base64.b64decode(raw + "=" * (-len(raw) % 4), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return raw
        if TOKENS.search(decoded) or SECRET_ASSIGN.search(decoded):
            self._count("base64-encoded tokens")
            return REDACTED
        return raw

    def args(self, items: list) -> list:
        """A command line: ``--hf-token X`` blanks X; every element as ``text``."""
        out = []
        for i, a in enumerate(items):
            if not isinstance(a, str):
                out.append(a)
            elif i and isinstance(items[i - 1], str) and SECRET_FLAG.match(items[i - 1]) and not a.startswith(("-", "$")):
                self._count("values of secret-named flags and keys")
                out.append(REDACTED)
            else:
                out.append(self.text(a))
        return out

    def obj(self, o):
        """One object (or any JSON value below it), redacted in place and returned."""
        if isinstance(o, dict):
            for k, v in list(o.items()):
                if k in ("env", "envs") and isinstance(v, list):
                    o[k] = [self._env(e) for e in v]
                elif k in ("command", "args") and isinstance(v, list):
                    o[k] = self.args(v)
                elif k == "annotations" and isinstance(v, dict):
                    o[k] = self._annotations(v)
                elif isinstance(v, str):
                    o[k] = self.text(v)
                else:
                    self.obj(v)
        elif isinstance(o, list):
            for i, v in enumerate(o):
                if isinstance(v, str):
                    o[i] = self.text(v)
                else:
                    self.obj(v)
        return o

    def _env(self, e):
        if not isinstance(e, dict) or not isinstance(e.get("value"), str):
            return self.obj(e)
        if self.include_env:
            e["value"] = self.text(e["value"])
        elif e["value"] != "":
            self._count("env values")
            e["value"] = REDACTED
        return e

    def _annotations(self, ann: dict) -> dict:
        out = {}
        for k, v in ann.items():
            if k == LAST_APPLIED:
                self._count("last-applied annotations")
                continue
            if isinstance(v, str) and SECRET_ANNOTATION.search(k) and not k.startswith(SAFE_ANNOTATIONS):
                self._count("credential-looking annotations")
                out[k] = REDACTED
            else:
                out[k] = self.text(v) if isinstance(v, str) else v
        return out


# -- pseudonyms --------------------------------------------------------------------------------------

IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])")
# namespaces that are the platform's, not a tenant's: their names are words the checks match on
PLATFORM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# names every namespace has, or words the controllers and checks use: never replaced
WORDS = {"default", "kube-root-ca.crt", "main", "leader", "worker", "frontend", "decode", "prefill", "None"}


class Pseudonyms:
    """Stable pseudonyms for real names: ``add`` each name with its kind, then ``text``/``obj`` replace them.

    A namespace's, a DGD's or a node's name is replaced also where it begins or ends a longer name
    (``llm-0-decode``, ``llm.demo.svc``), as the controllers derive names from it; any other object's name
    only where it stands whole (``config`` must not change ``dynamo-operator-config``)."""

    def __init__(self):
        self.mapping: Dict[str, str] = {}
        self.counters: Dict[str, int] = {}
        self.exact: Set[str] = set()
        self._patterns: Optional[List[re.Pattern[str]]] = None

    def add(self, real: Optional[str], kind: str, *, exact: bool = False) -> None:
        if not real or real in self.mapping or len(real) < 3 or real in WORDS:
            return
        self.counters[kind] = self.counters.get(kind, 0) + 1
        self.mapping[real] = f"{kind}-{self.counters[kind]}"
        if exact:
            self.exact.add(real)
        self._patterns = None

    def _compile(self) -> List[re.Pattern[str]]:
        out = []
        for names, edge in ((self.exact, r"A-Za-z0-9_.-"), (set(self.mapping) - self.exact, r"A-Za-z0-9_")):
            names = {n for n in names if not IPV4.fullmatch(n)}
            if names:
                alt = "|".join(map(re.escape, sorted(names, key=len, reverse=True)))
                out.append(re.compile(rf"(?<![{edge}])(?:{alt})(?![{edge}])"))
        return out

    def _ip(self, m: re.Match[str]) -> str:
        real = m.group(0)
        try:
            ip = ipaddress.IPv4Address(real)
        except ValueError:
            return real
        if ip.is_unspecified or ip.is_loopback:
            return real
        if real not in self.mapping:
            n = len([v for v in self.mapping.values() if v.startswith("10.")]) + 1
            self.mapping[real] = f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"
        return self.mapping[real]

    def text(self, s: str) -> str:
        if self._patterns is None:
            self._patterns = self._compile()
        for pattern in self._patterns:
            s = pattern.sub(lambda m: self.mapping[m.group(0)], s)
        return IPV4.sub(self._ip, s)

    def obj(self, o):
        """String values only (keys are the API's words); in place."""
        if isinstance(o, dict):
            for k, v in o.items():
                o[k] = self.text(v) if isinstance(v, str) else self.obj(v)
        elif isinstance(o, list):
            for i, v in enumerate(o):
                o[i] = self.text(v) if isinstance(v, str) else self.obj(v)
        return o


def pseudonyms_for(objects: Objects, scope: Scope, controller_namespaces: Iterable[str]) -> Pseudonyms:
    """The names to replace: the scope's namespaces, DGDs, nodes and the names of its namespaced objects (not the
    controllers' namespaces and objects, whose names are the vendors' and which the checks look for)."""
    p = Pseudonyms()
    platform = set(PLATFORM_NAMESPACES) | set(controller_namespaces)
    for key, items in sorted(objects.items()):
        for o in items:
            m = _meta(o)
            if key[2] == "namespaces" and m.get("name") not in platform:
                p.add(m.get("name"), "ns")
            elif key[2] == "dynamographdeployments" and m.get("namespace") not in platform:
                p.add(m.get("name"), "dgd")
            elif key[2] == "nodes":
                p.add(m.get("name"), "node")
    for key, items in sorted(objects.items()):
        if key[2] in ("events", "namespaces", "nodes", "dynamographdeployments"):
            continue
        for o in items:
            m = _meta(o)
            if m.get("namespace") and m.get("namespace") not in platform:
                name = m.get("name") or ""
                if p.text(name) == name:  # else already derived from a replaced name
                    p.add(name, key[2].rstrip("s")[:12] or "obj", exact=True)
    return p


def controller_namespaces(objects: Objects) -> Set[str]:
    deployments = [o for key, items in objects.items() if (key[0], key[2]) == DEPLOYMENTS for o in items]
    return {_meta(d).get("namespace") or "" for d in controller_deployments(deployments)}


Filter = Callable[[str], bool]


def about(scope: Scope, names: Iterable[str]) -> Filter:
    """Whether a controller's log line is about the scope's objects: it names the namespace and one of the names
    (a DGD's scope), or the namespace (a namespace's); every line for a cluster's."""
    if scope.kind == "cluster":
        return lambda line: True
    ns = re.compile(r"(?<![A-Za-z0-9-])" + re.escape(scope.namespace or "") + r"(?![A-Za-z0-9-])")
    if scope.kind == "namespace":
        return lambda line: bool(ns.search(line))
    kept = sorted({n for n in names if n}, key=len, reverse=True)
    name = re.compile(r"(?<![A-Za-z0-9-])(?:" + "|".join(map(re.escape, kept)) + r")(?![A-Za-z0-9-])")
    return lambda line: bool(ns.search(line) and name.search(line))


def scope_words(scope: dict, cluster: str = "every namespace") -> str:
    """A bundle's scope in words (``cluster``: how the widest scope is said)."""
    if scope["kind"] == "dgd":
        return f"DGD {scope['namespace']}/{scope['dgd']}"
    if scope["kind"] == "namespace":
        return f"namespace {scope['namespace']}"
    return cluster
