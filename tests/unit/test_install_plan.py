"""``install``: the plan (pure), compared argument by argument with the upstream commands, and the
decisions it takes from what the cluster already has. No cluster."""

import shlex

import pytest
from click.testing import CliRunner

from kubectl_dynamo.cli import PROG, cli
from kubectl_dynamo.commands.install import plan as ins
from tests.conftest import run_cli

# The commands exactly as the upstream multinode docs give them (tests/data/seeds/multinode-orchestration.txt)
# and, for Grove and KAI installed on their own, as their READMEs do (Grove and KAI-Scheduler READMEs).
SEED_PLATFORM = """helm upgrade --install dynamo-platform dynamo-platform-$RELEASE_VERSION.tgz \\
--namespace $NAMESPACE \\
--create-namespace \\
--set "global.grove.install=true" \\
--set "global.kai-scheduler.install=true" \\
--set-string "kai-scheduler.scheduler.args.default-staleness-grace-period=-1s"
"""
SEED_VOLCANO = ["helm repo add volcano-sh https://volcano-sh.github.io/helm-charts",
                "helm repo update",
                "helm install volcano volcano-sh/volcano -n volcano-system --create-namespace"]
SEED_LWS = """helm install lws oci://registry.k8s.io/lws/charts/lws \\
  --version=$LWS_VERSION \\
  --namespace lws-system \\
  --create-namespace \\
  --set gangSchedulingManagement.schedulerProvider=volcano \\
  --wait --timeout 300s
"""
DOC_GROVE = "helm upgrade -i grove oci://ghcr.io/ai-dynamo/grove/grove-charts --version $V"
DOC_KAI = ("helm upgrade -i kai-scheduler oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler "
           "-n kai-scheduler --create-namespace --version $V")
WAIT = ["--wait", "--timeout", "300s"]


def seed(text, **env):
    """shlex the way a shell would, with the variables set; `helm install` becomes re-runnable."""
    for k, v in env.items():
        text = text.replace(f"${k}", v)
    argv = shlex.split(text.replace("\\\n", " "))
    if argv[:2] == ["helm", "install"]:
        argv[1:2] = ["upgrade", "--install"]
    return argv


def argv_of(plan, component):
    step = next(s for s in plan.steps if s.component == component and s.runs)
    return [plan.request.helm, *step.argv]


def repo_steps(plan):
    return [shlex.join([plan.request.helm, *s.argv]) for s in plan.steps if s.component == "repo"]


# -- commands vs. the docs ---------------------------------------------------------------------
def test_grove_default_is_the_seed_command_plus_wait():
    plan = ins.build_plan(ins.Request("grove"))
    assert [s.component for s in plan.to_run] == ["platform", "queues"]
    want = seed(SEED_PLATFORM, RELEASE_VERSION="1.6.0", NAMESPACE="dynamo-system")
    assert argv_of(plan, "platform") == want + WAIT
    assert plan.blockers == [] and plan.warnings == []


def test_grove_default_with_pins_and_namespace():
    plan = ins.build_plan(ins.Request("grove", namespace="team-dynamo", versions={"platform": "1.5.1"},
                                      timeout="10m"))
    want = seed(SEED_PLATFORM, RELEASE_VERSION="1.5.1", NAMESPACE="team-dynamo")
    assert argv_of(plan, "platform") == want + ["--wait", "--timeout", "10m"]


def test_grove_separately_order_and_commands():
    plan = ins.build_plan(ins.Request("grove", separately=True))
    assert [s.component for s in plan.to_run] == ["grove", "kai", "queues", "platform"]
    assert argv_of(plan, "grove") == seed(DOC_GROVE, V="v0.1.0-alpha.15") + \
        ["--namespace", "grove-system", "--create-namespace"] + WAIT
    assert argv_of(plan, "kai") == seed(DOC_KAI, V="v0.17.0") + WAIT
    assert argv_of(plan, "platform") == [
        "helm", "upgrade", "--install", "dynamo-platform", "dynamo-platform-1.6.0.tgz", "--namespace",
        "dynamo-system", "--create-namespace", "--set", "global.grove.enabled=true",
        "--set", "global.kai-scheduler.enabled=true"] + WAIT
    queues = next(s for s in plan.steps if s.component == "queues")
    assert [o["metadata"]["name"] for o in queues.objects] == ["dynamo-default", "dynamo"]
    dynamo = queues.objects[1]
    assert dynamo["apiVersion"] == "scheduling.run.ai/v2" and dynamo["spec"]["parentQueue"] == "dynamo-default"
    assert dynamo["spec"]["resources"]["gpu"] == {"quota": -1, "limit": -1, "overQuotaWeight": 1}


def test_grove_separately_with_pins():
    plan = ins.build_plan(ins.Request("grove", separately=True,
                                      versions={"grove": "v0.1.0-alpha.11", "kai": "v0.13.4", "platform": "1.4.0"}))
    assert argv_of(plan, "grove")[:7] == seed(DOC_GROVE, V="v0.1.0-alpha.11")
    assert argv_of(plan, "kai")[:10] == seed(DOC_KAI, V="v0.13.4")
    assert argv_of(plan, "platform")[4] == "dynamo-platform-1.4.0.tgz"


def test_lws_default_is_the_seed_commands():
    plan = ins.build_plan(ins.Request("lws"))
    assert repo_steps(plan) == SEED_VOLCANO[:2]
    assert argv_of(plan, "volcano") == seed(SEED_VOLCANO[2]) + ["--version", "1.15.0"] + WAIT
    assert argv_of(plan, "lws") == seed(SEED_LWS, LWS_VERSION="0.10.0")
    assert [s.number for s in plan.to_run] == [1, 2, 3, 4]
    assert plan.warnings == []


def test_lws_with_pins():
    plan = ins.build_plan(ins.Request("lws", versions={"lws": "0.9.0", "volcano": "1.14.1"}, timeout="600s"))
    assert argv_of(plan, "volcano") == seed(SEED_VOLCANO[2]) + ["--version", "1.14.1", "--wait", "--timeout", "600s"]
    assert argv_of(plan, "lws") == seed(SEED_LWS.replace("300s", "600s"), LWS_VERSION="0.9.0")
    assert not any("DisaggregatedSet" in w for w in plan.warnings)  # v0.9.0 serves it (compatibility.json)


def test_lws_older_than_disaggregated_set_warns():
    """kubernetes-sigs/lws v0.8.0 (fc19b9ae) has no disaggregatedset.x-k8s.io API; v0.9.0 (f056f611) is the
    first that serves it."""
    plan = ins.build_plan(ins.Request("lws", versions={"lws": "0.8.0"}))
    assert [w for w in plan.warnings if "DisaggregatedSet" in w] == [
        "LWS 0.8.0 does not serve DisaggregatedSet (disaggregatedset.x-k8s.io/v1, LWS >= 0.9.0); the standard DCD "
        "pathway works from 0.7.0"]


def test_every_default_lives_in_the_table():
    assert {k: c.default_version for k, c in ins.CHARTS.items()} == {
        "platform": "1.6.0", "grove": "v0.1.0-alpha.15", "kai": "v0.17.0", "volcano": "1.15.0", "lws": "0.10.0"}


def test_chart_source_uses_archives_and_no_repository(tmp_path):
    req = ins.Request("lws", chart_source=str(tmp_path),
                      chart_files={"lws": str(tmp_path / "lws-v0.10.0.tgz")})
    plan = ins.build_plan(req)
    assert repo_steps(plan) == []
    assert argv_of(plan, "volcano") == ["helm", "upgrade", "--install", "volcano", str(tmp_path / "volcano-1.15.0.tgz"),
                                        "-n", "volcano-system", "--create-namespace"] + WAIT
    assert argv_of(plan, "lws") == ["helm", "upgrade", "--install", "lws", str(tmp_path / "lws-v0.10.0.tgz"),
                                    "--namespace", "lws-system", "--create-namespace",
                                    "--set", "gangSchedulingManagement.schedulerProvider=volcano"] + WAIT


def test_archive_names():
    assert ins.archive_names("lws", "0.10.0") == ["lws-0.10.0.tgz", "lws-v0.10.0.tgz", "lws-chart-v0.10.0.tgz"]
    assert ins.archive_names("grove", "v0.1.0-alpha.15") == ["grove-charts-v0.1.0-alpha.15.tgz",
                                                             "grove-charts-0.1.0-alpha.15.tgz"]


def test_values_files_and_kube_flags_are_passed_through():
    req = ins.Request("grove", values_files={"platform": ["a.yaml", "b.yaml"]},
                      kube_flags=["--kubeconfig", "/k/config", "--kube-context", "gpu"])
    argv = argv_of(ins.build_plan(req), "platform")
    assert argv[-11:] == ["--values", "a.yaml", "--values", "b.yaml", *WAIT, "--kubeconfig", "/k/config",
                         "--kube-context", "gpu"]


def test_commands_are_copy_pastable():
    req = ins.Request("grove", values_files={"platform": ["my values.yaml"]}, helm="/opt/helm 3/helm")
    step = ins.build_plan(req).to_run[0]
    cmd = step.command(req.helm)
    assert shlex.split(cmd) == [req.helm, *step.argv]
    assert "'my values.yaml'" in cmd and cmd.startswith("'/opt/helm 3/helm' upgrade --install")


# -- decisions from what is installed ----------------------------------------------------------
def rel(name, ns, chart, status="deployed"):
    return {"name": name, "namespace": ns, "chart": chart, "status": status, "revision": "1", "app_version": ""}


def report(**installed):
    orch = {k: {"installed": False, "version": None, "healthy": None} for k in ("grove", "kai", "lws", "volcano")}
    orch["kai"]["queues"] = []
    orch["volcano"]["queues"] = []
    orch["lws"]["disaggregatedSet"] = False
    for k, v in installed.items():
        orch[k].update({"installed": True, "version": v, "healthy": True})
    return {"orchestrators": orch, "dynamoOperator": {"installed": False, "version": None,
                                                      "gates": {"grove": False, "lws": False, "kaiScheduler": False}},
            "selection": {"default": {"error": None}}}


LWS_VALUES = {"gangSchedulingManagement": {"schedulerProvider": "volcano"}}


def lws_state(volcano_chart="volcano-1.15.0", lws_chart="lws-v0.10.0", lws_values=LWS_VALUES, **kw):
    releases = [rel("volcano", "volcano-system", volcano_chart), rel("lws", "lws-system", lws_chart)]
    return ins.State(report=report(volcano="v1.15.0", lws="v0.10.0"), releases=releases,
                     release_values={("lws", "lws-system"): lws_values, ("volcano", "volcano-system"): {}},
                     namespaces={"lws-system": True, "volcano-system": True})


def test_rerun_of_finished_lws_install_changes_nothing():
    plan = ins.build_plan(ins.Request("lws"), lws_state())
    assert plan.to_run == [] and plan.blockers == []
    assert all("already installed at" in s.reason for s in plan.steps)


def test_other_version_needs_upgrade():
    plan = ins.build_plan(ins.Request("lws"), lws_state(lws_chart="lws-v0.9.0"))
    assert [s.component for s in plan.to_run] == []
    assert any("version v0.9.0 -> 0.10.0" in b and "--upgrade" in b and "--lws-version v0.9.0" in b
               for b in plan.blockers)
    up = ins.build_plan(ins.Request("lws", upgrade=True), lws_state(lws_chart="lws-v0.9.0"))
    assert [(s.component, s.action) for s in up.to_run] == [("lws", "upgrade")] and up.blockers == []


def test_lws_without_volcano_gang_scheduling_is_explained():
    plan = ins.build_plan(ins.Request("lws"), lws_state(lws_values={}))
    assert any("gangSchedulingManagement.schedulerProvider: <unset> -> volcano" in b for b in plan.blockers)


def test_volcano_under_another_release_is_a_conflict_unless_same_version():
    state = lws_state()
    state.releases[0] = rel("vc", "scheduling", "volcano-1.14.0")
    plan = ins.build_plan(ins.Request("lws"), state)
    assert any(b.startswith("Volcano is already installed as release vc in scheduling") and "second copy" in b
               for b in plan.blockers)
    state.releases[0] = rel("vc", "scheduling", "volcano-1.15.0")
    plan = ins.build_plan(ins.Request("lws"), state)
    assert plan.blockers == []
    assert next(s for s in plan.steps if s.component == "volcano").reason == \
        "already installed at 1.15.0 as release vc in scheduling"


def test_pending_release_blocks_and_failed_release_is_repaired():
    state = lws_state()
    state.releases[1]["status"] = "pending-install"
    assert any("operation in progress (pending-install)" in b for b in ins.build_plan(ins.Request("lws"), state).blockers)
    state.releases[1]["status"] = "failed"
    plan = ins.build_plan(ins.Request("lws"), state)
    assert [(s.component, s.action) for s in plan.to_run] == [("lws", "repair")] and not plan.blockers


def test_installed_outside_helm():
    state = ins.State(report=report(volcano="v1.15.0"), releases=[])
    plan = ins.build_plan(ins.Request("lws"), state)
    vol = next(s for s in plan.steps if s.component == "volcano")
    assert vol.action == "skip" and "not by a Helm release" in vol.reason
    assert repo_steps(plan) == []  # no repository needed when Volcano is not installed
    state = ins.State(report=report(volcano="v1.13.0"), releases=[])
    plan = ins.build_plan(ins.Request("lws"), state)
    assert any("Volcano is already installed (v1.13.0)" in b and "--volcano-version v1.13.0" in b
               for b in plan.blockers)


def test_grove_in_platform_conflicts_with_a_separate_grove():
    state = ins.State(report=report(grove="v0.1.0-alpha.11"), releases=[rel("grove", "grove-system",
                                                                            "grove-charts-v0.1.0-alpha.11")])
    plan = ins.build_plan(ins.Request("grove"), state)
    assert any("Grove is already installed as release grove in grove-system" in b and "--separately" in b
               for b in plan.blockers)


def test_separately_conflicts_with_grove_inside_the_platform():
    state = ins.State(report=report(grove="v0.1.0-alpha.15", kai="v0.17.0"),
                      releases=[rel("dynamo-platform", "dynamo-system", "dynamo-platform-1.6.0")],
                      release_values={("dynamo-platform", "dynamo-system"): {
                          "global": {"grove": {"install": True}, "kai-scheduler": {"install": True}}}})
    plan = ins.build_plan(ins.Request("grove", separately=True), state)
    assert sum("inside release dynamo-platform" in b for b in plan.blockers) == 2


def test_rerun_of_finished_platform_install_changes_nothing():
    values = {"global": {"grove": {"install": True}, "kai-scheduler": {"install": True}},
              "kai-scheduler": {"scheduler": {"args": {"default-staleness-grace-period": "-1s"}}}}
    rep = report(grove="v0.1.0-alpha.15", kai="v0.17.0")
    rep["orchestrators"]["kai"]["queues"] = [{"name": "dynamo-default"}, {"name": "dynamo"}]
    state = ins.State(report=rep, releases=[rel("dynamo-platform", "dynamo-system", "dynamo-platform-1.6.0")],
                      release_values={("dynamo-platform", "dynamo-system"): values})
    plan = ins.build_plan(ins.Request("grove"), state)
    assert plan.to_run == [] and plan.blockers == []
    # The same release without Grove: a change of values, only with --upgrade.
    state.release_values[("dynamo-platform", "dynamo-system")] = {"global": {"grove": {"install": False}}}
    plan = ins.build_plan(ins.Request("grove"), state)
    assert any("global.grove.install: false -> true" in b for b in plan.blockers)


def test_upgrade_warns_about_values_it_would_reset():
    state = ins.State(report=report(), releases=[rel("dynamo-platform", "dynamo-system", "dynamo-platform-1.5.0")],
                      release_values={("dynamo-platform", "dynamo-system"): {"prometheusEndpoint": "http://p"}})
    plan = ins.build_plan(ins.Request("grove", upgrade=True), state)
    assert plan.to_run[0].action == "upgrade"
    assert any("prometheusEndpoint" in w and "resets them" in w for w in plan.warnings)


def test_kai_and_volcano_both_as_groves_scheduler_is_refused():
    req = ins.Request("grove", values_data={"platform": {"global": {"volcano-scheduler": {"enabled": True}}}})
    assert any("KAI and Volcano both wanted" in b for b in ins.build_plan(req).blockers)


def test_queue_step_creates_only_missing_queues():
    rep = report(kai="v0.17.0", grove="v0.1.0-alpha.15")
    rep["orchestrators"]["kai"]["queues"] = [{"name": "dynamo-default"}]
    state = ins.State(report=rep, releases=[rel("grove", "grove-system", "grove-charts-v0.1.0-alpha.15"),
                                            rel("kai-scheduler", "kai-scheduler", "kai-scheduler-v0.17.0")])
    plan = ins.build_plan(ins.Request("grove", separately=True), state)
    assert [(s.component, [o["metadata"]["name"] for o in s.objects]) for s in plan.to_run] == \
        [("queues", ["dynamo"]), ("platform", [])]


def test_lws_warns_when_grove_would_still_win():
    rep = report()
    rep["dynamoOperator"]["gates"]["grove"] = True
    plan = ins.build_plan(ins.Request("lws"), ins.State(report=rep, releases=[]))
    assert any('nvidia.com/enable-grove: "false"' in w for w in plan.warnings)


def test_permissions_follow_the_plan():
    plan = ins.build_plan(ins.Request("grove", separately=True), ins.State(namespaces={"grove-system": True}))
    perms = {(v, r, g, ns) for v, r, g, ns, _ in ins.needed_permissions(plan)}
    assert ("create", "queues", "scheduling.run.ai", None) in perms
    assert ("create", "secrets", "", "kai-scheduler") in perms
    assert ("create", "customresourcedefinitions", "apiextensions.k8s.io", None) in perms
    assert ("create", "namespaces", "", None) in perms  # kai-scheduler and dynamo-system are new


def test_undo_lines():
    plan = ins.build_plan(ins.Request("grove", separately=True))
    lines = ins.undo_lines(plan.to_run[:3], "helm", [], ["--context", "gpu"])
    assert lines == ["kubectl delete queues.scheduling.run.ai dynamo dynamo-default --context gpu",
                     "helm uninstall kai-scheduler -n kai-scheduler",
                     "kubectl delete namespace kai-scheduler --context gpu",
                     "helm uninstall grove -n grove-system",
                     "kubectl delete namespace grove-system --context gpu"]


def test_outcome_requires_the_orchestrator_asked_for():
    rep = report(lws="v0.10.0", volcano="v1.15.0")
    rep["selection"]["default"] = {"provider": "component", "orchestrator": "lws", "scheduler": "volcano",
                                   "queue": None, "error": None, "reason": "r"}
    assert ins.outcome(ins.Request("lws"), rep)["ok"] is True
    assert ins.outcome(ins.Request("grove"), rep)["ok"] is False
    rep["selection"]["default"]["orchestrator"] = "grove"
    assert ins.outcome(ins.Request("lws"), rep)["ok"] is False


@pytest.mark.parametrize("text,chart,version", [("grove-charts-v0.1.0-alpha.15", "grove-charts", "v0.1.0-alpha.15"),
                                                ("kai-scheduler-v0.17.0", "kai-scheduler", "v0.17.0"),
                                                ("lws-0.10.0", "lws", "0.10.0"),
                                                ("lws-extra-1.0.0", "lws", None),
                                                ("dynamo-platform-1.6.0", "dynamo-platform", "1.6.0")])
def test_split_chart(text, chart, version):
    assert ins.split_chart(text, chart) == version


def test_versions():
    assert ins.same_version("v0.10.0", "0.10.0") and not ins.same_version("0.9.0", "0.10.0")
    assert ins.version_tuple("0.6.9") < ins.version_tuple(ins.LWS_MINIMUM) < ins.version_tuple("v0.10.0")
    assert ins.kube_minor("v1.33.13") == (1, 33) and ins.helm_major("v3.18.6+g4bc5e7e") == 3


# -- the command line without a cluster --------------------------------------------------------
def invoke(*args):
    return CliRunner().invoke(cli, ["install", *args], prog_name=PROG)


@pytest.mark.parametrize("args,message", [
    (["--orchestrator", "lws", "--separately"], "--separately applies to --orchestrator grove only"),
    (["--orchestrator", "grove", "--grove-version", "v0.1.0-alpha.11"], "add --separately"),
    (["--orchestrator", "grove", "--lws-version", "0.10.0"], "does not install LeaderWorkerSet"),
    (["--orchestrator", "lws", "--lws-version", "0.6.0"], "too old: Dynamo needs LWS >= 0.7.0"),
    (["--orchestrator", "lws", "--lws-version", "latest"], 'invalid --lws-version "latest"'),
    (["--orchestrator", "lws", "--timeout", "soon"], 'invalid --timeout "soon"'),
    (["--orchestrator", "lws", "--values", "kai=x.yaml"], "kai is not installed by this plan"),
])
def test_bad_input_is_one_line_exit_2(args, message):
    proc = run_cli("install", *args, "--dry-run", input="")
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_unreadable_inputs_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n")
    for args, message in ((["--values", str(tmp_path / "none.yaml")], "no such file"),
                          (["--values", str(bad)], "invalid YAML"),
                          (["--chart-source", str(tmp_path / "nope")], "not a directory"),
                          (["--helm", str(tmp_path / "helm")], "helm not found at")):
        proc = run_cli("install", "--orchestrator", "grove", "--dry-run", *args, input="")
        assert proc.returncode == 2 and message in proc.stderr, (args, proc.stderr)


def test_non_interactive_without_yes_refuses_before_touching_anything():
    proc = run_cli("install", "--orchestrator", "lws", "--kubeconfig", "/nonexistent", input="")
    assert proc.returncode == 2
    assert proc.stderr == ("error: refusing to change the cluster without confirmation: pass --yes "
                           "(or --dry-run to only see the plan)\n")


def test_the_lws_facts_are_compatibility_json_and_upstreams():
    """One source: data/compatibility.json. Its DisaggregatedSet fact is LWS's own history (kubernetes-sigs/lws:
    api/disaggregatedset/v1 first in v0.9.0 f056f611, not in v0.8.0 fc19b9ae); its minimum the Dynamo docs'
    (ai-dynamo/dynamo@2a6da14c docs/fern/pages/kubernetes/installation/install-dynamo.md: LWS >= v0.7.0).
    install, doctor's check and the catalogue name the same versions."""
    from kubectl_dynamo.checks import cluster
    from kubectl_dynamo.findings.catalogue import entry
    from kubectl_dynamo.model import compat

    lws = compat.facts()["lws"]
    assert (lws["minimum"], lws["disaggregatedSet"]) == ("v0.7.0", "v0.9.0")
    assert (ins.LWS_MINIMUM, ins.LWS_DISAGGREGATED_SET) == ("0.7.0", "0.9.0")
    assert (cluster.LWS_MINIMUM, cluster.LWS_DISAGGREGATED_SET) == ("v0.7.0", "v0.9.0")
    e = entry("lws-without-disaggregatedset")
    assert "from v0.9.0" in e.why and "from v0.9.0" in e.fix
