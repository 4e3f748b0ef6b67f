"""Where the GPUs are: every GPU node's allocatable, who uses it (DGD, component, group, rank), what is free,
free GPUs no pending pod can use (fragmentation), and which pending gang waits for what.

Pure: nodes and pods as the API server lists them. A pod uses a node's GPUs once bound
(``spec.nodeName``) and not finished, by its containers' ``nvidia.com/gpu`` requests (limits when no
request: the device plugin's extended resources must have them equal; init containers count by
the largest, as the scheduler does: k8s.io/component-helpers resource/helpers.go PodRequests). A
pending gang is a DGD group (component, group index) with pods not yet bound; it fits when
first-fit-decreasing places each of its unbound pods on a schedulable node's free GPUs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Tuple

from kubectl_dynamo.model import evidence
from kubectl_dynamo.model.labels import COMPONENT_LABEL, DGD_LABEL
from kubectl_dynamo.model.platform import gpu_count
from kubectl_dynamo.model.views import classify

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import GpuNode, GpuUser, PendingGang, PlacementData


def pod_gpus(pod: dict) -> int:
    spec = pod.get("spec") or {}

    def of(c: dict) -> int:
        r = c.get("resources") or {}
        return gpu_count(r.get("requests") or {}) or gpu_count(r.get("limits") or {})

    main = sum(of(c) for c in spec.get("containers") or [])
    init = max([of(c) for c in spec.get("initContainers") or []] or [0])
    return max(main, init)


def _finished(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _owner(pod: dict) -> GpuUser:
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    info = classify(pod)
    out: GpuUser = {"pod": meta.get("name") or "", "namespace": meta.get("namespace") or "", "gpus": pod_gpus(pod),
                    "dgd": labels.get(DGD_LABEL), "component": labels.get(COMPONENT_LABEL)}
    if out["dgd"]:
        out["group"], out["rank"], out["role"] = info.group, info.rank, info.role
    return out


def placement(nodes: List[dict], pods: List[dict]) -> PlacementData:
    """The ``placement -o json`` contract (see data/schemas/placement.json)."""
    rows: Dict[str, GpuNode] = {}
    for n in sorted(nodes, key=lambda n: n["metadata"]["name"]):
        alloc = gpu_count((n.get("status") or {}).get("allocatable") or {})
        if not alloc:
            continue
        schedulable = evidence.ready(n) and not (n.get("spec") or {}).get("unschedulable")
        rows[n["metadata"]["name"]] = {"name": n["metadata"]["name"], "allocatable": alloc, "used": 0, "free": alloc,
                                       "schedulable": schedulable, "users": []}
    pending: Dict[Tuple[str, str, str, int], List[GpuUser]] = {}
    for p in pods:
        if _finished(p) or not pod_gpus(p):
            continue
        node = (p.get("spec") or {}).get("nodeName")
        if node:
            row = rows.get(node)
            if row is not None:
                o = _owner(p)
                row["users"].append(o)
                row["used"] += o["gpus"]
                row["free"] = row["allocatable"] - row["used"]
            continue
        o = _owner(p)
        if o["dgd"]:
            pending.setdefault((o["namespace"], o["dgd"], o["component"] or "", o["group"]), []).append(o)
        else:
            pending.setdefault((o["namespace"], "", o["pod"], 0), []).append(o)
    for row in rows.values():
        row["users"].sort(key=lambda u: (u["dgd"] is None, u["namespace"] or "", u["dgd"] or "", u["component"] or "",
                                         u.get("group") or 0, u.get("rank") or 0, u["pod"] or ""))
    free = {name: r["free"] for name, r in rows.items() if r["schedulable"] and r["free"] > 0}
    gangs: List[PendingGang] = []
    for (ns, dgd, comp, group), members in sorted(pending.items()):
        need = sorted((m["gpus"] for m in members), reverse=True)
        fits, slots = _first_fit(need, dict(free))
        gangs.append({"namespace": ns, "dgd": dgd or None, "component": comp if dgd else None,
                      "group": group if dgd else None, "pods": [m["pod"] for m in members], "gpusPerPod": need,
                      "gpus": sum(need), "fits": fits, "waitsFor": None if fits else _waits_for(need, free)})
    smallest = min((g for gang in gangs for g in gang["gpusPerPod"]), default=None)
    stranded = sum(f for f in free.values() if smallest is not None and f < smallest)
    total_free = sum(r["free"] for r in rows.values() if r["schedulable"])
    return {"nodes": list(rows.values()),
            "totals": {"nodes": len(rows), "allocatable": sum(r["allocatable"] for r in rows.values()),
                       "used": sum(r["used"] for r in rows.values()), "free": total_free,
                       "largestFree": max(free.values(), default=0), "stranded": stranded},
            "pendingGangs": gangs}


def _first_fit(need: List[int], free: Dict[str, int]) -> Tuple[bool, Dict[str, int]]:
    for gpus in need:
        node = next((n for n, f in sorted(free.items(), key=lambda kv: (kv[1], kv[0])) if f >= gpus), None)
        if node is None:
            return False, free
        free[node] -= gpus
    return True, free


def _waits_for(need: List[int], free: Dict[str, int]) -> str:
    total = sum(free.values())
    if total < sum(need):
        return f"{sum(need)} GPUs ({len(need)} pods x {need[0]}); {total} free on schedulable nodes"
    return (f"{len(need)} pods x {need[0]} GPUs: {total} GPUs are free but fragmented "
            f"(largest free on one node: {max(free.values(), default=0)})")



# -- who holds the GPUs a pending pod needs ------------------------------------------------------------
KAI_QUEUE_LABEL = "kai.scheduler/queue"  # KAI's pod label for its queue (recorded: grove-* pods)


def blocking_nodes(data: PlacementData, need: int) -> List[GpuNode]:
    """The schedulable GPU nodes big enough for a pod of ``need`` GPUs whose free GPUs are too few: the
    nodes that would take it but for the pods holding their GPUs."""
    return [n for n in data["nodes"] if n["schedulable"] and n["allocatable"] >= need and n["free"] < need]


def held_by(data: PlacementData, need: int, pods_by_name: Dict[tuple, dict], pending: dict) -> str:
    """Who holds the GPUs of the nodes that would otherwise fit a pending pod of ``need`` GPUs (its DGDs,
    namespaces and pods), and whether priority or the gang scheduler's queues could free them: ``; ...`` or ""."""
    nodes = blocking_nodes(data, need)
    if not nodes:
        return ""
    by_dgd: Dict[Tuple[str, str], List[Tuple[str, GpuUser]]] = {}
    other = 0
    for n in nodes:
        for u in n["users"]:
            if u["dgd"]:
                by_dgd.setdefault((u["namespace"], u["dgd"]), []).append((n["name"], u))
            else:
                other += u["gpus"]
        other += n["allocatable"] - n["free"] - sum(u["gpus"] for u in n["users"])  # pods doctor did not read
    parts = []
    meta = pending.get("metadata") or {}
    mine = (meta.get("namespace"), (meta.get("labels") or {}).get(DGD_LABEL))
    for (ns, dgd), held in sorted(by_dgd.items()):
        gpus = sum(u["gpus"] for _, u in held)
        where = sorted({node for node, _ in held})
        own = ", its own placed pods" if (ns, dgd) == mine else ""
        parts.append(f"DGD {ns}/{dgd} ({len(held)} pods{own}, {gpus} GPUs on {', '.join(where)})")
    if other > 0:
        parts.append(f"other pods ({other} GPUs)")
    text = (f"; the {len(nodes)} node{'s' if len(nodes) > 1 else ''} with {need}+ allocatable GPUs "
            f"({', '.join(n['name'] for n in nodes)}) {'are' if len(nodes) > 1 else 'is'} held by "
            + "; ".join(parts))
    return text + _freeable(by_dgd, pods_by_name, pending)


def _priority(pod: dict) -> int:
    value = (pod.get("spec") or {}).get("priority")
    return value if isinstance(value, int) else 0


def _freeable(by_dgd, pods_by_name: Dict[tuple, dict], pending: dict) -> str:
    """Whether the scheduler could free them: kube-scheduler (and Volcano and KAI within a queue) preempt only
    pods of a lower priority (kubernetes pkg/scheduler/framework/plugins/defaultpreemption); KAI takes GPUs
    back from another queue only while that queue is over its fair share."""
    mine = _priority(pending)
    holders = [pods_by_name.get((u["namespace"], u["pod"])) or {} for held in by_dgd.values() for _, u in held]
    if not holders:
        return ""
    lower = [h for h in holders if _priority(h) < mine]
    text = (f"; {len(lower)} of them have a lower priority than the pending pod's {mine}: preemption may free them"
            if lower else f"; none has a lower priority than the pending pod's ({mine}): preemption cannot free "
            "them (a PriorityClass with a higher value on this DGD would)")
    queue = ((pending.get("metadata") or {}).get("labels") or {}).get(KAI_QUEUE_LABEL)
    if queue:
        queues = sorted({((h.get("metadata") or {}).get("labels") or {}).get(KAI_QUEUE_LABEL) or "-" for h in holders})
        text += (f"; all are in KAI queue {queue}, the pending pod's own: KAI reclaims only from another queue over "
                 "its fair share" if queues == [queue] else
                 f"; their KAI queues: {', '.join(queues)} (the pending pod's: {queue}): KAI reclaims from a queue "
                 "only while it is over its fair share")
    return text
