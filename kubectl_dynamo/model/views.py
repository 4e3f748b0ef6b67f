"""``doctor``: the expected shape of every DGD (from the simulation) against the live objects.

Pure: takes a ``Snapshot`` (raw lists) and returns the documented JSON contract. Pods are tied
to their DGD, component, group and rank by the labels the operator and the orchestrators put on
them (as the operator, Grove and LWS set them):

- ``nvidia.com/dynamo-graph-deployment-name`` / ``nvidia.com/dynamo-component`` (operator);
- Grove: clique ``grove.io/podclique`` ending in ``-ldr``/``-wkr``, group
  ``grove.io/podcliquescalinggroup-replica-index``, rank = leader 0, worker
  ``grove.io/podclique-pod-index`` + 1 (the operator's ``$((GROVE_PCLQ_POD_INDEX + 1))``);
- LWS: group ``leaderworkerset.sigs.k8s.io/group-index``, rank ``…/worker-index`` (leader 0).

Each DGD's *lineage* is every listed object whose ownerReferences lead to it (DynamoComponentDeployment,
LeaderWorkerSet, StatefulSets, PodCliqueSet, PodCliqueScalingGroups, PodCliques, PodGangs, pods,
PodGroups); its Warning events are the events of those objects.

The checks read these views; linking each finding to its root cause is checks/diagnosis.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

from kubectl_dynamo.cluster import kinds
from kubectl_dynamo.model import evidence
from kubectl_dynamo.model.evidence import EventKey
from kubectl_dynamo.model.labels import (
    COMPONENT_LABEL,
    DEFAULT_SCHEDULER,
    DGD_LABEL,
    GROVE_CLIQUE,
    GROVE_GROUP,
    GROVE_POD_INDEX,
    KAI_GROUP_ANNOTATION,
    LWS_GROUP,
    LWS_WORKER,
    VOLCANO_GROUP_ANNOTATION,
)
from kubectl_dynamo.model.platform import operator_context
from kubectl_dynamo.operator.render import explain_dgd
from kubectl_dynamo.validation.admission import unsimulated, validation

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import ExplainedDgd

Key = Tuple[str, Optional[str], str]  # (kind, namespace, name)


@dataclass
class PodInfo:
    raw: dict
    name: str
    namespace: str
    role: str  # leader | worker | main
    group: int
    rank: Optional[int]

    @property
    def spec(self) -> dict:
        return self.raw.get("spec") or {}

    @property
    def status(self) -> dict:
        return self.raw.get("status") or {}

    @property
    def main(self) -> dict:
        cs = self.spec.get("containers") or []
        return next((c for c in cs if c.get("name") == "main"), cs[0] if cs else {})

    def condition(self, kind: str) -> Optional[dict]:
        return next((c for c in self.status.get("conditions") or [] if c.get("type") == kind), None)

    @property
    def ready(self) -> bool:
        c = self.condition("Ready")
        return bool(c and c.get("status") == "True")

    @property
    def scheduled(self) -> bool:
        return bool(self.spec.get("nodeName"))

    @property
    def gates(self) -> List[str]:
        return [g.get("name") for g in self.spec.get("schedulingGates") or []]

    # What the scheduling checks read of a pod (the fields a compact per-pod record must keep): labels,
    # annotations (PodGroup), creationTimestamp, spec.nodeName / schedulerName / schedulingGates /
    # subdomain, status.phase and conditions.
    @property
    def labels(self) -> dict:
        return (self.raw.get("metadata") or {}).get("labels") or {}

    @property
    def phase(self) -> Optional[str]:
        return self.status.get("phase")

    @property
    def node(self) -> Optional[str]:
        return self.spec.get("nodeName")

    @property
    def scheduler(self) -> str:
        return self.spec.get("schedulerName") or DEFAULT_SCHEDULER

    @property
    def created(self) -> Optional[str]:
        return (self.raw.get("metadata") or {}).get("creationTimestamp")

    @property
    def pod_group(self) -> Optional[Tuple[str, str]]:
        """("volcano" | "kai", PodGroup name) from the pod's annotations, or None."""
        ann = (self.raw.get("metadata") or {}).get("annotations") or {}
        if ann.get(VOLCANO_GROUP_ANNOTATION):
            return "volcano", ann[VOLCANO_GROUP_ANNOTATION]
        if ann.get(KAI_GROUP_ANNOTATION):
            return "kai", ann[KAI_GROUP_ANNOTATION]
        return None

    @property
    def waiting(self) -> bool:
        """Not bound to a node, not held by a scheduling gate, not finished."""
        return not self.scheduled and not self.gates and self.phase not in ("Succeeded", "Failed")

    def scheduler_words(self) -> Optional[str]:
        """What the scheduler wrote on the pod: the PodScheduled condition's message (or reason).
        Volcano's reason ``Schedulable`` ("can possibly be assigned to ...") says the pod alone fits:
        not a reason it waits."""
        cond = self.condition("PodScheduled") or {}
        if cond.get("status") == "True" or cond.get("reason") == "Schedulable":
            return None
        return cond.get("message") or cond.get("reason") or None

    def obj(self) -> dict:
        return {"kind": "Pod", "namespace": self.namespace, "name": self.name}


@dataclass
class Group:
    component: str
    index: int
    pods: List[PodInfo] = field(default_factory=list)

    def role(self, name: str) -> List[PodInfo]:
        return [p for p in self.pods if p.role == name]

    @property
    def placed(self) -> List[PodInfo]:
        return [p for p in self.pods if p.scheduled]

    @property
    def waiting(self) -> List[PodInfo]:
        return [p for p in self.pods if p.waiting]


@dataclass
class ComponentView:
    expected: dict  # a component of the explain contract
    groups: Dict[int, Group] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.expected["name"]

    def expected_role(self, role: str) -> Optional[dict]:
        return next((r for r in self.expected["roles"] if r["name"] == role), None)


@dataclass
class DgdView:
    """One DGD with everything its checks need."""

    raw: dict
    explained: ExplainedDgd
    components: List[ComponentView]
    snapshot: object  # cluster.snapshot.Snapshot
    secret_name: str
    index: Optional[Index] = None  # the cluster-wide lookups (shared by every DGD)
    lineage: Set[Key] = field(default_factory=set)  # the objects owned, transitively, by this DGD

    @property
    def name(self) -> str:
        return self.raw["metadata"]["name"]

    def where(self, component: Optional[str] = None, group: Optional[int] = None) -> tuple:
        return (self.namespace, self.name, component, group)

    @property
    def namespace(self) -> str:
        return self.raw["metadata"].get("namespace") or "default"

    def obj(self) -> dict:
        return {"kind": "DynamoGraphDeployment", "namespace": self.namespace, "name": self.name}


def _key(obj: dict, kind: Optional[str] = None) -> Key:
    meta = obj.get("metadata") or {}
    return (kind or obj.get("kind") or "", meta.get("namespace"), meta.get("name", ""))


@dataclass
class Index:
    """Cluster-wide lookups built once per run: nodes, PodGroups, events, Services and the owner tree."""

    nodes: Optional[Dict[str, dict]]  # None when nodes could not be read
    volcano_podgroups: Optional[Dict[tuple, dict]]
    kai_podgroups: Optional[Dict[tuple, dict]]
    events: Dict[EventKey, List[dict]]  # only those about the live object of each name (model/evidence.py)
    objects: Dict[Key, dict]
    children: Dict[Key, List[Key]]
    deployments: List[dict]
    services: Optional[Dict[tuple, dict]] = None  # (namespace, name) -> Service; None when not read
    # snapshot field -> (namespace, DGD label) -> its objects, grouped on first use (``of_dgd``)
    by_dgd: Dict[str, Dict[Tuple[Optional[str], Optional[str]], List[dict]]] = field(default_factory=dict, repr=False)

    def of_dgd(self, snapshot, attr: str, namespace: str, name: str) -> List[dict]:
        """The objects of the snapshot's list ``attr`` (componentdeployments, leaderworkersets, ...) in
        ``namespace`` that carry DGD ``name``'s label, in list order. The list is grouped by (namespace, DGD
        label) once per run, as build_views groups the pods, not filtered whole once per DGD."""
        table = self.by_dgd.get(attr)
        if table is None:
            table = {}
            for o in getattr(snapshot, attr, None) or []:
                meta = o.get("metadata") or {}
                table.setdefault((meta.get("namespace"), (meta.get("labels") or {}).get(DGD_LABEL)), []).append(o)
            self.by_dgd[attr] = table
        return list(table.get((namespace, name), []))

    def podgroup(self, pod: PodInfo) -> Optional[dict]:
        ref = pod.pod_group
        table = None if ref is None else (self.volcano_podgroups if ref[0] == "volcano" else self.kai_podgroups)
        return (table or {}).get((pod.namespace, ref[1])) if ref else None

    def lineage(self, root: Key) -> Set[Key]:
        seen, todo = {root}, [root]
        while todo:
            for child in self.children.get(todo.pop(), []):
                if child not in seen:
                    seen.add(child)
                    todo.append(child)
        return seen


# Kinds whose objects may own a DGD's workloads, as the snapshot holds them (cluster/kinds.py ``owner``).
OWNED_KINDS: Tuple[Tuple[str, str], ...] = tuple((k.kind, k.field or "") for k in kinds.OWNERS)


def build_index(snapshot) -> Index:
    objects: Dict[Key, dict] = {}
    for kind, attr in OWNED_KINDS:
        for o in getattr(snapshot, attr, None) or []:
            objects[_key(o, kind)] = o
    for pod in snapshot.pods:
        objects[_key(pod, "Pod")] = pod
    vpg = {(g["metadata"].get("namespace"), g["metadata"]["name"]): g for g in snapshot.volcano_podgroups or []}
    kpg = {(g["metadata"].get("namespace"), g["metadata"]["name"]): g for g in snapshot.kai_podgroups or []}
    for g in snapshot.volcano_podgroups or []:
        objects[_key(g, "PodGroup")] = g
    for g in snapshot.kai_podgroups or []:
        objects[_key(g, "PodGroup")] = g
    children: Dict[Key, List[Key]] = {}
    for key, o in objects.items():
        for ref in (o.get("metadata") or {}).get("ownerReferences") or []:
            children.setdefault((ref.get("kind"), key[1], ref.get("name")), []).append(key)
    live: Dict[tuple, dict] = {**objects, **{_key(d, "DynamoGraphDeployment"): d for d in snapshot.dgds}}
    events = evidence.live_events(snapshot.events, live.get)
    nodes = snapshot.facts.nodes
    return Index(nodes={n["metadata"]["name"]: n for n in nodes} if nodes is not None else None,
                 volcano_podgroups=vpg if snapshot.volcano_podgroups is not None else None,
                 kai_podgroups=kpg if snapshot.kai_podgroups is not None else None,
                 events=events, objects=objects, children=children,
                 deployments=snapshot.facts.deployments or [],
                 services=None if snapshot.services is None else
                 {(x["metadata"].get("namespace"), x["metadata"]["name"]): x for x in snapshot.services})


def classify(pod: dict) -> PodInfo:
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    role, group, rank = "main", 0, None
    if LWS_WORKER in labels:
        worker = _int(labels.get(LWS_WORKER))
        role = "leader" if worker == 0 else "worker"
        group, rank = _int(labels.get(LWS_GROUP)) or 0, worker
    elif GROVE_CLIQUE in labels:
        clique = labels[GROVE_CLIQUE]
        group = _int(labels.get(GROVE_GROUP)) or 0
        index = _int(labels.get(GROVE_POD_INDEX))
        if clique.endswith("-ldr"):
            role, rank = "leader", 0
        elif clique.endswith("-wkr"):
            role, rank = "worker", (index + 1 if index is not None else None)
    return PodInfo(pod, meta.get("name", ""), meta.get("namespace", ""), role, group, rank)


def _int(value) -> Optional[int]:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def build_views(snapshot) -> List[DgdView]:
    ctx = operator_context(snapshot.facts)
    index = build_index(snapshot)
    by_dgd: Dict[tuple, List[PodInfo]] = {}
    for pod in snapshot.pods:
        meta = pod.get("metadata") or {}
        key = (meta.get("namespace"), (meta.get("labels") or {}).get(DGD_LABEL))
        by_dgd.setdefault(key, []).append(classify(pod))
    views = []
    for dgd in sorted(snapshot.dgds, key=lambda d: (d["metadata"].get("namespace", ""), d["metadata"]["name"])):
        plain, found, simulate = validation(dgd, full=False)  # the type gate: a DGD the simulation cannot read is not simulated
        explained = explain_dgd(plain, operator_version=ctx.operator_version, gates=ctx.gates, kai_queues=ctx.kai_queues,
                                ssh_secret_name=ctx.ssh_secret_name) if simulate else unsimulated(plain, found, None)
        pods = by_dgd.get((dgd["metadata"].get("namespace"), dgd["metadata"]["name"]), [])
        comps = []
        for c in explained["components"]:
            view = ComponentView(c)
            for p in pods:
                labels = (p.raw.get("metadata") or {}).get("labels") or {}
                if (labels.get(COMPONENT_LABEL) or "").lower() != c["name"].lower():
                    continue
                view.groups.setdefault(p.group, Group(c["name"], p.group)).pods.append(p)
            comps.append(view)
        root = _key(dgd, "DynamoGraphDeployment")
        lineage = index.lineage(root)
        for p in pods:  # pods and their PodGroups belong to the DGD by label, whatever owns them
            lineage.add(_key(p.raw, "Pod"))
            if p.pod_group:
                lineage.add(("PodGroup", p.namespace, p.pod_group[1]))
        views.append(DgdView(dgd, explained, comps, snapshot, ctx.ssh_secret_name, index, lineage))
    return views


def needed_secrets(views: List[DgdView]) -> set:
    """The Secrets doctor reads by name (keys only): the MPI SSH secret of a TRT-LLM multinode DGD, and every
    Secret the DGDs' pods refer to (volumes, envFrom, valueFrom, imagePullSecrets: checks/references.py)."""
    from kubectl_dynamo.model.references import needs

    out = {(v.namespace, v.secret_name) for v in views
           if any(c.expected["backend"] == "trtllm" and c.expected["multinode"] for c in v.components)}
    for v in views:
        for c in v.components:
            for g in c.groups.values():
                for p in g.pods:
                    out.update((p.namespace, name) for kind, name, optional in needs(p.raw)
                               if kind == "Secret" and not optional)
    return out


def seconds_between(earlier: Optional[str], later: Optional[str]) -> Optional[float]:
    """Seconds from one RFC 3339 time to another; None when either is missing or unreadable."""
    a, b = evidence.parse_time(earlier), evidence.parse_time(later)
    if a is None or b is None:
        return None
    return (b - a).total_seconds()


def summarize(view: DgdView) -> dict:
    comps = []
    for c in view.components:
        groups = []
        for index in sorted(c.groups):
            g = c.groups[index]
            ranks = sorted((p.rank for p in g.pods), key=lambda r: (r is None, r if r is not None else 0))
            groups.append({"index": index, "podsReady": sum(p.ready for p in g.pods), "ranks": ranks})
        comps.append({"name": c.name, "nodeCount": c.expected["nodeCount"], "mode": c.expected["mode"],
                      "groups": groups})
    return {"name": view.name, "namespace": view.namespace, "components": comps}


def scope_namespace(cluster, all_namespaces: bool, name: Optional[str]) -> Optional[str]:
    """The namespace a command reads (None = all); a DGD name needs one."""
    from kubectl_dynamo.errors import UsageError

    namespace = None if all_namespaces else cluster.namespace
    if name and namespace is None:
        raise UsageError("a DGD name needs a namespace: drop -A or use -n")
    return namespace


def read_views(cluster, namespace: Optional[str], name: Optional[str] = None, *, compact: bool = False):
    """(snapshot, views) of a scope: one LIST per kind, the DGDs tied to their pods, groups and
    ranks, and the key names of the MPI secrets they need. ``compact`` keeps only what the checks
    read (doctor); NotFound when the named DGD does not exist."""
    from kubectl_dynamo.cluster.live import dgd_not_found
    from kubectl_dynamo.model.snapshot import read_secret_keys, take

    if compact:
        import gc

        # Reading makes millions of small dicts and lists that hold no reference cycles: the cyclic
        # collector would only walk the growing snapshot again and again. Paused while reading; the
        # snapshot, alive until the end, is then frozen out of later collections.
        gc.disable()
        try:
            snap = take(cluster, namespace, dgd_name=name, compact=True)
        finally:
            gc.enable()
        gc.freeze()
    else:
        snap = take(cluster, namespace, dgd_name=name)
    if name and not snap.dgds and not any(s["check"] == kinds.NAMES[kinds.DGD] for s in snap.skipped):
        raise dgd_not_found(name, namespace)
    views = build_views(snap)
    for ns, secret in sorted(needed_secrets(views)):
        read_secret_keys(cluster, snap, ns, secret)
    read_dgd_fields(cluster, snap)
    return snap, views


def read_dgd_fields(cluster, snap) -> None:
    """One GET of the DGD CRD when the operator writes fields a CRD of an older chart lacks (``roles`` since
    operator 1.6.0, operator/api.ROLE_TEMPLATES_SINCE; Helm never upgrades a chart's CRDs): the field names of
    ``spec.components[]`` it serves, in ``snap.facts.dgd_component_fields``."""
    from kubectl_dynamo.errors import ClusterUnreachable, DynamoError, Unauthorized
    from kubectl_dynamo.model.platform import find_dynamo_operator, operator_version
    from kubectl_dynamo.operator import api, versions

    op = find_dynamo_operator(snap.facts.deployments)
    version = operator_version(op) if op is not None else None
    if not version or not versions.at_least(version, api.ROLE_TEMPLATES_SINCE):
        return
    try:
        crd = cluster.get(kinds.by_kind("CustomResourceDefinition").path(name="dynamographdeployments.nvidia.com"))
    except (ClusterUnreachable, Unauthorized):
        raise
    except DynamoError as e:
        snap.skipped.append({"check": "crd-behind-operator", "reason": e.message})
        return
    served: dict = next((v for v in (crd.get("spec") or {}).get("versions") or [] if v.get("name") == kinds.DGD.version),
                        {})
    spec = (((served.get("schema") or {}).get("openAPIV3Schema") or {}).get("properties") or {}).get("spec") or {}
    item = (((spec.get("properties") or {}).get("components") or {}).get("items") or {}).get("properties")
    snap.facts.dgd_component_fields = sorted(item) if isinstance(item, dict) else None

