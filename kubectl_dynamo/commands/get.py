"""``get``: one row per DGD (or, for one DGD, per component and group) with what doctor knows.

Built on doctor's model (``build_views``: which pod is which group and rank) and its per-DGD checks
(the top finding of each DGD and group). ``-w`` follows one WATCH per kind (DGDs, the DGDs' pods)
and prints a row again whenever it changes, as ``kubectl get -w`` does.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from kubectl_dynamo.checks import diagnosis as _registers_the_checks  # noqa: F401  (doctor's checks, in its order)
from kubectl_dynamo.checks import registry
from kubectl_dynamo.cluster import kinds
from kubectl_dynamo.environment import Environment
from kubectl_dynamo.findings.finding import Finding
from kubectl_dynamo.model.labels import DGD_LABEL
from kubectl_dynamo.model.views import DgdView, build_views, read_views, scope_namespace
from kubectl_dynamo.result import Result

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import FindingJson, GetComponent, GetData, GetDgd, GetGroup


def human_age(seconds: float) -> str:
    """kubectl's AGE column (k8s.io/apimachinery pkg/util/duration/duration.go, HumanDuration, v0.33.3)."""
    whole = int(seconds)  # truncates toward zero, as Go's int(d.Seconds())
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        return f"{minutes}m" + (f"{whole % 60}s" if whole % 60 else "")
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        return f"{hours}h" + (f"{minutes % 60}m" if minutes % 60 else "")
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" + (f"{hours % 24}h" if hours % 24 else "")
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = hours // 24 % 365
        return f"{hours // 24 // 365}y" + (f"{days}d" if days else "")
    return f"{hours // 24 // 365}y"


def _parse_time(text: Optional[str]) -> Optional[datetime]:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def ready_condition(dgd: dict) -> dict:
    cond = next((c for c in (dgd.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), None)
    if cond is None:
        return {"status": None, "reason": None, "message": None}
    return {"status": cond.get("status"), "reason": cond.get("reason"), "message": cond.get("message")}


def restarts(pod_raw: dict) -> int:
    status = pod_raw.get("status") or {}
    return sum(int(c.get("restartCount") or 0)
               for c in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []))


def _replicas(view: DgdView, component: str) -> int:
    spec: dict = next((c for c in (view.raw.get("spec") or {}).get("components") or []
                 if (c.get("name") or "").lower() == component.lower()), {})
    value = spec.get("replicas")
    return 1 if value is None else int(value)


def summarize_view(view: DgdView, findings: List[Finding], now: datetime) -> GetDgd:
    """One DGD's row and its components' group rows (the ``get -o json`` contract). A finding goes on the
    row of the group it is about (its pod's, or the component and group it names), never on another
    component's row; the DGD's row shows the worst of all."""
    by_pod: Dict[str, List[FindingJson]] = {}
    by_group: Dict[tuple, List[FindingJson]] = {}
    general: List[FindingJson] = []  # about the whole DGD (no component): it concerns every group
    for f in findings:
        obj = f.object or {}
        if obj.get("kind") == "Pod":
            by_pod.setdefault(obj.get("name") or "", []).append(f.as_json())
        elif f.where is not None and f.where[2] is not None:
            by_group.setdefault((str(f.where[2]).lower(), f.where[3]), []).append(f.as_json())
        else:
            general.append(f.as_json())
    comps: List[GetComponent] = []
    totals = {"groupsReady": 0, "groupsDesired": 0, "ranksPresent": 0, "ranksDesired": 0, "restarts": 0}
    for c in view.components:
        node_count = int(c.expected["nodeCount"])
        desired = _replicas(view, c.name)
        groups: List[GetGroup] = []
        for index in sorted(c.groups):
            g = c.groups[index]
            ranks = sorted({p.rank for p in g.pods if p.rank is not None})
            ready = len(g.pods) == node_count and all(p.ready for p in g.pods)
            mine = [f for p in g.pods for f in by_pod.get(p.name, [])]
            mine += by_group.get((c.name.lower(), index), []) + by_group.get((c.name.lower(), None), [])
            groups.append({"index": index, "ready": ready, "podsReady": sum(p.ready for p in g.pods),
                           "pods": len(g.pods), "ranks": ranks, "ranksDesired": node_count,
                           "restarts": sum(restarts(p.raw) for p in g.pods),
                           "topFinding": _top(mine + general)})
        totals["groupsReady"] += sum(g["ready"] for g in groups)
        totals["groupsDesired"] += desired
        totals["ranksPresent"] += sum(len(g["ranks"]) if c.expected["multinode"] else g["pods"] for g in groups)
        totals["ranksDesired"] += desired * node_count
        totals["restarts"] += sum(g["restarts"] for g in groups)
        comps.append({"name": c.name, "multinode": bool(c.expected["multinode"]), "nodeCount": node_count,
                      "replicas": desired, "groups": groups})
    created = (view.raw.get("metadata") or {}).get("creationTimestamp")
    when = _parse_time(created)
    return {"name": view.name, "namespace": view.namespace,
            "orchestrator": view.explained.get("orchestrator"), "provider": view.explained.get("provider"),
            "groupsReady": totals["groupsReady"], "groupsDesired": totals["groupsDesired"],
            "ranksPresent": totals["ranksPresent"], "ranksDesired": totals["ranksDesired"], "restarts": totals["restarts"],
            "creationTimestamp": created,
            "age": human_age((now - when).total_seconds()) if when else None,
            "ready": ready_condition(view.raw), "topFinding": _top([f.as_json() for f in findings]),
            "components": comps}


def _top(findings: List[FindingJson]) -> Optional[FindingJson]:
    if not findings:
        return None
    return min(findings, key=lambda f: (registry.RANK[f["severity"]], f["code"]))


def findings_of(view: DgdView) -> List[Finding]:
    return registry.run("dgd", view)


def names(data: GetData) -> List[str]:
    return [f"dynamographdeployment.nvidia.com/{d['name']}" for d in data["deployments"]]


def run_get(cluster, env: Environment, *, all_namespaces: bool, name: Optional[str] = None) -> Result[GetData]:
    from kubectl_dynamo.output.tables import format_get

    snap, views = read_views(cluster, scope_namespace(cluster, all_namespaces, name), name)
    now = env.now()
    data: GetData = {"deployments": [summarize_view(v, findings_of(v), now) for v in views], "skipped": list(snap.skipped)}
    return Result(data, lambda d, wide, color, width: format_get(d, wide, color, width, detail=bool(name)), names=names(data))


# -- -w ------------------------------------------------------------------------------------------------

def watch_get(cluster, env: Environment, *, all_namespaces: bool, name: Optional[str], wide: bool,
              timeout: Optional[float] = None) -> int:
    """Print the table, then a row each time one changes; one WATCH on DGDs and one on their pods.
    The other kinds checks read (events, services, ...) are those of the first read. Ends after
    ``timeout`` seconds (None: at Ctrl-C, which main() turns into exit 130)."""
    from kubectl_dynamo.cluster.streams import Watched
    from kubectl_dynamo.output.tables import get_rows, line, widths

    namespace = scope_namespace(cluster, all_namespaces, name)
    snap, views = read_views(cluster, namespace, name)  # as get reads it: NotFound, the MPI secrets
    watches = {"dgd": (kinds.DGD.path(namespace), None, f"metadata.name={name}" if name else None),
               # the paths, selectors and fields of snapshot.take's LISTs: list_versions is keyed by them
               "pod": (kinds.by_field("pods").path(namespace), f"{DGD_LABEL}={name}" if name else DGD_LABEL, None)}
    listed = {}
    for kind, items in (("dgd", snap.dgds), ("pod", snap.pods)):
        version = cluster.list_versions.get(watches[kind])
        if version is not None:  # else the read did not list it (no DGD, so no pod LIST; or it was refused)
            listed[kind] = (items, version)
    watched = Watched(cluster, watches, listed)

    def rows(views: Optional[List[DgdView]] = None) -> Dict[Tuple, List[str]]:
        """The table's rows, of ``views`` or else of the watched state."""
        if views is None:
            snap.dgds, snap.pods = watched.items("dgd"), watched.items("pod")
            views = build_views(snap)
        out: Dict[Tuple, List[str]] = {}
        for v in views:
            data = summarize_view(v, findings_of(v), env.now())
            for key, row in get_rows([data], detail=bool(name), wide=wide):
                out[key] = row
        return out

    shown = rows(views)
    headers = _headers(bool(name), wide)
    ws = widths(headers, list(shown.values()))
    env.out(line([h.upper() for h in headers], ws))
    for row in shown.values():
        env.out(line(row, ws))
    env.stdout.flush()
    watched.start()
    deadline = None if timeout is None else env.monotonic() + timeout
    try:
        while deadline is None or env.monotonic() < deadline:
            if watched.wait() is None:
                continue
            current = rows()
            for key, row in current.items():
                if shown.get(key) != row:  # kubectl -w prints changed rows alone, under the first header
                    env.out(line(row, ws))
            env.stdout.flush()
            shown = current
    finally:
        watched.close()
    return 0


def _headers(detail: bool, wide: bool) -> List[str]:
    from kubectl_dynamo.output.tables import GET_DETAIL, GET_SUMMARY, WIDE_EXTRA

    return (GET_DETAIL if detail else GET_SUMMARY) + (WIDE_EXTRA if wide else [])
