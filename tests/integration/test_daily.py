"""The debugging loop against the real control plane: get, tree, logs and collect, then doctor --from.

Real API server, real log streaming: kwok serves each fake pod's logs from files through its
``Logs``/``ClusterLogs`` CRs (kwok v0.8.0 ``pkg/kwok/server/debugging_logs.go``: CRI-format lines,
``previousLogsFile`` for ``--previous``, follow until the client closes), behind the API server's
``pods/log`` proxy. Faked because they cannot run here (and said so): the images (a pod's "output" is
the file kwok serves), and the Grove controller: the test creates the PodCliqueSet, scaling group,
PodCliques and PodGang Grove would, named as Grove names them (ai-dynamo/grove
operator/api/common/namegen.go v0.1.0-alpha.12) and linked only by Grove's labels. One fault is
injected (rank 2 runs another image) so the bundle holds something doctor must find offline.
"""

from __future__ import annotations

import base64
import json
import queue
import signal
import subprocess
import sys
import tarfile
import threading
import time

import pytest

from tests.conftest import REPO, run_cli
from tests.integration import scenarios as s
from tests.integration import world as w

NS = "daily"
SECRET_VALUE = "kd-planted-secret-value-5f0c1e77a9"  # must appear in no file of any bundle
CONTROLLER_LINE = 'controller reconciled DynamoGraphDeployment {"name": "llm", "namespace": "daily"}'
OTHER_LINE = 'controller reconciled DynamoGraphDeployment {"name": "llm", "namespace": "elsewhere"}'
OTHER_IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0"


cri = s.cri_line


# rank -> (current lines, previous lines); times interleave across ranks so the merge order is known
LINES = {r: ([(f"2026-12-01T09:00:0{r + 1}.5Z", f"rank {r} starts"), (f"2026-12-01T09:00:0{r + 4}Z", f"rank {r} serving")],
             [(f"2026-12-01T08:00:0{r + 1}Z", f"rank {r} previous crash")]) for r in range(3)}


INIT_LINE = "waiting for the leader"  # what every container but main logs (the operator's init container)


class State:
    def __init__(self, sandbox, files):
        self.sb = sandbox
        self.files = files
        self.pods = {}  # rank -> pod manifest


@pytest.fixture(scope="module")
def state(sandbox, tmp_path_factory):
    world = w.World(sandbox)
    world.clear_objects()
    world.ensure(["grove", "kai", "dynamo"])
    files = tmp_path_factory.mktemp("daily-logs")
    controller_log = files / "controller.log"
    controller_log.write_text(cri("2026-12-01T08:59:00Z", CONTROLLER_LINE) + cri("2026-12-01T08:59:01Z", OTHER_LINE))
    (files / "init.log").write_text(cri("2026-12-01T08:59:30Z", INIT_LINE))
    world.apply(w.controllers("grove", "v0.1.0-alpha.15") + w.controllers("kai") + w.kai_queues()
                + w.dynamo_operator(version=s.OPERATOR_VERSION, grove=True, kai=True))
    # every controller pod logs the same file (a ClusterLogs rule per controller namespace)
    world.apply([{"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterLogs", "metadata": {"name": "daily-controllers"},
                  "spec": {"selector": {"matchNamespaces": ["grove-system", "kai-scheduler", "dynamo-system"]},
                           "logs": [{"logsFile": str(controller_log)}]}}])
    world.wait_available()

    doc = s.dgd("llm", NS, "vllm", nodes=3, gpus=1)

    def fault_and_refs(pods):
        pods[2]["spec"]["containers"][0]["image"] = OTHER_IMAGE  # rank 2: the injected fault
        for p in pods:
            p["spec"]["containers"][0].setdefault("envFrom", []).append({"secretRef": {"name": "daily-hf-token"}})
        pods[0]["spec"].setdefault("volumes", []).append({"name": "extra", "configMap": {"name": "daily-missing-config"}})

    objs = s.group_objects(doc, mutate=fault_and_refs)
    pods = [o for o in objs if o["kind"] == "Pod"]
    st = State(sandbox, files)
    for p in pods:
        rank = s_rank(p)
        st.pods[rank] = p
        cur, prev = files / f"rank{rank}.log", files / f"rank{rank}.previous.log"
        cur.write_text("".join(cri(t, x) for t, x in LINES[rank][0]))
        prev.write_text("".join(cri(t, x) for t, x in LINES[rank][1]))
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "daily-hf-token", "namespace": NS},
              "type": "Opaque", "stringData": {"HF_TOKEN": SECRET_VALUE}}
    sandbox.kubectl("apply", "-f", "-", input=json.dumps(objs[0]))
    sandbox.kubectl("apply", "--server-side", "-f", "-", input="\n---\n".join(json.dumps(o) for o in [
        *[s.kwok_logs(p["metadata"]["name"], NS, files / f"rank{s_rank(p)}.log", files / f"rank{s_rank(p)}.previous.log",
                    other=files / "init.log")
          for p in pods], secret, *s.grove_objects(doc, pods), *objs[1:]]))
    sandbox.kubectl("-n", NS, "wait", "--for=condition=Ready", "pod", "--all", "--timeout=120s")
    yield st
    world.clear_objects()
    sandbox.kubectl("delete", "clusterlogs.kwok.x-k8s.io", "daily-controllers", "--ignore-not-found", check=False)
    sandbox.kubectl("delete", "namespace", NS, "--wait=false", check=False)


def s_rank(pod) -> int:
    labels = pod["metadata"]["labels"]
    return 0 if labels["grove.io/podclique"].endswith("-ldr") else int(labels["grove.io/podclique-pod-index"]) + 1


def cli(sandbox, *args, kubeconfig=None, timeout=120):
    return run_cli(*args, "--kubeconfig", str(kubeconfig or sandbox.kubeconfig), timeout=timeout)


class Running:
    """A CLI run in the background whose stdout lines arrive on a queue; Ctrl-C as a terminal sends it."""

    def __init__(self, sandbox, *args):
        self.proc = subprocess.Popen([sys.executable, "-m", "kubectl_dynamo", *args, "--kubeconfig",
                                      str(sandbox.kubeconfig)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, cwd=str(REPO),
                                     # a background child inherits an ignored SIGINT; a terminal's would not be
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, predicate, timeout=60.0):
        deadline = time.monotonic() + timeout
        seen = []
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            seen.append(line)
            if predicate(line):
                return seen
        raise AssertionError(f"no matching line within {timeout}s; saw {seen}; stderr: "
                             f"{self.proc.stderr.read() if self.proc.poll() is not None else ''}")

    def interrupt(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=30)


# -- get ------------------------------------------------------------------------------------------------

def test_get_rows_per_dgd_and_per_group(sandbox, state):
    proc = cli(sandbox, "get", "-n", NS, "-o", "json")
    assert proc.returncode == 0, proc.stderr
    (d,) = json.loads(proc.stdout)["deployments"]
    assert (d["name"], d["orchestrator"], d["groupsReady"], d["groupsDesired"], d["ranksPresent"], d["ranksDesired"]) == \
        ("llm", "grove", 1, 1, 3, 3)
    (comp,) = d["components"]
    assert comp["groups"][0]["ranks"] == [0, 1, 2] and comp["groups"][0]["podsReady"] == 3
    assert d["topFinding"]["code"] == "image-mismatch"  # the injected fault, as doctor reports it
    proc = cli(sandbox, "get", "dgd", "llm", "-n", NS)
    assert proc.returncode == 0, proc.stderr
    row = next(line.split() for line in proc.stdout.splitlines() if line.startswith("decode"))
    assert row[:5] == ["decode", "0", "3/3", "0,1,2", "0"] and row[5] == "image-mismatch"
    proc = cli(sandbox, "get", "-n", NS, "-o", "name")
    assert proc.stdout.split() == ["dynamographdeployment.nvidia.com/llm"]


def test_get_watch_prints_a_changed_row_and_ctrl_c_exits_130(sandbox, state):
    run = Running(sandbox, "get", "-n", NS, "-w")
    run.wait_for(lambda line: line.startswith(NS))  # the first table
    status = {"conditions": [{"type": "Ready", "status": "False", "reason": "DailyTestReason", "message": "x",
                              "lastTransitionTime": "2026-12-01T09:00:00Z"}]}
    sandbox.kubectl("-n", NS, "patch", "dynamographdeployment", "llm", "--subresource=status", "--type=merge",
                    "-p", json.dumps({"status": status}))
    seen = run.wait_for(lambda line: "DailyTestReason" in line)
    assert seen[-1].split()[:2] == [NS, "llm"]
    assert run.interrupt() == 130


# -- tree -----------------------------------------------------------------------------------------------

def test_tree_shows_the_grove_lineage_ranks_and_what_is_missing(sandbox, state):
    proc = cli(sandbox, "tree", "llm", "-n", NS, "-o", "json")
    assert proc.returncode == 0, proc.stderr
    tree = json.loads(proc.stdout)

    def walk(node, depth=0):
        yield depth, node
        for c in node["children"]:
            yield from walk(c, depth + 1)

    shape = [(d, n["kind"]) for d, n in walk(tree)]
    assert shape == [(0, "DynamoGraphDeployment"), (1, "PodCliqueSet"), (2, "PodCliqueScalingGroup"),
                     (3, "PodClique"), (4, "PodGang"), (5, "Pod"),
                     (3, "PodClique"), (4, "PodGang"), (5, "Pod"), (5, "Pod")]
    pods = [n for _, n in walk(tree) if n["kind"] == "Pod"]
    live = json.loads(sandbox.kubectl("-n", NS, "get", "pods", "-o", "json").stdout)["items"]
    nodes = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in live}
    assert [(p["rank"], p["role"], p["phase"]) for p in pods] == [(0, "leader", "Running"), (1, "worker", "Running"),
                                                                  (2, "worker", "Running")]
    assert all(p["node"] == nodes[p["name"]] for p in pods)
    needs = {(n["kind"], n["name"]): n["present"] for n in tree["needs"]}
    assert needs[("Secret", "daily-hf-token")] is True and needs[("Service", "llm-0")] is True
    assert needs[("ConfigMap", "daily-missing-config")] is False
    text = cli(sandbox, "tree", "llm", "-n", NS).stdout
    assert "ConfigMap/daily-missing-config: MISSING" in text and "PodGang/llm-0" in text
    assert SECRET_VALUE not in proc.stdout + text


# -- logs -----------------------------------------------------------------------------------------------

def expected(rank, role):
    return f"decode/0/{rank}({role})"


ROLE = {0: "leader", 1: "worker", 2: "worker"}


def test_logs_interleaved_by_time_with_rank_prefixes(sandbox, state):
    proc = cli(sandbox, "logs", "llm", "-n", NS)
    assert proc.returncode == 0, proc.stderr
    want = sorted((t, r, x) for r in range(3) for t, x in LINES[r][0])
    got = [line.split(None, 1) for line in proc.stdout.splitlines()]
    assert got == [[expected(r, ROLE[r]), x] for _, r, x in want]
    one = cli(sandbox, "logs", "llm", "-n", NS, "--rank", "1").stdout.splitlines()
    assert one == [f"{expected(1, 'worker')} {x}" for _, x in LINES[1][0]]
    leaders = cli(sandbox, "logs", "llm", "-n", NS, "--role", "leader", "--tail", "1").stdout.splitlines()
    assert leaders == [f"{expected(0, 'leader')} {LINES[0][0][-1][1]}"]
    previous = cli(sandbox, "logs", "llm", "-n", NS, "--previous").stdout.splitlines()
    assert previous == [f"{expected(r, ROLE[r])} rank {r} previous crash" for r in range(3)]
    init = cli(sandbox, "logs", "llm", "-n", NS, "--rank", "1", "--init-containers").stdout.splitlines()
    assert init[0].startswith(expected(1, "worker") + "[init:") and init[0].endswith(INIT_LINE)
    missing = cli(sandbox, "logs", "llm", "-n", NS, "--rank", "7")
    assert missing.returncode == 1 and "decode/0/2(worker)" in missing.stderr


# -- collect, then doctor --from ------------------------------------------------------------------------

def members(path):
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def test_collect_bundle_content_secret_free_and_doctor_offline(sandbox, state, tmp_path):
    bundle = tmp_path / "llm-bundle.tar.gz"
    proc = cli(sandbox, "collect", "llm", "-n", NS, "-o", str(bundle), timeout=300)
    assert proc.returncode == 0, proc.stderr
    files = members(bundle)
    root = "llm-bundle/"
    assert all(name.startswith(root) for name in files)
    manifest = json.loads(files[root + "collect.json"])
    listed = {f["path"] for f in manifest["files"]}
    # manifest.json lists every other file (collect.json, the snapshot's, logs...) with its checksum
    assert {f["path"] for f in json.loads(files[root + "manifest.json"])["files"]} == \
        {n[len(root):] for n in files} - {"manifest.json"} == listed | {"collect.json"}
    assert {"detect.json", "doctor.json", "operator-config.yaml", "crd-versions.json"} <= listed
    for rank, pod in state.pods.items():
        base = f"{root}pods/{NS}/{pod['metadata']['name']}/"
        assert [line.split(" ", 1)[1] for line in files[base + "main.log"].decode().splitlines()] == \
            [x for _, x in LINES[rank][0]]
        assert files[base + "main.previous.log"].decode().splitlines()[0].endswith(LINES[rank][1][0][1])
        assert f"Rank:         decode/0/{rank}({ROLE[rank]})" in files[base + "describe.txt"].decode()
        inits = [c["name"] for c in pod["spec"].get("initContainers") or []]
        assert all(INIT_LINE in files[f"{base}{c}.log"].decode() for c in inits)
    assert sorted((r["rank"], r["role"]) for r in manifest["ranks"]) == [(0, "leader"), (1, "worker"), (2, "worker")]
    controller_logs = [n for n in files if n.startswith(root + "controllers/dynamo-system/")]
    # the controllers' lines about this DGD only
    assert controller_logs and all([x.endswith(CONTROLLER_LINE) for x in files[n].decode().splitlines()] == [True]
                                   for n in controller_logs)
    assert b"grove" in files[root + "operator-config.yaml"]
    assert "dynamographdeployments.nvidia.com" in json.loads(files[root + "crd-versions.json"])
    assert manifest["forbidden"] == []
    assert [u for u in manifest["unavailable"] if f" {NS}/" in u["what"] or "dynamo-system/" in u["what"]] == []
    # secrets: the key name is kept, the value is nowhere (nor its base64)
    secrets = json.loads(files[root + "resources/core/v1/secrets.json"])["items"]
    mine = next(x for x in secrets if x["metadata"]["name"] == "daily-hf-token")
    assert mine["data"] == {"HF_TOKEN": ""}
    encoded = base64.b64encode(SECRET_VALUE.encode())
    leaks = [n for n, data in files.items() if SECRET_VALUE.encode() in data or encoded in data]
    assert leaks == []
    # the bundle is enough for doctor: the same findings offline as live
    live = cli(sandbox, "doctor", "llm", "-n", NS, "-o", "json")
    offline = run_cli("doctor", "--from", str(bundle), "-n", NS, "llm", "-o", "json")
    assert offline.returncode == live.returncode == 1, offline.stderr
    assert json.loads(offline.stdout)["findings"] == json.loads(live.stdout)["findings"]
    assert "image-mismatch" in {f["code"] for f in json.loads(offline.stdout)["findings"]}
    assert json.loads(files[root + "doctor.json"])["findings"] == json.loads(live.stdout)["findings"]


def test_collect_with_doctors_read_only_role_says_what_was_forbidden(sandbox, state, tmp_path):
    kubeconfig = sandbox.user("daily-reader")
    sandbox.kubectl("apply", "-f", str(REPO / "docs" / "rbac" / "doctor-readonly.yaml"))
    sandbox.kubectl("create", "clusterrolebinding", "daily-reader", "--clusterrole=kubectl-dynamo-doctor",
                    "--user=daily-reader", check=False)
    bundle = tmp_path / "limited.tar.gz"
    proc = cli(sandbox, "collect", "llm", "-n", NS, "-o", str(bundle), kubeconfig=kubeconfig, timeout=300)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads(members(bundle)["limited/collect.json"])
    forbidden = {f["what"].split(" ", 1)[0] for f in manifest["forbidden"]}
    assert "secrets.core/v1" in forbidden  # the role reads one secret by name, never a list
    assert any(f["what"].startswith("current log of") for f in manifest["forbidden"])  # no pods/log
    assert "Forbidden:" in proc.stdout
    sandbox.kubectl("delete", "clusterrolebinding", "daily-reader", "--ignore-not-found", check=False)


# -- logs -f across a restart (last: it recreates a pod) ----------------------------------------------

def test_logs_follow_new_lines_and_a_recreated_rank(sandbox, state):
    run = Running(sandbox, "logs", "llm", "-n", NS, "-f", "--tail", "1")
    run.wait_for(lambda line: line.endswith("rank 2 serving"))
    with (state.files / "rank1.log").open("a") as f:
        f.write(cri("2026-12-01T09:01:00Z", "rank 1 appended"))
    assert run.wait_for(lambda line: line.endswith("rank 1 appended"))[-1] == f"{expected(1, 'worker')} rank 1 appended"
    # rank 2 restarts the way Grove restarts it: the pod is deleted and created again with the same name
    pod = state.pods[2]
    name = pod["metadata"]["name"]
    sandbox.kubectl("-n", NS, "delete", "pod", name, "--wait=true", "--timeout=60s")
    second = state.files / "rank2.second.log"
    second.write_text(cri("2026-12-01T09:02:00Z", "rank 2 second life"))
    sandbox.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", input=json.dumps(
        s.kwok_logs(name, NS, second, state.files / "rank2.log", other=state.files / "init.log")))
    sandbox.kubectl("create", "-f", "-", input=json.dumps(pod))
    seen = run.wait_for(lambda line: line.endswith("rank 2 second life"), timeout=90)
    assert seen[-1] == f"{expected(2, 'worker')} rank 2 second life"
    assert run.interrupt() == 130
