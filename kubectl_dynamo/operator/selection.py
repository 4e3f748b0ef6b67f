"""Dynamo's orchestrator selection for a new multinode DGD, exactly as the operator applies it.

Pure: callers pass the facts (served API groups, the operator's config, queues, annotations);
``detect`` gathers them from a cluster, ``explain`` may assume them offline.

The operator (ai-dynamo/dynamo@2a6da14c deploy/operator/internal/controller/dgd_workload_provider.go, webhook defaulting):
- computes feature gates once at start-up from its config and API discovery (``compute_gates``);
- stamps ``nvidia.com/workload-provider`` on CREATE: ``grove`` iff the Grove gate is on and the
  lower-cased annotation ``nvidia.com/enable-grove`` is not ``"false"``; else ``component``;
- on the component provider a multinode component becomes a LeaderWorkerSet when the LWS gate
  is on, and the DGD fails with ``no_multinode_orchestrator_available`` when it is off;
- with Grove, wires KAI (queue from ``nvidia.com/kai-scheduler-queue``, default ``dynamo``,
  which must exist) or, experimentally, Volcano.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, List, Mapping, NamedTuple, Optional

from kubectl_dynamo.operator.api import ANN_ENABLE_GROVE, ANN_KAI_QUEUE, ANN_VOLCANO_QUEUE, LABEL_DGD

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import Selection as SelectionJson

GROVE_GROUP = "grove.io"
LWS_GROUP = "leaderworkerset.x-k8s.io"
VOLCANO_GROUP = "scheduling.volcano.sh"
KAI_GROUP = "scheduling.run.ai"

DEFAULT_KAI_QUEUE = "dynamo"

ERR_NO_ORCHESTRATOR = "no_multinode_orchestrator_available"
ERR_QUEUE_MISSING = "kai_queue_not_found"
ERR_SCHEDULER_CONFLICT = "scheduler_integration_conflict"
ERR_PROVIDER_UNAVAILABLE = "selected_workload_provider_unavailable"


class Gates(NamedTuple):  # NamedTuples, not frozen dataclasses: creating those classes cost explain -f ~2 ms
    """The operator's effective feature gates. None means unknown (could not be determined)."""

    grove: Optional[bool]
    lws: Optional[bool]
    kai_scheduler: Optional[bool]
    volcano_scheduler: bool = False
    # Start-up errors the operator would refuse to run with (an explicit gate whose API is missing).
    errors: tuple = ()

    def as_json(self) -> dict:
        return {"grove": self.grove, "lws": self.lws, "kaiScheduler": self.kai_scheduler}


def _explicit(config: Optional[Mapping], key: str) -> Optional[bool]:
    """``orchestrators.<key>.enabled`` from the operator config; None when not rendered."""
    if not config:
        return None
    value = ((config.get("orchestrators") or {}).get(key) or {}).get("enabled")
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


def compute_gates(groups: Iterable[str], config: Optional[Mapping] = None) -> Gates:
    """Gates as ``features.New()`` resolves them: explicit config wins, else API discovery.

    ``config`` is the parsed ``config.yaml`` of the operator's ConfigMap, or None when no operator
    is installed (then every gate is what auto-detection would give). The platform chart renders
    ``grove`` and ``kaiScheduler`` as explicit booleans and never renders ``lws``.
    """
    served = set(groups)
    errors = []
    grove_cfg = _explicit(config, "grove")
    grove = (GROVE_GROUP in served) if grove_cfg is None else grove_cfg
    if grove_cfg is True and GROVE_GROUP not in served:
        errors.append("Grove is explicitly enabled in config but the Grove API group was not detected in the cluster")

    lws_cfg = _explicit(config, "lws")
    lws = (LWS_GROUP in served and VOLCANO_GROUP in served) if lws_cfg is None else lws_cfg
    if lws and lws_cfg is True:
        if LWS_GROUP not in served:
            errors.append("LWS is explicitly enabled in config but the LWS API group was not detected in the cluster")
        elif VOLCANO_GROUP not in served:
            errors.append("LWS is explicitly enabled in config but the Volcano API group was not detected in the cluster")

    kai_cfg = _explicit(config, "kaiScheduler")
    kai = (KAI_GROUP in served) if kai_cfg is None else kai_cfg
    if kai_cfg is True and KAI_GROUP not in served:
        errors.append(
            "Kai-scheduler is explicitly enabled in config but the scheduling.run.ai API group was not detected in the cluster"
        )

    volcano_sched = _explicit(config, "volcanoScheduler") is True
    if volcano_sched and VOLCANO_GROUP not in served:
        errors.append(
            "Volcano scheduler integration is explicitly enabled in config but the Volcano API group was not detected in the cluster"
        )
    return Gates(grove=grove, lws=lws, kai_scheduler=kai, volcano_scheduler=volcano_sched, errors=tuple(errors))


class Selection(NamedTuple):
    provider: str  # "grove" | "component"
    orchestrator: Optional[str]  # "grove" | "lws" | None
    scheduler: Optional[str]
    queue: Optional[str]
    error: Optional[str]
    reason: str

    def as_json(self) -> SelectionJson:
        return {"provider": self.provider, "orchestrator": self.orchestrator, "scheduler": self.scheduler,
                "queue": self.queue, "error": self.error, "reason": self.reason}


def wants_grove(annotations: Optional[Mapping]) -> bool:
    """The DGD does not opt out with ``nvidia.com/enable-grove: "false"`` (case-insensitive)."""
    value = (annotations or {}).get(ANN_ENABLE_GROVE)
    return not (isinstance(value, str) and value.lower() == "false")


def kai_queue(annotations: Optional[Mapping]) -> str:
    value = (annotations or {}).get(ANN_KAI_QUEUE)
    value = value.strip() if isinstance(value, str) else ""
    return value or DEFAULT_KAI_QUEUE


def select(
    gates: Gates,
    annotations: Optional[Mapping] = None,
    *,
    kai_queues: Optional[Iterable[str]] = None,
    multinode: bool = True,
) -> Selection:
    """What the operator does with a new DGD carrying ``annotations``.

    ``kai_queues``: the KAI queue names in the cluster, or None when unknown (offline, or not
    allowed to list them); then the queue is reported but not checked.
    """
    annotations = annotations or {}
    opted_out = not wants_grove(annotations)
    if gates.grove and not opted_out:
        return _grove(gates, annotations, kai_queues)

    why = "the DGD sets nvidia.com/enable-grove: \"false\"" if opted_out and gates.grove else (
        "Grove is not enabled in the operator" if gates.grove is False else "Grove availability is unknown"
    )
    if not multinode:
        return Selection("component", None, None, None, None,
                         f"{why}: components become DynamoComponentDeployments (plain Deployments; no multinode)")
    if gates.lws:
        return Selection(
            "component", "lws", "volcano", "default", None,
            f"{why}; LWS and Volcano are both served, so each multinode component becomes a LeaderWorkerSet. "
            "LWS's volcano provider creates a Volcano PodGroup per group (queue 'default' unless the LWS sets one), "
            "but the operator renders the pods without schedulerName, so default-scheduler places them one by one "
            "and the gang is NOT enforced; set schedulerName: volcano in the component's pod templates to make "
            "Volcano gang-schedule it",
        )
    lws_why = "the LWS gate is off (it needs both leaderworkerset.x-k8s.io and scheduling.volcano.sh)"
    if gates.lws is None:
        lws_why = "LWS availability is unknown"
    return Selection("component", None, None, None, ERR_NO_ORCHESTRATOR,
                     f"{why} and {lws_why}: a multinode DGD fails with no_multinode_orchestrator_available")


def _grove(gates: Gates, annotations: Mapping, kai_queues: Optional[Iterable[str]]) -> Selection:
    if gates.kai_scheduler and gates.volcano_scheduler:
        return Selection("grove", "grove", None, None, ERR_SCHEDULER_CONFLICT,
                         "kai-scheduler and volcano scheduler integrations cannot both be enabled for Grove")
    if gates.kai_scheduler:
        queue = kai_queue(annotations)
        source = "nvidia.com/kai-scheduler-queue" if annotations.get(ANN_KAI_QUEUE, "").strip() else "the default"
        if kai_queues is not None and queue not in set(kai_queues):
            return Selection(
                "grove", "grove", "kai-scheduler", queue, ERR_QUEUE_MISSING,
                f"kai-scheduler queue validation failed: queue '{queue}' not found in cluster. "
                "Ensure the queue exists before using kai-scheduler",
            )
        checked = "" if kai_queues is None else " (it exists)"
        return Selection("grove", "grove", "kai-scheduler", queue, None,
                         f"Grove is enabled and the DGD does not opt out; KAI Scheduler gang-schedules the "
                         f"PodCliqueSet in queue '{queue}' from {source}{checked}")
    if gates.volcano_scheduler:
        queue = (annotations.get(ANN_VOLCANO_QUEUE) or "").strip() or "default"
        return Selection("grove", "grove", "volcano", queue, None,
                         "Grove is enabled with the experimental Volcano scheduler integration")
    kai_state = "unknown" if gates.kai_scheduler is None else "not enabled"
    return Selection("grove", "grove", "default-scheduler", None, None,
                     f"Grove is enabled and the DGD does not opt out; KAI Scheduler is {kai_state}, so pods use "
                     "default-scheduler and the gang is not enforced by a gang scheduler")


def assumed_gates(orchestrator: Optional[str], annotations: Optional[Mapping] = None) -> Gates:
    """Offline: the gates of the recommended install for ``--orchestrator`` (default: Grove
    unless the DGD opts out, then LWS)."""
    if orchestrator is None:
        orchestrator = "grove" if wants_grove(annotations) else "lws"
    if orchestrator == "grove":
        return Gates(grove=True, lws=False, kai_scheduler=True)
    return Gates(grove=False, lws=True, kai_scheduler=False)


# -- queue annotations a path does not read ----------------------------------------------------------
# The operator reads each queue annotation on one path only (ai-dynamo/dynamo@2a6da14c deploy/operator/internal/
# dynamo): nvidia.com/volcano-queue in grove.go injectVolcanoQueueAnnotation (Grove with its Volcano integration:
# the PodCliqueSet's scheduling.grove.io/volcano-queue), nvidia.com/kai-scheduler-queue in graph.go
# resolveGroveSchedulerQueue (Grove with KAI: the cliques' kai.scheduler/queue label). On the LWS path the
# DCD controller renders the LeaderWorkerSet with labels only (controller/dynamocomponentdeployment_controller.go
# generateLeaderWorkerSet), and LWS's volcano provider puts each group's PodGroup in the queue of the
# LeaderWorkerSet's scheduling.volcano.sh/queue-name annotation, else none: Volcano's "default"
# (kubernetes-sigs/lws@v0.9.0 pkg/schedulerprovider/volcano_provider.go CreatePodGroupIfNotExists).
LWS_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
QUEUE_ANNOTATIONS = {ANN_VOLCANO_QUEUE: ("grove", "volcano"), ANN_KAI_QUEUE: ("grove", "kai-scheduler")}


class Ignored(NamedTuple):
    annotation: str
    value: str
    path: str  # the path the DGD renders on, in words
    why: str  # why that path does not read the annotation
    fix: str  # what sets the queue on that path


def _path(orchestrator: Optional[str], scheduler: Optional[str]) -> str:
    if orchestrator == "lws":
        return "the LWS path"
    return {"kai-scheduler": "Grove with KAI", "volcano": "Grove with Volcano"}.get(scheduler or "",
                                                                                   "Grove without a gang scheduler")


def ignored_queue_annotations(orchestrator: Optional[str], scheduler: Optional[str], annotations: Optional[Mapping],
                              *, namespace: str = "NAMESPACE", dgd: str = "NAME") -> List[Ignored]:
    """The queue annotations of DGD ``namespace/dgd`` that the path it renders on (``orchestrator``,
    ``scheduler``) does not read, each with what sets the queue there instead."""
    out: List[Ignored] = []
    if orchestrator not in ("lws", "grove"):
        return out  # nothing renders: no-multinode-orchestrator says why
    for annotation, (provider, wanted) in QUEUE_ANNOTATIONS.items():
        value = (annotations or {}).get(annotation)
        value = value.strip() if isinstance(value, str) else ""
        if not value or (orchestrator == provider and scheduler == wanted):
            continue
        path = _path(orchestrator, scheduler)
        reads = "Grove with its Volcano integration" if annotation == ANN_VOLCANO_QUEUE else "Grove with KAI"
        why = f"the operator reads {annotation} only for {reads}"
        if orchestrator == "lws" and annotation == ANN_VOLCANO_QUEUE:
            why += (f"; on the LWS path it renders the LeaderWorkerSet without annotations, and LWS puts each "
                    f"group's Volcano PodGroup in the queue of the LeaderWorkerSet's {LWS_QUEUE_ANNOTATION} "
                    "annotation, else in Volcano's default queue")
            fix = (f"set the queue on the DGD's LeaderWorkerSets: kubectl annotate leaderworkerset -n {namespace} -l "
                   f"{LABEL_DGD}={dgd} {LWS_QUEUE_ANNOTATION}={value} (the operator keeps annotations it does not "
                   "render: controller_common/resource.go copies only the spec on update), then delete "
                   "each group's leader pod: LWS recreates the group with its PodGroup in that queue (it names the "
                   "queue only when it creates a PodGroup)")
        elif orchestrator == "lws":
            why += "; on the LWS path KAI does not schedule the pods at all"
            fix = (f"remove {annotation}; for a KAI queue use the Grove path with KAI (drop nvidia.com/enable-grove: "
                   f"\"false\"), or on LWS set the Volcano queue on the LeaderWorkerSet ({LWS_QUEUE_ANNOTATION})")
        else:
            other = ANN_KAI_QUEUE if scheduler == "kai-scheduler" else ANN_VOLCANO_QUEUE if scheduler == "volcano" \
                else None
            fix = (f"name the queue with {other} instead" if other else
                   "enable KAI (or Volcano) in the operator for Grove, then use its queue annotation") \
                + f", or remove {annotation}"
        out.append(Ignored(annotation, value, path, why, fix))
    return out
