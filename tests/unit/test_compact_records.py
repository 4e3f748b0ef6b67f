"""Compact pod, node and workload records (cluster/snapshot.py) lose nothing a check reads: doctor gives the
same result on whole and on compact objects, for every recorded real state (tests/data/recorded,
objects the real controllers wrote) and every catalogue case of doctor's scopes (hand-made
near-misses, tests/unit/test_catalogue_cases.py)."""

from __future__ import annotations

import copy
import dataclasses
import json
import sys

import pytest

from kubectl_dynamo.checks import diagnosis
from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.model import views as doctor
from kubectl_dynamo.model.snapshot import (
    Strings,
    compact_identity,
    compact_node,
    compact_owned,
    compact_pod,
    read_secret_keys,
    take,
)
from tests.unit import test_catalogue_cases as cases
from tests.unit import test_recorded_states as recorded


def _doctor(state: str, compact: bool) -> dict:
    """doctor -A on a recorded state, as run_doctor reads it (``compact=True``) or with whole objects."""
    cluster = RecordedCluster(str(recorded.RECORDED / state))
    snap = take(cluster, None, compact=compact)
    views = doctor.build_views(snap)
    for ns, secret in sorted(doctor.needed_secrets(views)):
        read_secret_keys(cluster, snap, ns, secret)
    return diagnosis.diagnose(snap, views)


@pytest.mark.parametrize("state", recorded.STATES)
def test_recorded_states_give_the_same_result_on_compact_records(state):
    assert _doctor(state, compact=True) == _doctor(state, compact=False)


def _compacted(snap):
    snap = copy.copy(snap)
    strings = Strings()
    snap.pods = [compact_pod(p, strings) for p in snap.pods]
    for _, attr in doctor.OWNED_KINDS:
        if getattr(snap, attr, None) is not None:
            setattr(snap, attr, [compact_owned(o, strings) for o in getattr(snap, attr)])
    if snap.facts.nodes is not None:
        snap.facts = dataclasses.replace(snap.facts, nodes=[compact_node(n, strings) for n in snap.facts.nodes])
    return snap


DOCTOR_CASES = [p for kind in ("fires", "silent") for p in cases._params(kind) if p.values[1] in ("dgd", "exec")]


@pytest.mark.parametrize("code, scope, case", DOCTOR_CASES)
def test_catalogue_cases_give_the_same_findings_on_compact_records(code, scope, case, monkeypatch):
    whole = case()
    run_dgd, run_exec = cases.run_dgd, cases.run_exec
    monkeypatch.setattr(cases, "run_dgd", lambda snap: run_dgd(_compacted(snap)))
    monkeypatch.setattr(cases, "run_exec", lambda snap, answers: run_exec(_compacted(snap), answers))
    assert case().findings == whole.findings


def test_a_compact_pod_is_a_fraction_of_the_whole():
    """The reason for compact records: a rendered, kwok-run pod of the benchmark (one of each backend)."""
    from tests.integration import scenarios as s

    pod = s.pods(s.dgd("llm", "ns", "vllm"))[1]
    pod["status"] = {"phase": "Running", "conditions": [
        {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": "2026-12-01T09:00:00Z"}
        for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
        "containerStatuses": [{"name": "main", "ready": True, "restartCount": 0, "image": "x", "imageID": "",
                               "containerID": "kwok://1", "started": True,
                               "state": {"running": {"startedAt": "2026-12-01T09:00:00Z"}}}]}
    small = compact_pod(copy.deepcopy(pod), Strings())
    assert len(json.dumps(small)) < len(json.dumps(pod)) / 3
    assert small["spec"]["containers"][0]["image"] == pod["spec"]["containers"][0]["image"]
    assert small["metadata"]["labels"] == pod["metadata"]["labels"]
    assert [c["type"] for c in small["status"]["conditions"]] == ["Ready", "PodScheduled"]


def test_strings_are_shared():
    strings = Strings()
    a = compact_node({"metadata": {"name": "n", "labels": {"k": "".join(["v", "1"])}}}, strings)
    b = compact_node({"metadata": {"name": "m", "labels": {"k": "".join(["v", "1"])}}}, strings)
    assert a["metadata"]["labels"]["k"] is b["metadata"]["labels"]["k"]
    assert sys.getrefcount(a["metadata"]["labels"]["k"]) > 2


def test_equal_parts_of_compact_pods_are_one_object():
    """Pods of one role repeat their containers and, when healthy, their conditions: kept once."""
    strings = Strings()

    def pod(name, ready):
        return {"metadata": {"name": name, "namespace": "ns"},
                "spec": {"containers": [{"name": "main", "image": "img:1"}]},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": ready}],
                           "containerStatuses": [{"name": "main", "ready": True, "restartCount": 0}]}}

    a, b, c = (compact_pod(pod(n, r), strings) for n, r in (("a", "True"), ("b", "True"), ("c", "False")))
    assert a["spec"]["containers"] is b["spec"]["containers"] is c["spec"]["containers"]
    assert a["status"]["conditions"] is b["status"]["conditions"]
    assert c["status"]["conditions"] == [{"type": "Ready", "status": "False"}]
    # True and 1 are equal in Python: a restartCount of 1 must not take a `ready: true` record's place.
    one = compact_pod({**pod("d", "True"), "status": {"containerStatuses": [
        {"name": "main", "ready": 1, "restartCount": True}]}}, strings)
    assert one["status"]["containerStatuses"][0]["ready"] == 1
    assert one["status"]["containerStatuses"][0]["ready"] is not True


def test_a_workload_keeps_its_status_and_loses_its_pod_templates():
    lws = {"metadata": {"name": "w", "namespace": "ns", "generation": 2},
           "spec": {"replicas": 2, "startupPolicy": "LeaderCreated",
                    "leaderWorkerTemplate": {"size": 4, "workerTemplate": {"spec": {"containers": [{}]}}}},
           "status": {"readyReplicas": 1, "conditions": [{"type": "Available", "status": "True"}]}}
    small = compact_owned(lws, Strings())
    assert small["spec"] == {"replicas": 2, "startupPolicy": "LeaderCreated", "leaderWorkerTemplate": {"size": 4}}
    assert small["status"] == lws["status"] and small["metadata"] == lws["metadata"]


def test_a_registration_keeps_whose_it_is_and_loses_its_data():
    # A stand-in DynamoWorkerMetadata shaped as the runtime writes it (ai-dynamo/dynamo@2a6da14c
    # lib/runtime/src/discovery/kube/crd.rs build_cr: named after its pod, owned by it, the registration in
    # spec.data); only a running runtime writes one, and kwok runs none.
    reg = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoWorkerMetadata",
           "metadata": {"name": "p-0", "namespace": "ns", "uid": "u-reg", "creationTimestamp": "2026-12-01T08:40:00Z",
                        "resourceVersion": "7", "generation": 3,
                        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p-0", "uid": "u-pod",
                                             "controller": True, "blockOwnerDeletion": False}]},
           "spec": {"data": {"endpoints": {"generate": {"transport": "tcp://10.0.0.1:4000"}}}}}
    small = compact_identity(reg, Strings())
    assert small == {"metadata": {"name": "p-0", "namespace": "ns", "uid": "u-reg",
                                  "creationTimestamp": "2026-12-01T08:40:00Z",
                                  "ownerReferences": [{"kind": "Pod", "name": "p-0", "uid": "u-pod"}]}}
