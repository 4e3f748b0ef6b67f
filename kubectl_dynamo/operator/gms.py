"""GPU Memory Service (GMS) and failover: what ``experimental.gpuMemoryService`` / ``failover`` change.

ai-dynamo/dynamo@2a6da14c deploy/operator/internal/gms/gms.go, dra/dra.go, dynamo/failover.go,
dynamo/failover_vllm.go, dynamo/graph.go (expandRolesForComponent, GenerateBasePodSpec), grove.go.

* Intra-pod GMS (mode ``IntraPod``, any provider): the main container's GPUs become the shared DRA
  claim ``intrapod-shared-gpu`` (template ``<dgd>-<component>-gpu``), a GPU toleration is added and
  a ``gms-server`` native sidecar (restartable init container) serves the memory over a shared
  emptyDir socket directory.
* Intra-pod failover (``failover`` with mode ``IntraPod`` or none): the main container is cloned
  into ``engine-0`` / ``engine-1`` (vLLM only).
* Inter-pod GMS (mode ``InterPod``, Grove only): per rank one weight-server clique
  ``<component>-gms-<rank>`` plus the engine clique(s), sharing a hostPath socket directory;
  with inter-pod failover the engine clique has 1 + numShadows pods.
"""

from __future__ import annotations

import copy
from typing import List, Optional, Tuple

from kubectl_dynamo.operator.flags import is_gpu_resource_name

CLAIM_NAME = "intrapod-shared-gpu"
SERVER_CONTAINER = "gms-server"
SERVER_MODULE = "gpu_memory_service.cli.server"
INTRAPOD_VOLUME = "gms-intrapod-control"
INTRAPOD_MOUNT = "/gms-intrapod-control"
ENV_SOCKET_DIR = "GMS_SOCKET_DIR"
SHARED_VOLUME = "gms-shared"
HOST_PATH_BASE = "/run/gms"
SHARED_MOUNT = "/run/gms/shared"
PERM_FIX_INIT = "fix-gms-perms"
INTRA, INTER = "IntraPod", "InterPod"
FAILOVER_ENGINES = 2
SYSTEM_PORT, FPM_BASE_PORT = 9090, 20380
MASTER_PORT_FLAG, MASTER_PORT_STRIDE = "--master-port", 100
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def _experimental(component: dict, key: str) -> Optional[dict]:
    experimental = component.get("experimental")
    value = experimental.get(key) if isinstance(experimental, dict) else None
    return value if isinstance(value, dict) else None


def spec(component: dict) -> Optional[dict]:
    return _experimental(component, "gpuMemoryService")


def is_inter_pod(component: dict) -> bool:
    gms = spec(component)
    return gms is not None and gms.get("mode") == INTER


def is_inter_pod_failover(component: dict) -> bool:
    failover = _experimental(component, "failover")
    return failover is not None and failover.get("mode") == INTER


def is_intra_pod_failover(component: dict) -> bool:
    failover = _experimental(component, "failover")
    return failover is not None and failover.get("mode") in (None, "", INTRA)


def total_engine_pods(component: dict) -> int:
    if not is_inter_pod_failover(component):
        return 1
    shadows = (_experimental(component, "failover") or {}).get("numShadows") or 0
    return 1 + (shadows if shadows >= 1 else 1)


def roles(nodes: int, component: dict) -> List[Tuple[str, str, int, int]]:
    """Inter-pod GMS role expansion: (role name, kind, replicas, rank); kind is gms|main|leader|worker."""
    engines = total_engine_pods(component)
    if nodes <= 1:
        return [("gms-0", "gms", 1, 0), ("main", "main", engines, 0)]
    out = []
    for rank in range(nodes):
        out.append((f"gms-{rank}", "gms", 1, rank))
        out.append(("leader", "leader", engines, 0) if rank == 0 else (f"worker-{rank}", "worker", engines, rank))
    return out


def remove_gpu_resources(container: dict) -> None:
    resources = container.get("resources") or {}
    for section in ("limits", "requests"):
        values = resources.get(section)
        if isinstance(values, dict):
            for name in [n for n in values if is_gpu_resource_name(n)]:
                del values[name]


def _ensure_claim(container: dict) -> None:
    resources = container.setdefault("resources", {})
    claims = resources.setdefault("claims", [])
    if not any(c.get("name") == CLAIM_NAME for c in claims):
        claims.append({"name": CLAIM_NAME})


def _add_gpu_toleration(pod: dict) -> None:
    tolerations = pod.setdefault("tolerations", [])
    if not any(t.get("key") == GPU_TOLERATION["key"] and t.get("effect") == GPU_TOLERATION["effect"]
               for t in tolerations):
        tolerations.append(dict(GPU_TOLERATION))


def _replace_or_append(items: List[dict], item: dict) -> None:
    for i, existing in enumerate(items):
        if existing.get("name") == item["name"]:
            items[i] = item
            return
    items.append(item)


def apply_claim(pod: dict, claim_template: str) -> None:
    """``dra.ApplyClaim``: the main container's GPUs become the pod's shared DRA claim."""
    main = pod["containers"][0]
    remove_gpu_resources(main)
    _ensure_claim(main)
    _add_gpu_toleration(pod)
    _replace_or_append(pod.setdefault("resourceClaims", []),
                       {"name": CLAIM_NAME, "resourceClaimTemplateName": claim_template})


def ensure_client(pod: dict, container: dict) -> None:
    _replace_or_append(pod.setdefault("volumes", []), {"name": INTRAPOD_VOLUME, "emptyDir": {}})
    _replace_or_append(container.setdefault("volumeMounts", []), {"name": INTRAPOD_VOLUME, "mountPath": INTRAPOD_MOUNT})
    _replace_or_append(container.setdefault("env", []), {"name": ENV_SOCKET_DIR, "value": INTRAPOD_MOUNT})
    remove_gpu_resources(container)
    _ensure_claim(container)


def apply_intra_pod(pod: dict, component: dict, dgd_name: str, service: str) -> None:
    """Intra-pod GMS (the caller checked a GMS spec without inter-pod mode)."""
    from kubectl_dynamo.operator.context import RenderError

    gms = spec(component) or {}
    names = {c.get("name") for c in pod["containers"]}
    clients = gms.get("extraClientContainers") or []
    missing = sorted({n for n in clients if n not in names})
    duplicates = sorted({n for n in clients if clients.count(n) > 1})
    if missing or duplicates:
        problems = ([f"contains duplicate names {duplicates}"] if duplicates else []) + (
            [f"references missing pod containers {missing}"] if missing else [])
        raise RenderError(f"gpuMemoryService.extraClientContainers {'; '.join(problems)}")
    apply_claim(pod, f"{dgd_name}-{service.lower()}-gpu")
    main = pod["containers"][0]
    ensure_client(pod, main)
    init = pod.setdefault("initContainers", [])
    if not any(c.get("name") == SERVER_CONTAINER for c in init):
        init.append({
            "name": SERVER_CONTAINER, "image": main.get("image", ""),
            "command": ["python3", "-m", SERVER_MODULE],
            "env": [{"name": ENV_SOCKET_DIR, "value": INTRAPOD_MOUNT}],
            "resources": {"claims": [{"name": CLAIM_NAME}]},
            "volumeMounts": [{"name": INTRAPOD_VOLUME, "mountPath": INTRAPOD_MOUNT}],
            "restartPolicy": "Always",
        })
    for name in dict.fromkeys(clients):
        ensure_client(pod, next(c for c in pod["containers"] if c.get("name") == name))


# ---- intra-pod failover ------------------------------------------------------------------------

_ENGINE_DROPPED_ENV = {"DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS", "DYN_SYSTEM_PORT", "DYN_SYSTEM_ENABLED",
                       "DYN_HEALTH_CHECK_ENABLED", "CONTAINER_NAME", "DYN_FORWARDPASS_METRIC_PORT"}


def _engine(base: dict, engine_id: int) -> dict:
    engine = copy.deepcopy(base)
    engine["name"] = f"engine-{engine_id}"
    port_name, port = f"system-{engine_id}", SYSTEM_PORT + engine_id
    engine["ports"] = [{"name": port_name, "containerPort": port, "protocol": "TCP"}]
    engine["env"] = [e for e in engine.get("env") or [] if e.get("name") not in _ENGINE_DROPPED_ENV] + [
        {"name": "ENGINE_ID", "value": str(engine_id)},
        {"name": "CONTAINER_NAME", "value": engine["name"]},
        {"name": "FAILOVER_LOCK_PATH", "value": f"{INTRAPOD_MOUNT}/failover.lock"},
        {"name": "DYN_SYSTEM_STARTING_HEALTH_STATUS", "value": "notready"},
        {"name": "DYN_SYSTEM_PORT", "value": str(port)},
        {"name": "DYN_SYSTEM_ENABLED", "value": "true"},
        {"name": "DYN_FORWARDPASS_METRIC_PORT", "value": str(FPM_BASE_PORT + engine_id)},
    ]
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        http = (engine.get(probe) or {}).get("httpGet")
        if http is not None:
            http["port"] = port_name
    return engine


def _has_master_port(container: dict) -> bool:
    return any(a == MASTER_PORT_FLAG or f"{MASTER_PORT_FLAG} " in a for a in container.get("args") or []) or any(
        f"{MASTER_PORT_FLAG} " in c for c in container.get("command") or [])


def _stagger_master_port(container: dict, offset: int) -> None:
    args = container.get("args") or []
    for i, arg in enumerate(args):
        if arg == MASTER_PORT_FLAG and i + 1 < len(args) and args[i + 1].isdigit():
            args[i + 1] = str(int(args[i + 1]) + offset)
            return
    for key in ("args", "command"):
        items = container.get(key) or []
        for i, item in enumerate(items):
            marker = f"{MASTER_PORT_FLAG} "
            if marker not in item:
                continue
            tail = item.split(marker, 1)[1]
            digits = ""
            for ch in tail:
                if not ch.isdigit():
                    break
                digits += ch
            if digits:
                items[i] = item.replace(marker + digits, marker + str(int(digits) + offset), 1)
                return


def build_failover_pod(pod: dict, nodes: int, framework: str) -> None:
    from kubectl_dynamo.operator.context import RenderError

    main, sidecars = pod["containers"][0], pod["containers"][1:]
    if framework != "vllm":
        raise RenderError(f"failover is currently supported only for vLLM (detected: {framework})")
    engines = [_engine(main, i) for i in range(FAILOVER_ENGINES)]
    for i, c in enumerate(engines):
        c["env"] += [
            {"name": "DYN_VLLM_GMS_SHADOW_MODE", "value": "true"},
            {"name": "VLLM_NIXL_SIDE_CHANNEL_PORT", "value": str(5600 + i)},
            {"name": "DYN_VLLM_KV_EVENT_PORT", "value": str(20080 + i)},
        ]
        if i > 0:
            if _has_master_port(c):
                _stagger_master_port(c, i * MASTER_PORT_STRIDE)
            else:
                c["args"] = list(c.get("args") or []) + [MASTER_PORT_FLAG, str(29500 + i * MASTER_PORT_STRIDE)]
        if nodes > 1:
            c["env"].append({"name": "NNODES", "value": str(nodes)})
    pod["containers"] = engines + sidecars


# ---- inter-pod GMS (Grove) ---------------------------------------------------------------------

def _shared_resources(pod: dict, container: dict, rank: int) -> None:
    remove_gpu_resources(container)
    _add_gpu_toleration(pod)
    mount = {"name": SHARED_VOLUME, "mountPath": SHARED_MOUNT,
             "subPathExpr": f"$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)/rank-{rank}"}
    pod.setdefault("volumes", []).append(
        {"name": SHARED_VOLUME, "hostPath": {"path": HOST_PATH_BASE, "type": "DirectoryOrCreate"}})
    container.setdefault("volumeMounts", []).append(mount)
    pod.setdefault("initContainers", []).append({
        "name": PERM_FIX_INIT, "image": container.get("image", ""),
        "command": ["sh", "-c", f"chmod 1777 {SHARED_MOUNT}"],
        "volumeMounts": [dict(mount)],
        "securityContext": {"runAsUser": 0, "runAsNonRoot": False},
    })


def _wrapper_script() -> str:
    return (f"rm -f {SHARED_MOUNT}/gms_*.sock\nrc=1\ncleanup() {{ kill -- -$$ 2>/dev/null; exit \"$rc\"; }}\n"
            f"trap cleanup SIGTERM SIGINT\npython3 -m {SERVER_MODULE} &\necho \"Started GMS server pid=$!\"\n"
            "wait -n\nrc=$?\necho \"GMS server exited (code=$rc), shutting down\"\ncleanup")


def weight_server(base: dict, rank: int, gpus: int) -> dict:
    """``gmsWeightServerPodSpec``: the engine's single-node pod turned into the rank's GMS server."""
    pod = copy.deepcopy(base)
    c = pod["containers"][0]
    c["command"] = ["bash", "-c"]
    c["args"] = [_wrapper_script()]
    c["startupProbe"] = {"exec": {"command": [
        "sh", "-c", f"test $(ls {SHARED_MOUNT}/gms_*.sock 2>/dev/null | wc -l) -ge {2 * gpus}"]},
        "periodSeconds": 2, "timeoutSeconds": 2, "failureThreshold": 150}
    c.pop("livenessProbe", None)
    c.pop("readinessProbe", None)
    c.setdefault("env", []).append({"name": ENV_SOCKET_DIR, "value": SHARED_MOUNT})
    _shared_resources(pod, c, rank)
    return pod


def augment_engine(pod: dict, rank: int, inter_pod_failover: bool) -> None:
    c = pod["containers"][0]
    c["env"] = [e for e in (c.get("env") or []) + [
        {"name": "ENGINE_ID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['grove.io/podclique-pod-index']"}}},
        {"name": ENV_SOCKET_DIR, "value": SHARED_MOUNT},
        {"name": "FAILOVER_LOCK_PATH", "value": f"{SHARED_MOUNT}/failover.lock"},
        {"name": "DYN_SYSTEM_STARTING_HEALTH_STATUS", "value": "notready"},
    ] if e.get("name") != "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS"]
    _shared_resources(pod, c, rank)
    if inter_pod_failover:
        pod["restartPolicy"] = "Never"
