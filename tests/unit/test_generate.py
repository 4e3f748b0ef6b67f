"""`generate dgd`: the GPU arithmetic, the role templates, and the judge (schema, kubernetes-validate,
the operator simulation) over every backend × orchestrator × role-templates × API version."""

from __future__ import annotations

import itertools
import json

import pytest
import yaml
from click.testing import CliRunner

from kubectl_dynamo.cli import PROG, cli
from kubectl_dynamo.commands import generate as gen
from kubectl_dynamo.errors import DynamoError
from kubectl_dynamo.operator import api as op_api
from kubectl_dynamo.operator.render import explain_dgd
from kubectl_dynamo.validation.schema import pod_template_errors, schema_errors
from tests.conftest import run_cli


def spec(**kw):
    base = dict(name="demo", backend="vllm", model="Qwen/Qwen3-8B",
                engines=[gen.engine("worker", 2, 8, None, None, None)])
    base.update(kw)
    return gen.GenerateSpec(**base)


@pytest.fixture(autouse=True, scope="module")
def cached_kubernetes_schemas():
    """kubernetes-validate re-reads its JSON schemas on every call (~30 ms); cache them here."""
    import functools

    import kubernetes_validate.utils as kv

    original = kv.schema_contents
    kv.schema_contents = functools.lru_cache(maxsize=None)(original)
    yield
    kv.schema_contents = original


def judge(doc, orchestrator, operator_version=gen.DEFAULT_OPERATOR_VERSION):
    """What the issue calls valid: CRD schema, kubernetes-validate, no error finding from explain."""
    assert schema_errors(doc) == []
    for where, tpl in gen.pod_templates(doc):
        assert pod_template_errors(tpl) == [], where
    report = explain_dgd(doc, orchestrator=orchestrator, operator_version=operator_version)
    assert [f for f in report["findings"] if f["severity"] == "error"] == []
    for comp in report["components"]:  # and the pods the operator renders from it
        for role in comp["roles"]:
            assert pod_template_errors({"spec": role["podSpec"]}) == [], (comp["name"], role["name"])
    return report


MATRIX = [(b, o, rt, api, dis) for b, o, rt, api, dis in itertools.product(
    op_api.BACKENDS, gen.ORCHESTRATORS, (False, True), gen.API_VERSIONS, (False, True))
    if not (rt and api == op_api.V1ALPHA1)]  # refused: roles do not exist in v1alpha1


@pytest.mark.parametrize("backend,orchestrator,role_templates,api,disaggregated", MATRIX)
def test_generate_matrix_validates_and_explains_clean(backend, orchestrator, role_templates, api, disaggregated):
    engines = ([gen.engine("prefill", 2, 4, None, None, None), gen.engine("decode", 3, 4, None, None, 2)]
               if disaggregated else [gen.engine("worker", 2, 8, None, None, None)])
    s = spec(backend=backend, orchestrator=orchestrator, role_templates=role_templates, api_version=api,
             engines=engines, queue="team-a" if orchestrator == "grove" else None,
             compilation_cache=("compile-cache", "/cache"), shared_memory="16Gi",
             leader_node_selector={"example.com/engine-role": "leader"} if role_templates else {})
    doc = gen.build(s)
    report = judge(doc, orchestrator)
    engines_out = [c for c in report["components"] if c["type"] != "frontend"]
    for c, e in zip(sorted(engines_out, key=lambda c: c["name"]), sorted(engines, key=lambda e: e.name)):
        assert c["nodeCount"] == e.nodes and c["gpusPerPod"] == e.gpus_per_node
        assert c["totalGpus"] == e.total_gpus
        assert [r["name"] for r in c["roles"]] == ["leader", "worker"]
        assert c["mode"] == {"vllm": "mp", "sglang": "sglang", "trtllm": "mpi"}[backend]
    expected_provider = "grove" if orchestrator == "grove" else "component"
    assert report["provider"] == expected_provider
    anns = doc["metadata"].get("annotations") or {}
    assert (anns.get(op_api.ANN_ENABLE_GROVE) == "false") == (orchestrator == "lws")
    assert (anns.get(op_api.ANN_KAI_QUEUE) == "team-a") == (orchestrator == "grove")


def test_role_templates_match_the_seed_example():
    doc = gen.build(spec(engines=[gen.engine("worker", 2, 1, None, None, None)], frontend=False,
                         role_templates=True,
                         leader_node_selector={"example.com/engine-role": "leader"},
                         worker_node_selector={"example.com/engine-role": "worker"}))
    comp = doc["spec"]["components"][0]
    assert "podTemplate" not in comp and comp["multinode"] == {"nodeCount": 2}
    leader, worker = (r["podTemplate"]["spec"] for r in comp["roles"])
    base = ["--model", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2", "--distributed-executor-backend", "mp",
            "--nnodes", "2", "--node-rank", "$(DYNAMO_RANK)", "--master-addr", "$(DYNAMO_LEADER_ADDRESS)"]
    assert leader["containers"][0]["args"] == base
    assert worker["containers"][0]["args"] == base + ["--headless"]
    assert leader["containers"][0]["command"] == ["python3", "-m", "dynamo.vllm"]
    assert leader["nodeSelector"] == {"example.com/engine-role": "leader"}
    assert worker["nodeSelector"] == {"example.com/engine-role": "worker"}
    assert leader["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "1"}}


def test_sglang_and_trtllm_role_templates():
    doc = gen.build(spec(backend="sglang", role_templates=True, frontend=False))
    leader = doc["spec"]["components"][0]["roles"][0]["podTemplate"]["spec"]["containers"][0]
    text = " ".join(leader["args"])
    assert "--dist-init-addr $(DYNAMO_LEADER_ADDRESS):29500 --nnodes 2 --node-rank $(DYNAMO_RANK)" in text

    doc = gen.build(spec(backend="trtllm", role_templates=True, frontend=False, orchestrator="lws",
                         leader_image="leader:1", worker_image="worker:1"))
    leader, worker = (r["podTemplate"]["spec"]["containers"][0] for r in doc["spec"]["components"][0]["roles"])
    assert worker["command"] == ["/bin/sh", "-c"] and "sshd -D" in worker["args"][0] and "Port 2222" in worker["args"][0]
    assert "mpirun" in leader["args"][0] and "-n 16" in leader["args"][0]
    assert "trtllm-llmapi-launch python3 -m dynamo.trtllm" in leader["args"][0]
    assert (leader["image"], worker["image"]) == ("leader:1", "worker:1")


def test_without_role_templates_the_operator_owns_topology():
    for backend in op_api.BACKENDS:
        doc = gen.build(spec(backend=backend))
        args = " ".join(doc["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["args"])
        for flag in ("--nnodes", "--node-rank", "--master-addr", "--dist-init-addr", "DYNAMO_"):
            assert flag not in args


def test_v1alpha1_shape():
    doc = gen.build(spec(api_version=op_api.V1ALPHA1, compilation_cache=("cache", None), shared_memory="8Gi"))
    svc = doc["spec"]["services"]["worker"]
    assert svc["resources"] == {"limits": {"gpu": "8"}}
    assert svc["extraPodSpec"]["mainContainer"]["command"] == ["python3", "-m", "dynamo.vllm"]
    assert svc["volumeMounts"] == [{"name": "cache", "useAsCompilationCache": True}]
    assert svc["sharedMemory"] == {"size": "8Gi"} and svc["multinode"] == {"nodeCount": 2}


def test_default_tp_and_dp():
    e = gen.engine("worker", 4, 8, None, 2, 3)
    assert (e.tp, e.pp, e.replicas, e.total_gpus) == (16, 2, 3, 96)
    gen.check_sizing(e)


@pytest.mark.parametrize("nodes,gpus,tp,pp,expected", [
    (2, 8, 4, 1, ["--tp 16", "--tp 8 --pp 2", "--gpus-per-node 2"]),
    (2, 8, 32, 1, ["--tp 16", "--tp 8 --pp 2", "--nodes 4", "--gpus-per-node 16"]),
    (3, 8, 16, 1, ["--tp 24", "--tp 8 --pp 3", "--nodes 2"]),
])
def test_invalid_gpu_arithmetic_shows_nearest_choices(nodes, gpus, tp, pp, expected):
    with pytest.raises(gen.SpecError) as err:
        gen.check_sizing(gen.Engine("worker", "worker", nodes, gpus, tp, pp))
    assert [c.split("  (")[0] for c in err.value.choices] == expected
    for choice in err.value.choices:  # every suggestion is itself valid
        flags = dict(zip(*[iter(choice.split("  (")[0].split())] * 2))
        n = int(flags.get("--nodes", nodes))
        g = int(flags.get("--gpus-per-node", gpus))
        t = int(flags.get("--tp", tp))
        p = int(flags.get("--pp", pp if "--tp" not in flags else 1))
        gen.check_sizing(gen.Engine("worker", "worker", n, g, t, p))


@pytest.mark.parametrize("kw,message", [
    (dict(role_templates=True, operator_version="1.5.0"), "needs Dynamo operator >= 1.6.0"),
    (dict(role_templates=True, api_version=op_api.V1ALPHA1), "needs nvidia.com/v1beta1"),
    (dict(backend="sglang", compilation_cache=("c", None)), "needs PVC:PATH"),
    (dict(queue="q", orchestrator="lws"), "only Grove uses"),
    (dict(worker_image="x"), "need --role-templates"),
    (dict(name="Bad_Name"), "invalid name"),
])
def test_refusals(kw, message):
    with pytest.raises(gen.SpecError, match=message):
        gen.build(spec(**kw))


# ------------------------------------------------------------------------------ CLI

class Outcome:
    def __init__(self, result):
        self.output = result.output
        exc = result.exception
        # DynamoError carries the exit code main() would return
        self.exit_code = exc.exit_code if isinstance(exc, DynamoError) else result.exit_code


def invoke(*args):
    return Outcome(CliRunner().invoke(cli, ["generate", "dgd", *args], prog_name=PROG))


def test_cli_yaml_and_json():
    r = invoke("demo", "--backend", "sglang", "--model", "m", "--nodes", "2", "--gpus-per-node", "4", "-n", "team")
    assert r.exit_code == 0, r.output
    doc = yaml.safe_load(r.output)
    assert doc["metadata"] == {"name": "demo", "namespace": "team"}
    r = invoke("demo", "--backend", "vllm", "--model", "m", "-o", "json", "--disaggregated", "--prefill-nodes", "1",
               "--decode-nodes", "2", "--decode-dp", "2")
    assert r.exit_code == 0, r.output
    comps = {c["name"]: c for c in json.loads(r.output)["spec"]["components"]}
    assert "multinode" not in comps["prefill"] and comps["decode"]["multinode"] == {"nodeCount": 2}
    assert comps["decode"]["replicas"] == 2 and "--disaggregation-mode" in comps["decode"]["podTemplate"]["spec"][
        "containers"][0]["args"]


def test_cli_table_summary():
    r = invoke("demo", "--backend", "vllm", "--model", "m", "-o", "table", "--dp", "2")
    assert r.exit_code == 0
    assert r.output.splitlines()[0].split()[:3] == ["COMPONENT", "NODES", "GPUS/NODE"]
    assert r.output.splitlines()[1].split()[:7] == ["worker", "2", "8", "16", "1", "2", "32"]


def test_cli_arithmetic_error_exit_1_one_line_plus_choices():
    proc = run_cli("generate", "dgd", "demo", "--backend", "vllm", "--model", "m", "--nodes", "2",
                   "--gpus-per-node", "8", "--tp", "4")
    assert proc.returncode == 1 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines[0].startswith("error: worker: TP×PP = 4×1 = 4 but one engine spans 2 nodes × 8 GPUs = 16")
    assert not any(l.startswith("error:") for l in lines[1:])
    assert [l.split("  (")[0].strip() for l in lines[1:]] == ["--tp 16", "--tp 8 --pp 2", "--gpus-per-node 2"]
    assert "Traceback" not in proc.stderr


def test_cli_role_templates_refused_for_old_operator():
    """A flag combination that cannot work is a usage error: one `error:` line with the reason, exit 2."""
    for flags, reason in ((("--operator-version", "1.5.0"), "needs Dynamo operator >= 1.6.0"),
                          (("--api-version", "nvidia.com/v1alpha1"), "needs nvidia.com/v1beta1")):
        proc = run_cli("generate", "dgd", "demo", "--backend", "vllm", "--model", "m", "--role-templates", *flags)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ") and reason in proc.stderr


def test_cli_usage_errors_exit_2():
    assert invoke("demo", "--backend", "vllm", "--model", "m", "--prefill-nodes", "2").exit_code == 2
    assert invoke("demo", "--backend", "sglang", "--model", "m", "--compilation-cache", "pvc").exit_code == 2
    assert invoke("demo", "--backend", "vllm", "--model", "m", "--nodes", "0").exit_code == 2
    assert invoke("demo", "--backend", "vllm", "--model", "m", "--shared-memory", "lots").exit_code == 2
    proc = run_cli("generate", "dgd", "demo", "--backend", "vllm")
    assert proc.returncode == 2 and "--model" in proc.stderr


def test_cli_file_is_never_overwritten_without_force(tmp_path):
    target = tmp_path / "dgd.yaml"
    args = ["demo", "--backend", "vllm", "--model", "m", "--file", str(target)]
    assert invoke(*args).exit_code == 0
    first = target.read_text()
    assert yaml.safe_load(first)["kind"] == "DynamoGraphDeployment"
    proc = run_cli("generate", "dgd", *args[:-2], "--model", "other", "--file", str(target))
    assert proc.returncode == 2 and "exists; use --force" in proc.stderr
    assert target.read_text() == first
    assert invoke(*args[:-2], "--model", "other", "--file", str(target), "--force").exit_code == 0
    assert "other" in target.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["dgd.yaml"]  # no temp files left


def test_generate_does_not_import_kubernetes():
    from tests.unit.test_cli import _imports_kubernetes

    assert _imports_kubernetes("generate", "dgd", "x", "--backend", "vllm", "--model", "m") == "CLEAN"
