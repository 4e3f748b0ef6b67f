"""``kubectl dynamo doctor``: diagnose the cluster and every multinode group. Read-only."""

from __future__ import annotations

import click

from ..checks.registry import SEVERITIES, at_least
from ..errors import ExitCode, UsageError
from ..output import grid, paint, render
from .options import finish, kube_options


def run_doctor(opts, name, only, exec_checks, exec_timeout) -> dict:
    from .. import doctor
    from ..cluster.snapshot import read_secret_keys, take

    cluster = opts.cluster()
    namespace = None if opts.all_namespaces else cluster.namespace
    if name and namespace is None:
        raise UsageError("a DGD name needs a namespace: drop -A or use -n")
    snap = take(cluster, namespace, dgd_name=name)
    if name and not snap.dgds and not any(s["check"] == "dynamographdeployments" for s in snap.skipped):
        from ..errors import NotFound

        raise NotFound(f'dynamographdeployments.nvidia.com "{name}" not found in namespace {namespace}')
    views = doctor.build_views(snap)
    for ns, secret in sorted(doctor.needed_secrets(views)):
        read_secret_keys(cluster, snap, ns, secret)
    exec_results = None
    if exec_checks:
        from ..cluster.execute import run_exec_checks

        exec_results = run_exec_checks(cluster, views, timeout=exec_timeout, only=only)
    result = doctor.diagnose(snap, views, only=only, exec_results=exec_results)
    result["requests"] = cluster.requests
    return result


@click.command("doctor")
@click.argument("name", required=False, metavar="[DGD]")
@click.option("--min-severity", type=click.Choice(list(SEVERITIES)), default="error", show_default=True,
              help="Exit 1 when a finding is at or above this severity; the table shows only those.")
@click.option("--only", metavar="CODE,...", help="Run only these checks (codes in docs/checks.md).")
@click.option("--exec", "exec_checks", is_flag=True,
              help="Also run read-only commands in pods: `ray status` on Ray leaders, a port-2222 probe on "
                   "TRT-LLM workers (needs pods/exec).")
@click.option("--exec-timeout", type=float, default=20.0, show_default=True, metavar="SECONDS",
              help="Timeout of each --exec command.")
@kube_options()
def doctor_command(name, min_severity, only, exec_checks, exec_timeout, opts):
    """Diagnose the cluster and every multinode DynamoGraphDeployment.

    \b
      kubectl dynamo doctor -A                  # every DGD in every namespace
      kubectl dynamo doctor my-dgd -n dynamo    # one DGD
      kubectl dynamo doctor -A -o json --min-severity warning

    Read-only: never creates, patches or deletes; secrets are read by name and only their key
    names are kept. Exit 1 when a finding is at or above --min-severity.
    """
    codes = [c.strip() for c in only.split(",") if c.strip()] if only else None
    if codes:
        from .. import doctor  # noqa: F401  (registers the checks)
        from ..checks.registry import codes as known

        unknown = sorted(set(codes) - known() - {"sshd-not-listening", "ray-incomplete"})
        if unknown:
            raise UsageError(f"unknown check code(s): {', '.join(unknown)} (see docs/checks.md)")
    result = run_doctor(opts, name, codes, exec_checks, exec_timeout)
    if opts.output in ("json", "yaml"):
        result = {k: v for k, v in result.items() if k != "requests"}
    render(result, opts.output, lambda r, wide, color: format_doctor(r, wide, color, min_severity))
    failing = any(at_least(f["severity"], min_severity) for f in result["findings"])
    finish(ExitCode.FINDINGS if failing else ExitCode.OK)


def format_doctor(r: dict, wide: bool, color: bool, min_severity: str) -> str:
    out = []
    rows = []
    for d in r["deployments"]:
        for c in d["components"]:
            for g in c["groups"] or [{"index": None, "podsReady": 0, "ranks": []}]:
                ranks = ",".join("?" if x is None else str(x) for x in g["ranks"]) or "-"
                rows.append([f"{d['namespace']}/{d['name']}", c["name"], g["index"],
                             f"{g['podsReady']}/{c['nodeCount']}", ranks, c.get("mode", "")])
    if rows:
        out.append(grid(rows, ["dgd", "component", "group", "ready", "ranks", "mode"]))
    else:
        out.append("No DynamoGraphDeployments in scope.")
    shown = [f for f in r["findings"] if at_least(f["severity"], min_severity)]
    s = r["summary"]
    out += ["", f"{s['errors']} errors, {s['warnings']} warnings, {s['infos']} infos"
            + (f" (showing {min_severity} and above; --min-severity info shows all)" if len(shown) < len(r["findings"]) else "")]
    if shown:
        frows = []
        for f in shown:
            o = f["object"] or {}
            where = "/".join(x for x in (o.get("kind"), o.get("namespace"), o.get("name")) if x)
            row = [paint(f["severity"], f["severity"], color), f["code"], where, f["message"]]
            frows.append(row + ([f["hint"]] if wide else []))
        out += ["", grid(frows, ["severity", "code", "object", "message"] + (["hint"] if wide else []))]
        if not wide:
            out.append("(-o wide adds the fix for each finding)")
    if r["skipped"]:
        out += ["", "Skipped:"] + [f"  {s['check']}: {s['reason']}" for s in r["skipped"]]
    return "\n".join(out)


COMMANDS = [doctor_command]
