"""The human formatters: each turns one command's result data into the text of ``-o table|wide``.

They only format (the one renderer, ``output.render``, prints); ``color`` is decided by the
Environment. Kept together so the look of every command is in one file.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, cast

from kubectl_dynamo.output.render import cut, fold, folded, grid, natural_widths, paint, row_line, yes_no
from kubectl_dynamo.words import plural

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import (
        BundleListing,
        Catalogue,
        CheckEntry,
        CollectSummary,
        DetectData,
        DoctorData,
        ExplainedDgd,
        ExplainList,
        FieldDocs,
        FindingJson,
        GenerateSummary,
        GetData,
        GetDgd,
        GetGroup,
        PlacementData,
        RolloutHistory,
        TreeData,
        VersionData,
    )

# -- detect ------------------------------------------------------------------------------------------

def format_detect(r: DetectData, wide: bool, color: bool, width: Optional[int] = None) -> str:
    out = [f"Kubernetes:  {r['kubernetes']['version'] or 'unknown'}",
           f"GPU nodes:   {r['gpuNodes']['count']} ({r['gpuNodes']['allocatableGpus']} allocatable nvidia.com/gpu)",
           ""]
    rows = []
    for name, o in r["orchestrators"].items():
        extra = ""
        if name == "lws" and o["installed"]:
            extra = "disaggregatedset.x-k8s.io/v1" if o["disaggregatedSet"] else "no DisaggregatedSet API"
        if name in ("kai", "volcano") and o["installed"]:
            extra = plural(len(o["queues"]), "queue")
        healthy = yes_no(o["healthy"]) if o["installed"] else "-"
        rows.append([name, yes_no(o["installed"]), o["version"], healthy, extra])
    out += [grid(rows, ["orchestrator", "installed", "version", "healthy", "notes"], width), ""]

    kai, vol = r["orchestrators"]["kai"], r["orchestrators"]["volcano"]
    if kai["installed"]:
        qs = ", ".join(f"{q['name']}" + (f" (parent {q['parent']})" if q["parent"] else "") +
                       ("" if q["leaf"] else " [not a leaf]") for q in kai["queues"]) or "none"
        out.append(f"KAI queues:      {qs}")
    if vol["installed"]:
        qs = ", ".join(f"{q['name']} ({q['state'] or 'unknown'})" for q in vol["queues"]) or "none"
        out.append(f"Volcano queues:  {qs}")

    op = r["dynamoOperator"]
    gates = " ".join(f"{k}={'unknown' if v is None else ('on' if v else 'off')}" for k, v in op["gates"].items())
    label = f"installed, version {op['version'] or 'unknown'}" if op["installed"] else "not installed (gates by auto-detection)"
    out += [f"Dynamo operator: {label}; gates: {gates}", ""]

    out.append("Selection for a new multinode DGD:")
    rows = []
    for case, s in (("default", r["selection"]["default"]),
                    ('enable-grove: "false"', r["selection"]["enableGroveFalse"])):
        outcome = paint(f"FAILS: {s['error']}", "error", color) if s["error"] else paint("ok", "ok", color)
        rows.append([case, s["provider"], s["orchestrator"], s["scheduler"], s["queue"], outcome])
    out.append(grid(rows, ["case", "provider", "orchestrator", "scheduler", "queue", "outcome"], width))
    for case, s in (("default", r["selection"]["default"]), ("enable-grove false", r["selection"]["enableGroveFalse"])):
        out.append(f"  {case}: {s['reason']}")

    if r["problems"]:
        out += ["", "Problems:"]
        rows = [[paint(p["severity"], p["severity"], color), p["code"], p["message"]] + ([p["hint"]] if wide else [])
                for p in r["problems"]]
        out.append(grid(rows, ["severity", "code", "message"] + (["hint"] if wide else []), width))
    return folded(out, width)


# -- doctor ------------------------------------------------------------------------------------------

def format_doctor(r: DoctorData, wide: bool, color: bool, width: Optional[int] = None, *, min_severity: str = "error") -> str:
    from kubectl_dynamo.findings.finding import at_least  # the catalogue: not for `version --client`

    out = []
    rows = []
    for d in r["deployments"]:
        for c in d["components"]:
            for g in c["groups"] or [{"index": None, "podsReady": 0, "ranks": []}]:
                ranks = ",".join("?" if x is None else str(x) for x in g["ranks"]) or "-"
                rows.append([f"{d['namespace']}/{d['name']}", c["name"], g["index"],
                             f"{g['podsReady']}/{c['nodeCount']}", ranks, c.get("mode", "")])
    if rows:
        out.append(grid(rows, ["dgd", "component", "group", "ready", "ranks", "mode"], width))
    elif any(f["code"] == "permission-denied" and "dynamographdeployments" in f["message"] for f in r["findings"]):
        out.append("DynamoGraphDeployments could not be listed in this scope (permission-denied below).")
    else:
        out.append("No DynamoGraphDeployments in scope.")
    shown = [f for f in r["findings"] if at_least(f["severity"], min_severity)]
    s = r["summary"]
    since = r.get("since")
    out += ["", ("New since " + since["file"] + ": " if since else "")
            + f"{plural(s['errors'], 'error')}, {plural(s['warnings'], 'warning')}, {plural(s['infos'], 'info')}"
            + (f" (showing {min_severity} and above; --min-severity info shows all)" if len(shown) < len(r["findings"]) else "")]
    if since:
        out.append(f"Resolved since {since['file']}: {len(since['resolved'])}; unchanged: {since['unchanged']}")
    if shown:
        out += ["", findings_grid(nest_findings(shown), width, color=color, hint="column" if wide else None)]
        if not wide:
            out.append("(-o wide adds the fix for each finding)")
    if since and since["resolved"]:
        out += ["", "Resolved (no longer found):",
                findings_grid([(f, 0) for f in since["resolved"]], width, color=color)]
    if r["skipped"]:
        out += ["", "Skipped:"] + [f"  {s['check']}{_skipped_object(s)}: {s['reason']}" for s in r["skipped"]]
    return folded(out, width)


def _skipped_object(s: Mapping[str, Any]) -> str:
    """The object a skipped finding was about (two findings of one code skipped by one rule differ by it)."""
    obj = s.get("object") or {}
    if not obj.get("name"):
        return ""
    return f" ({obj.get('kind')}/{obj['namespace'] + '/' if obj.get('namespace') else ''}{obj['name']})"


def findings_grid(nested: Iterable[Tuple[Any, int]], width: Optional[int], *, color: bool = False,
                  hint: Optional[str] = None, namespace: bool = True) -> str:
    """doctor's findings table (severity, code under its cause, object, message) of (finding, depth)
    pairs (``nest_findings``). ``hint``: "column" adds a HINT column, "beneath" puts "fix: ..." under
    each message; ``namespace=False`` leaves the namespace out of OBJECT (one DGD's own findings)."""
    rows = []
    for f, depth in nested:
        o = f["object"] or {}
        where = "/".join(x for x in (o.get("kind"), o.get("namespace") if namespace else None, o.get("name")) if x)
        code = ("  " * (depth - 1) + "└ " if depth else "") + f["code"]
        message = f["message"] + (f"\nfix: {f['hint']}" if hint == "beneath" and f.get("hint") else "")
        rows.append([paint(f["severity"], f["severity"], color), code, where, message]
                    + ([f["hint"]] if hint == "column" else []))
    return grid(rows, ["severity", "code", "object", "message"] + (["hint"] if hint == "column" else []), width,
                optional=("object",))  # the message names the object too


def nest_findings(findings: list) -> list:
    """(finding, depth): each root (no ``cause``, or a cause not shown) followed by what it causes.
    doctor already orders its findings so; this only measures the depth."""
    key = lambda f: (f["code"], *(((f.get("object") or {}).get(k)) for k in ("kind", "namespace", "name")))  # noqa: E731
    depth: dict = {}
    out = []
    for f in findings:
        c = f.get("cause")
        parent = (c["code"], *((c.get("object") or {}).get(k) for k in ("kind", "namespace", "name"))) if c else None
        d = depth[parent] + 1 if parent in depth else 0
        depth.setdefault(key(f), d)
        out.append((f, d))
    return out


# -- doctor --explain CODE: the check catalogue offline ---------------------------------------------

def format_check(e: CheckEntry, wide: bool, color: bool, width: Optional[int] = None) -> str:
    severity = e["severity"] + (f" ({e['when']})" if e.get("when") else "")
    lines = [f"{paint(e['code'], e['severity'], color)}  ({severity}; {', '.join(e['scopes'])})",
             f"  what: {_plain(e['what'])}", f"  why:  {_plain(e['why']) or '-'}", f"  fix:  {_plain(e['fix']) or '-'}"]
    if e["refs"]:
        lines.append(f"  refs: {', '.join(e['refs'])}")
    return folded(lines, width or 100)


def format_checks(data: Catalogue, wide: bool, color: bool, width: Optional[int] = None) -> str:
    intro = folded(_plain(data.get("about", "")).split("\n"), width)
    return "\n\n".join([intro] + [format_check(e, wide, color, width) for e in data["checks"]])


def _plain(text: str) -> str:
    return text.replace("**", "").replace("`", "")  # the catalogue's markdown, for a terminal


# -- explain -----------------------------------------------------------------------------------------

WIDTH = 110


def format_results(result: ExplainList, wide: bool, color: bool, width: Optional[int] = None) -> str:
    out = []
    for r in result["items"]:
        out.append(format_one(r, wide, color, width))
    for s in result["skipped"]:
        where = f" of {s['file']}" if s.get("file") else ""
        out.append(folded([f"skipped document {s['document']}{where} ({s['kind'] or 'no kind'}): {s['reason']}"],
                          width))
    return "\n\n".join(out)


def format_one(r: ExplainedDgd, wide: bool, color: bool, width: Optional[int] = None) -> str:
    ns = f" -n {r['namespace']}" if r["namespace"] else ""
    placed = (f"provider {r['provider']}, orchestrator {r['orchestrator'] or 'none'}, "
              f"scheduler {r['scheduler'] or 'default'}" + (f", queue {r['queue']}" if r["queue"] else "")
              if r["provider"] else "not rendered: the findings below make the DGD unreadable to the operator")
    out = [f"DynamoGraphDeployment {r['name']}{ns}  ({r['apiVersion']})",
           f"  operator {r['operatorVersion']}, origin {r['originVersion'] or 'none'}; {placed}" + _lws_gang_note(r)]
    for c in r["components"]:
        out.append("")
        size = (f"{plural(c['nodeCount'], 'node')} x {plural(c['gpusPerPod'], 'GPU')} = {plural(c['totalGpus'], 'GPU')}"
                if c["multinode"] else f"{plural(c['gpusPerPod'], 'GPU')} per pod, {c['totalGpus']} total")
        out.append(paint(f"component {c['name']}", "info", color) + f" ({c['type'] or 'no type'}, {c['backend']}): {size}")
        out.append(f"  mode {c['mode']}: {c['modeReason']}")
        for role in c["roles"]:
            out += _format_role(role, wide, width)
    if r["findings"]:
        out += ["", "Findings:"]
        rows = []
        for f in r["findings"]:
            row = [paint(f["severity"], f["severity"], color), f["code"], f["component"] or "-", f["message"]]
            rows.append(row + ([f["hint"]] if wide else []))
        out.append(grid(rows, ["severity", "code", "component", "message"] + (["hint"] if wide else []), width))
        if not wide:
            out.append("(-o wide shows the hint for each finding)")
    return folded(out, width)


def _lws_gang_note(r: ExplainedDgd) -> str:
    """On the LWS path Volcano gets a PodGroup, but only pods that name it are gang-scheduled: the
    operator renders none with schedulerName (LWS's volcano provider only annotates them)."""
    if r.get("orchestrator") != "lws":
        return ""
    specs = [role["podSpec"] for c in r["components"] if c["multinode"] for role in c["roles"]]
    if specs and all(s.get("schedulerName") == "volcano" for s in specs):
        return " (pods name schedulerName volcano: Volcano gang-schedules each group)"
    return (" (PodGroup only: the pods run on default-scheduler, so the gang is not enforced; "
            "set schedulerName: volcano in the pod templates)")


def _format_role(role: dict, wide: bool, width: Optional[int] = None) -> list:
    spec = role["podSpec"]
    containers = spec.get("containers") or []
    main = containers[0] if containers else {}
    out = [f"  role {role['name']} x{role['replicas']}  image {main.get('image') or '(none)'}"]
    out += _wrap("command", _cmdline(main), width)
    env = main.get("env") or []
    if env:
        # .get: a DGD with schema errors (an env entry without a name) is still shown
        shown = [f"{e.get('name', '?')}={_env_value(e)}" for e in env]
        out += _wrap("env", " ".join(shown) if wide else ", ".join(e.get("name", "?") for e in env), width)
    probes = [f"{p}={_probe(main.get(p + 'Probe'))}" for p in ("liveness", "readiness", "startup")]
    out.append(f"    probes:  {', '.join(probes)}")
    for ic in spec.get("initContainers") or []:
        out += _wrap(f"init {ic.get('name', '?')}", _cmdline(ic), width)
    mounts = [f"{m.get('name', '?')}:{m.get('mountPath', '?')}{' (ro)' if m.get('readOnly') else ''}"
              for m in main.get("volumeMounts") or []]
    if mounts:
        out += _wrap("mounts", ", ".join(mounts), width)
    return out


def _cmdline(container: dict) -> str:
    import shlex

    parts = list(container.get("command") or []) + list(container.get("args") or [])
    return " ".join(shlex.quote(p) for p in parts) if parts else "(image default)"


def _wrap(label: str, text: str, width: Optional[int] = None) -> list:
    """``label: text`` wrapped under itself at WIDTH (or a narrower terminal's ``width``, where a
    word wider than the terminal is cut: piped, it is whole)."""
    lines = textwrap.wrap(text, min(width or WIDTH, WIDTH) - 14, break_long_words=False, break_on_hyphens=False) or [""]
    head = f"    {label}:"
    out = [f"{head:<14}{lines[0]}"] if len(head) < 14 else [head, " " * 14 + lines[0]]
    out += [" " * 14 + line for line in lines[1:]]
    return out if width is None else [cut(line, width) for line in out]


def _env_value(e: dict) -> str:
    if "value" in e:
        return str(e["value"])
    ref = e.get("valueFrom") or {}
    if "fieldRef" in ref:
        return f"<{ref['fieldRef'].get('fieldPath')}>"
    return "<ref>"


def _probe(p) -> str:
    if not p:
        return "none"
    if "httpGet" in p:
        return f"http {p['httpGet'].get('path')}:{p['httpGet'].get('port')}"
    if "tcpSocket" in p:
        return f"tcp:{p['tcpSocket'].get('port')}"
    if "exec" in p:
        return "exec"
    return "set"


def format_field_docs(d: FieldDocs, wide: bool, color: bool, width: Optional[int] = None) -> str:
    text = min(90, (width or 94) - 4)  # kubectl explain's 80-ish columns, narrower on a narrow terminal
    out = [f"GROUP:      {d['group']}", f"KIND:       {d['kind']}", f"VERSION:    {d['version']}", ""]
    if d["field"]:
        out += [f"FIELD: {d['field'].split('.')[-1]} <{d['type']}>", ""]
    out.append("DESCRIPTION:")
    for para in (d["description"] or "<empty>").split("\n"):
        out += ["    " + line for line in (_words(para, text) or [""])]
    if d["multinodeNotes"]:
        out += ["", "MULTINODE:"] + ["    " + line for line in _words(d["multinodeNotes"], text)]
    if d["fields"]:
        out += ["", "FIELDS:"]
        for f in d["fields"]:
            indent = "  " * (f["depth"] + 2)
            req = " -required-" if f["required"] else ""
            out.append(f"{indent}{f['name']}\t<{f['type']}>{req}")
            if not any(x["depth"] > 0 for x in d["fields"]) and f["description"]:
                out += [indent + "  " + line for line in _words(f["description"], text - 4)]
                out.append("")
    return "\n".join(out)


def _words(text: str, width: int) -> List[str]:
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)


# -- version -----------------------------------------------------------------------------------------

def format_version(r: VersionData, wide: bool, color: bool, width: Optional[int] = None) -> str:
    build = r.get("clientBuild")
    lines = [f"Client Version: {r['clientVersion']}"]
    if build is not None:
        commit = build["gitCommit"]
        shown = "unknown (source checkout)" if not commit else commit[:12] + ("+dirty" if "+dirty" in commit else "")
        lines[0] += f" (commit {shown}, {build['platform']}, Python {build['python']})"
    if "serverVersion" in r:
        lines.append(f"Server Version: {r['serverVersion']}")
        op = r.get("dynamoOperator")
        if op is None:
            lines.append("Dynamo Operator: not found (looked for a Deployment labelled "
                         "app.kubernetes.io/name=dynamo-operator,control-plane=controller-manager)")
        elif op.get("error"):
            lines.append(f"Dynamo Operator: unknown ({op['error']})")
        else:
            lines.append(f"Dynamo Operator Version: {op['version']} ({op['namespace']}/{op['name']})")
    return folded(lines, width)


# -- generate ----------------------------------------------------------------------------------------

def format_summary(result: GenerateSummary, wide: bool, color: bool, width: Optional[int] = None) -> str:
    rows = [[e["component"], e["nodes"], e["gpusPerNode"], e["tp"], e["pp"], e["replicas"], e["totalGpus"], e["roles"]]
            for e in result["engines"]]
    return grid(rows, ["component", "nodes", "gpus/node", "tp", "pp", "replicas", "gpus", "pods"], width)


# -- upgrade -----------------------------------------------------------------------------------------

def format_report(result: dict, wide: bool, color: bool, width: Optional[int] = None) -> str:
    rows = [[d["index"] + 1, d["kind"], d["name"], d["from"], d["to"], "yes" if d["changed"] else "no",
             sum(p["severity"] == "warning" for p in d["problems"]), sum(not r.get("note") for r in d["rewrites"])]
            for d in result["documents"]]
    return grid(rows, ["doc", "kind", "name", "from", "to", "changed", "warnings", "rewrites"], width)


# -- install -----------------------------------------------------------------------------------------

def format_preflight(doc, width: Optional[int] = None) -> str:
    p = doc["preflight"]
    lines = ["Preflight:", f"  ok    helm {p['helm']['version']} ({p['helm']['path']})" if p["helm"]["path"] else
             "  note  helm not found on $PATH: a dry run needs none; running the plan does (the cluster's Helm "
             "releases are not read: installed components are judged from detect only)"]
    for c in p.get("checks", []):
        lines.append(f"  {'ok  ' if c['ok'] else 'FAIL'}  {c['check']}: {c['message']}")
    det = p.get("detected") or {}
    seen = ", ".join(f"{k} {v['version'] or ('yes' if v['installed'] else 'no')}" for k, v in det.items()
                     if k != "dynamoOperator")
    op = det.get("dynamoOperator") or {}
    lines.append(f"  info  detect: {seen}; Dynamo operator: "
                 f"{(op.get('version') or 'installed') if op.get('installed') else 'not installed'}")
    return folded(lines, width) + "\n"


TITLES = {"platform": "Grove + KAI Scheduler with the Dynamo platform chart (Option 1)",
          "separately": "Grove and KAI Scheduler from their own charts, then the Dynamo platform (Option 1, production)",
          "lws": "Volcano, then LeaderWorkerSet with Volcano gang scheduling (Option 2)"}


def format_plan(plan, dry_run=False, width: Optional[int] = None) -> str:
    import yaml

    from kubectl_dynamo.output.yamlquote import safe_dumper

    req = plan.request
    runs = plan.to_run
    lines = [f"Plan: {TITLES[req.mode]}, {plural(len(runs), 'step')}" + (" (dry run: nothing changes)" if dry_run else "")]
    for s in plan.steps:
        if not s.runs:
            lines.append(f"  [-] skip {s.title}: {s.reason}")
    for s in runs:
        head = f"  [{s.number}/{len(runs)}] "
        if s.component == "queues":
            lines.append(head + f"create KAI queues where missing: {', '.join(o['metadata']['name'] for o in s.objects)}"
                         f" ({s.reason})")
            text = yaml.dump_all(s.objects, Dumper=safe_dumper(), sort_keys=False, default_flow_style=None,
                                 width=1 << 16)
            lines += ["        " + line for line in text.rstrip().splitlines()]
        else:
            lines += fold(head + s.command(req.helm), width, " " * len(head) + "    ")
            lines.append(f"        {s.action}: {s.reason}")
    for w in plan.warnings:
        lines.append(f"warning: {w}")
    for b in plan.blockers:
        lines.append(f"blocked: {b}")
    return folded(lines, width)


def format_result(req, r, width: Optional[int] = None) -> str:
    def text(value) -> str:  # what detect could not tell is "none", never Python's None
        return "none" if value is None else str(value)

    lines = ["", "Result:"]
    lines.append("  APIs served:  " + ", ".join(f"{g} {'yes' if v else 'NO'}" for g, v in r["apis"].items()))
    lines.append("  controllers:  " + ", ".join(
        f"{k} {'healthy' if c['healthy'] else ('unknown' if c['healthy'] is None else 'NOT healthy')}"
        + (f" ({c['version']})" if c.get("version") else "") for k, c in r["controllers"].items()))
    for k, names in r["queues"].items():
        lines.append(f"  {k} queues:  " + (", ".join(text(n) for n in names) or "none"))
    s = r["selection"]
    lines.append(f"  a new multinode DGD: provider {text(s.get('provider'))}, orchestrator {text(s.get('orchestrator'))}, "
                 f"scheduler {text(s.get('scheduler'))}, queue {text(s.get('queue'))}"
                 + (f" — FAILS: {s['error']}" if s.get("error") else ""))
    if s.get("reason"):
        lines.append(f"    {s['reason']}")
    if r["ok"]:
        lines.append(f"ok: a new multinode DGD uses {req.orchestrator}")
    return folded(lines, width)


def format_blocking(blocking: List[dict]) -> List[str]:
    """What kept a helm step from succeeding: each workload not ready, doctor's causes and fixes, and what
    the components said (whole: these lines go to stderr and are never cut)."""
    lines = []
    for b in blocking:
        o = b["object"]
        lines.append(f"blocked: {o['kind'].lower()} {o['namespace']}/{o['name']} is not ready "
                     f"({b['ready']}/{b['desired']}{' succeeded' if o['kind'] == 'Job' else ' ready'})")
        for c in b["causes"]:
            lines += [f"    cause: {c['what']}", f"    fix:   {c['fix']}"]
        for e in b["evidence"]:
            lines.append(f"    seen:  {e['object']['kind']} {e['object']['name']} {e['reason']}: {e['message']}")
        if not b["causes"] and not b["evidence"]:
            lines.append("    seen:  nothing said why (no create failure, no pod waiting for a reason)")
    return lines


def format_changes(result: ExplainList, wide: bool, width: Optional[int] = None) -> str:
    """``explain --diff``: per component and role, what the operator changed in the authored template.
    Changes of one kind are folded onto one line (``-o wide``: one line each, with the values)."""
    out = []
    for r in result["items"]:
        out.append(f"DynamoGraphDeployment {r['name']}: what the operator changes "
                   f"(operator {r['operatorVersion']}, {r['orchestrator'] or r['provider']})")
        for c in r["components"]:
            for role in c["roles"]:
                out.append(f"  {c['name']} / {role['name']} x{role['replicas']}:")
                if not role["changes"]:
                    out.append("    (nothing)")
                kinds: Dict[str, List[dict]] = {}
                for ch in role["changes"]:
                    kinds.setdefault(ch["what"], []).append(ch)
                for what, items in kinds.items():
                    if wide or (len(items) == 1 and what in ("flags inserted", "launch replaced", "command changed",
                                                              "command wrapped")):
                        for ch in items:
                            detail = ch["detail"] if wide or len(ch["detail"]) <= 100 else ch["detail"][:97] + "..."
                            out.append(f"    {what:<18} {ch['name']}" + (f"  {detail}" if detail else ""))
                    else:
                        names = ", ".join(ch["name"] for ch in items)
                        if len(names) > 90:
                            names = names[:87] + "..."
                        out.append(f"    {what:<18} ({len(items)}) {names}")
        out.append("")
    return folded(out, width)


# -- the debugging loop: get, tree, collect ---------------------------------------------------
GET_SUMMARY = ["namespace", "name", "orchestrator", "components", "groups", "ranks", "restarts", "ready", "age",
               "finding"]
GET_DETAIL = ["component", "group", "pods", "ranks", "restarts", "finding"]
WIDE_EXTRA = ["message"]
# Left out, in this order, on a terminal too narrow for the summary (piped and -o wide keep them)
GET_OPTIONAL = ("components", "restarts", "orchestrator", "namespace")


def _finding(f: Optional[Mapping[str, Any]], color: bool) -> str:
    return paint(f["code"], f["severity"], color) if f else "-"


def _ready(r: Mapping[str, Any]) -> str:
    if r["status"] is None:
        return "-"
    return r["status"] + (f" ({r['reason']})" if r.get("reason") else "")


def get_rows(dgds: List[GetDgd], *, detail: bool, wide: bool, color: bool = False) -> Iterator[Tuple[tuple, List[Any]]]:
    """(stable key, cells) of each row: the key lets ``get -w`` reprint only the rows that changed."""
    for d in dgds:
        if not detail:
            row = [d["namespace"], d["name"], d["orchestrator"], len(d["components"]),
                   f"{d['groupsReady']}/{d['groupsDesired']}", f"{d['ranksPresent']}/{d['ranksDesired']}",
                   d["restarts"], _ready(d["ready"]), d["age"], _finding(d["topFinding"], color)]
            yield (d["namespace"], d["name"]), row + ([_message(d["topFinding"])] if wide else [])
            continue
        for c in d["components"]:
            groups: List[Optional[GetGroup]] = [*c["groups"]] or [None]
            for g in groups:
                if g is None:
                    row = [c["name"], "-", f"0/{c['nodeCount']}", "-", 0, _finding(d["topFinding"], color)]
                    top = d["topFinding"]
                else:
                    ranks = ",".join(str(r) for r in g["ranks"]) or "-"
                    row = [c["name"], g["index"], f"{g['podsReady']}/{g['ranksDesired']}", ranks, g["restarts"],
                           _finding(g["topFinding"], color)]
                    top = g["topFinding"]
                key = (d["namespace"], d["name"], c["name"], None if g is None else g["index"])
                yield key, row + ([_message(top)] if wide else [])


def _message(finding: Optional[FindingJson]) -> Optional[str]:
    return finding["message"] if finding else None


def format_get(data: GetData, wide: bool, color: bool, width: Optional[int] = None, *, detail: bool) -> str:
    rows = [row for _, row in get_rows(data["deployments"], detail=detail, wide=wide, color=color)]
    headers = (GET_DETAIL if detail else GET_SUMMARY) + (WIDE_EXTRA if wide else [])
    optional = () if detail else GET_OPTIONAL
    if not data["deployments"]:
        out = ["No DynamoGraphDeployments in scope."]
    elif detail:
        d = data["deployments"][0]
        out = [f"{d['namespace']}/{d['name']}: orchestrator {d['orchestrator'] or '-'}, groups "
               f"{d['groupsReady']}/{d['groupsDesired']} ready, ranks {d['ranksPresent']}/{d['ranksDesired']}, "
               f"Ready {_ready(d['ready'])}, age {d['age'] or '-'}", "", grid(rows, headers, width, optional)]
    else:
        out = [grid(rows, headers, width, optional)]
    if data.get("skipped"):
        out += ["", "Skipped:"] + [f"  {s['check']}: {s['reason']}" for s in data["skipped"]]
    return folded(out, width)


def widths(headers: List[str], rows: List[List[Any]]) -> List[int]:
    """The columns of ``get -w``'s first table: grid's natural widths (every cell whole)."""
    return natural_widths([h.upper() for h in headers], [_texts(r) for r in rows])


def line(cells: List[Any], ws: List[int]) -> str:
    """One row of ``get -w`` laid out in the first table's columns ``ws``, as kubectl's watch keeps
    its widths (RememberWidths): the widest cell + 3, at least 6, the last column unpadded."""
    return row_line(_texts(cells), ws)


def _texts(cells: List[Any]) -> List[str]:
    return ["-" if c is None else str(c) for c in cells]



# -- tree ---------------------------------------------------------------------------------------------

def _tree_label(n: Mapping[str, Any], color: bool) -> str:
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


def format_tree(data: TreeData, wide: bool, color: bool, width: Optional[int] = None) -> str:
    lines = [_tree_label(data, color)]

    def walk(node: Mapping[str, Any], indent: str) -> None:
        kids = node.get("children") or []
        for i, child in enumerate(kids):
            last = i == len(kids) - 1
            via = f"  [{child['via']}]" if wide and child.get("via") else ""
            # a label too long for the terminal continues under itself, the tree's lines kept
            lines.extend(fold(indent + ("└─ " if last else "├─ ") + _tree_label(child, color) + via, width,
                              indent + ("   " if last else "│  ") + ("   " if child.get("children") else "   ")))
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
    return folded(lines, width)


# -- collect ------------------------------------------------------------------------------------------

def _scope_words(scope: dict) -> str:
    from kubectl_dynamo.model.bundle import scope_words

    return scope_words(scope, cluster="cluster (every namespace)")


def _caps(limits: dict) -> str:
    mib = 1024 * 1024
    return (f"{limits['log_lines']} lines and {limits['log_bytes'] / mib:g} MiB per log, "
            f"{limits['controller_log_lines']} lines and {limits['controller_log_bytes'] / mib:g} MiB per controller "
            f"log, logs of at most {limits['max_pods']} pods, {limits['max_bytes'] / mib:g} MiB in all")


def format_collect(data: CollectSummary, wide: bool, color: bool, width: Optional[int] = None) -> str:
    d = data["doctor"]
    out = [f"Wrote {data['output']} ({data['bytes'] / 1024:.0f} KiB), scope {_scope_words(cast(dict, data['scope']))}: "
           f"{plural(data['files'], 'file')}, {plural(data['pods'], 'pod')}, {plural(data['logs'], 'log')}; "
           f"doctor: {plural(d['errors'], 'error')}, {plural(d['warnings'], 'warning')}."]
    redacted = ", ".join(f"{n} {what}" for what, n in data["redacted"].items()) or "nothing matched"
    out.append(f"Redacted: {redacted}" + ("; env values kept (--include-env)." if data["includeEnv"] else
                                           "; Secret values are never read."))
    out.append(f"Caps: {_caps(cast(dict, data['limits']))}"
               + (f"; {plural(data['truncated'], 'log')} truncated." if data["truncated"] else "."))
    if data["mapping"]:
        out.append(f"Anonymized: real names are in {data['mapping']} (kept here, never in the bundle).")
    out.append(f"Offline: kubectl dynamo doctor --from {data['output']}   "
               f"(kubectl dynamo doctor --from {data['output']} --list: what it holds)")
    for title, items, kind in (("Forbidden", data["forbidden"], "error"), ("Unavailable", data["unavailable"], "warning")):
        if items:
            out += ["", paint(f"{title}:", kind, color)] + [f"  {i['what']}: {i['reason']}" for i in items]
    return folded(out, width)


def format_bundle(data: BundleListing, wide: bool, color: bool, width: Optional[int] = None) -> str:
    """``doctor --from BUNDLE --list``: scope, versions, counts, redaction, caps, then every file."""
    out = [f"Bundle:     {data['path']}" + (f" (collect format {data['collectFormat']})" if data["collectFormat"] else ""),
           f"Scope:      {_scope_words(cast(dict, data['scope']))}", f"Created:    {data['createdAt'] or '-'}",
           "Versions:   " + (", ".join(f"{k} {v}" for k, v in data["versions"].items() if v) or "-"),
           "Objects:    " + (", ".join(f"{n} {k}" for k, n in data["counts"].items() if n) or "none"),
           "Redacted:   " + (", ".join(f"{n} {w}" for w, n in data["redacted"].items()) or "nothing")
           + ("; env values kept (--include-env)" if data["includeEnv"] else "")
           + ("; anonymized" if data["anonymized"] else "")]
    if data["limits"] and "max_pods" in data["limits"]:
        out.append(f"Caps:       {_caps(data['limits'])}")
    if data["truncated"]:
        out.append(f"Truncated:  {', '.join(data['truncated'])}")
    out += [f"Note:       {n}" for n in data["notes"]]
    rows = [(f["check"].upper() if f["check"] in ("modified", "missing") else f["check"], str(f["bytes"]),
             (f["sha256"] or "-")[:12], f["path"]) + ((f["what"],) if wide else ()) for f in data["files"]]
    out += ["", grid(rows, ["check", "bytes", "sha256", "path"] + (["what"] if wide else []), width)]
    return folded(out, width)


def format_collect_plan(data: dict, wide: bool, color: bool, width: Optional[int] = None) -> str:
    """``collect --dry-run``: what the bundle would hold; nothing is written."""
    out = [f"Would collect scope {_scope_words(data['scope'])}" + (f" into {data['output']}" if data["output"] else "")
           + " (dry run: nothing written)", "", "Objects:"]
    out += [f"  {kind}: {n}" for kind, n in data["objects"].items()]
    out += ["", f"Logs (current and previous) of {plural(len(data['pods']), 'pod')}:"]
    out += [f"  {p}" for p in data["pods"]] or ["  <none>"]
    if data["leftOut"]:
        out.append(f"  and not {plural(len(data['leftOut']), 'more pod')} (over --max-pods)")
    out += ["", f"Controller logs, only the lines about the scope, of {plural(len(data['controllers']), 'pod')}:"]
    out += [f"  {p}" for p in data["controllers"]] or ["  <none>"]
    out += ["", f"Caps: {_caps(data['limits'])}.",
            "Redaction: " + ("env values kept (--include-env); " if data["includeEnv"] else "env values, ")
            + "credential-looking annotations and arguments, token-shaped strings; Secrets keep key names only."]
    if data["anonymize"]:
        out.append("Anonymized: namespaces, names, nodes and IPs replaced; the mapping is written beside the bundle.")
    return folded(out, width)


# -- rollout -----------------------------------------------------------------------------------------

def format_findings_lines(findings: list, width: Optional[int] = None) -> str:
    """Findings as doctor's table (severity, code, object, message) with each fix beneath, fitted to
    a terminal ``width`` as doctor's (None: every cell whole)."""
    return findings_grid(((f, 0) for f in findings), width, hint="beneath", namespace=False)


def format_history(d: RolloutHistory, wide: bool, width: Optional[int] = None) -> str:
    """kubectl rollout history's REVISION table, one row per worker generation; with --revision its changes."""
    rows = []
    for g in d["generations"]:
        rows.append([g["revision"], g["hash"], "current" if g["current"] else "old", g["created"] or "-",
                     f"{g['podsReady']}/{g['pods']}", ",".join(g["dcds"]) or "-"]
                    + ([",".join(g["workloads"]) or "-"] if wide else []))
    out = [f"dynamographdeployment \"{d['name']}\"",
           grid(rows, ["revision", "worker-hash", "state", "created", "ready/pods", "dcds"]
                + (["workloads"] if wide else []), width) if rows else "No worker generations."]
    phase = (d.get("rollingUpdate") or {}).get("phase")
    if phase:
        out.append(f"operator rolling update: {phase}")
    if "changes" in d:
        out.append("")
        out.append(f"revision {d['revision']}:" if d["revision"] > 1 else "revision 1 (the first generation):")
        if not d["changes"]:  # Grove rolls its PodCliques in place: no DCD holds an older generation's spec
            out.append("  no DynamoComponentDeployment holds these generations' specs (Grove keeps only the current one)")
        for c in d["changes"]:
            out.append(f"  component {c['component']}:")
            out += [f"    {e['what']}: {e['name']}" + (f" ({e['detail']})" if e["detail"] else "") for e in c["changes"]]
            if wide or not c["changes"]:
                out += ["    " + x for x in c["diff"].splitlines()]
    return "\n".join(out)


# -- placement ---------------------------------------------------------------------------------------

def format_placement(d: PlacementData, wide: bool, width: Optional[int] = None) -> str:
    rows = []
    for n in d["nodes"]:
        users: Dict[str, int] = {}
        for u in n["users"]:
            who = (f"{u['namespace']}/{u['dgd']}/{u['component']}[{u['group']}]" + (f".{u['rank']}" if wide and u["rank"] is not None else "")
                   if u["dgd"] else f"{u['namespace']}/{u['pod']}")
            users[who] = users.get(who, 0) + u["gpus"]
        rows.append([n["name"], n["allocatable"], n["used"], n["free"], "yes" if n["schedulable"] else "no",
                     ", ".join(f"{k}:{v}" for k, v in users.items()) or "-"])
    t = d["totals"]
    out = [grid(rows, ["node", "gpus", "used", "free", "schedulable", "used by (dgd/component[group]:gpus)"], width),
           "", f"{t['nodes']} GPU nodes: {t['used']}/{t['allocatable']} GPUs used, {t['free']} free on schedulable "
               f"nodes (largest on one node {t['largestFree']}, stranded {t['stranded']})"]
    if d["pendingGangs"]:
        grows = [[f"{g['namespace']}/{g['dgd']}" if g["dgd"] else f"{g['namespace']}/{g['pods'][0]}",
                  g["component"] or "-", "-" if g["group"] is None else g["group"], len(g["pods"]), g["gpus"],
                  "yes" if g["fits"] else "no", g["waitsFor"] or "-"] for g in d["pendingGangs"]]
        out += ["", grid(grows, ["pending", "component", "group", "pods", "gpus", "fits now", "waits for"], width)]
    return "\n".join(out)
