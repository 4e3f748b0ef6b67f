"""Findings for `explain`: things the operator will do that the author probably did not intend.

Every finding has a stable kebab-case ``code``, a ``severity`` (error: the operator fails or the
engine cannot start; warning: it runs but not as intended; info: worth knowing) and a concrete
``hint``. Schema validation against the CRD is done elsewhere.
"""

from __future__ import annotations

import re
from typing import List, Optional

from kubectl_dynamo.operator import api, selection, sglang, versions, vllm
from kubectl_dynamo.operator.context import Decision

ERROR, WARNING, INFO = "error", "warning", "info"

_TOPOLOGY_REF = re.compile(r"\$\((DYNAMO_RANK|DYNAMO_LEADER_ADDRESS)\)")
# Flag spellings operators <= 1.5 do not parse (exact `--flag value` tokens only).
_IGNORED_FORM = re.compile(
    r"^(?:(--tensor-parallel-size|--pipeline-parallel-size|--data-parallel-size)=\S*"
    r"|-tp|-pp|-dp|-tp=\S*|-pp=\S*|-dp=\S*"
    r"|--tensor_parallel_size(?:=\S*)?|--pipeline_parallel_size(?:=\S*)?|--data_parallel_size(?:=\S*)?)$"
)


def finding(code: str, severity: str, component: Optional[str], message: str, hint: str) -> dict:
    from kubectl_dynamo.findings.finding import Finding  # the catalogue checks code and severity

    return dict(Finding(code, severity, message, hint, component).as_json())


def selection_findings(sel) -> List[dict]:
    if not sel.error:
        return []
    if sel.error == selection.ERR_NO_ORCHESTRATOR:
        return [finding(
            "no-multinode-orchestrator", ERROR, None,
            f"{sel.reason}. The DGD fails with reason no_multinode_orchestrator_available "
            "(pods shown as the LWS path would render them).",
            "Install Grove (helm --set global.grove.install=true) and do not set nvidia.com/enable-grove: \"false\", "
            "or install LWS together with Volcano so the LWS gate turns on.",
        )]
    if sel.error == selection.ERR_QUEUE_MISSING:
        return [finding(
            "kai-queue-missing", ERROR, None, sel.reason,
            f"Create the KAI Queue '{sel.queue}' (scheduling.run.ai/v2) or point nvidia.com/kai-scheduler-queue "
            "at an existing leaf queue.",
        )]
    if sel.error == selection.ERR_SCHEDULER_CONFLICT:
        return [finding("scheduler-integration-conflict", ERROR, None, sel.reason,
                        "Enable only one of orchestrators.kaiScheduler and orchestrators.volcanoScheduler in the operator.")]
    return [finding("workload-provider-unavailable", ERROR, None, sel.reason,
                    "Re-enable Grove in the operator (global.grove.enabled=true) or recreate the DGD on the component provider.")]


def queue_of(orchestrator: Optional[str], scheduler: Optional[str], queue: Optional[str]) -> str:
    """The queue a DGD's pods get on a path, in words (LWS: the PodGroup LWS creates, in Volcano's default)."""
    if orchestrator == "lws":
        return "Volcano queue default (their PodGroups name none)"
    if scheduler in ("kai-scheduler", "volcano"):
        return f"{'KAI' if scheduler == 'kai-scheduler' else 'Volcano'} queue {queue or 'default'}"
    return "no queue (default-scheduler places them)"


def queue_annotation_ignored(orchestrator: Optional[str], scheduler: Optional[str], annotations, *, gets: str,
                             namespace: Optional[str], dgd: Optional[str]) -> List[dict]:
    """A queue annotation the path the DGD renders on does not read (selection.ignored_queue_annotations);
    ``gets``: the queue the pods get instead, in words. explain and doctor both report it."""
    return [finding("queue-annotation-ignored", WARNING, None,
                    f"{i.annotation}: {i.value} has no effect on {i.path}: {i.why}. The pods get {gets}.",
                    i.fix[0].upper() + i.fix[1:] + ".")
            for i in selection.ignored_queue_annotations(orchestrator, scheduler, annotations,
                                                         namespace=namespace or "NAMESPACE", dgd=dgd or "NAME")]


def topology_refs_unavailable(name: str, text: str, origin: Optional[str], operator_version: str) -> List[dict]:
    refs = sorted(set(_TOPOLOGY_REF.findall(text)))
    if not refs:
        return []
    if versions.at_least(origin, api.TOPOLOGY_SINCE) and versions.at_least(operator_version, api.TOPOLOGY_SINCE):
        return []
    why = (f"operator {operator_version} is older than 1.6.0" if not versions.at_least(operator_version, api.TOPOLOGY_SINCE)
           else f"the DGD's origin version is {origin!r}, not >= 1.6.0")
    return [finding(
        "topology-vars-unavailable", ERROR, name,
        f"The manifest references {', '.join('$(' + r + ')' for r in refs)} but {why}, so the operator does not inject "
        "them; the kubelet leaves the literal text in the command.",
        "Create the DGD with operator >= 1.6.0 (the origin version is stamped at creation and never changes), "
        "or use the provider variables (GROVE_* / LWS_*) instead.",
    )]


def vllm_flag_forms(name: str, tokens: List[str], operator_version: str) -> List[dict]:
    if versions.at_least(operator_version, api.VLLM_FLAG_NORMALIZATION_SINCE):
        return []
    bad = [t for t in tokens if _IGNORED_FORM.match(t)]
    if not bad:
        return []
    return [finding(
        "vllm-flag-form-ignored", WARNING, name,
        f"Operator {operator_version} only reads exact '--flag value' tokens; {', '.join(bad)} is not parsed, "
        "so the operator computes TP/PP/DP as 1 when choosing the multinode mode.",
        "Spell the flags as separate tokens: --tensor-parallel-size 8 (not --tensor-parallel-size=8 or -tp 8).",
    )]


def parallelism(name: str, backend: str, decision: Decision, tokens: List[str], gpus: int, nodes: int) -> List[dict]:
    """TP×PP(×DP) against the GPUs the engine actually gets (GPUs/pod × nodeCount)."""
    if nodes < 2 or gpus <= 0:
        return []
    capacity = gpus * nodes
    if backend == "vllm":
        tp, pp, dp = (vllm.flag_value(tokens, f) for f in (vllm.TP, vllm.PP, vllm.DP))
        world = tp * pp
        if decision.mode in ("mp", "ray") and world != capacity:
            return [finding(
                "parallelism-mismatch", _short(world, capacity), name,
                f"TP×PP = {tp}×{pp} = {world} spans pods, but {nodes} pods × {gpus} GPUs = {capacity} GPUs are requested "
                f"({decision.mode} mode).",
                f"Make --tensor-parallel-size × --pipeline-parallel-size equal {capacity}, or set nodeCount to "
                f"{-(-world // gpus)} with {gpus} GPUs per pod.",
            )]
        if decision.mode == "data-parallel" and world * dp != capacity:
            return [finding(
                "parallelism-mismatch", _short(world * dp, capacity), name,
                f"TP×PP×DP = {world}×{dp} = {world * dp} but {nodes} pods × {gpus} GPUs = {capacity} (data-parallel mode: "
                f"{gpus // world} local ranks per pod).",
                f"Set --data-parallel-size {capacity // world} or adjust nodeCount / GPUs per pod.",
            )]
        if decision.mode == "none":
            return [finding(
                "parallelism-mismatch", WARNING, name,
                f"TP×PP×DP = {world * dp} fits in one pod ({gpus} GPUs), so the operator adds no multinode wiring: "
                f"each of the {nodes} pods starts its own engine (mode none).",
                f"For one engine over {capacity} GPUs set --tensor-parallel-size {capacity} (mp/Ray) or "
                f"--data-parallel-size {capacity} (data parallel); otherwise drop multinode and raise replicas.",
            )]
    if backend == "sglang":
        tp = next((_int_after(tokens, f) for f in sglang.TP_FLAGS if f in tokens), 1)
        pp = next((_int_after(tokens, f) for f in sglang.PP_FLAGS if f in tokens), 1)
        if tp * pp != capacity:
            return [finding(
                "parallelism-mismatch", _short(tp * pp, capacity), name,
                f"SGLang TP×PP = {tp}×{pp} = {tp * pp} but {nodes} pods × {gpus} GPUs = {capacity}.",
                f"Set --tp-size (× --pp-size) to {capacity} or change nodeCount / GPUs per pod.",
            )]
    return []


def _short(needed: int, capacity: int) -> str:
    """More GPUs needed than the pods get: the engine cannot start (error); fewer: GPUs idle (warning)."""
    return ERROR if needed > capacity else WARNING


def _int_after(tokens: List[str], flag: str) -> int:
    i = tokens.index(flag)
    try:
        return int(tokens[i + 1])
    except (IndexError, ValueError):
        return 1


def no_gpu(name: str, backend: str, nodes: int, gpus: int) -> List[dict]:
    if nodes < 2 or gpus > 0 or backend == "noop":
        return []
    if backend == "trtllm":
        return [finding(
            "no-gpu-request", ERROR, name,
            "Multinode TRT-LLM with no scalar GPU request on the main container: the leader runs mpirun -n 0.",
            "Set resources.limits nvidia.com/gpu on the main container (the rank count is nodeCount × GPUs/pod).",
        )]
    return [finding(
        "no-gpu-request", WARNING, name,
        f"Multinode {backend} with no scalar GPU request on the main container: "
        + ("no TP/PP/DP flags are injected." if backend == "vllm" else "the GPU count is unknown to the operator."),
        "Set resources.limits nvidia.com/gpu on the main container (DRA claims are not resolved offline).",
    )]


def args_without_command(name: str, user_main: Optional[dict]) -> List[dict]:
    if not user_main or user_main.get("command") or len(user_main.get("args") or []) < 2:
        return []
    args = user_main["args"]
    return [finding(
        "args-without-command", WARNING, name,
        f"The main container sets args but no command, so it runs /bin/sh -c {args[0]!r}; the other "
        f"{len(args) - 1} args become $0, $1… of that shell and are ignored.",
        "Set command (e.g. [python3, -m, dynamo.vllm]) and keep the flags in args, or put the whole line in one arg.",
    )]


def model_path_contains_framework(name: str, backend: str, container_before: dict) -> List[dict]:
    """Regex injection lands after the LAST token containing the framework word in the segment."""
    if backend not in ("vllm", "sglang"):
        return []
    from kubectl_dynamo.operator.flags import is_python_command

    command = container_before.get("command") or []
    if command and is_python_command(command[0]):
        return []
    for arg in container_before.get("args") or []:
        for segment in re.split(r"[|&;]", arg):
            tokens = segment.split()
            idx = next((i for i, t in enumerate(tokens) if t.endswith(f"dynamo.{backend}")), None)
            if idx is None or not any(t.startswith("python") for t in tokens[:idx]):
                continue
            later = [t for t in tokens[idx + 1:] if backend in t]
            if later:
                return [finding(
                    "model-path-contains-framework", WARNING, name,
                    f"The launch line is a shell script and {later[-1]!r} contains '{backend}', so the operator inserts its "
                    f"flags after that token instead of right after dynamo.{backend}.",
                    f"Use command [python3, -m, dynamo.{backend}] with flags in args, or keep paths containing "
                    f"'{backend}' before dynamo.{backend} … (e.g. via an env var).",
                )]
            break
    return []


def node_count(name: str, component: dict) -> List[dict]:
    mn = component.get("multinode")
    if mn is None:
        return []
    n = mn.get("nodeCount", 2)
    if isinstance(n, int) and n < 2:
        return [finding(
            "node-count-too-small", ERROR if n < 1 else WARNING, name,
            f"multinode.nodeCount is {n}; the CRD minimum is 2 and with fewer than 2 nodes the component renders as single-node.",
            "Remove the multinode block, or set nodeCount >= 2.",
        )]
    return []


def trtllm_worker_sshd(name: str, worker_template: Optional[dict]) -> List[dict]:
    """1.6 role templates hand the TRT-LLM worker's command to the user, while the operator keeps the
    worker's readiness probe on TCP 2222 (the port mpirun's SSH uses): a worker command that does not
    start sshd on 2222 never becomes ready (Dynamo 1.6.0 docs, "Role-Specific Pod Templates")."""
    main = next((c for c in ((worker_template or {}).get("spec") or {}).get("containers") or []
                 if isinstance(c, dict) and c.get("name") == "main"), None)
    if main is None:
        return []  # admission refuses the template (no main container)
    line = " ".join(str(t) for t in (main.get("command") or []) + (main.get("args") or []))
    if "sshd" in line and "2222" in line:
        return []
    what = "does not start sshd" if "sshd" not in line else "starts sshd but not on port 2222"
    return [finding(
        "trtllm-worker-no-sshd", WARNING, name,
        f"The TRT-LLM worker role template's command {what}: the operator keeps the worker's readiness probe on "
        "TCP 2222 and the leader's mpirun reaches the workers over SSH on that port, so the workers never become "
        "ready.",
        "Start sshd on port 2222 in the worker's command (e.g. `Port 2222` in its sshd_config, then "
        "`exec /usr/sbin/sshd -D -f …`), as `kubectl dynamo generate dgd … --backend trtllm --role-templates` writes it.",
    )]


def render_error(code: str, name: str, message: str, hint: str) -> dict:
    return finding(code, ERROR, name, message, hint)
