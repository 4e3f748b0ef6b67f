"""SGLang backend (ai-dynamo/dynamo@2a6da14c deploy/operator/internal/dynamo/backend_sglang.go): distributed-init flags for every multinode pod.

No GPU or TP logic and no idempotency check: the flags are injected even if the user already
passed them. The compilation cache is only logged by the operator (no env).
"""

from __future__ import annotations

from typing import List, Optional

from kubectl_dynamo.operator.context import WORKER, Decision, RoleContext
from kubectl_dynamo.operator.deployer import LEADER_REF, RANK_REF
from kubectl_dynamo.operator.flags import inject_flags_into_container_command

DIST_INIT_PORT = "29500"
TP_FLAGS = ("--tp-size", "--tp", "--tensor-parallel-size")  # spellings SGLang accepts
PP_FLAGS = ("--pp-size", "--pipeline-parallel-size")
TOPOLOGY_MARKERS = ("--dist-init-addr", "--node-rank", "--nnodes")


def engine_args(model: str, tp: int, pp: int, disaggregation_mode: Optional[str]) -> List[str]:
    args = ["--model-path", model, "--served-model-name", model, "--tp-size", str(tp)]
    args += ["--pp-size", str(pp)] if pp > 1 else []
    if disaggregation_mode:
        args += ["--disaggregation-mode", disaggregation_mode, "--disaggregation-transfer-backend", "nixl"]
    return args


def role_args(nodes: int, role: str) -> List[str]:
    """An authored 1.6 role template's distributed-init flags."""
    return ["--dist-init-addr", f"{LEADER_REF}:{DIST_INIT_PORT}", "--nnodes", str(nodes), "--node-rank", RANK_REF]


def decide(container: dict, ctx: RoleContext) -> Decision:
    if not ctx.multinode:
        return Decision("single-node", "one pod per replica; no multinode launch wiring")
    if ctx.role_templates:
        return Decision("sglang", "role pod templates: the authored --dist-init-addr/--node-rank are kept")
    return Decision("sglang", f"--dist-init-addr <leader>:{DIST_INIT_PORT} --nnodes {ctx.nodes} --node-rank <rank>")


def update_container(container: dict, ctx: RoleContext) -> Decision:
    decision = decide(container, ctx)
    if not ctx.multinode:
        return decision
    if not ctx.role_templates:
        leader = ctx.deployer.engine_leader(ctx.service)
        if ctx.role == WORKER:
            rank, needs_shell = ctx.deployer.engine_rank()
        else:
            rank, needs_shell = "0", False
        flags = f"--dist-init-addr {leader}:{DIST_INIT_PORT} --nnodes {ctx.nodes} --node-rank {rank}"
        inject_flags_into_container_command(container, flags, needs_shell, "sglang")
    if ctx.role == WORKER:
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            container.pop(probe, None)
    return decision


def update_pod_spec(pod_spec: dict, ctx: RoleContext) -> None:
    """SGLang adds nothing at pod level."""
