"""``install --orchestrator grove|lws``: the multinode prerequisites, installed with the real ``helm``.

Two halves:
- planning is pure: ``build_plan(request, state)`` turns what the user asked for and what the
  cluster already has (``detect``'s report, ``helm list``, release values) into ordered steps,
  warnings and blockers. The unit tests compare its helm command lines with the upstream docs.
- execution runs ``helm`` as a subprocess with an argument list (never a shell string), streams
  its output under one progress line per step, and creates the KAI queues through the API.

Facts (chart names, references, namespaces, value keys) come from the upstream docs and charts;
see docs/install.md.
"""

from __future__ import annotations

import os
import re
import shlex
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from kubectl_dynamo.model import compat


# -- the one table of charts and default versions ---------------------------------------------
@dataclass(frozen=True)
class ChartInfo:
    key: str
    title: str
    chart: str  # chart name: the archive prefix and what `helm list` shows as CHART
    release: str
    namespace: Optional[str]  # None: the platform namespace (-n)
    ref: str  # OCI reference or repo/chart; for the platform, the archive file name
    default_version: str
    version_flag: str
    groups: Tuple[str, ...]  # API groups that say it is installed
    min_kube: Optional[Tuple[int, int]] = None


CHARTS: Dict[str, ChartInfo] = {c.key: c for c in (
    # Platform 1.6.0: the docs this command follows (role templates, DYNAMO_* variables) are 1.6-era;
    # its compatibility table asks for KAI >= v0.17.0 and Grove >= v0.1.0-alpha.14-rc1, and Grove
    # managed outside the platform must be >= v0.1.0-alpha.15. The chart requires Kubernetes >= 1.30.
    ChartInfo("platform", "Dynamo platform", "dynamo-platform", "dynamo-platform", None,
              "dynamo-platform-{version}.tgz", "1.6.0", "--platform-version",
              ("nvidia.com",), (1, 30)),
    ChartInfo("grove", "Grove", "grove-charts", "grove", "grove-system",
              "oci://ghcr.io/ai-dynamo/grove/grove-charts", "v0.1.0-alpha.15", "--grove-version",
              ("grove.io", "scheduler.grove.io")),
    ChartInfo("kai", "KAI Scheduler", "kai-scheduler", "kai-scheduler", "kai-scheduler",
              "oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler", "v0.17.0", "--kai-version",
              ("scheduling.run.ai",)),
    # 1.15.0 is the newest chart seen in the volcano-sh Helm repository index (1.15.1 unconfirmed).
    ChartInfo("volcano", "Volcano", "volcano", "volcano", "volcano-system",
              "volcano-sh/volcano", "1.15.0", "--volcano-version", ("scheduling.volcano.sh",)),
    # The newest LWS chart; its minimums are compatibility.json's (LWS_MINIMUM, LWS_DISAGGREGATED_SET).
    ChartInfo("lws", "LeaderWorkerSet", "lws", "lws", "lws-system",
              "oci://registry.k8s.io/lws/charts/lws", "0.10.0", "--lws-version",
              ("leaderworkerset.x-k8s.io",), (1, 26)),
)}

VOLCANO_REPO = ("volcano-sh", "https://volcano-sh.github.io/helm-charts")
PLATFORM_NAMESPACE = "dynamo-system"
PLATFORM_CHART_URL = "https://helm.ngc.nvidia.com/nvidia/ai-dynamo/charts/dynamo-platform-{version}.tgz"
DEFAULT_TIMEOUT = "300s"
HELM_MIN_MAJOR = 3
FIELD_MANAGER = "kubectl-dynamo"

QUEUE_RESOURCES = {k: {"quota": -1, "limit": -1, "overQuotaWeight": 1} for k in ("cpu", "gpu", "memory")}


def dynamo_queues() -> List[dict]:
    """The KAI queues the operator needs: ``dynamo`` under its parent ``dynamo-default`` (the
    platform chart's shape; KAI runs workloads only from leaf queues, so two levels)."""
    meta = {"labels": {"app.kubernetes.io/managed-by": FIELD_MANAGER}}
    return [{"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
             "metadata": {"name": "dynamo-default", **meta}, "spec": {"resources": QUEUE_RESOURCES}},
            {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
             "metadata": {"name": "dynamo", **meta},
             "spec": {"parentQueue": "dynamo-default", "resources": QUEUE_RESOURCES}}]


# -- versions --------------------------------------------------------------------------------
def bare(version: Optional[str]) -> str:
    return (version or "").strip().lstrip("vV")


# The compatibility facts (data/compatibility.json, with their sources) as chart versions: the standard DCD
# pathway's minimum, and the first LWS that serves disaggregatedset.x-k8s.io/v1.
LWS_MINIMUM = bare(compat.facts()["lws"]["minimum"])
LWS_DISAGGREGATED_SET = bare(compat.facts()["lws"]["disaggregatedSet"])


def same_version(a: Optional[str], b: Optional[str]) -> bool:
    return bool(a) and bool(b) and bare(a) == bare(b)


def version_tuple(version: str) -> Optional[Tuple[int, ...]]:
    m = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?", (version or "").strip())
    return tuple(int(x or 0) for x in m.groups()) if m else None


def kube_minor(server_version: str) -> Optional[Tuple[int, int]]:
    m = re.match(r"^v?(\d+)\.(\d+)", server_version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def helm_major(short: str) -> Optional[int]:
    m = re.match(r"^v?(\d+)\.", (short or "").strip())
    return int(m.group(1)) if m else None


def split_chart(field_value: str, chart: str) -> Optional[str]:
    """``helm list``'s CHART column is ``<name>-<version>``; names contain dashes, so match the
    known name: ``grove-charts-v0.1.0-alpha.15`` -> ``v0.1.0-alpha.15``."""
    if field_value.startswith(chart + "-"):
        rest = field_value[len(chart) + 1:]
        if re.match(r"^v?\d", rest):
            return rest
    return None


# -- values ------------------------------------------------------------------------------------
def flatten(values, prefix: str = "") -> Dict[str, object]:
    out = {}
    if isinstance(values, dict) and values:
        for k, v in values.items():
            out.update(flatten(v, f"{prefix}{k}."))
    elif prefix:
        out[prefix[:-1]] = values
    return out


def merge(base: dict, extra: dict) -> dict:
    out = dict(base)
    for k, v in extra.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


@dataclass(frozen=True)
class SetValue:
    key: str
    value: object
    string: bool = False  # --set-string

    def args(self) -> List[str]:
        text = ("true" if self.value else "false") if isinstance(self.value, bool) else str(self.value)
        return ["--set-string" if self.string else "--set", f"{self.key}={text}"]


def _same_value(have, want, string: bool) -> bool:
    if string or isinstance(have, str) or isinstance(want, str):
        norm = lambda v: ("true" if v else "false") if isinstance(v, bool) else str(v)  # noqa: E731
        return have is not None and norm(have) == norm(want)
    return have == want


# -- request, observed state, plan -------------------------------------------------------------
@dataclass
class Request:
    orchestrator: str  # grove | lws
    separately: bool = False
    namespace: str = PLATFORM_NAMESPACE  # the platform's
    versions: Dict[str, str] = field(default_factory=dict)  # overrides of the defaults
    chart_source: Optional[str] = None
    chart_files: Dict[str, str] = field(default_factory=dict)  # component -> archive (with chart_source)
    values_files: Dict[str, List[str]] = field(default_factory=dict)  # component -> --values files
    values_data: Dict[str, dict] = field(default_factory=dict)  # component -> merged content of those
    upgrade: bool = False
    timeout: str = DEFAULT_TIMEOUT
    helm: str = "helm"
    kube_flags: List[str] = field(default_factory=list)  # --kubeconfig/--kube-context for helm

    def version(self, key: str) -> str:
        return self.versions.get(key) or CHARTS[key].default_version

    def components(self) -> List[str]:
        if self.orchestrator == "lws":
            return ["volcano", "lws"]
        return ["grove", "kai", "platform"] if self.separately else ["platform"]

    @property
    def mode(self) -> str:
        return "lws" if self.orchestrator == "lws" else ("separately" if self.separately else "platform")


@dataclass
class State:
    """What the cluster has: None where it could not be read."""

    report: Optional[dict] = None  # detect -o json (contracts.DetectData)
    releases: Optional[List[dict]] = None  # helm list -A -a -o json
    release_values: Dict[Tuple[Any, Any], dict] = field(default_factory=dict)  # (name, ns) -> user values
    namespaces: Dict[str, bool] = field(default_factory=dict)  # namespace -> exists

    def orchestrator(self, key: str) -> dict:
        return ((self.report or {}).get("orchestrators") or {}).get(key) or {}


@dataclass
class Step:
    component: str  # platform, grove, kai, volcano, lws, queues, repo
    action: str  # install | upgrade | repair | create | skip | repo
    argv: List[str] = field(default_factory=list)  # helm arguments, without the program
    reason: str = ""
    release: Optional[Tuple[str, str]] = None  # (name, namespace) the step installs
    objects: List[dict] = field(default_factory=list)  # what the plugin itself creates
    chart_path: Optional[str] = None  # a local archive the step needs
    creates_namespace: Optional[str] = None
    status: str = "planned"
    number: Optional[int] = None
    blocking: List[dict] = field(default_factory=list)  # when helm failed: checks/release.Blocked.as_json()

    @property
    def runs(self) -> bool:
        return self.action != "skip"

    @property
    def title(self) -> str:
        return CHARTS[self.component].title if self.component in CHARTS else "KAI queues"

    def command(self, helm: str) -> Optional[str]:
        return shlex.join([helm, *self.argv]) if self.argv else None


@dataclass
class Plan:
    request: Request
    steps: List[Step] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    blockers: List[str] = field(default_factory=list)

    @property
    def to_run(self) -> List[Step]:
        return [s for s in self.steps if s.runs]


# -- planning (pure) ---------------------------------------------------------------------------
def desired_sets(req: Request, key: str) -> List[SetValue]:
    if key == "platform" and req.orchestrator == "grove":
        if req.separately:
            return [SetValue("global.grove.enabled", True), SetValue("global.kai-scheduler.enabled", True)]
        return [SetValue("global.grove.install", True), SetValue("global.kai-scheduler.install", True),
                SetValue("kai-scheduler.scheduler.args.default-staleness-grace-period", "-1s", string=True)]
    if key == "lws":
        return [SetValue("gangSchedulingManagement.schedulerProvider", "volcano")]
    return []


def namespace_of(req: Request, key: str) -> str:
    return CHARTS[key].namespace or req.namespace


def chart_ref(req: Request, key: str) -> str:
    info = CHARTS[key]
    if req.chart_source:
        return req.chart_files.get(key) or os.path.join(req.chart_source, archive_names(key, req.version(key))[0])
    if key == "platform":
        return info.ref.format(version=req.version(key))
    return info.ref


def archive_names(key: str, version: str) -> List[str]:
    """Candidate archive names in --chart-source: ``<chart>-<version>.tgz`` as ``helm package``
    names it, with or without the ``v`` (the OCI tags of Grove, KAI and LWS carry one), and LWS's
    release asset name."""
    chart = CHARTS[key].chart
    names = [f"{chart}-{version}.tgz"]
    for v in (f"v{bare(version)}", bare(version)):
        if f"{chart}-{v}.tgz" not in names:
            names.append(f"{chart}-{v}.tgz")
    if key == "lws":
        names.append(f"lws-chart-v{bare(version)}.tgz")
    return names


def helm_install_argv(req: Request, key: str) -> List[str]:
    """The docs' command for ``key``, with ``helm install`` made re-runnable as ``upgrade --install``
    and every flag the docs give kept in their order; then --values, --wait/--timeout, kube flags."""
    info, version, ns, ref = CHARTS[key], req.version(key), namespace_of(req, key), chart_ref(req, key)
    pinned = not req.chart_source  # a local archive is the version; helm ignores --version for a path
    sets = [a for s in desired_sets(req, key) for a in s.args()]
    if key == "platform":
        argv = ["upgrade", "--install", info.release, ref, "--namespace", ns, "--create-namespace", *sets]
    elif key == "grove":
        argv = ["upgrade", "-i", info.release, ref] + (["--version", version] if pinned else []) + \
               ["--namespace", ns, "--create-namespace"]
    elif key == "kai":
        argv = ["upgrade", "-i", info.release, ref, "-n", ns, "--create-namespace"] + \
               (["--version", version] if pinned else [])
    elif key == "volcano":
        argv = ["upgrade", "--install", info.release, ref, "-n", ns, "--create-namespace"] + \
               (["--version", version] if pinned else [])
    elif key == "lws":
        argv = ["upgrade", "--install", info.release, ref] + ([f"--version={version}"] if pinned else []) + \
               ["--namespace", ns, "--create-namespace", *sets]
    else:
        raise ValueError(key)
    for path in req.values_files.get(key, []):
        argv += ["--values", path]
    return argv + ["--wait", "--timeout", req.timeout] + list(req.kube_flags)


def _release_for(state: State, chart: str) -> List[dict]:
    out = []
    for r in state.releases or []:
        version = split_chart(str(r.get("chart") or ""), chart)
        if version is not None and r.get("status") != "uninstalled":
            out.append({**r, "version": version})
    return out


def _value_diff(req: Request, key: str, have: Optional[dict]) -> List[str]:
    """Desired values (--values files, then --set) missing from the release's user values."""
    flat_have = flatten(have or {})
    want = {k: (v, False) for k, v in flatten(req.values_data.get(key) or {}).items()}
    want.update({s.key: (s.value, s.string) for s in desired_sets(req, key)})
    diff = []
    for k, (v, string) in want.items():
        if not _same_value(flat_have.get(k), v, string):
            shown = "<unset>" if k not in flat_have else value_text(flat_have[k])
            diff.append(f"{k}: {shown} -> {value_text(v)}")
    return diff


def value_text(value) -> str:
    """A value as helm's --set writes it (true, null, 3, -1s), never as a Python repr."""
    import json

    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _extra_values(req: Request, key: str, have: Optional[dict]) -> List[str]:
    want = set(flatten(req.values_data.get(key) or {})) | {s.key for s in desired_sets(req, key)}
    return sorted(k for k in flatten(have or {}) if k not in want)


def _decide_helm(req: Request, state: State, key: str, plan: Plan) -> Step:
    info, want = CHARTS[key], req.version(key)
    ns = namespace_of(req, key)
    argv = helm_install_argv(req, key)
    step = Step(key, "install", argv, release=(info.release, ns),
                chart_path=chart_ref(req, key) if (req.chart_source or key == "platform") else None,
                creates_namespace=None if state.namespaces.get(ns) else ns)
    releases = _release_for(state, info.chart)
    mine = [r for r in releases if (r.get("name"), r.get("namespace")) == (info.release, ns)]
    others = [r for r in releases if r not in mine]
    where = f"release {info.release} in {ns}"
    if mine:
        r = mine[0]
        status, have = r.get("status") or "unknown", r["version"]
        diff = _value_diff(req, key, state.release_values.get((info.release, ns)))
        step.creates_namespace = None
        if status.startswith("pending"):
            plan.blockers.append(f"{info.title}: {where} has an operation in progress ({status}); wait for it, "
                                 f"or inspect it with `helm status {info.release} -n {ns}`")
            step.action, step.reason = "skip", f"{status}"
            return step
        if status == "deployed" and same_version(have, want) and not diff:
            step.action, step.reason = "skip", f"already installed at {have} ({where})"
            return step
        if status != "deployed" and same_version(have, want):
            step.action, step.reason = "repair", f"{where} is {status} at {have}: running it again"
            return step
        changes = ([f"version {have} -> {want}"] if not same_version(have, want) else []) + diff
        if not req.upgrade:
            keep = f", or {info.version_flag} {have} to keep it" if not same_version(have, want) else ""
            plan.blockers.append(f"{info.title}: {where} differs from the plan ({'; '.join(changes)}); "
                                 f"pass --upgrade to change it{keep}")
            step.action, step.reason = "skip", "differs (needs --upgrade)"
            return step
        step.action, step.reason = "upgrade", f"{where}: {'; '.join(changes)}"
        extra = _extra_values(req, key, state.release_values.get((info.release, ns)))
        if extra:
            plan.warnings.append(f"{info.title}: {where} has values this plan does not pass "
                                 f"({', '.join(extra)}); the upgrade resets them to the chart's defaults "
                                 f"unless you pass them with --values")
        return step
    if others:
        r = others[0]
        other = f"release {r.get('name')} in {r.get('namespace')}"
        diff = _value_diff(req, key, state.release_values.get((r.get("name"), r.get("namespace"))))
        if r.get("status") == "deployed" and same_version(r["version"], want) and not diff:
            step.action, step.reason = "skip", f"already installed at {r['version']} as {other}"
            return step
        details = f"chart {r.get('chart')}, {r.get('status')}" + (f"; {'; '.join(diff)}" if diff else "")
        plan.blockers.append(f"{info.title} is already installed as {other} ({details}); installing {where} "
                             f"would create a second copy. Change that release yourself "
                             f"(helm upgrade {r.get('name')} … -n {r.get('namespace')}) or uninstall it")
        step.action, step.reason = "skip", f"conflict with {other}"
        return step
    seen = _installed_outside_helm(state, key)
    if seen is not None:
        version = seen or "unknown version"
        if seen and same_version(seen, want) and key != "platform":
            step.action, step.reason = "skip", (f"already installed at {seen} (not by a Helm release "
                                                f"visible to you)")
            return step
        plan.blockers.append(f"{info.title} is already installed ({version}) but not by a Helm release "
                             f"visible to you (installed with kubectl, another tool, or a release in a "
                             f"namespace you cannot read); the chart would collide with its CRDs and "
                             f"controllers. Remove it first" +
                             (f", or pass {info.version_flag} {seen} to keep it" if seen and key != "platform"
                              else ""))
        step.action, step.reason = "skip", "installed outside Helm"
        return step
    step.reason = f"{where}, chart {info.chart} {want}"
    return step


def _installed_outside_helm(state: State, key: str) -> Optional[str]:
    """The version ('' if unknown) of a ``key`` that detect sees although no release has its chart."""
    if state.report is None:
        return None
    if key == "platform":
        op = state.report.get("dynamoOperator") or {}
        return (op.get("version") or "") if op.get("installed") else None
    o = state.orchestrator(key)
    return (o.get("version") or "") if o.get("installed") else None


def _platform_release(state: State, req: Request) -> Optional[dict]:
    for r in _release_for(state, CHARTS["platform"].chart):
        return r
    return None


def _platform_installs(state: State, release: Optional[dict], sub: str) -> bool:
    """Does the platform release install ``sub`` (grove/kai-scheduler) as its subchart?"""
    if not release:
        return False
    values = flatten(state.release_values.get((release.get("name"), release.get("namespace"))) or {})
    return values.get(f"global.{sub}.install") in (True, "true")


def build_plan(req: Request, state: Optional[State] = None) -> Plan:
    """The ordered steps for ``req`` given what the cluster has (``State()`` = an empty cluster)."""
    state = state or State()
    plan = Plan(req)
    if req.orchestrator == "lws":
        _plan_lws(req, state, plan)
    else:
        _plan_grove(req, state, plan)
    n = 0
    for s in plan.steps:
        if s.runs:
            n += 1
            s.number = n
    return plan


def _plan_lws(req: Request, state: State, plan: Plan) -> None:
    lws_version = req.version("lws")
    have, need = version_tuple(lws_version), version_tuple(LWS_DISAGGREGATED_SET)
    if have and need and have < need:
        plan.warnings.append(f"LWS {lws_version} does not serve DisaggregatedSet (disaggregatedset.x-k8s.io/v1, "
                             f"LWS >= {LWS_DISAGGREGATED_SET}); the standard DCD pathway works from {LWS_MINIMUM}")
    volcano = _decide_helm(req, state, "volcano", plan)
    if volcano.runs and not req.chart_source:
        name, url = VOLCANO_REPO
        plan.steps.append(Step("repo", "repo", ["repo", "add", name, url],
                               reason=f"the chart repository of Volcano ({name})"))
        plan.steps.append(Step("repo", "repo", ["repo", "update"], reason="refresh the repository index"))
    plan.steps.append(volcano)
    plan.steps.append(_decide_helm(req, state, "lws", plan))
    gates = ((state.report or {}).get("dynamoOperator") or {}).get("gates") or {}
    if gates.get("grove"):
        plan.warnings.append('Grove is enabled in the Dynamo operator: new multinode DGDs use Grove unless '
                             'they set the annotation nvidia.com/enable-grove: "false"; this install does '
                             'not change that')


def _plan_grove(req: Request, state: State, plan: Plan) -> None:
    platform_rel = _platform_release(state, req)
    if req.separately:
        for key, sub in (("grove", "grove"), ("kai", "kai-scheduler")):
            if platform_rel is not None and _platform_installs(state, platform_rel, sub):
                plan.blockers.append(
                    f"{CHARTS[key].title} is installed inside release {platform_rel.get('name')} in "
                    f"{platform_rel.get('namespace')} (global.{sub}.install=true); --separately would install "
                    f"a second copy. Run without --separately to keep the in-platform install")
                plan.steps.append(Step(key, "skip", reason=f"inside release {platform_rel.get('name')}"))
            else:
                plan.steps.append(_decide_helm(req, state, key, plan))
        plan.steps.append(_queue_step(state, after_platform=False))
        plan.steps.append(_decide_helm(req, state, "platform", plan))
    else:
        for key, sub in (("grove", "grove"), ("kai", "kai-scheduler")):
            if _platform_installs(state, platform_rel, sub):
                continue
            owners = _release_for(state, CHARTS[key].chart)
            seen = _installed_outside_helm(state, key)
            if owners or seen is not None:
                how = (f"as release {owners[0].get('name')} in {owners[0].get('namespace')}" if owners
                       else f"({seen or 'unknown version'}, not by a Helm release visible to you)")
                plan.blockers.append(f"{CHARTS[key].title} is already installed {how}; the platform chart "
                                     f"would install a second copy. Use --separately to keep it")
        plan.steps.append(_decide_helm(req, state, "platform", plan))
        plan.steps.append(_queue_step(state, after_platform=True))
    values = flatten(req.values_data.get("platform") or {})
    if values.get("global.volcano-scheduler.enabled") in (True, "true"):
        plan.blockers.append("KAI and Volcano both wanted as Grove's scheduler: the platform values set "
                             "global.volcano-scheduler.enabled=true while this plan enables KAI Scheduler; "
                             "the operator refuses that (scheduler_integration_conflict). Remove it from --values")
    sel = ((state.report or {}).get("selection") or {}).get("default") or {}
    platform = next(s for s in plan.steps if s.component == "platform")
    if sel.get("error") == "scheduler_integration_conflict" and not platform.runs:
        plan.blockers.append("KAI and Volcano are both enabled as Grove's scheduler in the installed Dynamo "
                             "operator (scheduler_integration_conflict); set global.volcano-scheduler.enabled="
                             "false in the platform release (--values with --upgrade)")


def _queue_step(state: State, after_platform: bool) -> Step:
    kai = state.orchestrator("kai")
    known = kai.get("queues") if kai.get("installed") else None
    objs = dynamo_queues()
    if known is not None:
        present = {q.get("name") for q in known}
        missing = [o for o in objs if o["metadata"]["name"] not in present]
        if not missing:
            return Step("queues", "skip", reason="KAI queues dynamo-default and dynamo exist")
        objs = missing
    why = ("the operator's default queue; the platform chart creates them as hooks when it sees the KAI "
           "API, this creates any still missing" if after_platform else
           "the operator's default queue, created through the API where missing")
    return Step("queues", "create", reason=why, objects=objs)


# -- permissions the plan needs ----------------------------------------------------------------
Permission = Tuple[str, str, str, Optional[str], str]


def needed_permissions(plan: Plan) -> List[Permission]:
    """(verb, resource, group, namespace, why) for SelfSubjectAccessReviews."""
    out: List[Permission] = []
    for s in plan.to_run:
        if s.component == "repo":
            continue
        if s.component == "queues":
            out.append(("create", "queues", "scheduling.run.ai", None, "the KAI queues"))
            continue
        assert s.release is not None  # every chart step has a release
        name, ns = s.release
        why = f"{CHARTS[s.component].title} ({name})"
        if s.creates_namespace:
            out.append(("create", "namespaces", "", None, why))
        verb = "create" if s.action in ("install", "repair") else "update"
        out += [(verb, "secrets", "", ns, why + ": Helm's release record"),
                (verb, "deployments", "apps", ns, why),
                (verb, "configmaps", "", ns, why),
                (verb, "customresourcedefinitions", "apiextensions.k8s.io", None, why),
                (verb, "clusterroles", "rbac.authorization.k8s.io", None, why),
                (verb, "clusterrolebindings", "rbac.authorization.k8s.io", None, why)]
    seen: set = set()
    unique: List[Permission] = []
    for p in out:
        if p[:4] not in seen:
            seen.add(p[:4])
            unique.append(p)
    return unique


# -- undo lines --------------------------------------------------------------------------------
def undo_lines(steps: List[Step], helm: str, kube_flags: List[str], kubectl_flags: List[str]) -> List[str]:
    """How to take back what ``steps`` did, newest first."""
    lines = []
    for s in reversed(steps):
        if s.component == "queues":
            names = [o["metadata"]["name"] for o in reversed(s.objects)]
            lines.append(shlex.join(["kubectl", "delete", "queues.scheduling.run.ai", *names, *kubectl_flags]))
        elif s.release and s.action in ("install", "repair"):
            name, ns = s.release
            lines.append(shlex.join([helm, "uninstall", name, "-n", ns, *kube_flags]))
            if s.creates_namespace:
                lines.append(shlex.join(["kubectl", "delete", "namespace", ns, *kubectl_flags]))
        elif s.release and s.action == "upgrade":
            name, ns = s.release
            lines.append(shlex.join([helm, "rollback", name, "-n", ns, *kube_flags]) +
                         ("   # KAI does not support rollback: uninstall and reinstall the old version"
                          if s.component == "kai" else ""))
    return lines


# -- execution ---------------------------------------------------------------------------------
class StepFailed(Exception):
    def __init__(self, step: Step, code: int, tail: List[str]):
        super().__init__(f"exit {code}")
        self.step, self.code, self.tail = step, code, tail


def run_helm(helm: str, argv: List[str], echo: Callable[[str], None], env=None,
             tick: Optional[Callable[[float], bool]] = None) -> Tuple[int, List[str]]:
    """Run helm with an argument list, echoing its merged output line by line; the last lines
    are returned for the failure message. While helm is quiet, ``tick(seconds)`` may wait that long
    for something else to show (install's progress) until it returns False. Ctrl-C stops helm too and
    raises KeyboardInterrupt."""
    import queue
    import signal
    import subprocess
    import threading

    tail: deque = deque(maxlen=12)
    proc = subprocess.Popen([helm, *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            bufsize=1, env=env, stdin=subprocess.DEVNULL)
    lines: queue.Queue = queue.Queue()  # helm's lines, read by a thread so the caller's thread stays free

    def read() -> None:
        for line in proc.stdout or ():
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True, name="helm output").start()
    try:
        while True:
            try:
                line = lines.get_nowait() if tick else lines.get(timeout=0.5)  # a timeout keeps Ctrl-C responsive
            except queue.Empty:
                if tick and not tick(0.25):
                    tick = None
                continue
            if line is None:
                break
            tail.append(line)
            echo(line)
        return proc.wait(), list(tail)
    except KeyboardInterrupt:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # a terminal's Ctrl-C reaches helm too; a kill -INT may not
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        raise


def helm_capture(helm: str, argv: List[str], timeout: float = 120) -> Tuple[int, str, str]:
    import subprocess

    try:
        p = subprocess.run([helm, *argv], capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return 124, "", f"helm {' '.join(argv[:2])} timed out after {timeout:.0f}s"
    return p.returncode, p.stdout, p.stderr


def create_missing_queues(cluster, objects: List[dict], echo: Callable[[str], None]) -> List[dict]:
    """Create each queue that does not exist (parents first); existing ones are left alone."""
    from kubectl_dynamo.cluster.client import path_for
    from kubectl_dynamo.errors import DynamoError, NotFound

    created = []
    for obj in objects:
        name = obj["metadata"]["name"]
        path = path_for("scheduling.run.ai", "v2", "queues")
        try:
            cluster.get(f"{path}/{name}")
            echo(f"queue {name} exists; left as it is")
            continue
        except NotFound:
            pass
        try:
            cluster.request("POST", path, params={"fieldManager": FIELD_MANAGER}, body=obj)
        except DynamoError as e:
            if getattr(e, "status", None) == 409:
                echo(f"queue {name} exists; left as it is")
                continue
            raise
        echo(f"queue {name} created" + (f" (parent {obj['spec']['parentQueue']})"
                                        if obj["spec"].get("parentQueue") else ""))
        created.append(obj)
    return created


# -- the outcome -------------------------------------------------------------------------------
API_GROUPS = {"grove": ("grove.io", "scheduler.grove.io"), "kai": ("scheduling.run.ai",),
              "lws": ("leaderworkerset.x-k8s.io", "disaggregatedset.x-k8s.io"),
              "volcano": ("scheduling.volcano.sh",)}


def outcome(req: Request, report: dict) -> dict:
    """APIs served, controllers healthy, queues present and the selection for a new multinode DGD;
    ``ok`` only when that selection is the orchestrator asked for."""
    wanted = ("grove", "kai") if req.orchestrator == "grove" else ("lws", "volcano")
    orch = report.get("orchestrators") or {}
    apis, controllers = {}, {}
    for key in wanted:
        o = orch.get(key) or {}
        for g in API_GROUPS[key]:
            apis[g] = bool(o.get("installed")) and (g != "disaggregatedset.x-k8s.io" or bool(o.get("disaggregatedSet")))
        controllers[key] = {"healthy": o.get("healthy"), "version": o.get("version")}
    if req.orchestrator == "grove":
        op = report.get("dynamoOperator") or {}
        controllers["dynamoOperator"] = {"healthy": op.get("installed"), "version": op.get("version")}
        queues = {"kai": [q.get("name") for q in (orch.get("kai") or {}).get("queues") or []]}
    else:
        queues = {"volcano": [q.get("name") for q in (orch.get("volcano") or {}).get("queues") or []]}
    sel = ((report.get("selection") or {}).get("default")) or {}
    ok = sel.get("orchestrator") == req.orchestrator and not sel.get("error")
    return {"apis": apis, "controllers": controllers, "queues": queues, "selection": sel, "ok": ok}
