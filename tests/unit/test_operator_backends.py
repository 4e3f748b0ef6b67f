"""Backend rendering, unit level: worked examples from the operator's backend_*.go behaviour, byte for byte."""

import copy

import pytest

from kubectl_dynamo.operator import sglang, trtllm, vllm
from kubectl_dynamo.operator.context import LEADER, MAIN, WORKER, RoleContext
from kubectl_dynamo.operator.grove import GroveDeployer
from kubectl_dynamo.operator.lws import LWSDeployer

SVC = "test-service"
LH_G = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-test-service-ldr-0.$(GROVE_HEADLESS_SERVICE)"
LH_L = "$(LWS_LEADER_ADDRESS)"
PROBES = {
    "livenessProbe": {"httpGet": {"path": "/live"}},
    "readinessProbe": {"httpGet": {"path": "/health"}},
    "startupProbe": {"httpGet": {"path": "/live"}},
}
ORIGIN_1_0 = {"nvidia.com/dynamo-operator-origin-version": "1.0.0"}


def ctx(role, nodes, deployer=None, gpus=0, annotations=None, **kw):
    return RoleContext(role=role, nodes=nodes, service=SVC, deployer=deployer or GroveDeployer(), gpus=gpus,
                       annotations=annotations or {}, parent_dgd=kw.pop("parent_dgd", "dgd"),
                       operator_version=kw.pop("operator_version", "1.5.0"), **kw)


def lws(version="1.5.0", portable=False):
    return LWSDeployer(portable=portable, operator_version=version)


class TestVLLMWorkedExamples:
    def test_ac01_ray_leader_grove(self):
        c = {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--model", "test", "--tensor-parallel-size", "8"]}
        d = vllm.update_container(c, ctx(LEADER, 3, gpus=4))
        assert d.mode == "ray"
        assert c["command"] == ["/bin/sh", "-c"]
        assert c["args"] == ["ray start --head --port=6379 && python3 -m dynamo.vllm --model test "
                             "--tensor-parallel-size 8 --distributed-executor-backend ray"]
        assert "env" not in c  # Ray path: no VLLM_NIXL_SIDE_CHANNEL_HOST

    def test_ac05_mp_leader_grove(self):
        c = {"command": ["python3"], "args": ["-m", "dynamo.vllm", "--tensor-parallel-size", "16"], **copy.deepcopy(PROBES)}
        vllm.update_container(c, ctx(LEADER, 2, gpus=8, annotations=ORIGIN_1_0))
        assert c["command"] == ["python3"]
        assert c["args"] == ["-m", "dynamo.vllm", "--tensor-parallel-size", "16", "--distributed-executor-backend", "mp",
                             "--nnodes", "2", "--master-addr", LH_G, "--master-port", "29500", "--node-rank", "0"]
        assert all(p in c for p in PROBES)  # leader probes untouched
        assert c["env"] == [{"name": "VLLM_NIXL_SIDE_CHANNEL_HOST",
                             "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]

    def test_ac06_mp_worker_grove(self):
        c = {"command": ["python3"], "args": ["-m", "dynamo.vllm", "--tensor-parallel-size", "16"], **copy.deepcopy(PROBES)}
        vllm.update_container(c, ctx(WORKER, 2, gpus=8, annotations=ORIGIN_1_0))
        assert c["command"] == ["sh", "-c"]
        assert c["args"] == [
            "exec python3 -m dynamo.vllm --tensor-parallel-size 16 --distributed-executor-backend mp --nnodes 2 "
            "--master-addr $(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-test-service-ldr-0.$(GROVE_HEADLESS_SERVICE) "
            "--master-port 29500 --node-rank $((GROVE_PCLQ_POD_INDEX + 1)) --headless"
        ]
        assert not any(p in c for p in PROBES)

    def test_ac09_dp_leader_lws(self):
        c = {"command": ["python3"], "args": ["-m", "dynamo.vllm", "--data-parallel-size", "16"]}
        d = vllm.update_container(c, ctx(LEADER, 2, deployer=lws(), gpus=8))
        assert d.mode == "data-parallel"
        assert c["args"] == ["-m", "dynamo.vllm", "--data-parallel-size", "16", "--data-parallel-hybrid-lb",
                             "--data-parallel-size-local", "8", "--data-parallel-start-rank", "0",
                             "--data-parallel-address", LH_L, "--data-parallel-rpc-port", "13445"]

    def test_dp_worker_lws_is_shell_wrapped(self):
        c = {"command": ["python3"], "args": ["-m", "dynamo.vllm", "--data-parallel-size", "16"]}
        vllm.update_container(c, ctx(WORKER, 2, deployer=lws(), gpus=8))
        assert c["command"] == ["sh", "-c"]
        assert c["args"] == ["exec python3 -m dynamo.vllm --data-parallel-size 16 --data-parallel-hybrid-lb "
                             "--data-parallel-size-local 8 --data-parallel-start-rank $(( 8 * $(LWS_WORKER_INDEX) )) "
                             "--data-parallel-address $(LWS_LEADER_ADDRESS) --data-parallel-rpc-port 13445"]

    def test_dp_worker_grove_start_rank_and_local(self):
        c = {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--tensor-parallel-size", "2", "--data-parallel-size", "8"]}
        vllm.update_container(c, ctx(WORKER, 2, gpus=4))
        assert "--data-parallel-size-local 2 --data-parallel-start-rank $(( 2 * $((GROVE_PCLQ_POD_INDEX + 1)) ))" in c["args"][0]

    def test_dp_shell_script_uses_regex_path(self):
        c = {"command": ["/bin/sh", "-c"], "args": ["python3 -m dynamo.vllm --data-parallel-size 16 2>&1 | tee /tmp/log"]}
        vllm.update_container(c, ctx(WORKER, 2, deployer=lws(), gpus=8))
        assert c["command"] == ["/bin/sh", "-c"]
        assert c["args"] == ["python3 -m dynamo.vllm --data-parallel-hybrid-lb --data-parallel-size-local 8 "
                             "--data-parallel-start-rank $(( 8 * $(LWS_WORKER_INDEX) )) --data-parallel-address "
                             "$(LWS_LEADER_ADDRESS) --data-parallel-rpc-port 13445 --data-parallel-size 16 2>&1 | tee /tmp/log"]

    @pytest.mark.parametrize("role", [LEADER, WORKER])
    def test_ac21_decode_2x4_tp8_grove_mp(self, role):
        c = {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "8"]}
        cx = ctx(role, 2, gpus=4, annotations=ORIGIN_1_0)._replace(service="decode")
        vllm.update_container(c, cx)
        lh = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-decode-ldr-0.$(GROVE_HEADLESS_SERVICE)"
        if role == LEADER:
            assert c["args"] == ["--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "8",
                                 "--distributed-executor-backend", "mp", "--nnodes", "2", "--master-addr", lh,
                                 "--master-port", "29500", "--node-rank", "0"]
        else:
            assert c["command"] == ["sh", "-c"]
            assert c["args"] == [f"exec python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B --tensor-parallel-size 8 "
                                 f"--distributed-executor-backend mp --nnodes 2 --master-addr {lh} --master-port 29500 "
                                 f"--node-rank $((GROVE_PCLQ_POD_INDEX + 1)) --headless"]
            pod = {"containers": [c]}
            c["image"] = "img"
            vllm.update_pod_spec(pod, cx)
            assert pod["initContainers"] == [{
                "name": "wait-for-leader-mp", "image": "img",
                "command": ["sh", "-c", 'export LEADER_HOST="${GROVE_PCSG_NAME}-${GROVE_PCSG_INDEX}-decode-ldr-0.'
                            '${GROVE_HEADLESS_SERVICE}" LEADER_PORT="29500" && exec python3 /scripts/wait-for-leader.py'],
                "volumeMounts": [{"name": "wait-leader-script", "mountPath": "/scripts", "readOnly": True}],
            }]
            assert pod["volumes"] == [{"name": "wait-leader-script", "configMap": {"name": "dgd-wait-leader-script"}}]

    def test_ac21_lws_mp_worker_direct_tokens(self):
        c = {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "8"]}
        vllm.update_container(c, ctx(WORKER, 2, deployer=lws(), gpus=4, annotations=ORIGIN_1_0))
        assert c["command"] == ["python3", "-m", "dynamo.vllm"]
        assert c["args"] == ["--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "8",
                             "--distributed-executor-backend", "mp", "--nnodes", "2", "--master-addr", LH_L,
                             "--master-port", "29500", "--node-rank", "$(LWS_WORKER_INDEX)", "--headless"]

    def test_ac21_ray_worker(self):
        c = {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--tensor-parallel-size", "8"], **copy.deepcopy(PROBES)}
        vllm.update_container(c, ctx(WORKER, 2, gpus=4))
        assert c == {"command": ["/bin/sh", "-c"], "args": [f"ray start --address={LH_G}:6379 --block"]}

    def test_ray_leader_empty_command_double_space(self):
        c = {"args": ["--tensor-parallel-size", "8"]}
        vllm.update_container(c, ctx(LEADER, 2, gpus=4))
        assert c["args"] == ["ray start --head --port=6379 &&  --tensor-parallel-size 8 --distributed-executor-backend ray"]

    @pytest.mark.parametrize("value, mode", [("mp", "mp"), ("MP", "mp"), ("ray", "ray"), ("bogus", "mp")])
    def test_executor_annotation(self, value, mode):
        ann = {**ORIGIN_1_0, "nvidia.com/vllm-distributed-executor-backend": value}
        c = {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--tensor-parallel-size", "8"]}
        assert vllm.update_container(c, ctx(LEADER, 2, gpus=4, annotations=ann)).mode == mode

    @pytest.mark.parametrize("origin, mode", [(None, "ray"), ("0.9.0", "ray"), ("1.0.0-rc1", "ray"), ("1.0.0", "mp"),
                                              ("garbage", "ray")])
    def test_origin_gates_mp(self, origin, mode):
        ann = {} if origin is None else {"nvidia.com/dynamo-operator-origin-version": origin}
        c = {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--tensor-parallel-size", "8"]}
        assert vllm.update_container(c, ctx(LEADER, 2, gpus=4, annotations=ann)).mode == mode

    def test_zero_gpus_injects_nothing_but_drops_worker_probes(self):
        c = {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--tensor-parallel-size", "8"], **copy.deepcopy(PROBES)}
        d = vllm.update_container(c, ctx(WORKER, 2, gpus=0, annotations=ORIGIN_1_0))
        assert d.mode == "none"
        assert c["args"] == ["--tensor-parallel-size", "8"]
        assert not any(p in c for p in PROBES)
        assert c["env"][0]["name"] == "VLLM_NIXL_SIDE_CHANNEL_HOST"

    def test_dp_worker_gets_no_init_container(self):
        c = {"command": ["python3"], "args": ["-m", "dynamo.vllm", "--data-parallel-size", "16"]}
        cx = ctx(WORKER, 2, gpus=8, annotations=ORIGIN_1_0)
        vllm.update_container(c, cx)
        pod = {"containers": [c]}
        vllm.update_pod_spec(pod, cx)
        assert "initContainers" not in pod

    def test_flag_equals_form_ignored_before_1_6_and_parsed_from_1_6(self):
        c = {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--tensor-parallel-size=8"]}
        assert vllm.decide(c, ctx(LEADER, 2, gpus=4, annotations=ORIGIN_1_0, operator_version="1.5.0")).mode == "none"
        assert vllm.decide(c, ctx(LEADER, 2, gpus=4, annotations=ORIGIN_1_0, operator_version="1.6.0")).mode == "mp"
        c2 = {"command": ["python3", "-m", "dynamo.vllm"], "args": ["-tp", "8"]}
        assert vllm.decide(c2, ctx(LEADER, 2, gpus=4, operator_version="1.6.0")).mode == "ray"

    def test_flags_in_command_are_not_seen(self):
        c = {"command": ["python3", "-m", "dynamo.vllm", "--tensor-parallel-size", "8"]}
        assert vllm.decide(c, ctx(LEADER, 2, gpus=4)).mode == "none"

    def test_compilation_cache_env(self):
        c = {"command": ["python3", "-m", "dynamo.vllm"]}
        vllm.update_container(c, ctx(MAIN, 1, gpus=1, compilation_cache_path="/root/.cache/vllm"))
        assert c["env"] == [{"name": "VLLM_CACHE_ROOT", "value": "/root/.cache/vllm"}]


class TestElasticEP:
    RAY_WAIT = ("i=0; until python3 -c \"import socket; s=socket.create_connection(('127.0.0.1',6379),timeout=1); "
                "s.close()\" 2>/dev/null; do i=$((i+1)); [ \"$i\" -ge 150 ] && { echo \"ERROR: Ray head did not start "
                "within 300s\" >&2; exit 1; }; sleep 2; done && ")

    def test_multinode_leader(self):
        c = {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--enable-elastic-ep", "--kv", "{'a': 1}"]}
        d = vllm.update_container(c, ctx(LEADER, 2, gpus=8))
        assert d.mode == "elastic-ep"
        assert c["command"] == ["/bin/sh", "-c"]
        assert c["args"] == ["ray start --head --port=6379 --block & " + self.RAY_WAIT
                             + "python3 -m dynamo.vllm --enable-elastic-ep --kv '{'\\''a'\\'': 1}'"]

    def test_multinode_worker(self):
        c = {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--enable-elastic-ep"]}
        vllm.update_container(c, ctx(WORKER, 2, deployer=lws(), gpus=8))
        assert c["args"] == [
            "i=0; until python3 -c \"import urllib.request; urllib.request.urlopen('http://$(LWS_LEADER_ADDRESS):9090/live', "
            "timeout=5)\" 2>/dev/null; do i=$((i+1)); [ \"$i\" -ge 720 ] && { echo \"ERROR: leader /live did not become "
            "ready within 3h\" >&2; exit 1; }; echo 'waiting for leader dynamo.vllm /live to return 200...'; sleep 15; "
            "done && ray start --address=$(LWS_LEADER_ADDRESS):6379 --block"]

    def test_tp_spanning_wins_over_elastic(self):
        c = {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--enable-elastic-ep", "--tensor-parallel-size", "16"]}
        assert vllm.decide(c, ctx(LEADER, 2, gpus=8)).mode == "ray"

    @pytest.mark.parametrize("dpb", [["--data-parallel-backend", "ray"], ["-dpb", "ray"], ["--data-parallel-backend=ray"],
                                     ["-dpb=ray"]])
    def test_single_pod(self, dpb):
        c = {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--enable-elastic-ep", *dpb]}
        d = vllm.update_container(c, ctx(MAIN, 1, gpus=8))
        assert d.mode == "elastic-ep"
        assert c["args"][0].startswith('ray start --head --port=6379 --node-ip-address="$POD_IP" --block & ')
        assert c["args"][0].endswith("done && exec python3 -m dynamo.vllm --enable-elastic-ep " + " ".join(dpb))
        assert [e["name"] for e in c["env"]] == ["POD_IP", "VLLM_DP_MASTER_IP"]

    def test_single_pod_without_ray_backend_untouched(self):
        c = {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--enable-elastic-ep"]}
        assert vllm.update_container(c, ctx(MAIN, 1, gpus=8)).mode == "single-node"
        assert c == {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--enable-elastic-ep"]}

    def test_single_pod_empty_command_untouched(self):
        c = {"args": ["--enable-elastic-ep", "-dpb", "ray"]}
        vllm.update_container(c, ctx(MAIN, 1, gpus=8))
        assert c == {"args": ["--enable-elastic-ep", "-dpb", "ray"]}


class TestSGLang:
    def test_ac15_lws_worker_direct_python(self):
        c = {"command": ["python3"], "args": ["-m", "dynamo.sglang", "--model", "llama"], **copy.deepcopy(PROBES)}
        sglang.update_container(c, ctx(WORKER, 2, deployer=lws()))
        assert c["command"] == ["python3"]
        assert c["args"] == ["-m", "dynamo.sglang", "--model", "llama", "--dist-init-addr", "$(LWS_LEADER_ADDRESS):29500",
                             "--nnodes", "2", "--node-rank", "$(LWS_WORKER_INDEX)"]
        assert not any(p in c for p in PROBES)

    def test_grove_worker_shell_wrapped(self):
        c = {"command": ["python3", "-m", "dynamo.sglang"], "args": ["--tp", "16"]}
        sglang.update_container(c, ctx(WORKER, 2))
        assert c["args"] == [f"exec python3 -m dynamo.sglang --tp 16 --dist-init-addr {LH_G}:29500 --nnodes 2 "
                             "--node-rank $((GROVE_PCLQ_POD_INDEX + 1))"]

    def test_leader_shell_script(self):
        c = {"command": ["sh", "-c"], "args": ["python3 -m dynamo.sglang --tp 16"], **copy.deepcopy(PROBES)}
        sglang.update_container(c, ctx(LEADER, 3))
        assert c["args"] == [f"python3 -m dynamo.sglang --dist-init-addr {LH_G}:29500 --nnodes 3 --node-rank 0 --tp 16"]
        assert all(p in c for p in PROBES)

    def test_old_lws_form_worker_needs_shell(self):
        c = {"command": ["python3", "-m", "dynamo.sglang"]}
        sglang.update_container(c, ctx(WORKER, 2, deployer=lws("1.0.1")))
        assert c["command"] == ["sh", "-c"]
        assert c["args"] == ['exec python3 -m dynamo.sglang --dist-init-addr "$LWS_LEADER_ADDRESS":29500 --nnodes 2 '
                             "--node-rank $(LWS_WORKER_INDEX)"]

    def test_portable_aliases_need_no_shell(self):
        c = {"command": ["python3", "-m", "dynamo.sglang"]}
        sglang.update_container(c, ctx(WORKER, 2, deployer=GroveDeployer(portable=True)))
        assert c == {"command": ["python3", "-m", "dynamo.sglang"],
                     "args": ["--dist-init-addr", "$(DYNAMO_LEADER_ADDRESS):29500", "--nnodes", "2", "--node-rank",
                              "$(DYNAMO_RANK)"]}


SSH = ("mkdir -p $HOME/.ssh && ls -la /ssh-pk/ && cp /ssh-pk/private.key $HOME/.ssh/id_rsa && cp /ssh-pk/private.key.pub "
       "$HOME/.ssh/id_rsa.pub && cp /ssh-pk/private.key.pub $HOME/.ssh/authorized_keys && chmod 600 $HOME/.ssh/id_rsa "
       "$HOME/.ssh/authorized_keys && chmod 644 $HOME/.ssh/id_rsa.pub && printf 'Host *\\nIdentityFile '$HOME'/.ssh/id_rsa"
       "\\nStrictHostKeyChecking no\\nPort 2222\\n' > $HOME/.ssh/config")
X_FLAGS = ("-x CPATH -x CUDA_VISIBLE_DEVICES -x HF_DATASETS_CACHE -x HF_ENDPOINT -x HF_HOME -x HF_TOKEN -x HOME "
           "-x HUGGING_FACE_HUB_TOKEN -x LD_LIBRARY_PATH -x MODEL_PATH -x NCCL_DEBUG -x NCCL_IB_DISABLE -x NCCL_P2P_DISABLE "
           "-x OMPI_MCA_orte_keep_fqdn_hostnames -x PATH -x PYTHONPATH -x TENSORRT_LLM_CACHE_DIR -x TOKENIZERS_PARALLELISM "
           "-x TRANSFORMERS_CACHE -x TRITON_PTXAS_PATH -x TRTLLM_USE_UCX_KVCACHE -x USER")


class TestTRTLLM:
    def test_ac18_leader_grove(self):
        from kubectl_dynamo.operator.flags import resolve_gpu_count

        c = {"args": ["python3", "--model", "test"], "resources": {"requests": {"gpu": "2"}}, **copy.deepcopy(PROBES)}
        gpus, _ = resolve_gpu_count(c["resources"])
        trtllm.update_container(c, ctx(LEADER, 3, gpus=gpus))
        assert c["volumeMounts"] == [{"name": "mpi-run-ssh-secret", "mountPath": "/ssh-pk", "readOnly": True}]
        assert c["env"] == [{"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "1"}]
        assert all(p in c for p in PROBES)
        assert c["command"] == ["/bin/sh", "-c"]
        expected = (
            SSH + ' && mpirun $([ "$(id -u)" = "0" ] && echo --allow-run-as-root) --oversubscribe -n 6 -H '
            "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-test-service-ldr-0.$(GROVE_HEADLESS_SERVICE),"
            "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-test-service-wkr-0.$(GROVE_HEADLESS_SERVICE),"
            "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-test-service-wkr-1.$(GROVE_HEADLESS_SERVICE) --mca pml ob1 --mca "
            'plm_rsh_args "-p 2222 -o StrictHostKeyChecking=no -i $HOME/.ssh/id_rsa" ' + X_FLAGS
            + " bash -c 'trtllm-llmapi-launch python3 --model test'"
        )
        assert c["args"] == [expected]

    def test_leader_lws_dns_wait_and_python_quoting(self):
        c = {"command": ["python3", "-m", "dynamo.trtllm"], "args": ["--extra", "a b"]}
        trtllm.update_container(c, ctx(LEADER, 3, deployer=lws(), gpus=4))
        w1 = "$(echo \"$LWS_LEADER_ADDRESS\" | sed 's/\\./-1\\./')"
        w2 = "$(echo \"$LWS_LEADER_ADDRESS\" | sed 's/\\./-2\\./')"
        dns = (f"TIMEOUT=300; START_TIME=$(date +%s); for worker in {w1} {w2}; do echo \"Waiting for DNS: $worker\"; "
               "until getent hosts $worker >/dev/null 2>&1; do CURRENT_TIME=$(date +%s); if [ $((CURRENT_TIME - START_TIME)) "
               "-gt $TIMEOUT ]; then echo \"ERROR: Timeout waiting for DNS: $worker\"; exit 1; fi; echo \"DNS not ready for "
               "$worker, retrying...\"; sleep 2; done; echo \"✓ DNS resolved: $worker\"; done; echo \"All workers DNS ready\"")
        arg = c["args"][0]
        assert arg.startswith(SSH + " && " + dns + " && mpirun ")
        assert f"-n 12 -H $(LWS_LEADER_ADDRESS),{w1},{w2} --mca" in arg
        assert arg.endswith("bash -c 'trtllm-llmapi-launch python3 -m dynamo.trtllm --extra \"a b\"'")

    def test_worker_sshd_and_probes(self):
        c = {"command": ["python3", "-m", "dynamo.trtllm"], **copy.deepcopy(PROBES)}
        cx = ctx(WORKER, 2, gpus=4, ssh_secret_name="my-ssh")
        trtllm.update_container(c, cx)
        assert c["readinessProbe"] == {"tcpSocket": {"port": 2222}, "initialDelaySeconds": 20, "periodSeconds": 20,
                                       "timeoutSeconds": 5, "failureThreshold": 10}
        assert "livenessProbe" not in c and "startupProbe" not in c
        arg = c["args"][0]
        assert arg.startswith("mkdir -p $HOME/.ssh $HOME/.ssh/host_keys $HOME/.ssh/run && ls -la /ssh-pk/ && ")
        assert "ssh-keygen -t ed25519 -f $HOME/.ssh/host_keys/ssh_host_ed25519_key -N ''" in arg
        assert arg.endswith(" > $HOME/.ssh/sshd_config && /usr/sbin/sshd -D -f $HOME/.ssh/sshd_config")
        assert "dynamo.trtllm" not in arg
        pod = {"containers": [c]}
        trtllm.update_pod_spec(pod, cx)
        assert pod["volumes"] == [{"name": "my-ssh", "secret": {"secretName": "my-ssh", "defaultMode": 420}}]
        assert c["volumeMounts"] == [{"name": "my-ssh", "mountPath": "/ssh-pk", "readOnly": True}]

    def test_zero_gpus_gives_n_zero(self):
        c = {"command": ["sh", "-c"], "args": ["python3 -m dynamo.trtllm"]}
        trtllm.update_container(c, ctx(LEADER, 2, gpus=0))
        assert " -n 0 " in c["args"][0]
        assert c["args"][0].endswith("bash -c 'trtllm-llmapi-launch python3 -m dynamo.trtllm'")

    def test_env_names_forwarded_sorted(self):
        c = {"command": ["python3"], "env": [{"name": "ZZZ", "value": "1"}, {"name": "AAA", "value": "1"}]}
        trtllm.update_container(c, ctx(LEADER, 2, gpus=1))
        assert "-x AAA -x CPATH" in c["args"][0] and "-x USER -x ZZZ bash" in c["args"][0]
