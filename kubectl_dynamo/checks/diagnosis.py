"""Run the checks on a cluster and its DGDs, and put root causes first.

Root causes first (``link_causes``): a finding that follows from another one on the same group
(``CAUSES``) carries ``cause`` = that finding's code and object, and the table shows it under its cause.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from kubectl_dynamo.checks import cluster as cluster_checks
from kubectl_dynamo.checks import dgd as _dgd_checks  # noqa: F401  (registers the per-DGD checks)
from kubectl_dynamo.checks import discovery as _discovery_checks  # noqa: F401  (registers the discovery checks)
from kubectl_dynamo.checks import references as _reference_checks  # noqa: F401  (registers reference-missing)
from kubectl_dynamo.checks import registry
from kubectl_dynamo.checks import rollout as _rollout_checks  # noqa: F401  (registers the rollout checks)
from kubectl_dynamo.checks import scheduling as _scheduling_checks  # noqa: F401  (registers the scheduling checks)
from kubectl_dynamo.findings.finding import Finding, identity, worst_first
from kubectl_dynamo.model.platform import detect
from kubectl_dynamo.model.views import DgdView, summarize

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import DgdRef, DoctorData


def diagnose(snapshot, views: List[DgdView], *, only=None, exec_results=None, ignore=()) -> DoctorData:
    """Run the checks; ``exec_results`` maps (check, pod) to command output when --exec ran.
    ``ignore``: rules (``inputs.ignore.Rule``) whose findings are left out and listed as skipped."""
    report = detect(snapshot.facts)
    cluster_view = cluster_checks.ClusterView(snapshot.facts, report)
    findings = [_cluster_finding(f) for f in registry.run("cluster", cluster_view, only=only)]
    if not only or "permission-denied" in only:
        findings += denied(snapshot)
    skipped = list(snapshot.skipped)
    blind = sorted({d["resource"] for d in snapshot.denied} & set(BLIND_WITHOUT))
    if blind:  # every per-DGD check reasons about the pods: without them each would be a false alarm
        skipped.append({"check": "per-DGD checks", "reason": f"{', '.join(blind)} could not be listed"})
    else:
        for view in views:
            findings += registry.run("dgd", view, only=only)
    if exec_results is None:
        for code in ("sshd-not-listening", "ray-incomplete"):
            if not only or code in only:
                skipped.append({"check": code, "reason": "needs --exec (runs read-only commands in pods)"})
    else:
        findings += exec_results.get("findings", [])
        skipped += exec_results.get("skipped", [])
    findings, ignored = _split(findings, ignore)
    seen = set()
    for f, rule in ignored:  # one line per (code, object, rule): a finding told twice is skipped once
        key = (f.code, _objkey(f.object), rule.source)
        if key not in seen:
            seen.add(key)
            skipped.append({"check": f.code, "reason": f"skipped by {rule.source}", "object": f.object})
    findings = name_symptoms(link_causes(findings))
    return {
        "summary": {"errors": sum(f.severity == "error" for f in findings),
                    "warnings": sum(f.severity == "warning" for f in findings),
                    "infos": sum(f.severity == "info" for f in findings)},
        "deployments": [summarize(v) for v in views],
        "findings": [{**f.as_json(), "cause": f.cause, "dgd": _dgd(f), "id": i} for f, i in zip(findings, _ids(findings))],
        "skipped": skipped,
    }


# Without these doctor cannot look at a DGD at all: a refusal is an error, never "nothing in scope".
BLIND_WITHOUT = ("dynamographdeployments.nvidia.com", "pods")


def denied(snapshot) -> List[Finding]:
    """One permission-denied finding per read the server refused, naming the verb, the resource and the
    scope (the rest of the report goes on without it; the checks that need it stay silent)."""
    out = []
    for d in snapshot.denied:
        ns = d["namespace"]
        scope = "at the cluster scope" if d.get("cluster") else f"in namespace {ns}" if ns else "in all namespaces"
        blind = d["resource"] in BLIND_WITHOUT
        hint = ("grant it (docs/rbac/doctor-readonly.yaml)" + ("" if ns or d.get("cluster") else ", or run doctor with "
                "-n NAMESPACE for a namespace you may read") + (": without it doctor cannot see any DGD in this scope" if blind else
                                             f": the checks that read {d['resource']} are skipped"))
        out.append(Finding("permission-denied", "error" if blind else "warning",
                           f"cannot {d['verb']} {d['resource']} {scope}: {d['reason']}", hint,
                           object={"kind": "Namespace", "namespace": None, "name": ns} if ns else
                           {"kind": "Cluster", "namespace": None, "name": None}))
    return out


# consequence -> the codes that explain it, most specific first. A consequence is tied to the first
# of its causes found on the same group (or, for a cause about a whole DGD or component, on the same
# DGD); a check may also set ``cause`` itself (e.g. gang-not-enforced -> orchestrator-too-old).
CAUSES: Dict[str, Tuple[str, ...]] = {
    "group-incomplete": ("controller-create-failed", "controller-not-reconciling", "gang-held"),
    "group-pending": ("scheduler-not-running", "gang-held", "kai-queue-missing"),
    "gang-held": ("kai-queue-missing",),
    "gang-partial": ("gang-not-enforced",),
    "insufficient-gpus": ("gang-held", "group-pending", "gang-not-enforced"),
    "leader-not-ready": ("pod-on-unavailable-node", "group-pending"),
    "failed-mount": ("ssh-secret-missing", "wait-leader-configmap-missing", "reference-missing"),
    "leader-dns-missing": ("controller-not-reconciling",),
    "scheduler-not-running": ("gang-held", "kai-queue-missing"),  # a scheduler ignores pods of a missing queue
}


def _covers(cause: Finding, f: Finding) -> bool:
    """``cause`` is about the same DGD as ``f`` and about no other component or group."""
    if cause.where is None or f.where is None or cause.where[:2] != f.where[:2]:
        return False
    return all(c is None or c == x for c, x in zip(cause.where[2:], f.where[2:]))


def link_causes(findings: List[Finding]) -> List[Finding]:
    """Set each consequence's ``cause`` and order the list: every root (worst first), each followed by
    the findings it causes. A cause a check named that was not found is dropped (the root stands alone)."""
    present = {(f.code, _objkey(f.object)) for f in findings}
    # Candidate causes by (code, DGD): a cause covers only findings of its own DGD (_covers), so each
    # consequence looks at a few findings, not all (thousands on a large cluster).
    by_dgd: Dict[tuple, List[Finding]] = {}
    for c in findings:
        if c.where is not None:
            by_dgd.setdefault((c.code, tuple(c.where[:2])), []).append(c)
    linked = []
    for f in findings:
        if f.cause is not None and (f.cause["code"], _objkey(f.cause["object"])) not in present:
            f = replace(f, cause=None)
        if f.cause is None and f.where is not None:
            for code in CAUSES.get(f.code, ()):
                root = next((c for c in by_dgd.get((code, tuple(f.where[:2])), ())
                             if c is not f and _covers(c, f)), None)
                if root is not None:
                    f = f.caused_by(root)
                    break
        linked.append(f)
    order = sorted(linked, key=worst_first)
    children: Dict[tuple, List[Finding]] = {}
    for f in order:
        if f.cause is not None:
            children.setdefault((f.cause["code"], _objkey(f.cause["object"])), []).append(f)
    out: List[Finding] = []

    def emit(f: Finding) -> None:
        out.append(f)
        for child in children.pop((f.code, _objkey(f.object)), []):  # pop: each subtree once
            emit(child)

    for f in order:
        if f.cause is None:
            emit(f)
    return out + [f for rest in children.values() for f in rest]  # only a cycle of causes leaves any


def name_symptoms(findings: List[Finding]) -> List[Finding]:
    """A cluster finding that causes DGD findings names the DGDs it breaks (e.g. KAI too old for the
    gangs of v1beta1 DGDs): its message says where to look, the table shows those findings under it."""
    caused: Dict[tuple, List[Finding]] = {}
    for c in findings:
        if c.cause and c.where:
            caused.setdefault((c.cause["code"], _objkey(c.cause["object"])), []).append(c)
    out = []
    for f in findings:
        if f.where is None and f.cause is None:
            hit = caused.get((f.code, _objkey(f.object)), [])
            worst = [c for c in hit if c.severity == "error"] or hit
            dgds = sorted({f"{c.where[0]}/{c.where[1]}" for c in worst if c.where})
            if dgds:
                f = replace(f, message=f"{f.message}; it breaks {', '.join(sorted({c.code for c in worst}))} of DGD "
                                       f"{', '.join(dgds)}")
        out.append(f)
    return out


def _split(findings: List[Finding], rules) -> Tuple[List[Finding], list]:
    """(the findings kept, [(finding, the rule that skips it)]). A rule with a target skips the
    findings about that object (namespace/name) or about anything of that DGD."""
    if not rules:
        return findings, []
    kept, ignored = [], []
    for f in findings:
        obj = f.object or {}
        about = {f"{obj.get('namespace')}/{obj.get('name')}"} | ({f"{f.where[0]}/{f.where[1]}"} if f.where else set())
        rule = next((r for r in rules if r.code == f.code and (r.target is None or r.target in about)), None)
        if rule is None:
            kept.append(f)
        else:
            ignored.append((f, rule))
    return kept, ignored


def _ids(findings: List[Finding]) -> List[str]:
    """Each finding's ``identity``; two findings about the very same thing (same code, object, group and
    cause, another message) are told apart by their order, which the same state keeps."""
    seen: Dict[str, int] = {}
    out = []
    for f in findings:
        base = identity(f)
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return out


def _dgd(f: Finding) -> Optional[DgdRef]:
    """The DGD a finding belongs to (``-o junit`` groups by it), None for the cluster's."""
    return {"namespace": f.where[0], "name": f.where[1]} if f.where else None


def _objkey(obj: Optional[dict]) -> tuple:
    obj = obj or {}
    return (obj.get("kind"), obj.get("namespace"), obj.get("name"))


def _cluster_finding(f):
    if f.object is None:
        return f.at({"kind": "Cluster", "namespace": None, "name": None})
    return f

