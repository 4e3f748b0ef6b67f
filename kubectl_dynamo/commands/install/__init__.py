"""Running ``install``: preflight, plan, confirmation, the helm steps, and the check afterwards.

The plan itself is ``install.py`` (pure). This module gathers what the plan depends on (helm,
the cluster, ``detect``, ``helm list``), shows it, asks, runs it and checks the outcome. Progress
lines are printed as they happen (on stderr with ``-o json|yaml``); the final document is the
command's Result.
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Callable, Optional, cast

from kubectl_dynamo.cluster.client import Target
from kubectl_dynamo.environment import Environment
from kubectl_dynamo.errors import ExitCode, InputError, UsageError
from kubectl_dynamo.result import Result
from kubectl_dynamo.words import plural

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import InstallData


def run_install(req, env: Environment, connect: Callable, target: Target, *, fmt: str, helm_path: Optional[str],
                dry_run: bool, yes: bool, confirm: Callable[[str], bool]) -> Result[InstallData]:
    """The whole command for a built ``install.Request``; ``connect()`` returns the Cluster."""
    from kubectl_dynamo.output.tables import format_plan, format_preflight, format_result

    machine = fmt in ("json", "yaml")
    if not dry_run and not yes and not env.stdin_isatty:
        raise UsageError("refusing to change the cluster without confirmation: pass --yes "
                         "(or --dry-run to only see the plan)")

    # A dry run plans without helm (releases then come from detect only); running the plan needs it.
    helm, helm_version = find_helm(helm_path) if not (dry_run and not helm_path and not shutil.which("helm")) \
        else (None, None)
    req.helm = helm_path or "helm"
    doc = {"orchestrator": req.orchestrator, "mode": req.mode, "dryRun": dry_run,
           "preflight": {"helm": {"path": helm, "version": helm_version}}}
    plan, state, checks = preflight(req, helm, connect, doc)
    doc.update(plan_json(plan))
    doc["preflight"]["checks"] = checks
    doc["result"] = None

    say = env.err if machine else env.out  # progress never mixes into -o json|yaml
    if not machine:
        say(format_preflight(doc, env.table_width))
        say(format_plan(plan, dry_run, env.table_width))
    if dry_run or plan.blockers:
        return _done(doc, machine, ExitCode.FINDINGS if plan.blockers else ExitCode.OK)
    if not plan.to_run:
        say("Nothing to do: every component is already in place.")
    else:
        if not yes and not confirm(f"Run these {len(plan.to_run)} steps?"):
            env.err("error: not confirmed; nothing changed")
            return _done(doc, machine, ExitCode.FINDINGS)
        code = execute(plan, helm, connect, target, say, env.err, env.monotonic)
        doc.update(plan_json(plan, keep_meta=True))
        if code:
            return _done(doc, machine, code)
    result = verify(req, connect, env.monotonic)
    doc["result"] = result
    if not machine:
        say(format_result(req, result, env.table_width))
    notes = []
    if not result["ok"]:
        sel = result["selection"]
        notes.append(f"error: a new multinode DGD would use {sel.get('orchestrator') or 'no orchestrator'}"
                     f"{' (' + sel['error'] + ')' if sel.get('error') else ''}, not {req.orchestrator}")
    return _done(doc, machine, ExitCode.OK if result["ok"] else ExitCode.FINDINGS, notes)


def _done(doc: dict, machine: bool, code: int, notes=()) -> Result[InstallData]:
    data = cast("InstallData", doc)  # built step by step; install.json is its contract (tests validate it)
    # The human form was printed step by step; only -o json|yaml print the document at the end.
    if machine:
        return Result(data, exit_code=code, notes=list(notes))
    return Result(data, text="", verbatim=True, exit_code=code, notes=list(notes))


# -- input -------------------------------------------------------------------------------------
def build_request(orchestrator, separately, versions, chart_source, values, upgrade, timeout, target: Target):
    from kubectl_dynamo.cluster.client import parse_duration
    from kubectl_dynamo.commands.install import plan as ins

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
            raise UsageError(f'invalid {ins.CHARTS[key].version_flag} "{versions[key]}": use a version '
                             f"such as {ins.CHARTS[key].default_version}")
    if orchestrator == "lws":
        lws = versions.get("lws") or ins.CHARTS["lws"].default_version
        have, need = ins.version_tuple(lws), ins.version_tuple(ins.LWS_MINIMUM)
        if have and need and have < need:
            raise UsageError(f"--lws-version {lws} is too old: Dynamo needs LWS >= {ins.LWS_MINIMUM} "
                             f"({ins.LWS_DISAGGREGATED_SET} for DisaggregatedSet)")
    try:
        parse_duration(timeout)
    except UsageError:
        raise UsageError(f'invalid --timeout "{timeout}": use a duration such as 300s or 10m') from None
    main = "platform" if orchestrator == "grove" else "lws"
    req = ins.Request(orchestrator, separately, namespace=target.namespace or ins.PLATFORM_NAMESPACE,
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
    t = target
    req.kube_flags = (["--kubeconfig", t.kubeconfig] if t.kubeconfig else []) + \
                     (["--kube-context", t.context] if t.context else [])
    return req


def load_values(path: str) -> dict:
    from kubectl_dynamo.inputs.manifests import load_mapping  # the input layer: bounded, strict, plain YAML

    return load_mapping(path, "--values")


def find_helm(helm_path):
    from kubectl_dynamo.commands.install import plan as ins

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
def preflight(req, helm, connect, doc):
    """Read everything the plan depends on; nothing here changes the cluster."""
    import json

    from kubectl_dynamo.cluster.client import path_for
    from kubectl_dynamo.commands.detect import detect_report
    from kubectl_dynamo.commands.install import plan as ins
    from kubectl_dynamo.errors import DynamoError, Forbidden, NotFound

    checks = []
    cluster = connect()
    server = cluster.server_version()  # raises ClusterUnreachable / Unauthorized: exit 3
    doc["preflight"].update({"server": cluster.server, "kubernetes": server})
    checks.append({"check": "cluster", "ok": True, "message": f"{cluster.server} reachable, Kubernetes {server}"})

    state = ins.State(report=dict(detect_report(cluster)))
    assert state.report is not None
    doc["preflight"]["detected"] = {k: {x: v.get(x) for x in ("installed", "version", "healthy")}
                                    for k, v in state.report["orchestrators"].items()}
    doc["preflight"]["detected"]["dynamoOperator"] = {
        k: state.report["dynamoOperator"].get(k) for k in ("installed", "version")}

    code, out, err = ins.helm_capture(helm, ["list", "--all-namespaces", "--all", "--output", "json",
                                             *req.kube_flags]) if helm else (1, "", "helm not found on $PATH")
    if code == 0:
        try:
            state.releases = json.loads(out or "[]") or []
        except ValueError:
            state.releases = None
    if state.releases is None and not helm:
        pass  # no helm here (a dry run): that says nothing about the cluster; the preflight's helm note says it
    elif state.releases is None:
        checks.append({"check": "helm releases", "ok": False,
                       "message": f"`helm list -A` failed ({_last_line(err or out)}); "
                                  f"installed components are judged from detect only"})
    else:
        checks.append({"check": "helm releases", "ok": True,
                       "message": f"{plural(len(state.releases), 'release')} visible with `helm list -A`"})
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

    minimum = max((m for s in plan.to_run if s.component in ins.CHARTS
                   for m in [ins.CHARTS[s.component].min_kube] if m), default=None)
    have = ins.kube_minor(server)
    if minimum and have and have < minimum:
        plan.blockers.append(f"Kubernetes {server} is too old: the plan needs >= {minimum[0]}.{minimum[1]} "
                             f"(the {'Dynamo platform' if minimum == (1, 30) else 'LWS'} chart)")
    checks.append({"check": "kubernetes version", "ok": not (minimum and have and have < minimum),
                   "message": f"{server}" + (f" (needs >= {minimum[0]}.{minimum[1]})" if minimum else "")})

    denied = []
    perms = ins.needed_permissions(plan)
    for verb, resource, group, where, why in perms:
        try:
            allowed = cluster.can_i(verb, resource, group, where)
        except DynamoError:
            allowed = False
        if not allowed:
            res = f"{resource}.{group}" if group else resource
            denied.append(f"{verb} {res}" + (f" in {where}" if where else " (cluster-wide)") + f" [{why}]")
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


def _last_line(text: str) -> str:
    lines = (text or "").strip().splitlines()
    return lines[-1].strip() if lines else "no output"


# -- execution ---------------------------------------------------------------------------------
def kubectl_flags(t: Target):
    return (["--kubeconfig", t.kubeconfig] if t.kubeconfig else []) + (["--context", t.context] if t.context else [])


def execute(plan, helm, connect, target: Target, say, err, clock=None) -> int:
    """Run the steps in order, each chart's progress on stderr while helm waits; on failure or Ctrl-C say
    what blocked it, what was done, what not, and how to undo."""
    import time

    from kubectl_dynamo.commands.install import plan as ins
    from kubectl_dynamo.commands.install.progress import Progress
    from kubectl_dynamo.durations import seconds
    from kubectl_dynamo.errors import DynamoError

    req, steps = plan.request, plan.to_run
    total, done, current = len(steps), [], None
    cluster = None
    progress = None
    try:
        for step in steps:
            current, progress = step, None
            step.status = "running"
            if step.component == "queues":
                say(f"[{step.number}/{total}] create KAI queues {', '.join(o['metadata']['name'] for o in step.objects)}")
                cluster = cluster or connect()
                try:
                    step.objects = ins.create_missing_queues(cluster, step.objects, lambda line: say(f"    {line}"))
                except DynamoError as e:
                    raise ins.StepFailed(step, 1, [e.message]) from None
            else:
                say(f"[{step.number}/{total}] {step.command(req.helm)}")
                progress = Progress(connect, step.release[0], step.release[1], err, clock or time.monotonic,
                                    seconds(req.timeout)) if step.release else None
                if progress is not None:
                    progress.start()
                try:
                    code, tail = ins.run_helm(helm, step.argv, lambda line: say(f"    {line}"),
                                              tick=progress.tick if progress is not None else None)
                    if code != 0:
                        if progress is not None:
                            step.blocking = [b.as_json() for b in progress.blocked()]
                        raise ins.StepFailed(step, code, tail)
                finally:
                    if progress is not None:
                        progress.close()
            step.status = "done"
            done.append(step)
    except ins.StepFailed as f:
        f.step.status = "failed"
        _mark_not_run(steps)
        report_stop(plan, done, f.step, f"failed (exit {f.code})", f.tail, target, err)
        return int(ExitCode.FINDINGS)
    except KeyboardInterrupt:
        if current is not None:
            current.status = "interrupted"
            if progress is not None:  # what it was waiting for when interrupted
                current.blocking = [b.as_json() for b in progress.blocked()]
        _mark_not_run(steps)
        report_stop(plan, done, current, "interrupted (Ctrl-C)", [], target, err)
        return int(ExitCode.INTERRUPTED)
    return 0


def _mark_not_run(steps):
    for s in steps:
        if s.status in ("planned",):
            s.status = "not-run"


def report_stop(plan, done, stopped, how, tail, target: Target, err):
    from kubectl_dynamo.commands.install import plan as ins

    req = plan.request
    total = len(plan.to_run)
    name = stopped.command(req.helm) if stopped and stopped.argv else (
        "create KAI queues" if stopped else "preparation")
    lines = [f"error: step [{stopped.number if stopped else '?'}/{total}] {how}: {name}"]
    if stopped is not None and stopped.blocking:
        from kubectl_dynamo.output.tables import format_blocking

        lines += format_blocking(stopped.blocking)
    said = [t for t in tail[-6:] if t.strip()]
    if said:
        lines += [f"{'helm' if stopped and stopped.argv else 'the API server'} said:"] + [f"    {t}" for t in said]
    lines.append("done:     " + ("; ".join(f"[{s.number}/{total}] {_label(s)}" for s in done) or "nothing"))
    rest = [s for s in plan.to_run if s not in done]
    lines.append("not done: " + "; ".join(f"[{s.number}/{total}] {_label(s)}" +
                                         (" (may be partly applied)" if s is stopped else "") for s in rest))
    undo = ins.undo_lines(done + ([stopped] if stopped and stopped.release else []), req.helm,
                          req.kube_flags, kubectl_flags(target))
    if undo:
        lines.append("to undo:")
        lines += [f"    {u}" for u in undo]
    err("\n".join(lines))


def _label(step):
    if step.component == "queues":
        return "KAI queues " + ", ".join(o["metadata"]["name"] for o in step.objects)
    if step.component == "repo":
        return "helm " + " ".join(step.argv[:2])
    from kubectl_dynamo.commands.install import plan as ins

    return f"{step.action} {ins.CHARTS[step.component].title} (release {step.release[0]} in {step.release[1]})"


def verify(req, connect, clock, sleep=None) -> dict:
    """detect again; discovery follows new CRDs asynchronously, so retry briefly before judging."""
    import time

    from kubectl_dynamo.commands.detect import detect_report
    from kubectl_dynamo.commands.install import plan as ins

    sleep = sleep or time.sleep  # discovery has no watch: poll with a deadline
    deadline = clock() + 20
    while True:
        result = ins.outcome(req, dict(detect_report(connect())))
        if result["ok"] or clock() > deadline:
            return result
        sleep(1)


# -- the contract --------------------------------------------------------------------------------
def plan_json(plan, keep_meta=False) -> dict:
    req = plan.request
    steps = []
    for s in plan.steps:
        steps.append({"number": s.number, "component": s.component, "action": s.action,
                      "command": s.command(req.helm), "argv": ([req.helm, *s.argv] if s.argv else None),
                      "release": ({"name": s.release[0], "namespace": s.release[1]} if s.release else None),
                      "objects": s.objects, "reason": s.reason,
                      "status": "skipped" if not s.runs else s.status, "blocking": s.blocking})
    return {"steps": steps, "warnings": list(plan.warnings), "blockers": list(plan.blockers)}










