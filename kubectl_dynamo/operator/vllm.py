"""vLLM backend: multinode launch rewriting (mp / Ray / elastic EP / data parallel), probes, env.

ai-dynamo/dynamo@2a6da14c deploy/operator/internal/dynamo/backend_vllm.go. The mode is chosen from the container's *args* only (each arg split on
whitespace; the command is not inspected), the main container's GPU count and node count:

1. TP×PP > GPUs/pod (GPUs > 0)            -> mp (annotation or origin >= 1.0.0) or Ray
2. ``--enable-elastic-ep`` in args         -> elastic EP (one Ray cluster over all nodes)
3. TP×PP×DP > GPUs/pod (GPUs > 0)          -> data parallel (hybrid load balancing)
4. otherwise                               -> nothing injected

Operators up to 1.5 read flags as exact ``--flag value`` tokens only; 1.6 also accepts the aliases
``-tp -pp -dp -dpl -dpb``, underscore spellings and ``--flag=value`` ([NEWER] source; whether
the rendered args are rewritten to the long form is [UNVERIFIED] — modelled as parsing only).
"""

from __future__ import annotations

import re
from typing import List, Mapping, Optional

from kubectl_dynamo.operator import api, versions
from kubectl_dynamo.operator.context import LEADER, MAIN, WORKER, Decision, RenderError, RoleContext
from kubectl_dynamo.operator.deployer import LEADER_REF, RANK_REF
from kubectl_dynamo.operator.flags import inject_flags_into_container_command
from kubectl_dynamo.operator.quoting import k8s_to_shell_var_syntax, shell_quote_for_bash_c, shell_quote_posix

RAY_PORT = "6379"
DP_RPC_PORT = "13445"
MP_MASTER_PORT = "29500"
DEFAULT_CACHE_PATH = "/root/.cache/vllm"


TP, PP, DP = "--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size"
DP_LOCAL, DP_BACKEND = "--data-parallel-size-local", "--data-parallel-backend"
ELASTIC_EP = "--enable-elastic-ep"
EXECUTOR = "--distributed-executor-backend"

WAIT_LEADER_INIT = "wait-for-leader-mp"
WAIT_LEADER_VOLUME = "wait-leader-script"
WAIT_LEADER_MOUNT = "/scripts"
WAIT_LEADER_KEY = "wait-for-leader.py"

_ALIASES = {"-tp": TP, "-pp": PP, "-dp": DP, "-dpl": DP_LOCAL, "-dpb": DP_BACKEND}
_VALUE_FLAGS = {TP, PP, DP, DP_LOCAL, DP_BACKEND, EXECUTOR}
_KNOWN_FLAGS = _VALUE_FLAGS | {ELASTIC_EP}

POD_IP_ENV = {"valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}


# ---- parsing -------------------------------------------------------------------------------

def expanded_args(container: dict) -> List[str]:
    """Every arg split on whitespace, so ``["python3 -m dynamo.vllm --tensor-parallel-size 8"]`` counts."""
    return [tok for arg in container.get("args") or [] for tok in arg.split()]


def _canonical(name: str) -> str:
    if name in _ALIASES:
        return _ALIASES[name]
    if name.startswith("--"):
        dashed = "--" + name[2:].replace("_", "-")
        if dashed in _KNOWN_FLAGS:
            return dashed
    return name


def normalize_flags(tokens: List[str]) -> List[str]:
    """1.6 spelling normalisation: aliases, underscores, ``--flag=value`` split for value flags."""
    out: List[str] = []
    for tok in tokens:
        if not tok.startswith("-"):
            out.append(tok)
            continue
        name, eq, value = tok.partition("=")
        canon = _canonical(name)
        if canon in _VALUE_FLAGS and eq:
            out += [canon, value]
        elif canon in _KNOWN_FLAGS and not eq:
            out.append(canon)
        else:
            out.append(tok)
    return out


def launch_tokens(container: dict, operator_version: Optional[str]) -> List[str]:
    tokens = expanded_args(container)
    if versions.at_least(operator_version, api.VLLM_FLAG_NORMALIZATION_SINCE):
        tokens = normalize_flags(tokens)
    return tokens


def flag_value(tokens: List[str], flag: str) -> int:
    """Integer after the first exact ``flag`` token; 1 when absent or not an integer."""
    if flag in tokens:
        i = tokens.index(flag)
        if i + 1 < len(tokens):
            try:
                return int(tokens[i + 1])
            except ValueError:
                return 1
    return 1


def should_use_mp(annotations: Mapping[str, str]) -> bool:
    """Annotation mp/ray wins (case-insensitive); else mp iff origin version >= 1.0.0."""
    value = (annotations.get(api.ANN_VLLM_EXECUTOR_BACKEND) or "").lower()
    if value in ("mp", "ray"):
        return value == "mp"
    return versions.at_least(annotations.get(api.ANN_ORIGIN_VERSION), api.VLLM_MP_ORIGIN_SINCE)


def _mp_reason(annotations: Mapping[str, str]) -> str:
    value = (annotations.get(api.ANN_VLLM_EXECUTOR_BACKEND) or "").lower()
    if value in ("mp", "ray"):
        return f"{api.ANN_VLLM_EXECUTOR_BACKEND}: {value}"
    origin = annotations.get(api.ANN_ORIGIN_VERSION)
    if origin is None:
        return "no origin-version annotation, so Ray"
    if versions.at_least(origin, api.VLLM_MP_ORIGIN_SINCE):
        return f"origin version {origin} >= {api.VLLM_MP_ORIGIN_SINCE}, so mp"
    return f"origin version {origin!r} is not >= {api.VLLM_MP_ORIGIN_SINCE}, so Ray"


def command_line_has(container: dict, flag: str, value: str) -> bool:
    """``flag value`` or ``flag=value`` anywhere in command+args (joined strings included)."""
    tokens = [tok for part in (container.get("command") or []) + (container.get("args") or []) for tok in part.split()]
    for i, tok in enumerate(tokens):
        if tok == f"{flag}={value}" or (tok == flag and i + 1 < len(tokens) and tokens[i + 1] == value):
            return True
    return False


def has_arg(tokens: List[str], flag: str, value: str) -> bool:
    """``hasArg`` (internal/dynamo/utils.go): ``flag value`` / ``flag=value`` inside a token, or as two tokens.

    The one matcher for "this flag has this value": on a container's args (``containerHasArg``) and on
    its expanded command line (``ensure_command_line_flag``, the webhook's elastic-EP check)."""
    joined, equals = f"{flag} {value}", f"{flag}={value}"
    return any(joined in t or equals in t or (t == flag and i + 1 < len(tokens) and tokens[i + 1] == value)
               for i, t in enumerate(tokens))


def single_pod_elastic_ep(container: dict) -> bool:
    """RoleMain elastic EP: --enable-elastic-ep plus a Ray DP backend, anywhere in command+args."""
    tokens = [tok for part in (container.get("command") or []) + (container.get("args") or []) for tok in part.split()]
    if ELASTIC_EP not in tokens:
        return False
    for i, tok in enumerate(tokens):
        if tok in (f"{DP_BACKEND}=ray", "-dpb=ray"):
            return True
        if tok in (DP_BACKEND, "-dpb") and i + 1 < len(tokens) and tokens[i + 1] == "ray":
            return True
    return False


def decide(container: dict, ctx: RoleContext) -> Decision:
    """The launch mode for this role's container (see the module docstring)."""
    if not ctx.multinode:
        if ctx.role == MAIN and single_pod_elastic_ep(container):
            return Decision("elastic-ep", "single pod with --enable-elastic-ep and a Ray data-parallel backend")
        return Decision("single-node", "one pod per replica; no multinode launch wiring")
    if ctx.role_templates:
        if command_line_has(container, EXECUTOR, "mp"):
            return Decision("mp", "role pod templates: authored mp command kept; operator adds --master-port=29500")
        if command_line_has(container, EXECUTOR, "ray"):
            return Decision("ray", "role pod templates: authored Ray command kept")
        return Decision("none", "role pod templates: the authored commands own the launch; nothing injected")
    tokens = launch_tokens(container, ctx.operator_version)
    tp, pp, dp = flag_value(tokens, TP), flag_value(tokens, PP), flag_value(tokens, DP)
    world, gpus = tp * pp, ctx.gpus
    if gpus > 0 and world > gpus:
        mp = should_use_mp(ctx.annotations)
        return Decision("mp" if mp else "ray",
                        f"TP×PP = {tp}×{pp} = {world} > {gpus} GPUs/pod; {_mp_reason(ctx.annotations)}")
    if ELASTIC_EP in tokens:
        return Decision("elastic-ep", f"{ELASTIC_EP} in args and TP×PP = {world} fits in one pod")
    if gpus > 0 and world * dp > gpus:
        return Decision("data-parallel", f"TP×PP×DP = {tp}×{pp}×{dp} = {world * dp} > {gpus} GPUs/pod")
    if gpus == 0:
        return Decision("none", "no GPU request on the main container, so no parallelism flags are injected")
    return Decision("none", f"TP×PP×DP = {world * dp} fits in {gpus} GPUs/pod; no flags injected")


# ---- authoring (generate / upgrade --role-templates) ---------------------------------------------

TOPOLOGY_MARKERS = ("--node-rank", "--nnodes")  # an authored launch already wires the topology


def engine_args(model: str, tp: int, pp: int, disaggregation_mode: Optional[str]) -> List[str]:
    args = ["--model", model, TP, str(tp)] + ([PP, str(pp)] if pp > 1 else [])
    return args + (["--disaggregation-mode", disaggregation_mode] if disaggregation_mode else [])


def role_args(nodes: int, role: str) -> List[str]:
    """An authored 1.6 role template's mp flags (the operator adds ``--master-port=29500``)."""
    args = [EXECUTOR, "mp", "--nnodes", str(nodes), "--node-rank", RANK_REF, "--master-addr", LEADER_REF]
    return args + (["--headless"] if role == WORKER else [])


# ---- rendering -----------------------------------------------------------------------------

# ---- 1.6 role templates (tu-kim/dynamo@3f3d3dfa internal/dynamo/backend_vllm.go) -----------------
# An authored role template keeps its launch; when it runs the mp executor the operator only makes
# sure ``--master-port 29500`` is on the command line (``ensureContainerCommandLineFlag``).

def _command_line(container: dict) -> List[str]:
    """``getExpandedCommandLine``: command and args split on whitespace, vLLM flags normalised."""
    tokens = [t for a in list(container.get("command") or []) + list(container.get("args") or []) for t in a.split()]
    return normalize_flags(tokens)


def _authored_mp(container: dict) -> bool:
    """``parseVLLMLaunchArgs(...).IsMpDistributedExecutorBackend``: the last executor flag says mp."""
    tokens, mp = _command_line(container), False
    for i, tok in enumerate(tokens[:-1]):
        if tok == EXECUTOR:
            mp = tokens[i + 1] == "mp"
    return mp


def _inject_direct(command: str, flags: str, executable: str = "vllm", subcommand: str = "serve") -> str:
    """``injectFlagsIntoDirectCommand``: after a ``vllm serve`` segment of a shell line."""
    direct = f"{executable} {subcommand}".strip()
    pattern = re.compile(rf"(^|\s)((?:exec\s+)?{re.escape(direct)}(?:\s+[^|&;]*)?)(\s|$|[|&;])")
    return pattern.sub(lambda m: f"{m.group(1)}{m.group(2).strip()} {flags}{m.group(3)}", command)


def ensure_command_line_flag(container: dict, flag: str, value: str) -> None:
    def has() -> bool:
        return has_arg(_command_line(container), flag, value)

    if has():
        return
    inject_flags_into_container_command(container, f"{flag} {value}", False, "vllm")
    for key in ("args", "command"):
        if has():
            return
        items = list(container.get(key) or [])
        for i, item in enumerate(items):
            modified = _inject_direct(item, f"{flag} {value}")
            if modified != item:
                items[i] = modified
                container[key] = items
                break
    command = container.get("command") or []
    if not has() and (not command or command[0].split("/")[-1] not in ("sh", "bash")):
        container["args"] = list(container.get("args") or []) + [flag, value]
    if not has():
        raise RenderError(f'could not add operator-owned flag "{flag}" to the container command line')


def _inject_mp(container: dict, ctx: RoleContext) -> None:
    leader = ctx.deployer.engine_leader(ctx.service)
    flags = f"{EXECUTOR} mp --nnodes {ctx.nodes} --master-addr {leader} --master-port {MP_MASTER_PORT}"
    if ctx.role == WORKER:
        rank, needs_shell = ctx.deployer.engine_rank()
        flags += f" --node-rank {rank} --headless"
    else:
        flags, needs_shell = flags + f" --node-rank {ctx.deployer.engine_leader_rank()}", False
    inject_flags_into_container_command(container, flags, needs_shell, "vllm")


def _inject_ray(container: dict, ctx: RoleContext) -> None:
    if ctx.role == LEADER:
        cmd = " ".join(shell_quote_for_bash_c(t) for t in container.get("command") or [])
        args = " ".join(shell_quote_for_bash_c(t) for t in container.get("args") or [])
        container["args"] = [f"ray start --head --port={RAY_PORT} && {cmd} {args} {EXECUTOR} ray"]
    else:
        leader = ctx.deployer.leader_hostname(ctx.service)
        container["args"] = [f"ray start --address={leader}:{RAY_PORT} --block"]
    container["command"] = ["/bin/sh", "-c"]


def _inject_data_parallel(container: dict, ctx: RoleContext) -> None:
    tokens = launch_tokens(container, ctx.operator_version)
    world = flag_value(tokens, TP) * flag_value(tokens, PP)
    local = ctx.gpus // world
    total = flag_value(tokens, DP)
    if total == 1:
        total = local * ctx.nodes
    if ctx.role == WORKER:
        rank, _ = ctx.deployer.node_rank()
        start, needs_shell = f"$(( {local} * {rank} ))", True  # arithmetic always needs a shell
    else:
        start, needs_shell = "0", False
    parts = ["--data-parallel-hybrid-lb"]
    if DP not in tokens:
        parts.append(f"{DP} {total}")
    parts += [
        f"{DP_LOCAL} {local}",
        f"--data-parallel-start-rank {start}",
        f"--data-parallel-address {ctx.deployer.leader_hostname(ctx.service)}",
        f"--data-parallel-rpc-port {DP_RPC_PORT}",
    ]
    inject_flags_into_container_command(container, " ".join(parts), needs_shell, "vllm")


def _ray_head_then(cmdline: str, single_pod: bool) -> str:
    node_ip = ' --node-ip-address="$POD_IP"' if single_pod else ""
    return (
        f"ray start --head --port={RAY_PORT}{node_ip} --block & "
        "i=0; until python3 -c \"import socket; s=socket.create_connection(('127.0.0.1',6379),timeout=1); s.close()\" "
        "2>/dev/null; do i=$((i+1)); [ \"$i\" -ge 150 ] && { echo \"ERROR: Ray head did not start within 300s\" >&2; "
        "exit 1; }; sleep 2; done && " + ("exec " if single_pod else "") + cmdline
    )


def _inject_elastic_ep(container: dict, ctx: RoleContext) -> None:
    if ctx.role == WORKER:
        leader = ctx.deployer.leader_hostname(ctx.service)
        script = (
            f"i=0; until python3 -c \"import urllib.request; urllib.request.urlopen('http://{leader}:9090/live', "
            "timeout=5)\" 2>/dev/null; do i=$((i+1)); [ \"$i\" -ge 720 ] && { echo \"ERROR: leader /live did not "
            "become ready within 3h\" >&2; exit 1; }; echo 'waiting for leader dynamo.vllm /live to return 200...'; "
            f"sleep 15; done && ray start --address={leader}:{RAY_PORT} --block"
        )
    else:
        if not container.get("command"):
            return  # nothing to launch after the Ray head: left untouched
        argv = (container.get("command") or []) + (container.get("args") or [])
        script = _ray_head_then(" ".join(shell_quote_posix(t) for t in argv), single_pod=ctx.role == MAIN)
    container["command"] = ["/bin/sh", "-c"]
    container["args"] = [script]


def _append_env(container: dict, env: dict) -> None:
    container.setdefault("env", []).append(env)


def update_container(container: dict, ctx: RoleContext) -> Decision:
    """Mutate the main container as vLLM's UpdateContainer does; return the chosen mode."""
    if ctx.inter_pod_gms:
        # Engines load weights from the rank's GMS weight-server pod.
        if not has_arg(container.get("args") or [], "--load-format", "gms"):  # containerHasArg
            inject_flags_into_container_command(container, "--load-format gms", False, "vllm")
        if ctx.inter_pod_failover:
            _append_env(container, {"name": "DYN_VLLM_GMS_SHADOW_MODE", "value": "true"})
    decision = decide(container, ctx)
    if ctx.multinode:
        role_template_mp = ctx.role_templates and _authored_mp(container)
        if role_template_mp:
            ensure_command_line_flag(container, "--master-port", MP_MASTER_PORT)
        elif ctx.role_templates:
            pass
        elif decision.mode == "mp":
            _inject_mp(container, ctx)
        elif decision.mode == "ray":
            _inject_ray(container, ctx)
        elif decision.mode == "elastic-ep":
            _inject_elastic_ep(container, ctx)
        elif decision.mode == "data-parallel":
            _inject_data_parallel(container, ctx)
        if ctx.role == WORKER:
            for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
                container.pop(probe, None)
        if role_template_mp or (not ctx.role_templates and should_use_mp(ctx.annotations)):
            _append_env(container, {"name": "VLLM_NIXL_SIDE_CHANNEL_HOST", **POD_IP_ENV})
    elif decision.mode == "elastic-ep" and container.get("command"):
        _inject_elastic_ep(container, ctx)
        _append_env(container, {"name": "POD_IP", **POD_IP_ENV})
        _append_env(container, {"name": "VLLM_DP_MASTER_IP", **POD_IP_ENV})
    if ctx.compilation_cache_path:
        _append_env(container, {"name": "VLLM_CACHE_ROOT", "value": ctx.compilation_cache_path})
    return decision


def update_pod_spec(pod_spec: dict, ctx: RoleContext) -> None:
    """mp workers wait for the leader's master port before starting (init container + script volume).

    [UNVERIFIED] for 1.6 portable topology: the init container keeps the provider host name (it does
    not receive DYNAMO_LEADER_ADDRESS, which is injected into the main container only).
    """
    containers = pod_spec.get("containers") or []
    if not (ctx.parent_dgd and ctx.multinode and ctx.role == WORKER and containers):
        return
    main = containers[0]
    # 1.6 reads the executor as vLLM does, the last --distributed-executor-backend on the normalised
    # command line (tu-kim/dynamo@3f3d3dfa backend_vllm.go shouldInjectVLLMMpWaitLeaderInit).
    v16 = versions.at_least(ctx.operator_version, api.ROLE_TEMPLATES_SINCE)
    if not (_authored_mp(main) if v16 else command_line_has(main, EXECUTOR, "mp")):
        return
    # Init containers get Grove/LWS env after ours, so the kubelet cannot expand $(X): use ${X}.
    host = k8s_to_shell_var_syntax(ctx.deployer.leader_hostname(ctx.service))
    init = {
        "name": WAIT_LEADER_INIT,
        "image": main.get("image", ""),
        "command": [
            "sh", "-c",
            f'export LEADER_HOST="{host}" LEADER_PORT="{MP_MASTER_PORT}" && exec python3 {WAIT_LEADER_MOUNT}/{WAIT_LEADER_KEY}',
        ],
        "volumeMounts": [{"name": WAIT_LEADER_VOLUME, "mountPath": WAIT_LEADER_MOUNT, "readOnly": True}],
    }
    pod_spec.setdefault("initContainers", []).append(init)
    pod_spec.setdefault("volumes", []).append(
        {"name": WAIT_LEADER_VOLUME, "configMap": {"name": f"{ctx.parent_dgd}-wait-leader-script"}}
    )
