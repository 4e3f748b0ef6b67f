"""Where a DGD's rollout stands: old and new worker generation, every component's workloads and pods.

Pure: takes the raw objects of one DGD (``RolloutInputs``) and says whether the change is complete,
with ``kubectl rollout status`` semantics: complete exactly when the operator has observed the
DGD's generation, no managed rolling update is pending, every component's workload reports all its
groups updated, ready and available, every pod of the new generation is Ready, and no pod of an
older worker generation is left (an old pod may still serve traffic: ai-dynamo/dynamo #3567).

How the operator moves worker generations (ai-dynamo/dynamo@2a6da14c deploy/operator/internal/controller/
dgd_worker_rollout_reconciler.go, dgd_component_program.go, internal/dynamo/graph.go):
- worker DCDs (and the LeaderWorkerSets/Deployments they render) are named ``<dgd>-<component>-<hash>``
  and labelled ``nvidia.com/dynamo-worker-hash``; the DGD's annotations ``nvidia.com/current-worker-hash``
  (v1, legacy generations) and ``nvidia.com/current-worker-hash-v2`` name the active generation
  (``currentWorkerHashes``; a DCD is current when its hash equals either);
- single-node DGDs (``supportsManagedRollingUpdate``) roll under ``status.rollingUpdate``: phase
  Pending -> InProgress while old DCDs are scaled down and new ones up, Completed once every worker
  component has its desired ready replicas and no ready old one; only then are the old worker DCDs
  deleted and the annotations moved to the new hash (``completeRollingUpdate``);
- multinode DGDs (``ReconcileUnsupported``) get the new hash at once and a new DCD, with the
  Warning event ``RollingUpdateNotSupported``: nothing deletes the old worker DCD, so its groups keep
  running next to the new ones and this rollout never completes by itself.

Each workload's own rollout is judged as its controller reports it: a Deployment as kubectl's
``DeploymentStatusViewer`` (k8s.io/kubectl pkg/polymorphichelpers/rollout_status.go), a
LeaderWorkerSet from its status (kubernetes-sigs/lws@v0.9.0 pkg/controllers/leaderworkerset_controller.go
``updateConditions``: ``updatedReplicas`` counts groups whose leader and worker StatefulSet carry the
current template revision, ``readyReplicas`` groups whose leader is ready and worker StatefulSet
ready), a Grove PodCliqueSet from ``updateProgress``, ``availableReplicas`` and ``updatedReplicas``
(a replica is updated only when also available: ai-dynamo/grove@fcc3b3bb
operator/internal/controller/podcliqueset/reconcilestatus.go ``computeReplicaStatus``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

from kubectl_dynamo.model import evidence
from kubectl_dynamo.model.labels import COMPONENT_LABEL, DGD_LABEL
from kubectl_dynamo.operator import api, rollingupdate
from kubectl_dynamo.operator.objects import resource_annotations
from kubectl_dynamo.operator.workerhash import ANN_V1
from kubectl_dynamo.words import plural

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import ComponentRollout, Generation, RollingUpdate, RolloutStatus, WorkloadRollout

# dgd_worker_rollout_reconciler.go isRollingUpdateInProgress; api/v1beta1/common.go RollingUpdatePhase
PHASES_IN_PROGRESS = ("Pending", "InProgress")
WORKLOAD_KINDS = ("LeaderWorkerSet", "Deployment", "PodCliqueSet")


@dataclass
class RolloutInputs:
    """One DGD and what it owns, as listed (each list by the DGD's label)."""

    dgd: dict
    dcds: List[dict] = field(default_factory=list)
    pods: List[dict] = field(default_factory=list)
    workloads: Dict[str, List[dict]] = field(default_factory=dict)  # kind -> objects (WORKLOAD_KINDS)
    events: List[dict] = field(default_factory=list)  # the DGD's own events (RollingUpdateNotSupported ...)


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _labels(obj: dict) -> dict:
    return _meta(obj).get("labels") or {}


def worker_hash(obj: dict) -> Optional[str]:
    return _labels(obj).get(api.LABEL_WORKER_HASH) or None


def _terminating(obj: dict) -> bool:
    return bool(_meta(obj).get("deletionTimestamp"))


def _component(obj: dict) -> str:
    return (_labels(obj).get(COMPONENT_LABEL) or "").lower()


def current_hashes(dgd: dict) -> Set[str]:
    """The worker hashes the operator stored as active (``currentWorkerHashes``: v1 and v2)."""
    ann = _meta(dgd).get("annotations") or {}
    return {h for h in (ann.get(ANN_V1), ann.get(api.ANN_WORKER_HASH_V2)) if h}


def rolling_update(dgd: dict) -> dict:
    return (dgd.get("status") or {}).get("rollingUpdate") or {}


def rolling_update_json(dgd: dict) -> RollingUpdate:
    """The contract's ``rollingUpdate``: the phase (None without one) and the other fields of
    RollingUpdateStatus the operator set (api/v1beta1/common.go); fields a later operator adds are not
    passed on until the contract names them."""
    status = rolling_update(dgd)
    out: RollingUpdate = {"phase": status.get("phase") or None}
    if status.get("startTime"):
        out["startTime"] = status["startTime"]
    if status.get("endTime"):
        out["endTime"] = status["endTime"]
    if status.get("updatedComponents"):
        out["updatedComponents"] = list(status["updatedComponents"])
    return out


def target_hashes(dgd: dict, dcds: List[dict]) -> Set[str]:
    """The generation the DGD is moving to: during a managed rolling update the newest worker DCD
    hash the annotations do not name yet (they move only at completion), else the stored ones."""
    current = current_hashes(dgd)
    if rolling_update(dgd).get("phase") in PHASES_IN_PROGRESS:
        newer = sorted((d for d in dcds if worker_hash(d) and worker_hash(d) not in current),
                       key=lambda d: _meta(d).get("creationTimestamp") or "")
        if newer:
            return {worker_hash(newer[-1]) or ""}
    return current


def workload_state(kind: str, obj: dict) -> WorkloadRollout:
    """One workload's rollout as its controller reports it: desired / updated / ready / available
    groups (replicas, for a Deployment) and, while not done, what it waits for."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    name = _meta(obj).get("name") or ""
    desired = int(spec["replicas"]) if spec.get("replicas") is not None else 1
    updated = int(status.get("updatedReplicas") or 0)
    ready = int(status.get("readyReplicas") or 0)
    current = int(status.get("replicas") or 0)
    available = int(status.get("availableReplicas") or 0)
    waiting = None
    generation, observed = int(_meta(obj).get("generation") or 0), int(status.get("observedGeneration") or 0)
    unit = "replicas" if kind == "Deployment" else "groups"
    if kind == "Deployment":
        # kubectl DeploymentStatusViewer.Status, in its order
        progressing = evidence.condition(obj, "Progressing") or {}
        if observed < generation:
            waiting = "waiting for the spec update to be observed"
        elif progressing.get("reason") == "ProgressDeadlineExceeded":
            waiting = f"exceeded its progress deadline ({progressing.get('message') or ''})".rstrip(" ()")
        elif updated < desired:
            waiting = f"{updated} out of {desired} new replicas have been updated"
        elif current > updated:
            waiting = f"{current - updated} old replicas are pending termination"
        elif available < updated:
            waiting = f"{available} of {updated} updated replicas are available"
    elif kind == "LeaderWorkerSet":
        available = ready if (evidence.condition(obj, "Available") or {}).get("status") == "True" else min(ready, updated)
        if observed < generation:
            waiting = "waiting for the spec update to be observed"
        elif updated < desired:
            waiting = f"{updated} of {desired} groups updated"
        elif current > desired:
            waiting = f"{current - desired} old groups pending termination"
        elif ready < desired:
            waiting = f"{ready} of {desired} updated groups ready"
        elif (evidence.condition(obj, "Available") or {}).get("status") != "True":
            waiting = "waiting for its Available condition"
    else:  # PodCliqueSet: a replica counts as updated only once it is also available (grove reconcilestatus.go)
        progress = status.get("updateProgress") or status.get("rollingUpdateProgress") or {}
        if observed < generation:
            waiting = "waiting for the spec update to be observed"
        elif progress and not progress.get("updateEndedAt"):
            waiting = f"rolling update in progress, {updated} of {desired} replicas updated"
        elif available < desired:
            waiting = f"{available} of {desired} replicas available"
        elif updated < desired:
            waiting = f"{updated} of {desired} replicas updated"
    return {"kind": kind, "name": name, "desired": desired, "updated": updated, "ready": ready,
            "available": available, "unit": unit, "done": waiting is None, "waiting": waiting}


def _spec_components(dgd: dict) -> List[dict]:
    return [c for c in (dgd.get("spec") or {}).get("components") or [] if c.get("name")]


def _node_count(comp: dict) -> int:
    return int(((comp.get("multinode") or {}).get("nodeCount")) or 1)


def managed(inputs: RolloutInputs) -> bool:
    """The operator rolls this DGD's worker generations itself: the component pathway (not Grove) and
    no component on more than one node (dgd_component_program.go ``supportsManagedRollingUpdate``,
    api/v1beta1 ``HasAnyMultinodeComponent``: nodeCount > 1)."""
    provider = (_meta(inputs.dgd).get("annotations") or {}).get(api.ANN_WORKLOAD_PROVIDER)
    return (provider != "grove" and not inputs.workloads.get("PodCliqueSet")
            and not any(_node_count(c) > 1 for c in _spec_components(inputs.dgd)))


def availability(inputs: RolloutInputs, component: dict, replicas: int) -> Optional[Tuple[int, int]]:
    """(groups ready, groups the rollout may have down) of one component, old and new generations
    together, where its rollout bounds them; None where nothing does.
    - Worker of a DGD the operator rolls itself (``managed``): one pod a replica; the bound is the
      operator's own (dgd_worker_rollout_reconciler.go ``buildRollingUpdateContext``), from the
      component's annotations (operator/rollingupdate.py), not the Deployments' strategy.
    - On LWS: the groups the LeaderWorkerSets report ready; the bound is the current LeaderWorkerSet's
      rolloutStrategy.rollingUpdateConfiguration.maxUnavailable, scaled down from a percentage
      (kubernetes-sigs/lws@v0.9.0 api/leaderworkerset/v1/leaderworkerset_types.go, default 1)."""
    name = (component.get("name") or "").lower()
    if managed(inputs):
        if component.get("type") not in api.WORKER_TYPES:
            return None
        pods = [p for p in inputs.pods if _component(p) == name and not _terminating(p)
                and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        _, allowed = rollingupdate.generation_budget(resource_annotations(inputs.dgd, component), replicas)
        return sum(evidence.ready(p) for p in pods), allowed
    lwss = [w for w in inputs.workloads.get("LeaderWorkerSet") or [] if _component(w) == name]
    target = target_hashes(inputs.dgd, inputs.dcds)
    current = [w for w in lwss if not worker_hash(w) or worker_hash(w) in target]
    if not current:
        return None
    config = ((current[0].get("spec") or {}).get("rolloutStrategy") or {}).get("rollingUpdateConfiguration") or {}
    allowed = rollingupdate.scaled(config.get("maxUnavailable", 1), replicas, False)
    return sum(int((w.get("status") or {}).get("readyReplicas") or 0) for w in lwss), allowed


def assess(inputs: RolloutInputs) -> RolloutStatus:
    """The ``rollout status -o json`` contract of one DGD (see the module docstring)."""
    dgd = inputs.dgd
    meta, status = _meta(dgd), dgd.get("status") or {}
    generation, observed = int(meta.get("generation") or 0), int(status.get("observedGeneration") or 0)
    stored = current_hashes(dgd)
    target = target_hashes(dgd, inputs.dcds)
    phase = rolling_update(dgd).get("phase") or None
    live_pods = [p for p in inputs.pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]

    def is_old(obj: dict) -> bool:
        h = worker_hash(obj)
        return bool(h) and h not in target

    components: List[ComponentRollout] = []
    for comp in _spec_components(dgd):
        cname = comp["name"]
        worker = comp.get("type") in api.WORKER_TYPES
        desired = int(comp["replicas"]) if comp.get("replicas") is not None else 1
        per_group = _node_count(comp)
        workloads = [workload_state(kind, w) for kind in ("LeaderWorkerSet", "Deployment")
                     for w in inputs.workloads.get(kind) or []
                     if _component(w) == cname.lower() and not is_old(w)]
        pods = [p for p in live_pods if _component(p) == cname.lower()]
        new = [p for p in pods if not is_old(p)]
        old = [p for p in pods if is_old(p)]
        serving = [p for p in new if not _terminating(p)]
        ready = sum(evidence.ready(p) for p in serving)
        want = desired * per_group
        waiting = next((f"{w['kind']} {w['name']}: {w['waiting']}" for w in workloads if not w["done"]), None)
        if waiting is None and not workloads and want and not inputs.workloads.get("PodCliqueSet"):
            waiting = "no workload of the current generation yet"
        if waiting is None and old:
            olds = sorted({worker_hash(p) or "" for p in old})
            waiting = (f"{plural(len(old), 'pod')} of the old worker generation {', '.join(olds)} still present "
                       f"({sum(evidence.ready(p) for p in old)} Ready)")
        if waiting is None and (len(serving) != want or ready < want):
            waiting = f"{ready} of {want} pods of the new generation Ready"
            if len(serving) > want:
                waiting = f"{plural(len(serving) - want, 'extra pod')} pending termination"
        components.append({
            "name": cname, "type": comp.get("type"), "worker": worker, "replicas": desired, "nodeCount": per_group,
            "workloads": workloads, "pods": len(serving), "podsReady": ready, "podsDesired": want,
            "oldPods": len(old), "oldPodsReady": sum(evidence.ready(p) for p in old),
            "done": waiting is None, "waiting": waiting})
    pcs = [workload_state("PodCliqueSet", w) for w in inputs.workloads.get("PodCliqueSet") or []]

    generations = _generations(inputs, target)
    old_dcds = [d for d in inputs.dcds if is_old(d)]
    ready_cond = evidence.condition(dgd, "Ready") or {}
    waiting = None
    if observed < generation:
        waiting = f"the operator has not observed generation {generation} yet (observed {observed})"
    elif phase in PHASES_IN_PROGRESS:
        waiting = f"the operator's rolling update is {phase}"
    else:
        waiting = next((f"{p['kind']} {p['name']}: {p['waiting']}" for p in pcs if not p["done"]), None)
        waiting = waiting or next((f"{c['name']}: {c['waiting']}" for c in components if not c["done"]), None)
        if waiting is None and ready_cond.get("status") != "True":
            waiting = f"the DGD's Ready condition is {ready_cond.get('status') or 'absent'}" + (
                f" ({ready_cond.get('reason')})" if ready_cond.get("reason") else "")
    multinode = any(c.get("multinode") for c in _spec_components(dgd))
    not_supported = any(e.get("reason") == "RollingUpdateNotSupported" for e in inputs.events)
    old_objects = [f"DynamoComponentDeployment {_meta(d).get('name')}" for d in old_dcds] + [
        f"{kind} {_meta(w).get('name')}" for kind in WORKLOAD_KINDS for w in inputs.workloads.get(kind) or [] if is_old(w)]
    cause = None
    if old_objects and multinode and phase not in PHASES_IN_PROGRESS:
        cause = ("the operator does not roll multinode DGDs: it created the new worker generation and left "
                 f"the old one ({', '.join(sorted(old_objects))}) running (RollingUpdateNotSupported)")
    return {
        "name": meta.get("name") or "", "namespace": meta.get("namespace") or "default",
        "generation": generation, "observedGeneration": observed,
        "workerHash": {"stored": sorted(stored), "target": sorted(target)},
        "rollingUpdate": rolling_update_json(dgd),
        "ready": {"status": ready_cond.get("status"), "reason": ready_cond.get("reason"),
                  "message": ready_cond.get("message")},
        "components": components, "podCliqueSets": pcs, "generations": generations,
        "oldWorkerDCDs": sorted(_meta(d).get("name", "") for d in old_dcds),
        "rollingUpdateNotSupported": not_supported,
        "done": waiting is None, "waiting": waiting, "cause": cause,
    }


def _generations(inputs: RolloutInputs, target: Set[str]) -> List[Generation]:
    """The worker generations present, oldest first: one per worker hash on the DCDs, workloads and pods."""
    by_hash: Dict[str, Generation] = {}

    def entry(h: str) -> Generation:
        return by_hash.setdefault(h, {"revision": 0, "hash": h, "created": None, "dcds": [], "workloads": [],
                                      "pods": 0, "podsReady": 0, "current": h in target})

    def seen(e: Generation, obj: dict) -> None:
        created = _meta(obj).get("creationTimestamp")
        if created and (e["created"] is None or created < e["created"]):
            e["created"] = created

    for d in inputs.dcds:
        h = worker_hash(d)
        if h:
            e = entry(h)
            e["dcds"].append(_meta(d).get("name") or "")
            seen(e, d)
    for kind in WORKLOAD_KINDS:
        for w in inputs.workloads.get(kind) or []:
            h = worker_hash(w)
            if h:
                e = entry(h)
                e["workloads"].append(f"{kind}/{_meta(w).get('name')}")
                seen(e, w)
    for p in inputs.pods:
        h = worker_hash(p)
        if h and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            e = entry(h)
            e["pods"] += 1
            e["podsReady"] += evidence.ready(p)
            seen(e, p)
    out = sorted(by_hash.values(), key=lambda e: (e["created"] or "", e["hash"]))
    for i, e in enumerate(out, 1):
        e["revision"] = i
        e["dcds"].sort()
        e["workloads"].sort()
    return out


def selector(dgd_name: str) -> str:
    return f"{DGD_LABEL}={dgd_name}"


def progress_key(assessment: RolloutStatus) -> tuple:
    """What counts as progress (restarts the --timeout progress deadline): any counter moving."""
    return (assessment["observedGeneration"], assessment["rollingUpdate"].get("phase"),
            tuple(tuple(assessment["workerHash"]["target"])),
            tuple((c["name"], c["pods"], c["podsReady"], c["oldPods"], c["oldPodsReady"],
                   tuple((w["name"], w["updated"], w["ready"], w["available"]) for w in c["workloads"]))
                  for c in assessment["components"]),
            tuple((p["name"], p["updated"], p["available"]) for p in assessment["podCliqueSets"]),
            assessment["ready"]["status"])
