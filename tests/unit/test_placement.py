"""``placement`` on recorded real states (tests/data/recorded, PROVENANCE.md): which DGD holds which GPUs,
what is free, and what a pending gang waits for. Expectations are the recordings' own facts: the nodes'
allocatable ``nvidia.com/gpu`` (kwok, 8 per node) and each bound pod's GPU limit and ``spec.nodeName``."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.commands.placement import run_placement
from kubectl_dynamo.data import DATA_DIR
from kubectl_dynamo.model.placement import placement

RECORDED = Path(__file__).resolve().parent.parent / "data" / "recorded"


def data(state: str) -> dict:
    return run_placement(RecordedCluster(str(RECORDED / state))).data


def test_every_gpu_of_lws_healthy_is_accounted_for():
    """Three DGDs of 2 pods x 4 GPUs on 4 x 8 GPUs: 24 used, 8 free in two halves of 4."""
    d = data("lws-healthy")
    assert [(n["name"], n["used"], n["free"]) for n in d["nodes"]] == [
        ("gpu-node-0", 4, 4), ("gpu-node-1", 8, 0), ("gpu-node-2", 4, 4), ("gpu-node-3", 8, 0)]
    users = {(u["dgd"], u["component"], u["group"], u["rank"]) for n in d["nodes"] for u in n["users"]}
    assert users == {(dgd, comp, 0, rank) for dgd, comp in (("vllm-mn", "decode"), ("sglang-mn", "decode"),
                                                            ("trtllm-mn", "worker")) for rank in (0, 1)}
    assert d["totals"] == {"nodes": 4, "allocatable": 32, "used": 24, "free": 8, "largestFree": 4, "stranded": 0}
    assert d["pendingGangs"] == []


def test_a_pending_gang_and_what_it_waits_for():
    """grove-gang-pending: a 5 x 8-GPU gang Pending (KAI holds it) while one node has 8 free."""
    d = data("grove-gang-pending")
    (gang,) = d["pendingGangs"]
    assert (gang["dgd"], gang["component"], gang["group"], gang["gpusPerPod"], gang["fits"]) == (
        "vllm-big", "decode", 0, [8] * 5, False)
    assert gang["waitsFor"] == "40 GPUs (5 pods x 8); 8 free on schedulable nodes"


def test_cordoned_nodes_offer_no_free_gpus():
    d = data("lws-cordoned")
    assert not any(n["schedulable"] for n in d["nodes"])
    assert d["totals"]["free"] == 0 and d["pendingGangs"][0]["fits"] is False


def _node(name: str, gpus: int) -> dict:
    return {"metadata": {"name": name}, "spec": {},
            "status": {"allocatable": {"nvidia.com/gpu": str(gpus)}, "conditions": [{"type": "Ready", "status": "True"}]}}


def _pending(name: str, gpus: int) -> dict:
    return {"metadata": {"name": name, "namespace": "ns", "labels": {
        "nvidia.com/dynamo-graph-deployment-name": "big", "nvidia.com/dynamo-component": "decode",
        "leaderworkerset.sigs.k8s.io/group-index": "0", "leaderworkerset.sigs.k8s.io/worker-index": name[-1]}},
        "spec": {"containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]},
        "status": {"phase": "Pending"}}


def test_fragmentation_free_gpus_no_pending_pod_can_use():
    """2 pods x 8 GPUs wait while 3 nodes have 6 free each: 18 free, none usable by them."""
    d = placement([_node(f"n{i}", 8) for i in range(3)] + [_node("n3", 2)],
                  [{"metadata": {"name": f"other-{i}", "namespace": "x"}, "spec": {"nodeName": f"n{i}", "containers": [
                      {"name": "c", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}, "status": {"phase": "Running"}}
                   for i in range(3)] + [_pending("big-0", 8), _pending("big-1", 8)])
    assert d["totals"]["free"] == 20 and d["totals"]["stranded"] == 20
    (gang,) = d["pendingGangs"]
    assert gang["waitsFor"] == "2 pods x 8 GPUs: 20 GPUs are free but fragmented (largest free on one node: 6)"


@pytest.mark.parametrize("state", ["lws-healthy", "grove-gang-pending", "lws-cordoned", "lws-gang-not-enforced"])
def test_placement_json_matches_its_schema(state):
    schema = json.loads(Path(DATA_DIR, "schemas", "placement.json").read_text())
    jsonschema.validate(data(state), schema)


@pytest.mark.parametrize("state, name", [("lws-healthy", "vllm-mn"), ("lws-cordoned", "vllm-mn"),
                                         ("grove-replacement-pod", "vllm-mn")])
def test_rollout_json_matches_its_schemas(state, name):
    from kubectl_dynamo.commands import rollout

    cluster = RecordedCluster(str(RECORDED / state), namespace="llm")
    for schema_name, result in (("rollout-status", rollout.status_once(cluster, name)),
                                ("rollout-history", rollout.history(cluster, name, 1))):
        schema = json.loads(Path(DATA_DIR, "schemas", f"{schema_name}.json").read_text())
        jsonschema.validate(json.loads(json.dumps(result.data)), schema)
