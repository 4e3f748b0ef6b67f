"""doctor on the recorded real states (tests/data/recorded/, see its PROVENANCE.md): the right cause for
each consequence, the table nesting it, the number of requests, and forbidden kinds.

tests/unit/test_recorded_states.py asserts the codes and the controllers' words; this file asserts how
doctor ties them together. Every expectation is read off the recorded objects (named in each case).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Optional

import pytest

from kubectl_dynamo.checks import diagnosis
from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.model import views as doctor
from kubectl_dynamo.model.snapshot import read_secret_keys, take
from kubectl_dynamo.output.tables import format_doctor

RECORDED = Path(__file__).resolve().parent.parent / "data" / "recorded"


def run(path: Path, name: Optional[str] = None, namespace: Optional[str] = None) -> tuple:
    cluster = RecordedCluster(str(path))
    snap = take(cluster, namespace, dgd_name=name)
    views = doctor.build_views(snap)
    for ns, secret in sorted(doctor.needed_secrets(views)):
        read_secret_keys(cluster, snap, ns, secret)
    return diagnosis.diagnose(snap, views), cluster.requests


# (state, consequence, its cause): the consequence is shown under the finding that explains it.
CAUSED = [
    # the StatefulSet controller's FailedCreate (a failing webhook) explains the DGD's missing pods
    ("lws-statefulset-failedcreate", "group-incomplete", "controller-create-failed"),
    # Volcano holds the gang (PodGroup Inqueue): that is why the whole group is Pending
    ("lws-volcano-gang-held", "group-pending", "gang-held"),
    # default-scheduler placed 2 of 3 pods (the PodGroup was ignored): the third finds no GPUs left
    ("lws-gang-not-enforced", "insufficient-gpus", "gang-not-enforced"),
    # KAI keeps the 5-pod gang Pending; each pod's GPU shortage is part of that verdict
    ("grove-gang-pending", "group-pending", "gang-held"),
    ("grove-gang-pending", "insufficient-gpus", "gang-held"),
    # the operator refused to render (queue missing): no pods; a deleted queue: KAI refuses the replacement
    ("grove-queue-missing", "group-incomplete", "kai-queue-missing"),
    ("grove-queue-deleted", "group-pending", "kai-queue-missing"),
    # KAI v0.15.2's minMember-1 PodGroup for a v1beta1 DGD
    ("grove-kai0152-gang-partial", "gang-not-enforced", "orchestrator-too-old"),
    # Grove (Available) did not recreate the Service: the leader's DNS name is gone
    ("grove-headless-svc-deleted", "leader-dns-missing", "controller-not-reconciling"),
    # the replacement pod waits for GPUs on cordoned nodes
    ("grove-replacement-pod", "insufficient-gpus", "group-pending"),
]


@pytest.mark.parametrize("state, code, cause", CAUSED, ids=[f"{s}:{c}" for s, c, _ in CAUSED])
def test_consequence_is_shown_under_its_cause(state, code, cause):
    result, _ = run(RECORDED / state)
    found = [f for f in result["findings"] if f["code"] == code and f["severity"] != "info"]
    assert found and all(f["cause"] and f["cause"]["code"] == cause for f in found), found
    roots = [f for f in result["findings"] if f["code"] == cause]
    assert roots and any(r["cause"] is None for r in roots)
    order = [f["code"] for f in result["findings"]]
    assert order.index(cause) < order.index(code)  # root first, then what it causes


ROOTS = {"lws-cordoned": "group-pending", "lws-volcano-not-running": "scheduler-not-running",
         "lws-nodes-deleted": "pod-on-unavailable-node", "lws-volcano-gang-held": "gang-held",
         "lws-statefulset-failedcreate": "controller-create-failed"}


@pytest.mark.parametrize("state", sorted(ROOTS))
def test_root_causes_have_no_cause(state):
    result, _ = run(RECORDED / state)
    assert [f["cause"] for f in result["findings"] if f["code"] == ROOTS[state]] != []
    assert all(f["cause"] is None for f in result["findings"] if f["code"] == ROOTS[state])


def test_the_version_finding_names_the_gang_it_breaks():
    result, _ = run(RECORDED / "grove-kai0152-gang-partial")
    (kai,) = [f for f in result["findings"] if f["code"] == "orchestrator-too-old" and "KAI" in f["message"]]
    assert "v0.15.2" in kai["message"] and "DGD llm/vllm-big" in kai["message"]


def test_table_nests_consequences_under_their_cause():
    result, _ = run(RECORDED / "lws-statefulset-failedcreate")
    lines = format_doctor(result, wide=False, color=False).splitlines()
    root = next(i for i, line in enumerate(lines) if " controller-create-failed " in line)
    assert "└ group-incomplete" in lines[root + 1]


def test_requests_do_not_grow_with_the_number_of_dgds():
    """One LIST per kind: 3 DGDs (lws-healthy) and 4 (lws-volcano-gang-held) cost the same requests."""
    counts = {}
    for state in ("lws-healthy", "lws-volcano-gang-held"):
        result, counts[state] = run(RECORDED / state)
        assert len(result["deployments"]) >= 3
    assert counts["lws-healthy"] == counts["lws-volcano-gang-held"]


def test_forbidden_podgroups_are_skipped_not_a_crash(tmp_path):
    """A user without access to Volcano's PodGroups: that list is skipped with the server's message and the
    checks that need it stay silent (the recording's manifest lists the kind as forbidden)."""
    state = tmp_path / "state"
    shutil.copytree(RECORDED / "lws-volcano-gang-held", state)
    manifest = json.loads((state / "manifest.json").read_text())
    reason = 'podgroups.scheduling.volcano.sh is forbidden: User "viewer" cannot list resource "podgroups"'
    manifest["resources"] = [r for r in manifest["resources"] if r["resource"] != "podgroups"]
    manifest["forbidden"] = [{"group": "scheduling.volcano.sh", "version": "v1beta1", "resource": "podgroups",
                              "reason": reason}]
    (state / "manifest.json").write_text(json.dumps(manifest))
    result, _ = run(state)
    assert {"check": "podgroups.scheduling.volcano.sh", "reason": f"forbidden: {reason}"} in result["skipped"]
    codes = {f["code"] for f in result["findings"]}
    assert "gang-held" not in codes and "group-pending" in codes  # the pods' own words remain


def test_held_grove_gang_quotes_grove_and_the_cordoned_nodes_are_counted():
    result, _ = run(RECORDED / "grove-gang-pending")
    (held,) = [f for f in result["findings"] if f["code"] == "gang-held"]
    # the PodClique's own condition (recorded podcliques.json of grove-gang-pending)
    assert 'PodCliqueScheduled False: "Insufficient scheduled pods. expected at least: 4, found: 0"' in held["message"]
    result, _ = run(RECORDED / "lws-cordoned")
    (pending,) = [f for f in result["findings"] if f["code"] == "group-pending"]
    assert "4 of 4 nodes are cordoned (gpu-node-0, gpu-node-1, gpu-node-2, gpu-node-3)" in pending["message"]
    assert pending["hint"].startswith("kubectl uncordon gpu-node-0 gpu-node-1 gpu-node-2 gpu-node-3")


def _forbid(tmp_path, state: str, group: str, version: str, resource: str, reason: str) -> Path:
    dest = tmp_path / state
    shutil.copytree(RECORDED / state, dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest["resources"] = [r for r in manifest["resources"] if r["resource"] != resource]
    manifest["forbidden"] = [{"group": group, "version": version, "resource": resource, "reason": reason}]
    (dest / "manifest.json").write_text(json.dumps(manifest))
    return dest


def test_an_unlistable_scope_is_an_error_never_nothing_in_scope(tmp_path):
    """A token that may not list DGDs in all namespaces: doctor -A must not say "No DynamoGraphDeployments in
    scope. 0 errors" and pass; it names the verb, the resource and the scope, and exits 1."""
    from kubectl_dynamo.commands.doctor import run_doctor

    reason = ('dynamographdeployments.nvidia.com is forbidden: User "system:serviceaccount:llm:viewer" cannot list '
              'resource "dynamographdeployments" in API group "nvidia.com" at the cluster scope')
    state = _forbid(tmp_path, "lws-healthy", "nvidia.com", "v1beta1", "dynamographdeployments", reason)
    result = run_doctor(RecordedCluster(str(state)), all_namespaces=True)
    assert result.exit_code == 1
    (f,) = [f for f in result.data["findings"] if f["code"] == "permission-denied" and f["severity"] == "error"]
    assert f["message"] == f"cannot list dynamographdeployments.nvidia.com in all namespaces: {reason}"
    assert "-n NAMESPACE" in f["hint"]
    table = format_doctor(result.data, wide=False, color=False)
    assert "No DynamoGraphDeployments in scope" not in table and "could not be listed" in table


def test_unlistable_pods_are_an_error_and_other_refusals_a_warning(tmp_path):
    from kubectl_dynamo.commands.doctor import run_doctor

    reason = 'pods is forbidden: User "viewer" cannot list resource "pods" in API group "" in the namespace "llm"'
    state = _forbid(tmp_path, "lws-healthy", "", "v1", "pods", reason)
    result = run_doctor(RecordedCluster(str(state), namespace="llm"), all_namespaces=False)
    denied = [f for f in result.data["findings"] if f["code"] == "permission-denied"]
    assert [(f["severity"], f["message"]) for f in denied] == [
        ("error", f"cannot list pods in namespace llm: {reason}")]
    assert result.exit_code == 1
    # and no check claims the groups have no pods: they were not seen
    assert [f["code"] for f in result.data["findings"] if f["severity"] == "error"] == ["permission-denied"]
    assert {"check": "per-DGD checks", "reason": "pods could not be listed"} in result.data["skipped"]
    # the healthy recording with Volcano's PodGroups refused: a warning, the rest of the report stands
    reason = 'podgroups.scheduling.volcano.sh is forbidden: User "viewer" cannot list resource "podgroups"'
    state = _forbid(tmp_path / "pg", "lws-healthy", "scheduling.volcano.sh", "v1beta1", "podgroups", reason)
    result = run_doctor(RecordedCluster(str(state)), all_namespaces=True)
    (f,) = [f for f in result.data["findings"] if f["code"] == "permission-denied"]
    assert f["severity"] == "warning" and "cannot list podgroups.scheduling.volcano.sh in all namespaces" in f["message"]


def test_storageclasses_it_may_not_list_are_said_and_the_claim_still_named(tmp_path):
    """A namespace-only user on an unbound claim: doctor reads the StorageClasses only then, says it may not
    (a warning naming verb, resource and scope), and still names the claim that is not bound."""
    from kubectl_dynamo.commands.doctor import run_doctor

    reason = ('storageclasses.storage.k8s.io is forbidden: User "system:serviceaccount:llm:viewer" cannot list '
              'resource "storageclasses" in API group "storage.k8s.io" at the cluster scope')
    state = _forbid(tmp_path, "lws-direct-pvc-unbound", "storage.k8s.io", "v1", "storageclasses", reason)
    result = run_doctor(RecordedCluster(str(state), namespace="llm"), all_namespaces=False)
    (f,) = [f for f in result.data["findings"] if f["code"] == "permission-denied"]
    assert (f["severity"], f["message"]) == ("warning", f"cannot list storageclasses.storage.k8s.io at the cluster "
                                                        f"scope: {reason}")
    (pending,) = [f for f in result.data["findings"] if f["code"] == "group-pending"]
    assert "PersistentVolumeClaim llm/model-cache is not bound to a volume" in pending["message"]
