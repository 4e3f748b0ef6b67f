"""doctor on cluster states the REAL controllers created (tests/data/recorded/, see its PROVENANCE.md).

Each state was recorded by scripts/record-states from the real Dynamo operator with the real LWS +
Volcano (``lws-*``) or Grove + KAI (``grove-*``) controllers; nothing here was rendered by this
project's code. The tests run doctor's real code path — ``cluster.snapshot.take`` through
``RecordedCluster`` → ``doctor.build_views`` → ``diagnosis.diagnose`` — and assert:

- healthy states: no error/warning finding, and every group and rank recognised (expected ranks come
  from the DGD's own ``multinode.nodeCount``, not from doctor's label logic);
- each fault: the finding doctor gives today; what it misses is ``xfail(strict=True)`` with the code the
  issue #11 checks will add, so those checks flip them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List

import pytest
from click.testing import CliRunner

from kubectl_dynamo.checks import diagnosis
from kubectl_dynamo.cli import cli
from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.model import views as doctor
from kubectl_dynamo.model.snapshot import read_secret_keys, take
from tests.conftest import run_cli

RECORDED = Path(__file__).resolve().parent.parent / "data" / "recorded"
STATES = sorted(p.name for p in RECORDED.iterdir() if (p / "manifest.json").is_file())
BAD = ("error", "warning")


def run(state: str) -> dict:
    """doctor -A on one recorded state, as cli/doctor_command.run_doctor does it."""
    cluster = RecordedCluster(str(RECORDED / state))
    snap = take(cluster, None)
    views = doctor.build_views(snap)
    for ns, secret in sorted(doctor.needed_secrets(views)):
        read_secret_keys(cluster, snap, ns, secret)
    return diagnosis.diagnose(snap, views)


_CACHE: Dict[str, dict] = {}


def result(state: str) -> dict:
    if state not in _CACHE:
        _CACHE[state] = run(state)
    return _CACHE[state]


def codes(state: str, severities=BAD) -> List[str]:
    return sorted({f["code"] for f in result(state)["findings"] if f["severity"] in severities})


def findings(state: str, code: str) -> List[dict]:
    return [f for f in result(state)["findings"] if f["code"] == code]


def items(state: str, group: str, version: str, resource: str) -> List[dict]:
    path = RECORDED / state / "resources" / (group or "core") / version / f"{resource}.json"
    return json.loads(path.read_text())["items"] if path.exists() else []


def test_states_are_recorded_by_the_real_controllers():
    assert {"lws-healthy", "grove-healthy"} <= set(STATES), STATES
    for state in STATES:
        source = json.loads((RECORDED / state / "manifest.json").read_text())["source"]
        assert source["tool"] == "scripts/record-states" and state == f"{source['stack']}-{source['scenario']}"
        # lws-direct: no operator process ran; what it had rendered in lws-healthy was applied (PROVENANCE.md)
        operator = "dynamo-operator-rendering" if source["stack"] == "lws-direct" else "dynamo-operator"
        assert source["versions"][operator].endswith("2a6da14c83617f5412caba5777dbf0e2399e9c5f")


@pytest.mark.parametrize("state", STATES)
def test_state_holds_no_secret_value(state):
    for secret in items(state, "", "v1", "secrets"):
        assert set((secret.get("data") or {}).values()) <= {""}, secret["metadata"]["name"]
        assert "kubectl.kubernetes.io/last-applied-configuration" not in (secret["metadata"].get("annotations") or {})
    for kind in RECORDED.joinpath(state, "resources").rglob("*.json"):
        assert '"managedFields"' not in kind.read_text(), kind


# Kinds doctor reads since issue 21 (Kubernetes discovery), after most states were recorded: a state recorded
# before answers "not recorded" for them and doctor names them in ``skipped`` (never silent). Re-recording a
# state with scripts/record-states records them; the lws-discovery-* states hold them.
LATER_KINDS = {"serviceaccounts": ("", "serviceaccounts"), "roles": ("rbac.authorization.k8s.io", "roles"),
               "rolebindings": ("rbac.authorization.k8s.io", "rolebindings"),
               "dynamoworkermetadatas": ("nvidia.com", "dynamoworkermetadatas")}
# Kinds read only when needed (cluster/kinds.py ``need``) that joined the table later: a state that predates them
# answers "not recorded" only if it needs them. lws-statefulset-failedcreate and lws-controller-stopped (recorded
# with the real Dynamo operator, whose stack is not rebuilt here) hold no webhook configuration; the same faults
# with them: lws-direct-webhook-url-unreachable and lws-direct-controller-stopped (PROVENANCE.md).
LATER_NEEDED = {"validatingwebhookconfigurations": ("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
                "mutatingwebhookconfigurations": ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
                "storageclasses": ("storage.k8s.io", "storageclasses")}


def recorded_kinds(state: str) -> set:
    return {(r["group"], r["resource"]) for r in json.loads((RECORDED / state / "manifest.json").read_text())["resources"]}


@pytest.mark.parametrize("state", STATES)
def test_doctor_reads_only_recorded_kinds(state):
    # a kind doctor starts reading must join cluster/kinds.py (and the states be re-recorded), else the
    # replay answers "not recorded" and doctor skips that kind; only LATER_KINDS (and LATER_NEEDED) a state predates may be
    skipped = [s for s in result(state)["skipped"] if "not recorded" in s["reason"] or "forbidden" in s["reason"]]
    predates = {name for name, kind in LATER_KINDS.items() if kind not in recorded_kinds(state)}
    needed = {name for name, kind in LATER_NEEDED.items() if kind not in recorded_kinds(state)}
    assert [s for s in skipped if s["check"] not in predates | needed or "forbidden" in s["reason"]] == []
    assert predates <= {s["check"] for s in skipped} <= predates | needed  # each one it could not read, said


@pytest.mark.parametrize("state", [s for s in STATES if s.startswith("lws-discovery-")])
def test_states_recorded_since_hold_every_kind(state):
    assert all(kind in recorded_kinds(state) for kind in LATER_KINDS.values())


def multinode_expectations(state: str) -> Dict[tuple, int]:
    """(namespace, dgd, component) -> nodeCount, from the recorded DGDs' own specs."""
    out = {}
    for dgd in items(state, "nvidia.com", "v1beta1", "dynamographdeployments"):
        for comp in dgd["spec"].get("components") or []:
            n = (comp.get("multinode") or {}).get("nodeCount")
            if n and n > 1:
                out[(dgd["metadata"]["namespace"], dgd["metadata"]["name"], comp["name"])] = n
    return out


@pytest.mark.parametrize("state", ["lws-healthy", "grove-healthy"])
def test_healthy_state_every_group_and_rank_recognised(state):
    expected = multinode_expectations(state)
    assert expected, "the recording holds multinode DGDs"
    seen = {}
    for d in result(state)["deployments"]:
        for c in d["components"]:
            key = (d["namespace"], d["name"], c["name"])
            if key in expected:
                seen[key] = [(g["index"], g["podsReady"], g["ranks"]) for g in c["groups"]]
    # one group per replica (replicas 1 here), every rank 0..nodeCount-1 present once and Ready
    assert seen == {k: [(0, n, list(range(n)))] for k, n in expected.items()}


def test_real_schedulers_pack_a_group_onto_one_node_when_it_fits():
    # Not a fault: KAI (grove-healthy) and kube-scheduler (lws-nodes-deleted) both put a 2 x 4-GPU group on one
    # 8-GPU node. A check on "all ranks on one node" must allow this (or stay below warning).
    for state, dgds in (("grove-healthy", {"vllm-mn", "trtllm-mn", "sglang-mn"}), ("lws-nodes-deleted", {"vllm-mn"})):
        for dgd in dgds:
            nodes = {p["spec"]["nodeName"] for p in items(state, "", "v1", "pods")
                     if (p["metadata"].get("labels") or {}).get("nvidia.com/dynamo-graph-deployment-name") == dgd
                     and (p["metadata"]["labels"].get("nvidia.com/dynamo-component") or "").lower() != "frontend"}
            assert len(nodes) == 1, (state, dgd, nodes)


# doctor's Grove minimum for operator 1.5 is the operator's own pin, which ran grove-healthy:
# github.com/ai-dynamo/grove/operator/api v0.1.0-alpha.12-rc1 (ai-dynamo/dynamo deploy/operator/go.mod @ 2a6da14c)
@pytest.mark.parametrize("state", ["lws-healthy", "grove-healthy"])
def test_healthy_state_has_no_error_or_warning(state):
    assert [(f["code"], f["message"]) for f in result(state)["findings"] if f["severity"] in BAD] == []


# What doctor reports TODAY (error/warning codes) on each recorded fault. The states' own words are in
# tests/data/recorded/PROVENANCE.md; a change here means doctor's behaviour on a real state changed.
TODAY: Dict[str, List[str]] = {
    "lws-mpi-secret-deleted": ["ssh-secret-missing"],
    "lws-wait-leader-cm-deleted": ["wait-leader-configmap-missing"],
    "lws-headless-svc-not-publishing": ["headless-service-invalid"],
    "lws-volcano-gang-held": ["gang-held", "group-pending"],
    "lws-volcano-not-running": ["scheduler-not-running"],
    "lws-gang-not-enforced": ["gang-not-enforced", "insufficient-gpus"],
    "lws-statefulset-failedcreate": ["controller-create-failed", "group-incomplete"],
    "lws-cordoned": ["group-pending"],
    "lws-nodes-deleted": ["pod-on-unavailable-node"],
    "grove-healthy": [],
    "grove-gang-pending": ["gang-held", "group-pending", "insufficient-gpus"],
    "grove-queue-missing": ["group-incomplete", "kai-queue-missing"],
    "grove-replacement-pod": ["group-pending", "insufficient-gpus"],
    "grove-queue-deleted": ["group-pending", "kai-queue-missing"],
    "grove-kai0152-gang-partial": ["gang-not-enforced", "insufficient-gpus", "orchestrator-too-old"],
    "grove-headless-svc-deleted": ["controller-not-reconciling", "leader-dns-missing"],
    "lws-controller-stopped": ["controller-create-failed", "controller-not-reconciling", "group-incomplete"],
    "lws-nodes-not-ready": ["leader-not-ready", "pod-on-unavailable-node"],
    "grove-controller-stopped": ["controller-not-reconciling", "group-incomplete"],
    "lws-discovery-rolebinding-deleted": ["discovery-rbac-missing"],
    "lws-discovery-label-removed": ["discovery-unselected"],
    "lws-discovery-own-serviceaccount": ["discovery-rbac-missing"],
}


@pytest.mark.parametrize("state", sorted(TODAY))
def test_fault_what_doctor_reports_today(state):
    assert codes(state) == TODAY[state]


def test_today_findings_name_the_real_objects():
    (f,) = findings("lws-mpi-secret-deleted", "ssh-secret-missing")
    assert f["object"]["name"] == "mpi-run-ssh-secret"
    (f,) = findings("lws-wait-leader-cm-deleted", "wait-leader-configmap-missing")
    assert f["object"]["name"] == "vllm-mn-wait-leader-script"
    (f,) = findings("lws-headless-svc-not-publishing", "headless-service-invalid")
    assert f["object"]["kind"] == "Service" and f["object"]["name"].startswith("vllm-mn-decode-")
    (f,) = findings("lws-statefulset-failedcreate", "group-incomplete")
    assert f["object"]["name"] == "trtllm-mn"
    (f,) = findings("lws-gang-not-enforced", "insufficient-gpus")
    assert "4 Insufficient nvidia.com/gpu" in f["message"]  # kube-scheduler's words on the one pod left out
    (f,) = findings("grove-queue-missing", "kai-queue-missing")
    # the operator's own words, from the DGD's Ready condition
    assert f["object"]["name"] == "vllm-q" and "queue 'no-such-queue' not found in cluster" in f["message"]
    assert {(x["object"] or {}).get("name") for x in findings("grove-queue-deleted", "kai-queue-missing")} == {
        None, "sglang-mn", "trtllm-mn", "vllm-mn"}
    (f,) = [x for x in findings("grove-kai0152-gang-partial", "gang-not-enforced") if x["severity"] == "error"]
    assert f["object"]["kind"] == "PodGroup" and "minMember 1 for the 5 pods" in f["message"]
    assert "1 of 5 pods are placed" in f["message"]
    (f,) = findings("grove-headless-svc-deleted", "leader-dns-missing")
    assert f["object"]["name"] == "sglang-mn-0"
    kai = [x for x in findings("grove-kai0152-gang-partial", "orchestrator-too-old") if "KAI" in x["message"]]
    assert len(kai) == 1 and "v0.15.2" in kai[0]["message"]


def test_discovery_findings_name_the_real_objects():
    """Each state broke one DGD's discovery (sglang-mn, PROVENANCE.md); the other two DGDs in it are intact and
    get no discovery finding. The expected objects are read from the recordings, not from doctor."""
    state = "lws-discovery-rolebinding-deleted"
    bindings = {b["metadata"]["name"] for b in items(state, "rbac.authorization.k8s.io", "v1", "rolebindings")}
    assert {f"{d}-k8s-service-discovery-binding" for d in ("vllm-mn", "trtllm-mn")} <= bindings
    assert "sglang-mn-k8s-service-discovery-binding" not in bindings
    (f,) = findings(state, "discovery-rbac-missing")
    assert f["severity"] == "error" and f["object"] == {
        "kind": "RoleBinding", "namespace": "llm", "name": "sglang-mn-k8s-service-discovery-binding"}
    state = "lws-discovery-label-removed"
    unlabelled = [p["metadata"]["name"] for p in items(state, "", "v1", "pods")
                  if (p["metadata"].get("labels") or {}).get("nvidia.com/dynamo-graph-deployment-name")
                  and "nvidia.com/dynamo-namespace" not in p["metadata"]["labels"]]
    (f,) = findings(state, "discovery-unselected")
    assert [f["object"]["name"]] == unlabelled and f["object"]["kind"] == "Pod"
    assert "nvidia.com/dynamo-namespace=llm-sglang-mn (the pod has no such label)" in f["message"]
    # the pods of sglang-sa run as team-sa, which the operator's RoleBinding of sglang-sa does not name
    state = "lws-discovery-own-serviceaccount"
    accounts = {p["spec"].get("serviceAccountName") for p in items(state, "", "v1", "pods")
                if (p["metadata"].get("labels") or {}).get("nvidia.com/dynamo-graph-deployment-name") == "sglang-sa"}
    (binding,) = [b for b in items(state, "rbac.authorization.k8s.io", "v1", "rolebindings")
                  if b["metadata"]["name"] == "sglang-sa-k8s-service-discovery-binding"]
    assert accounts == {"team-sa"} and [s["name"] for s in binding["subjects"]] == ["sglang-sa-k8s-service-discovery"]
    (f,) = findings(state, "discovery-rbac-missing")
    assert f["severity"] == "warning" and f["object"] == {"kind": "ServiceAccount", "namespace": "llm", "name": "team-sa"}
    # nothing else in these states is about discovery: the intact DGDs are silent
    for state, names in (("lws-discovery-rolebinding-deleted", {"sglang-mn-k8s-service-discovery-binding"}),
                         ("lws-discovery-label-removed", set(unlabelled)),
                         ("lws-discovery-own-serviceaccount", {"team-sa"})):
        assert {f["object"]["name"] for f in result(state)["findings"]
                if f["code"].startswith("discovery-") or f["code"] == "worker-registration-stale"} == names


# What the issue #11 checks report: (state, code, words of the real controller the finding quotes). The
# words are copied from the recorded objects (PROVENANCE.md lists where).
SAYS = [
    # the operator renders LWS templates without schedulerName; LWS's volcano provider creates a PodGroup,
    # yet every pod is bound by default-scheduler: the gang is not enforced even when all runs
    ("lws-healthy", "gang-not-enforced", "default-scheduler"),
    ("lws-gang-not-enforced", "gang-not-enforced", "default-scheduler"),
    # Volcano holds the whole gang: PodGroup Inqueue, condition Unschedulable/NotEnoughResources
    ("lws-volcano-gang-held", "gang-held",
     "pod group is not ready, 3 Pending, 3 minAvailable; Pending: 1 Unschedulable, 2 Schedulable"),
    # schedulerName volcano and no Volcano scheduler: Pending with no condition and no event at all
    ("lws-volcano-not-running", "scheduler-not-running", "volcano"),
    # the StatefulSet controller's FailedCreate Warning explains the missing pods
    ("lws-statefulset-failedcreate", "controller-create-failed",
     'failed calling webhook "unreachable.record-states.kubectl-dynamo"'),
    # the whole group Pending, with kube-scheduler's reason
    ("lws-cordoned", "group-pending", "4 node(s) were unschedulable"),
    # pods still Running/Ready on a node that no longer exists (until pod GC)
    ("lws-nodes-deleted", "pod-on-unavailable-node", "gpu-node-0"),
    # every node NotReady (its kubelet, kwok here, stopped): the cause of the three leader-not-ready findings
    ("lws-nodes-not-ready", "pod-on-unavailable-node", "Kubelet stopped posting node status."),
    # KAI keeps the whole 5-pod gang Pending, in its own words (PodGroup schedulingConditions and pod condition)
    ("grove-gang-pending", "gang-held",
     "Resources were found for 0 pods from all sub-groups while sub-group vllm-big-0-decode-0-decode-wkr "
     "requires 4 pods for gang scheduling"),
    # a replacement pod of a running KAI gang waits: KAI's verdict on it, not "use a gang scheduler" (KAI's
    # PodGroup still covers the group, minMember 3 for 2 + the frontend: the gang is enforced, not held)
    ("grove-replacement-pod", "group-pending", "node is unschedulable"),
    ("grove-queue-deleted", "group-pending", "QueueDoesNotExist: Queue 'dynamo' does not exist."),
    # KAI v0.15.2's podgrouper maps only v1alpha1 DGDs: one PodGroup with minMember 1 for a v1beta1 DGD, so
    # its gang is not enforced; the version finding must name the gang it breaks
    ("grove-kai0152-gang-partial", "orchestrator-too-old", "vllm-big"),
    # LWS stopped: its pod webhook (failurePolicy Fail) times out, so the StatefulSet cannot recreate the worker,
    # while the LeaderWorkerSet status still says Available
    ("lws-controller-stopped", "controller-create-failed",
     'failed calling webhook "mpod.kb.io": failed to call webhook: Post "https://127.0.0.1:'),
    ("lws-controller-stopped", "controller-not-reconciling", "trtllm-mn"),
    # Grove stopped (its Deployment Available): the deleted worker is not recreated and the PodClique still
    # reports 1/1 ready
    ("grove-controller-stopped", "controller-not-reconciling", "trtllm-mn-0-worker-0-worker-wkr"),
    # Grove runs (its Deployment looks Available) yet does not recreate the headless Service it owns
    ("grove-headless-svc-deleted", "controller-not-reconciling", "sglang-mn-0"),
]


@pytest.mark.parametrize("state, code, words", [pytest.param(s, c, w, id=f"{s}:{c}") for s, c, w in SAYS])
def test_fault_doctor_reports_in_the_controllers_words(state, code, words):
    assert any(words in f["message"] for f in findings(state, code)), codes(state)


# What doctor no longer reports: gang-partial with the hint "use a gang scheduler" on a replacement
# pod of a gang KAI runs (the rest of the gang is Running; KAI is the gang scheduler).
FALSE_ALARMS = [("grove-replacement-pod", "gang-partial"), ("grove-queue-deleted", "gang-partial")]


@pytest.mark.parametrize("state, code", [pytest.param(s, c, id=f"{s}:{c}") for s, c in FALSE_ALARMS])
def test_fault_doctor_should_not_report(state, code):
    assert code not in codes(state)


def test_doctor_from_option_runs_on_a_recording():
    state = RECORDED / "lws-healthy"
    proc = CliRunner().invoke(cli, ["doctor", "--from", str(state), "-A", "-o", "json"])
    assert proc.exit_code == 0, proc.output
    out = json.loads(proc.output)
    assert {d["name"] for d in out["deployments"]} == {"vllm-mn", "trtllm-mn", "sglang-mn"}


def test_doctor_from_defaults_to_the_bundles_scope():
    """The recordings were made of all namespaces (manifest namespace null): without -A doctor reads them
    whole, not the namespace "default" where nothing is; -n still narrows."""
    state = str(RECORDED / "lws-healthy")
    out = json.loads(CliRunner().invoke(cli, ["doctor", "--from", state, "-o", "json"]).output)
    assert {d["name"] for d in out["deployments"]} == {"vllm-mn", "trtllm-mn", "sglang-mn"}
    out = json.loads(CliRunner().invoke(cli, ["doctor", "--from", state, "-n", "default", "-o", "json"]).output)
    assert out["deployments"] == []


def test_doctor_from_exit_codes(tmp_path):
    proc = run_cli("doctor", "--from", str(RECORDED / "lws-mpi-secret-deleted"), "-A")
    assert proc.returncode == 1 and "ssh-secret-missing" in proc.stdout, proc.stderr
    proc = run_cli("doctor", "--from", str(RECORDED / "lws-healthy"), "--exec")
    assert proc.returncode == 2 and proc.stderr.startswith("error: --exec runs commands in live pods")
    proc = run_cli("doctor", "--from", str(tmp_path / "nothing"))
    assert proc.returncode == 2 and proc.stderr.startswith("error: snapshot "), proc.stderr
