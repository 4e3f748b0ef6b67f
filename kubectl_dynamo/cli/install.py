"""``kubectl dynamo install --orchestrator grove|lws``: preflight, plan, confirm, run helm, verify.

The plan is built by ``kubectl_dynamo.install`` (pure); this module gathers what it needs (helm,
the cluster, ``detect``, ``helm list``), prints it, asks, runs it and checks the outcome.
"""

from __future__ import annotations

import os
import shutil
import sys

import click

from ..errors import ExitCode, InputError, UsageError
from ..output import render
from .options import finish, kube_options

VERSION_OPTIONS = ("platform", "grove", "kai", "volcano", "lws")


@click.command("install")
@click.option("--orchestrator", type=click.Choice(["grove", "lws"]), required=True,
              help="grove: Grove + KAI Scheduler (Option 1); lws: LeaderWorkerSet + Volcano (Option 2).")
@click.option("--separately", is_flag=True,
              help="grove only (production): install Grove and KAI from their own charts, create the KAI "
                   "queues, then the platform with them enabled. Default: the platform chart installs both.")
@click.option("--platform-version", "--release-version", "platform_version", metavar="V",
              help="Dynamo platform chart version (archive dynamo-platform-V.tgz).")
@click.option("--grove-version", metavar="V", help="Grove chart version (with --separately).")
@click.option("--kai-version", metavar="V", help="KAI Scheduler chart version (with --separately).")
@click.option("--volcano-version", metavar="V", help="Volcano chart version (lws).")
@click.option("--lws-version", metavar="V", help="LWS chart version (lws; >= 0.7.0, 0.10.0 for DisaggregatedSet).")
@click.option("--chart-source", metavar="DIR",
              help="Use local chart archives DIR/<chart>-<version>.tgz instead of repositories and OCI "
                   "references (air-gapped clusters).")
@click.option("--values", "values", metavar="[COMPONENT=]FILE", multiple=True,
              help="A values file passed to helm (repeatable). Plain FILE goes to the main chart (the "
                   "platform for grove, LWS for lws); COMPONENT= is one of platform, grove, kai, volcano, lws.")
@click.option("--helm", "helm_path", metavar="PATH", help="The helm binary (default: helm on $PATH).")
@click.option("--upgrade", is_flag=True, help="Change components installed at another version or with other values.")
@click.option("--timeout", default="300s", show_default=True, metavar="DURATION",
              help="helm --wait --timeout for every chart.")
@click.option("--dry-run", is_flag=True, help="Print the preflight and the ordered plan; change nothing.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation (needed when stdin is not a terminal).")
@kube_options(all_namespaces=False, formats=("table", "json", "yaml"),
              namespace_help="Namespace of the Dynamo platform release (default: dynamo-system).")
def install_command(orchestrator, separately, platform_version, grove_version, kai_version, volcano_version,
                    lws_version, chart_source, values, helm_path, upgrade, timeout, dry_run, yes, opts):
    """Install the multinode prerequisites with helm: Grove + KAI Scheduler (with the Dynamo
    platform chart) or LeaderWorkerSet + Volcano.

    \b
    Preflight first (cluster, Kubernetes version, helm, permissions, what is installed); then the
    ordered plan: the exact helm command lines and the objects the plugin creates. Components
    already installed at the wanted version are skipped; other versions change only with
    --upgrade. After the install, detect runs again and the command exits 0 only if a new
    multinode DGD would use the orchestrator asked for.

    \b
    -n/--namespace is the platform's namespace (default dynamo-system). Helm gets the same
    --kubeconfig and --context (as --kube-context).

    \b
    Exit codes: 0 done (or nothing to do), 1 blocked, a step failed or the outcome is not the
    one asked for, 2 bad input or no confirmation, 3 cluster unreachable, 130 interrupted.
    """
    versions = {k: v for k, v in (("platform", platform_version), ("grove", grove_version),
                                  ("kai", kai_version), ("volcano", volcano_version),
                                  ("lws", lws_version)) if v}
    req = build_request(orchestrator, separately, versions, chart_source, values, upgrade, timeout, opts)
    machine = opts.output in ("json", "yaml")
    if not dry_run and not yes and not sys.stdin.isatty():
        raise UsageError("refusing to change the cluster without confirmation: pass --yes "
                         "(or --dry-run to only see the plan)")

    helm, helm_version = find_helm(helm_path)
    req.helm = helm_path or "helm"
    doc = {"orchestrator": orchestrator, "mode": req.mode, "dryRun": dry_run,
           "preflight": {"helm": {"path": helm, "version": helm_version}}}
    plan, state, checks = preflight(req, helm, opts, doc)
    doc.update(plan_json(plan))
    doc["preflight"]["checks"] = checks
    doc["result"] = None

    say = _printer(machine)
    if not machine:
        say(format_preflight(doc))
        say(format_plan(plan, dry_run))
    if dry_run or plan.blockers:
        if machine:
            render(doc, opts.output)
        finish(ExitCode.FINDINGS if plan.blockers else ExitCode.OK)
        return
    if not plan.to_run:
        say("Nothing to do: every component is already in place.")
    else:
        if not yes and not click.confirm(f"Run these {len(plan.to_run)} steps?", default=False, err=machine):
            click.echo("error: not confirmed; nothing changed", err=True)
            finish(ExitCode.FINDINGS)
            return
        code = execute(plan, helm, opts, say)
        doc.update(plan_json(plan, keep_meta=True))
        if code:
            if machine:
                render(doc, opts.output)
            finish(code)
            return
    result = verify(req, opts, say)
    doc["result"] = result
    if machine:
        render(doc, opts.output)
    else:
        say(format_result(req, result))
    if not result["ok"]:
        sel = result["selection"]
        click.echo(f"error: a new multinode DGD would use {sel.get('orchestrator') or 'no orchestrator'}"
                   f"{' (' + sel['error'] + ')' if sel.get('error') else ''}, not {req.orchestrator}", err=True)
    finish(ExitCode.OK if result["ok"] else ExitCode.FINDINGS)


# -- input -------------------------------------------------------------------------------------
def build_request(orchestrator, separately, versions, chart_source, values, upgrade, timeout, opts):
    from .. import install as ins
    from ..cluster.client import parse_duration

    if separately and orchestrator != "grove":
        raise UsageError("--separately applies to --orchestrator grove only")
    allowed = set(ins.Request(orchestrator, separately).components())
    for key in versions:
        if key not in allowed:
            flag = ins.CHARTS[key].version_flag
            why = ("the platform chart pins the Grove and KAI it installs; add --separately"
                   if key in ("grove", "kai") and orchestrator == "grove"
                   else f"--orchestrator {orchestrator} does not install {ins.CHARTS[key].title}")
            raise UsageError(f"{flag} does not apply here: {why}")
        if not ins.version_tuple(versions[key]):
            raise UsageError(f"invalid {ins.CHARTS[key].version_flag} {versions[key]!r}: use a version "
                             f"such as {ins.CHARTS[key].default_version}")
    if orchestrator == "lws":
        lws = versions.get("lws") or ins.CHARTS["lws"].default_version
        if ins.version_tuple(lws) < ins.version_tuple(ins.LWS_MINIMUM):
            raise UsageError(f"--lws-version {lws} is too old: Dynamo needs LWS >= {ins.LWS_MINIMUM} "
                             f"(0.10.0 for DisaggregatedSet)")
    try:
        parse_duration(timeout)
    except UsageError:
        raise UsageError(f'invalid --timeout "{timeout}": use a duration such as 300s or 10m') from None
    main = "platform" if orchestrator == "grove" else "lws"
    req = ins.Request(orchestrator, separately, namespace=opts.target.namespace or ins.PLATFORM_NAMESPACE,
                      versions=versions, upgrade=upgrade, timeout=timeout)
    for item in values:
        key, path = main, item
        prefix, sep, rest = item.partition("=")
        if sep and prefix in ins.CHARTS:
            key, path = prefix, rest
        if key not in allowed:
            raise UsageError(f"--values {item}: {key} is not installed by this plan")
        req.values_files.setdefault(key, []).append(path)
        req.values_data[key] = ins.merge(req.values_data.get(key, {}), load_values(path))
    if chart_source:
        if not os.path.isdir(chart_source):
            raise InputError(f"--chart-source {chart_source}: not a directory")
        req.chart_source = chart_source
        for key in req.components():
            names = ins.archive_names(key, req.version(key))
            found = next((n for n in names if os.path.isfile(os.path.join(chart_source, n))), names[0])
            req.chart_files[key] = os.path.join(chart_source, found)
    t = opts.target
    req.kube_flags = (["--kubeconfig", t.kubeconfig] if t.kubeconfig else []) + \
                     (["--kube-context", t.context] if t.context else [])
    return req


def load_values(path: str) -> dict:
    import yaml

    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except OSError as e:
        raise InputError(f"--values {path}: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        raise InputError(f"--values {path}: invalid YAML ({str(e).splitlines()[0]})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(f"--values {path}: must be a mapping of values")
    return data


def find_helm(helm_path):
    from .. import install as ins

    path = helm_path if helm_path else shutil.which("helm")
    if not path or not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise UsageError(f"helm not found{' at ' + helm_path if helm_path else ' on $PATH'}: install Helm "
                         f">= {ins.HELM_MIN_MAJOR} or pass --helm PATH")
    code, out, err = ins.helm_capture(path, ["version", "--short"], timeout=30)
    major = ins.helm_major(out)
    if code != 0 or major is None:
        raise UsageError(f"{path} does not answer `helm version --short`: {(err or out).strip()[:200]}")
    if major < ins.HELM_MIN_MAJOR:
        raise UsageError(f"{path} is Helm {out.strip()}; Helm >= {ins.HELM_MIN_MAJOR} is needed")
    return path, out.strip()


# -- preflight ---------------------------------------------------------------------------------
def preflight(req, helm, opts, doc):
    """Read everything the plan depends on; nothing here changes the cluster."""
    import json

    from .. import install as ins
    from ..cluster.client import path_for
    from ..errors import DynamoError, Forbidden, NotFound
    from .detect import run_detect

    checks = []
    cluster = opts.cluster()
    server = cluster.server_version()  # raises ClusterUnreachable / Unauthorized: exit 3
    doc["preflight"].update({"server": cluster.server, "kubernetes": server})
    checks.append({"check": "cluster", "ok": True, "message": f"{cluster.server} reachable, Kubernetes {server}"})

    state = ins.State(report=run_detect(opts))
    doc["preflight"]["detected"] = {k: {x: v.get(x) for x in ("installed", "version", "healthy")}
                                    for k, v in state.report["orchestrators"].items()}
    doc["preflight"]["detected"]["dynamoOperator"] = {
        k: state.report["dynamoOperator"].get(k) for k in ("installed", "version")}

    code, out, err = ins.helm_capture(helm, ["list", "--all-namespaces", "--all", "--output", "json",
                                             *req.kube_flags])
    if code == 0:
        try:
            state.releases = json.loads(out or "[]") or []
        except ValueError:
            state.releases = None
    if state.releases is None:
        checks.append({"check": "helm releases", "ok": False,
                       "message": f"`helm list -A` failed ({(err or out).strip().splitlines()[-1:] or ['?']}); "
                                  f"installed components are judged from detect only"})
    else:
        checks.append({"check": "helm releases", "ok": True,
                       "message": f"{len(state.releases)} release(s) visible with `helm list -A`"})
        charts = {ins.CHARTS[k].chart for k in ins.CHARTS}
        for r in state.releases:
            chart = str(r.get("chart") or "")
            if any(ins.split_chart(chart, c) is not None for c in charts):
                code, out, _ = ins.helm_capture(helm, ["get", "values", r["name"], "-n", r["namespace"],
                                                       "--output", "json", *req.kube_flags])
                try:
                    state.release_values[(r["name"], r["namespace"])] = (json.loads(out) or {}) if code == 0 else {}
                except ValueError:
                    state.release_values[(r["name"], r["namespace"])] = {}

    for key in req.components():
        ns = ins.namespace_of(req, key)
        try:
            cluster.get(path_for("", "v1", "namespaces", name=ns))
            state.namespaces[ns] = True
        except NotFound:
            state.namespaces[ns] = False
        except (Forbidden, DynamoError):
            state.namespaces[ns] = False  # unknown: plan for creating it

    plan = ins.build_plan(req, state)

    minimum = max((ins.CHARTS[s.component].min_kube for s in plan.to_run
                   if s.component in ins.CHARTS and ins.CHARTS[s.component].min_kube), default=None)
    have = ins.kube_minor(server)
    if minimum and have and have < minimum:
        plan.blockers.append(f"Kubernetes {server} is too old: the plan needs >= {minimum[0]}.{minimum[1]} "
                             f"(the {'Dynamo platform' if minimum == (1, 30) else 'LWS'} chart)")
    checks.append({"check": "kubernetes version", "ok": not (minimum and have and have < minimum),
                   "message": f"{server}" + (f" (needs >= {minimum[0]}.{minimum[1]})" if minimum else "")})

    denied = []
    perms = ins.needed_permissions(plan)
    for verb, resource, group, ns, why in perms:
        try:
            allowed = cluster.can_i(verb, resource, group, ns)
        except DynamoError:
            allowed = False
        if not allowed:
            res = f"{resource}.{group}" if group else resource
            denied.append(f"{verb} {res}" + (f" in {ns}" if ns else " (cluster-wide)") + f" [{why}]")
    if denied:
        plan.blockers.append("missing permissions (SelfSubjectAccessReview): " + "; ".join(denied))
    checks.append({"check": "permissions", "ok": not denied,
                   "message": (f"{len(perms)} checked, all allowed" if not denied else f"{len(denied)} denied")})

    for s in plan.to_run:
        if s.chart_path and not os.path.isfile(s.chart_path):
            if req.chart_source:
                names = ", ".join(ins.archive_names(s.component, req.version(s.component)))
                msg = f"no chart archive for {ins.CHARTS[s.component].title} in {req.chart_source} (looked for {names})"
            else:
                url = ins.PLATFORM_CHART_URL.format(version=req.version("platform"))
                msg = (f"chart archive {s.chart_path} not found in the current directory: "
                       f"`helm fetch {url}` or pass --chart-source DIR")
            if doc.get("dryRun"):
                plan.warnings.append(msg)
            else:
                raise InputError(msg)
    return plan, state, checks


# -- execution ---------------------------------------------------------------------------------
def _printer(machine: bool):
    def say(text=""):
        click.echo(text, err=machine)

    return say


def kubectl_flags(opts):
    t = opts.target
    return (["--kubeconfig", t.kubeconfig] if t.kubeconfig else []) + (["--context", t.context] if t.context else [])


def execute(plan, helm, opts, say) -> int:
    """Run the steps in order; on failure or Ctrl-C say what was done, what not, and how to undo."""
    from .. import install as ins
    from ..errors import DynamoError

    req, steps = plan.request, plan.to_run
    total, done, current = len(steps), [], None
    cluster = None
    try:
        for step in steps:
            current = step
            step.status = "running"
            if step.component == "queues":
                say(f"[{step.number}/{total}] create KAI queues {', '.join(o['metadata']['name'] for o in step.objects)}")
                cluster = cluster or opts.cluster()
                try:
                    step.objects = ins.create_missing_queues(cluster, step.objects, lambda l: say(f"    {l}"))
                except DynamoError as e:
                    raise ins.StepFailed(step, 1, [e.message]) from None
            else:
                say(f"[{step.number}/{total}] {step.command(req.helm)}")
                code, tail = ins.run_helm(helm, step.argv, lambda l: say(f"    {l}"))
                if code != 0:
                    raise ins.StepFailed(step, code, tail)
            step.status = "done"
            done.append(step)
    except ins.StepFailed as f:
        f.step.status = "failed"
        _mark_not_run(steps)
        report_stop(plan, done, f.step, f"failed (exit {f.code})", f.tail, say, opts)
        return int(ExitCode.FINDINGS)
    except KeyboardInterrupt:
        if current is not None:
            current.status = "interrupted"
        _mark_not_run(steps)
        report_stop(plan, done, current, "interrupted (Ctrl-C)", [], say, opts)
        return 130
    return 0


def _mark_not_run(steps):
    for s in steps:
        if s.status in ("planned",):
            s.status = "not-run"


def report_stop(plan, done, stopped, how, tail, say, opts):
    from .. import install as ins

    req = plan.request
    total = len(plan.to_run)
    name = stopped.command(req.helm) if stopped and stopped.argv else (
        "create KAI queues" if stopped else "preparation")
    lines = [f"error: step [{stopped.number if stopped else '?'}/{total}] {how}: {name}"]
    lines += [f"    {t}" for t in tail[-6:] if t.strip()]
    lines.append("done:     " + ("; ".join(f"[{s.number}/{total}] {_label(s)}" for s in done) or "nothing"))
    rest = [s for s in plan.to_run if s not in done]
    lines.append("not done: " + "; ".join(f"[{s.number}/{total}] {_label(s)}" +
                                         (" (may be partly applied)" if s is stopped else "") for s in rest))
    undo = ins.undo_lines(done + ([stopped] if stopped and stopped.release else []), req.helm,
                          req.kube_flags, kubectl_flags(opts))
    if undo:
        lines.append("to undo:")
        lines += [f"    {u}" for u in undo]
    click.echo("\n".join(lines), err=True)


def _label(step):
    if step.component == "queues":
        return "KAI queues " + ", ".join(o["metadata"]["name"] for o in step.objects)
    if step.component == "repo":
        return "helm " + " ".join(step.argv[:2])
    from .. import install as ins

    return f"{step.action} {ins.CHARTS[step.component].title} (release {step.release[0]} in {step.release[1]})"


def verify(req, opts, say) -> dict:
    """detect again; discovery follows new CRDs asynchronously, so retry briefly before judging."""
    import time

    from .. import install as ins
    from .detect import run_detect

    deadline = time.monotonic() + 20
    while True:
        result = ins.outcome(req, run_detect(opts))
        if result["ok"] or time.monotonic() > deadline:
            return result
        time.sleep(1)


# -- rendering ---------------------------------------------------------------------------------
def plan_json(plan, keep_meta=False) -> dict:
    req = plan.request
    steps = []
    for s in plan.steps:
        steps.append({"number": s.number, "component": s.component, "action": s.action,
                      "command": s.command(req.helm), "argv": ([req.helm, *s.argv] if s.argv else None),
                      "release": ({"name": s.release[0], "namespace": s.release[1]} if s.release else None),
                      "objects": s.objects, "reason": s.reason,
                      "status": "skipped" if not s.runs else s.status})
    return {"steps": steps, "warnings": list(plan.warnings), "blockers": list(plan.blockers)}


def format_preflight(doc) -> str:
    p = doc["preflight"]
    lines = ["Preflight:", f"  ok    helm {p['helm']['version']} ({p['helm']['path']})"]
    for c in p.get("checks", []):
        lines.append(f"  {'ok  ' if c['ok'] else 'FAIL'}  {c['check']}: {c['message']}")
    det = p.get("detected") or {}
    seen = ", ".join(f"{k} {v['version'] or ('yes' if v['installed'] else 'no')}" for k, v in det.items()
                     if k != "dynamoOperator")
    op = det.get("dynamoOperator") or {}
    lines.append(f"  info  detect: {seen}; Dynamo operator: "
                 f"{(op.get('version') or 'installed') if op.get('installed') else 'not installed'}")
    return "\n".join(lines) + "\n"


TITLES = {"platform": "Grove + KAI Scheduler with the Dynamo platform chart (Option 1)",
          "separately": "Grove and KAI Scheduler from their own charts, then the Dynamo platform (Option 1, production)",
          "lws": "Volcano, then LeaderWorkerSet with Volcano gang scheduling (Option 2)"}


def format_plan(plan, dry_run=False) -> str:
    import yaml

    from .. import install as ins

    req = plan.request
    runs = plan.to_run
    lines = [f"Plan: {TITLES[req.mode]}, {len(runs)} step(s)" + (" (dry run: nothing changes)" if dry_run else "")]
    for s in plan.steps:
        if not s.runs:
            what = ins.CHARTS[s.component].title if s.component in ins.CHARTS else "KAI queues"
            lines.append(f"  [-] skip {what}: {s.reason}")
    for s in runs:
        head = f"  [{s.number}/{len(runs)}] "
        if s.component == "queues":
            lines.append(head + f"create KAI queues where missing: {', '.join(o['metadata']['name'] for o in s.objects)}"
                         f" ({s.reason})")
            text = yaml.safe_dump_all(s.objects, sort_keys=False, default_flow_style=None, width=1 << 16)
            lines += ["        " + line for line in text.rstrip().splitlines()]
        else:
            lines.append(head + s.command(req.helm))
            lines.append(f"        {s.action}: {s.reason}")
    for w in plan.warnings:
        lines.append(f"warning: {w}")
    for b in plan.blockers:
        lines.append(f"blocked: {b}")
    return "\n".join(lines)


def format_result(req, r) -> str:
    lines = ["", "Result:"]
    lines.append("  APIs served:  " + ", ".join(f"{g} {'yes' if v else 'NO'}" for g, v in r["apis"].items()))
    lines.append("  controllers:  " + ", ".join(
        f"{k} {'healthy' if c['healthy'] else ('unknown' if c['healthy'] is None else 'NOT healthy')}"
        + (f" ({c['version']})" if c.get("version") else "") for k, c in r["controllers"].items()))
    for k, names in r["queues"].items():
        lines.append(f"  {k} queues:  " + (", ".join(names) or "none"))
    s = r["selection"]
    lines.append(f"  a new multinode DGD: provider {s.get('provider')}, orchestrator {s.get('orchestrator')}, "
                 f"scheduler {s.get('scheduler')}, queue {s.get('queue')}"
                 + (f" — FAILS: {s['error']}" if s.get("error") else ""))
    lines.append(f"    {s.get('reason')}")
    if r["ok"]:
        lines.append(f"ok: a new multinode DGD uses {req.orchestrator}")
    return "\n".join(lines)


COMMANDS = [install_command]
