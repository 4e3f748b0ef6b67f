"""GenerateBasePodSpec: the rendered pod of one component role (ai-dynamo/dynamo@2a6da14c deploy/operator/internal/dynamo/graph.go).

Order matters for byte-exact output:

1. base ``main`` container from the component type (``components.py``);
2. merge the user's ``main`` container: non-empty user fields replace base fields (lists
   wholesale), env = union with user winning, sorted by name; user probes replace;
3. compilation cache mount; 4. standard env merge (re-sorts; 1.6 topology variables join here);
5. backend ``update_container`` (its env is appended unsorted at the end);
6. type pod defaults, user pod fields, ``fsGroup: 1000`` unless the user set any securityContext,
   discovery service account, cache PVC volume, ``/dev/shm``, sidecars after ``main``, frontend
   sidecar defaults;
7. backend ``update_pod_spec``; finally every main-container mount without a volume gets a PVC
   volume of the same name and volumes are ordered by the main container's mounts.
"""

from __future__ import annotations

import copy
from typing import Dict, List, Optional, Sequence, Tuple

from kubectl_dynamo.operator import api, backends, components, gms, vllm
from kubectl_dynamo.operator.components import MAIN_CONTAINER, ComponentContext, main_container_of
from kubectl_dynamo.operator.context import Decision, RenderError, RoleContext

DEFAULT_SHM_SIZE = "8Gi"
SHM_VOLUME = "shared-memory"
DCD_DEFAULT_SERVICE_ACCOUNT = "default"


# ---- step 2: merging -------------------------------------------------------------------------

def merge_envs(base: List[dict], override: List[dict]) -> List[dict]:
    """Union by name, ``override`` wins, sorted by name."""
    merged: Dict[str, dict] = {}
    for env in list(base or []) + list(override or []):
        merged[env.get("name", "")] = env
    return [merged[k] for k in sorted(merged)]


def _is_empty(value) -> bool:
    return value is None or value == "" or value == [] or value == {}


def merge_override(base: dict, user: dict) -> dict:
    """mergo ``WithOverride``: non-empty user values replace; nested objects merge; lists replace.

    The user's values come decoded (``goencode.decoded``), so a ``false`` or ``0`` left in them is
    a set Go pointer (``enableServiceLinks``, ``automountServiceAccountToken``): mergo sets it where
    the base has none and, dereferencing, keeps a base value over it (dario.cat/mergo merge.go
    ``deepMerge``: a non-nil pointer onto a nil one is copied; onto a set one its zero element is
    empty and skipped)."""
    out = dict(base)
    for key, value in user.items():
        if _is_empty(value) or ((value is False or value == 0) and out.get(key) is not None):
            continue
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_override(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def merge_main_container(base: dict, user: Optional[dict]) -> dict:
    if not user:
        return base
    merged = merge_override(base, {k: v for k, v in user.items() if k not in ("env",)})
    merged["env"] = merge_envs(base.get("env") or [], user.get("env") or [])
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        if user.get(probe) is not None:
            merged[probe] = copy.deepcopy(user[probe])
    merged["name"] = MAIN_CONTAINER
    return merged


# ---- the DGD's kvTransferPolicy on worker templates -------------------------------------------
# ai-dynamo/dynamo@2a6da14c internal/dynamo/graph.go applyKvTransferPolicyToWorkerComponent and
# internal/dynamo/component_worker.go TopologyLabelVolume: before rendering, a worker's template gets
# the policy env (replacing the user's), a read-only mount of the topology label volume and that
# Downward API volume (replacing a same-named mount or volume, or one at the same path).

TOPOLOGY_VOLUME = "topology-labels"
TOPOLOGY_LABEL_PREFIX = "nvidia.com/dynamo-topology."  # consts.go KubeLabelDynamoTopologyPrefix
TOPOLOGY_MOUNT_PATH = "/etc/dynamo/topology"
KV_TRANSFER_ENV = ("DYN_KV_TRANSFER_DOMAIN", "DYN_KV_TRANSFER_ENFORCEMENT", "DYN_KV_TRANSFER_PREFERRED_WEIGHT",
                   "DYN_TOPOLOGY_ENABLED", "DYN_TOPOLOGY_MOUNT_PATH")


def _float32_text(value) -> str:
    """Go's ``strconv.FormatFloat(float64(float32(v)), 'f', -1, 32)``: the shortest decimal that reads
    back as the same float32, without an exponent."""
    import struct
    from decimal import Decimal

    f32 = struct.unpack("f", struct.pack("f", float(value)))[0]
    for digits in range(1, 10):
        text = f"{f32:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == f32:
            return format(Decimal(text), "f")
    return format(Decimal(repr(f32)), "f")


def applies_kv_transfer_policy(policy: Optional[dict]) -> bool:
    """graph.go shouldApplyKvTransferPolicyToWorkerComponent (for a worker component)."""
    return bool(policy and (policy.get("labelKey") or policy.get("clusterTopologyName")))


def apply_kv_transfer_policy(main: dict, pod_spec: dict, policy: dict, domains: Sequence[str] = ()) -> None:
    """``domains``: the Grove ClusterTopology's levels (Grove path with ``clusterTopologyName``); a DCD gets
    none, so its Downward API volume has no items (``topologyLabelVolumeItems``)."""
    envs = [{"name": "DYN_KV_TRANSFER_DOMAIN", "value": str(policy.get("domain") or "")},
            {"name": "DYN_KV_TRANSFER_ENFORCEMENT", "value": policy.get("enforcement") or "required"},
            {"name": "DYN_TOPOLOGY_ENABLED", "value": "true"},
            {"name": "DYN_TOPOLOGY_MOUNT_PATH", "value": TOPOLOGY_MOUNT_PATH}]
    if policy.get("preferredWeight") is not None:
        envs.append({"name": "DYN_KV_TRANSFER_PREFERRED_WEIGHT", "value": _float32_text(policy["preferredWeight"])})
    main["env"] = merge_envs([e for e in main.get("env") or [] if e.get("name") not in KV_TRANSFER_ENV], envs)
    main["volumeMounts"] = [m for m in main.get("volumeMounts") or []
                            if m.get("name") != TOPOLOGY_VOLUME and m.get("mountPath") != TOPOLOGY_MOUNT_PATH] + [
        {"name": TOPOLOGY_VOLUME, "readOnly": True, "mountPath": TOPOLOGY_MOUNT_PATH}]
    if policy.get("labelKey"):
        items = [{"path": str(policy.get("domain") or ""),
                  "fieldRef": {"fieldPath": f"metadata.labels['{policy['labelKey']}']"}}]
    else:
        items = [{"path": d, "fieldRef": {"fieldPath": f"metadata.labels['{TOPOLOGY_LABEL_PREFIX}{d}']"}}
                 for d in domains]
    pod_spec["volumes"] = [v for v in pod_spec.get("volumes") or [] if v.get("name") != TOPOLOGY_VOLUME] + [
        {"name": TOPOLOGY_VOLUME, "downwardAPI": {"items": items} if items else {}}]


# ---- step 3: compilation cache ---------------------------------------------------------------

def compilation_cache_path(cache: Optional[dict], framework: str) -> Optional[str]:
    """Resolved mount path, or None without a cache. Raises RenderError like the operator."""
    if cache is None:
        return None
    if not cache.get("pvcName"):
        raise RenderError("compilationCache.pvcName is required when compilationCache is set")
    path = cache.get("mountPath") or (vllm.DEFAULT_CACHE_PATH if framework == "vllm" else "")
    if not path:
        raise RenderError(f"compilationCache.mountPath is required for backend framework {framework} (no default available)")
    return path


def apply_compilation_cache_mount(container: dict, pvc: str, path: str) -> None:
    mounts, mounted = [], False
    for mount in container.get("volumeMounts") or []:
        mount = dict(mount)
        if mount.get("name") == pvc and not mount.get("mountPath"):
            mount["mountPath"] = path
        if mount.get("mountPath") != path:
            mounts.append(mount)
            continue
        if mount.get("name") != pvc:
            raise RenderError(f'compilationCache.mountPath "{path}" is already used by volume "{mount.get("name")}"')
        if mount.get("readOnly"):
            raise RenderError(f'compilation cache volume "{pvc}" at "{path}" must be writable')
        if not mounted:
            mounts.append(mount)
            mounted = True
    if not mounted:
        mounts.append({"name": pvc, "mountPath": path})
    container["volumeMounts"] = mounts


def apply_compilation_cache_volume(pod_spec: dict, pvc: str) -> None:
    found = False
    for volume in pod_spec.get("volumes") or []:
        if volume.get("name") != pvc:
            continue
        claim = volume.get("persistentVolumeClaim")
        if claim is None:
            raise RenderError(f'compilation cache volume "{pvc}" must reference PVC "{pvc}"')
        if claim.get("claimName") != pvc:
            raise RenderError(f'compilation cache volume "{pvc}" references PVC "{claim.get("claimName")}" instead of "{pvc}"')
        if claim.get("readOnly"):
            raise RenderError(f'compilation cache PVC "{pvc}" must be writable')
        if found:
            raise RenderError(f'compilation cache volume "{pvc}" is defined more than once')
        found = True
    if not found:
        pod_spec.setdefault("volumes", []).append({"name": pvc, "persistentVolumeClaim": {"claimName": pvc}})


# ---- step 6: pod-level -----------------------------------------------------------------------

def apply_shared_memory(pod_spec: dict, container: dict, size) -> None:
    """``/dev/shm`` as a memory emptyDir (8Gi unless ``sharedMemorySize``; ``"0"`` disables it)."""
    if size is not None and str(size).strip() in ("0", "0.0", "+0", "-0"):
        return
    limit = DEFAULT_SHM_SIZE if size is None else str(size)
    volumes = [v for v in pod_spec.get("volumes") or [] if v.get("name") != SHM_VOLUME]
    pod_spec["volumes"] = volumes + [{"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": limit}}]
    mounts = [
        m for m in container.get("volumeMounts") or []
        if m.get("name") != SHM_VOLUME and m.get("mountPath") != "/dev/shm"
    ]
    container["volumeMounts"] = mounts + [{"name": SHM_VOLUME, "mountPath": "/dev/shm"}]


def order_volumes_by_mounts(volumes: List[dict], mounts: List[dict]) -> List[dict]:
    """Volumes in main-container mount order; a mount without a volume gets a same-named PVC."""
    by_name = {v.get("name"): v for v in volumes}
    ordered, seen = [], set()
    for mount in mounts:
        name = mount.get("name")
        if not name or name in seen:
            continue
        ordered.append(by_name.get(name) or {"name": name, "persistentVolumeClaim": {"claimName": name}})
        seen.add(name)
    return ordered + [v for v in volumes if v.get("name") not in seen]


def discovery_service_account(dgd_name: str) -> str:
    return f"{dgd_name}-k8s-service-discovery"


# ---- the pipeline ----------------------------------------------------------------------------


def component_context(component: dict, ctx: RoleContext, dgd_name: str, namespace: str) -> ComponentContext:
    ctype = component.get("type") or ""
    return ComponentContext(
        component_type=ctype, dgd_name=dgd_name, namespace=namespace,
        dynamo_namespace=components.dynamo_namespace(namespace, dgd_name, bool(component.get("globalDynamoNamespace"))),
        discovery_backend=ctx.annotations.get(api.ANN_DISCOVERY_BACKEND, "kubernetes"),
        discovery_mode=ctx.annotations.get(api.ANN_KUBE_DISCOVERY_MODE, "pod"),
        worker_hash=ctx.worker_hash if ctype in api.WORKER_TYPES else "",
        epp_config=component.get("eppConfig"),
    )


def merge_frontend_sidecar(pod_spec: dict, name: str, parent: ComponentContext, parent_mounts: List[dict]) -> None:
    """``mergeFrontendSidecarDefaults``: frontend defaults under the named sidecar, then the main
    container's user/cache mounts it lacks. Raises RenderError when no container has that name."""
    for i, user in enumerate(pod_spec.get("containers") or []):
        if user.get("name") != name:
            continue
        base = components.frontend_sidecar_base(name, parent)
        merged = merge_override(base, {k: v for k, v in user.items() if k != "env"})
        merged["env"] = merge_envs(base["env"], user.get("env") or [])
        have = {m.get("name") for m in merged.get("volumeMounts") or []}
        extra = [copy.deepcopy(m) for m in parent_mounts if m.get("name") not in have]
        if extra:
            merged["volumeMounts"] = list(merged.get("volumeMounts") or []) + extra
        pod_spec["containers"][i] = merged
        return
    raise RenderError(f'frontendSidecar "{name}" does not match any podTemplate container')


def generate_pod_spec(
    *,
    component: dict,
    pod_template: Optional[dict],
    framework: str,
    ctx: RoleContext,
    dgd_name: str,
    namespace: str,
    graph_env: Optional[List[dict]] = None,
    topology_env: Optional[List[dict]] = None,
    kv_transfer_policy: Optional[dict] = None,
) -> Tuple[dict, Decision]:
    """Render one role's pod spec (``GenerateBasePodSpec``). ``pod_template``: the component's (or,
    with 1.6 role templates, the role's) podTemplate. Raises RenderError where the operator would fail."""
    pod_template = copy.deepcopy(pod_template) or {}
    user_spec = pod_template.get("spec") or {}
    user_main = copy.deepcopy(main_container_of(pod_template))
    if graph_env:
        # DGD-level env sits under the component's env (component wins).
        user_main = user_main or {"name": MAIN_CONTAINER}
        user_main["env"] = merge_envs(graph_env, user_main.get("env") or [])
    kv_policy = kv_transfer_policy if (component.get("type") or "") in api.WORKER_TYPES else None
    if kv_policy and applies_kv_transfer_policy(kv_policy):
        user_main = user_main or {"name": MAIN_CONTAINER}
        user_spec = dict(user_spec)
        apply_kv_transfer_policy(user_main, user_spec, kv_policy)
    cctx = component_context(component, ctx, dgd_name, namespace)

    # 1-2: type defaults, then the user's main container
    container = merge_main_container(components.base_container(cctx), user_main)
    # 3: compilation cache, mount validation
    cache = component.get("compilationCache")
    cache_path = compilation_cache_path(cache, framework) if cache is not None else None
    if cache is not None and cache_path:
        apply_compilation_cache_mount(container, cache["pvcName"], cache_path)
    for mount in container.get("volumeMounts") or []:
        if not mount.get("name"):
            raise RenderError("volumeMount.name is required")
        if not mount.get("mountPath"):
            raise RenderError(f"volumeMount.mountPath is required for {mount['name']}")
    # 4: standard env (none offline) re-sorts; 1.6 topology variables ([UNVERIFIED] placement)
    container["env"] = merge_envs(container.get("env") or [], topology_env or [])
    sidecar_mounts = copy.deepcopy(container.get("volumeMounts") or [])
    # 5: backend
    ctx = ctx._replace(compilation_cache_path=cache_path if framework == "vllm" else None)
    backend = backends.BACKENDS.get(framework)
    if backend is not None:
        decision = backend.update_container(container, ctx)
    elif ctx.multinode:
        decision = Decision("none", "no backend framework detected; the operator adds no launch wiring")
    else:
        decision = Decision("single-node", "one pod per replica")
    # 6: pod level
    pod_spec: dict = components.base_pod_spec(cctx)
    sidecars = [copy.deepcopy(c) for c in user_spec.get("containers") or [] if c.get("name") != MAIN_CONTAINER]
    pod_spec = merge_override(pod_spec, {k: v for k, v in user_spec.items() if k != "containers"})
    if user_spec.get("securityContext") is None:
        pod_spec["securityContext"] = {"fsGroup": 1000}
    if cctx.discovery_backend == "kubernetes" and not pod_spec.get("serviceAccountName"):
        pod_spec["serviceAccountName"] = discovery_service_account(dgd_name)
    if cache is not None and cache_path:
        apply_compilation_cache_volume(pod_spec, cache["pvcName"])
    apply_shared_memory(pod_spec, container, component.get("sharedMemorySize"))
    pod_spec["containers"] = [container] + sidecars
    if component.get("frontendSidecar"):
        merge_frontend_sidecar(pod_spec, component["frontendSidecar"], cctx, sidecar_mounts)
    # 7
    if backend is not None:
        backend.update_pod_spec(pod_spec, ctx)
    pod_spec["volumes"] = order_volumes_by_mounts(pod_spec.get("volumes") or [], container.get("volumeMounts") or [])
    # 8: intra-pod GMS, then intra-pod failover (inter-pod GMS is wired per clique by the caller)
    if gms.spec(component) is not None and not gms.is_inter_pod(component):
        gms.apply_intra_pod(pod_spec, component, dgd_name, ctx.service)
    if gms.is_intra_pod_failover(component):
        gms.build_failover_pod(pod_spec, ctx.nodes, framework)
    if ctx.deployer.name != "grove" and not pod_spec.get("serviceAccountName"):
        # The DCD controller's fallback (a live namespace's SA labelled
        # nvidia.com/dynamo-component-pod=true would win; none offline).
        pod_spec["serviceAccountName"] = DCD_DEFAULT_SERVICE_ACCOUNT
    return pod_spec, decision


__all__ = [
    "RenderError", "merge_envs", "merge_main_container", "generate_pod_spec",
    "main_container_of", "compilation_cache_path", "order_volumes_by_mounts",
]
