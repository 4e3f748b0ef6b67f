"""Per-DGD checks: the simulation's expectation against the live pods and objects.

Each check receives a ``doctor.DgdView`` and yields ``Finding``s naming the object at fault.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from kubectl_dynamo.checks import causes
from kubectl_dynamo.checks.references import configmaps_unread
from kubectl_dynamo.checks.registry import Finding, check
from kubectl_dynamo.checks.scheduling import enforcement, gpu_short, held_by, scheduler_causes
from kubectl_dynamo.operator import api

if TYPE_CHECKING:  # doctor imports this module to register its checks
    from kubectl_dynamo.model.views import PodInfo

MIN_SHM_BYTES = 8 * 1024 ** 3  # the operator's default /dev/shm
RESTARTS_CRASHLOOP = 3
MPI_KEYS = ("private.key", "private.key.pub")
WAIT_LEADER_INIT = "wait-for-leader-mp"
# Findings after which the operator renders nothing: missing pods are their consequence, not news.
BLOCKING = ("no-multinode-orchestrator", "kai-queue-missing", "scheduler-integration-conflict",
            "workload-provider-unavailable", "render-error", "backend-framework-mismatch")


def _f(code, severity, obj, message, hint, *, where=None, cause=None):
    return Finding(code, severity, message, hint, object=obj, where=where, cause=cause)


def _multinode(view):
    return [c for c in view.components if c.expected["multinode"]]


def _groups(view):
    """(component, group) for every live group of every multinode component."""
    for c in _multinode(view):
        for g in c.groups.values():
            yield c, g


def _explain_findings(view, code):
    for f in view.explained["findings"]:
        if f["code"] == code:
            where = f" (component {f['component']})" if f["component"] else ""
            yield _f(code, f["severity"], view.obj(), f["message"] + where, f["hint"], where=view.where())


# What the simulation finds in a live DGD's manifest, reported under the same codes as `explain`
# (the finding keeps the simulation's severity, e.g. a parallelism mismatch that only idles GPUs).
FROM_SIMULATION = {
    "no-multinode-orchestrator": "A multinode DGD on the component provider without LWS: the operator fails it.",
    "kai-queue-missing": "The DGD's KAI queue does not exist: the operator refuses to render it.",
    "parallelism-mismatch": "TP×PP(×DP) does not match GPUs per pod × nodeCount.",
    "no-gpu-request": "A multinode main container requests no GPUs.",
    "topology-vars-unavailable": "The manifest uses $(DYNAMO_RANK)/$(DYNAMO_LEADER_ADDRESS) but the origin is < 1.6.0.",
}


def _forward(code: str, summary: str):
    def run(view):
        yield from _explain_findings(view, code)

    run.__doc__ = summary
    run.__name__ = code.replace("-", "_")
    return run


for _code, _summary in FROM_SIMULATION.items():
    check(_code, scope="dgd")(_forward(_code, _summary))


def _replicas(view, component: str) -> int:
    """The component's ``replicas`` in the live DGD (1 when unset, as the operator defaults it)."""
    for comp in (view.raw.get("spec") or {}).get("components") or []:
        if isinstance(comp, dict) and comp.get("name") == component:
            value = comp.get("replicas")
            return value if isinstance(value, int) else 1
    return 1


@check("group-incomplete", scope="dgd")
def group_incomplete(view):
    """A multinode group has fewer pods than nodeCount (or none at all)."""
    blocking = next((f for f in view.explained["findings"] if f["severity"] == "error" and f["code"] in BLOCKING),
                    None)
    # A blocked render explains the absence: shown under that finding when doctor reports it on the DGD
    # (FROM_SIMULATION), else not at all (the cluster section says why).
    cause = {"code": blocking["code"], "object": view.obj()} if blocking else None
    said = _dgd_status_words(view)
    for c in _multinode(view):
        n = c.expected["nodeCount"]
        replicas = _replicas(view, c.name)  # one group per replica, indexed 0..replicas-1
        if not c.groups and replicas > 0:  # scaled to zero: no groups wanted
            if blocking and blocking["code"] not in FROM_SIMULATION:
                continue
            yield _f("group-incomplete", "error", view.obj(),
                     f"component {c.name}: no pods exist for its {n}-pod multinode group" + said,
                     f"kubectl get dgd {view.name} -n {view.namespace} -o yaml   (status and conditions say why "
                     f"the operator rendered nothing)", where=view.where(c.name), cause=cause)
            continue
        absent = sorted(set(range(replicas)) - set(c.groups))
        if c.groups and absent:
            yield _f("group-incomplete", "error", view.obj(),
                     f"component {c.name}: {'group' if len(absent) == 1 else 'groups'} {', '.join(map(str, absent))} "
                     f"of its {replicas} replicas {'has' if len(absent) == 1 else 'have'} no pods",
                     "check the PodCliqueScalingGroup / LeaderWorkerSet status and its events",
                     where=view.where(c.name))
        for g in c.groups.values():
            if len(g.pods) < n:
                yield _f("group-incomplete", "error", view.obj(),
                         f"component {c.name} group {g.index}: {len(g.pods)} of {n} pods exist "
                         f"(leader {len(g.role('leader'))}, workers {len(g.role('worker'))} of {n - 1})",
                         "check the PodClique / LeaderWorkerSet status and its events for why pods are not created",
                         where=view.where(c.name, g.index))


def _dgd_status_words(view) -> str:
    """The DGD's own Ready condition, when it is not True: the operator's words on what it did."""
    cond = next((c for c in (view.raw.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"),
                None)
    if not cond or cond.get("status") == "True":
        return ""
    return f"; the DGD says Ready {cond.get('status')} ({cond.get('reason')}): \"{cond.get('message')}\""


@check("insufficient-gpus", scope="dgd")
def insufficient_gpus(view):
    """Pods stay Pending because no node has enough free nvidia.com/gpu."""
    nodes = list((view.index.nodes or {}).values()) if view.index else []
    for c, g in _groups(view):
        # one finding per group: its other pods short of GPUs are the same shortage, named in it
        short = [p for p in g.pods if not p.scheduled and gpu_short(p.scheduler_words())]
        if not short:
            continue
        p, rest = short[0], short[1:]
        words = p.scheduler_words()
        # only the resources the scheduler says are short can be too big (causes.unschedulable's last parser)
        big = [x for x in (causes.insufficient_cause(r, p.spec, nodes) for r in causes.insufficient(words))
               if x is not None and x.kind in ("too-big", "not-advertised")]
        also = (f"; {len(rest)} more pod{'s' if len(rest) > 1 else ''} of the group wait{'' if len(rest) > 1 else 's'} "
                f"the same way ({', '.join(x.name for x in rest)})" if rest else "")
        need = c.expected["gpusPerPod"]
        held = "" if big or not isinstance(need, int) else held_by(view, need, p)
        yield _f("insufficient-gpus", "error", p.obj(),
                 f"{p.role} rank {p.rank} of {c.name} group {g.index} is Pending: "
                 + (f"{big[0].what}; the scheduler says \"{words}\"" if big else
                    f"{words} (it needs {need} GPUs on one node)") + also + held,
                 big[0].fix if big else "free GPUs (the pods named above hold them), add GPU nodes, or lower "
                 "nodeCount × GPUs per pod; kubectl dynamo placement shows every node's users",
                 where=view.where(c.name, g.index))



def _pending_reason(p) -> str:
    cond = p.condition("PodScheduled") or {}
    return cond.get("message") or cond.get("reason") or "not scheduled"


@check("gang-partial", scope="dgd")
def gang_partial(view):
    """Part of a group is scheduled while the rest waits, and no gang scheduler enforces the group
    (under an enforced gang a waiting pod is a replacement: group-pending says it)."""
    # one finding per component and cause: groups that wait for the same named reason are one fault
    folded: Dict[tuple, list] = {}
    for c, g in _groups(view):
        placed, waiting = g.placed, g.waiting
        if not placed or not waiting or any(gpu_short(p.scheduler_words()) for p in waiting):
            continue
        gang = enforcement(view, g)
        if gang.enforced:
            continue
        found = scheduler_causes(view, waiting)
        because = "; ".join(x.what for x in found)
        folded.setdefault((c.name, because or g.index), []).append((c, g, gang, found))
    for (_, because), same in folded.items():
        c, g, gang, found = same[0]
        placed, waiting = g.placed, g.waiting
        names = ", ".join(f"{p.name} ({_pending_reason(p)})" for p in waiting)
        also = [x[1] for x in same[1:]]
        more = (f"; so do group{'s' if len(also) > 1 else ''} {', '.join(str(x.index) for x in also)} "
                f"({', '.join(p.name for x in also for p in x.waiting)} wait{'' if len(also) > 1 else 's'}, "
                "the same reason)" if also else "")
        yield _f("gang-partial", "error", view.obj(),
                 f"component {c.name} group {g.index}: {len(placed)} of {len(g.pods)} pods are scheduled "
                 f"(scheduler {placed[0].scheduler}) while {names} wait{': ' + because if found else ''}; the placed "
                 f"pods hold their GPUs" + more,
                 ("".join(f"{x.fix}; " for x in found) or "fix what keeps the waiting pods from scheduling; ")
                 + gang.fix, where=view.where(c.name, None if also else g.index))


@check("scheduling-gated", scope="dgd")
def scheduling_gated(view):
    """Pods stay SchedulingGated (Grove removes its gate once the PodGang exists)."""
    objects = view.index.objects if view.index else {}  # the PodGangs among them
    for c in view.components:
        for g in c.groups.values():
            for p in g.pods:
                if not p.gates:
                    continue
                labels = (p.raw.get("metadata") or {}).get("labels") or {}
                gang = labels.get("grove.io/podgang")
                state = ""
                if gang:
                    state = " (its PodGang exists)" if ("PodGang", p.namespace, gang) in objects else \
                        f" (PodGang {gang} does not exist)"
                yield _f("scheduling-gated", "error", p.obj(),
                         f"{p.name} is held by scheduling {'gate' if len(p.gates) == 1 else 'gates'} {', '.join(p.gates)}{state}; pod events are "
                         "empty by design", f"kubectl get podgangs.scheduler.grove.io -n {p.namespace}; "
                         f"kubectl get podcliquesets.grove.io -n {p.namespace} -o yaml (status.lastErrors)")


def _active(p) -> bool:
    """Not terminating, Succeeded or Failed (e.g. evicted): only active pods hold their index, so a
    replacement may already carry the index of an inactive one (ai-dynamo/grove@v0.1.0-alpha.11
    operator/internal/index/tracker.go, utils/kubernetes/pod.go ``IsPodActive``)."""
    return not (p.raw.get("metadata") or {}).get("deletionTimestamp") and \
        p.status.get("phase") not in ("Succeeded", "Failed")


@check("rank-duplicate", scope="dgd")
def rank_duplicate(view):
    """Two pods of one group claim the same rank."""
    for c, g in _groups(view):
        seen: Dict[int, List[str]] = {}
        for p in g.pods:
            if p.rank is not None and _active(p):
                seen.setdefault(p.rank, []).append(p.name)
        for rank, names in sorted(seen.items()):
            if len(names) > 1:
                yield _f("rank-duplicate", "error", view.obj(),
                         f"component {c.name} group {g.index}: rank {rank} is held by {', '.join(sorted(names))}",
                         "delete the stray pod so the orchestrator recreates the group consistently")


@check("rank-gap", scope="dgd")
def rank_gap(view):
    """A complete group whose ranks are not exactly 0..nodeCount-1."""
    for c, g in _groups(view):
        n = c.expected["nodeCount"]
        ranks = [p.rank for p in g.pods]
        if len(g.pods) != n or len(set(ranks)) != len(ranks) or None in ranks:
            continue  # group-incomplete / rank-duplicate say it; an unknown rank proves no gap
        missing = sorted(set(range(n)) - set(ranks))
        if missing:
            yield _f("rank-gap", "error", view.obj(),
                     f"component {c.name} group {g.index}: ranks {sorted(ranks)}, "
                     f"missing {missing} (the engine waits for all {n} ranks)",
                     "the pod indices do not match the group size: delete the group's pods to recreate them")


@check("leader-not-ready", scope="dgd")
def leader_not_ready(view):
    """The leader is not Ready while its workers are up."""
    for c, g in _groups(view):
        leaders = g.role("leader")
        workers = g.role("worker")
        if leaders and workers and any(w.status.get("phase") == "Running" for w in workers):
            for p in leaders:
                if p.status.get("phase") == "Running" and not p.ready and _active(p):
                    yield _f("leader-not-ready", "error", p.obj(),
                             f"leader of {c.name} group {g.index} is Running but not Ready while its workers "
                             "run; the engine is not serving",
                             f"kubectl logs -n {p.namespace} {p.name} -c main   (look for workers that never "
                             "joined, NCCL or Ray errors)", where=view.where(c.name, g.index))


@check("crash-loop", scope="dgd")
def crash_loop(view):
    """A container (or an init container, e.g. vLLM's wait-for-leader-mp) keeps restarting."""
    for c in view.components:
        for g in c.groups.values():
            for p in g.pods:
                for kind, key in (("container", "containerStatuses"), ("init container", "initContainerStatuses")):
                    for cs in p.status.get(key) or []:
                        yield from _crashing(c, p, kind, cs)


def _crashing(c, p, kind: str, cs: dict):
    waiting = (cs.get("state") or {}).get("waiting") or {}
    if waiting.get("reason") == "CrashLoopBackOff" or cs.get("restartCount", 0) >= RESTARTS_CRASHLOOP:
        yield _f("crash-loop", "error", p.obj(),
                 f"{p.role} {kind} {cs.get('name')} of {c.name} restarted {cs.get('restartCount', 0)} "
                 f"times ({waiting.get('reason') or 'running now'})",
                 f"kubectl logs -n {p.namespace} {p.name} -c {cs.get('name')} --previous")


def _probe_kinds(container):
    return {k for k in ("livenessProbe", "readinessProbe", "startupProbe") if container.get(k)}


@check("worker-probes", scope="dgd")
def worker_probes(view):
    """Worker pods carry probes the operator removes (they kill workers that do not serve HTTP)."""
    for c in _multinode(view):
        expected = c.expected_role("worker")
        if not expected:
            continue
        want = _probe_kinds((expected["podSpec"].get("containers") or [{}])[0])
        for g in c.groups.values():
            for p in g.role("worker"):
                extra = sorted(_probe_kinds(p.main) - want)
                if extra:
                    yield _f("worker-probes", "error", p.obj(),
                             f"worker of {c.name} has {', '.join(extra)} but the operator renders "
                             f"{', '.join(sorted(want)) or 'no probes'} for {c.expected['backend']} workers; "
                             "a worker that does not serve /live gets killed",
                             "let the operator render the worker (no probes in role templates for workers, or "
                             "upgrade the operator that created this pod)")


@check("ssh-secret-missing", scope="dgd")
def ssh_secret(view):
    """TensorRT-LLM multinode needs the MPI SSH key secret in the DGD's namespace."""
    from kubectl_dynamo.model.snapshot import UNKNOWN

    if not any(c.expected["backend"] == "trtllm" for c in _multinode(view)):
        return
    keys = view.snapshot.secrets.get((view.namespace, view.secret_name), UNKNOWN)
    obj = {"kind": "Secret", "namespace": view.namespace, "name": view.secret_name}
    if keys is None:
        yield _f("ssh-secret-missing", "error", obj,
                 f"secret {view.secret_name} does not exist in {view.namespace}: the TRT-LLM leader and workers "
                 "mount it at /ssh-pk and stay ContainerCreating",
                 "the operator writes it only while reconciling a DGD and does not recreate a deleted one by "
                 "itself: restart the operator (kubectl rollout restart deploy -l control-plane=controller-manager "
                 "-n <operator namespace>) or change the DGD, then delete the stuck pods", where=view.where())
    elif keys != UNKNOWN:
        missing = [k for k in MPI_KEYS if k not in keys]
        if missing:
            yield _f("ssh-secret-missing", "error", obj,
                     f"secret {view.secret_name} lacks {'key' if len(missing) == 1 else 'keys'} {', '.join(missing)} (has {', '.join(keys) or 'none'})",
                     "delete the secret so the operator regenerates the key pair")


@check("wait-leader-configmap-missing", scope="dgd")
def wait_leader_configmap(view):
    """vLLM mp workers mount <dgd>-wait-leader-script; without it they never start."""
    needs = any(any(ic.get("name") == WAIT_LEADER_INIT for ic in (c.expected_role("worker") or {})
                    .get("podSpec", {}).get("initContainers") or []) for c in _multinode(view))
    if not needs or configmaps_unread(view.snapshot):
        return  # ConfigMaps could not be listed: permission-denied says so, nothing is known to be missing
    name = f"{view.name}-wait-leader-script"
    present = any(cm["metadata"]["name"] == name and cm["metadata"].get("namespace") == view.namespace
                  for cm in view.snapshot.configmaps)
    if not present:
        yield _f("wait-leader-configmap-missing", "error",
                 {"kind": "ConfigMap", "namespace": view.namespace, "name": name},
                 f"ConfigMap {name} is missing: vLLM mp workers run init container {WAIT_LEADER_INIT} from it and "
                 "stay in Init", "the operator writes it only while reconciling the DGD and does not recreate a "
                 "deleted one by itself: restart the operator (kubectl rollout restart deploy -l "
                 "control-plane=controller-manager -n <operator namespace>) or change the DGD",
                 where=view.where())


@check("image-mismatch", scope="dgd")
def image_mismatch(view):
    """Leader and workers of one group run different images (mp, Ray and MPI need identical stacks)."""
    for c in _multinode(view):
        for g in c.groups.values():
            images: Dict[Optional[str], List[PodInfo]] = {}
            for p in filter(_active, g.pods):  # a rolling update replaces pods one by one
                images.setdefault(p.main.get("image"), []).append(p)
            if len(images) > 1:
                desc = "; ".join(f"{img}: {', '.join(p.role + ' ' + p.name for p in ps)}" for img, ps in images.items())
                yield _f("image-mismatch", "error", view.obj(),
                         f"component {c.name} group {g.index} runs {len(images)} images: {desc}",
                         "use one image for leader and workers (role templates: set the same image in both)")


_QUANTITY = re.compile(r"^(\d+(?:\.\d+)?)([KMGTPE]i?|[kmgtpe])?$")
_SCALE = {None: 1, "Ki": 1024, "Mi": 1024 ** 2, "Gi": 1024 ** 3, "Ti": 1024 ** 4, "k": 1e3, "M": 1e6, "G": 1e9,
          "T": 1e12}


def quantity_bytes(text):
    m = _QUANTITY.match(str(text or ""))
    if not m or m.group(2) not in _SCALE:
        return None
    return float(m.group(1)) * _SCALE[m.group(2)]


@check("shm-too-small", scope="dgd")
def shm_too_small(view):
    """/dev/shm is missing or smaller than 8Gi on a multinode GPU pod (NCCL needs it)."""
    for _c, g in _groups(view):
        for p in g.pods:
            mount = next((m for m in p.main.get("volumeMounts") or [] if m.get("mountPath") == "/dev/shm"), None)
            vol = next((v for v in p.spec.get("volumes") or [] if mount and v.get("name") == mount.get("name")), None)
            size = quantity_bytes(((vol or {}).get("emptyDir") or {}).get("sizeLimit")) if vol else None
            if mount is None:
                yield _f("shm-too-small", "warning", p.obj(), f"{p.name} mounts nothing at /dev/shm (64Mi default)",
                         "set sharedMemorySize (v1beta1) or leave the operator's 8Gi default")
            elif vol is not None and size is not None and size < MIN_SHM_BYTES:
                yield _f("shm-too-small", "warning", p.obj(),
                         f"{p.name} /dev/shm is {vol['emptyDir']['sizeLimit']} (< 8Gi); NCCL fails with "
                         "'No space left on device' for TP > 1",
                         "raise the component's sharedMemorySize to 8Gi or more")


@check("workload-provider-mismatch", scope="dgd")
def provider_mismatch(view):
    """The DGD's pinned workload provider differs from what the live pods show."""
    pinned = (view.raw["metadata"].get("annotations") or {}).get(api.ANN_WORKLOAD_PROVIDER)
    live = set()
    for c in view.components:
        for g in c.groups.values():
            for p in g.pods:
                labels = (p.raw.get("metadata") or {}).get("labels") or {}
                if "grove.io/podclique" in labels:
                    live.add("grove")
                elif "leaderworkerset.sigs.k8s.io/name" in labels:
                    live.add("component")
    if pinned and live and live != {pinned}:
        yield _f("workload-provider-mismatch", "warning", view.obj(),
                 f"nvidia.com/workload-provider is {pinned} but pods come from {', '.join(sorted(live))}",
                 "a DGD switched orchestrators leaves old workloads behind: delete them")


@check("failed-mount", scope="dgd")
def failed_mount(view):
    """A DGD pod has FailedMount warning events (a missing MPI secret or wait-leader ConfigMap shows here)."""
    if view.index is None:
        return
    for c in view.components:
        for g in c.groups.values():
            for p in g.pods:  # the events of this pod, not of an earlier pod of its name (model/evidence.py)
                e = next((e for e in view.index.events.get(("Pod", p.namespace, p.name), [])
                          if e.get("reason") == "FailedMount"), None)
                if e is not None:
                    yield _f("failed-mount", "warning", p.obj(),
                             f"{p.name}: {(e.get('message') or '').strip()} (x{e.get('count') or 1})",
                             "create what the volume refers to, or let the operator re-create it",
                             where=view.where(c.name, g.index))


def _group_subdomains(view):
    """(namespace, subdomain) -> pods: Grove and LWS put every group pod under the headless Service
    named by ``spec.subdomain``; the leader address resolves through it."""
    out: Dict[Tuple[str, str], List[PodInfo]] = {}
    for c in _multinode(view):
        for g in c.groups.values():
            for p in g.pods:
                sub = p.spec.get("subdomain")
                if sub:
                    out.setdefault((p.namespace, sub), []).append(p)
    return out


@check("leader-dns-missing", scope="dgd")
def leader_dns_missing(view):
    """The headless Service that gives group pods (and the leader) their DNS names does not exist."""
    if view.index is None or view.index.services is None:
        return
    for (ns, sub), pods in sorted(_group_subdomains(view).items()):
        if (ns, sub) not in view.index.services:
            yield _f("leader-dns-missing", "error", {"kind": "Service", "namespace": ns, "name": sub},
                     f"headless Service {sub} does not exist: {len(pods)} group pods use it as their subdomain, so "
                     "the leader's DNS name never resolves and workers wait forever (dynamo#9612, grove#134)",
                     "the orchestrator creates it (Grove per PodCliqueSet replica, LWS per LeaderWorkerSet); Grove "
                     "does not recreate a deleted one until the PodCliqueSet is reconciled again (a change to it, "
                     "or a Grove restart): check its controller's logs", where=view.where())


@check("headless-service-invalid", scope="dgd")
def headless_service_invalid(view):
    """The group's Service is not headless, or does not publish not-ready addresses (a deadlock)."""
    services = (view.index.services if view.index else None) or {}
    for key in sorted(_group_subdomains(view)):
        svc = services.get(key)
        if svc is None:
            continue
        spec = svc.get("spec") or {}
        obj = {"kind": "Service", "namespace": key[0], "name": key[1]}
        if spec.get("clusterIP") not in ("None", None):
            yield _f("headless-service-invalid", "error", obj,
                     f"Service {key[1]} has clusterIP {spec.get('clusterIP')}: pod DNS names need a headless "
                     "Service (a ClusterIP Service of the same name shadows it, dynamo PR #5468/#9612)",
                     "delete the ClusterIP Service; the orchestrator re-creates the headless one")
        elif not spec.get("publishNotReadyAddresses"):
            yield _f("headless-service-invalid", "error", obj,
                     f"Service {key[1]} does not publish not-ready addresses: the leader is not Ready until its "
                     "workers join, and workers cannot resolve a not-Ready leader (grove#134, lws#746)",
                     "set publishNotReadyAddresses: true (Dynamo sets it in the PodCliqueSet's headlessServiceConfig)")
