"""What is installed, from raw API objects: pure interpretation, testable without a cluster.

``model.facts.gather`` fills a ``Facts`` with raw JSON (None where a lookup failed, with the
reason in ``unknown``); ``detect(facts)`` turns it into the ``detect -o json`` contract.
Versions come from controller image tags found by labels (never from Helm release secrets, which
can hold secret values); health from the controller Deployments' available replicas.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, List, Optional

from kubectl_dynamo.operator import selection, versions

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import DetectData
    from kubectl_dynamo.operator.context import ClusterContext

KAI_GROUPS = ("scheduling.run.ai", "kai.scheduler")
VOLCANO_GROUPS = ("scheduling.volcano.sh", "batch.volcano.sh")
GROVE_GROUPS = ("grove.io", "scheduler.grove.io")
DS_GROUP = "disaggregatedset.x-k8s.io"
GPU_RESOURCE = "nvidia.com/gpu"
LWS_GROUPS = ("leaderworkerset.x-k8s.io",)
# The API group that says an orchestrator is installed (its first group).
API_GROUPS = {"grove": GROVE_GROUPS[0], "kai": KAI_GROUPS[0], "lws": LWS_GROUPS[0], "volcano": VOLCANO_GROUPS[0]}


@dataclass
class Facts:
    server_version: Optional[str] = None
    groups: Optional[Dict[str, List[str]]] = None  # group -> served versions
    deployments: Optional[list] = None
    kai_queues: Optional[list] = None
    volcano_queues: Optional[list] = None
    nodes: Optional[list] = None
    operator_config: Optional[dict] = None  # parsed config.yaml of the Dynamo operator
    dgd_crd_served: Optional[bool] = None
    # the fields of spec.components[] in the served DGD CRD's v1beta1 schema, read (doctor) only when the operator
    # is one whose fields a CRD may lack (model/views.read_dgd_fields); None: not read, or no schema to read
    dgd_component_fields: Optional[List[str]] = None
    unknown: Dict[str, str] = field(default_factory=dict)  # what could not be read -> why


# -- controllers, found by their upstream labels ----------------------------------------------
def _labels(d: dict) -> dict:
    return (d.get("metadata") or {}).get("labels") or {}


def _is_grove(d):
    return _labels(d).get("app.kubernetes.io/name") == "grove-operator"


def _is_kai_operator(d):
    return _labels(d).get("app") == "kai-operator"


def _is_kai_operand(d):
    return _labels(d).get("app.kubernetes.io/managed-by") == "kai-operator"


def _is_lws(d):
    labels = _labels(d)
    return labels.get("app.kubernetes.io/name") == "lws" and labels.get("control-plane") == "controller-manager"


def _is_volcano(d):
    return _labels(d).get("app") in ("volcano-scheduler", "volcano-controller", "volcano-admission")


def _is_dynamo_operator(d):
    labels = _labels(d)
    return (labels.get("app.kubernetes.io/name") == "dynamo-operator" or labels.get(
        "app.kubernetes.io/part-of") == "dynamo-operator") and labels.get("control-plane") == "controller-manager"


# Webhook configurations a controller's own manager process serves, by the name its chart gives them (or the
# Service they call): when such a webhook does not answer, that controller is down. LWS v0.9.0
# (kubernetes-sigs/lws config/webhook, chart templates/webhook/webhook.yaml: lws-{mutating,validating}-
# webhook-configuration, Service lws-webhook-service; recorded in tests/data/recorded/lws-direct-*).
CONTROLLER_WEBHOOKS = (("lws-", "lws-webhook-service", "the LWS controller"),)


def webhook_controller(config: str, endpoint: str = "") -> Optional[str]:
    """The controller that serves webhook configuration ``config`` (its endpoint: ``Service ns/name ...``)."""
    for prefix, service, who in CONTROLLER_WEBHOOKS:
        if config.startswith(prefix) or f"/{service} " in f"{endpoint} ":
            return who
    return None


def controller_deployments(deployments: Optional[list]) -> list:
    """The Deployments of the Dynamo operator and of every orchestrator/scheduler controller."""
    matchers = (_is_dynamo_operator, _is_grove, _is_kai_operator, _is_kai_operand, _is_lws, _is_volcano)
    return [d for d in deployments or [] if any(m(d) for m in matchers)]


def image_tag(image: Optional[str]) -> Optional[str]:
    """``repo/x:v1.2.3@sha256:..`` -> ``v1.2.3``; None for digest-only or untagged images."""
    if not image:
        return None
    image = image.split("@", 1)[0]
    name, _, tag = image.rpartition(":")
    if not name or "/" in tag:  # "host:5000/repo" has no tag
        return None
    return tag


def _containers(d: dict) -> list:
    return ((((d.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers")) or []


def _container(d: dict, name: str) -> Optional[dict]:
    cs = _containers(d)
    return next((c for c in cs if c.get("name") == name), cs[0] if cs else None)


def available(d: dict) -> bool:
    want = (d.get("spec") or {}).get("replicas", 1)
    have = (d.get("status") or {}).get("availableReplicas") or 0
    return have >= max(want, 1)


def _version_and_health(deps: list, container: str, strip: str = "") -> tuple:
    if not deps:
        return None, None
    tag = image_tag((_container(deps[0], container) or {}).get("image"))
    if tag and strip and tag.endswith(strip):
        tag = tag[: -len(strip)]
    return tag, all(available(d) for d in deps)


def operator_version(dep: dict) -> Optional[str]:
    """The Dynamo operator's version: its ``--operator-version`` flag (what it stamps as the
    origin version), else the manager image tag."""
    c = _container(dep, "manager") or {}
    for arg in list(c.get("args") or []) + list(c.get("command") or []):
        if isinstance(arg, str) and arg.startswith("--operator-version="):
            return arg.split("=", 1)[1]
    tag = image_tag(c.get("image"))
    return tag[1:] if tag and tag.startswith("v") and versions.is_valid(tag) else tag


def operator_config_map(dep: dict) -> Optional[str]:
    """The ConfigMap that holds the operator's config.yaml (mounted as volume operator-config)."""
    vols = ((((dep.get("spec") or {}).get("template") or {}).get("spec") or {}).get("volumes")) or []
    for v in vols:
        cm = v.get("configMap") or {}
        if cm.get("name") and (v.get("name") == "operator-config" or cm["name"].endswith("-config")):
            return cm["name"]
    return None


def find_dynamo_operator(deployments: Optional[list]) -> Optional[dict]:
    return next((d for d in deployments or [] if _is_dynamo_operator(d)), None)


# -- the detect contract ---------------------------------------------------------------------
def _served(facts: Facts, group: str) -> bool:
    return group in (facts.groups or {})


def detect(facts: Facts) -> DetectData:
    """Everything ``detect`` reports, as the documented JSON contract (problems added by the caller)."""
    known = facts.deployments is not None
    deps: list = facts.deployments or []

    def orchestrator(groups, match, container, strip=""):
        installed = any(_served(facts, g) for g in groups)
        found = [d for d in deps if match(d)] if known else []
        version, healthy = _version_and_health(found, container, strip)
        if installed and not found and known:
            healthy = None  # API served but no controller with the upstream labels is visible
        return {"installed": installed, "version": version, "healthy": healthy}

    grove = orchestrator(GROVE_GROUPS, _is_grove, "grove-operator")
    kai = orchestrator(KAI_GROUPS, lambda d: _is_kai_operator(d) or _is_kai_operand(d), "operator", "-fips")
    if known:  # the version is the kai-operator's tag; operands share it
        op = [d for d in deps if _is_kai_operator(d)]
        if op:
            kai["version"] = _version_and_health(op, "operator", "-fips")[0]
    kai["queues"] = kai_queues(facts.kai_queues)
    lws = orchestrator(LWS_GROUPS, _is_lws, "manager")
    lws["disaggregatedSet"] = "v1" in (facts.groups or {}).get(DS_GROUP, [])
    volcano = orchestrator(VOLCANO_GROUPS, _is_volcano, "volcano-scheduler")
    if known:
        sched = [d for d in deps if _labels(d).get("app") == "volcano-scheduler"]
        if sched:
            volcano["version"] = _version_and_health(sched, "volcano-scheduler")[0]
    volcano["queues"] = [{"name": q["metadata"]["name"], "state": (q.get("status") or {}).get("state")}
                         for q in facts.volcano_queues or []]

    op_dep = find_dynamo_operator(deps)
    op_installed = op_dep is not None or (not known and bool(facts.dgd_crd_served))
    gates = effective_gates(facts, op_dep is not None)
    dynamo: dict = {"installed": op_installed, "version": operator_version(op_dep) if op_dep else None,
              "gates": gates.as_json()}
    if op_dep is not None and facts.operator_config is None:
        dynamo["gates"]["grove"] = dynamo["gates"]["kaiScheduler"] = None  # chart-rendered, unreadable

    queue_names = [q["name"] for q in kai["queues"]] if facts.kai_queues is not None else None
    sel_default = selection.select(gates, {}, kai_queues=queue_names)
    sel_no_grove = selection.select(gates, {selection.ANN_ENABLE_GROVE: "false"}, kai_queues=queue_names)

    gpu_nodes, gpus = 0, 0
    for n in facts.nodes or []:
        count = gpu_count((n.get("status") or {}).get("allocatable") or {})
        if count:
            gpu_nodes += 1
            gpus += count
    return {
        "kubernetes": {"version": facts.server_version},
        "orchestrators": {"grove": grove, "kai": kai, "lws": lws, "volcano": volcano},
        "dynamoOperator": dynamo,
        "gpuNodes": {"count": gpu_nodes, "allocatableGpus": gpus},
        "selection": {"default": sel_default.as_json(), "enableGroveFalse": sel_no_grove.as_json()},
        "problems": [],
    }


def effective_gates(facts: Facts, operator_present: bool) -> selection.Gates:
    """The gates the operator computes; with no operator installed, what auto-detection would give.
    When the operator's config cannot be read, auto-detection stands in (flagged by a check)."""
    config = facts.operator_config if operator_present else None
    return selection.compute_gates((facts.groups or {}).keys(), config)


def operator_context(facts: Facts) -> ClusterContext:
    """The context ``explain dgd NAME`` and ``doctor`` render DGDs in."""
    from kubectl_dynamo.operator.context import MPI_SSH_SECRET_DEFAULT, ClusterContext

    op = find_dynamo_operator(facts.deployments)
    mpi = (facts.operator_config or {}).get("mpi") or {}
    return ClusterContext(
        gates=effective_gates(facts, op is not None),
        kai_queues=[q["metadata"]["name"] for q in facts.kai_queues] if facts.kai_queues is not None else None,
        operator_version=operator_version(op) if op else None,
        ssh_secret_name=mpi.get("sshSecretName") or MPI_SSH_SECRET_DEFAULT,
        notes=[f"{what} unknown: {why}" for what, why in sorted(facts.unknown.items())],
    )


def kai_queues(raw: Optional[list]) -> list:
    items = raw or []
    parents = {((q.get("spec") or {}).get("parentQueue")) for q in items}
    out = []
    for q in items:
        name = q["metadata"]["name"]
        out.append({"name": name, "parent": (q.get("spec") or {}).get("parentQueue") or None,
                    "leaf": name not in parents})
    return sorted(out, key=lambda q: q["name"])


def gpu_count(resources: dict) -> int:
    value = resources.get(GPU_RESOURCE)
    try:
        return int(str(value)) if value is not None else 0
    except ValueError:
        return 0


