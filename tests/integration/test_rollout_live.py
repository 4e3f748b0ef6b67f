"""``rollout status`` against the real LWS controller rolling the LeaderWorkerSets the operator renders.

The LWS manager is real (kubernetes-sigs/lws v0.9.0, f056f611ae7721f9983ac35f26bfbae8547fd9f3, built
by scripts/sandbox); the nodes and GPUs are kwok's. The Dynamo operator is not needed for this part:
the test plays it, as the operator does on its LWS path (ai-dynamo/dynamo@2a6da14c
internal/controller/dgd_worker_rollout_reconciler.go, internal/dynamo/graph.go): it stores the DGD
with its ``nvidia.com/current-worker-hash-v2`` annotation and a Ready status, and applies the
LeaderWorkerSets ``explain --objects`` renders for it (named and labelled with the worker hash).
Changing their template makes the real LWS controller roll the groups; every expectation is the
controller's final word, polled with a deadline. The operator's own moves (a new worker
generation, the old one left behind) are replayed from recordings in tests/unit/test_rollout.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO, run_cli
from tests.integration import world as w
from tests.integration.real import NAME_LABEL, REVISION_LABEL, get, items, until
from tests.integration.scenarios import discovery_objects

pytestmark = [pytest.mark.fullcluster, pytest.mark.controllers]

NS = "kd-rollout"
DGD = {
    "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
    "metadata": {"name": "roll", "namespace": NS, "annotations": {"nvidia.com/enable-grove": "false"}},
    "spec": {"backendFramework": "vllm", "components": [{
        "name": "decode", "type": "worker", "replicas": 2, "multinode": {"nodeCount": 2},
        "podTemplate": {"spec": {"containers": [{
            "name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.5.0",
            "command": ["python3", "-m", "dynamo.vllm"],
            "args": ["--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2"],
            "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}]},
}


@pytest.fixture(scope="module")
def lws_only(sandbox):
    w.delete_crds(sandbox, [n for p in ("lws", "volcano") for n in w.crd_names(p)])
    args = ["apply", "--server-side", "--force-conflicts"]
    for f in w.crd_files("dynamo"):
        args += ["-f", str(f)]
    sandbox.kubectl(*args)
    sandbox.start_controllers("lws")
    sandbox.kubectl("create", "namespace", NS)
    try:
        yield sandbox
    finally:
        sandbox.kubectl("delete", "namespace", NS, "--wait=false", check=False)
        sandbox.kubectl("label", "nodes", "--all", f"{next(iter(TARGET))}-", check=False)
        sandbox.stop_controllers("lws")
        w.delete_crds(sandbox, w.crd_names("lws"))


TARGET = {"kubectl-dynamo.test/rollout": "target"}


def follower(sandbox, timeout: str) -> subprocess.Popen:
    """``rollout status roll`` following, as a process the test reads line by line."""
    return subprocess.Popen([sys.executable, "-m", "kubectl_dynamo", "rollout", "status", "roll", "--timeout", timeout,
                             "--kubeconfig", str(sandbox.kubeconfig), "-n", NS], cwd=str(REPO),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def dynamo(sandbox, *args, timeout=180):
    return run_cli(*args, "--kubeconfig", str(sandbox.kubeconfig), "-n", NS, timeout=timeout)


def rendered_lws(sandbox) -> dict:
    """The LeaderWorkerSet the operator renders for DGD (explain --objects, operator 1.5.0)."""
    proc = run_cli("explain", "dgd", "-f", "-", "--objects", "-o", "json", "--operator-version", "1.5.0",
                   input=json.dumps(DGD))
    assert proc.returncode == 0, proc.stderr
    objects = json.loads(proc.stdout)["objects"]
    (lws,) = [o for o in objects if o["kind"] == "LeaderWorkerSet"]
    for key in ("leaderTemplate", "workerTemplate"):  # kwok runs nothing: no need to wait for a shutdown
        lws["spec"]["leaderWorkerTemplate"][key]["spec"]["terminationGracePeriodSeconds"] = 0
    return lws


def as_operator(sandbox, worker_hash: str) -> None:
    """Store the DGD as the operator leaves it once reconciled: the active worker hash, Ready."""
    dgd = json.loads(json.dumps(DGD))
    dgd["metadata"]["annotations"]["nvidia.com/current-worker-hash-v2"] = worker_hash
    sandbox.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", input=json.dumps(dgd))
    generation = get(sandbox, "dgd", "roll", "-n", NS)["metadata"]["generation"]
    status = {"status": {"observedGeneration": generation, "state": "successful", "conditions": [
        {"type": "Ready", "status": "True", "reason": "all_resources_are_ready", "message": "All resources are ready",
         "lastTransitionTime": "2026-12-01T00:00:00Z", "observedGeneration": generation}]}}
    sandbox.kubectl("patch", "dgd", "roll", "-n", NS, "--subresource=status", "--type=merge", "-p", json.dumps(status))


def available(sandbox, name: str):
    lws = get(sandbox, "lws", name, "-n", NS)
    s = lws.get("status") or {}
    ok = (s.get("observedGeneration") == lws["metadata"]["generation"] and s.get("readyReplicas") == 2
          and s.get("updatedReplicas") == 2
          and any(c["type"] == "Available" and c["status"] == "True" for c in s.get("conditions") or []))
    return lws if ok else None


def pods(sandbox, name: str) -> list:
    return items(sandbox, "pods", "-n", NS, "-l", f"{NAME_LABEL}={name}")


def ready(pod: dict) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions") or [])


def test_rollout_status_follows_the_real_lws_rollout(lws_only):
    sb = lws_only
    lws = rendered_lws(sb)
    name, worker_hash = lws["metadata"]["name"], lws["metadata"]["labels"]["nvidia.com/dynamo-worker-hash"]
    as_operator(sb, worker_hash)
    # the discovery ServiceAccount the pods run as, its Role and RoleBinding, which the operator creates
    # (dgd_discovery_reconciler.go)
    account = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["serviceAccountName"]
    sb.kubectl("apply", "-f", "-", input="\n---\n".join(json.dumps(o) for o in discovery_objects(NS, account)))
    sb.kubectl("apply", "-f", "-", input=json.dumps(lws))
    until("the LeaderWorkerSet Available", lambda: available(sb, name), timeout=120)
    until("4 pods Ready", lambda: len([p for p in pods(sb, name) if ready(p)]) == 4)

    one = dynamo(sb, "rollout", "status", "roll", "--watch=false")
    assert one.returncode == 0, one.stdout + one.stderr
    assert one.stdout.strip() == 'dynamographdeployment "roll" successfully rolled out'
    history = dynamo(sb, "rollout", "history", "roll", "-o", "json")
    gens = json.loads(history.stdout)["generations"]
    assert [(g["hash"], g["pods"], g["podsReady"], g["current"]) for g in gens] == [(worker_hash, 4, 4, True)]

    # A template change (as an operator upgrade re-renders it) whose new pods may only run on nodes labelled
    # TARGET, which none is yet: the real controller replaces the last group and waits for it.
    before = {p["metadata"]["labels"][REVISION_LABEL] for p in pods(sb, name)}
    patch = [op for t in ("leaderTemplate", "workerTemplate") for op in (
        {"op": "add", "path": f"/spec/leaderWorkerTemplate/{t}/metadata/annotations", "value": {"kubectl-dynamo.test/roll": "1"}},
        {"op": "add", "path": f"/spec/leaderWorkerTemplate/{t}/spec/nodeSelector", "value": TARGET})]
    sb.kubectl("patch", "lws", name, "-n", NS, "--type=json", "-p", json.dumps(patch))
    follow = follower(sb, "120s")
    nodes = [n["metadata"]["name"] for n in items(sb, "nodes") if n["metadata"]["name"].startswith("gpu-node-")]
    try:
        assert follow.stdout is not None
        first = follow.stdout.readline()  # what it waits for, printed at once
        assert first.startswith(f'Waiting for dynamographdeployment "roll" rollout to finish: decode: LeaderWorkerSet {name}: '), first
        assert follow.poll() is None, "it follows: still running while the new group cannot be placed"
        for node in nodes:  # now the new pods can run: the controller finishes the roll
            sb.kubectl("label", "node", node, "=".join(next(iter(TARGET.items()))), "--overwrite")
        rest, err = follow.communicate(timeout=150)
    finally:
        if follow.poll() is None:
            follow.kill()
    assert follow.returncode == 0, first + rest + err
    assert rest.strip().splitlines()[-1] == 'dynamographdeployment "roll" successfully rolled out'
    # It said done: every pod runs the new template and is Ready, none of the old revision is left.
    after = pods(sb, name)
    revisions = {p["metadata"]["labels"][REVISION_LABEL] for p in after}
    assert len(after) == 4 and all(ready(p) for p in after), [(p["metadata"]["name"], ready(p)) for p in after]
    assert len(revisions) == 1 and not revisions & before, (revisions, before)
    assert available(sb, name), "the controller itself reports the rollout finished"


def test_rollout_status_exits_1_with_the_finding_when_the_rollout_stalls(lws_only):
    sb = lws_only
    lws = rendered_lws(sb)
    name = lws["metadata"]["name"]
    until("the LeaderWorkerSet Available", lambda: available(sb, name), timeout=120)
    # New pods no node can take: the controller replaces the last group, which stays Pending.
    patch = [{"op": "add", "path": f"/spec/leaderWorkerTemplate/{t}/spec/nodeSelector",
              "value": {"kubectl-dynamo.test/pool": "nowhere"}} for t in ("leaderTemplate", "workerTemplate")]
    sb.kubectl("patch", "lws", name, "-n", NS, "--type=json", "-p", json.dumps(patch))
    until("a pod of the new revision Pending", lambda: any(
        p["status"].get("phase") == "Pending" for p in pods(sb, name)), timeout=60)
    started = time.monotonic()
    stalled = dynamo(sb, "rollout", "status", "roll", "--timeout", "8s")
    took = time.monotonic() - started
    assert stalled.returncode == 1, stalled.stdout + stalled.stderr
    assert "rollout-stalled" in stalled.stdout and f"LeaderWorkerSet {name}" in stalled.stdout, stalled.stdout
    assert 8 <= took < 60, took
    # Undo: the controller rolls back to schedulable pods and the rollout completes.
    sb.kubectl("patch", "lws", name, "-n", NS, "--type=json", "-p",
               json.dumps([{"op": "remove", "path": f"/spec/leaderWorkerTemplate/{t}/spec/nodeSelector"}
                           for t in ("leaderTemplate", "workerTemplate")]))
    done = dynamo(sb, "rollout", "status", "roll", "--timeout", "120s")
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_old_worker_generation_keeps_the_rollout_open_until_it_is_gone(lws_only):
    """The operator's LWS path: a worker change gives a new hash, a new LeaderWorkerSet beside the old
    one, and the DGD's annotation moves at once (ReconcileUnsupported); nothing deletes the old one."""
    sb = lws_only
    old = rendered_lws(sb)
    old_name, old_hash = old["metadata"]["name"], old["metadata"]["labels"]["nvidia.com/dynamo-worker-hash"]
    until("the old LeaderWorkerSet Available", lambda: available(sb, old_name), timeout=120)
    new_hash = "feedbeef"
    new = json.loads(json.dumps(old).replace(old_hash, new_hash))
    new_name = new["metadata"]["name"]
    sb.kubectl("apply", "-f", "-", input=json.dumps(new))
    as_operator(sb, new_hash)
    until("the new LeaderWorkerSet Available", lambda: available(sb, new_name), timeout=120)

    look = dynamo(sb, "rollout", "status", "roll", "--watch=false", "-o", "json")
    assert look.returncode == 1, look.stdout + look.stderr
    data = json.loads(look.stdout)
    (comp,) = data["components"]
    assert (comp["oldPods"], comp["oldPodsReady"], comp["podsReady"]) == (4, 4, 4), comp
    assert [g["hash"] for g in data["generations"]] == [old_hash, new_hash]
    doctor = dynamo(sb, "doctor", "-o", "json")
    codes = {f["code"] for f in json.loads(doctor.stdout)["findings"]}
    assert "rollout-stalled" in codes, doctor.stdout

    follow = follower(sb, "120s")
    try:
        assert follow.stdout is not None
        first = follow.stdout.readline()  # it prints what it waits for at once: the old generation
        sb.kubectl("delete", "lws", old_name, "-n", NS, "--wait=false")
        rest, err = follow.communicate(timeout=150)
        out = first + rest
    finally:
        if follow.poll() is None:
            follow.kill()
    assert follow.returncode == 0, out + err
    assert "old worker generation" in out.splitlines()[0], out
    assert out.strip().splitlines()[-1] == 'dynamographdeployment "roll" successfully rolled out'
    assert not pods(sb, old_name), "done only once every old pod is gone"
