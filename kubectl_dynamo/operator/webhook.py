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
from kubectl_dynamo.words import plural

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


# The one parallelism rule (README "Parallelism"). An engine spanning N pods of G GPUs runs W ranks
# (vLLM: TP×PP, ×DP in data-parallel mode; SGLang: TP×PP), W / N on each pod:
# - error, the engine refuses: W > N×G (a rank without a GPU: vLLM "Tensor parallel size cannot be larger
#   than the number of available GPUs", dynamo#4934), or W not a multiple of N where the engine splits
#   ranks evenly over nodes (vLLM mp and data parallel: vllm-project/vllm vllm/config/parallel.py
#   ParallelConfig asserts "world_size=… must be divisible by nnodes=…", commit 00193b82; SGLang:
#   sgl-project/sglang python/sglang/srt/server_args.py check_server_args asserts "world_size must be
#   divisible by number of nodes", commit 469c63e5). vLLM on Ray places ranks anywhere in the cluster.
# - warning, GPUs idle: W < N×G otherwise (W / N of each pod's G GPUs used).
# A hint never proposes the configuration the DGD already has.
_EVEN_SPLIT = {"mp", "data-parallel", "sglang"}


def parallelism(name: str, backend: str, decision: Decision, tokens: List[str], gpus: int, nodes: int) -> List[dict]:
    """TP×PP(×DP) against the GPUs the engine actually gets (GPUs/pod × nodeCount)."""
    if nodes < 2 or gpus <= 0:
        return []
    capacity = gpus * nodes
    pods = f"{plural(nodes, 'pod')} × {plural(gpus, 'GPU')} = {plural(capacity, 'GPU')}"
    if backend == "vllm":
        tp, pp, dp = (vllm.flag_value(tokens, f) for f in (vllm.TP, vllm.PP, vllm.DP))
        if decision.mode == "none":
            return [finding(
                "parallelism-mismatch", WARNING, name,
                f"TP×PP×DP = {tp * pp * dp} fits in one pod ({plural(gpus, 'GPU')}), so the operator adds no multinode "
                f"wiring: each of the {nodes} pods starts its own engine (mode none).",
                f"For one engine over {capacity} GPUs set --tensor-parallel-size {capacity} (mp/Ray) or "
                f"--data-parallel-size {capacity} (data parallel); otherwise drop multinode and raise replicas.",
            )]
        if decision.mode == "data-parallel":
            return _rule(name, tp * pp * dp, f"TP×PP×DP = {tp}×{pp}×{dp}", nodes, gpus, pods, decision.mode,
                         "--data-parallel-size", tp * pp)
        if decision.mode in ("mp", "ray"):
            return _rule(name, tp * pp, f"TP×PP = {tp}×{pp}", nodes, gpus, pods, decision.mode,
                         "--tensor-parallel-size × --pipeline-parallel-size", 1)
    if backend == "sglang":
        tp = next((_int_after(tokens, f) for f in sglang.TP_FLAGS if f in tokens), 1)
        pp = next((_int_after(tokens, f) for f in sglang.PP_FLAGS if f in tokens), 1)
        return _rule(name, tp * pp, f"SGLang TP×PP = {tp}×{pp}", nodes, gpus, pods, "sglang", "--tp-size (× --pp-size)", 1)
    return []


def _rule(name: str, world: int, what: str, nodes: int, gpus: int, pods: str, mode: str, flag: str,
          unit: int) -> List[dict]:
    """``world`` ranks on ``nodes`` pods of ``gpus``; ``flag`` sets it in steps of ``unit``."""
    capacity = gpus * nodes
    even = mode in _EVEN_SPLIT
    setting = (f"set {flag} so the product is {capacity}" if unit == 1 else f"set {flag} {capacity // unit}"
               if capacity % unit == 0 else f"make TP×PP×DP equal {capacity}")
    if world > capacity:
        more = -(-world // gpus)  # > nodes, since world > nodes × gpus
        while even and world % more:
            more += 1
        return [finding(
            "parallelism-mismatch", ERROR, name,
            f"{what} = {world} ranks but {pods}: the engine refuses to start ({mode} mode).",
            f"Either {setting}, or set nodeCount to {more} with {plural(gpus, 'GPU')} per pod.")]
    if even and world % nodes:
        return [finding(
            "parallelism-mismatch", ERROR, name,
            f"{what} = {world} ranks cannot be split evenly over {plural(nodes, 'pod')}: the engine refuses to start "
            f"({mode} mode: the ranks must be a multiple of the node count).",
            f"Either {setting} (a multiple of {nodes}), or "
            + (f"change nodeCount to a divisor of {world}." if world >= 2 * 2 else
               "drop multinode: the engine fits in one pod."))]
    if world < capacity:
        used = world // nodes if even else None
        per_pod = (f"{plural(used, 'GPU')} of each pod's {gpus} used" if used is not None
                   else f"{capacity - world} of the {capacity} GPUs idle")
        fewer = f", or request {plural(used, 'GPU')} per pod (nvidia.com/gpu: {used})" if used else ""
        return [finding(
            "parallelism-mismatch", WARNING, name,
            f"{what} = {world} ranks on {pods} ({mode} mode): the engine starts, {per_pod}.",
            f"To use every GPU {setting}{fewer}.")]
    return []


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
