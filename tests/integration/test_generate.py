"""`generate dgd` / `upgrade dgd` against the real API server: server-side dry runs and live DGDs.

The DGD CRD's conversion webhook (served by the Dynamo operator) does not run in the sandbox, so
only nvidia.com/v1beta1 (the storage version) can be sent: a v1alpha1 request would need the
webhook to convert it. Upgraded manifests are v1beta1, which is exactly what is dry-run here.
"""

from __future__ import annotations

import functools
import json
import time

import pytest
import yaml

from tests.conftest import REPO, run_cli
from tests.integration import world as w

DATA = REPO / "tests" / "data" / "upgrade"


@functools.cache
def _crd_names(project: str):
    # world.crd_names parses multi-MB CRDs with pure-Python YAML on every discovery poll (~22 s per
    # round); the C loader and a cache give the same names in well under a second.
    names = []
    for f in w.crd_files(project):
        for doc in yaml.load_all(f.read_text(), Loader=yaml.CSafeLoader):
            if doc and doc.get("kind") == "CustomResourceDefinition":
                names.append(doc["metadata"]["name"])
    return names


@pytest.fixture(scope="module")
def world(sandbox):
    original, w.crd_names = w.crd_names, _crd_names
    world = w.World(sandbox)
    try:
        world.clear_objects()
        world.ensure(["dynamo"])
        yield world
        sandbox.kubectl("delete", "dynamographdeployments.nvidia.com", "--all", "-n", "default",
                        "--ignore-not-found", check=False)
        world.clear_objects()
    finally:
        w.crd_names = original


def cli(sandbox, *args, input=None):
    return run_cli(*args, "--kubeconfig", str(sandbox.kubeconfig), input=input)


@pytest.mark.parametrize("flags", [
    ["--backend", "vllm", "--nodes", "2", "--gpus-per-node", "8"],
    ["--backend", "sglang", "--orchestrator", "lws", "--disaggregated", "--prefill-nodes", "2", "--decode-nodes", "4"],
    ["--backend", "trtllm", "--queue", "team-a", "--compilation-cache", "cache:/cache", "--shared-memory", "16Gi"],
])
def test_generated_dgd_is_accepted_by_server_dry_run(sandbox, world, flags):
    proc = cli(sandbox, "generate", "dgd", "gen-test", "--model", "Qwen/Qwen3-8B", *flags, "--dry-run=server")
    assert proc.returncode == 0, proc.stderr
    assert "server dry run: accepted nvidia.com/v1beta1 dynamographdeployment default/gen-test" in proc.stderr
    assert yaml.safe_load(proc.stdout)["apiVersion"] == "nvidia.com/v1beta1"
    # a dry run persists nothing
    got = sandbox.kubectl("get", "dynamographdeployments.nvidia.com", "-n", "default", "-o", "name").stdout
    assert "gen-test" not in got


def _role_templates_dry_run(sandbox):
    return cli(sandbox, "generate", "dgd", "gen-roles", "--backend", "vllm", "--model", "m", "--role-templates",
               "--dry-run=server")


def _until(sandbox, done, timeout=60.0):
    """The API server takes a CRD's new schema a moment after the update: poll the dry run for its final word."""
    deadline = time.monotonic() + timeout
    while True:
        proc = _role_templates_dry_run(sandbox)
        if done(proc) or time.monotonic() > deadline:
            return proc


def test_role_templates_need_a_1_6_crd(sandbox, world):
    """The world serves the DGD CRD of a 1.6 install (components[].roles) and accepts role templates; the
    bundled 1.5.0 CRD does not have the field: strict field validation says so, instead of the server
    pruning the role templates in silence."""
    proc = _role_templates_dry_run(sandbox)
    assert proc.returncode == 0 and "accepted nvidia.com/v1beta1 dynamographdeployment default/gen-roles" in proc.stderr
    sandbox.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(w.DGD_CRD))
    try:
        proc = _until(sandbox, lambda p: p.returncode != 0)
        assert proc.returncode == 1 and proc.stdout == ""
        assert proc.stderr.startswith("error: server dry run rejected gen-roles: ")
        assert "roles" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    finally:
        sandbox.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(w.dgd_crd()))
        assert _until(sandbox, lambda p: p.returncode == 0).returncode == 0


def test_upgraded_manifest_is_accepted_by_server_dry_run(sandbox, world):
    proc = cli(sandbox, "upgrade", "dgd", "-f", str(DATA / "commented-v1alpha1.yaml"), "--dry-run=server")
    assert proc.returncode == 0, proc.stderr
    assert "accepted nvidia.com/v1beta1 dynamographdeployment default/llama-multinode" in proc.stderr
    assert "# our KAI queue" in proc.stdout


def test_invalid_dgd_is_rejected_with_the_servers_message(sandbox, world):
    text = (DATA / "commented-v1alpha1.yaml").read_text().replace("nodeCount: 2", "nodeCount: 1")
    proc = cli(sandbox, "upgrade", "dgd", "-f", "-", "--dry-run=server", input=text)
    assert proc.returncode == 1 and proc.stdout == ""
    err = proc.stderr.strip().splitlines()[-1]
    assert err.startswith("error: server dry run rejected llama-multinode: ")
    assert "nodeCount" in err and "should be greater than or equal to 2" in err


def _apply(sandbox, doc):
    sandbox.kubectl("apply", "-f", "-", input=json.dumps(doc))


def test_live_v1beta1_dgd_is_already_upgraded(sandbox, world):
    doc = yaml.safe_load(run_cli("generate", "dgd", "live-beta", "--backend", "vllm", "--model", "m").stdout)
    _apply(sandbox, doc)
    proc = cli(sandbox, "upgrade", "dgd", "live-beta", "-n", "default")
    assert proc.returncode == 0 and proc.stdout == ""
    assert "already nvidia.com/v1beta1; nothing to upgrade" in proc.stderr
    proc = cli(sandbox, "upgrade", "dgd", "missing-dgd", "-n", "default")
    assert proc.returncode == 1 and "not found" in proc.stderr


def test_live_dgd_written_as_v1alpha1_is_upgraded_from_its_last_applied_manifest(sandbox, world):
    """What kubectl apply leaves on an object authored as v1alpha1 (through the webhook): the stored
    v1beta1 object plus the user's v1alpha1 manifest in last-applied-configuration."""
    alpha = yaml.safe_load((DATA / "commented-v1alpha1.yaml").read_text().split("---\n")[1])
    alpha["metadata"]["name"] = "live-alpha"
    stored = yaml.safe_load(run_cli("upgrade", "dgd", "-f", "-", input=yaml.safe_dump(alpha)).stdout)
    stored["metadata"].setdefault("annotations", {}).update({
        "kubectl.kubernetes.io/last-applied-configuration": json.dumps(alpha),
        "nvidia.com/dynamo-operator-origin-version": "1.4.0"})
    sandbox.kubectl("create", "-f", "-", input=json.dumps(stored))
    proc = cli(sandbox, "upgrade", "dgd", "live-alpha", "-n", "default", "--topology-aliases", "--dry-run=server")
    assert proc.returncode == 0, proc.stderr
    out = yaml.safe_load(proc.stdout)
    assert out["apiVersion"] == "nvidia.com/v1beta1" and out["metadata"]["namespace"] == "default"
    assert [c["name"] for c in out["spec"]["components"]] == ["Frontend", "decode"]
    assert "accepted nvidia.com/v1beta1 dynamographdeployment default/live-alpha (updated)" in proc.stderr
    assert "created by Dynamo operator 1.4.0" in proc.stderr and "immutable" in proc.stderr
    assert "expect downtime" in proc.stderr and "kubectl delete" in proc.stderr
