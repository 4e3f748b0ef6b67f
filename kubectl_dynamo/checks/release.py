"""Why a Helm release's workloads are not ready: doctor's classifiers (checks/causes.py) on what the
controllers, the API server and the scheduler said about them.

For each workload Helm still waits for (model/release.py): the create failures of the workload and of the
ReplicaSets it owns (``FailedCreate`` Warning events about the live objects, model/evidence.py; else a
Deployment's ``ReplicaFailure`` condition, which the deployment controller copies from its ReplicaSet,
kubernetes@v1.33 pkg/controller/deployment/sync.go ``calculateStatus``), then each of its pods that is not
Ready: the scheduler's words on a pod it cannot place, a container's waiting reason, the pod's last
Warning event. ``causes.create_failed`` and ``causes.unschedulable`` turn them into the cause and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Set, Tuple

from kubectl_dynamo.checks import causes
from kubectl_dynamo.checks.scheduling import CREATE_FAILED
from kubectl_dynamo.model import evidence
from kubectl_dynamo.model.release import Workload, pods_of
from kubectl_dynamo.model.views import classify

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import BlockedEvidence, InstallBlocked

# The pod's own Warning events that say why it is not Ready once it runs (the kubelet's reasons,
# kubernetes@v1.33 pkg/kubelet/events/event.go); FailedScheduling repeats the PodScheduled condition.
POD_REASONS = ("FailedMount", "FailedAttachVolume", "Unhealthy", "BackOff", "Failed", "FailedCreatePodSandBox")


@dataclass
class Blocked:
    """A workload Helm waits for, what was said about it, and the causes found in that."""

    workload: Workload
    evidence: List[BlockedEvidence] = field(default_factory=list)
    causes: List[causes.Cause] = field(default_factory=list)

    def as_json(self) -> InstallBlocked:
        w = self.workload
        return {"object": w.ref(), "ready": w.ready, "desired": w.desired, "evidence": self.evidence,
                "causes": [{"kind": c.kind, "what": c.what, "fix": c.fix} for c in self.causes]}


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _ref(obj: dict, kind: str) -> dict:
    return {"kind": kind, "namespace": _meta(obj).get("namespace"), "name": _meta(obj).get("name")}


def _owned(owner: dict, items: List[dict]) -> List[dict]:
    uid = _meta(owner).get("uid")
    return [o for o in items if uid and any(r.get("uid") == uid for r in _meta(o).get("ownerReferences") or [])]


def _events_about(obj: dict, kind: str, events: List[dict]) -> List[dict]:
    """The Warning events about ``obj`` as it exists now, newest last."""
    meta = _meta(obj)
    mine = [e for e in events if (e.get("involvedObject") or {}).get("kind") == kind
            and (e.get("involvedObject") or {}).get("name") == meta.get("name")
            and (e.get("involvedObject") or {}).get("namespace") == meta.get("namespace")
            and e.get("type", "Warning") == "Warning" and evidence.about(e, obj)]
    return sorted(mine, key=lambda e: str(evidence.event_time(e) or ""))


class _Found:
    def __init__(self, blocked: Blocked):
        self.blocked = blocked
        self.seen: Set[Tuple[str, str]] = set()

    def add(self, obj: dict, reason: str, message: str, found: List[causes.Cause]) -> None:
        if (reason, message) in self.seen:  # several pods or ReplicaSets saying the same: once
            return
        self.seen.add((reason, message))
        self.blocked.evidence.append({"object": obj, "reason": reason, "message": message})
        found = [causes.for_chart(c) for c in found]  # the fixes say where a chart's pods come from
        self.blocked.causes += [c for c in found if c not in self.blocked.causes]


def _create_failures(w: Workload, objects: Dict[str, List[dict]], found: _Found) -> None:
    sources = [(w.raw, w.kind)] + [(rs, "ReplicaSet") for rs in _owned(w.raw, objects.get("ReplicaSet") or [])]
    said = False
    for obj, kind in sources:
        failed = [e for e in _events_about(obj, kind, objects.get("Event") or [])
                  if CREATE_FAILED.search(e.get("reason") or "")]
        if failed:
            e, said = failed[-1], True
            message = e.get("message") or ""
            cause = causes.create_failed(message, w.namespace)
            found.add(_ref(obj, kind), e.get("reason") or "FailedCreate", message, [cause] if cause else [])
    if not said:
        cond = evidence.condition(w.raw, "ReplicaFailure")
        if cond and cond.get("status") == "True" and cond.get("message"):
            cause = causes.create_failed(cond["message"], w.namespace)
            found.add(w.ref(), cond.get("reason") or "ReplicaFailure", cond["message"], [cause] if cause else [])


def _pod_reasons(pod: dict, events: List[dict], nodes: Callable[[], List[dict]], found: _Found) -> None:
    info = classify(pod)
    if info.ready or info.phase == "Succeeded":
        return
    ref = info.obj()
    if not info.scheduled:
        words = info.scheduler_words()
        if words:
            found.add(ref, "Unschedulable", words, causes.unschedulable(words, info.spec, nodes(), info.namespace))
        elif info.gates:
            found.add(ref, "SchedulingGated", f"held by scheduling gates {', '.join(info.gates)}", [])
        else:
            found.add(ref, "NotScheduled", f"no scheduler has placed it yet (spec.schedulerName {info.scheduler})", [])
        return
    for cs in (info.status.get("initContainerStatuses") or []) + (info.status.get("containerStatuses") or []):
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") and waiting["reason"] not in ("ContainerCreating", "PodInitializing"):
            found.add(ref, waiting["reason"], f"container {cs.get('name')}: {waiting.get('message') or waiting['reason']}",
                      [])
            return
    said = [e for e in _events_about(pod, "Pod", events) if e.get("reason") in POD_REASONS]
    if said:
        found.add(ref, said[-1].get("reason") or "", said[-1].get("message") or "", [])


def blocking(items: List[Workload], objects: Dict[str, List[dict]],
             nodes: Callable[[], List[dict]] = list) -> List[Blocked]:
    """The workloads of ``items`` Helm still waits for, each with what was said about it and its causes.
    ``objects``: kind -> the namespace's ReplicaSet, Pod and Event lists; ``nodes()`` the cluster's nodes,
    read only when a scheduler's words need them."""
    out = []
    for w in items:
        if w.done:
            continue
        b = Blocked(w)
        found = _Found(b)
        _create_failures(w, objects, found)
        for pod in pods_of(w, objects.get("Pod") or []):
            _pod_reasons(pod, objects.get("Event") or [], nodes, found)
        out.append(b)
    return out


def first_cause(blocked: List[Blocked]) -> Optional[str]:
    """One line of the first thing known to block the release: a cause, else what was said."""
    for b in blocked:
        if b.causes:
            return f"{b.workload.label()}: {b.causes[0].what}"
    for b in blocked:
        if b.evidence:
            e = b.evidence[0]
            return f"{b.workload.label()}: {e['object']['kind']} {e['object']['name']} {e['reason']}: {e['message']}"
    return None
