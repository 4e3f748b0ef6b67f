"""Everything ``doctor`` reads, in one LIST per resource kind (never one call per DGD).

Lists are raw JSON (model objects are slow on 10,000 pods), without ``managedFields``. Pods and
nodes are kept as *compact records* (``compact_pod``, ``compact_node``; the controllers' workloads
without their pod templates, ``compact_owned``): the same shape, only the fields the checks read,
repeated strings shared; each page is reduced as it arrives and dropped, so
memory grows by ~2 KB per pod instead of ~15 (benchmarks/doctor_scale.py, 50,000 pods).
Scope is one namespace or all. A forbidden list (403) or a kind not served (404) becomes a ``skipped``
entry with its reason; the run goes on without that kind (its field stays None: the checks that need
it say nothing). Any other failed read (throttled past the retries, 5xx, a broken connection) ends
the command with exit 3 naming the kind: an unread list is never taken for an empty one.

Besides the DGDs' pods, doctor reads what the controllers and schedulers themselves say about them:
the operator's DynamoComponentDeployments and the DGD status, LeaderWorkerSets and their
StatefulSets, Grove's PodCliqueSets, PodCliqueScalingGroups, PodCliques and PodGangs, Volcano's and
KAI's PodGroups (always by their fully qualified group: both define ``podgroups``), every Warning
event in scope, and (from ``facts``) Nodes and controller Deployments. Secrets are never listed: the MPI SSH secret is read by name, once
per namespace that needs it, and only its key names are kept.
"""

from __future__ import annotations

import datetime
import re
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Set

from kubectl_dynamo.cluster import kinds
from kubectl_dynamo.cluster.client import Cluster, path_for
from kubectl_dynamo.errors import ApiError, ClusterUnreachable, DynamoError, Forbidden, NotFound, Unauthorized
from kubectl_dynamo.model.facts import _try, failed_read, gather
from kubectl_dynamo.model.labels import DGD_LABEL, KAI_GROUP_ANNOTATION, LWS_NAME, VOLCANO_GROUP_ANNOTATION
from kubectl_dynamo.model.platform import Facts

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import Skipped

UNKNOWN = "unknown"
FIELDS = {k.field: k for k in kinds.SNAPSHOT if k.field}


class Strings(Dict[str, str]):
    """One copy of each repeated string of a snapshot (label keys and values, node names, images,
    condition words): thousands of pods repeat the same few hundred. ``shared`` does the same for
    the parts of compact records that many pods repeat whole (a role's containers, the conditions
    of a Running pod): the records are read, never written, so equal parts can be one object."""

    def __init__(self):
        super().__init__()
        self.parts: Dict[str, list] = {}

    def __call__(self, value):
        return self.setdefault(value, value) if value.__class__ is str else value

    def shared(self, value: list) -> list:
        # repr is a key equal only for equal JSON values (True and 1, 1.0 and 1 print apart; strings
        # are quoted and escaped) and is computed in C: a tuple-walk key cost twice as much CPU here.
        return self.parts.setdefault(repr(value), value)


class Snapshot:
    """What doctor read: the facts, and one list per kind of ``cluster.kinds.SNAPSHOT``, as an attribute
    named by the kind's ``field`` (``snap.pods``, ``snap.leaderworkersets``, ...). A list is None when
    its kind was not read (not served, forbidden: ``skipped`` says why) — or [] for a ``required`` kind."""

    def __init__(self, facts: Facts, namespace: Optional[str], *, secrets: Optional[Dict[tuple, object]] = None,
                 skipped: Optional[List[Skipped]] = None, requests: int = 0, taken_at: Optional[str] = None,
                 **lists: Optional[List[dict]]):
        unknown = set(lists) - FIELDS.keys()
        if unknown:
            raise TypeError(f"Snapshot has no list {', '.join(sorted(unknown))} (cluster/kinds.py)")
        self.facts = facts
        self.namespace = namespace  # None = all namespaces
        for name, kind in FIELDS.items():
            value = lists.get(name)
            setattr(self, name, [] if value is None and kind.required else value)
        # (ns, name) -> sorted key names, None when absent, UNKNOWN when it may not be read
        self.secrets: Dict[tuple, object] = secrets if secrets is not None else {}
        self.skipped: List[Skipped] = skipped if skipped is not None else []  # {"check": what, "reason": why}
        # the reads the server refused: {"verb", "resource" (plural.group), "namespace" (None = all), "reason"}
        self.denied: List[dict] = []
        # (namespace, name) of a refusing webhook's Service -> what backs it (read_webhook_backends)
        self.webhook_backends: Dict[tuple, object] = {}
        self.requests = requests
        self.taken_at = taken_at  # RFC 3339: when the state was read (a recording's createdAt)
        self.strings = Strings()  # shared by the compact records

    def __getattr__(self, name: str) -> Any:  # the lists are set per table entry in __init__
        raise AttributeError(f"Snapshot has no attribute {name!r}")

    def __repr__(self) -> str:
        sizes = ", ".join(f"{n}={len(v)}" for n in FIELDS if (v := getattr(self, n)) is not None)
        return f"Snapshot(namespace={self.namespace!r}, {sizes})"


# What doctor reads of a pod (doctor.PodInfo and checks/): everything else is dropped. A check that
# reads another pod field must add it here; tests/unit/test_compact_records.py runs every check on
# whole and on compact pods (recorded real states and the catalogue cases) and wants the same findings.
POD_GROUP_ANNOTATIONS = (VOLCANO_GROUP_ANNOTATION, KAI_GROUP_ANNOTATION)  # views.PodInfo.pod_group
POD_CONDITIONS = ("Ready", "PodScheduled")
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")  # checks/dgd.py worker-probes
SHM = "/dev/shm"  # the only mount a check reads (checks/dgd.py shm-size), with its volume


def _pick(src: dict, keys, s: Strings) -> dict:
    return {k: s(src[k]) for k in keys if k in src}


def compact_pod(pod: dict, s: Strings) -> dict:
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    m = {"name": meta.get("name"), "namespace": s(meta.get("namespace")),
         "labels": {s(k): s(v) for k, v in (meta.get("labels") or {}).items()}}
    for key in ("uid", "creationTimestamp", "deletionTimestamp"):  # uid: which events are about this pod
        if meta.get(key):
            m[key] = meta[key]
    groups = {k: s(v) for k, v in (meta.get("annotations") or {}).items() if k in POD_GROUP_ANNOTATIONS}
    if groups:
        m["annotations"] = groups
    if meta.get("ownerReferences"):
        m["ownerReferences"] = s.shared([_pick(r, ("kind", "name"), s) for r in meta["ownerReferences"]])
    sp: dict = {k: s(spec[k]) for k in ("nodeName", "schedulerName", "subdomain", "priorityClassName",
                                        "serviceAccountName", "priority") if spec.get(k)}
    # what the scheduler matches against the nodes (checks/causes.py names the label or taint no node fits)
    # (node and pod affinity, spread, the host ports a pod takes)
    for key in ("nodeSelector", "tolerations", "affinity", "topologySpreadConstraints", "hostNetwork"):
        if spec.get(key):
            sp[key] = s.shared(spec[key])
    if spec.get("schedulingGates"):
        sp["schedulingGates"] = s.shared([_pick(g, ("name",), s) for g in spec["schedulingGates"]])
    shm: Set[str] = set()
    for key in ("containers", "initContainers"):
        out = []
        for c in spec.get(key) or []:
            kept = {"name": s(c.get("name")), "image": s(c.get("image"))}
            kept.update((k, c[k]) for k in PROBES + ("resources", "envFrom") if c.get(k))
            refs = [e for e in c.get("env") or [] if (e.get("valueFrom") or {}).keys() & {"configMapKeyRef",
                                                                                          "secretKeyRef"}]
            if refs:
                kept["env"] = refs
            taken = [q for q in c.get("ports") or [] if q.get("hostPort") or spec.get("hostNetwork")]
            if taken:  # what the node must have free (checks/causes.py host_ports)
                kept["ports"] = taken
            mounts = [{"name": s(v.get("name")), "mountPath": SHM} for v in c.get("volumeMounts") or []
                      if v.get("mountPath") == SHM]
            if mounts:
                kept["volumeMounts"] = mounts
                shm.update(v["name"] for v in mounts)
            out.append(kept)
        if out:
            sp[key] = s.shared(out)
    if spec.get("imagePullSecrets"):  # every name the pod refers to (checks/references.py)
        sp["imagePullSecrets"] = s.shared([_pick(r, ("name",), s) for r in spec["imagePullSecrets"]])
    volumes = [v for v in spec.get("volumes") or [] if v.get("name") in shm or v.get("persistentVolumeClaim")]
    volumes += [r for r in map(_reference_volume, spec.get("volumes") or []) if r]
    if volumes:  # /dev/shm (shm-size) and the claims a pod waits for (checks/causes.py)
        sp["volumes"] = s.shared(volumes)
    st: dict = {"phase": s(status["phase"])} if "phase" in status else {}
    conditions = [_pick(c, ("type", "status", "reason", "message"), s) for c in status.get("conditions") or []
                  if c.get("type") in POD_CONDITIONS]
    if conditions:
        st["conditions"] = s.shared(conditions)
    for key in ("containerStatuses", "initContainerStatuses"):
        out = []
        for c in status.get(key) or []:
            kept = {"name": s(c.get("name")), "ready": c.get("ready"), "restartCount": c.get("restartCount", 0)}
            waiting = (c.get("state") or {}).get("waiting")
            if waiting is not None:
                kept["state"] = {"waiting": _pick(waiting, ("reason", "message"), s)}
            out.append(kept)
        if out:
            st[key] = s.shared(out)
    return {"metadata": m, "spec": sp, "status": st}


def _reference_volume(v: dict) -> Optional[dict]:
    """A configMap, secret or projected volume as the names it refers to (model/references.needs reads them)."""
    def ref(src: dict, key: str) -> dict:
        return {k: src[k] for k in (key, "optional") if k in src}

    if v.get("configMap"):
        return {"name": v.get("name"), "configMap": ref(v["configMap"], "name")}
    if v.get("secret"):
        return {"name": v.get("name"), "secret": ref(v["secret"], "secretName")}
    sources = [{k: ref(src[k], "name")} for src in (v.get("projected") or {}).get("sources") or []
               for k in ("configMap", "secret") if src.get(k)]
    return {"name": v.get("name"), "projected": {"sources": sources}} if sources else None


def compact_node(node: dict, s: Strings) -> dict:
    """What detection (GPU count) and the scheduling checks (Ready, cordoned) read of a node; a real
    node's image list alone is tens of kilobytes."""
    meta = node.get("metadata") or {}
    spec = node.get("spec") or {}
    status = node.get("status") or {}
    out = {"metadata": {"name": s(meta.get("name")), "labels": {s(k): s(v) for k, v in (meta.get("labels") or {}).items()}},
           "spec": {k: spec[k] for k in ("unschedulable", "taints") if k in spec},
           "status": {k: {s(r): s(q) for r, q in status[k].items()} for k in ("allocatable", "capacity")
                      if isinstance(status.get(k), dict)}}
    out["status"]["conditions"] = [_pick(c, ("type", "status", "reason", "message"), s)
                                   for c in status.get("conditions") or [] if c.get("type") == "Ready"]
    return out


def _name_only(obj: dict, s: Strings) -> dict:
    meta = obj.get("metadata") or {}
    return {"metadata": {"name": meta.get("name"), "namespace": s(meta.get("namespace"))}}


def compact_identity(obj: dict, s: Strings) -> dict:
    """An object as who it is and whose it is (name, uid, age, owners), without its spec: a DynamoWorkerMetadata's
    data is the runtime's whole registration, and the checks read only whose pod it names (checks/discovery.py)."""
    meta = obj.get("metadata") or {}
    kept = {k: meta[k] for k in ("name", "uid", "creationTimestamp") if meta.get(k)}
    kept["namespace"] = s(meta.get("namespace"))
    if meta.get("ownerReferences"):
        kept["ownerReferences"] = [_pick(r, ("kind", "name", "uid"), s) for r in meta["ownerReferences"]]
    return {"metadata": kept}


def compact_owned(obj: dict, s: Strings) -> dict:
    """A workload the controllers made for a DGD (LeaderWorkerSet, StatefulSet, PodClique, PodGang, ...)
    as the checks read it: metadata and status whole, of the spec only its scalars and the LWS group
    size. The pod templates and PodGang pod references are dropped (a benchmark LeaderWorkerSet is
    ~60 KB, mostly its two templates): the pods themselves are read, never their templates."""
    spec = obj.get("spec") or {}
    kept = {k: v for k, v in spec.items() if not isinstance(v, (dict, list))}
    size = (spec.get("leaderWorkerTemplate") or {}).get("size")  # checks/scheduling.py status-stale
    if size is not None:
        kept["leaderWorkerTemplate"] = {"size": size}
    if spec.get("rolloutStrategy"):  # checks/rollout.py max-unavailable-exceeded
        kept["rolloutStrategy"] = spec["rolloutStrategy"]
    out = {k: v for k, v in obj.items() if k != "spec"}
    out["spec"] = kept
    return out


def list_kind(cluster: Cluster, snap: Snapshot, what: str, group: str, version: str, plural: str,
              label_selector: Optional[str] = None, field_selector: Optional[str] = None, slim=None,
              namespaced: bool = True):
    """One LIST in the snapshot's scope (a cluster-scoped kind: all of it); forbidden or not served becomes a
    ``skipped`` entry and None (doctor's reads and tree's use it). Any other failure ends the command
    (``failed_read``): no check may reason from a list that was not read as if it were empty."""
    namespace = snap.namespace if namespaced else None
    try:
        each = (lambda x: slim(x, snap.strings)) if slim else None
        return cluster.list(path_for(group, version, plural, namespace), label_selector=label_selector,
                            field_selector=field_selector, each=each)
    except Unauthorized:
        raise
    except Forbidden as e:
        snap.skipped.append({"check": what, "reason": f"forbidden: {e.message}"})
        snap.denied.append({"verb": "list", "resource": f"{plural}.{group}" if group else plural,
                            "namespace": namespace, "reason": e.message, "cluster": not namespaced})
    except NotFound as e:
        snap.skipped.append({"check": what, "reason": f"not served: {e.message}"})
    except (ClusterUnreachable, ApiError) as e:  # the live API failed to answer: no answer without it
        raise failed_read(what, e) from e
    except DynamoError as e:  # a recording without that kind (RecordedCluster): it says so
        snap.skipped.append({"check": what, "reason": e.message})
    return None


def take(cluster: Cluster, namespace: Optional[str], *, dgd_name: Optional[str] = None,
         compact: bool = False) -> Snapshot:
    """One LIST per kind of ``cluster.kinds.SNAPSHOT`` whose group and version are served, in table
    order; none but the DGDs' when there is no DGD in scope. ``compact``: pods and the controllers'
    workloads as compact records (doctor: only its checks read them); else whole (``get``, whose table
    and watch read more of a pod)."""
    snap = Snapshot(facts=gather(cluster, nodes=not compact), namespace=namespace, taken_at=_taken_at(cluster))
    if compact:
        snap.facts.nodes = _try(snap.facts, "nodes", lambda: cluster.list(path_for("", "v1", "nodes"),
                                                                          each=lambda n: compact_node(n, snap.strings)))
    for what, why in snap.facts.unknown.items():
        snap.skipped.append({"check": what, "reason": why})
    groups = snap.facts.groups or {}
    dgd_selector = f"{DGD_LABEL}={dgd_name}" if dgd_name else DGD_LABEL
    selectors = {"all": (None, None), "dgd": (dgd_selector, None), "lws": (LWS_NAME, None),
                 "warnings": (None, "type=Warning"), "name": (None, f"metadata.name={dgd_name}" if dgd_name else None)}
    slims: Dict[Optional[str], Optional[Callable]] = {None: None, "pod": compact_pod, "owned": compact_owned,
                                                      "name": _name_only, "meta": compact_identity,
                                                      "webhooks": compact_webhooks}
    for kind in kinds.SNAPSHOT:
        if kind.when and kind.when not in groups:
            continue  # its controller is not installed
        if kind.need and not NEEDS[kind.need](snap):
            continue  # nothing read so far needs it
        if kind.group and kind.version not in groups.get(kind.group, []):
            if kind.group in groups:
                snap.skipped.append({"check": kinds.NAMES[kind], "reason": f"{kind.group}/{kind.version} is not served "
                                                                          f"(served: {', '.join(groups[kind.group])})"})
            elif kind.field == "dgds":
                snap.skipped.append({"check": kinds.NAMES[kind], "reason": "the nvidia.com API group is not served"})
            continue
        label_selector, field_selector = selectors[kind.scope]
        items = list_kind(cluster, snap, kinds.NAMES[kind], kind.group, kind.version, kind.plural,
                          label_selector=label_selector, field_selector=field_selector,
                          slim=slims[kind.compact] if compact or kind.compact in ALWAYS_COMPACT else None,
                          namespaced=kind.namespaced)
        setattr(snap, kind.field or "", [] if items is None and kind.required else items)
        if kind.field == "dgds" and not snap.dgds:
            break  # nothing in scope to diagnose: no other kind is read
    read_webhook_backends(cluster, snap)
    snap.requests = cluster.requests
    return snap


# -- what is read only when needed ------------------------------------------------------------------
# The admission plugin's words for a webhook that failed or refused (k8s.io/apiserver@v0.33.13
# pkg/admission/plugin/webhook/errors: 'failed calling webhook "NAME"', 'admission webhook "NAME" denied')
_WEBHOOK_NAMED = re.compile(r'(?:failed calling webhook|admission webhook) "([^"]+)"')


def refused_webhooks(events: Optional[List[dict]]) -> List[str]:
    """The webhooks the Warning events say failed or refused an object, in order."""
    return list(dict.fromkeys(n for e in events or [] for n in _WEBHOOK_NAMED.findall(e.get("message") or "")))


def _claims_mounted(snap: Snapshot) -> bool:
    return any((v.get("persistentVolumeClaim") or {}).get("claimName")
               for p in snap.pods or [] for v in (p.get("spec") or {}).get("volumes") or [])


# kinds.Kind.need -> whether the snapshot read so far needs that kind
NEEDS: Dict[str, Callable[[Snapshot], bool]] = {
    "claims": _claims_mounted,
    "webhooks": lambda snap: bool(refused_webhooks(snap.events)),
}


def compact_webhooks(obj: dict, s: Strings) -> dict:
    """A webhook configuration without its CA bundles (kilobytes each, never read): its name and, per
    webhook, the name, the endpoint and the failure policy."""
    hooks = []
    for w in obj.get("webhooks") or []:
        client = {k: v for k, v in (w.get("clientConfig") or {}).items() if k != "caBundle"}
        hooks.append({"name": w.get("name"), "clientConfig": client, "failurePolicy": w.get("failurePolicy", "Fail")})
    meta = obj.get("metadata") or {}
    return {"metadata": {"name": meta.get("name")}, "webhooks": hooks}


ALWAYS_COMPACT = ("name", "meta", "webhooks")  # kept compact for every command: nothing reads more of them


def webhook_configurations(snap: Snapshot) -> Optional[List[dict]]:
    """Both kinds of webhook configuration as read (each with its ``kind``), None when neither was read."""
    out: Optional[List[dict]] = None
    for field, kind in (("validatingwebhookconfigurations", "ValidatingWebhookConfiguration"),
                        ("mutatingwebhookconfigurations", "MutatingWebhookConfiguration")):
        items = getattr(snap, field)
        if items is not None:
            out = (out or []) + [dict(o, kind=kind) for o in items]
    return out


def read_webhook_backends(cluster: Cluster, snap: Snapshot) -> None:
    """For each refused-by webhook that calls a Service: the Service (GET by name) and its EndpointSlices
    (LIST by the ``kubernetes.io/service-name`` label, discovery.k8s.io/v1), in ``snap.webhook_backends``
    as {"service": bool, "endpoints": n, "ready": n}, or UNKNOWN when either may not be read."""
    configs = webhook_configurations(snap)
    if not configs:
        return
    named = set(refused_webhooks(snap.events))
    services = {((w["clientConfig"].get("service") or {}).get("namespace"), w["clientConfig"]["service"].get("name"))
                for c in configs for w in c.get("webhooks") or [] if w.get("name") in named
                and (w.get("clientConfig") or {}).get("service")}
    service, slices = kinds.by_kind("Service"), kinds.by_kind("EndpointSlice")
    for ns, name in sorted(services, key=str):
        try:
            try:
                cluster.get(service.path(ns, name))
            except NotFound:
                snap.webhook_backends[(ns, name)] = {"service": False, "endpoints": 0, "ready": 0}
                continue
            items = cluster.list(slices.path(ns), label_selector=f"kubernetes.io/service-name={name}")
        except Unauthorized:
            raise
        except (ClusterUnreachable, ApiError) as e:
            raise failed_read(f"webhook Service {ns}/{name}", e) from e
        except Forbidden as e:
            snap.skipped.append({"check": f"webhook Service {ns}/{name}", "reason": f"forbidden: {e.message}"})
            snap.denied.append({"verb": "get", "resource": f"service {name} and its endpointslices",
                                "namespace": ns, "reason": e.message})
            snap.webhook_backends[(ns, name)] = UNKNOWN
            continue
        except DynamoError as e:
            snap.skipped.append({"check": f"webhook Service {ns}/{name}", "reason": e.message})
            snap.webhook_backends[(ns, name)] = UNKNOWN
            continue
        endpoints = [ep for sl in items for ep in sl.get("endpoints") or []]
        # an endpoint whose ready condition is unset counts as ready (discovery.k8s.io/v1 EndpointConditions)
        ready = [ep for ep in endpoints if (ep.get("conditions") or {}).get("ready") is not False]
        snap.webhook_backends[(ns, name)] = {"service": True, "endpoints": len(endpoints), "ready": len(ready)}


def _taken_at(cluster: Cluster) -> str:
    """A recording answers for its own time (``RecordedCluster.manifest``); a live cluster for now."""
    recorded = (getattr(cluster, "manifest", None) or {}).get("createdAt")
    if recorded:
        return recorded
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_secret_keys(cluster: Cluster, snap: Snapshot, namespace: str, name: str, check: str = "ssh-secret-missing"):
    """Key names of one secret (never its values): a sorted list, None when absent, UNKNOWN when
    forbidden (``check`` names what is skipped then). Cached per (namespace, name)."""
    key = (namespace, name)
    if key not in snap.secrets:
        try:
            secret = cluster.get(path_for("", "v1", "secrets", namespace, name))
            snap.secrets[key] = sorted((secret.get("data") or {}).keys())
            del secret  # the values go at once
        except NotFound:
            snap.secrets[key] = None
        except Forbidden as e:
            snap.skipped.append({"check": check, "reason": f"forbidden: {e.message}"})
            snap.denied.append({"verb": "get", "resource": f"secret {name}", "namespace": namespace,
                                "reason": e.message})
            snap.secrets[key] = UNKNOWN
        snap.requests = cluster.requests
    return snap.secrets[key]
