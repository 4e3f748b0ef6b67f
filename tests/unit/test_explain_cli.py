"""`explain dgd` as a user runs it: offline files, stdin, field docs, exit codes."""

import json

import pytest
from click.testing import CliRunner

from kubectl_dynamo.cli import PROG, cli
from kubectl_dynamo.commands.explain import explain_documents
from kubectl_dynamo.inputs.manifests import load
from tests.conftest import CORPUS_DIR, REPO, run_cli

CORPUS = sorted(CORPUS_DIR.rglob("*.yaml"))
MIXED = REPO / "tests" / "data" / "explain" / "mixed.yaml"


def invoke(*args, input=None):
    return CliRunner().invoke(cli, list(args), prog_name=PROG, input=input)


def test_corpus_present():
    assert len(CORPUS) == 71


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_corpus_explains_without_a_crash(path):
    result = explain_documents(load(str(path)))
    assert result["items"], "every corpus file holds a DGD"
    for item in result["items"]:
        for comp in item["components"]:
            roles = [r["name"] for r in comp["roles"]]
            assert roles == (["leader", "worker"] if comp["multinode"] else ["main"])
        assert not [f for f in item["findings"] if f["code"] == "schema-invalid"], item["findings"]


def test_multi_document_skips_other_kinds_and_reports_errors():
    r = invoke("explain", "dgd", "-f", str(MIXED), "-o", "json")
    assert r.exit_code == 1  # the TP mismatch is an error
    data = json.loads(r.output)
    assert data["skipped"] == [{"document": 1, "kind": "ConfigMap", "reason": "not a DynamoGraphDeployment"}]
    (item,) = data["items"]
    assert any(f["code"] == "parallelism-mismatch" and f["severity"] == "error" for f in item["findings"])


def test_single_dgd_json_is_the_contract_object():
    path = CORPUS_DIR / "v1.0.1" / "examples_backends_vllm_deploy_disagg-multinode.yaml"
    r = invoke("explain", "dgd", "-f", str(path), "-o", "json")
    data = json.loads(r.output)
    assert set(data) == {"name", "namespace", "apiVersion", "operatorVersion", "originVersion", "provider",
                         "orchestrator", "scheduler", "queue", "components", "findings"}
    comp = next(c for c in data["components"] if c["name"] == "decode")
    assert set(comp) >= {"name", "type", "backend", "multinode", "nodeCount", "gpusPerPod", "totalGpus", "mode",
                         "roles"}
    assert comp["mode"] in ("mp", "ray", "data-parallel", "elastic-ep", "none")


def test_stdin_and_orchestrator_flag():
    r = invoke("explain", "dgd", "-f", "-", "--orchestrator", "lws", "-o", "json", input=MIXED.read_text())
    item = json.loads(r.output)["items"][0]
    assert (item["provider"], item["orchestrator"]) == ("component", "lws")
    worker = item["components"][0]["roles"][1]["podSpec"]["containers"][0]
    assert "$(DYNAMO_LEADER_ADDRESS)" in " ".join(worker.get("args") or []) or worker["command"]


def test_human_output_shows_roles_and_findings():
    r = invoke("explain", "dgd", "-f", str(MIXED))
    assert "component decode (decode, vllm): 2 nodes x 4 GPUs = 8 GPUs" in r.output
    assert "role leader x1" in r.output and "role worker x1" in r.output
    assert "parallelism-mismatch" in r.output
    assert "skipped document 1 (ConfigMap)" in r.output


def test_field_docs():
    r = invoke("explain", "dgd.spec.components.multinode")
    assert r.exit_code == 0
    assert "FIELD: multinode <Object>" in r.output and "MULTINODE:" in r.output and "nodeCount" in r.output
    r = invoke("explain", "dgd.spec.components", "--recursive", "-o", "json")
    names = [f["name"] for f in json.loads(r.output)["fields"]]
    assert "roles" in names and "nodeCount" in names
    r = invoke("explain", "dgd.spec.services", "--api-version", "v1alpha1")
    assert r.exit_code == 0 and "services" in r.output


@pytest.mark.parametrize("args,code,message", [
    (["explain", "dgd.spec.nope"], 2, 'error: field "nope" does not exist'),
    (["explain", "pods", "-f", "x"], 2, 'error: unknown resource "pods"'),
    (["explain", "dgd"], 2, "error: explain dgd needs NAME"),
    (["explain", "dgd", "-f", "/nonexistent.yaml"], 2, "error: /nonexistent.yaml: no such file"),
])
def test_bad_input_is_one_line(args, code, message):
    proc = run_cli(*args)
    assert proc.returncode == code
    assert proc.stderr.startswith(message) and "Traceback" not in proc.stderr


def test_invalid_yaml_names_the_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: DynamoGraphDeployment\nmetadata: [unclosed\n")
    proc = run_cli("explain", "dgd", "-f", str(bad))
    assert proc.returncode == 2 and "invalid YAML" in proc.stderr and "line" in proc.stderr


def test_schema_errors_are_findings(tmp_path):
    doc = MIXED.read_text().split("---\n", 1)[1].replace("nodeCount: 2", "nodeCount: 2, bogus: true")
    f = tmp_path / "x.yaml"
    f.write_text(doc)
    data = json.loads(invoke("explain", "dgd", "-f", str(f), "-o", "json").output)
    assert any(x["code"] == "schema-invalid" and "bogus" in x["message"] for x in data["findings"])


def test_explain_offline_never_imports_kubernetes():
    from tests.unit.test_cli import _imports_kubernetes

    assert _imports_kubernetes("explain", "dgd", "-f", str(MIXED)) == "CLEAN"


def test_objects_yaml_is_a_kubernetes_stream_and_names_list_them():
    """--objects: -o yaml prints the workload objects (the oracle goldens check their content),
    -o name names them, -o json adds objects and related to each item."""
    import yaml

    src = str(CORPUS_DIR / "v1.0.1" / "examples_backends_vllm_deploy_disagg-multinode.yaml")
    r = invoke("explain", "dgd", "-f", src, "--orchestrator", "lws", "-o", "yaml", "--objects", "--operator-version", "1.5.0")
    assert r.exit_code == 0, r.output
    objs = list(yaml.safe_load_all(r.output))
    assert [(o["apiVersion"], o["kind"]) for o in objs] == [
        ("apps/v1", "Deployment"), ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"),
        ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")]
    # The worker hash as the operator computes it (goldens/corpus/v1.0.1/…disagg-multinode.json: dcdName).
    assert objs[1]["metadata"]["name"] == "vllm-disagg-decode-3f2061bf-0"
    assert objs[1]["spec"]["leaderWorkerTemplate"]["size"] == 2
    r = invoke("explain", "dgd", "-f", src, "-o", "name", "--objects")
    assert r.output.splitlines() == ["podcliqueset.grove.io/vllm-disagg"]
    data = json.loads(invoke("explain", "dgd", "-f", src, "-o", "json", "--objects").output)
    assert data["objects"][0]["kind"] == "PodCliqueSet"
    assert "vllm-disagg-k8s-service-discovery" in data["related"]["serviceAccounts"]
    # Kubernetes discovery: one Service per component (graph.go GenerateComponentService @2a6da14c).
    assert data["related"]["services"] == ["vllm-disagg-decode", "vllm-disagg-frontend", "vllm-disagg-prefill"]
    assert "objects" not in json.loads(invoke("explain", "dgd", "-f", src, "-o", "json").output)


def test_diff_shows_what_the_operator_changes_per_role():
    """--diff: the mp flags the operator inserts into the leader's launch, the env and probes it adds,
    the wait-for-leader init container of mp workers; -o json carries the same as roles[].changes."""
    src = str(CORPUS_DIR / "v1.0.1" / "examples_backends_vllm_deploy_disagg-multinode.yaml")
    r = invoke("explain", "dgd", "-f", src, "--operator-version", "1.5.0", "--diff")
    assert r.exit_code == 0, r.output
    leader = r.output.split("decode / leader x1:")[1].split("decode / worker")[0]
    assert "flags inserted     args  --distributed-executor-backend mp --nnodes 2" in leader
    assert "DYN_NAMESPACE_WORKER_SUFFIX" in invoke("explain", "dgd", "-f", src, "--diff", "-o", "wide").output
    worker = r.output.split("decode / worker x1:")[1].split("prefill / leader")[0]
    assert "init container added (1) wait-for-leader-mp" in worker
    data = json.loads(invoke("explain", "dgd", "-f", src, "--diff", "-o", "json").output)
    changes = data["components"][1]["roles"][0]["changes"]
    assert {"what": "probe added", "name": "startupProbe"}.items() <= next(
        c for c in changes if c["name"] == "startupProbe").items()


def test_objects_related_services_model_and_elastic_ep():
    """The Services the operator creates besides the component ones (ai-dynamo/dynamo@2a6da14c
    internal/dynamo/model_service.go: dynamo-model-<sha256(model)[:8]>; graph.go
    ElasticEPLeaderServiceName: <dgd>-<component>-ray for a single-pod elastic-EP leader)."""
    import hashlib

    docs = load(str(REPO / "tests" / "data" / "oracle" / "cases" / "vllm-v1beta1.yaml"))
    eep = next(i for i in explain_documents(docs, orchestrator="grove", objects=True)["items"] if i["name"] == "vllm-eep")
    assert "vllm-eep-single-ray" in eep["related"]["services"]
    assert "vllm-eep-worker-ray" not in eep["related"]["services"]  # multinode: no leader Service
    lora = load(str(CORPUS_DIR / "v1.0.1" / "examples_backends_vllm_deploy_lora_agg_lora.yaml"))
    item = explain_documents(lora, objects=True)["items"][0]  # modelRef.name: Qwen/Qwen3-0.6B
    assert f"dynamo-model-{hashlib.sha256(b'Qwen/Qwen3-0.6B').hexdigest()[:8]}" in item["related"]["services"]


def test_the_collector_is_paused_while_explain_runs_and_restored_after(tmp_path, monkeypatch):
    """explain reads and renders with the cyclic collector off, whatever it ends with (output,
    findings, unreadable input), and turns it on again afterwards."""
    import gc

    from kubectl_dynamo.cli import main
    from kubectl_dynamo.inputs import manifests

    enabled_while_reading = []
    real_load = manifests.load

    def load_and_look(*args, **kwargs):
        enabled_while_reading.append(gc.isenabled())
        return real_load(*args, **kwargs)

    monkeypatch.setattr(manifests, "load", load_and_look)
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n")
    for path, code in ((CORPUS[0], 0), (MIXED, 1), (bad, 2)):
        assert main(["explain", "dgd", "-f", str(path)]) == code
        assert gc.isenabled()
    assert enabled_while_reading == [False, False, False]


ROLLING = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}


@pytest.mark.parametrize("annotations, strategy", [
    ({}, ROLLING),
    ({"nvidia.com/deployment-rolling-update-max-unavailable": "1",
      "nvidia.com/deployment-rolling-update-max-surge": "50%"},
     {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "50%"}}),
    ({"nvidia.com/deployment-strategy": "Recreate"}, {"type": "Recreate"}),
    ({"nvidia.com/deployment-strategy": "recreate"}, ROLLING),  # deployment_strategy_test.go: no match, RollingUpdate
])
def test_objects_deployment_strategy_follows_the_component_annotations(tmp_path, annotations, strategy):
    """A single-node component's Deployment takes its strategy from the component's annotations
    (ai-dynamo/dynamo@2a6da14c internal/controller/dynamocomponentdeployment_controller.go
    generateDeployment, getDeploymentRollingUpdateMaxSurgeAndMaxUnavailable: intstr.Parse of each, 25%
    when unset; deployment_strategy.go: exactly "Recreate" recreates); the recorded real operator
    rendered the default (tests/data/recorded/lws-rollout-single-node/01 Deployment agg-worker-4c5db9b9)."""
    import yaml

    doc = yaml.safe_load((REPO / "tests" / "data" / "recorded" / "manifests" / "lws" / "rollout-agg.yaml").read_text())
    worker = next(c for c in doc["spec"]["components"] if c["name"] == "worker")
    worker["podTemplate"]["metadata"] = {"annotations": annotations}
    src = tmp_path / "agg.yaml"
    src.write_text(yaml.safe_dump(doc))
    item = explain_documents(load(str(src)), orchestrator="lws", objects=True)["items"][0]
    (deployment,) = [o for o in item["objects"] if o["kind"] == "Deployment" and o["metadata"]["name"].startswith("agg-worker")]
    assert deployment["spec"]["strategy"] == strategy
