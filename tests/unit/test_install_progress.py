"""``install`` while helm waits and when it gives up: the release's workloads by Helm's rules
(model/release.py), what blocks them with doctor's causes (checks/release.py), the progress lines
(commands/install/progress.py) and the failure report.

The blocked states are real: tests/data/recorded/install/<scenario>/ holds what the real kube-apiserver,
controller manager and scheduler (v1.33.13) made of a real ``helm upgrade --install --wait`` of the Grove
stand-in chart into a namespace with one fault (scripts/record-install-states; PROVENANCE.md there). Every
message asserted below is read from those recordings, never typed here.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from pathlib import Path
from typing import List

import pytest

from kubectl_dynamo.cluster.client import Target
from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.commands.install import execute
from kubectl_dynamo.commands.install import plan as ins
from kubectl_dynamo.commands.install.progress import HEARTBEAT_S, MIN_GAP_S, Progress, diagnose, read
from kubectl_dynamo.model.release import assess, of_release, selects, summary

RECORDED = Path(__file__).resolve().parents[1] / "data" / "recorded"
INSTALL = RECORDED / "install"
SCENARIOS = sorted(p.name for p in INSTALL.iterdir() if (p / "manifest.json").is_file())
# scenario -> the class of cause doctor's classifiers (checks/causes.py) must find in what the components said
EXPECTED = {"quota": "quota", "pod-security": "pod-security", "webhook-down": "webhook-down", "taint": "taint"}
ANSI = re.compile(r"\x1b\[")


def recorded(scenario: str) -> RecordedCluster:
    return RecordedCluster(str(INSTALL / scenario))


def source(scenario: str) -> dict:
    return json.loads((INSTALL / scenario / "manifest.json").read_text())["source"]


def listed(cluster, namespace: str) -> dict:
    return {k: items for k, (items, _) in read(cluster, namespace)[1].items()}


def file_items(scenario: str, group: str, resource: str) -> List[dict]:
    path = INSTALL / scenario / "resources" / (group or "core") / "v1" / f"{resource}.json"
    return json.loads(path.read_text())["items"] if path.exists() else []


def test_every_scenario_is_recorded_and_helm_gave_up():
    assert set(SCENARIOS) == set(EXPECTED)
    for s in SCENARIOS:
        helm = source(s)["helm"]
        assert helm["exit"] == 1 and "context deadline exceeded" in helm["output"], s


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_the_blocking_workload_and_its_cause(scenario):
    cluster, ns = recorded(scenario), source(scenario)["namespace"]
    items, blocked = diagnose(listed(cluster, ns), "grove", ns, lambda: cluster.list("/api/v1/nodes"))
    assert [(w.label(), w.ready, w.desired, w.done) for w in items] == [("deployment/grove-operator", 0, 1, False)]
    assert len(blocked) == 1
    b = blocked[0].as_json()
    assert b["object"] == {"kind": "Deployment", "namespace": ns, "name": "grove-operator"}
    assert [c["kind"] for c in b["causes"]] == [EXPECTED[scenario]]
    # the evidence is the components' own sentence, whole, about the object they named
    said = {(e["involvedObject"]["kind"], e["involvedObject"]["name"], e["message"])
            for e in file_items(scenario, "", "events")}
    pods = {(p["metadata"]["name"], c.get("message")) for p in file_items(scenario, "", "pods")
            for c in p["status"].get("conditions") or [] if c["type"] == "PodScheduled"}
    for e in b["evidence"]:
        o = e["object"]
        assert (o["kind"], o["name"], e["message"]) in said or (o["name"], e["message"]) in pods, e


def test_the_cause_names_the_recorded_objects():
    quota = file_items("quota", "", "resourcequotas")[0]["metadata"]
    b = diagnose(listed(recorded("quota"), quota["namespace"]), "grove", quota["namespace"], list)[1][0]
    assert f"ResourceQuota {quota['namespace']}/{quota['name']}" in b.causes[0].what
    assert f"kubectl edit resourcequota -n {quota['namespace']} {quota['name']}" in b.causes[0].fix

    nodes = file_items("taint", "", "nodes")
    taints = {f"{t['key']}={t['value']}:{t['effect']}" for n in nodes for t in n["spec"].get("taints") or []}
    cluster, ns = recorded("taint"), source("taint")["namespace"]
    b = diagnose(listed(cluster, ns), "grove", ns, lambda: cluster.list("/api/v1/nodes"))[1][0]
    assert len(taints) == 1 and f"taint {taints.pop()}" in b.causes[0].what

    ns = source("pod-security")["namespace"]
    level = next(n for n in file_items("pod-security", "", "namespaces") if n["metadata"]["name"] == ns)[
        "metadata"]["labels"]["pod-security.kubernetes.io/enforce"]
    b = diagnose(listed(recorded("pod-security"), ns), "grove", ns, list)[1][0]
    assert f"enforces Pod Security level {level}" in b.causes[0].what and "runAsNonRoot" in b.causes[0].what


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_the_fix_speaks_of_the_chart_not_of_a_dgd_component(scenario):
    """doctor's fixes say "the component's podTemplate" and what the operator copies; a chart's pods come from
    its values."""
    cluster, ns = recorded(scenario), source(scenario)["namespace"]
    (b,) = diagnose(listed(cluster, ns), "grove", ns, lambda: cluster.list("/api/v1/nodes"))[1]
    for cause in b.causes:
        assert "component's" not in cause.fix and "the operator" not in cause.fix, cause.fix


def test_old_events_of_an_earlier_object_of_the_same_name_do_not_count():
    ns = source("quota")["namespace"]
    objects = listed(recorded("quota"), ns)
    for e in objects["Event"]:  # as if they were about an earlier ReplicaSet of that name
        e["involvedObject"]["uid"] = "0000-earlier"
    b = diagnose(objects, "grove", ns, list)[1][0]
    # the events no longer count; the Deployment's own ReplicaFailure condition (current) still says it
    assert [(e["object"]["kind"], e["reason"]) for e in b.evidence] == [("Deployment", "FailedCreate")]
    assert [c.kind for c in b.causes] == ["quota"]
    dep = objects["Deployment"][0]
    dep["status"]["conditions"] = [c for c in dep["status"]["conditions"] if c["type"] != "ReplicaFailure"]
    b = diagnose(objects, "grove", ns, list)[1][0]
    assert b.evidence == [] and b.causes == []


def test_release_membership_comes_from_helms_own_marks():
    dep = file_items("quota", "apps", "deployments")[0]
    ns = dep["metadata"]["namespace"]
    assert dep["metadata"]["annotations"]["meta.helm.sh/release-name"] == "grove"  # written by the real helm
    assert of_release(dep, "grove", ns)
    assert not of_release(dep, "grove", "elsewhere") and not of_release(dep, "kai-scheduler", ns)
    hook = {"metadata": {"name": "j", "namespace": ns, "labels": {"app.kubernetes.io/instance": "grove"}}}
    assert of_release(hook, "grove", ns) and not of_release(hook, "other", ns)


def test_helm_readiness_of_healthy_recorded_workloads():
    """Deployments the real controller manager brought up (kwok pods Ready) are what helm --wait accepts."""
    cluster = RecordedCluster(str(RECORDED / "lws-healthy"))
    deps = cluster.list("/apis/apps/v1/deployments")
    ready = [d for d in deps if (d.get("status") or {}).get("readyReplicas") == d["spec"]["replicas"]]
    assert ready and all(assess("Deployment", d).done for d in ready)
    sts = cluster.list("/apis/apps/v1/statefulsets")
    assert sts and all(assess("StatefulSet", s).done == (s["status"].get("readyReplicas", 0) == s["spec"]["replicas"]
                                                         and s["status"].get("updatedReplicas") == s["spec"]["replicas"])
                       for s in sts)


@pytest.mark.parametrize("kind, obj, done", [
    # helm@v3.18.6 pkg/kube/ready.go: a Deployment of 4 with maxUnavailable 25% (1) is ready with 3
    ("Deployment", {"metadata": {"generation": 2}, "spec": {"replicas": 4},
                    "status": {"observedGeneration": 2, "readyReplicas": 3}}, True),
    ("Deployment", {"metadata": {"generation": 2}, "spec": {"replicas": 4},
                    "status": {"observedGeneration": 1, "readyReplicas": 4}}, False),  # not observed
    ("Deployment", {"spec": {"replicas": 1, "strategy": {"type": "Recreate"}}, "status": {}}, False),
    ("StatefulSet", {"spec": {"replicas": 2}, "status": {"readyReplicas": 2, "updatedReplicas": 2}}, True),
    ("StatefulSet", {"spec": {"replicas": 2, "updateStrategy": {"type": "OnDelete"}}, "status": {}}, True),
    ("DaemonSet", {"spec": {}, "status": {"desiredNumberScheduled": 3, "updatedNumberScheduled": 3,
                                          "numberReady": 2}}, True),  # maxUnavailable 1
    ("DaemonSet", {"spec": {}, "status": {"desiredNumberScheduled": 3, "updatedNumberScheduled": 3,
                                          "numberReady": 1}}, False),
    ("Job", {"spec": {"completions": 1}, "status": {"succeeded": 1}}, True),
    ("Job", {"spec": {}, "status": {}}, False),
])
def test_helm_readiness_rules(kind, obj, done):
    assert assess(kind, obj).done is done


def test_selectors():
    sel = {"matchLabels": {"app": "x"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]},
                                                             {"key": "gone", "operator": "DoesNotExist"}]}
    assert selects(sel, {"app": "x", "tier": "a"})
    assert not selects(sel, {"app": "x", "tier": "b"}) and not selects(sel, {"app": "x", "tier": "a", "gone": "1"})
    assert not selects({}, {"app": "x"}) and not selects(None, {})


def test_summary_puts_what_is_waited_for_first():
    ok = assess("Deployment", {"metadata": {"name": "a"}, "spec": {"replicas": 1}, "status": {"readyReplicas": 1}})
    waiting = assess("StatefulSet", {"metadata": {"name": "b"}, "spec": {"replicas": 2}, "status": {"readyReplicas": 1}})
    assert summary([ok, waiting]) == "statefulset/b 1/2 ready, deployment/a 1/1 ready"
    assert summary([]) == "no workloads of the release yet"


# -- the progress lines ------------------------------------------------------------------------------

class Followed:
    """What Progress reads of a Watched: its state per kind; ``wait`` applies one pending change."""

    def __init__(self, objects: dict):
        self.state = {k: {str(i): o for i, o in enumerate(v)} for k, v in objects.items()}
        self.pending: List[str] = []

    def items(self, kind):
        return list(self.state[kind].values())

    def wait(self, tick=0.5):
        return self.pending.pop(0) if self.pending else None

    def close(self):
        pass


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_progress_lines_on_change_at_a_bounded_rate_and_a_heartbeat():
    ns = source("quota")["namespace"]
    objects = listed(recorded("quota"), ns)
    lines: List[str] = []
    clock = Clock()
    p = Progress(lambda: None, "grove", ns, lines.append, clock, 300.0)
    p.watched = Followed(objects)  # type: ignore[assignment]
    assert p.tick(0.25) and len(lines) == 1  # the first state at once
    first = lines[0]
    assert first.startswith("    waiting (0s of 300s) for release grove: deployment/grove-operator 0/1 ready")
    assert "\n      blocked: deployment/grove-operator: ResourceQuota " + ns + "/" in first
    # a change within the second: no line yet; once the second is over: one line, when the state differs
    dep = next(iter(p.watched.state["Deployment"].values()))
    dep["status"]["readyReplicas"] = 1
    dep["status"]["observedGeneration"] = dep["metadata"]["generation"]
    p.watched.pending.append("Deployment")
    clock.t += MIN_GAP_S / 2
    p.tick(0.25)
    assert len(lines) == 1
    clock.t += MIN_GAP_S
    p.tick(0.25)
    assert len(lines) == 2 and "deployment/grove-operator 1/1 ready" in lines[1] and "blocked" not in lines[1]
    clock.t += HEARTBEAT_S - 1
    p.tick(0.25)
    assert len(lines) == 2  # nothing new, no heartbeat yet
    clock.t += 1
    p.tick(0.25)
    assert len(lines) == 3 and lines[2].startswith(f"    waiting ({HEARTBEAT_S + MIN_GAP_S * 1.5:.0f}s of 300s)")
    assert not any(ANSI.search(line) for line in lines)


def test_progress_without_a_watch_says_so_once_and_lets_helm_run():
    lines: List[str] = []

    def refused():
        from kubectl_dynamo.errors import Forbidden

        raise Forbidden('deployments.apps is forbidden: User "x" cannot list resource "deployments"')

    p = Progress(refused, "grove", "ns", lines.append, Clock(), None)
    p.start()
    assert p.tick(0.25) is False and lines == [
        '    (no progress for this step: deployments.apps is forbidden: User "x" cannot list resource "deployments")']


# -- helm's output and the ticks, then the failure report --------------------------------------------

FAKE_HELM = """import os, sys, time
print("Release \\"grove\\" does not exist. Installing it now.", flush=True)
deadline = time.monotonic() + 20  # until the test's tick has run (it creates the file)
while not os.path.exists(sys.argv[-1]) and time.monotonic() < deadline:
    time.sleep(0.01)
print("Error: context deadline exceeded", flush=True)
sys.exit(1)
"""


@pytest.fixture
def fake_helm(tmp_path):
    script = tmp_path / "helm.py"
    script.write_text(FAKE_HELM)
    helm = tmp_path / "helm"
    helm.write_text(f"#!/bin/sh\nexec {sys.executable} {script} \"$@\"\n")
    helm.chmod(0o755)
    return str(helm), tmp_path / "ticked"


def test_run_helm_echoes_every_line_and_ticks_while_helm_is_quiet(fake_helm):
    helm, flag = fake_helm
    echoed: List[str] = []
    ticks: List[float] = []

    def tick(wait):
        ticks.append(wait)
        flag.touch()
        return True

    code, tail = ins.run_helm(helm, ["upgrade", str(flag)], echoed.append, tick=tick)
    assert code == 1 and ticks
    assert echoed == tail == ['Release "grove" does not exist. Installing it now.', "Error: context deadline exceeded"]


class QuietStream:
    """A watch on which nothing happens until it is closed (the recording does not change)."""

    def __init__(self):
        self.closed, self.error, self._done = False, None, threading.Event()

    def batches(self, max_line=0):
        self._done.wait(30)
        return iter(())

    def close(self):
        self.closed = True
        self._done.set()


class Watchable(RecordedCluster):
    def stream(self, path, params=None, *, read_timeout=None):
        return QuietStream()


def test_a_failed_step_names_the_blocking_object_the_cause_and_the_fix_then_helms_tail(fake_helm):
    helm, flag = fake_helm
    ns = source("webhook-down")["namespace"]
    cluster = Watchable(str(INSTALL / "webhook-down"))
    req = ins.Request("grove", separately=True, timeout="20s")
    plan = ins.build_plan(req)
    step = plan.to_run[0]
    step.release = ("grove", ns)
    step.argv = [*step.argv, str(flag)]  # the fake helm waits for this file: a tick creates it
    plan.steps = [step]
    out: List[str] = []
    err: List[str] = []

    def err_line(text):
        err.append(text)
        flag.touch()

    code = execute(plan, helm, lambda: cluster, Target(), out.append, err_line, Clock())
    assert code == 1 and step.status == "failed"
    [blocked] = step.blocking
    assert blocked["object"] == {"kind": "Deployment", "namespace": ns, "name": "grove-operator"}
    assert [c["kind"] for c in blocked["causes"]] == ["webhook-down"]
    report = err[-1].splitlines()
    assert report[0].startswith("error: step [1/1] failed (exit 1): ")
    assert report[1] == f"blocked: deployment {ns}/grove-operator is not ready (0/1 ready)"
    assert report[2].startswith("    cause: admission webhook pods.kd-install.test at https://127.0.0.1:9/")
    assert report[3].startswith("    fix:   bring back the server at https://127.0.0.1:9/validate-pods")
    event = next(e for e in file_items("webhook-down", "", "events") if e["reason"] == "FailedCreate")
    assert f"    seen:  ReplicaSet {event['involvedObject']['name']} FailedCreate: {event['message']}" in report
    assert report.index("helm said:") > 3 and "    Error: context deadline exceeded" in report
    progress = [line for line in err[:-1] if line.startswith("    waiting")]
    assert progress and "deployment/grove-operator 0/1 ready" in progress[0] and "webhook pods.kd-install.test" in progress[0]
    assert out[0].startswith("[1/1] ") and "    Error: context deadline exceeded" in out  # helm's own lines


# -- no Python repr in anything install prints ---------------------------------------------------------

REPR = re.compile(r"\[\s*'|\{\s*'|\(\s*'|\bNone\b|\bTrue\b|\bFalse\b")


def test_install_prints_no_python_repr(fake_helm):
    from kubectl_dynamo.commands.install import plan_json, preflight
    from kubectl_dynamo.output.tables import format_blocking, format_plan, format_preflight, format_result

    texts = []
    for state in ("grove-healthy", "lws-healthy", "grove-queue-missing"):
        from kubectl_dynamo.commands.detect import detect_report

        report = dict(detect_report(RecordedCluster(str(RECORDED / state))))
        for orchestrator in ("grove", "lws"):
            req = ins.Request(orchestrator)
            plan = ins.build_plan(req, ins.State(report=report))
            texts.append(format_plan(plan, True))
            texts.append(format_result(req, ins.outcome(req, report)))
    # values of every type in a release against what the plan wants, and an unknown selection
    values = {"global": {"grove": {"install": False}, "kai-scheduler": None},
              "kai-scheduler": {"scheduler": {"args": {"default-staleness-grace-period": 5}}}}
    rel = {"name": "dynamo-platform", "namespace": "dynamo-system", "chart": "dynamo-platform-1.6.0",
           "status": "deployed"}
    plan = ins.build_plan(ins.Request("grove"), ins.State(report={}, releases=[rel],
                                                           release_values={("dynamo-platform", "dynamo-system"): values}))
    texts.append(format_plan(plan))
    texts.append(format_result(ins.Request("grove"), {"apis": {}, "controllers": {}, "queues": {"kai": [None]},
                                                      "selection": {}, "ok": False}))
    doc = {"preflight": {"helm": {"path": None, "version": None}, "checks": [], "detected": {}}}
    texts.append(format_preflight(doc))
    # a preflight whose `helm list` fails (the issue: "its preflight prints a Python list")
    failing = Path(fake_helm[0]).parent / "failing-helm"
    failing.write_text("#!/bin/sh\necho 'Error: Kubernetes cluster unreachable: no route' >&2\nexit 1\n")
    failing.chmod(0o755)
    doc = {"dryRun": True, "preflight": {"helm": {"path": str(failing), "version": "v3.18.6"}}}
    _, _, checks = preflight(ins.Request("lws"), str(failing), lambda: RecordedCluster(str(RECORDED / "lws-healthy")),
                             doc)
    doc["preflight"]["checks"] = checks
    texts.append(format_preflight(doc))
    assert "FAIL  helm releases: `helm list -A` failed (Error: Kubernetes cluster unreachable: no route);" in texts[-1]
    # no helm here (a dry run needs none): nothing is said to FAIL about the cluster's releases
    doc = {"dryRun": True, "preflight": {"helm": {"path": None, "version": None}}}
    _, _, checks = preflight(ins.Request("lws"), None, lambda: RecordedCluster(str(RECORDED / "lws-healthy")), doc)
    doc["preflight"]["checks"] = checks
    assert "helm releases" not in {c["check"] for c in checks} and all(c["ok"] for c in checks), checks
    assert "FAIL" not in format_preflight(doc) and "releases are not read" in format_preflight(doc)
    for s in EXPECTED:
        ns = source(s)["namespace"]
        cluster = recorded(s)
        texts += format_blocking([b.as_json() for b in diagnose(listed(cluster, ns), "grove", ns,
                                                                 lambda: cluster.list("/api/v1/nodes"))[1]])
    texts.append(json.dumps(plan_json(plan)))  # the document itself may hold null: only the text is judged
    text = "\n".join(texts[:-1])
    assert "global.grove.install: false -> true" in text and "default-staleness-grace-period: 5 -> -1s" in text
    assert not REPR.search(text), REPR.search(text)
