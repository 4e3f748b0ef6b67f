"""TensorRT-LLM backend (ai-dynamo/dynamo@2a6da14c deploy/operator/internal/dynamo/backend_trtllm.go): MPI over SSH across the multinode pods.

The leader sets up the SSH client and runs ``mpirun`` over every pod (on LWS after waiting for
the workers' DNS); workers discard the user command and run ``sshd`` on port 2222. Both mount the
operator's MPI SSH secret (one secret per operator, ``mpi.sshSecretName``, default
``mpi-run-ssh-secret``, replicated into each namespace).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from kubectl_dynamo.operator.context import LEADER, WORKER, Decision, RoleContext
from kubectl_dynamo.operator.flags import is_python_command
from kubectl_dynamo.operator.quoting import shell_quote_for_bash_c

SSH_PORT = 2222
SSH_MOUNT = "/ssh-pk"
SECRET_DEFAULT_MODE = 0o644  # rendered as 420 in JSON

# Env always forwarded to the MPI ranks, besides the container's own env names.
FORWARDED_ENV = (
    "CPATH", "CUDA_VISIBLE_DEVICES", "MODEL_PATH", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_ENDPOINT",
    "TOKENIZERS_PARALLELISM", "NCCL_DEBUG", "NCCL_IB_DISABLE", "NCCL_P2P_DISABLE", "TENSORRT_LLM_CACHE_DIR",
    "HF_HOME", "TRANSFORMERS_CACHE", "HF_DATASETS_CACHE", "PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "HOME",
    "USER", "TRITON_PTXAS_PATH", "TRTLLM_USE_UCX_KVCACHE",
)

# The literal "\n" below are backslash-n characters for printf, not newlines.
_SSH_CLIENT_SETUP = [
    "mkdir -p $HOME/.ssh",
    "ls -la /ssh-pk/",
    "cp /ssh-pk/private.key $HOME/.ssh/id_rsa",
    "cp /ssh-pk/private.key.pub $HOME/.ssh/id_rsa.pub",
    "cp /ssh-pk/private.key.pub $HOME/.ssh/authorized_keys",
    "chmod 600 $HOME/.ssh/id_rsa $HOME/.ssh/authorized_keys",
    "chmod 644 $HOME/.ssh/id_rsa.pub",
    "printf 'Host *\\nIdentityFile '$HOME'/.ssh/id_rsa\\nStrictHostKeyChecking no\\nPort 2222\\n' > $HOME/.ssh/config",
]

_SSHD_SETUP = [
    "ssh-keygen -t rsa -f $HOME/.ssh/host_keys/ssh_host_rsa_key -N ''",
    "ssh-keygen -t ecdsa -f $HOME/.ssh/host_keys/ssh_host_ecdsa_key -N ''",
    "ssh-keygen -t ed25519 -f $HOME/.ssh/host_keys/ssh_host_ed25519_key -N ''",
    "printf 'Port 2222\\nHostKey '$HOME'/.ssh/host_keys/ssh_host_rsa_key\\nHostKey '$HOME'/.ssh/host_keys/"
    "ssh_host_ecdsa_key\\nHostKey '$HOME'/.ssh/host_keys/ssh_host_ed25519_key\\nPidFile '$HOME'/.ssh/run/sshd.pid"
    "\\nStrictModes no\\nPermitRootLogin yes\\nPasswordAuthentication no\\nPubkeyAuthentication yes\\n"
    "AuthorizedKeysFile '$HOME'/.ssh/authorized_keys\\n' > $HOME/.ssh/sshd_config",
    "/usr/sbin/sshd -D -f $HOME/.ssh/sshd_config",
]

WORKER_READINESS: Dict[str, Any] = {  # a Kubernetes Probe
    "tcpSocket": {"port": SSH_PORT},
    "initialDelaySeconds": 20,
    "periodSeconds": 20,
    "timeoutSeconds": 5,
    "failureThreshold": 10,
}


def decide(container: dict, ctx: RoleContext) -> Decision:
    if not ctx.multinode:
        return Decision("single-node", "one pod per replica; no multinode launch wiring")
    if ctx.role_templates:
        return Decision("mpi", "role pod templates: authored leader mpirun and worker sshd are kept")
    return Decision("mpi", f"leader runs mpirun -n {ctx.nodes}×{ctx.gpus} = {ctx.nodes * ctx.gpus} over SSH; workers run sshd")


def original_command(container: dict) -> str:
    command = container.get("command") or []
    args = container.get("args") or []
    if command and is_python_command(command[0]):
        return " ".join(shell_quote_for_bash_c(t) for t in command + args)
    if args:
        return " ".join(args)  # raw: already a shell line
    return " ".join(command)


def dns_wait(workers: List[str]) -> str:
    return (
        f"TIMEOUT=300; START_TIME=$(date +%s); for worker in {' '.join(workers)}; do "
        'echo "Waiting for DNS: $worker"; until getent hosts $worker >/dev/null 2>&1; do '
        "CURRENT_TIME=$(date +%s); if [ $((CURRENT_TIME - START_TIME)) -gt $TIMEOUT ]; then "
        'echo "ERROR: Timeout waiting for DNS: $worker"; exit 1; fi; echo "DNS not ready for $worker, retrying..."; '
        'sleep 2; done; echo "✓ DNS resolved: $worker"; done; echo "All workers DNS ready"'
    )


def mpirun_line(container: dict, ctx: RoleContext) -> str:
    hosts = ctx.deployer.host_names(ctx.service, ctx.nodes)
    env_names = sorted({e.get("name") for e in container.get("env") or [] if e.get("name")} | set(FORWARDED_ENV))
    forwarded = " ".join(f"-x {n}" for n in env_names)
    return (
        f'mpirun $([ "$(id -u)" = "0" ] && echo --allow-run-as-root) --oversubscribe -n {ctx.nodes * ctx.gpus} '
        f"-H {','.join(hosts)} --mca pml ob1 --mca plm_rsh_args \"-p 2222 -o StrictHostKeyChecking=no -i "
        f"$HOME/.ssh/id_rsa\" {forwarded} bash -c 'trtllm-llmapi-launch {original_command(container)}'"
    )


def update_container(container: dict, ctx: RoleContext) -> Decision:
    decision = decide(container, ctx)
    if not ctx.multinode:
        return decision
    container.setdefault("volumeMounts", []).append(
        {"name": ctx.ssh_secret_name, "mountPath": SSH_MOUNT, "readOnly": True}
    )
    container.setdefault("env", []).append({"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "1"})
    if ctx.role == WORKER:
        container.pop("livenessProbe", None)
        container.pop("startupProbe", None)
        container["readinessProbe"] = dict(WORKER_READINESS, tcpSocket=dict(WORKER_READINESS["tcpSocket"]))
    if ctx.role_templates:
        return decision  # 1.6: the authored launch commands are kept
    if ctx.role == LEADER:
        steps = list(_SSH_CLIENT_SETUP)
        if ctx.deployer.needs_dns_wait():
            steps.append(dns_wait(ctx.deployer.host_names(ctx.service, ctx.nodes)[1:]))
        steps.append(mpirun_line(container, ctx))
    else:
        steps = ["mkdir -p $HOME/.ssh $HOME/.ssh/host_keys $HOME/.ssh/run"] + _SSH_CLIENT_SETUP[1:] + _SSHD_SETUP
    container["command"] = ["/bin/sh", "-c"]
    container["args"] = [" && ".join(steps)]
    return decision


def update_pod_spec(pod_spec: dict, ctx: RoleContext) -> None:
    if not ctx.multinode:
        return
    pod_spec.setdefault("volumes", []).append(
        {"name": ctx.ssh_secret_name, "secret": {"secretName": ctx.ssh_secret_name, "defaultMode": SECRET_DEFAULT_MODE}}
    )


TOPOLOGY_MARKERS = ("mpirun", "sshd")


def engine_args(model: str, tp: int, pp: int, disaggregation_mode: Optional[str]) -> List[str]:
    args = ["--model-path", model, "--served-model-name", model, "--tensor-parallel-size", str(tp)]
    args += ["--pipeline-parallel-size", str(pp)] if pp > 1 else []
    return args + (["--disaggregation-mode", disaggregation_mode] if disaggregation_mode else [])


# ---- authoring (generate / upgrade --role-templates) ---------------------------------------------
# An authored 1.6 role template owns the SSH setup and mpirun the operator would otherwise write.
# The literal "\n" are printf escapes. Same SSH layout the operator uses (keys from /ssh-pk).
_ROLE_SSH_CLIENT = [
    "mkdir -p $HOME/.ssh $HOME/.ssh/host_keys $HOME/.ssh/run",
    "cp /ssh-pk/private.key $HOME/.ssh/id_rsa",
    "cp /ssh-pk/private.key.pub $HOME/.ssh/id_rsa.pub",
    "cp /ssh-pk/private.key.pub $HOME/.ssh/authorized_keys",
    "chmod 600 $HOME/.ssh/id_rsa $HOME/.ssh/authorized_keys",
    "chmod 644 $HOME/.ssh/id_rsa.pub",
    f"printf 'Host *\\nIdentityFile '$HOME'/.ssh/id_rsa\\nStrictHostKeyChecking no\\nPort {SSH_PORT}\\n' "
    "> $HOME/.ssh/config",
]
_ROLE_SSHD = [
    "ssh-keygen -q -t ed25519 -f $HOME/.ssh/host_keys/ssh_host_ed25519_key -N ''",
    f"printf 'Port {SSH_PORT}\\nHostKey '$HOME'/.ssh/host_keys/ssh_host_ed25519_key\\nPidFile '$HOME'/.ssh/run/sshd.pid"
    "\\nStrictModes no\\nPermitRootLogin yes\\nPasswordAuthentication no\\nPubkeyAuthentication yes\\n"
    "AuthorizedKeysFile '$HOME'/.ssh/authorized_keys\\n' > $HOME/.ssh/sshd_config",
    "exec /usr/sbin/sshd -D -e -f $HOME/.ssh/sshd_config",
]


def _worker_host_expr(orchestrator: str, index: int) -> str:
    """Worker ``index`` (1-based rank) derived from the leader's address, provider by provider:
    Grove ``…-<comp>-ldr-0.<svc>`` -> ``…-<comp>-wkr-<rank-1>.<svc>``; LWS ``<lws>-<g>.<lws>.<ns>``
    -> ``<lws>-<g>-<rank>.<lws>.<ns>`` (there is no portable alias for worker addresses)."""
    if orchestrator == "grove":
        return f"$(echo \"$DYNAMO_LEADER_ADDRESS\" | sed 's/-ldr-0\\./-wkr-{index - 1}\\./')"
    return f"$(echo \"$DYNAMO_LEADER_ADDRESS\" | sed 's/\\./-{index}\\./')"


def role_command(role: str, *, nodes: int, gpus_per_node: int, orchestrator: str, launch: str) -> List[str]:
    """``[/bin/sh, -c, script]`` for a TRT-LLM role: the worker runs sshd on port 2222 (the operator
    probes it there), the leader waits for the workers' DNS and runs ``mpirun`` over all pods."""
    if role == "worker":
        return ["/bin/sh", "-c", " && ".join(_ROLE_SSH_CLIENT + _ROLE_SSHD)]
    workers = " ".join(_worker_host_expr(orchestrator, i) for i in range(1, nodes))
    wait = (f'HOSTS="$DYNAMO_LEADER_ADDRESS"; for w in {workers}; do HOSTS="$HOSTS,$w"; '
            'until getent hosts "$w" >/dev/null 2>&1; do echo "waiting for DNS of $w"; sleep 2; done; done')
    mpirun = (f'mpirun $([ "$(id -u)" = "0" ] && echo --allow-run-as-root) --oversubscribe '
              f"-n {nodes * gpus_per_node} -H \"$HOSTS\" --mca pml ob1 "
              f"--mca plm_rsh_args \"-p {SSH_PORT} -o StrictHostKeyChecking=no -i $HOME/.ssh/id_rsa\" "
              "-x HF_TOKEN -x HF_HOME -x PATH -x LD_LIBRARY_PATH -x PYTHONPATH -x HOME "
              f"bash -c 'trtllm-llmapi-launch {launch}'")
    return ["/bin/sh", "-c", " && ".join(_ROLE_SSH_CLIENT + [wait, mpirun])]
