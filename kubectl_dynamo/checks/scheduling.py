"""Per-DGD checks on what the schedulers and controllers say about a DGD's groups.

Each finding quotes the scheduler's or controller's own words: the pod's ``PodScheduled`` condition,
a Volcano or KAI PodGroup's conditions, a Warning event of an object in the DGD's lineage, a Node's
``Ready`` condition. Facts about the upstream objects, with their sources:

- Volcano PodGroup (volcano-sh/apis@v1.12.2 pkg/apis/scheduling/v1beta1/types.go; pod reasons
  Unschedulable / Schedulable in volcano@v1.10.0 docs/design/scheduling-reason.md): ``status.phase``
  Pending / Inqueue / Running / Unknown / Completed; condition ``Unschedulable`` with reason
  ``NotEnoughResources``. A ``Running`` PodGroup keeps its last ``Unschedulable`` condition (seen on
  every healthy recorded group), so only the phase says whether Volcano holds the gang.
- LWS's volcano provider (kubernetes-sigs/lws@v0.9.0 pkg/schedulerprovider/volcano_provider.go) creates
  the PodGroup and annotates the pods ``scheduling.k8s.io/group-name``; it does not set ``schedulerName``,
  and the Dynamo operator renders LWS templates without one (ai-dynamo/dynamo@2a6da14c deploy/operator/
  internal: ``SchedulerName`` is set only in dynamo/grove.go, for Grove cliques): such pods are bound by ``default-scheduler``, which ignores
  the PodGroup.
- KAI PodGroup (kai-scheduler/KAI-Scheduler@v0.17.0 pkg/apis/scheduling/v2alpha2/podgroup_types.go):
  ``spec.minMember``, ``status.schedulingConditions[]`` (type ``UnschedulableOnNodePool``, ``nodePool``,
  ``reasons[].message``). KAI before v0.17.0 (v0.15.2 pkg/podgrouper/podgrouper/hub/hub.go) maps only the
  ``nvidia.com/v1alpha1`` DynamoGraphDeployment owner to the Grove grouper; a v1beta1 DGD falls back to
  one PodGroup with ``minMember: 1`` (recorded: tests/data/recorded/grove-kai0152-gang-partial).
- A scheduler that runs writes ``PodScheduled`` on every pod it fails to place (kubernetes@v1.33
  pkg/scheduler/schedule_one.go; Volcano and KAI do the same): a pod without the condition long after
  its creation has no scheduler looking at it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional

from kubectl_dynamo.checks import causes
from kubectl_dynamo.checks.registry import Finding, check
from kubectl_dynamo.findings.catalogue import entry
from kubectl_dynamo.model import evidence
from kubectl_dynamo.model.platform import available, image_tag
from kubectl_dynamo.model.snapshot import webhook_configurations
from kubectl_dynamo.operator import versions, webhook
from kubectl_dynamo.operator.api import ANN_KAI_QUEUE, ANN_VOLCANO_QUEUE
from kubectl_dynamo.words import plural

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import Cause

GANG_SCHEDULERS = {"volcano": "volcano", "kai-scheduler": "kai"}  # schedulerName -> PodGroup flavour
SCHEDULER_OF = {flavour: name for name, flavour in GANG_SCHEDULERS.items()}
HELD_PHASES = ("Pending", "Inqueue")  # Volcano PodGroup phases before its gang is placed
KAI_GANG_MINIMUM = "v0.17.0"  # first KAI whose podgrouper groups v1beta1 DGDs (see above)
# A running scheduler acts on a new pod within a cycle or two (kube-scheduler at once; Volcano's
# default schedule-period is 1s, volcano@v1.10.0 cmd/scheduler/app/options/options.go): 15 s without a
# PodScheduled condition or an event is no scheduler at all.
NO_SCHEDULER_AFTER_S = 15
# The Deployments that run each scheduler, by their charts' labels (volcano installer/helm/chart/volcano
# templates/scheduler.yaml ``app: volcano-scheduler``; KAI's operator names its operand ``kai-scheduler-*``).
SCHEDULER_DEPLOYMENT = {"volcano": lambda d: _labels(d).get("app") == "volcano-scheduler",
                        "kai-scheduler": lambda d: d["metadata"]["name"].startswith("kai-scheduler")}
CREATE_FAILED = re.compile(r"FailedCreate|CreateFailed|FailedToCreate(?!Endpoint)")
FIX_VOLCANO = ("put the pods on Volcano: schedulerName: volcano in the component's podTemplate (and role "
               "templates); the operator does not set it on the LWS path, and LWS only creates the PodGroup")
FIX_KAI = "put the pods on KAI: the operator sets schedulerName kai-scheduler when its KAI gate is on"
FIX_NO_GANG = ("use a gang scheduler: KAI for Grove (global.kai-scheduler.enabled=true), Volcano for LWS "
               "(schedulerName: volcano in the pod templates)")
GPU_SHORT = ("Insufficient nvidia.com/gpu", "didn't have enough resources: GPUs")


def _labels(o: dict) -> dict:
    return (o.get("metadata") or {}).get("labels") or {}


def _multinode_groups(view):
    for c in view.components:
        if c.expected["multinode"]:
            for g in c.groups.values():
                yield c, g


def _f(view, code: str, obj: dict, message: str, hint: str, *, c=None, g=None, severity: Optional[str] = None,
       cause: Optional[Cause] = None) -> Finding:
    return Finding(code, severity or entry(code).severity, message, hint, object=obj, cause=cause,
                   where=view.where(c.name if c is not None else None, g.index if g is not None else None))


def _quote(words: Optional[str]) -> str:
    return f'"{(words or "").strip()}"'


def _distinct(words: List[str]) -> List[str]:
    seen: List[str] = []
    for w in words:
        if w and w not in seen:
            seen.append(w)
    return seen


def gpu_short(words: Optional[str]) -> bool:
    """kube-scheduler's or KAI's words for 'no node has enough free GPUs' (``Insufficient nvidia.com/gpus``,
    a typo of the resource, is not: no node has that resource at all)."""
    return causes.GPU in causes.insufficient(words) or GPU_SHORT[1] in (words or "")


def scheduler_causes(view, pods) -> List[causes.Cause]:
    """The causes in the scheduler's words for these waiting pods (one diagnosis per distinct sentence)."""
    nodes = list((view.index.nodes or {}).values()) if view.index else []
    out: List[causes.Cause] = []
    seen = set()
    for p in pods:
        words = p.scheduler_words()
        if words in seen:
            continue
        seen.add(words)
        out += [c for c in causes.unschedulable(words, p.spec, nodes, p.namespace,
                                                claims=view.snapshot.persistentvolumeclaims,
                                                classes=view.snapshot.storageclasses) if c not in out]
    return out


def _pg_obj(pg: dict) -> dict:
    return {"kind": "PodGroup", "namespace": pg["metadata"].get("namespace"), "name": pg["metadata"]["name"],
            "apiVersion": pg.get("apiVersion")}


def group_podgroup(view, g) -> Optional[dict]:
    """The PodGroup the group's pods name (the first found)."""
    for p in g.pods:
        pg = view.index.podgroup(p) if view.index else None
        if pg is not None:
            return pg
    return None


def kai_words(pg: dict) -> List[str]:
    """KAI's scheduling conditions, per node pool, in its own words."""
    out = []
    for sc in (pg.get("status") or {}).get("schedulingConditions") or []:
        if sc.get("status", "True") != "True":
            continue
        reasons = [r.get("message") or r.get("reason") for r in sc.get("reasons") or []] or [sc.get("message")]
        pool = f"node pool {sc['nodePool']}: " if sc.get("nodePool") else ""
        out += [pool + r for r in reasons if r]
    return _distinct(out)


@dataclass(frozen=True)
class Gang:
    """Whether a group's gang is enforced; if not, why (in the objects' own terms) and the fix."""

    enforced: bool
    podgroup: Optional[dict] = None
    why: str = ""
    fix: str = ""
    cause: Optional[Cause] = None  # a finding that explains it (KAI too old)


def enforcement(view, g) -> Gang:
    """Whether the group's gang is enforced (a PodGroup of the pods' own gang scheduler covering the group)."""
    pods = [p for p in g.pods if p.phase not in ("Succeeded", "Failed")]
    schedulers = sorted({p.scheduler for p in pods})
    pg = group_podgroup(view, g)
    kind = (pods[0].pod_group or (None,))[0] if pods else None
    if pg is None and kind is None:
        if all(s not in GANG_SCHEDULERS for s in schedulers):
            return Gang(False, None, f"no gang scheduler: the pods are bound by {', '.join(schedulers)} and belong "
                                     "to no PodGroup", FIX_NO_GANG)
        return Gang(True)
    flavour = "Volcano" if kind == "volcano" else "KAI"
    want = SCHEDULER_OF[kind or "kai"]
    name = pg["metadata"]["name"] if pg else (pods[0].pod_group or ("", ""))[1]
    off = [s for s in schedulers if s != want]
    if off:
        phase = ((pg or {}).get("status") or {}).get("phase")
        state = f" (phase {phase})" if phase else ""
        return Gang(False, pg, f"{flavour} PodGroup {name}{state} exists but the pods are bound by {', '.join(off)}, "
                               "which ignores it", FIX_VOLCANO if kind == "volcano" else FIX_KAI)
    if pg is not None and kind == "kai":
        minimum = (pg.get("spec") or {}).get("minMember")
        if isinstance(minimum, int) and minimum < len(pods):
            cause: Optional[Cause] = None
            kai = _kai_version(view)
            why = (f"KAI PodGroup {name} has minMember {minimum} for the {len(pods)} pods of the group, so KAI "
                   "places them one by one")
            if kai and versions.parse(kai) and not versions.tag_at_least(kai, KAI_GANG_MINIMUM):
                why += (f" (KAI {kai} < {KAI_GANG_MINIMUM}: its podgrouper maps only v1alpha1 DGDs and falls back "
                        "to minMember 1 for this v1beta1 DGD)")
                cause = {"code": "orchestrator-too-old", "object": {"kind": "Cluster", "namespace": None, "name": None}}
            return Gang(False, pg, why, f"upgrade KAI Scheduler to {KAI_GANG_MINIMUM} or newer (its podgrouper then "
                                        "groups the PodGang with the gang's minMember)", cause)
    return Gang(True, pg)


def _kai_version(view) -> Optional[str]:
    from kubectl_dynamo.model.platform import _is_kai_operator

    op = [d for d in view.index.deployments if _is_kai_operator(d)] if view.index else []
    if not op:
        return None
    c = ((op[0].get("spec") or {}).get("template") or {}).get("spec", {}).get("containers") or [{}]
    tag = image_tag(c[0].get("image"))
    return tag[: -len("-fips")] if tag and tag.endswith("-fips") else tag


@check("gang-not-enforced", scope="dgd")
def gang_not_enforced(view) -> Iterator[Finding]:
    """A group's gang is not enforced: a PodGroup exists but the pods are not on its scheduler, its
    minMember is below the group size, or there is no gang scheduler at all."""
    for c, g in _multinode_groups(view):
        e = enforcement(view, g)
        if e.enforced:
            continue
        placed, waiting = g.placed, g.waiting
        partial = bool(placed and waiting)
        found = scheduler_causes(view, waiting) if partial else []
        if found and not any(gpu_short(p.scheduler_words()) for p in waiting):
            continue  # gang-partial says it, the placement cause first and this gang's fix after it (one cause, once)
        state = (f"{len(placed)} of {len(g.pods)} pods are placed and hold their GPUs while "
                 f"{', '.join(p.name for p in waiting)} wait" if partial else
                 "nothing holds the group together: a shortage places part of it")
        if found:  # why the rest waits: the first thing to fix
            state += f" because {'; '.join(x.what for x in found)}"
        obj = _pg_obj(e.podgroup) if e.podgroup else view.obj()
        yield _f(view, "gang-not-enforced", obj, f"component {c.name} group {g.index}: {e.why}; {state}",
                 "".join(f"{x.fix}; " for x in found) + ("then " if found else "") + e.fix,
                 c=c, g=g, severity="error" if partial else "info", cause=e.cause)


@check("queue-annotation-ignored", scope="dgd")
def queue_annotation_ignored(view) -> Iterator[Finding]:
    """A queue annotation of the DGD that the path it renders on does not read (the rule explain applies
    offline), with the queue its pods' PodGroups actually name; silent when they name that queue anyway
    (it was set where the path reads it, e.g. on the LeaderWorkerSet)."""
    ex = view.explained
    live: Dict[str, Dict[str, str]] = {}  # annotation -> the queues the pods' PodGroups of that scheduler name
    for _, g in _multinode_groups(view):
        pg = group_podgroup(view, g)
        flavour = (next((p.pod_group for p in g.pods if p.pod_group), None) or (None,))[0]
        if pg is not None and flavour in ("volcano", "kai"):
            queue = (pg.get("spec") or {}).get("queue") or ("default" if flavour == "volcano" else "")
            live.setdefault(ANN_VOLCANO_QUEUE if flavour == "volcano" else ANN_KAI_QUEUE, {})[queue] = \
                pg["metadata"]["name"]
    annotations = {k: v for k, v in ((view.raw.get("metadata") or {}).get("annotations") or {}).items()
                   if not (isinstance(v, str) and v.strip() in live.get(k, {}))}
    named = [f"{'Volcano' if a == ANN_VOLCANO_QUEUE else 'KAI'} queue {q} (PodGroup {pg})"
             for a, qs in sorted(live.items()) for q, pg in sorted(qs.items())]
    gets = ", ".join(named) or webhook.queue_of(ex.get("orchestrator"), ex.get("scheduler"), ex.get("queue"))
    for f in webhook.queue_annotation_ignored(ex.get("orchestrator"), ex.get("scheduler"), annotations, gets=gets,
                                              namespace=view.namespace, dgd=view.name):
        yield _f(view, f["code"], view.obj(), f["message"], f["hint"])


def held_by(view, need: int, pending) -> str:
    """Who holds the GPUs of the nodes that would otherwise fit (model/placement.held_by), computed once a run."""
    from kubectl_dynamo.model import placement

    if view.index is None or view.index.nodes is None:
        return ""
    cached = getattr(view.index, "_placement", None)
    if cached is None:
        pods = view.snapshot.pods or []
        cached = (placement.placement(list(view.index.nodes.values()), pods),
                  {((x.get("metadata") or {}).get("namespace"), (x.get("metadata") or {}).get("name")): x for x in pods})
        view.index._placement = cached
    return placement.held_by(cached[0], need, cached[1], pending.raw)


@check("gang-held", scope="dgd")
def gang_held(view) -> Iterator[Finding]:
    """The gang scheduler holds the whole group back (Volcano PodGroup Pending/Inqueue, KAI
    scheduling conditions): it places all pods or none."""
    for c, g in _multinode_groups(view):
        waiting = g.waiting
        if not waiting or g.placed:
            continue
        pg = group_podgroup(view, g)
        on = {p.scheduler for p in waiting}
        if pg is None or not on <= set(GANG_SCHEDULERS):
            continue
        pod_words = _distinct([p.scheduler_words() for p in waiting if p.scheduler_words()])
        if (waiting[0].pod_group or ("",))[0] == "volcano":
            phase = (pg.get("status") or {}).get("phase")
            queue = causes.volcano_queue(pg, view.snapshot.facts.volcano_queues, [p.raw for p in g.pods])
            # Volcano never writes to a PodGroup whose queue does not exist (v1.10.0, recorded
            # lws-direct-volcano-queue-missing): no phase, yet it holds the gang for good.
            if phase not in HELD_PHASES and not (queue and queue.kind == "queue-missing"):
                continue
            cond = evidence.condition(pg, "Unschedulable") or {}
            said = f"condition Unschedulable/{cond.get('reason')}: {_quote(cond.get('message'))}" if cond else \
                "no condition yet"
            msg = (f"component {c.name} group {g.index}: Volcano holds the gang"
                   f"{': ' + queue.what if queue else ''} (PodGroup {pg['metadata']['name']} "
                   f"{'phase ' + phase if phase else 'never updated by Volcano'}, minMember "
                   f"{(pg.get('spec') or {}).get('minMember')}, {said})")
        else:
            queue = None
            words = kai_words(pg)
            if not words and not pod_words:
                continue
            msg = (f"component {c.name} group {g.index}: KAI holds the gang (PodGroup {pg['metadata']['name']}, "
                   f"queue {(pg.get('spec') or {}).get('queue')}: {'; '.join(_quote(w) for w in words) or 'no condition'})")
        if pod_words:
            msg += f"; the pods say {'; '.join(_quote(w) for w in pod_words[:2])}"
        need = c.expected.get("gpusPerPod")
        if isinstance(need, int) and need and (any(gpu_short(w) for w in pod_words) or "NotEnoughResources" in msg):
            msg += held_by(view, need, waiting[0])  # who holds the GPUs the gang waits for
        msg += grove_words(view, g)
        describe = (f"kubectl describe podgroups.{pg.get('apiVersion', '/').split('/')[0]} -n "
                    f"{pg['metadata'].get('namespace')} {pg['metadata']['name']}")
        yield _f(view, "gang-held", _pg_obj(pg), msg,
                 f"{queue.fix} ({describe})" if queue else
                 "the gang needs room for all its pods at once: free GPUs or nodes, shrink nodeCount × GPUs per pod, "
                 f"or check the queue ({describe})", c=c, g=g)


@check("group-pending", scope="dgd")
def group_pending(view) -> Iterator[Finding]:
    """No pod of a group is placed (or, under an enforced gang, a replacement pod of a running gang
    waits), with the scheduler's reason."""
    for c, g in _multinode_groups(view):
        waiting = g.waiting
        words = _distinct([p.scheduler_words() for p in waiting])
        if not waiting or not words:
            continue
        if g.placed:
            if not enforcement(view, g).enforced:
                continue  # gang-not-enforced / gang-partial say it
            what = (f"{plural(len(waiting), 'replacement pod')} of its running gang {'waits' if len(waiting) == 1 else 'wait'} "
                    f"({', '.join(p.name for p in waiting)}) on {waiting[0].scheduler}")
        else:
            what = f"all {len(g.pods)} pods are Pending on {', '.join(sorted({p.scheduler for p in waiting}))}"
        found = scheduler_causes(view, waiting)
        because = f": {'; '.join(x.what for x in found)}" if found else ""
        yield _f(view, "group-pending", view.obj(),
                 f"component {c.name} group {g.index}: {what}{because}; the scheduler says "
                 f"{'; '.join(_quote(w) for w in words[:3])}"
                 + ("" if any(x.kind == "cordoned" for x in found) else _cordoned(view)) + grove_words(view, g),
                 ("; ".join(x.fix for x in found) if found else
                  "act on the scheduler's reason: uncordon or add nodes, free GPUs, create the queue")
                 + f" (kubectl describe pod -n {waiting[0].namespace} {waiting[0].name})", c=c, g=g)


def grove_words(view, g) -> str:
    """Grove's own verdict on the group's PodCliques: ``PodCliqueScheduled`` False or ``MinAvailableBreached``
    True (ai-dynamo/grove@v0.1.0-alpha.12-rc1 operator/api/core/v1alpha1 podclique conditions)."""
    if view.index is None:
        return ""
    said = []
    for clique in sorted({str(p.labels["grove.io/podclique"]) for p in g.pods
                          if p.labels.get("grove.io/podclique")}):
        obj = view.index.objects.get(("PodClique", g.pods[0].namespace, clique))
        for kind, bad in (("PodCliqueScheduled", "False"), ("MinAvailableBreached", "True")):
            cond = evidence.condition(obj or {}, kind)
            if cond and cond.get("status") == bad:
                said.append(f"{clique} {kind} {bad}: {_quote(cond.get('message'))}")
                break
    return f"; Grove says {'; '.join(said)}" if said else ""


def _cordoned(view) -> str:
    """How many nodes are cordoned (``spec.unschedulable``), when any is: the usual 'node(s) were unschedulable'."""
    nodes = list((view.index.nodes or {}).values()) if view.index else []
    cordoned = sorted(n["metadata"]["name"] for n in nodes if (n.get("spec") or {}).get("unschedulable"))
    if not cordoned:
        return ""
    return f" ({len(cordoned)} of {len(nodes)} nodes are cordoned: {', '.join(cordoned[:4])}{' …' * (len(cordoned) > 4)})"


@check("scheduler-not-running", scope="dgd")
def scheduler_not_running(view) -> Iterator[Finding]:
    """Pods name a scheduler that never looked at them: no PodScheduled condition and no event long after
    their creation (the scheduler is not running, or hung while its Deployment looks Available)."""
    now = view.snapshot.taken_at
    from kubectl_dynamo.model.views import seconds_between

    for c, g in _multinode_groups(view):
        idle = []
        for p in g.waiting:
            age = seconds_between(p.created, now)
            seen = any((e.get("source") or {}).get("component") == p.scheduler or
                       e.get("reportingComponent") == p.scheduler
                       for e in (view.index.events.get(("Pod", p.namespace, p.name), []) if view.index else []))
            if p.scheduler != "default-scheduler" and p.condition("PodScheduled") is None and not seen and \
                    age is not None and age >= NO_SCHEDULER_AFTER_S:
                idle.append((p, age))
        if not idle:
            continue
        sched = idle[0][0].scheduler
        match = SCHEDULER_DEPLOYMENT.get(sched)
        deps = [d for d in view.index.deployments if match(d)] if match and view.index else []
        state = (f"its Deployment {deps[0]['metadata']['name']} looks Available, yet it did not act (hung?)"
                 if deps and all(available(d) for d in deps) else
                 f"Deployment {deps[0]['metadata']['name']} is not Available" if deps else
                 f"no {sched} Deployment was found")
        yield _f(view, "scheduler-not-running", view.obj(),
                 f"component {c.name} group {g.index}: {plural(len(idle), 'pod')} with schedulerName {sched} "
                 f"{'has' if len(idle) == 1 else 'have'} no "
                 f"PodScheduled condition and no event after {int(max(a for _, a in idle))}s: no {sched} scheduler is "
                 f"handling them ({state})",
                 f"start (or restart) the {sched} scheduler, or remove schedulerName {sched} from the pod templates",
                 c=c, g=g)


def _node_problem(node: Optional[dict]) -> Optional[str]:
    if node is None:
        return "does not exist"
    ready = evidence.condition(node, "Ready")
    if ready is None or ready.get("status") != "True":
        said = f": {_quote(ready.get('message'))}" if ready and ready.get("message") else ""
        return f"is NotReady (Ready {ready.get('status') if ready else 'unknown'}{said})"
    return None


@check("pod-on-unavailable-node", scope="dgd")
def pod_on_unavailable_node(view) -> Iterator[Finding]:
    """A group pod is bound to a node that no longer exists or is NotReady: it still reports
    Running/Ready until the pod garbage collector or the node lifecycle controller acts."""
    nodes = view.index.nodes if view.index else None
    if nodes is None:
        return
    for c, g in _multinode_groups(view):
        for p in g.placed:
            problem = _node_problem(nodes.get(p.node))
            if problem:
                yield _f(view, "pod-on-unavailable-node", p.obj(),
                         f"{p.role} rank {p.rank} of {c.name} group {g.index} is bound to node {p.node}, which "
                         f"{problem}; it still reports {p.phase}{'/Ready' if p.ready else ''}",
                         f"delete the pod so its orchestrator recreates it elsewhere (kubectl delete pod -n "
                         f"{p.namespace} {p.name}); kubectl get node {p.node}", c=c, g=g)


@check("group-on-one-node", scope="dgd")
def group_on_one_node(view) -> Iterator[Finding]:
    """Every rank of a multinode group runs on one node: one node failure takes the whole group down,
    and the engine's cross-node setup is never exercised."""
    for c, g in _multinode_groups(view):
        placed = g.placed
        nodes = {p.node for p in placed}
        if len(placed) >= 2 and len(placed) == len(g.pods) and len(nodes) == 1:
            yield _f(view, "group-on-one-node", view.obj(),
                     f"component {c.name} group {g.index}: all {len(placed)} ranks run on node {nodes.pop()}",
                     "spread the group: GPUs per pod equal to a node's GPUs, or pod anti-affinity on the hostname",
                     c=c, g=g)


def _component_of(view, key) -> Optional[str]:
    """The DGD component an object of the lineage belongs to (its own label, else its owners')."""
    from kubectl_dynamo.model.labels import COMPONENT_LABEL

    objects = view.index.objects
    seen = set()
    while key in objects and key not in seen:
        seen.add(key)
        obj = objects[key]
        comp = _labels(obj).get(COMPONENT_LABEL)
        if comp:
            return comp
        refs = (obj.get("metadata") or {}).get("ownerReferences") or []
        if not refs:
            return None
        key = (refs[0].get("kind"), key[1], refs[0].get("name"))
    return None


def _canonical(view, comp: Optional[str]) -> Optional[str]:
    return next((c.name for c in view.components if comp and c.name.lower() == comp.lower()), comp)


@check("controller-create-failed", scope="dgd")
def controller_create_failed(view) -> Iterator[Finding]:
    """A controller failed to create an object of the DGD (StatefulSet FailedCreate, e.g. a failing
    admission webhook): its Warning event explains a missing pod."""
    if view.index is None:
        return
    hooks = causes.Webhooks(webhook_configurations(view.snapshot), view.snapshot.webhook_backends)
    seen = set()
    for key in sorted(view.lineage, key=str):
        for e in view.index.events.get(key, []):
            reconcile = _operator_refused(key, e)
            if not (CREATE_FAILED.search(e.get("reason") or "") or reconcile) or key in seen:
                continue
            if evidence.superseded(key[0], view.index.objects.get(key)):
                continue  # the controller has since created everything (its status says so)
            said = e.get("message") or ""
            cause = causes.create_failed(said, key[1] or view.namespace, hooks)
            if reconcile and (cause is None or not cause.kind.startswith(("webhook", "controller-down"))):
                continue  # a reconcile error that is no admission refusal (a write conflict): retried at once
            seen.add(key)
            who = (e.get("source") or {}).get("component") or e.get("reportingComponent") or "its controller"
            if reconcile:
                who = f"{CONTROLLERS[key[0]]} ({who})"
            comp = _canonical(view, _component_of(view, key))
            group = _labels(view.index.objects.get(key, {})).get("leaderworkerset.sigs.k8s.io/group-index")
            root: Optional[Cause] = None
            fix = (f"{cause.fix}; " if cause else "fix what refuses the object (the message names it: a "
                   "webhook, a quota, a policy); ") + "the controller retries by itself"
            if cause is not None and cause.kind == "controller-down":
                # the webhook is the down controller's own: its not acting is the root (when doctor sees it)
                kind = next((k for k, who in CONTROLLERS.items() if who in cause.what), None)
                lws = _labels(view.index.objects.get(key, {})).get("leaderworkerset.sigs.k8s.io/name") or next(
                    (k[2] for k in view.index.children.get(key, []) if k[0] == "LeaderWorkerSet"), None)
                if kind == "LeaderWorkerSet" and lws:
                    root = {"code": "controller-not-reconciling",
                            "object": {"kind": kind, "namespace": key[1], "name": lws}}
                if kind:
                    fix = _restart(view, kind, "process and logs") + f"; it serves the webhook, then {who} retries"
            yield Finding("controller-create-failed", "error",
                          f"{key[0]} {key[2]}: {who} {e.get('reason')} (x{e.get('count') or 1})"
                          f"{': ' + cause.what if cause else ''}; it says {_quote(said)}", fix,
                          object={"kind": key[0], "namespace": key[1], "name": key[2]},
                          where=view.where(comp, int(group) if group and group.isdigit() else None), cause=root)


# A controller that runs writes a status within seconds of a create (LWS, Grove and the Dynamo operator each
# do: every object of those kinds in every recorded state has one, even a DGD the operator failed to render,
# grove-queue-missing); one still without any this long after its creation has never been processed.
NEVER_PROCESSED_AFTER_S = 60


def _operator_refused(key, event: dict) -> bool:
    """The Dynamo operator's ``ReconcileError`` Warning on its DCD or DGD (recorded: lws-rollout-single-node,
    "Failed to reconcile DynamoComponentDeployment: ..."): its write of a workload failed, the message says why."""
    return (key[0] in ("DynamoComponentDeployment", "DynamoGraphDeployment")
            and event.get("reason") == "ReconcileError" and event.get("type") == "Warning")


def _stale(obj: dict, now: Optional[str] = None) -> Optional[str]:
    from kubectl_dynamo.model.rollout import pcs_updating
    from kubectl_dynamo.model.views import seconds_between

    gen = (obj.get("metadata") or {}).get("generation")
    observed = (obj.get("status") or {}).get("observedGeneration")
    if not obj.get("status") and isinstance(gen, int) and now and not (obj.get("metadata") or {}).get("deletionTimestamp"):
        age = seconds_between((obj.get("metadata") or {}).get("creationTimestamp"), now)
        if age is not None and age > NEVER_PROCESSED_AFTER_S:
            return f"has no status {age:.0f}s after its creation (generation {gen} never processed)"
    if obj.get("kind") == "PodCliqueSet" and pcs_updating(obj):
        return None  # Grove writes observedGeneration only once its rolling update is over (model/rollout.py)
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        return None  # setting deletionTimestamp bumps generation (k8s.io/apiserver pkg/registry/rest/delete.go BeforeDelete)
    if isinstance(gen, int) and isinstance(observed, int) and observed < gen:
        return f"has observed generation {observed} of {gen}"
    return None


def _refusing_webhooks(view) -> Dict[str, str]:
    """Webhook name -> the controller whose own process serves it, for the webhooks the Warning events of the
    DGD's namespace say failed (configurations read only then: model/snapshot NEEDS "webhooks")."""
    from kubectl_dynamo.model.snapshot import refused_webhooks

    configs = webhook_configurations(view.snapshot)
    if not configs:
        return {}
    events = [e for e in view.snapshot.events or []
              if ((e.get("involvedObject") or {}).get("namespace") or (e.get("metadata") or {}).get("namespace"))
              == view.namespace]
    hooks = causes.Webhooks(configs, view.snapshot.webhook_backends)
    out = {}
    for name in refused_webhooks(events):
        hook = causes.webhook(name, hooks)
        if hook is not None and hook.controller:
            out[name] = hook.controller
    return out


def _who_did_not_act(view, key, obj: dict):
    """(the kind whose controller is blamed, why) for a stale object. The Dynamo operator's DCD of an LWS
    component does not progress when its write of the LeaderWorkerSet is refused: when the events say the LWS
    controller's own webhooks fail (it is down), the operator acted and LWS did not."""
    down = {n: who for n, who in _refusing_webhooks(view).items() if who == CONTROLLERS["LeaderWorkerSet"]}
    if not down or key[0] not in ("DynamoComponentDeployment", "DynamoGraphDeployment"):
        return key[0], ""
    return "LeaderWorkerSet", (f" because {CONTROLLERS['LeaderWorkerSet']} is down: its own webhook"
                               f"{'s' if len(down) > 1 else ''} {', '.join(sorted(down))} "
                               f"{'do' if len(down) > 1 else 'does'} not answer (Warning events), so "
                               f"{CONTROLLERS[key[0]]}'s writes of LeaderWorkerSets and their pods are refused; "
                               f"{CONTROLLERS[key[0]]} itself acted")


def _evidence(view, kind: str) -> str:
    """What doctor sees of the controller of ``kind``: its Deployment and whether its webhooks fail."""
    from kubectl_dynamo.model import platform

    who = CONTROLLERS.get(kind, "")
    match = {"the Dynamo operator": platform._is_dynamo_operator, "the LWS controller": platform._is_lws,
             "the Grove operator": platform._is_grove}.get(who)
    if match is None or view.index is None:
        return ""
    deps = [d for d in view.index.deployments if match(d)]
    if deps:
        d = deps[0]
        want = (d.get("spec") or {}).get("replicas", 1)
        have = (d.get("status") or {}).get("availableReplicas") or 0
        seen = (f"; its Deployment {d['metadata']['name']} -n {d['metadata'].get('namespace')} has {have}/{want} "
                "available")
    else:
        seen = f"; no Deployment of {who} is in the cluster (it runs outside it, or was removed)"
    down = sorted(n for n, w in _refusing_webhooks(view).items() if w == who)
    if down:
        seen += f"; its own webhook{'s' if len(down) > 1 else ''} {', '.join(down)} fail{'' if len(down) > 1 else 's'}"
    return seen


def controller_deployment(view, kind: str) -> str:
    """Where the controller of ``kind`` runs, as its Deployment (kubectl's words for it), when one is found."""
    from kubectl_dynamo.model import platform

    match = {"the Dynamo operator": platform._is_dynamo_operator, "the LWS controller": platform._is_lws,
             "the Grove operator": platform._is_grove}.get(CONTROLLERS.get(kind, ""))
    deps = [d for d in (view.index.deployments if view.index else []) if match and match(d)]
    if not deps:
        return "that controller"
    meta = deps[0]["metadata"]
    return f"deployment {meta['name']} -n {meta.get('namespace')}"


def _restart(view, kind: str, what: str) -> str:
    where = controller_deployment(view, kind)
    if where == "that controller":
        return f"check {CONTROLLERS.get(kind, 'its controller')}'s {what}; restart it if it is hung"
    return (f"kubectl logs {where}; restart it if it is hung (kubectl rollout restart {where}): its Deployment can "
            "look Available while it does nothing")


CONTROLLERS = {"DynamoGraphDeployment": "the Dynamo operator", "DynamoComponentDeployment": "the Dynamo operator",
               "LeaderWorkerSet": "the LWS controller", "PodCliqueSet": "the Grove operator",
               "PodClique": "the Grove operator", "PodCliqueScalingGroup": "the Grove operator"}
# componentKind in the DGD status -> the snapshot list that holds that kind (Deployments are not read).
STATUS_KINDS = {"LeaderWorkerSet": "leaderworkersets", "PodCliqueScalingGroup": "podcliquescalinggroups",
                "PodClique": "podcliques"}


@check("controller-not-reconciling", scope="dgd")
def controller_not_reconciling(view) -> Iterator[Finding]:
    """A controller does not reconcile: an object of the DGD has not observed its latest generation, or
    the DGD's status names a workload that does not exist."""
    if view.index is None:
        return
    rolling = _grove_rolling(view)  # once per DGD: it walks the whole lineage
    objs = [(("DynamoGraphDeployment", view.namespace, view.name), view.raw)]
    objs += [(k, view.index.objects[k]) for k in sorted(view.lineage, key=str)
             if k[0] in CONTROLLERS and k in view.index.objects and not (k[0] in GROVE_PARTS and rolling)]
    now = view.snapshot.taken_at
    # a LeaderWorkerSet behind its spec: the operator wrote it and LWS did not act. The operator's own objects
    # above it then wait on LWS: one cause, said once, on the LeaderWorkerSet
    lws_behind = {k for k, o in objs if k[0] == "LeaderWorkerSet" and _stale(o, now)}
    for key, obj in objs:
        stale = _stale(obj, now)
        if stale and lws_behind and (key[0] == "DynamoGraphDeployment" or (
                key[0] == "DynamoComponentDeployment" and set(view.index.children.get(key, [])) & lws_behind)):
            continue
        if stale:
            blamed, why = _who_did_not_act(view, key, obj)
            yield Finding("controller-not-reconciling", "error",
                          f"{key[0]} {key[2]} {stale}: {CONTROLLERS[blamed]} has not acted on its last change"
                          + why + _evidence(view, blamed),
                          _restart(view, blamed, "logs"),
                          object={"kind": key[0], "namespace": key[1], "name": key[2]},
                          where=view.where(_canonical(view, _component_of(view, key)) if key[0] != "DynamoGraphDeployment"
                                           else None))
    yield from _grove_service_not_recreated(view)
    yield from _status_claims_missing_pods(view)
    # The DGD's own status names the workloads it created; one that is gone was not recreated.
    for comp, st in sorted(((view.raw.get("status") or {}).get("components") or {}).items()):
        kind = st.get("componentKind")
        plural = STATUS_KINDS.get(kind or "")
        if not plural or getattr(view.snapshot, plural, None) is None:
            continue  # that kind was not read: nothing to say
        for name in st.get("componentNames") or []:
            if (kind, view.namespace, name) not in view.index.objects:
                key = ("DynamoGraphDeployment", view.namespace, view.name)
                blamed, why = _who_did_not_act(view, key, view.raw) if kind == "LeaderWorkerSet" else (key[0], "")
                yield Finding("controller-not-reconciling", "error",
                              f"the DGD's status names {kind} {name} for component {comp}, and it does not exist: "
                              + (f"{CONTROLLERS[key[0]]} has not recreated it" if blamed == key[0] else
                                 f"{CONTROLLERS[key[0]]} cannot create it" + why) + _evidence(view, blamed),
                              _restart(view, blamed, "logs") + ("; or re-apply the DGD" if blamed == key[0] else ""),
                              object={"kind": kind, "namespace": view.namespace, "name": name},
                              where=view.where(_canonical(view, comp)))


def _grove_service_not_recreated(view) -> Iterator[Finding]:
    """Grove owns each PodCliqueSet replica's headless Service (the pods' subdomain) but does not watch
    it: a deleted one comes back only when the PodCliqueSet is reconciled again (recorded:
    tests/data/recorded/grove-headless-svc-deleted, Grove v0.1.0-alpha.12-rc1 Available throughout)."""
    from kubectl_dynamo.model.platform import _is_grove

    if view.index is None or view.index.services is None:
        return
    have = view.index.services
    grove = [d for d in view.index.deployments if _is_grove(d)]
    if not grove or not all(available(d) for d in grove):
        return  # orchestrator-unhealthy says it
    missing = sorted({(p.namespace, p.spec.get("subdomain"), p.labels.get("app.kubernetes.io/part-of"))
                      for _, g in _multinode_groups(view) for p in g.pods
                      if "grove.io/podclique" in p.labels and p.spec.get("subdomain")
                      and (p.namespace, p.spec.get("subdomain")) not in have})
    for ns, svc, pcs in missing:
        yield Finding("controller-not-reconciling", "error",
                      f"headless Service {svc} of PodCliqueSet {pcs or '?'} is gone and the Grove operator "
                      f"(Deployment {grove[0]['metadata']['name']} Available) has not recreated it: Grove recreates it "
                      "only when it reconciles the PodCliqueSet again",
                      f"make Grove reconcile the PodCliqueSet: restart it (kubectl rollout restart deploy "
                      f"{grove[0]['metadata']['name']} -n {grove[0]['metadata'].get('namespace')}) or change the DGD",
                      object={"kind": "Service", "namespace": ns, "name": svc}, where=view.where())


# Grove's children of a PodCliqueSet: while it rolls they are deleted, recreated and relabelled one replica
# at a time, and their status trails their pods by a reconcile (recorded: grove-kai0152-rollout-scaled/01, a
# PodCliqueScalingGroup at observed generation 1 of 2; -single-node/02, a PodClique counting a pod Ready
# that was still gated when the pods were listed).
GROVE_PARTS = ("PodClique", "PodCliqueScalingGroup")


def _grove_rolling(view) -> bool:
    """A PodCliqueSet of this DGD is in the middle of Grove's rolling update (model/rollout.pcs_updating)."""
    from kubectl_dynamo.model.rollout import pcs_updating

    return view.index is not None and any(
        k[0] == "PodCliqueSet" and pcs_updating(view.index.objects.get(k) or {}) for k in view.lineage)


def _status_claims_missing_pods(view) -> Iterator[Finding]:
    """A workload's status still counts pods that are gone: its controller stopped updating it (recorded:
    lws-controller-stopped, the LeaderWorkerSet Available with readyReplicas 1 and its worker deleted;
    grove-controller-stopped, the PodClique readyReplicas 1 with no pod left)."""
    if view.index is None:
        return
    from kubectl_dynamo.model.labels import GROVE_CLIQUE, LWS_NAME

    pods = [(c, g, p) for c in view.components for g in c.groups.values() for p in g.pods]
    rolling = _grove_rolling(view)  # once per DGD: it walks the whole lineage
    for key in sorted(view.lineage, key=str):
        kind, ns, name = key
        obj = view.index.objects.get(key) or {}
        st = obj.get("status") or {}
        if kind == "PodClique":
            if rolling:
                continue
            mine = [(c, g, p) for c, g, p in pods if p.labels.get(GROVE_CLIQUE) == name]
            claimed = st.get("readyReplicas")
            have = sum(p.ready for _, _, p in mine)
            what = f"readyReplicas {claimed}"
        elif kind == "LeaderWorkerSet":
            avail = evidence.condition(obj, "Available") or {}
            size = ((obj.get("spec") or {}).get("leaderWorkerTemplate") or {}).get("size")
            mine = [(c, g, p) for c, g, p in pods if p.labels.get(LWS_NAME) == name]
            groups = {g.index for _, g, _ in mine}
            full = sum(1 for i in groups if sum(1 for _, g, _ in mine if g.index == i) >= (size or 0))
            claimed = st.get("readyReplicas") if avail.get("status") == "True" else None
            have = full
            what = f"Available, readyReplicas {claimed}"
        else:
            continue
        if not isinstance(claimed, int) or claimed <= have:
            continue
        group = _labels(obj).get("grove.io/podcliquescalinggroup-replica-index")
        where = (view.where(mine[0][0].name, mine[0][1].index) if mine else
                 view.where(_canonical(view, _component_of(view, key)), int(group) if group and group.isdigit() else None))
        yield Finding("controller-not-reconciling", "error",
                      f"{kind} {name} says {what} but only {have} {'Ready pods' if kind == 'PodClique' else 'full groups'}"
                      f" exist: {CONTROLLERS[kind]} has stopped updating it (a stopped or hung controller; its "
                      "Deployment can still look Available)" + _evidence(view, kind),
                      _restart(view, kind, "process and logs"),
                      object={"kind": kind, "namespace": ns, "name": name}, where=where)
