"""Cluster-level checks, shared by ``detect`` (as problems) and ``doctor``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubectl_dynamo.checks.registry import check
from kubectl_dynamo.model import compat
from kubectl_dynamo.model.platform import Facts
from kubectl_dynamo.operator import selection, versions

# Minimum versions (per operator line for Grove and KAI) and known-broken pairs: data/compatibility.json,
# each fact with its source (model/compat.py; generated into docs/versions.md).
LWS_MINIMUM = compat.facts()["lws"]["minimum"]
LWS_DISAGGREGATED_SET = compat.facts()["lws"]["disaggregatedSet"]
K8S_MINIMUM = compat.facts()["kubernetes"]["minimum"]
K8S_PLATFORM_MINIMUM = compat.facts()["kubernetes"]["platformChart"]
compatibility = compat.line_minimums

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import DetectData


@dataclass
class ClusterView:
    facts: Facts
    report: DetectData  # the detect contract

    @property
    def orch(self):
        return self.report["orchestrators"]

    @property
    def operator(self):
        return self.report["dynamoOperator"]


@check("permission-denied")
def permission_denied(view: ClusterView):
    """A lookup was forbidden or failed, so part of the answer is unknown."""
    for what, why in sorted(view.facts.unknown.items()):
        yield (f"{what} unknown: {why}",
               "grant read access (see docs/rbac/) or run as a user who may read it")


@check("crd-behind-operator")
def crd_behind_operator(view: ClusterView):
    """The served DGD CRD lacks a field the running operator version reads and writes."""
    from kubectl_dynamo.operator import api

    fields = view.facts.dgd_component_fields
    version = view.operator.get("version")
    if fields is None or not version or not versions.at_least(version, api.ROLE_TEMPLATES_SINCE) or "roles" in fields:
        return
    yield (f"the served DynamoGraphDeployment CRD has no spec.components[].roles, which operator {version} reads "
           "and writes (since 1.6.0): the API server drops or refuses it (strict field validation: unknown field "
           "\"spec.components[N].roles\"): the CRDs were not upgraded with the operator (Helm never upgrades a "
           "chart's CRDs)",
           f"apply the CRDs of operator {version}'s chart (helm pull the dynamo-platform chart of that version, then "
           "kubectl apply --server-side -f its crds/), then re-apply the DGDs")


@check("kubernetes-too-old")
def kubernetes_too_old(view: ClusterView):
    """The API server is older than Dynamo supports."""
    raw = view.report["kubernetes"]["version"]
    v = versions.parse(raw.split("+")[0] if raw else None)
    if v is None:
        return
    plain = f"{v[0]}.{v[1]}.{v[2]}"
    if not versions.at_least(plain, K8S_MINIMUM):
        yield (f"Kubernetes {raw} is older than 1.24, the minimum for multinode Dynamo",
               "upgrade the cluster to Kubernetes 1.30 or newer")
    elif not versions.at_least(plain, K8S_PLATFORM_MINIMUM):
        yield (f"Kubernetes {raw} is older than 1.30, which the dynamo-platform chart requires",
               "upgrade the cluster to Kubernetes 1.30 or newer before installing the platform chart")


@check("no-multinode-orchestrator")
def no_orchestrator(view: ClusterView):
    """Neither Grove nor LWS+Volcano is usable: a multinode DGD fails."""
    sel = view.report["selection"]["default"]
    if sel["error"] == selection.ERR_NO_ORCHESTRATOR and view.facts.groups is not None:  # unknown: permission-denied
        yield ("no multinode orchestrator is available: a multinode DGD fails with "
               "no_multinode_orchestrator_available",
               "kubectl dynamo install --orchestrator grove   (or --orchestrator lws)")


@check("lws-without-volcano")
def lws_without_volcano(view: ClusterView):
    """LWS is installed but Volcano is not: the operator keeps its LWS gate off."""
    if view.orch["lws"]["installed"] and not view.orch["volcano"]["installed"]:
        yield ("LeaderWorkerSet is installed but Volcano is not; Dynamo enables LWS only when both "
               "leaderworkerset.x-k8s.io and scheduling.volcano.sh are served",
               "kubectl dynamo install --orchestrator lws   (installs Volcano, then LWS with "
               "gangSchedulingManagement.schedulerProvider=volcano)")


@check("kai-queue-missing")
def kai_queue_missing(view: ClusterView):
    """Grove + KAI is selected but the KAI queue does not exist: rendering fails."""
    sel = view.report["selection"]["default"]
    if sel["error"] == selection.ERR_QUEUE_MISSING:
        yield (f"KAI queue '{sel['queue']}' does not exist; the operator refuses to render Grove "
               f"workloads that use it",
               f"kubectl dynamo install --orchestrator grove --separately creates it, or apply a "
               f"scheduling.run.ai/v2 Queue named {sel['queue']} with a parentQueue")


@check("kai-queue-not-leaf")
def kai_queue_not_leaf(view: ClusterView):
    """The KAI queue the DGD would use has children; only leaf queues schedule jobs."""
    sel = view.report["selection"]["default"]
    for q in view.orch["kai"]["queues"]:
        if sel["scheduler"] == "kai-scheduler" and q["name"] == sel["queue"] and not q["leaf"]:
            yield (f"KAI queue '{q['name']}' has child queues; only leaf queues can run workloads",
                   f"point nvidia.com/kai-scheduler-queue at a leaf queue under '{q['name']}'")


@check("scheduler-integration-conflict")
def scheduler_conflict(view: ClusterView):
    """KAI and Volcano are both enabled as Grove's scheduler."""
    if view.report["selection"]["default"]["error"] == selection.ERR_SCHEDULER_CONFLICT:
        yield ("the operator has both the KAI and the Volcano scheduler integration enabled for Grove; "
               "rendering fails", "disable one: global.kai-scheduler.enabled or global.volcano-scheduler.enabled")


@check("operator-gate-error")
def operator_gate_error(view: ClusterView):
    """The operator config enables an orchestrator whose API is not served: it will not start."""
    from kubectl_dynamo.model.platform import effective_gates

    if view.facts.groups is None:  # API groups unknown (permission-denied says so), not absent
        return
    gates = effective_gates(view.facts, view.operator["installed"])
    for message in gates.errors:
        yield (message, "install the orchestrator or set its enabled value to false in the platform chart")


@check("grove-disabled")
def grove_disabled(view: ClusterView):
    """Grove is installed but the operator was told not to use it."""
    if view.orch["grove"]["installed"] and view.operator["installed"] and view.operator["gates"]["grove"] is False:
        yield ("Grove is installed but the Dynamo operator's Grove gate is off (the platform chart renders "
               "global.grove.enabled explicitly, so detection does not apply)",
               "helm upgrade dynamo-platform ... --reuse-values --set global.grove.enabled=true")


@check("kai-disabled")
def kai_disabled(view: ClusterView):
    """Grove is used without a gang scheduler although KAI is installed."""
    sel = view.report["selection"]["default"]
    if view.orch["kai"]["installed"] and sel["scheduler"] == "default-scheduler":
        yield ("KAI Scheduler is installed but the operator's KAI gate is off: Grove pods use "
               "default-scheduler and a gang can be half scheduled",
               "helm upgrade dynamo-platform ... --reuse-values --set global.kai-scheduler.enabled=true")


@check("gates-unreadable")
def gates_unreadable(view: ClusterView):
    """The operator's config could not be read, so its gates were assumed from detection."""
    if view.operator["installed"] and view.operator["gates"]["grove"] is None and \
            "dynamoOperator.config" in view.facts.unknown:
        yield ("the Dynamo operator's config could not be read; the selection assumes the gates "
               "follow API detection", "grant get on the operator's ConfigMap (see docs/rbac/)")


@check("orchestrator-unhealthy")
def orchestrator_unhealthy(view: ClusterView):
    """An orchestrator's controller is not available."""
    for name, o in view.orch.items():
        if o["installed"] and o["healthy"] is False:
            yield (f"{name} is installed but its controller Deployment is not available",
                   f"kubectl get deploy -A -o wide | grep -i {name}   and inspect its pods and events")


@check("orchestrator-too-old")
def orchestrator_too_old(view: ClusterView):
    """An orchestrator is older than the Dynamo operator version needs."""
    from kubectl_dynamo.checks.registry import Finding

    op_version = view.operator["version"]
    table = compatibility(op_version) or compatibility(versions.NEWEST)
    assert table is not None
    # Without an operator the newest line is only advice for the one you would install.
    severity = "error" if op_version else "warning"
    target = f"Dynamo operator {op_version}" if op_version else f"a new Dynamo operator ({versions.NEWEST})"
    for key, label in (("grove", "Grove"), ("kai", "KAI Scheduler")):
        got, need = view.orch[key]["version"], table[key]
        if got and versions.parse(got) and not versions.tag_at_least(got, need):
            yield Finding("orchestrator-too-old", severity, f"{label} {got} is older than {need}, the minimum for "
                          f"{target}", f"upgrade {label} to {need} or newer")
    got = view.orch["lws"]["version"]
    if got and versions.parse(got) and not versions.tag_at_least(got, LWS_MINIMUM):
        yield Finding("orchestrator-too-old", "error", f"LWS {got} is older than {LWS_MINIMUM}, the minimum for Dynamo",
                      "kubectl dynamo install --orchestrator lws --upgrade")


@check("known-broken-versions")
def known_broken_versions(view: ClusterView):
    """Installed versions that match a known-broken combination (data/compatibility.json)."""
    installed = {"grove": view.orch["grove"]["version"], "kai": view.orch["kai"]["version"],
                 "lws": view.orch["lws"]["version"], "volcano": view.orch["volcano"]["version"],
                 "dynamoOperator": view.operator["version"], "kubernetes": view.report["kubernetes"]["version"]}
    for b in compat.broken_pairs(installed):
        at = ", ".join(f"{compat.NAMES[k]} {installed[k]}" for k in b["when"])
        yield f"{at}: {b['what']} ({b['issue']})", b["fix"]


@check("lws-without-disaggregatedset")
def lws_without_ds(view: ClusterView):
    """LWS does not serve disaggregatedset.x-k8s.io/v1 (the first LWS release that does: compatibility.json)."""
    lws = view.orch["lws"]
    if lws["installed"] and not lws["disaggregatedSet"]:
        yield ("LWS does not serve disaggregatedset.x-k8s.io/v1; the standard LeaderWorkerSet path works "
               f"but DisaggregatedSet needs LWS {LWS_DISAGGREGATED_SET} or newer",
               f"kubectl dynamo install --orchestrator lws --upgrade   (any LWS from {LWS_DISAGGREGATED_SET} serves it)")


@check("no-gpu-nodes")
def no_gpu_nodes(view: ClusterView):
    """No node advertises allocatable nvidia.com/gpu."""
    if view.facts.nodes is not None and view.report["gpuNodes"]["count"] == 0:
        yield ("no node has allocatable nvidia.com/gpu: multinode workers will stay Pending",
               "install the NVIDIA GPU Operator or device plugin on the GPU nodes")


@check("dynamo-operator-missing")
def operator_missing(view: ClusterView):
    """No Dynamo operator was found; the selection shows what auto-detection would give."""
    if not view.operator["installed"]:
        yield ("no Dynamo operator found; the selection shows what an operator with auto-detected "
               "gates would do", "install the dynamo-platform Helm chart")
