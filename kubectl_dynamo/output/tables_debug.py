"""The human formatters of the debugging loop: ``get``, ``tree`` and ``collect`` (see tables.py for the rest)."""

from __future__ import annotations

from typing import Any, Iterator, List, Optional, Tuple

from kubectl_dynamo.output.render import grid, paint

GET_SUMMARY = ["namespace", "name", "orchestrator", "components", "groups", "ranks", "restarts", "ready", "age",
               "finding"]
GET_DETAIL = ["component", "group", "pods", "ranks", "restarts", "finding"]
WIDE_EXTRA = ["message"]


def _finding(f: Optional[dict], color: bool) -> str:
    return paint(f["code"], f["severity"], color) if f else "-"


def _ready(r: dict) -> str:
    if r["status"] is None:
        return "-"
    return r["status"] + (f" ({r['reason']})" if r.get("reason") else "")


def get_rows(data: dict, *, detail: bool, wide: bool, color: bool = False) -> Iterator[Tuple[tuple, List[Any]]]:
    """(stable key, cells) of each row: the key lets ``get -w`` reprint only the rows that changed."""
    for d in data.get("deployments", [data]):
        if not detail:
            row = [d["namespace"], d["name"], d["orchestrator"], len(d["components"]),
                   f"{d['groupsReady']}/{d['groupsDesired']}", f"{d['ranksPresent']}/{d['ranksDesired']}",
                   d["restarts"], _ready(d["ready"]), d["age"], _finding(d["topFinding"], color)]
            yield (d["namespace"], d["name"]), row + ([(d["topFinding"] or {}).get("message")] if wide else [])
            continue
        for c in d["components"]:
            for g in c["groups"] or [None]:
                if g is None:
                    row = [c["name"], "-", f"0/{c['nodeCount']}", "-", 0, _finding(d["topFinding"], color)]
                    top = d["topFinding"]
                else:
                    ranks = ",".join(str(r) for r in g["ranks"]) or "-"
                    row = [c["name"], g["index"], f"{g['podsReady']}/{g['ranksDesired']}", ranks, g["restarts"],
                           _finding(g["topFinding"], color)]
                    top = g["topFinding"]
                key = (d["namespace"], d["name"], c["name"], None if g is None else g["index"])
                yield key, row + ([(top or {}).get("message")] if wide else [])


def format_get(data: dict, wide: bool, color: bool, *, detail: bool) -> str:
    rows = [row for _, row in get_rows(data, detail=detail, wide=wide, color=color)]
    headers = (GET_DETAIL if detail else GET_SUMMARY) + (WIDE_EXTRA if wide else [])
    if not data["deployments"]:
        out = ["No DynamoGraphDeployments in scope."]
    elif detail:
        d = data["deployments"][0]
        out = [f"{d['namespace']}/{d['name']}: orchestrator {d['orchestrator'] or '-'}, groups "
               f"{d['groupsReady']}/{d['groupsDesired']} ready, ranks {d['ranksPresent']}/{d['ranksDesired']}, "
               f"Ready {_ready(d['ready'])}, age {d['age'] or '-'}", "", grid(rows, headers)]
    else:
        out = [grid(rows, headers)]
    if data.get("skipped"):
        out += ["", "Skipped:"] + [f"  {s['check']}: {s['reason']}" for s in data["skipped"]]
    return "\n".join(out)


def widths(headers: List[str], rows: List[List[Any]]) -> List[int]:
    cells = [[h.upper() for h in headers]] + [["-" if c is None else str(c) for c in r] for r in rows]
    return [max(len(r[i]) for r in cells if i < len(r)) for i in range(len(headers))]


def line(cells: List[Any], ws: List[int]) -> str:
    """One row padded to ``ws`` (kubectl's columns, three spaces apart)."""
    text = ["-" if c is None else str(c) for c in cells]
    return "   ".join(c.ljust(w) for c, w in zip(text, ws + [0] * len(text))).rstrip()



# -- tree ---------------------------------------------------------------------------------------------

def _tree_label(n: dict, color: bool) -> str:
    text = f"{n['kind']}/{n['name']}"
    if n["kind"] == "Pod":
        rank = "-" if n.get("rank") is None else n["rank"]
        text += f"  {n.get('component') or '?'}/{n.get('group')}/{rank}({n.get('role')})  node {n.get('node') or '-'}"
    status = n.get("status") or ""
    if status:
        kind = "ok" if ("ready" in status and "not ready" not in status) or "Running" in status else "warning"
        if status == "missing":
            kind = "error"
        text += "  " + paint(status, kind, color)
    missing = [f"{x['kind']}/{x['name']}" for x in n.get("needs") or [] if x["present"] is False and not x["optional"]]
    if missing:
        text += "  " + paint("missing " + ", ".join(missing), "error", color)
    return text


def format_tree(data: dict, wide: bool, color: bool) -> str:
    lines = [_tree_label(data, color)]

    def walk(node: dict, indent: str) -> None:
        kids = node.get("children") or []
        for i, child in enumerate(kids):
            last = i == len(kids) - 1
            via = f"  [{child['via']}]" if wide and child.get("via") else ""
            lines.append(indent + ("└─ " if last else "├─ ") + _tree_label(child, color) + via)
            walk(child, indent + ("   " if last else "│  "))

    walk(data, "")
    if data.get("needs"):
        lines += ["", "Needed by the groups:"]
        for need in data["needs"]:
            state = {True: paint("present", "ok", color), False: paint("MISSING", "error", color),
                     None: paint("unknown (forbidden)", "warning", color)}[need["present"]]
            optional = " (optional)" if need["optional"] else ""
            lines.append(f"  {need['kind']}/{need['name']}: {state}{optional}  <- {', '.join(need['neededBy'])}")
    if data.get("skipped"):
        lines += ["", "Skipped:"] + [f"  {s['check']}: {s['reason']}" for s in data["skipped"]]
    return "\n".join(lines)


# -- collect ------------------------------------------------------------------------------------------

def format_collect(data: dict, wide: bool, color: bool) -> str:
    d = data["doctor"]
    out = [f"Wrote {data['output']} ({data['bytes'] / 1024:.0f} KiB): {data['files']} files, {data['pods']} pods, "
           f"{data['logs']} logs; doctor: {d['errors']} errors, {d['warnings']} warnings.",
           f"Offline: kubectl dynamo doctor --from {data['output']}"]
    for title, items, kind in (("Forbidden", data["forbidden"], "error"), ("Unavailable", data["unavailable"], "warning")):
        if items:
            out += ["", paint(f"{title}:", kind, color)] + [f"  {i['what']}: {i['reason']}" for i in items]
    return "\n".join(out)
