"""The worker hash and the topology wiring of a DGD's kvTransferPolicy, against the operator's own code.

tests/data/oracle/worker-hash/kv-transfer-policy.json is the oracle's render (ai-dynamo/dynamo@2a6da14c, the
1.6 files overlaid for 1.6.0; tests/data/oracle/PROVENANCE.md) of kv-transfer-policy.yaml on the component
path: DCD names carry the hash (hash.go ComputeDGDWorkersSpecHash hashes the DCDs' topology annotations,
graph.go applyKvTransferPolicyTopologyAnnotations, and their pod templates with the topology volume,
component_worker.go TopologyLabelVolume). The hash is the same on the Grove path, where the operator admits
``clusterTopologyName`` (the oracle cannot render that path without a ClusterTopologyBinding).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubectl_dynamo.commands import explain
from kubectl_dynamo.inputs import manifests

DATA = Path(__file__).resolve().parents[1] / "data" / "oracle" / "worker-hash"
GOLDEN = json.loads((DATA / "kv-transfer-policy.json").read_text())


@pytest.mark.parametrize("version", sorted(GOLDEN["oracle"]))
def test_kv_transfer_policy_hash_and_volume_match_the_operator(version):
    docs = manifests.load(str(DATA / "kv-transfer-policy.yaml"))
    items = explain.explain_documents(docs, orchestrator="lws", operator_version=version, objects=True)["items"]
    for item in items:
        got = sorted(({"name": o["metadata"]["name"],
                       "volumes": o["spec"]["template"]["spec"].get("volumes"),
                       "annotations": {k: v for k, v in (o["spec"]["template"]["metadata"].get("annotations") or {}).items()
                                       if "topology" in k}}
                      for o in item["objects"] if o.get("kind") == "Deployment"), key=lambda d: d["name"])
        want = sorted(GOLDEN["oracle"][version][item["name"]], key=lambda d: d["name"])
        assert got == want
