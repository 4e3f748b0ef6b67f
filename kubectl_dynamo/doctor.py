"""``doctor``: the expected shape of every DGD (from the simulation) against the live objects.

Pure: takes a ``Snapshot`` (raw lists) and returns the documented JSON contract. Pods are tied
to their DGD, component, group and rank by the labels the operator and the orchestrators put on
them (as the operator, Grove and LWS set them):

- ``nvidia.com/dynamo-graph-deployment-name`` / ``nvidia.com/dynamo-component`` (operator);
- Grove: clique ``grove.io/podclique`` ending in ``-ldr``/``-wkr``, group
  ``grove.io/podcliquescalinggroup-replica-index``, rank = leader 0, worker
  ``grove.io/podclique-pod-index`` + 1 (the operator's ``$((GROVE_PCLQ_POD_INDEX + 1))``);
- LWS: group ``leaderworkerset.sigs.k8s.io/group-index``, rank ``…/worker-index`` (leader 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from .checks import catalogue, registry
from .checks import cluster as cluster_checks
from .checks import dgd as _dgd_checks  # noqa: F401  (registers the per-DGD checks)
from .detection import detect, operator_context
from .operator.api import LABEL_COMPONENT as COMPONENT_LABEL
from .operator.api import LABEL_DGD as DGD_LABEL
from .operator.render import explain_dgd

GROVE_CLIQUE = "grove.io/podclique"
GROVE_GROUP = "grove.io/podcliquescalinggroup-replica-index"
GROVE_POD_INDEX = "grove.io/podclique-pod-index"
LWS_GROUP = "leaderworkerset.sigs.k8s.io/group-index"
LWS_WORKER = "leaderworkerset.sigs.k8s.io/worker-index"


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

    def obj(self) -> dict:
        return {"kind": "Pod", "namespace": self.namespace, "name": self.name}


@dataclass
class Group:
    component: str
    index: int
    pods: List[PodInfo] = field(default_factory=list)

    def role(self, name: str) -> List[PodInfo]:
        return [p for p in self.pods if p.role == name]


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
    explained: dict
    components: List[ComponentView]
    snapshot: object  # cluster.snapshot.Snapshot
    secret_name: str

    @property
    def name(self) -> str:
        return self.raw["metadata"]["name"]

    @property
    def namespace(self) -> str:
        return self.raw["metadata"].get("namespace") or "default"

    def obj(self) -> dict:
        return {"kind": "DynamoGraphDeployment", "namespace": self.namespace, "name": self.name}


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
    by_dgd: Dict[tuple, List[PodInfo]] = {}
    for pod in snapshot.pods:
        meta = pod.get("metadata") or {}
        key = (meta.get("namespace"), (meta.get("labels") or {}).get(DGD_LABEL))
        by_dgd.setdefault(key, []).append(classify(pod))
    views = []
    for dgd in sorted(snapshot.dgds, key=lambda d: (d["metadata"].get("namespace", ""), d["metadata"]["name"])):
        explained = explain_dgd(dgd, operator_version=ctx.operator_version, gates=ctx.gates,
                                kai_queues=ctx.kai_queues, ssh_secret_name=ctx.ssh_secret_name)
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
        views.append(DgdView(dgd, explained, comps, snapshot, ctx.ssh_secret_name))
    return views


def needed_secrets(views: List[DgdView]) -> set:
    return {(v.namespace, v.secret_name) for v in views
            if any(c.expected["backend"] == "trtllm" and c.expected["multinode"] for c in v.components)}


def diagnose(snapshot, views: List[DgdView], *, only=None, exec_results=None) -> dict:
    """Run the checks; ``exec_results`` maps (check, pod) to command output when --exec ran."""
    report = detect(snapshot.facts)
    cluster_view = cluster_checks.ClusterView(snapshot.facts, report)
    findings = [_cluster_finding(f) for f in registry.run("cluster", cluster_view, only=only)
                if f.code != "permission-denied"]  # doctor lists those as skipped
    for view in views:
        findings += registry.run("dgd", view, only=only)
    skipped = list(snapshot.skipped)
    if exec_results is None:
        for code in ("sshd-not-listening", "ray-incomplete"):
            if not only or code in only:
                skipped.append({"check": code, "reason": "needs --exec (runs read-only commands in pods)"})
    else:
        findings += exec_results.get("findings", [])
        skipped += exec_results.get("skipped", [])
    findings.sort(key=lambda f: (registry.RANK[f.severity], f.code))
    return {
        "summary": {"errors": sum(f.severity == "error" for f in findings),
                    "warnings": sum(f.severity == "warning" for f in findings),
                    "infos": sum(f.severity == "info" for f in findings)},
        "deployments": [summarize(v) for v in views],
        "findings": [f.as_json() for f in findings],
        "skipped": skipped,
    }


def _cluster_finding(f):
    if f.object is None:
        return f.at({"kind": "Cluster", "namespace": None, "name": None})
    return f


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


# -- the command -------------------------------------------------------------------------------
def run_doctor(cluster, *, all_namespaces: bool, name: Optional[str] = None, only: Optional[List[str]] = None,
               exec_checks: bool = False, exec_timeout: float = 20.0, min_severity: str = "error"):
    """Read the cluster (one LIST per kind), diagnose it, and return doctor's Result.

    Exit 1 when a finding is at or above ``min_severity``; the table shows only those."""
    import functools

    from .checks.finding import at_least
    from .cluster.snapshot import read_secret_keys, take
    from .errors import ExitCode, NotFound, UsageError
    from .result import Result
    from .tables import format_doctor

    namespace = None if all_namespaces else cluster.namespace
    if name and namespace is None:
        raise UsageError("a DGD name needs a namespace: drop -A or use -n")
    if only:
        unknown = sorted(set(only) - catalogue.codes())
        if unknown:
            raise UsageError(f"unknown check code(s): {', '.join(unknown)} (see docs/checks.md)")
    snap = take(cluster, namespace, dgd_name=name)
    if name and not snap.dgds and not any(s["check"] == "dynamographdeployments" for s in snap.skipped):
        raise NotFound(f'dynamographdeployments.nvidia.com "{name}" not found in namespace {namespace}')
    views = build_views(snap)
    for ns, secret in sorted(needed_secrets(views)):
        read_secret_keys(cluster, snap, ns, secret)
    exec_results = None
    if exec_checks:
        from .cluster.execute import run_exec_checks

        exec_results = run_exec_checks(cluster, views, timeout=exec_timeout, only=only)
    data = diagnose(snap, views, only=only, exec_results=exec_results)
    failing = any(at_least(f["severity"], min_severity) for f in data["findings"])
    return Result(data, functools.partial(format_doctor, min_severity=min_severity),
                  exit_code=ExitCode.FINDINGS if failing else ExitCode.OK,
                  names=[f"dynamographdeployment.nvidia.com/{v.name}" for v in views])
