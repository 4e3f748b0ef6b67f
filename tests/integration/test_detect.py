"""``detect`` against the real control plane, one scenario per installed set (issue #2's list).

Scenarios are ordered to add CRD sets step by step; each starts from its own ``world.scenario``.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from tests.integration import world as w


@pytest.fixture(scope="module")
def world(sandbox):
    world = w.World(sandbox)
    yield world
    world.clear_objects()


def scenario(world, crds, docs=()):
    world.clear_objects()
    world.ensure(crds)
    if docs:
        world.apply(list(docs))
        world.wait_available()


def detect(sandbox, *extra, kubeconfig=None):
    proc = run_cli("detect", "-o", "json", "--kubeconfig", str(kubeconfig or sandbox.kubeconfig), *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def codes(report):
    return {p["code"] for p in report["problems"]}


def test_nothing_installed(sandbox, world):
    scenario(world, [])
    r = detect(sandbox)
    assert r["kubernetes"]["version"].startswith("v1.")
    for name in ("grove", "kai", "lws", "volcano"):
        assert r["orchestrators"][name] == {**r["orchestrators"][name], "installed": False, "version": None}
    assert r["dynamoOperator"]["installed"] is False
    assert r["dynamoOperator"]["gates"] == {"grove": False, "lws": False, "kaiScheduler": False}
    for case in ("default", "enableGroveFalse"):
        sel = r["selection"][case]
        assert sel["provider"] == "component" and sel["orchestrator"] is None
        assert sel["error"] == "no_multinode_orchestrator_available"
    assert "no-multinode-orchestrator" in codes(r)
    assert r["gpuNodes"]["count"] >= 1 and r["gpuNodes"]["allocatableGpus"] == 8 * r["gpuNodes"]["count"]


def test_lws_alone_without_volcano(sandbox, world):
    scenario(world, ["lws"], w.controllers("lws"))
    r = detect(sandbox)
    lws = r["orchestrators"]["lws"]
    assert lws == {"installed": True, "version": "v0.10.0", "healthy": True, "disaggregatedSet": True}
    assert r["dynamoOperator"]["gates"]["lws"] is False  # LWS needs Volcano too
    assert r["selection"]["default"]["error"] == "no_multinode_orchestrator_available"
    assert {"lws-without-volcano", "no-multinode-orchestrator"} <= codes(r)


def test_lws_and_volcano(sandbox, world):
    scenario(world, ["lws", "volcano"], w.controllers("lws") + w.controllers("volcano") + w.volcano_queues())
    world.set_status("queues.scheduling.volcano.sh", "default", {"state": "Open"})
    r = detect(sandbox)
    vol = r["orchestrators"]["volcano"]
    assert (vol["installed"], vol["version"], vol["healthy"]) == (True, "v1.15.1", True)
    assert {"name": "default", "state": "Open"} in vol["queues"]
    for case in ("default", "enableGroveFalse"):
        sel = r["selection"][case]
        assert (sel["provider"], sel["orchestrator"], sel["scheduler"], sel["error"]) == \
               ("component", "lws", "volcano", None)
    assert "lws-without-volcano" not in codes(r) and "no-multinode-orchestrator" not in codes(r)


def test_all_four(sandbox, world):
    scenario(world, ["grove", "kai", "lws", "volcano"],
             w.controllers("grove") + w.controllers("kai") + w.controllers("lws") + w.controllers("volcano")
             + w.kai_queues() + w.volcano_queues())
    r = detect(sandbox)
    assert all(r["orchestrators"][n]["installed"] and r["orchestrators"][n]["healthy"]
               for n in ("grove", "kai", "lws", "volcano"))
    assert r["orchestrators"]["grove"]["version"] == "v0.1.0-alpha.11"
    assert r["orchestrators"]["kai"]["version"] == "v0.17.0"
    d, off = r["selection"]["default"], r["selection"]["enableGroveFalse"]
    assert (d["provider"], d["orchestrator"], d["scheduler"], d["queue"], d["error"]) == \
           ("grove", "grove", "kai-scheduler", "dynamo", None)
    assert (off["provider"], off["orchestrator"], off["scheduler"], off["error"]) == ("component", "lws", "volcano", None)


def test_grove_kai_with_dynamo_queue(sandbox, world):
    scenario(world, ["grove", "kai"], w.controllers("grove") + w.controllers("kai") + w.kai_queues())
    r = detect(sandbox)
    queues = {q["name"]: q for q in r["orchestrators"]["kai"]["queues"]}
    assert queues["dynamo"] == {"name": "dynamo", "parent": "dynamo-default", "leaf": True}
    assert queues["dynamo-default"]["leaf"] is False
    d = r["selection"]["default"]
    assert (d["provider"], d["orchestrator"], d["scheduler"], d["queue"], d["error"]) == \
           ("grove", "grove", "kai-scheduler", "dynamo", None)
    assert "exists" in d["reason"]
    # Opting out of Grove with no LWS leaves nothing for a multinode DGD.
    assert r["selection"]["enableGroveFalse"]["error"] == "no_multinode_orchestrator_available"
    assert not {p["code"] for p in r["problems"] if p["severity"] == "error"}


def test_grove_kai_without_dynamo_queue(sandbox, world):
    scenario(world, ["grove", "kai"], w.controllers("grove") + w.controllers("kai") + w.kai_queues(with_dynamo=False))
    r = detect(sandbox)
    d = r["selection"]["default"]
    assert (d["scheduler"], d["queue"], d["error"]) == ("kai-scheduler", "dynamo", "kai_queue_not_found")
    assert "queue 'dynamo' not found in cluster" in d["reason"]
    assert "kai-queue-missing" in codes(r)


def test_chart_install_with_grove_disabled_while_grove_present(sandbox, world):
    scenario(world, ["grove", "kai", "dynamo"],
             w.controllers("grove") + w.controllers("kai") + w.kai_queues()
             + w.dynamo_operator(version="1.5.0", grove=False, kai=True))
    r = detect(sandbox)
    op = r["dynamoOperator"]
    assert (op["installed"], op["version"]) == (True, "1.5.0")
    assert op["gates"] == {"grove": False, "lws": False, "kaiScheduler": True}
    d = r["selection"]["default"]
    assert (d["provider"], d["error"]) == ("component", "no_multinode_orchestrator_available")
    assert "Grove is not enabled in the operator" in d["reason"]
    assert {"grove-disabled", "no-multinode-orchestrator"} <= codes(r)


def test_version_shows_server_and_operator(sandbox, world):
    # Runs in the previous scenario's state (operator 1.5.0 installed).
    proc = run_cli("version", "--kubeconfig", str(sandbox.kubeconfig))
    assert proc.returncode == 0, proc.stderr
    assert "Server Version: v1.33" in proc.stdout
    assert "Dynamo Operator Version: 1.5.0 (dynamo-system/dynamo-platform-dynamo-operator-controller-manager)" \
        in proc.stdout


RBAC_NO_CRDS = [
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "kd-detect-no-crds"},
     "rules": [{"apiGroups": [""], "resources": ["nodes", "configmaps"], "verbs": ["get", "list"]},
               {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list"]},
               {"apiGroups": ["scheduling.run.ai", "scheduling.volcano.sh"], "resources": ["queues"],
                "verbs": ["get", "list"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
     "metadata": {"name": "kd-detect-no-crds"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kd-detect-no-crds"},
     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "no-crds"}]},
]


def test_user_who_may_not_list_crds(sandbox, world):
    scenario(world, ["grove", "kai"], w.controllers("grove") + w.controllers("kai") + w.kai_queues() + RBAC_NO_CRDS)
    kubeconfig = sandbox.user("no-crds")
    denied = sandbox.kubectl("get", "crd", kubeconfig=kubeconfig, check=False)
    assert denied.returncode != 0 and "forbidden" in denied.stderr.lower()
    r = detect(sandbox, kubeconfig=kubeconfig)
    # Discovery is open to every authenticated user: detect needs no CRD access.
    assert r["orchestrators"]["grove"]["installed"] and r["orchestrators"]["kai"]["installed"]
    assert r["selection"]["default"]["orchestrator"] == "grove"
    assert "permission-denied" not in codes(r)


def test_user_with_no_read_access_gets_unknowns(sandbox, world):
    # No RBAC at all: every list is forbidden, detect still answers from discovery.
    kubeconfig = sandbox.user("nobody")
    r = detect(sandbox, kubeconfig=kubeconfig)
    assert r["orchestrators"]["grove"]["installed"] is True
    assert r["orchestrators"]["grove"]["version"] is None and r["orchestrators"]["grove"]["healthy"] is None
    msgs = [p["message"] for p in r["problems"] if p["code"] == "permission-denied"]
    assert any(m.startswith("controller deployments unknown: forbidden") for m in msgs)
    assert any(m.startswith("KAI queues unknown: forbidden") for m in msgs)
    # Queues unknown: the KAI queue is reported but not checked.
    assert r["selection"]["default"]["error"] is None


def test_unreachable_cluster_exits_3(sandbox, tmp_path):
    cfg = tmp_path / "kubeconfig"
    cfg.write_text(sandbox.kubeconfig.read_text().replace(
        (sandbox.dir / "server").read_text().strip(), "https://127.0.0.1:1"))
    proc = run_cli("detect", "--kubeconfig", str(cfg))
    assert proc.returncode == 3
    assert proc.stderr.startswith("error: cannot reach the cluster at https://127.0.0.1:1")
    assert "Traceback" not in proc.stderr


def test_unauthorized_exits_3(sandbox, tmp_path):
    cfg = yaml_kubeconfig_with_token(sandbox, tmp_path)
    proc = run_cli("detect", "--kubeconfig", str(cfg))
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.startswith("error: unauthorized")


def yaml_kubeconfig_with_token(sandbox, tmp_path):
    import yaml

    cfg = yaml.safe_load(sandbox.kubeconfig.read_text())
    cfg["users"][0]["user"] = {"token": "not-a-valid-token"}
    path = tmp_path / "bad-token"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_context_namespace_and_flags_after_subcommand(sandbox, tmp_path):
    import yaml

    cfg = yaml.safe_load(sandbox.kubeconfig.read_text())
    cfg["contexts"].append({"name": "other", "context": {**cfg["contexts"][0]["context"], "namespace": "team-a"}})
    path = tmp_path / "two-contexts"
    path.write_text(yaml.safe_dump(cfg))
    from kubectl_dynamo.cluster.client import Cluster, Target

    assert Cluster(Target(kubeconfig=str(path), context="other")).namespace == "team-a"
    assert Cluster(Target(kubeconfig=str(path))).namespace == "default"
    assert Cluster(Target(kubeconfig=str(path), context="other", namespace="x")).namespace == "x"
    # KUBECONFIG with several paths (kubectl's merge): the context lives in the second file.
    env = {"KUBECONFIG": f"{tmp_path / 'missing'}:{path}"}
    proc = run_cli("version", "--context", "other", "-o", "json", env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["serverVersion"].startswith("v1.33")
    bad = run_cli("version", "--context", "nope", "--kubeconfig", str(path))
    assert bad.returncode == 2 and bad.stderr.startswith('error: context "nope" does not exist in the kubeconfig')
