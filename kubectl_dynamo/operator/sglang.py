"""SGLang backend (ai-dynamo/dynamo@2a6da14c deploy/operator/internal/dynamo/backend_sglang.go): distributed-init flags for every multinode pod.

No GPU or TP logic and no idempotency check: the flags are injected even if the user already
passed them. The compilation cache is only logged by the operator (no env).
"""

from __future__ import annotations

from typing import List, Optional

from kubectl_dynamo.operator import api, versions
from kubectl_dynamo.operator.context import WORKER, Decision, RenderError, RoleContext
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


# ---- 1.6: one NIXL exporter port per co-located rank (tu-kim/dynamo@3f3d3dfa
# internal/dynamo/backend_sglang.go reserveNixlExporterPorts) ------------------------------------
NIXL_PORT = "nixl"
MAX_NIXL_PORTS = 8  # consts.DynamoMaxNixlPorts
MAX_TCP_PORT = 65535


def _fail(message: str) -> None:
    raise RenderError(message)


def _env(container: dict, name: str) -> Optional[dict]:
    return next((e for e in container.get("env") or [] if e.get("name") == name), None)


def _nixl_base_port(env: Optional[dict]) -> Optional[int]:
    """``nixlPrometheusPort``: a literal base port; None when unset or from valueFrom."""
    if env is None or env.get("valueFrom") is not None:
        return None
    value = str(env.get("value") or "")
    digits, base = (value[2:], 16) if value[:2] in ("0x", "0X") else (value, 10)
    try:
        port = int(digits, base)
        if digits != digits.strip() or digits.startswith(("+", "-")) or "_" in digits:
            raise ValueError
    except ValueError:
        _fail(_port_error(f'is set to "{value}", which is not a number'))
    if port == 0:
        _fail(_port_error("is set to 0, which asks NIXL for an ephemeral port the operator cannot declare or scrape"))
    if port > MAX_TCP_PORT:
        _fail(_port_error(f"is set to {port}, which is outside the port range 1-{MAX_TCP_PORT}"))
    return port


def _port_error(reason: str) -> str:
    return (f"NIXL_TELEMETRY_PROMETHEUS_PORT is the base of the NIXL exporter range and {reason}, so the operator "
            "cannot declare the range it names and Prometheus would scrape ports no rank binds. Set "
            f"NIXL_TELEMETRY_PROMETHEUS_PORT to a port between 1 and {MAX_TCP_PORT}, or set NIXL_TELEMETRY_ENABLE=n")


def reserve_nixl_exporter_ports(container: dict, gpus: int) -> None:
    ports = container.get("ports") or []
    base = next((p for p in ports if p.get("name") == NIXL_PORT), None)
    enabled = _env(container, "NIXL_TELEMETRY_ENABLE")
    if base is None or enabled is None:
        return
    prometheus_on = enabled.get("valueFrom") is None
    if prometheus_on:
        value = str(enabled.get("value") or "").lower()
        if value in ("1", "yes", "on", "true", "enable", "n", "0", "no", "off", "false", "disable"):
            return
        if value != "y":
            _fail(f'NIXL_TELEMETRY_ENABLE is set to "{enabled.get("value") or ""}", which is not a '
                              "boolean value recognized by NIXL")
    exporter = _env(container, "NIXL_TELEMETRY_EXPORTER")
    if exporter is None:
        return
    if exporter.get("valueFrom") is not None:
        prometheus_on = False
    elif exporter.get("value") != "prometheus":
        return
    override = _env(container, "NIXL_TELEMETRY_PROMETHEUS_PORT")
    literal = _nixl_base_port(override)
    if literal is not None:
        base["containerPort"] = literal
    elif override is not None and override.get("valueFrom") is not None:
        _fail(
            "NIXL_TELEMETRY_PROMETHEUS_PORT is set through valueFrom, so the operator cannot declare the exporter "
            f"range as {NIXL_PORT} container ports and Prometheus would scrape a range no rank binds. Set "
            "NIXL_TELEMETRY_PROMETHEUS_PORT to a literal port, or set NIXL_TELEMETRY_ENABLE=n")
    ranks = gpus
    if ranks > MAX_NIXL_PORTS:
        if prometheus_on:
            _fail(
                f"{ranks} co-located GPUs each need a NIXL exporter port, but only {MAX_NIXL_PORTS} consecutive ports "
                f"are declared and scraped, so the ranks past the {MAX_NIXL_PORTS}th would fail to start. Run at most "
                f"{MAX_NIXL_PORTS} ranks per container, or set NIXL_TELEMETRY_ENABLE=n")
        ranks = MAX_NIXL_PORTS
    first = int(base["containerPort"])
    if first + ranks - 1 > MAX_TCP_PORT:
        _fail(f"NIXL_TELEMETRY_PROMETHEUS_PORT={first} with {ranks} co-located ranks needs ports "
                          f"{first}-{first + ranks - 1}, which exceeds the maximum port {MAX_TCP_PORT}")
    for rank in range(1, ranks):
        name = f"{NIXL_PORT}-{rank}"
        declared = next((p for p in ports if p.get("name") == name), None)
        if declared is not None:
            declared["containerPort"] = first + rank
            continue
        ports.append({"protocol": "TCP", "name": name, "containerPort": first + rank})
    container["ports"] = ports


def update_container(container: dict, ctx: RoleContext) -> Decision:
    if versions.at_least(ctx.operator_version, api.ROLE_TEMPLATES_SINCE):
        # Before any early return: a single-node worker co-locates every rank in one container.
        reserve_nixl_exporter_ports(container, ctx.gpus)
    decision = decide(container, ctx)
    if not ctx.multinode:
        return decision
    if not ctx.role_templates:
        leader = ctx.deployer.engine_leader(ctx.service)
        if ctx.role == WORKER:
            rank, needs_shell = ctx.deployer.engine_rank()
        else:
            rank, needs_shell = ctx.deployer.engine_leader_rank(), False
        flags = f"--dist-init-addr {leader}:{DIST_INIT_PORT} --nnodes {ctx.nodes} --node-rank {rank}"
        inject_flags_into_container_command(container, flags, needs_shell, "sglang")
    if ctx.role == WORKER:
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            container.pop(probe, None)
    return decision


def update_pod_spec(pod_spec: dict, ctx: RoleContext) -> None:
    """SGLang adds nothing at pod level."""
