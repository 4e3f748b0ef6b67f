"""doctor's pure parts: pod classification, slimming, and checks over a hand-made snapshot."""

import copy

from kubectl_dynamo import doctor
from kubectl_dynamo.checks.registry import run
from kubectl_dynamo.cluster.snapshot import UNREAD_CONTAINER_FIELDS, Snapshot, slim_pod
from kubectl_dynamo.detection import Facts
from tests.integration import scenarios as s


def test_slim_pod_keeps_what_checks_read():
    pod = s.pods(s.dgd("llm", "ns", "vllm"))[1]
    before = copy.deepcopy(pod)
    slim = slim_pod(pod)
    main = slim["spec"]["containers"][0]
    assert not set(UNREAD_CONTAINER_FIELDS) & set(main)
    for kept in ("image", "volumeMounts", "name"):
        assert main.get(kept) == before["spec"]["containers"][0].get(kept)
    assert slim["spec"]["volumes"] == before["spec"]["volumes"]
    assert slim["metadata"] == before["metadata"]


def test_classify_grove_and_lws_ranks():
    grove = [doctor.classify(p) for p in s.pods(s.dgd("g", "ns", "vllm", nodes=3))]
    assert [(p.role, p.rank, p.group) for p in grove] == [("leader", 0, 0), ("worker", 1, 0), ("worker", 2, 0)]
    lws = [doctor.classify(p) for p in s.pods(s.dgd("l", "ns", "sglang", nodes=3, lws=True), group=1)]
    assert [(p.role, p.rank, p.group) for p in lws] == [("leader", 0, 1), ("worker", 1, 1), ("worker", 2, 1)]


def _snapshot(doc, pods, events=()):
    facts = Facts(server_version="v1.33.13", groups={g: ["v1"] for g in s.ALL_GROUPS}, deployments=[], nodes=[],
                  kai_queues=[{"metadata": {"name": "dynamo"}}])
    return Snapshot(facts=facts, namespace="ns", dgds=[doc], pods=pods, configmaps=[s.wait_leader_configmap(doc)],
                    events=list(events))


def _running(pod):
    pod["spec"]["nodeName"] = "gpu-node-0"
    pod["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    return pod


def test_failed_mount_event_is_reported_once_per_pod():
    doc = s.dgd("llm", "ns", "vllm")
    pods = [_running(p) for p in s.pods(doc)]
    ev = {"reason": "FailedMount", "type": "Warning", "count": 4,
          "message": 'MountVolume.SetUp failed for volume "wait-leader-script": configmap not found',
          "involvedObject": {"kind": "Pod", "namespace": "ns", "name": pods[1]["metadata"]["name"]}}
    snap = _snapshot(doc, pods, [ev, dict(ev)])
    findings = run("dgd", doctor.build_views(snap)[0], only=["failed-mount"])
    assert len(findings) == 1 and "configmap not found (x4)" in findings[0].message


def test_healthy_snapshot_has_no_findings():
    doc = s.dgd("llm", "ns", "vllm")
    snap = _snapshot(doc, [_running(p) for p in s.pods(doc)])
    result = doctor.diagnose(snap, doctor.build_views(snap))
    assert [f for f in result["findings"] if f["severity"] == "error"] == []
    assert result["deployments"][0]["components"][0]["groups"] == [{"index": 0, "podsReady": 2, "ranks": [0, 1]}]
