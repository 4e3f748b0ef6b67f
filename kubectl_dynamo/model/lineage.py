"""``tree``: a DGD's lineage, including the links ownerReferences do not show.

Parents come from the controller ownerReference when the owner is among the listed objects, else
from the labels the orchestrators put (so a tree still forms when an owner is missing or a
controller does not set one):

- Grove (ai-dynamo/grove ``operator/api/common/labels.go``, v0.1.0-alpha.12): a Pod's PodClique is
  ``grove.io/podclique``; a PodClique's scaling group ``grove.io/podcliquescalinggroup``; a scaling
  group's or clique's PodCliqueSet ``app.kubernetes.io/part-of``. The PodGang (owned by the
  PodCliqueSet) links to its pods by ``grove.io/podgang`` only: it is shown between a PodClique and
  its pods, as the gang scheduler sees them.
- LWS: the worker StatefulSet is owned by the leader Pod (recorded from LWS v0.9.0,
  ``tests/data/recorded/lws-*``); it is shown beside the leader's StatefulSet under the
  LeaderWorkerSet (``leaderworkerset.sigs.k8s.io/name``), as the group's second half.
- A PodCliqueSet or DynamoComponentDeployment whose owner is not listed hangs under the DGD of its
  ``nvidia.com/dynamo-graph-deployment-name`` label (or, for a PodCliqueSet, of its own name).

Pods that no listed object claims still appear, under the DGD. Each pod carries its role and rank
(``doctor.classify``) and the Services, ConfigMaps and Secrets it needs, present or missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Optional, Tuple

from kubectl_dynamo.model.labels import (
    COMPONENT_LABEL,
    DGD_LABEL,
    GROVE_CLIQUE,
    GROVE_PCSG,
    GROVE_PODGANG,
    LWS_NAME,
    PART_OF,
)
from kubectl_dynamo.model.references import needs
from kubectl_dynamo.model.views import classify

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import TreeNode, TreeRoot



@dataclass
class Node:
    kind: str
    name: str
    status: str = ""
    children: List[Node] = field(default_factory=list)
    pod: Optional[dict] = None  # for a Pod: component, group, rank, role, node, phase, ready, needs
    via: Optional[str] = None  # how the parent was found when not by ownerReference ("label ...")

    def as_json(self) -> TreeNode:
        out: TreeNode = {"kind": self.kind, "name": self.name, "status": self.status, "via": self.via, "children": []}
        if self.pod is not None:
            out.update(self.pod)  # type: ignore[typeddict-item]  # a pod's keys: _TreePod
        out["children"] = [c.as_json() for c in self.children]
        return out


def meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _labels(obj: dict) -> dict:
    return meta(obj).get("labels") or {}


def status_of(obj: dict) -> str:
    """A short status for any kind: phase, ready/replicas, or the Ready/Available condition."""
    st = obj.get("status") or {}
    kind = obj.get("kind")
    if kind == "Pod":
        ready = next((c.get("status") for c in st.get("conditions") or [] if c.get("type") == "Ready"), None)
        out = f"{st.get('phase') or 'Unknown'}" + (", ready" if ready == "True" else ", not ready")
        why = _unplaced(obj) if st.get("phase", "Pending") == "Pending" else None
        return out + (f": {why}" if why else "")
    parts = []
    if st.get("phase"):
        parts.append(str(st["phase"]))
    if "readyReplicas" in st or "replicas" in st:  # a controller reported it (an empty status says nothing)
        replicas = (obj.get("spec") or {}).get("replicas", st.get("replicas"))
        parts.append(f"ready {st.get('readyReplicas', 0)}/{replicas if replicas is not None else '?'}")
    for c in st.get("conditions") or []:
        if c.get("type") in ("Ready", "Available") and not parts:
            parts.append(f"{c['type']}={c.get('status')}" + (f" ({c['reason']})" if c.get("reason") else ""))
    return ", ".join(parts)


def _unplaced(pod: dict) -> Optional[str]:
    """Why a Pending pod has no node, as ``get -o wide`` shows it: its scheduling gates, else the
    scheduler's PodScheduled condition (Volcano's ``Schedulable`` says the pod alone fits: no reason)."""
    spec, st = pod.get("spec") or {}, pod.get("status") or {}
    if spec.get("nodeName"):
        return None
    gates = [g.get("name") for g in spec.get("schedulingGates") or [] if g.get("name")]
    if gates:
        return f"SchedulingGated ({', '.join(gates)})"
    cond = next((c for c in st.get("conditions") or [] if c.get("type") == "PodScheduled"), None) or {}
    if cond.get("status") == "True" or cond.get("reason") == "Schedulable":
        return None
    words = cond.get("message") or ""
    return f"{cond.get('reason')}: {words}" if cond.get("reason") and words else (words or cond.get("reason"))


# -- building the tree -------------------------------------------------------------------------------

Exists = Callable[[str, str], Optional[bool]]  # (kind, name) -> present, missing, or None (may not be read)


def build_tree(dgd: dict, objects: Iterable[dict], pods: Iterable[dict], exists: Exists) -> TreeRoot:
    """The DGD's lineage as JSON. ``objects``: the listed workload objects of the namespace (any of
    ``cluster.kinds.LINEAGE``); ``pods``: the DGD's pods; ``exists`` says whether a Service/ConfigMap/Secret exists."""
    name = meta(dgd).get("name", "")
    objs = [o for o in objects if o.get("kind")] + [dict(p, kind="Pod") for p in pods]
    by_uid = {meta(o).get("uid"): o for o in objs if meta(o).get("uid")}
    by_name = {(o["kind"], meta(o).get("name")): o for o in objs}
    dgd_uid = meta(dgd).get("uid")
    children: Dict[Optional[str], List[Tuple[dict, Optional[str]]]] = {}  # parent key -> [(child, via)]
    ganged = {_labels(o).get(GROVE_PODGANG) for o in objs if o["kind"] == "Pod"}
    for o in objs:
        if o["kind"] == "PodGang" and meta(o).get("name") in ganged:
            continue  # shown between its pods' PodClique and the pods instead
        parent, via = _parent(o, by_uid, by_name, dgd_uid, name)
        if parent is not None:
            children.setdefault(parent, []).append((o, via))
    root = Node("DynamoGraphDeployment", name, status_of(dgd))
    attached = set()

    def grow(node: Node, key: str) -> None:
        for child, via in sorted(children.get(key, []), key=lambda cv: _order(cv[0])):
            ckey = _key(child)
            if ckey in attached:
                continue
            attached.add(ckey)
            n = _node(child, via, exists)
            node.children.append(n)
            grow(n, ckey)
        if node.kind == "PodClique":
            _insert_gangs(node, by_name)

    grow(root, "DGD")
    # pods of the DGD that no listed object claims (no orchestrator objects, or they are gone)
    for pod in sorted((o for o in objs if o["kind"] == "Pod" and _key(o) not in attached), key=_order):
        root.children.append(_node(pod, "label " + DGD_LABEL + " (no owner listed)", exists))
    if not root.children:
        root.status = _unreconciled(dgd, root.status)
    out: TreeRoot = {**root.as_json(), "namespace": meta(dgd).get("namespace") or ""}
    out["needs"] = _needs_summary(pods, exists)
    return out


def _unreconciled(dgd: dict, status: str) -> str:
    """A DGD with nothing under it: the Dynamo operator has made none of its workloads. With no status
    at all it has not reconciled the DGD (not running, or not watching this namespace); else its Ready
    condition says why it made nothing."""
    comps = [c for c in (dgd.get("spec") or {}).get("components") or [] if isinstance(c, dict)]
    if comps and all(c.get("replicas") == 0 for c in comps):
        return status  # every component scaled to zero: nothing is wanted
    st = dgd.get("status") or {}
    if not st:
        return "no status and nothing created: the Dynamo operator has not reconciled it"
    ready = next((c for c in st.get("conditions") or [] if c.get("type") == "Ready"), None) or {}
    said = f': "{ready["message"]}"' if ready.get("message") and ready.get("status") != "True" else ""
    return (f"{status + '; ' if status else ''}nothing created: the Dynamo operator has not made its workloads"
            + said)


def _key(o: dict) -> str:
    return meta(o).get("uid") or f"{o['kind']}/{meta(o).get('name')}"


def _order(o: dict) -> tuple:
    if o["kind"] == "Pod":
        info = classify(o)
        return (1, _labels(o).get(COMPONENT_LABEL) or "", info.group, info.rank is None, info.rank or 0, info.name)
    return (0, o["kind"], meta(o).get("name") or "")


def _parent(o: dict, by_uid: dict, by_name: dict, dgd_uid: Optional[str], dgd_name: str):
    """(parent key, how it was found) or (None, None) for an object outside the DGD."""
    kind, labels = o["kind"], _labels(o)
    for ref in meta(o).get("ownerReferences") or []:
        if not ref.get("controller", True):
            continue
        if ref.get("uid") == dgd_uid and ref.get("kind") == "DynamoGraphDeployment":
            return "DGD", None
        owner = by_uid.get(ref.get("uid"))
        if owner is not None:
            if kind == "StatefulSet" and owner["kind"] == "Pod" and ("LeaderWorkerSet", labels.get(LWS_NAME)) in by_name:
                lws = by_name[("LeaderWorkerSet", labels[LWS_NAME])]
                return _key(lws), f"owned by leader pod {meta(owner).get('name')}"
            return _key(owner), None
    label_links = []
    if kind == "Pod":
        label_links = [("PodClique", labels.get(GROVE_CLIQUE), GROVE_CLIQUE)]
    elif kind == "PodClique":
        label_links = [("PodCliqueScalingGroup", labels.get(GROVE_PCSG), GROVE_PCSG),
                       ("PodCliqueSet", labels.get(PART_OF), PART_OF)]
    elif kind == "PodCliqueScalingGroup":
        label_links = [("PodCliqueSet", labels.get(PART_OF), PART_OF)]
    elif kind == "StatefulSet":
        label_links = [("LeaderWorkerSet", labels.get(LWS_NAME), LWS_NAME)]
    for parent_kind, parent_name, label in label_links:
        parent = by_name.get((parent_kind, parent_name)) if parent_name else None
        if parent is not None:
            return _key(parent), f"label {label}"
    if kind in ("PodCliqueSet", "DynamoComponentDeployment"):
        if labels.get(DGD_LABEL) == dgd_name:
            return "DGD", f"label {DGD_LABEL}"
        if kind == "PodCliqueSet" and meta(o).get("name") == dgd_name and not meta(o).get("ownerReferences"):
            return "DGD", "name"
    return None, None


def _node(o: dict, via: Optional[str], exists: Exists) -> Node:
    name = meta(o).get("name", "")
    if o["kind"] != "Pod":
        return Node(o["kind"], name, status_of(o), via=via)
    info = classify(o)
    st = o.get("status") or {}
    pod = {"component": _labels(o).get(COMPONENT_LABEL), "group": info.group, "rank": info.rank, "role": info.role,
           "node": (o.get("spec") or {}).get("nodeName"), "phase": st.get("phase"), "ready": info.ready,
           "needs": [{"kind": k, "name": n, "optional": opt, "present": exists(k, n)}
                     for k, n, opt in needs(o)]}
    return Node("Pod", name, status_of(o), pod=pod, via=via)


def _insert_gangs(clique: Node, by_name: dict) -> None:
    """Put each pod of a PodClique under the PodGang its ``grove.io/podgang`` label names."""
    gangs: Dict[str, Node] = {}
    rest = []
    for child in clique.children:
        gang = None
        if child.kind == "Pod":
            raw = by_name.get(("Pod", child.name)) or {}
            gang = _labels(raw).get(GROVE_PODGANG)
        if not gang:
            rest.append(child)
            continue
        if gang not in gangs:
            obj = by_name.get(("PodGang", gang))
            gangs[gang] = Node("PodGang", gang, status_of(obj) if obj else "missing", via=f"label {GROVE_PODGANG}")
            rest.append(gangs[gang])
        gangs[gang].children.append(child)
    clique.children = rest


def _needs_summary(pods: Iterable[dict], exists: Exists) -> List[dict]:
    """Everything the DGD's groups need (``needs``), present or missing, with who needs it."""
    out: Dict[Tuple[str, str], dict] = {}
    for pod in pods:
        info = classify(pod)
        who = f"{_labels(pod).get(COMPONENT_LABEL) or '?'}/{info.group}"
        for kind, name, optional in needs(pod):
            entry = out.setdefault((kind, name), {"kind": kind, "name": name, "optional": optional,
                                                  "present": exists(kind, name), "neededBy": []})
            entry["optional"] = entry["optional"] and optional
            if who not in entry["neededBy"]:
                entry["neededBy"].append(who)
    return sorted(out.values(), key=lambda e: (e["present"] is not False, e["kind"], e["name"]))


# -- the command -------------------------------------------------------------------------------------


