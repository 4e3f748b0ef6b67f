"""``kubectl dynamo detect``: what is installed and what Dynamo will pick for a multinode DGD."""

from __future__ import annotations

import click

from ..output import grid, paint, render, yes_no
from .options import kube_options


def run_detect(opts) -> dict:
    from ..checks import cluster as cluster_checks
    from ..checks.registry import run
    from ..cluster.facts import gather
    from ..detection import detect

    facts = gather(opts.cluster())
    report = detect(facts)
    view = cluster_checks.ClusterView(facts, report)
    report["problems"] = [f.as_json() for f in run("cluster", view)]
    return report


@click.command("detect")
@kube_options(all_namespaces=False)
def detect_command(opts):
    """Show installed orchestrators, queues, the Dynamo operator, GPU nodes, and the
    orchestrator Dynamo will select for a new multinode DGD, with the reasons.

    Read-only. Exits 0 when the cluster answered (problems are listed, see `doctor`
    for a check that fails), 3 when it is unreachable or the credentials are refused.
    """
    render(run_detect(opts), opts.output, format_detect)


def format_detect(r: dict, wide: bool, color: bool) -> str:
    out = [f"Kubernetes:  {r['kubernetes']['version'] or 'unknown'}",
           f"GPU nodes:   {r['gpuNodes']['count']} ({r['gpuNodes']['allocatableGpus']} allocatable nvidia.com/gpu)",
           ""]
    rows = []
    for name, o in r["orchestrators"].items():
        extra = ""
        if name == "lws" and o["installed"]:
            extra = "disaggregatedset.x-k8s.io/v1" if o["disaggregatedSet"] else "no DisaggregatedSet API"
        if name in ("kai", "volcano") and o["installed"]:
            extra = f"{len(o['queues'])} queues"
        healthy = yes_no(o["healthy"]) if o["installed"] else "-"
        rows.append([name, yes_no(o["installed"]), o["version"], healthy, extra])
    out += [grid(rows, ["orchestrator", "installed", "version", "healthy", "notes"]), ""]

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
    out.append(grid(rows, ["case", "provider", "orchestrator", "scheduler", "queue", "outcome"]))
    for case, s in (("default", r["selection"]["default"]), ("enable-grove false", r["selection"]["enableGroveFalse"])):
        out.append(f"  {case}: {s['reason']}")

    if r["problems"]:
        out += ["", "Problems:"]
        rows = [[paint(p["severity"], p["severity"], color), p["code"], p["message"]] + ([p["hint"]] if wide else [])
                for p in r["problems"]]
        out.append(grid(rows, ["severity", "code", "message"] + (["hint"] if wide else [])))
    return "\n".join(out)


COMMANDS = [detect_command]
