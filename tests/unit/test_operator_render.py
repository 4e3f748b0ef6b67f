"""explain_dgd end to end: selection, pod pipeline, version switches, role templates, findings, corpus."""

import copy
from pathlib import Path

import pytest
import yaml

from kubectl_dynamo.operator import selection
from kubectl_dynamo.operator.render import explain_dgd

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data" / "corpus"
ORIGIN = "nvidia.com/dynamo-operator-origin-version"
LH = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-decode-ldr-0.$(GROVE_HEADLESS_SERVICE)"


def dgd(components, annotations=None, name="my-dgd", namespace="ns", **spec):
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": name, "namespace": namespace, "annotations": annotations or {}},
            "spec": {"components": components, **spec}}


def decode(args=("--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "8"), gpus="4", nodes=2, command=None, **extra):
    main = {"name": "main", "image": "img:1", "command": list(command or ["python3", "-m", "dynamo.vllm"]),
            "args": list(args)}
    if gpus is not None:
        main["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    comp = {"name": "decode", "type": "decode", "replicas": 1, "podTemplate": {"spec": {"containers": [main]}}, **extra}
    if nodes:
        comp["multinode"] = {"nodeCount": nodes}
    return comp


def roles_of(result, comp=0):
    return {r["name"]: r for r in result["components"][comp]["roles"]}


def main_of(role):
    return role["podSpec"]["containers"][0]


def env_of(container):
    return {e["name"]: e for e in container.get("env", [])}


def codes(result):
    return [f["code"] for f in result["findings"]]


class TestContract:
    def test_keys(self):
        r = explain_dgd(dgd([decode()]), operator_version="1.5.0")
        assert set(r) == {"name", "namespace", "apiVersion", "operatorVersion", "originVersion", "provider",
                          "orchestrator", "scheduler", "queue", "components", "findings"}
        c = r["components"][0]
        assert set(c) == {"name", "type", "backend", "multinode", "nodeCount", "gpusPerPod", "totalGpus", "mode",
                          "modeReason", "roles"}
        assert set(c["roles"][0]) == {"name", "replicas", "podSpec"}
        assert (c["backend"], c["multinode"], c["nodeCount"], c["gpusPerPod"], c["totalGpus"]) == ("vllm", True, 2, 4, 8)
        assert [(x["name"], x["replicas"]) for x in c["roles"]] == [("leader", 1), ("worker", 1)]

    def test_defaults_newest_and_stamped_origin(self):
        r = explain_dgd(dgd([decode()]))
        assert r["operatorVersion"] == "1.6.0" and r["originVersion"] == "1.6.0"
        r = explain_dgd(dgd([decode()], {ORIGIN: "1.2.0"}), operator_version="1.5.0")
        assert r["originVersion"] == "1.2.0"


class TestAC25Orchestration:
    def test_enable_grove_false_with_grove_and_lws(self):
        gates = selection.Gates(grove=True, lws=True, kai_scheduler=True)
        r = explain_dgd(dgd([decode()], {"nvidia.com/enable-grove": "FALSE"}), gates=gates, operator_version="1.5.0")
        assert (r["provider"], r["orchestrator"]) == ("component", "lws")
        assert main_of(roles_of(r)["leader"])["args"][-6:-3] == ["--master-addr", "$(LWS_LEADER_ADDRESS)", "--master-port"]

    def test_no_grove_api(self):
        gates = selection.compute_gates(["leaderworkerset.x-k8s.io", "scheduling.volcano.sh"])
        r = explain_dgd(dgd([decode()]), gates=gates)
        assert (r["provider"], r["orchestrator"], r["scheduler"]) == ("component", "lws", "volcano")

    def test_no_orchestrator_still_renders(self):
        gates = selection.Gates(grove=False, lws=False, kai_scheduler=False)
        r = explain_dgd(dgd([decode()]), gates=gates)
        assert r["provider"] == "component" and r["orchestrator"] is None
        assert "no-multinode-orchestrator" in codes(r)
        assert [x["name"] for x in r["components"][0]["roles"]] == ["leader", "worker"]

    def test_default_queue_and_scheduler(self):
        r = explain_dgd(dgd([decode()]))
        assert (r["provider"], r["scheduler"], r["queue"]) == ("grove", "kai-scheduler", "dynamo")
        assert all(x["podSpec"]["schedulerName"] == "kai-scheduler" for x in r["components"][0]["roles"])

    def test_kai_queue_missing(self):
        gates = selection.Gates(grove=True, lws=False, kai_scheduler=True)
        r = explain_dgd(dgd([decode()], {"nvidia.com/kai-scheduler-queue": "gpu"}), gates=gates, kai_queues=["dynamo"])
        assert r["queue"] == "gpu" and "kai-queue-missing" in codes(r)

    def test_orchestrator_lws_offline(self):
        r = explain_dgd(dgd([decode()]), orchestrator="lws")
        assert (r["provider"], r["orchestrator"]) == ("component", "lws")

    def test_pinned_component_provider(self):
        """An existing DGD keeps its provider; on CREATE the webhook ignores the annotation
        (ai-dynamo/dynamo@2a6da14c internal/webhook/defaulting/dynamographdeployment_handler.go)."""
        gates = selection.Gates(grove=True, lws=True, kai_scheduler=True)
        existing = dgd([decode()], {"nvidia.com/workload-provider": "component"})
        existing["metadata"]["uid"] = "0b6e7e1c-0000-4000-8000-000000000001"
        r = explain_dgd(existing, orchestrator="grove", gates=gates, operator_version="1.5.0")
        assert r["provider"] == "component"
        new = dgd([decode()], {"nvidia.com/workload-provider": "component"})
        assert explain_dgd(new, orchestrator="grove", gates=gates, operator_version="1.5.0")["provider"] == "grove"


class TestAC21Pipeline:
    def test_grove_mp_full_pod(self):
        r = explain_dgd(dgd([decode()], {ORIGIN: "1.5.0"}), operator_version="1.5.0")
        c = r["components"][0]
        assert c["mode"] == "mp"
        leader, worker = roles_of(r)["leader"], roles_of(r)["worker"]
        lm, wm = main_of(leader), main_of(worker)
        assert lm["command"] == ["python3", "-m", "dynamo.vllm"]
        assert lm["args"] == ["--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "8", "--distributed-executor-backend",
                              "mp", "--nnodes", "2", "--master-addr", LH, "--master-port", "29500", "--node-rank", "0"]
        assert wm["command"] == ["sh", "-c"]
        assert wm["args"] == [f"exec python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B --tensor-parallel-size 8 "
                              f"--distributed-executor-backend mp --nnodes 2 --master-addr {LH} --master-port 29500 "
                              f"--node-rank $((GROVE_PCLQ_POD_INDEX + 1)) --headless"]
        # leader keeps default probes, worker has none
        assert lm["readinessProbe"]["httpGet"] == {"path": "/health", "port": "system"}
        assert not any(k in wm for k in ("livenessProbe", "readinessProbe", "startupProbe"))
        # env: sorted operator/user env, then backend env appended
        names = [e["name"] for e in lm["env"]]
        assert names[-1] == "VLLM_NIXL_SIDE_CHANNEL_HOST" and names[:-1] == sorted(names[:-1])
        assert env_of(lm)["DYN_NAMESPACE"]["value"] == "ns-my-dgd"
        assert "DYNAMO_RANK" not in env_of(lm)
        # pod level
        ps = worker["podSpec"]
        assert ps["terminationGracePeriodSeconds"] == 60 and ps["restartPolicy"] == "Always"
        assert ps["securityContext"] == {"fsGroup": 1000}
        assert [i["name"] for i in ps["initContainers"]] == ["wait-for-leader-mp"]
        assert ps["initContainers"][0]["image"] == "img:1"
        assert [v["name"] for v in ps["volumes"]] == ["shared-memory", "wait-leader-script"]
        assert wm["volumeMounts"] == [{"name": "shared-memory", "mountPath": "/dev/shm"}]
        assert "initContainers" not in leader["podSpec"]

    def test_ray_without_origin_1_4(self):
        doc = dgd([decode()], {ORIGIN: "0.9.0"})
        r = explain_dgd(doc, operator_version="1.4.0")
        assert r["components"][0]["mode"] == "ray"
        assert main_of(roles_of(r)["worker"])["args"] == [f"ray start --address={LH}:6379 --block"]

    def test_lws_mp_worker(self):
        r = explain_dgd(dgd([decode()], {ORIGIN: "1.5.0"}), orchestrator="lws", operator_version="1.5.0")
        wm = main_of(roles_of(r)["worker"])
        assert wm["args"][-7:] == ["--master-addr", "$(LWS_LEADER_ADDRESS)", "--master-port", "29500", "--node-rank",
                                   "$(LWS_WORKER_INDEX)", "--headless"]
        assert "schedulerName" not in roles_of(r)["worker"]["podSpec"]

    def test_lws_old_operator_form(self):
        r = explain_dgd(dgd([decode()], {ORIGIN: "1.0.0"}), orchestrator="lws", operator_version="1.0.1")
        wm = main_of(roles_of(r)["worker"])
        assert wm["command"] == ["sh", "-c"]
        assert '--master-addr "$LWS_LEADER_ADDRESS" --master-port 29500 --node-rank $(LWS_WORKER_INDEX) --headless' in wm["args"][0]


class TestVersion16:
    def test_portable_env_and_aliases(self):
        r = explain_dgd(dgd([decode()]), operator_version="1.6.0")
        leader, worker = roles_of(r)["leader"], roles_of(r)["worker"]
        for role in (leader, worker):
            env = env_of(main_of(role))
            assert env["DYNAMO_RANK"] == {"name": "DYNAMO_RANK", "value": "$(GROVE_PCSG_POD_INDEX)"}
            assert env["DYNAMO_LEADER_ADDRESS"]["value"] == LH
        wm = main_of(worker)
        assert wm["command"] == ["python3", "-m", "dynamo.vllm"]  # no shell needed any more
        assert wm["args"][-7:] == ["--master-addr", "$(DYNAMO_LEADER_ADDRESS)", "--master-port", "29500", "--node-rank",
                                   "$(DYNAMO_RANK)", "--headless"]
        # the init container cannot see DYNAMO_* (main container only): keeps the Grove form
        assert "${GROVE_PCSG_NAME}" in worker["podSpec"]["initContainers"][0]["command"][2]

    def test_old_origin_on_new_operator_has_no_aliases(self):
        r = explain_dgd(dgd([decode()], {ORIGIN: "1.5.0"}), operator_version="1.6.0")
        wm = main_of(roles_of(r)["worker"])
        assert "DYNAMO_RANK" not in env_of(wm) and wm["command"] == ["sh", "-c"]

    def test_prerelease_origin_is_below(self):
        r = explain_dgd(dgd([decode()], {ORIGIN: "1.6.0-rc1"}), operator_version="1.6.0")
        assert "DYNAMO_RANK" not in env_of(main_of(roles_of(r)["leader"]))

    def test_lws_portable(self):
        r = explain_dgd(dgd([decode()]), orchestrator="lws")
        env = env_of(main_of(roles_of(r)["worker"]))
        assert env["DYNAMO_RANK"]["value"] == "$(LWS_WORKER_INDEX)"
        assert env["DYNAMO_LEADER_ADDRESS"]["value"] == "$(LWS_LEADER_ADDRESS)"

    def test_user_value_replaced_by_operator(self):
        comp = decode()
        comp["podTemplate"]["spec"]["containers"][0]["env"] = [{"name": "DYNAMO_RANK", "value": "7"}]
        r = explain_dgd(dgd([comp]))
        assert env_of(main_of(roles_of(r)["leader"]))["DYNAMO_RANK"]["value"] == "$(GROVE_PCSG_POD_INDEX)"

    def test_sglang_aliases(self):
        comp = decode(args=["--tp", "8"], command=["python3", "-m", "dynamo.sglang"])
        r = explain_dgd(dgd([comp]))
        assert r["components"][0]["mode"] == "sglang"
        assert main_of(roles_of(r)["worker"])["args"][-6:] == [
            "--dist-init-addr", "$(DYNAMO_LEADER_ADDRESS):29500", "--nnodes", "2", "--node-rank", "$(DYNAMO_RANK)"]

    def test_topology_vars_unavailable(self):
        comp = decode(args=["--node-rank", "$(DYNAMO_RANK)"])
        r = explain_dgd(dgd([comp], {ORIGIN: "1.5.0"}), operator_version="1.6.0")
        assert "topology-vars-unavailable" in codes(r)
        r = explain_dgd(dgd([comp]), operator_version="1.6.0")
        assert "topology-vars-unavailable" not in codes(r)


def role_template(args, gpus="1", image="img:1.6", command=("python3", "-m", "dynamo.vllm")):
    return {"spec": {"containers": [{"name": "main", "image": image, "command": list(command), "args": list(args),
                                     "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}}


VLLM_LEADER = ["--model", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2", "--distributed-executor-backend", "mp",
               "--nnodes", "2", "--node-rank", "$(DYNAMO_RANK)", "--master-addr", "$(DYNAMO_LEADER_ADDRESS)"]


class TestRoleTemplates:
    def comp(self, leader_args=VLLM_LEADER, worker_args=VLLM_LEADER + ["--headless"], **kw):
        return {"name": "decode", "type": "decode", "replicas": 1, "multinode": {"nodeCount": 2},
                "roles": [{"name": "leader", "podTemplate": role_template(leader_args, **kw)},
                          {"name": "worker", "podTemplate": role_template(worker_args, **kw)}]}

    def test_vllm_docs_example(self):
        r = explain_dgd(dgd([self.comp()], backendFramework="vllm"))
        c = r["components"][0]
        assert (c["mode"], c["gpusPerPod"], c["totalGpus"]) == ("mp", 1, 2)
        leader, worker = roles_of(r)["leader"], roles_of(r)["worker"]
        # The docs write --master-port=29500; the operator appends flag and value as two items
        # (tu-kim/dynamo@3f3d3dfa internal/dynamo/backend_vllm.go ensureContainerCommandLineFlag).
        assert main_of(leader)["args"] == VLLM_LEADER + ["--master-port", "29500"]
        assert main_of(worker)["args"] == VLLM_LEADER + ["--headless", "--master-port", "29500"]
        assert main_of(worker)["command"] == ["python3", "-m", "dynamo.vllm"]
        assert [i["name"] for i in worker["podSpec"]["initContainers"]] == ["wait-for-leader-mp"]
        assert "DYNAMO_RANK" in env_of(main_of(worker))
        assert not [f for f in r["findings"] if f["severity"] == "error"]

    def test_trtllm_worker_keeps_authored_command(self):
        sshd = ["sshd-start"]
        comp = self.comp(leader_args=["mpirun ..."], worker_args=sshd, command=("/bin/sh", "-c"))
        r = explain_dgd(dgd([comp], backendFramework="trtllm"))
        worker = roles_of(r)["worker"]
        wm = main_of(worker)
        assert wm["args"] == sshd and wm["command"] == ["/bin/sh", "-c"]
        assert wm["readinessProbe"]["tcpSocket"] == {"port": 2222}
        assert {"name": "mpi-run-ssh-secret", "mountPath": "/ssh-pk", "readOnly": True} in wm["volumeMounts"]
        assert main_of(roles_of(r)["leader"])["args"] == ["mpirun ..."]

    def test_mixed_sources_and_one_role(self):
        comp = self.comp()
        comp["podTemplate"] = role_template(["x"])
        comp["roles"][1].pop("podTemplate")
        comp["roles"][0]["replicas"] = 2
        from kubectl_dynamo.commands import explain

        # admission's (the 1.6 webhook's words and field paths); the render adds none of its own
        r = explain.explain_one(dgd([comp]), operator_version="1.6.0")
        msgs = sorted(f["message"] for f in r["findings"] if f["code"] == "template-source-mode")
        assert msgs == [
            "spec.components[0].podTemplate: Forbidden: cannot be combined with roles[].podTemplate; choose one "
            "complete PodTemplate source mode",
            'spec.components[0].roles[0].replicas: Invalid value: 2: must equal 1 for multinode role "leader"',
            "spec.components[0].roles[1].podTemplate: Required value: is required on every role when role-specific "
            "PodTemplates are used"]
        assert "template-source-mode" not in codes(explain_dgd(dgd([comp])))  # the render adds none of its own

    def test_roles_before_1_6(self, tmp_path):
        """The 1.5 CRD has no roles: one error says so, first (admission's), and the render adds none."""
        from kubectl_dynamo.commands import explain
        from kubectl_dynamo.inputs import manifests

        assert "template-source-mode" not in codes(explain_dgd(dgd([self.comp()]), operator_version="1.5.0"))
        path = tmp_path / "roles.yaml"
        path.write_text(yaml.safe_dump(dgd([self.comp()])))
        (item,) = explain.explain_documents(manifests.load(str(path)), operator_version="1.5.0")["items"]
        errors = [f for f in item["findings"] if f["severity"] == "error"]
        assert errors[0]["code"] == "schema-invalid" and "has no roles" in errors[0]["message"]
        assert sum("roles" in f["message"] for f in errors) == 1


class TestPodSpec:
    def test_user_env_merge_sorted_user_wins_and_graph_env(self):
        comp = decode(nodes=None)
        comp["podTemplate"]["spec"]["containers"][0]["env"] = [{"name": "ZED", "value": "1"},
                                                               {"name": "DYN_SYSTEM_PORT", "value": "1"}]
        r = explain_dgd(dgd([comp], env=[{"name": "ZED", "value": "graph"}, {"name": "AAA", "value": "graph"}]))
        main = main_of(roles_of(r)["main"])
        names = [e["name"] for e in main["env"]]
        assert names == sorted(names)
        env = env_of(main)
        assert env["ZED"]["value"] == "1" and env["AAA"]["value"] == "graph" and env["DYN_SYSTEM_PORT"]["value"] == "1"

    def test_user_security_context_and_shm_size_and_sidecar(self):
        comp = decode(nodes=None, sharedMemorySize="16Gi")
        spec = comp["podTemplate"]["spec"]
        spec["securityContext"] = {"runAsUser": 0}
        spec["containers"].insert(0, {"name": "sidecar", "image": "s"})
        spec["volumes"] = [{"name": "models", "persistentVolumeClaim": {"claimName": "models"}}]
        spec["containers"][1]["volumeMounts"] = [{"name": "cfg", "mountPath": "/cfg"}, {"name": "models", "mountPath": "/m"}]
        ps = roles_of(explain_dgd(dgd([comp])))["main"]["podSpec"]
        assert ps["securityContext"] == {"runAsUser": 0}
        assert [c["name"] for c in ps["containers"]] == ["main", "sidecar"]
        assert ps["volumes"] == [
            {"name": "cfg", "persistentVolumeClaim": {"claimName": "cfg"}},
            {"name": "models", "persistentVolumeClaim": {"claimName": "models"}},
            {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}},
        ]

    def test_shm_disabled(self):
        ps = roles_of(explain_dgd(dgd([decode(nodes=None, sharedMemorySize="0")])))["main"]["podSpec"]
        assert "volumes" not in ps or not ps["volumes"]

    def test_non_worker_is_noop_main(self):
        fe = {"name": "Frontend", "type": "frontend", "podTemplate": {"spec": {"containers": [
            {"name": "main", "image": "f", "command": ["python3", "-m", "dynamo.frontend"]}]}}}
        c = explain_dgd(dgd([fe]))["components"][0]
        assert (c["backend"], c["mode"], c["multinode"]) == ("noop", "single-node", False)
        assert [x["name"] for x in c["roles"]] == ["main"]
        # The frontend's own defaults, not the worker's (goldens/cases/component-types.json, types/Frontend;
        # ai-dynamo/dynamo component_frontend.go @2a6da14c).
        main = c["roles"][0]["podSpec"]["containers"][0]
        assert main["livenessProbe"]["httpGet"] == {"path": "/live", "port": "http"}
        assert main["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
        assert "DYN_SYSTEM_ENABLED" not in env_of(main)

    def test_compilation_cache_vllm_default(self):
        comp = decode(nodes=None, compilationCache={"pvcName": "cache"})
        main = main_of(roles_of(explain_dgd(dgd([comp])))["main"])
        assert {"name": "cache", "mountPath": "/root/.cache/vllm"} in main["volumeMounts"]
        assert main["env"][-1] == {"name": "VLLM_CACHE_ROOT", "value": "/root/.cache/vllm"}

    @pytest.mark.parametrize("cache, text", [({}, "pvcName is required"), ({"pvcName": "c"}, "no default available")])
    def test_compilation_cache_invalid(self, cache, text):
        comp = decode(nodes=None, command=["python3", "-m", "dynamo.sglang"], compilationCache=cache)
        r = explain_dgd(dgd([comp]))
        f = [f for f in r["findings"] if f["code"] == "compilation-cache-invalid"]
        assert f and text in f[0]["message"]


class TestFindings:
    def test_parallelism_mismatch(self):
        r = explain_dgd(dgd([decode(args=["--tensor-parallel-size", "16"])]))
        assert "parallelism-mismatch" in codes(r)
        r = explain_dgd(dgd([decode(args=["--tensor-parallel-size", "2"])]))
        f = [f for f in r["findings"] if f["code"] == "parallelism-mismatch"]
        assert f and "mode none" in f[0]["message"]
        assert "parallelism-mismatch" not in codes(explain_dgd(dgd([decode()])))

    def test_no_gpu(self):
        r = explain_dgd(dgd([decode(gpus=None, command=["python3", "-m", "dynamo.trtllm"])]))
        f = [f for f in r["findings"] if f["code"] == "no-gpu-request"]
        assert f[0]["severity"] == "error" and "-n 0" in f[0]["message"]

    def test_args_without_command(self):
        comp = decode(nodes=None)
        comp["podTemplate"]["spec"]["containers"][0].pop("command")
        assert "args-without-command" in codes(explain_dgd(dgd([comp])))

    def test_model_path_contains_framework(self):
        comp = decode(command=["sh", "-c"], args=["python3 -m dynamo.vllm --model org/vllm-model --tensor-parallel-size 8"])
        r = explain_dgd(dgd([comp], {ORIGIN: "1.5.0"}), operator_version="1.5.0")
        assert "model-path-contains-framework" in codes(r)
        assert "org/vllm-model --distributed-executor-backend mp" in main_of(roles_of(r)["leader"])["args"][0]

    def test_node_count_too_small(self):
        assert "node-count-too-small" in codes(explain_dgd(dgd([decode(nodes=1)])))

    def test_framework_mismatch(self):
        r = explain_dgd(dgd([decode()], backendFramework="sglang"))
        assert "backend-framework-mismatch" in codes(r)
        assert r["components"][0]["backend"] == "vllm"

    def test_flag_form_ignored(self):
        r = explain_dgd(dgd([decode(args=["--tensor-parallel-size=8"])]), operator_version="1.5.0")
        assert "vllm-flag-form-ignored" in codes(r) and r["components"][0]["mode"] == "none"
        r = explain_dgd(dgd([decode(args=["--tensor-parallel-size=8"])]), operator_version="1.6.0")
        assert "vllm-flag-form-ignored" not in codes(r) and r["components"][0]["mode"] == "mp"

    def test_every_finding_well_formed(self):
        r = explain_dgd(dgd([decode(args=["-tp", "16"], gpus=None)], backendFramework="trtllm"),
                        gates=selection.Gates(grove=False, lws=False, kai_scheduler=False), operator_version="1.4.0")
        assert r["findings"]
        for f in r["findings"]:
            assert set(f) == {"code", "severity", "component", "message", "hint", "object"}
            assert f["severity"] in ("error", "warning", "info") and f["hint"]


def _corpus_docs():
    for path in sorted((CORPUS / "v1.0.1").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "DynamoGraphDeployment":
                yield path.name, doc


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not found at {CORPUS}")
@pytest.mark.parametrize("orchestrator", ["grove", "lws"])
def test_corpus_renders(orchestrator):
    try:
        from kubectl_dynamo.operator import convert  # noqa: F401
    except ImportError:
        pytest.skip("kubectl_dynamo.operator.convert is not available yet (the corpus is v1alpha1)")
    seen, multinode = 0, 0
    for fname, doc in _corpus_docs():
        r = explain_dgd(copy.deepcopy(doc), orchestrator=orchestrator)
        seen += 1
        assert "conversion-unavailable" not in codes(r), fname
        for c in r["components"]:
            if c["multinode"]:
                multinode += 1
                assert [x["name"] for x in c["roles"]] == ["leader", "worker"], (fname, c["name"])
                for role in c["roles"]:
                    assert role["podSpec"]["containers"][0]["name"] == "main"
    assert seen >= 71 and multinode >= 8
