"""Seeded random DynamoGraphDeployments, weighted toward what the operator's rendering reads.

``draw(seed, index, origin)`` is one DGD (a plain dict, v1beta1 or v1alpha1), a pure function of its
arguments. Two sources, mixed:

* hand-weighted pools for every field the operator's rendering code reads
  (``tests/data/generative/render-fields.tsv`` lists them with the Go file that reads each): component
  types, launch lines of the three backends (``python3 -m``, ``sh -c`` and ``mpirun`` forms, every
  parallelism flag spelling), GPU counts, quantities in every spelling the API accepts, env, mounts,
  probes with zero values, multinode, role templates (origin 1.6), GMS, failover, compilation cache,
  frontend sidecars, the DGD's annotations (provider, discovery, queues) and ``kvTransferPolicy``;
* the CRD's own OpenAPI schema (``kubectl_dynamo/data/dgd-schema.json``) for the rest of the pod
  template: a few pod and container fields the pools do not name, drawn from their schema.

Many draws are DGDs the operator refuses: the recording script keeps only those its admission
accepts (``scripts/oracle-generated``).
"""

from __future__ import annotations

import copy
import functools
import json
import random
import string
from pathlib import Path
from typing import Any, Dict, List, Optional

REPO = Path(__file__).resolve().parents[2]
SCHEMA_FILE = REPO / "kubectl_dynamo" / "data" / "dgd-schema.json"

BACKENDS = ("vllm", "sglang", "trtllm")
WORKER_TYPES = ("worker", "prefill", "decode")
TYPES = ("frontend", "worker", "prefill", "decode", "planner", "epp", None)
IMAGES = {
    "vllm": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:{v}",
    "sglang": "nvcr.io/nvidia/ai-dynamo/sglang-runtime:{v}",
    "trtllm": "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:{v}",
    None: "nvcr.io/nvidia/ai-dynamo/dynamo-frontend:{v}",
}
IMAGE_VERSIONS = ("0.9.1", "1.0.1", "1.4.0", "1.5.0", "1.6.0")
MODELS = ("Qwen/Qwen3-0.6B", "meta-llama/Llama-3.1-8B-Instruct", "deepseek-ai/DeepSeek-R1", "/models/qwen")
# Every spelling of a CPU / memory quantity the API accepts, canonical or not.
CPU = (1, 4, "4", "2.5", "500m", "1000m", "0.5", "1500m", "32", 16)
MEMORY = ("16Gi", "16384Mi", "1e9", 1073741824, "40G", "0.5Gi", "1024Ki", "2000M", "8Gi")
SHM = ("0", "16Gi", "8Gi", "1Gi", "4096Mi", "0Gi", "32G")


def _pick(rng: random.Random, pool):
    return pool[rng.randrange(len(pool))]


def _maybe(rng: random.Random, p: float) -> bool:
    return rng.random() < p


def _name(rng: random.Random, prefix: str = "") -> str:
    return prefix + "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 7)))


# ---- the schema side -------------------------------------------------------------------------

@functools.cache
def dgd_schema() -> dict:
    """The CRD's OpenAPI schema, read once (shared with tests/fuzz/admission.py): nothing may change it."""
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def component_schema(version: str = "v1beta1") -> dict:
    return dgd_schema()["versions"][version]["properties"]["spec"]["properties"]["components"]["items"]


def pod_spec_schema() -> dict:
    return component_schema()["properties"]["podTemplate"]["properties"]["spec"]


def container_schema() -> dict:
    return pod_spec_schema()["properties"]["containers"]["items"]


SIMPLE = {"string", "integer", "boolean", "number"}


def from_schema(rng: random.Random, node: dict, depth: int = 0) -> Any:
    """A value the schema node describes: required properties and a few optional ones, enums,
    int-or-string, bounded integers. Patterns and CEL rules are not solved (admission filters)."""
    if "enum" in node:
        return _pick(rng, node["enum"])
    if node.get("x-kubernetes-int-or-string"):
        return _pick(rng, (1, 2, "25%", "1", 0)) if "pattern" not in node else _pick(rng, CPU)
    kind = node.get("type")
    if kind == "object" or "properties" in node:
        props = node.get("properties") or {}
        out = {}
        required = node.get("required") or []
        optional = [k for k in sorted(props) if k not in required]
        n = 0 if depth > 3 else rng.randint(0, min(2, len(optional)))
        for key in required + rng.sample(optional, n):
            out[key] = from_schema(rng, props[key], depth + 1)
        if not props and node.get("additionalProperties"):
            out = {_name(rng): from_schema(rng, node["additionalProperties"], depth + 1)}
        return out
    if kind == "array":
        return [from_schema(rng, node.get("items") or {"type": "string"}, depth + 1)
                for _ in range(rng.randint(1, 2) if depth <= 3 else 0)]
    if kind == "integer":
        lo, hi = node.get("minimum", 0), node.get("maximum", 100)
        return rng.randint(int(lo), int(min(hi, lo + 100)))
    if kind == "number":
        return _pick(rng, (0, 0.5, 1))
    if kind == "boolean":
        return _maybe(rng, 0.5)
    return _name(rng)


def schema_fields(rng: random.Random, node: dict, avoid, n: int) -> dict:
    """``n`` optional fields of an object schema that the pools do not draw, from the schema."""
    props = node["properties"]
    keys = [k for k in sorted(props) if k not in avoid]
    return {k: from_schema(rng, props[k], 1) for k in rng.sample(keys, min(n, len(keys)))}


# ---- launch lines ----------------------------------------------------------------------------

def _parallel_flags(rng: random.Random, fw: str, gpus: int, multinode: bool) -> List[str]:
    out: List[str] = []
    tp = _pick(rng, (1, 2, 4, 8, gpus or 1))
    if fw == "vllm":
        if _maybe(rng, 0.8):
            out += _pick(rng, (["--tensor-parallel-size", str(tp)], ["-tp", str(tp)], [f"--tensor-parallel-size={tp}"],
                               ["--tensor_parallel_size", str(tp)]))
        if _maybe(rng, 0.3):
            out += _pick(rng, (["--pipeline-parallel-size", "2"], ["-pp", "2"], ["--pipeline-parallel-size=2"]))
        if _maybe(rng, 0.25):
            out += _pick(rng, (["--data-parallel-size", "2"], ["-dp", "2"], ["--data-parallel-size", "4"]))
            if _maybe(rng, 0.4):
                out += ["--enable-expert-parallel"]
        if _maybe(rng, 0.2):
            out += ["--distributed-executor-backend", _pick(rng, ("mp", "ray"))]
        if multinode and _maybe(rng, 0.3):
            out += _pick(rng, (["--nnodes", "2"], ["--node-rank", "0"], ["--master-addr", "x"], ["--headless"]))
    elif fw == "sglang":
        if _maybe(rng, 0.8):
            out += _pick(rng, (["--tp-size", str(tp)], ["--tp", str(tp)], ["--tensor-parallel-size", str(tp)]))
        if _maybe(rng, 0.25):
            out += _pick(rng, (["--dp-size", "2"], ["--dp", "2"]))
            if _maybe(rng, 0.5):
                out += ["--enable-dp-attention"]
        if _maybe(rng, 0.2):
            out += ["--ep-size", "2"]
        if multinode and _maybe(rng, 0.3):
            out += _pick(rng, (["--nnodes", "2"], ["--node-rank", "0"], ["--dist-init-addr", "x:29500"]))
    else:
        if _maybe(rng, 0.5):
            out += ["--extra-engine-args", _pick(rng, ("/config/engine.yaml", "engine.yaml"))]
        if _maybe(rng, 0.3):
            out += ["--tensor-parallel-size", str(tp)]
    return out


def launch(rng: random.Random, fw: Optional[str], ctype: Optional[str], gpus: int, multinode: bool) -> Dict[str, Any]:
    """command/args of a main container (sometimes absent, sometimes a shell script)."""
    if ctype in ("frontend", "planner", "epp") or fw is None:
        module = {"frontend": "dynamo.frontend", "planner": "dynamo.planner", "epp": "dynamo.frontend"}.get(
            ctype or "", "dynamo.frontend")
        return _pick(rng, ({}, {"command": ["python3", "-m", module]},
                           {"command": ["python3", "-m", module], "args": ["--http-port", "8000"]},
                           {"args": ["--router-mode", "kv"]}))
    args = ["--model", _pick(rng, MODELS)] + _parallel_flags(rng, fw, gpus, multinode)
    if ctype in ("prefill", "decode") and _maybe(rng, 0.7):
        args += {"vllm": _pick(rng, (["--is-prefill-worker"] if ctype == "prefill" else [],
                                     ["--disaggregation-mode", ctype])),
                 "sglang": ["--disaggregation-mode", ctype],
                 "trtllm": ["--disaggregation-mode", ctype]}[fw]
    if _maybe(rng, 0.1):
        args += _pick(rng, (["--connector", "nixl"], ["--kv-transfer-config", '{"kv_connector":"NixlConnector"}']))
    module = f"dynamo.{fw}"
    form = rng.random()
    if fw == "trtllm" and multinode and form < 0.3:
        line = "mpirun --allow-run-as-root -np 8 python3 -m " + module + " " + " ".join(args)
        return {"command": ["/bin/sh", "-c"], "args": [line]}
    if form < 0.6:
        return {"command": ["python3", "-m", module], "args": args}
    if form < 0.75:
        return {"command": ["python3", "-m", module, *args[:2]], "args": args[2:]}
    if form < 0.9:
        return {"command": [_pick(rng, ("sh", "/bin/sh", "bash")), "-c"],
                "args": [_pick(rng, ("", "exec ", "cd /w && ")) + f"python3 -m {module} " + " ".join(args)]}
    return {"args": args}  # args without a command: the image's entrypoint


# ---- containers and pods ---------------------------------------------------------------------

def resources(rng: random.Random, gpus: int) -> dict:
    out: Dict[str, dict] = {}
    for kind in ("limits", "requests"):
        if not _maybe(rng, 0.7 if kind == "limits" else 0.4):
            continue
        r: Dict[str, Any] = {}
        if gpus and (kind == "limits" or _maybe(rng, 0.5)):
            r["nvidia.com/gpu"] = _pick(rng, (gpus, str(gpus)))
        if _maybe(rng, 0.6):
            r["cpu"] = _pick(rng, CPU)
        if _maybe(rng, 0.6):
            r["memory"] = _pick(rng, MEMORY)
        if _maybe(rng, 0.08):
            r["ephemeral-storage"] = _pick(rng, ("10Gi", "1e10"))
        if _maybe(rng, 0.05):
            r["vpc.amazonaws.com/efa"] = _pick(rng, (1, "4", 32))
        if r:
            out[kind] = r
    if gpus and "limits" not in out and _maybe(rng, 0.7):
        out["limits"] = {"nvidia.com/gpu": str(gpus)}
    return out


def env(rng: random.Random) -> List[dict]:
    names = ["HF_TOKEN", "VLLM_LOGGING_LEVEL", "DYN_LOG", "NCCL_DEBUG", "DYN_HTTP_PORT", "DYN_SYSTEM_PORT",
             "DYN_NAMESPACE", "DYN_SYSTEM_ENABLED", "NIXL_LOG_LEVEL", "MY_VAR", "PYTHONUNBUFFERED", "DYN_DISCOVERY_BACKEND"]
    out = []
    for name in rng.sample(names, rng.randint(1, 4)):
        if name == "HF_TOKEN" and _maybe(rng, 0.7):
            out.append({"name": name, "valueFrom": {"secretKeyRef": {"name": "hf-token-secret", "key": "HF_TOKEN"}}})
        else:
            out.append({"name": name, "value": _pick(rng, ("1", "info", "true", "8000", "", "x y", "0"))})
    return out


def probe(rng: random.Random) -> dict:
    handler = _pick(rng, ({"httpGet": {"path": "/health", "port": _pick(rng, (9090, "system", 8000))}},
                          {"exec": {"command": ["sh", "-c", "true"]}}, {"tcpSocket": {"port": 8000}}))
    p = dict(handler)
    for key in ("initialDelaySeconds", "periodSeconds", "timeoutSeconds", "failureThreshold", "successThreshold"):
        if _maybe(rng, 0.35):
            p[key] = _pick(rng, (0, 1, 5, 10, 60))
    if p.get("successThreshold", 1) != 1:
        p["successThreshold"] = 1  # the API server requires 1 for liveness/startup
    return p


def main_container(rng: random.Random, fw: Optional[str], ctype: Optional[str], gpus: int, multinode: bool,
                   schema: bool = True) -> dict:
    c: Dict[str, Any] = {"name": "main"}
    if _maybe(rng, 0.97):
        c["image"] = IMAGES[fw if ctype not in ("frontend", "planner", "epp") else None].format(
            v=_pick(rng, IMAGE_VERSIONS))
    c.update(launch(rng, fw, ctype, gpus, multinode))
    r = resources(rng, gpus)
    if r or _maybe(rng, 0.1):
        c["resources"] = r
    if _maybe(rng, 0.5):
        c["env"] = env(rng)
    if _maybe(rng, 0.15):
        c["envFrom"] = [{"secretRef": {"name": "hf-token-secret"}}]
    if _maybe(rng, 0.3):
        c["volumeMounts"] = [_pick(rng, ({"name": "model-cache", "mountPath": "/root/.cache/huggingface"},
                                         {"name": "cfg", "mountPath": "/config", "readOnly": True},
                                         {"name": "shared-memory", "mountPath": "/dev/shm"},
                                         {"name": "scratch", "mountPath": "/scratch", "subPath": "x"}))]
    for p in ("livenessProbe", "readinessProbe", "startupProbe"):
        if _maybe(rng, 0.12):
            c[p] = probe(rng)
    if _maybe(rng, 0.15):
        c["ports"] = [{"name": _pick(rng, ("http", "metrics", "system", "nixl")),
                       "containerPort": _pick(rng, (8000, 9090, 8081, 5600)),
                       **({"protocol": "TCP"} if _maybe(rng, 0.5) else {})}]
    if _maybe(rng, 0.1):
        c["workingDir"] = _pick(rng, ("/workspace", "/workspace/examples/backends/vllm"))
    if _maybe(rng, 0.1):
        c["imagePullPolicy"] = _pick(rng, ("Always", "IfNotPresent"))
    if _maybe(rng, 0.1):
        c["securityContext"] = _pick(rng, ({"privileged": True}, {"capabilities": {"add": ["IPC_LOCK"]}},
                                           {"runAsUser": 0}, {"allowPrivilegeEscalation": False}))
    if _maybe(rng, 0.15) and schema:
        avoid = set(c) | {"name", "restartPolicy", "restartPolicyRules", "resizePolicy", "lifecycle"}
        c.update(schema_fields(rng, container_schema(), avoid, 1))
    return c


def sidecar(rng: random.Random, name: str) -> dict:
    c: Dict[str, Any] = {"name": name, "image": _pick(rng, ("busybox:1.36", "nvcr.io/nvidia/ai-dynamo/dynamo-frontend:1.5.0"))}
    if _maybe(rng, 0.5):
        c["command"] = ["sh", "-c", "sleep infinity"]
    if _maybe(rng, 0.3):
        c["env"] = [{"name": "SIDE", "value": "1"}]
    if _maybe(rng, 0.3):
        c["resources"] = {"limits": {"cpu": _pick(rng, CPU)}}
    return c


def pod_template(rng: random.Random, fw: Optional[str], ctype: Optional[str], gpus: int, multinode: bool,
                 sidecar_name: Optional[str] = None, schema: bool = True) -> dict:
    """``schema``: also a few fields drawn from the CRD schema. Off for 1.6 role templates: the
    1.6 oracle's CRD has no roles schema, so the API server's defaults inside them (a gRPC probe's
    service, an Azure disk's fsType, a port's protocol) never reach a role template there, as they
    would on a 1.6 cluster."""
    spec: Dict[str, Any] = {"containers": [main_container(rng, fw, ctype, gpus, multinode, schema)]}
    if sidecar_name or _maybe(rng, 0.08):
        spec["containers"].append(sidecar(rng, sidecar_name or _name(rng, "side-")))
    if _maybe(rng, 0.25):
        spec["volumes"] = [_pick(rng, ({"name": "model-cache", "persistentVolumeClaim": {"claimName": "model-cache"}},
                                       {"name": "cfg", "configMap": {"name": "engine-config"}},
                                       {"name": "scratch", "emptyDir": {}},
                                       {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "4Gi"}}))]
    pod_fields = {
        "enableServiceLinks": lambda: _maybe(rng, 0.5),
        "serviceAccountName": lambda: _pick(rng, ("my-sa", "planner-serviceaccount", "default")),
        "nodeSelector": lambda: {"nvidia.com/gpu.product": "H100"},
        "tolerations": lambda: [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "priorityClassName": lambda: "high",
        "terminationGracePeriodSeconds": lambda: _pick(rng, (0, 30, 600)),
        "schedulerName": lambda: _pick(rng, ("volcano", "default-scheduler")),
        "imagePullSecrets": lambda: [{"name": "nvcr-secret"}],
        "securityContext": lambda: _pick(rng, ({}, {"fsGroup": 2000}, {"runAsNonRoot": True}, {"runAsUser": 0})),
        "hostNetwork": lambda: _maybe(rng, 0.5),
        "hostIPC": lambda: _maybe(rng, 0.5),
        "runtimeClassName": lambda: "nvidia",
        "dnsPolicy": lambda: "ClusterFirstWithHostNet",
        "initContainers": lambda: [{"name": "init", "image": "busybox:1.36", "command": ["true"]}],
        "restartPolicy": lambda: "Always",
        "automountServiceAccountToken": lambda: _maybe(rng, 0.5),
    }
    for key in rng.sample(sorted(pod_fields), rng.choice((0, 0, 1, 1, 2, 3))):
        spec[key] = pod_fields[key]()
    if _maybe(rng, 0.1) and schema:
        avoid = set(spec) | {"containers", "ephemeralContainers", "os", "overhead", "resourceClaims", "nodeName",
                             "schedulingGates", "schedulingGroup", "hostUsers", "resources", "hostnameOverride"}
        spec.update(schema_fields(rng, pod_spec_schema(), avoid, 1))
    tpl: Dict[str, Any] = {"spec": spec}
    meta: Dict[str, Any] = {}
    if _maybe(rng, 0.15):
        meta["labels"] = {"team": _pick(rng, ("a", "b")), **({"nvidia.com/dynamo-component-type": "x"} if _maybe(rng, 0.1) else {})}
    if _maybe(rng, 0.15):
        meta["annotations"] = dict([_pick(rng, (("prometheus.io/scrape", "true"),
                                                ("nvidia.com/dynamo-discovery-backend", _pick(rng, ("kubernetes", "etcd"))),
                                                ("nvidia.com/dynamo-kube-discovery-mode", _pick(rng, ("pod", "container"))),
                                                ("nvidia.com/enable-metrics", "false")))])
    if meta:
        tpl["metadata"] = meta
    return tpl


# ---- components and the DGD ------------------------------------------------------------------

def component(rng: random.Random, name: str, ctype: Optional[str], fw: str, origin: str) -> dict:
    worker = ctype in WORKER_TYPES or ctype is None
    multinode = worker and _maybe(rng, 0.35)
    gpus = _pick(rng, (0, 1, 1, 2, 4, 8)) if worker else _pick(rng, (0, 0, 0, 1))
    c: Dict[str, Any] = {"name": name}
    if ctype is not None:
        c["type"] = ctype
    if _maybe(rng, 0.7):
        c["replicas"] = 1 if ctype == "epp" else _pick(rng, (0, 1, 1, 2, 3))
    sidecar_name = None
    if ctype in WORKER_TYPES and _maybe(rng, 0.06):
        sidecar_name = c["frontendSidecar"] = _pick(rng, ("frontend", "sidecar-frontend"))
    if multinode:
        c["multinode"] = {"nodeCount": _pick(rng, (2, 2, 3, 4))}
    # Role templates at origin 1.6 for vLLM and SGLang only: TRT-LLM's role handling in the 1.6
    # oracle is still 1.5 code (tests/data/generative/PROVENANCE.md).
    use_roles = multinode and origin >= "1.6" and fw != "trtllm" and _maybe(rng, 0.4)
    if use_roles:
        c["roles"] = []
        for role in ("leader", "worker"):
            tpl = pod_template(rng, fw, ctype, gpus, multinode, sidecar_name, schema=False)
            for container in tpl["spec"]["containers"]:
                container.pop("ports", None)  # defaulted (protocol TCP): see pod_template
            r: Dict[str, Any] = {"name": role, "podTemplate": tpl}
            if _maybe(rng, 0.2):
                r["replicas"] = 1 if role == "leader" else c["multinode"]["nodeCount"] - 1
            c["roles"].append(r)
    elif _maybe(rng, 0.97):
        c["podTemplate"] = pod_template(rng, fw, ctype, gpus, multinode, sidecar_name)
    if _maybe(rng, 0.08):
        c["minAvailable"] = _pick(rng, (1, 1, 2))
    if _maybe(rng, 0.2):
        c["sharedMemorySize"] = _pick(rng, SHM)
    if _maybe(rng, 0.08):
        c["globalDynamoNamespace"] = True
    if worker and _maybe(rng, 0.08):
        cache: Dict[str, Any] = {"pvcName": "compile-cache"}
        if _maybe(rng, 0.6):
            cache["mountPath"] = _pick(rng, ("/cache", "/root/.cache/vllm"))
        c["compilationCache"] = cache
    experimental: Dict[str, Any] = {}
    if worker and _maybe(rng, 0.08):
        mode = _pick(rng, ("IntraPod", "InterPod") if fw == "vllm" else ("IntraPod",))  # inter-pod: vLLM only
        experimental["gpuMemoryService"] = {"mode": mode}
        if _maybe(rng, 0.3):
            experimental["gpuMemoryService"]["deviceClassName"] = "gpu.nvidia.com"
        if _maybe(rng, 0.5):
            experimental["failover"] = {"mode": mode, **({"numShadows": 1} if _maybe(rng, 0.5) else {})}
    if _maybe(rng, 0.06):
        experimental["grove"] = {"forceScalingGroup": _maybe(rng, 0.8)}
    if experimental:
        c["experimental"] = experimental
    if _maybe(rng, 0.05):
        c["topologyConstraint"] = {"packDomain": _pick(rng, ("rack", "zone", "host"))}
    rare(rng, c, worker, multinode)
    if ctype == "epp" and _maybe(rng, 0.97):
        c["eppConfig"] = {"configMapRef": {"name": "epp-config", "key": "config.yaml"}}
    if worker and _maybe(rng, 0.05):
        c["modelRef"] = {"name": _pick(rng, MODELS)}
    if _maybe(rng, 0.04):
        c["scalingAdapter"] = {}
    if _maybe(rng, 0.04):
        c["runtimeVersionOverride"] = _pick(rng, ("1.5.0", "1.6.0"))
    return c


def provider_override(rng: random.Random, root: bool = False, target: Optional[str] = None) -> dict:
    """A Grove provider override: only the registered subtree (a topology constraint) is writable
    (ai-dynamo/dynamo@2a6da14c internal/provideroverride); the target sometimes spelled out."""
    constraint = {"packDomain": _pick(rng, ("rack", "zone", "host"))}
    value = {"spec": {"template": {"topologyConstraint": constraint}}} if root else {"topologyConstraint": constraint}
    out = {"apiVersion": "grove.io/v1alpha1", "value": value}
    if _maybe(rng, 0.3):
        out["target"] = "PodCliqueSet" if root else (target or "PodCliqueTemplateSpec")
    return out


def rare(rng: random.Random, c: dict, worker: bool, multinode: bool) -> None:
    """Fields the rendering reads that few DGDs carry: provider overrides, checkpoints, GMS clients,
    an inline EPP config, a model reference, role-level overrides."""
    if _maybe(rng, 0.03):
        pcsg = multinode or ((c.get("experimental") or {}).get("grove") or {}).get("forceScalingGroup")
        c["providerOverride"] = provider_override(
            rng, target="PodCliqueScalingGroupConfig" if pcsg else "PodCliqueTemplateSpec")
    if multinode and _maybe(rng, 0.05):
        c["multinode"][_pick(rng, ("leader", "worker"))] = {"providerOverride": provider_override(rng)}
    for r in c.get("roles") or []:
        if _maybe(rng, 0.05):
            r["providerOverride"] = provider_override(rng)
    exp = c.get("experimental") or {}
    if worker and _maybe(rng, 0.04):
        identity = {"model": _pick(rng, MODELS), "backendFramework": _pick(rng, BACKENDS)}
        for key, values in (("dynamoVersion", ("1.5.0",)), ("tensorParallelSize", (1, 2)), ("pipelineParallelSize", (1, 2)),
                            ("dtype", ("bfloat16",)), ("maxModelLen", (4096,)), ("extraParameters", ({"k": "v"},))):
            if _maybe(rng, 0.5):
                identity[key] = _pick(rng, values)
        checkpoint: Dict[str, Any] = {"enabled": _maybe(rng, 0.3), "identity": identity}
        for key, values in (("mode", ("Auto", "Manual")), ("startupPolicy", ("Immediate", "WaitForCheckpoint")),
                            ("deletionPolicy", ("Delete", "Retain")), ("targetContainerName", ("main",)),
                            ("checkpointRef", ("ckpt-1",))):
            if _maybe(rng, 0.4):
                checkpoint[key] = _pick(rng, values)
        if _maybe(rng, 0.3):
            checkpoint["job"] = {"gmsClientContainers": ["main"],
                                 "podTemplate": {"spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]}}}
        exp["checkpoint"] = checkpoint
    gms = exp.get("gpuMemoryService")
    if gms is not None and _maybe(rng, 0.3):
        if _maybe(rng, 0.5):
            gms["extraClientContainers"] = ["main"]
        else:
            gms["extraClientPods"] = [{"name": "client", "podTemplate": {"spec": {"containers": [
                {"name": "main", "image": "busybox:1.36"}]}}}]
    if exp:
        c["experimental"] = exp
    if c.get("type") == "epp" and _maybe(rng, 0.3):
        c["eppConfig"] = {"config": {"plugins": [{"type": "queue-scorer"}],
                                     "schedulingProfiles": [{"name": "default", "plugins": [{"pluginRef": "queue-scorer"}]}]}}
    if _maybe(rng, 0.03):
        c["modelRef"] = {"name": _pick(rng, MODELS), **({"revision": "main"} if _maybe(rng, 0.5) else {})}
    for tpl in [c.get("podTemplate")] + [r.get("podTemplate") for r in c.get("roles") or []]:
        if tpl is not None and _maybe(rng, 0.02):
            tpl["spec"]["resourceClaims"] = [{"name": "gpus", "resourceClaimTemplateName": "gpu-claim"}]


def nixl_telemetry(rng: random.Random, comps: List[dict]) -> None:
    """NIXL exporter settings on worker main containers (1.6 reserves one port per co-located rank
    when they enable the Prometheus exporter). A stream of its own, so the other draws stay put."""
    for c in comps:
        if c.get("type") not in WORKER_TYPES or not _maybe(rng, 0.15):
            continue
        for tpl in [c.get("podTemplate")] + [r.get("podTemplate") for r in c.get("roles") or []]:
            main = next((x for x in ((tpl or {}).get("spec") or {}).get("containers") or [] if x.get("name") == "main"), None)
            if main is None:
                continue
            env = [e for e in main.get("env") or [] if not e["name"].startswith("NIXL_TELEMETRY")]
            env.append({"name": "NIXL_TELEMETRY_ENABLE", "value": _pick(rng, ("y", "y", "n", "true", "maybe"))})
            if _maybe(rng, 0.5):
                env.append({"name": "NIXL_TELEMETRY_PROMETHEUS_PORT", "value": _pick(rng, ("19100", "0x4A38", "0", "70000"))})
            main["env"] = env


DGD_ANNOTATIONS = (
    ("nvidia.com/enable-grove", ("true", "false", "False")),
    ("nvidia.com/dynamo-discovery-backend", ("kubernetes", "etcd")),
    ("nvidia.com/dynamo-kube-discovery-mode", ("pod", "container")),
    ("nvidia.com/kai-scheduler-queue", ("dynamo", "team-a")),
    ("nvidia.com/enable-metrics", ("false", "true")),
    ("nvidia.com/vllm-distributed-executor-backend", ("mp", "ray")),
    ("nvidia.com/workload-provider", ("grove", "component")),
)


def draw(seed: int, index: int, origin: str = "1.5.0") -> dict:
    """DGD number ``index`` of the seeded set for operator origin ``origin``."""
    rng = random.Random(f"{seed}/{origin}/{index}")
    fw = _pick(rng, BACKENDS)
    n = rng.choice((1, 2, 2, 3, 4))
    types: List[Optional[str]] = [_pick(rng, TYPES) for _ in range(n)]
    while types.count("epp") > 1:  # the schema allows one EPP component
        types.remove("epp")
    if _maybe(rng, 0.6) and "frontend" not in types:
        types.insert(0, "frontend")
    comps, used = [], set()
    for ctype in types:
        name = {"frontend": "Frontend", "planner": "Planner", "epp": "Epp", None: "Worker"}.get(
            ctype, (ctype or "worker").capitalize())
        if _maybe(rng, 0.3):
            name = name.lower()
        while name.lower() in used:
            name = name + str(rng.randint(1, 9))
        used.add(name.lower())
        comps.append(component(rng, name, ctype, fw, origin))
    spec: Dict[str, Any] = {"components": comps}
    if _maybe(rng, 0.4):
        spec["backendFramework"] = fw if _maybe(rng, 0.92) else _pick(rng, BACKENDS)
    if _maybe(rng, 0.15):
        spec["env"] = env(rng)
    if _maybe(rng, 0.1):
        spec["annotations"] = dict([(k, _pick(rng, v)) for k, v in rng.sample(DGD_ANNOTATIONS[1:3], 1)])
    if _maybe(rng, 0.08):
        spec["labels"] = {"team": "a"}
    if _maybe(rng, 0.06):
        spec["priorityClassName"] = "high"
    if _maybe(rng, 0.08):
        kv: Dict[str, Any] = {"domain": _pick(rng, ("zone", "rack", "host"))}
        if _maybe(rng, 0.8):
            kv["labelKey"] = _pick(rng, ("topology.kubernetes.io/zone", "rack"))
        else:
            kv["clusterTopologyName"] = "cluster-topology"
        if _maybe(rng, 0.4):
            kv["enforcement"] = "preferred"
            kv["preferredWeight"] = _pick(rng, (0, 0.5, 1))
        spec["experimental"] = {"kvTransferPolicy": kv}
    if _maybe(rng, 0.05) or any("topologyConstraint" in c for c in comps):
        spec["topologyConstraint"] = {"clusterTopologyName": "cluster-topology",
                                      **({"packDomain": "zone"} if _maybe(rng, 0.5) else {})}
    if _maybe(rng, 0.01):  # refused on create: kept rare
        strategy = {"type": _pick(rng, ("Sequential", "Parallel"))}
        if _maybe(rng, 0.5):
            strategy["order"] = [c["name"] for c in comps]
        spec["restart"] = {"id": "r1", **({"strategy": strategy} if _maybe(rng, 0.5) else {})}
    if _maybe(rng, 0.03):
        spec["providerOverride"] = provider_override(rng, root=True)
    meta: Dict[str, Any] = {"name": f"g{index}-{fw}"}
    ann = {}
    for key, values in DGD_ANNOTATIONS:
        if _maybe(rng, 0.08):
            ann[key] = _pick(rng, values)
    if any(((c.get("experimental") or {}).get("failover") or {}).get("mode") == "IntraPod" for c in comps) and _maybe(rng, 0.9):
        ann["nvidia.com/dynamo-kube-discovery-mode"] = "container"  # the webhook's rule for intra-pod failover
    if ann:
        meta["annotations"] = ann
    if origin >= "1.6":
        nixl_telemetry(random.Random(f"{seed}/{origin}/{index}/nixl"), comps)
    dgd = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "metadata": meta, "spec": spec}
    if _maybe(rng, 0.12) and not any(c.get("roles") for c in comps):
        dgd = to_v1alpha1(dgd)
    return dgd


def to_v1alpha1(dgd: dict) -> dict:
    """The same DGD written in v1alpha1's shape (``services`` map, ``extraPodSpec.mainContainer``)."""
    spec = dgd["spec"]
    services = {}
    for c in spec["components"]:
        s: Dict[str, Any] = {}
        if c.get("type"):
            s["componentType"] = c["type"]
        for key in ("replicas", "multinode", "sharedMemorySize", "globalDynamoNamespace", "minAvailable", "frontendSidecar",
                    "eppConfig", "modelRef"):
            if key in c:
                s[key] = copy.deepcopy(c[key])
        if "sharedMemorySize" in s:
            size = s.pop("sharedMemorySize")
            s["sharedMemory"] = {"disabled": True} if str(size).startswith("0") else {"size": size}
        tpl = c.get("podTemplate") or {}
        pod = copy.deepcopy(tpl.get("spec") or {})
        containers = pod.pop("containers", [])
        main = next((x for x in containers if x.get("name") == "main"), None)
        if main is not None:
            main = dict(main)
            res = main.pop("resources", None)
            main.pop("name")
            if res and all(k in ("limits", "requests") for k in res) and all(
                    set(v) <= {"cpu", "memory", "nvidia.com/gpu"} for v in res.values()):
                s["resources"] = {k: {({"nvidia.com/gpu": "gpu"}).get(n, n): str(q) for n, q in v.items()}
                                  for k, v in res.items()}
            elif res:
                main["resources"] = res
            envs = main.pop("env", None)
            if envs:
                s["envs"] = envs
            pod["mainContainer"] = {"name": "main", **main}
        sidecars = [x for x in containers if x.get("name") != "main"]
        if sidecars:
            pod["containers"] = sidecars
        if pod:
            s["extraPodSpec"] = pod
        if tpl.get("metadata"):
            s["extraPodMetadata"] = copy.deepcopy(tpl["metadata"])
        services[c["name"]] = s
    alpha = {k: v for k, v in spec.items() if k in ("backendFramework", "envs", "annotations", "labels")}
    if spec.get("env"):
        alpha["envs"] = spec["env"]
    alpha["services"] = services
    return {**dgd, "apiVersion": "nvidia.com/v1alpha1", "spec": alpha}


def paths(value: Any, prefix: str = "") -> set:
    """Every field path in ``value``: ``spec.components[].podTemplate.spec.containers[].image``."""
    out = set()
    if isinstance(value, dict):
        for k, v in value.items():
            p = f"{prefix}.{k}" if prefix else k
            out.add(p + ("[]" if isinstance(v, list) else ""))
            out |= paths(v, p + ("[]" if isinstance(v, list) else ""))
    elif isinstance(value, list):
        for v in value:
            out |= paths(v, prefix)
    return out


# ---- steered into the operator's render-time refusals ----------------------------------------
# Each is one error return on the operator's render path (tests/data/generative/render-refusals.tsv:
# the Go file and the commit); draw_refusal applies one to one worker component of a draw, so the
# recorded set holds many DGDs the admission takes and the rendering refuses (and near misses).
REFUSALS = ("failover-not-vllm", "cache-no-mount-path", "cache-mount-path-used", "cache-read-only",
            "lws-args-empty", "lws-command-empty", "framework-mismatch", "frameworks-in-command",
            "near-miss")


def _workers(dgd: dict) -> List[dict]:
    return [c for c in (dgd.get("spec") or {}).get("components") or []
            if (c.get("type") in WORKER_TYPES or c.get("type") is None) and isinstance(c.get("podTemplate"), dict)]


def _main(c: dict) -> Optional[dict]:
    for x in c["podTemplate"].get("spec", {}).get("containers") or []:
        if x.get("name") == "main":
            return x
    return None


def draw_refusal(seed: int, index: int, origin: str = "1.5.0") -> dict:
    """``draw`` with one render refusal (or a near miss) applied to a worker component: a pure
    function of its arguments, drawn from its own stream (``draw`` itself is unchanged)."""
    rng = random.Random(f"refusal/{seed}/{origin}/{index}")
    dgd = draw(seed * 7919 + 13, index, origin)
    if dgd["apiVersion"].endswith("v1alpha1"):  # the mutations are written in v1beta1 terms
        dgd = draw(seed * 7919 + 17, index, origin)
        if dgd["apiVersion"].endswith("v1alpha1"):
            return dgd
    workers = [c for c in _workers(dgd) if _main(c) is not None]
    if not workers:
        return dgd
    c = _pick(rng, workers)
    main = _main(c)
    assert main is not None
    fw = next((f for f in BACKENDS if f"dynamo.{f}" in " ".join(map(str, (main.get("command") or []) + (main.get("args") or [])))),
              _pick(rng, BACKENDS))
    kind = _pick(rng, REFUSALS)
    dgd["metadata"]["name"] = f"r{index}-{kind}"
    other = _pick(rng, [b for b in BACKENDS if b != fw])
    if kind == "failover-not-vllm":
        main["command"], main["args"] = ["python3", "-m", f"dynamo.{other if fw == 'vllm' else fw}"], ["--model", "m"]
        main.setdefault("resources", {}).setdefault("limits", {})["nvidia.com/gpu"] = "1"
        c["experimental"] = {"gpuMemoryService": {"mode": "IntraPod"}, "failover": {"mode": "IntraPod"}}
        dgd["metadata"].setdefault("annotations", {})["nvidia.com/dynamo-kube-discovery-mode"] = "container"
        dgd["spec"].pop("backendFramework", None)
    elif kind == "cache-no-mount-path":
        c["compilationCache"] = {"pvcName": "compile-cache"}
    elif kind == "cache-mount-path-used":
        c["compilationCache"] = {"pvcName": "compile-cache", "mountPath": "/data"}
        main["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
        c["podTemplate"]["spec"]["volumes"] = [{"name": "data", "emptyDir": {}}]
    elif kind == "cache-read-only":
        c["compilationCache"] = {"pvcName": "compile-cache", "mountPath": "/cache"}
        main["volumeMounts"] = [{"name": "compile-cache", "mountPath": "/cache", "readOnly": True}]
        c["podTemplate"]["spec"]["volumes"] = [{"name": "compile-cache",
                                                "persistentVolumeClaim": {"claimName": "compile-cache"}}]
    elif kind in ("lws-args-empty", "lws-command-empty"):
        c["multinode"] = {"nodeCount": _pick(rng, (2, 3))}
        c.pop("roles", None)
        if kind == "lws-args-empty":
            main["command"] = ["python3", "-m", f"dynamo.{fw}", "--model", "m"]
            main.pop("args", None)
        else:
            main.pop("command", None)
            main["args"] = ["--model", "m"]
        dgd["metadata"].setdefault("annotations", {})["nvidia.com/enable-grove"] = "false"
    elif kind == "framework-mismatch":
        main["command"], main["args"] = ["python3", "-m", f"dynamo.{fw}"], ["--model", "m"]
        dgd["spec"]["backendFramework"] = other
    elif kind == "frameworks-in-command":
        main["command"] = ["sh", "-c"]
        main["args"] = [f"python3 -m dynamo.{fw} --model m && python3 -m dynamo.{other}"]
        dgd["spec"].pop("backendFramework", None)
    else:  # near miss: a cache with its mount path, a vLLM failover
        c["compilationCache"] = {"pvcName": "compile-cache", "mountPath": "/cache"}
    return dgd
