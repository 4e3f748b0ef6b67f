"""Per-DGD checks of the DGD over time: its worker generations, rollout and Ready reason.

Each reads one ``DgdView`` through ``model/rollout.assess`` (the same judgement ``rollout status``
makes) over what doctor's snapshot holds of the DGD: its DCDs, LeaderWorkerSets, pods and Warning
events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from kubectl_dynamo.checks.registry import Finding, check
from kubectl_dynamo.model.labels import DGD_LABEL
from kubectl_dynamo.model.rollout import (
    PHASES_IN_PROGRESS,
    RolloutInputs,
    assess,
    availability,
    current_hashes,
    worker_hash,
)
from kubectl_dynamo.model.views import seconds_between
from kubectl_dynamo.operator import api
from kubectl_dynamo.words import plural

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import RolloutStatus

# kubectl's default for a Deployment (spec.progressDeadlineSeconds): how long an operator-managed
# rolling update may stand still before doctor calls it stalled.
PROGRESS_DEADLINE = 600


def _mine(view, attr: str) -> List[dict]:
    """The objects of the snapshot's list ``attr`` that carry this DGD's label in its namespace (grouped once
    per run on the shared Index)."""
    if view.index is not None:
        return view.index.of_dgd(view.snapshot, attr, view.namespace, view.name)
    return [o for o in getattr(view.snapshot, attr, None) or []
            if (o.get("metadata") or {}).get("namespace") == view.namespace
            and ((o.get("metadata") or {}).get("labels") or {}).get(DGD_LABEL) == view.name]


def inputs_of(view) -> RolloutInputs:
    """The DGD's RolloutInputs, made once per view (every rollout check reads them)."""
    cached = getattr(view, "_rollout_inputs", None)
    if cached is None:
        events = (view.index.events.get(("DynamoGraphDeployment", view.namespace, view.name), [])
                  if view.index is not None else [])
        cached = RolloutInputs(dgd=view.raw, dcds=_mine(view, "componentdeployments"),
                               pods=[p.raw for c in view.components for g in c.groups.values() for p in g.pods],
                               workloads={"LeaderWorkerSet": _mine(view, "leaderworkersets"),
                                          "PodCliqueSet": _mine(view, "podcliquesets")},
                               events=events)
        view._rollout_inputs = cached
    return cached


def _assessed(view) -> RolloutStatus:
    cached = getattr(view, "_rollout", None)
    if cached is None:
        cached = assess(inputs_of(view))
        view._rollout = cached  # several checks read it
    return cached


def _f(code: str, view, message: str, component: Optional[str] = None, obj: Optional[dict] = None) -> Finding:
    from kubectl_dynamo.findings.catalogue import entry

    e = entry(code)
    return Finding(code, e.severity, message, e.fix, component=component, object=obj or view.obj(),
                   where=view.where(component))


@check("rollout-stalled", scope="dgd")
def rollout_stalled(view):
    a = _assessed(view)
    old = [c for c in a["components"] if c["oldPods"]]
    phase = a["rollingUpdate"].get("phase")
    if phase in PHASES_IN_PROGRESS:
        waited = seconds_between(a["rollingUpdate"].get("startTime"), view.snapshot.taken_at)
        if waited is not None and waited > PROGRESS_DEADLINE:
            yield _f("rollout-stalled", view, f"the operator's rolling update of DGD {view.name} is {phase} since "
                     f"{a['rollingUpdate'].get('startTime')} ({waited / 60:.0f} min): {a['waiting'] or 'waiting'}")
        return
    if old and a["cause"]:
        for c in old:
            yield _f("rollout-stalled", view,
                     f"component {c['name']}: {plural(c['oldPods'], 'pod')} of an old worker generation "
                     f"({c['oldPodsReady']} Ready) still run beside the new one; {a['cause']}", component=c["name"])


@check("old-worker-generation", scope="dgd")
def old_worker_generation(view):
    a = _assessed(view)
    if a["rollingUpdate"].get("phase") in PHASES_IN_PROGRESS or any(c["oldPods"] for c in a["components"]):
        return  # a rollout in progress, or stalled (rollout-stalled says so)
    target = set(a["workerHash"]["target"])
    inputs = inputs_of(view)
    for kind, objects in (("DynamoComponentDeployment", inputs.dcds),
                          ("LeaderWorkerSet", inputs.workloads["LeaderWorkerSet"])):
        for o in objects:
            h = worker_hash(o)
            if h and target and h not in target:
                name = (o.get("metadata") or {}).get("name")
                yield _f("old-worker-generation", view,
                         f"{kind} {name} of worker hash {h} is left behind (the DGD's current generation is "
                         f"{', '.join(sorted(target))})",
                         obj={"kind": kind, "namespace": view.namespace, "name": name})


@check("worker-hash-missing", scope="dgd")
def worker_hash_missing(view):
    status = view.raw.get("status") or {}
    workers = [c for c in (view.raw.get("spec") or {}).get("components") or [] if c.get("type") in api.WORKER_TYPES]
    if not workers or not status.get("observedGeneration") or current_hashes(view.raw):
        return
    live = sorted({worker_hash(o) or "" for o in inputs_of(view).dcds} - {""})
    yield _f("worker-hash-missing", view,
             f"DGD {view.name} was reconciled but carries no worker-hash annotation"
             + (f"; its worker DCDs carry {', '.join(live)}" if live else ""))


@check("max-unavailable-exceeded", scope="dgd")
def max_unavailable_exceeded(view):
    """While a component rolls, fewer of its groups ready (old and new generations together) than its
    replicas minus what its rollout lets go (model/rollout.availability: the operator's own bound for
    a single-node DGD, the LeaderWorkerSet's on LWS)."""
    a = _assessed(view)
    inputs = inputs_of(view)
    managing = a["rollingUpdate"].get("phase") in PHASES_IN_PROGRESS
    spec = {(c.get("name") or "").lower(): c for c in (view.raw.get("spec") or {}).get("components") or []}
    for c in a["components"]:
        rolling = managing or c["oldPods"] or any(w["updated"] < w["desired"] for w in c["workloads"])
        counts = availability(inputs, spec.get(c["name"].lower()) or {"name": c["name"]}, c["replicas"]) if rolling else None
        if counts is None:
            continue
        ready, allowed = counts
        down = c["replicas"] - ready
        if down > allowed:
            yield _f("max-unavailable-exceeded", view,
                     f"component {c['name']}: {down} of {plural(c['replicas'], 'group')} unavailable while it rolls; "
                     f"maxUnavailable allows {allowed}", component=c["name"])


# The operator's Ready reasons (dynamo@2a6da14c api/v1beta1/dynamographdeployment_types.go, and its
# failure reasons in internal/controller/dynamographdeployment_controller.go).
READY_REASONS = {
    "failed_to_initialize_worker_hash": "the operator could not record the DGD's first worker generation",
    "failed_to_migrate_worker_hash": "the operator could not move a legacy worker-hash annotation to the new form",
    "no_multinode_orchestrator_available": "a multinode component needs Grove or LWS + Volcano, and neither is usable",
    "failed_to_reconcile_the_resources": "the operator failed to create or update the DGD's workloads (the message "
                                         "says which and why)",
    "rolling_update_failed": "the operator's managed rolling update of the worker components failed",
    # internal/controller/dgd_workload_program.go: while status.rollingUpdate is Pending or InProgress
    "rolling_update_in_progress": "the operator's managed rolling update of the worker components is under way",
    "waiting_for_checkpoint": "a component waits for its checkpoint to be ready",
    "selected_workload_provider_unavailable": "the provider stamped on the DGD at creation is disabled now",
    "unsupported_workload_provider": "the DGD names a workload provider this operator does not support",
    "insufficient_capacity": "a component is blocked before it can run: too few replicas scheduled, pods held by "
                             "scheduling gates or a capacity condition",
    "pods_not_ready": "the pods are scheduled but a component has too few ready or available replicas",
    "updating": "scheduling is sufficient but a component has not finished rolling out its updated replicas",
    "mixed_not_ready_reasons": "several components are not ready, for different reasons",
    "some_resources_are_not_ready": "a component is not ready and the operator could not classify why",
}


@check("dgd-not-ready", scope="dgd")
def dgd_not_ready(view):
    cond = next((c for c in (view.raw.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), None)
    if not cond or cond.get("status") == "True":
        return
    reason = cond.get("reason") or ""
    meaning = READY_REASONS.get(reason, "a reason this version does not know: see its message")
    message = cond.get("message") or ""
    yield _f("dgd-not-ready", view, f"DGD {view.name} is not Ready ({reason or 'no reason'}): {meaning}"
             + (f"; the operator says: {message}" if message else ""))
