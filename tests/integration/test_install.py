"""``install`` with the real helm against the full sandbox (KCM, scheduler, kwok: ``--wait`` works).

``--orchestrator lws`` installs the real LWS and Volcano charts (tests/integration/charts.py
``real_charts``), and the real controllers built from the same modules then run what those charts
declared. Grove, KAI and the Dynamo platform have no chart reachable here: test charts shaped like
the real ones stand in. All go through ``--chart-source``, the code path of the published charts.
Every test starts from and leaves a cluster without the orchestrators' releases and CRDs, so
test_detect.py and these tests can run in any order on the shared sandbox.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import CONTROLLERS, REPO, run_cli
from tests.integration import charts
from tests.integration import world as w
from tests.integration.real import GROUP_NAME_ANNOTATION, NAME_LABEL, items, lws, until

pytestmark = pytest.mark.fullcluster

RELEASES = {("dynamo-platform", "kd-install-platform"), ("dynamo-platform", "kd-install-separate"),
            ("grove", "grove-system"), ("kai-scheduler", "kai-scheduler"), ("volcano", "volcano-system"),
            ("lws", "lws-system")}
# Objects test_detect.py's World may have left in the namespaces the plan installs into.
WORLD_LEFTOVERS = [("grove-system", "grove-operator"), ("kai-scheduler", "kai-operator"),
                   ("kai-scheduler", "kai-scheduler-default"), ("lws-system", "lws-controller-manager"),
                   ("volcano-system", "volcano-scheduler"), ("volcano-system", "volcano-controllers"),
                   ("volcano-system", "volcano-admission")]


@pytest.fixture(scope="module")
def helm():
    path = charts.helm_binary()
    assert os.access(path, os.X_OK), f"helm is not built at {path}: run scripts/sandbox build"
    return path


@pytest.fixture(scope="module")
def chart_dir(tmp_path_factory, helm):
    return charts.build_all(helm, tmp_path_factory.mktemp("charts") / "out")


@pytest.fixture(scope="module")
def real_chart_dir(tmp_path_factory, helm):
    return charts.real_charts(helm, tmp_path_factory.mktemp("real-charts") / "out")


LWS_VERSION, VOLCANO_VERSION = charts.pinned("LWS_VERSION"), charts.pinned("VOLCANO_VERSION")
# The versions of the real charts (scripts/versions.env), not install's defaults: LWS 0.10.0 is not on the module proxy.
REAL = ("--orchestrator", "lws", "--lws-version", LWS_VERSION.lstrip("v"),
        "--volcano-version", VOLCANO_VERSION.lstrip("v"))


@pytest.fixture(scope="module")
def helm_env(tmp_path_factory):
    home = tmp_path_factory.mktemp("helm-home")  # never the user's helm configuration
    return {"HELM_CONFIG_HOME": str(home / "config"), "HELM_CACHE_HOME": str(home / "cache"),
            "HELM_DATA_HOME": str(home / "data")}


@pytest.fixture
def clean(sandbox, helm, helm_env):
    reset(sandbox, helm, helm_env)
    yield
    reset(sandbox, helm, helm_env)


def helm_json(sandbox, helm, helm_env, *args):
    proc = subprocess.run([helm, *args, "--kubeconfig", str(sandbox.kubeconfig), "-o", "json"],
                          capture_output=True, text=True, env={**os.environ, **helm_env}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout or "null")


def releases(sandbox, helm, helm_env):
    return {(r["name"], r["namespace"]): r for r in helm_json(sandbox, helm, helm_env, "list", "-A", "-a")}


def reset(sandbox, helm, helm_env):
    """No releases of ours, no orchestrator CRDs (Helm keeps those of crds/), no World leftovers."""
    for name, ns in releases(sandbox, helm, helm_env):
        if (name, ns) in RELEASES:
            # No --wait: helm would wait on CRDs it deletes (Volcano's are templates), which can stall
            # (see world.delete_crds); the waiting is done below, with the nudge.
            subprocess.run([helm, "uninstall", name, "-n", ns, "--kubeconfig", str(sandbox.kubeconfig)],
                           capture_output=True, env={**os.environ, **helm_env}, timeout=150)
    for ns, name in WORLD_LEFTOVERS:
        sandbox.kubectl("delete", "deployment", name, "-n", ns, "--ignore-not-found", "--wait=true")
    w.delete_crds(sandbox, [n for p in w.PROJECTS for n in w.crd_names(p)])
    w.World(sandbox).wait_discovery(set(), timeout=60)


def install(sandbox, helm, helm_env, *args, timeout=240):
    return run_cli("install", "--kubeconfig", str(sandbox.kubeconfig), "--helm", helm, *args,
                   env=helm_env, input="", timeout=timeout)


def report_of(stderr: str) -> str:
    """The failure report at the end of stderr; before it only progress lines (indented) may come."""
    start = stderr.find("error: ")
    assert start >= 0, stderr
    before = [line for line in stderr[:start].splitlines() if line]
    assert all(line.startswith("    ") for line in before), before
    return stderr[start:]


def served(sandbox):
    return {g["name"] for g in json.loads(sandbox.kubectl("get", "--raw", "/apis").stdout)["groups"]}


def assert_nothing_changes(sandbox, helm, helm_env, before):
    assert {k: v["revision"] for k, v in releases(sandbox, helm, helm_env).items()} == \
           {k: v["revision"] for k, v in before.items()}


def test_grove_with_the_platform_chart(sandbox, helm, helm_env, chart_dir, clean):
    args = ("--orchestrator", "grove", "--chart-source", str(chart_dir), "-n", "kd-install-platform")
    dry = install(sandbox, helm, helm_env, *args, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "[1/2] " + helm + " upgrade --install dynamo-platform " + str(chart_dir / "dynamo-platform-1.6.0.tgz") \
        in dry.stdout
    assert releases(sandbox, helm, helm_env) == {} and "grove.io" not in served(sandbox)  # changed nothing

    proc = install(sandbox, helm, helm_env, *args, "--yes", "-o", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert [(s["component"], s["status"]) for s in doc["steps"]] == [("platform", "done"), ("queues", "done")]
    assert doc["result"]["ok"] and doc["result"]["selection"]["orchestrator"] == "grove"
    assert doc["result"]["controllers"]["grove"] == {"healthy": True, "version": "v0.1.0-alpha.15"}
    assert doc["result"]["controllers"]["kai"] == {"healthy": True, "version": "v0.17.0"}
    assert {"dynamo", "dynamo-default", "default-queue"} <= set(doc["result"]["queues"]["kai"])
    assert "[1/2] " in proc.stderr and "STATUS: deployed" in proc.stderr  # progress streamed aside

    rel = releases(sandbox, helm, helm_env)[("dynamo-platform", "kd-install-platform")]
    assert (rel["chart"], rel["status"]) == ("dynamo-platform-1.6.0", "deployed")
    # The --set-string reached the KAI subchart; the queues came from the chart's hooks.
    sched = json.loads(sandbox.kubectl("get", "deploy", "kai-scheduler-default", "-n", "kd-install-platform",
                                       "-o", "json").stdout)
    assert "--default-staleness-grace-period=-1s" in sched["spec"]["template"]["spec"]["containers"][0]["args"]
    queue = json.loads(sandbox.kubectl("get", "queues.scheduling.run.ai", "dynamo", "-o", "json").stdout)
    assert queue["spec"]["parentQueue"] == "dynamo-default"

    before = releases(sandbox, helm, helm_env)
    again = install(sandbox, helm, helm_env, *args, "--yes")
    assert again.returncode == 0, again.stderr
    assert "skip Dynamo platform: already installed at 1.6.0 (release dynamo-platform in kd-install-platform)" \
        in again.stdout
    assert "Nothing to do" in again.stdout and "ok: a new multinode DGD uses grove" in again.stdout
    assert_nothing_changes(sandbox, helm, helm_env, before)

    # The same cluster asked for --separately: explained, not overwritten.
    sep = install(sandbox, helm, helm_env, "--orchestrator", "grove", "--separately", "--chart-source",
                  str(chart_dir), "-n", "kd-install-platform", "--yes")
    assert sep.returncode == 1
    assert "blocked: Grove is installed inside release dynamo-platform in kd-install-platform" in sep.stdout
    assert_nothing_changes(sandbox, helm, helm_env, before)


def test_grove_and_kai_separately(sandbox, helm, helm_env, chart_dir, clean):
    args = ("--orchestrator", "grove", "--separately", "--chart-source", str(chart_dir), "-n", "kd-install-separate")
    proc = install(sandbox, helm, helm_env, *args, "--yes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert out.index("[1/4] " + helm + " upgrade -i grove ") < out.index("[2/4] " + helm + " upgrade -i kai-scheduler") \
        < out.index("[3/4] create KAI queues") < out.index("[4/4] " + helm + " upgrade --install dynamo-platform")
    assert "queue dynamo-default created" in out and "queue dynamo created (parent dynamo-default)" in out
    rels = releases(sandbox, helm, helm_env)
    assert {k: v["chart"] for k, v in rels.items()} == {
        ("grove", "grove-system"): "grove-charts-v0.1.0-alpha.15",
        ("kai-scheduler", "kai-scheduler"): "kai-scheduler-v0.17.0",
        ("dynamo-platform", "kd-install-separate"): "dynamo-platform-1.6.0"}
    queue = json.loads(sandbox.kubectl("get", "queues.scheduling.run.ai", "dynamo", "-o", "json").stdout)
    assert queue["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "kubectl-dynamo"
    config = sandbox.kubectl("get", "configmap", "dynamo-platform-dynamo-operator-config", "-n",
                             "kd-install-separate", "-o", "jsonpath={.data.config\\.yaml}").stdout
    assert "grove:\n    enabled: true" in config and "kaiScheduler:\n    enabled: true" in config
    assert "ok: a new multinode DGD uses grove" in out

    again = install(sandbox, helm, helm_env, *args, "--yes")
    assert again.returncode == 0 and "Nothing to do" in again.stdout, again.stdout + again.stderr
    assert_nothing_changes(sandbox, helm, helm_env, rels)


@pytest.fixture
def volcano_admission(sandbox, clean):
    """The real Volcano admission, serving the chart's webhooks as soon as the Volcano chart declared
    them. In a cluster its Deployment serves them before the LWS chart creates a pod; here a
    Deployment runs nothing, and the chart's pods/mutate webhook (failurePolicy Fail, every namespace
    but its own and kube-system) would refuse the LWS controller's pod."""
    proc = sandbox.start_controllers_in_background("volcano-admission", env={"SANDBOX_INSTALL_APIS": "0"})
    try:
        yield proc
    finally:
        if proc.poll() is None:  # still waiting for a chart that never came
            proc.terminate()
            proc.wait(timeout=30)
        sandbox.stop_controllers("volcano-admission")


def served_by(proc, timeout=120) -> None:
    """The background start succeeded (its stderr says why not)."""
    _, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, f"scripts/sandbox start volcano-admission failed:\n{err[-3000:]}"


def test_lws_and_volcano_with_the_real_charts(sandbox, helm, helm_env, real_chart_dir, volcano_admission, tmp_path):
    args = (*REAL, "--chart-source", str(real_chart_dir))
    dry = install(sandbox, helm, helm_env, *args, "--dry-run", "-o", "json")
    assert dry.returncode == 0, dry.stderr
    plan = json.loads(dry.stdout)
    assert [(s["number"], s["component"], s["action"]) for s in plan["steps"]] == [(1, "volcano", "install"),
                                                                                  (2, "lws", "install")]
    assert plan["result"] is None and releases(sandbox, helm, helm_env) == {}

    proc = install(sandbox, helm, helm_env, *args, "--yes", timeout=400)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The seed's commands (tests/data/seeds/multinode-orchestration.txt), `helm install` as
    # `upgrade --install`, the local archive in place of the reference and its --version.
    kube = f"--kubeconfig {sandbox.kubeconfig}"
    assert (f"[1/2] {helm} upgrade --install volcano {real_chart_dir}/volcano-{VOLCANO_VERSION.lstrip('v')}.tgz "
            f"-n volcano-system --create-namespace --wait --timeout 300s {kube}") in proc.stdout
    assert (f"[2/2] {helm} upgrade --install lws {real_chart_dir}/lws-{LWS_VERSION}.tgz --namespace lws-system "
            f"--create-namespace --set gangSchedulingManagement.schedulerProvider=volcano --wait --timeout 300s "
            f"{kube}") in proc.stdout
    rels = releases(sandbox, helm, helm_env)
    assert {k: (v["chart"], v["status"]) for k, v in rels.items()} == {
        ("volcano", "volcano-system"): (f"volcano-{VOLCANO_VERSION.lstrip('v')}", "deployed"),
        ("lws", "lws-system"): (f"lws-{LWS_VERSION}", "deployed")}
    assert "leaderworkerset.x-k8s.io" in served(sandbox) and "scheduling.volcano.sh" in served(sandbox)
    # The --set reached the real chart's ConfigMap (charts/lws/templates/manager/configmap.yaml).
    config = sandbox.kubectl("get", "configmap", "lws-manager-config", "-n", "lws-system",
                             "-o", "jsonpath={.data.controller_manager_config\\.yaml}").stdout
    assert "gangSchedulingManagement:\n  schedulerProvider: volcano" in config
    # Volcano's CRDs are templates of its release, LWS's are in crds/ (Helm never owns those).
    crd = json.loads(sandbox.kubectl("get", "crd", "queues.scheduling.volcano.sh", "-o", "json").stdout)
    assert crd["metadata"]["annotations"]["meta.helm.sh/release-name"] == "volcano"
    crd = json.loads(sandbox.kubectl("get", "crd", "leaderworkersets.leaderworkerset.x-k8s.io", "-o", "json").stdout)
    assert "meta.helm.sh/release-name" not in crd["metadata"].get("annotations", {})

    # Now the real controllers, out of cluster, serve what the charts declared: the chart's LWS
    # configuration and its webhook configurations (rewritten to loopback), Volcano's admission
    # webhooks, CRDs and all; nothing is applied besides.
    served_by(volcano_admission)
    lws_config = tmp_path / "lws-config.yaml"
    lws_config.write_text(config)
    others = tuple(c for c in CONTROLLERS if c != "volcano-admission")
    sandbox.start_controllers(*others, env={"SANDBOX_INSTALL_APIS": "0", "SANDBOX_LWS_CONFIG": str(lws_config)})
    try:
        hook = json.loads(sandbox.kubectl("get", "mutatingwebhookconfiguration", "lws-mutating-webhook-configuration",
                                          "-o", "json").stdout)
        assert hook["metadata"]["annotations"]["meta.helm.sh/release-name"] == "lws"  # the chart's own object
        assert hook["webhooks"][1]["clientConfig"]["url"].endswith("/mutate--v1-pod")
        ns = "kd-install-real"
        sandbox.kubectl("create", "namespace", ns)
        queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": ns},
                 "spec": {"weight": 1}}
        sandbox.kubectl("apply", "-f", "-", input=json.dumps(queue))
        sandbox.kubectl("annotate", "namespace", ns, f"scheduling.volcano.sh/queue-name={ns}")
        # No schedulerName, as the Dynamo operator renders LWS templates: with the chart's admission on,
        # schedulerName volcano would be refused before LWS creates the PodGroup (test_real_controllers.py).
        sandbox.kubectl("apply", "-f", "-", input=json.dumps(lws("srv", ns, replicas=1, size=2)))
        pods = until("both pods of the group Running", lambda: (lambda p: p if len(p) == 2 and all(
            x["status"].get("phase") == "Running" for x in p.values()) else None)(
            {p["metadata"]["name"]: p for p in items(sandbox, "pods", "-n", ns, "-l", f"{NAME_LABEL}=srv")}))
        # The chart's provider setting made a PodGroup (lws volcano_provider.go) and its pod webhook put
        # the group on each pod; Volcano's podgroups/mutate webhook of its chart gave it the namespace's
        # queue (volcano pkg/webhooks/admission/podgroups/mutate/mutate_podgroup.go).
        group = pods["srv-0"]["metadata"]["annotations"][GROUP_NAME_ANNOTATION]
        assert pods["srv-0-1"]["metadata"]["annotations"][GROUP_NAME_ANNOTATION] == group
        pg = json.loads(sandbox.kubectl("get", "podgroups.scheduling.volcano.sh", group, "-n", ns, "-o", "json").stdout)
        assert (pg["spec"]["minMember"], pg["spec"]["queue"]) == (2, ns)

        # Re-run: nothing to do; the queues are those the real Volcano created when it started.
        before = releases(sandbox, helm, helm_env)
        again = install(sandbox, helm, helm_env, *args, "--yes")
        assert again.returncode == 0 and "Nothing to do" in again.stdout, again.stdout + again.stderr
        assert f"volcano queues:  default, {ns}" in again.stdout, again.stdout  # default: the real scheduler's
        other = install(sandbox, helm, helm_env, *args, "--lws-version", "0.10.0", "--yes")
        assert other.returncode == 1
        assert (f"blocked: LeaderWorkerSet: release lws in lws-system differs from the plan (version {LWS_VERSION} "
                f"-> 0.10.0); pass --upgrade to change it, or --lws-version {LWS_VERSION} to keep it") in other.stdout
        assert_nothing_changes(sandbox, helm, helm_env, before)
    finally:
        sandbox.stop_controllers(*others)
        sandbox.kubectl("delete", "namespace", "kd-install-real", "--ignore-not-found", "--wait=false", check=False)
        sandbox.kubectl("delete", "queues.scheduling.volcano.sh", "kd-install-real", "--ignore-not-found",
                        "--wait=false", check=False)


def test_failing_step_stops_the_plan(sandbox, helm, helm_env, tmp_path, clean):
    broken = charts.real_charts(helm, tmp_path / "out", template_error=True)
    proc = install(sandbox, helm, helm_env, *REAL, "--chart-source", str(broken), "--yes")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    err = report_of(proc.stderr)
    assert err.startswith(f"error: step [2/2] failed (exit 1): {helm} upgrade --install lws "), err
    assert 'no template "lws.no-such-template"' in err
    assert "done:     [1/2] install Volcano (release volcano in volcano-system)" in err
    assert "not done: [2/2] install LeaderWorkerSet (release lws in lws-system) (may be partly applied)" in err
    assert f"    {helm} uninstall lws -n lws-system --kubeconfig {sandbox.kubeconfig}" in err
    assert f"    {helm} uninstall volcano -n volcano-system --kubeconfig {sandbox.kubeconfig}" in err
    assert "Traceback" not in err and "Result:" not in proc.stdout


@pytest.fixture
def never_ready(tmp_path):
    """LWS values no node matches (the real chart's nodeSelector): --wait runs into its timeout."""
    path = tmp_path / "never-ready.yaml"
    path.write_text('nodeSelector:\n  kubectl-dynamo.test/never: "true"\n')
    return f"lws={path}"


def test_deployment_never_ready_times_out(sandbox, helm, helm_env, real_chart_dir, never_ready, volcano_admission):
    args = (*REAL, "--chart-source", str(real_chart_dir), "--values", never_ready)
    t0 = time.monotonic()
    # 30s: long enough for Volcano's kwok pods on a loaded 2-core machine, short for a never-ready one.
    proc = install(sandbox, helm, helm_env, *args, "--yes", "--timeout", "30s")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    err = report_of(proc.stderr)
    assert err.startswith("error: step [2/2] failed (exit 1)"), proc.stderr
    # what held it, in doctor's words: the scheduler's sentence read against the real nodes
    assert "\nblocked: deployment lws-system/lws-controller-manager is not ready (0/1 ready)\n" in err, err
    assert "    cause: no node matches the pods' node selector/affinity: kubectl-dynamo.test/never=true (no node " \
           "has label kubectl-dynamo.test/never)" in err, err
    assert err.index("    cause: ") < err.index("helm said:") < err.index("context deadline exceeded")
    assert releases(sandbox, helm, helm_env)[("lws", "lws-system")]["status"] == "failed"
    assert time.monotonic() - t0 < 90
    # Re-running repairs the failed release (here it fails again, at the same step: volcano is skipped).
    again = install(sandbox, helm, helm_env, *args, "--yes", "--timeout", "5s", "--dry-run")
    assert "[1/1] " in again.stdout and f"repair: release lws in lws-system is failed at {LWS_VERSION}" in again.stdout
    # Never ready for the reason given: its pod exists (admitted) and no node matches it.
    served_by(volcano_admission)
    pod = items(sandbox, "pods", "-n", "lws-system")
    assert [p["spec"]["nodeSelector"] for p in pod] == [{"kubectl-dynamo.test/never": "true"}]


def test_ctrl_c_leaves_a_clear_message(sandbox, helm, helm_env, real_chart_dir, never_ready, volcano_admission):
    proc = subprocess.Popen([sys.executable, "-m", "kubectl_dynamo", "install", *REAL,
                             "--chart-source", str(real_chart_dir), "--values", never_ready,
                             "--kubeconfig", str(sandbox.kubeconfig), "--helm", helm,
                             "--yes", "--timeout", "120s"], cwd=str(REPO), env={**os.environ, **helm_env},
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # A shell running us in the background (`cmd &`, e.g. a CI wrapper) ignores
                            # SIGINT and children inherit that; restore it as a terminal would have it.
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    started = False
    for line in proc.stdout:
        started = started or line.startswith("[2/2] ")  # the progress line (the plan's are indented)
        if started and "Installing it now" in line:
            break
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    err = report_of(err)
    assert err.startswith("error: step [2/2] interrupted (Ctrl-C): "), err
    assert "done:     [1/2] install Volcano" in err and "helm" in err and "uninstall lws -n lws-system" in err


def test_missing_permissions_are_listed_before_anything_changes(sandbox, helm, helm_env, real_chart_dir, clean):
    kubeconfig = sandbox.user("kd-install-nobody")
    proc = run_cli("install", *REAL, "--chart-source", str(real_chart_dir), "--helm", helm,
                   "--kubeconfig", str(kubeconfig), "--yes", env=helm_env, input="")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL  helm releases: `helm list -A` failed" in proc.stdout
    blocked = [line for line in proc.stdout.splitlines() if line.startswith("blocked: missing permissions")]
    assert blocked and "create customresourcedefinitions.apiextensions.k8s.io (cluster-wide)" in blocked[0]
    assert "create deployments.apps in lws-system" in blocked[0]
    assert releases(sandbox, helm, helm_env) == {}


def test_a_webhook_refusing_pods_is_named_when_helm_times_out(sandbox, helm, helm_env, chart_dir, clean):
    """The real API server refuses the chart's pods (a webhook whose server is down, failurePolicy Fail):
    progress names what is waited for while helm waits, and its failure names the Deployment, doctor's
    cause and fix, then helm's own words. Messages come from the real API server and controller manager."""
    ns = "grove-system"
    sandbox.kubectl("apply", "-f", "-", input=json.dumps(w.pod_webhook_down(ns)))
    try:
        t0 = time.monotonic()
        proc = install(sandbox, helm, helm_env, "--orchestrator", "grove", "--separately", "--chart-source",
                       str(chart_dir), "--yes", "--timeout", "15s", "-o", "json", timeout=120)
        took = time.monotonic() - t0
    finally:
        sandbox.kubectl("delete", "validatingwebhookconfiguration", "kd-install-deny-pods", "--ignore-not-found")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)  # progress never reaches -o json
    step = doc["steps"][0]
    assert (step["component"], step["status"]) == ("grove", "failed")
    [blocked] = step["blocking"]
    assert blocked["object"] == {"kind": "Deployment", "namespace": ns, "name": "grove-operator"}
    assert (blocked["ready"], blocked["desired"]) == (0, 1)
    assert [c["kind"] for c in blocked["causes"]] == ["webhook-down"]
    said = [e for e in blocked["evidence"] if e["reason"] == "FailedCreate"]
    assert said and said[0]["object"]["kind"] == "ReplicaSet"
    assert 'failed calling webhook "pods.kd-install.test"' in said[0]["message"]  # the API server's sentence

    err = proc.stderr
    waiting = [line for line in err.splitlines() if line.startswith("    waiting (")]
    assert waiting and "for release grove: deployment/grove-operator 0/1 ready" in waiting[0], err
    assert any("      blocked: deployment/grove-operator: admission webhook pods.kd-install.test" in line
               for line in err.splitlines()), err
    report = err[err.index("error: step [1/4] failed (exit 1)"):]
    assert f"\nblocked: deployment {ns}/grove-operator is not ready (0/1 ready)\n" in report
    assert "\n    cause: admission webhook pods.kd-install.test at https://127.0.0.1:9/validate-pods" in report
    assert "\n    fix:   bring back the server at https://127.0.0.1:9/validate-pods" in report
    assert report.index("    cause: ") < report.index("helm said:") < report.index("context deadline exceeded")
    assert "\x1b[" not in err and took < 60
