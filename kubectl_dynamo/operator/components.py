"""Per-component-type defaults: the base ``main`` container and base pod spec the operator starts from.

ai-dynamo/dynamo@2a6da14c deploy/operator/internal/dynamo/component_common.go, component_worker.go,
component_frontend.go, component_planner.go, component_epp.go, epp/config.go, epp/inference_pool.go.
``ComponentDefaultsFactory`` picks frontend / worker (worker, prefill, decode) / planner / epp; any
other type (``default``, ``main``, none) gets only the common container and pod spec.
"""

from __future__ import annotations

from typing import Dict, List, NamedTuple, Optional

from kubectl_dynamo.operator import api

MAIN_CONTAINER = "main"
SERVICE_PORT = 8000  # frontend HTTP (DYNAMO_PORT / DYN_HTTP_PORT)
SYSTEM_PORT = 9090
NIXL_PORT = 19090
FPM_BASE_PORT = 20380
PLANNER_METRICS_PORT = 9085
EPP_GRPC_PORT = 9002
EPP_HEALTH_PORT = 9003
PLANNER_SERVICE_ACCOUNT = "planner-serviceaccount"
EPP_SERVICE_ACCOUNT = "epp-serviceaccount"
EPP_CONFIG_KEY = "epp-config-dynamo.yaml"
EPP_CONFIG_VOLUME = "epp-config"
EPP_HF_CACHE_VOLUME = "hf-cache"
INFERENCE_POOL_GROUP = "inference.networking.k8s.io"
GLOBAL_DYNAMO_NAMESPACE = "dynamo"


class ComponentContext(NamedTuple):  # not a dataclass: creating that class cost every explain -f ~0.7 ms
    """What the type defaults read (the operator's ComponentContext)."""

    component_type: str
    dgd_name: str
    namespace: str
    dynamo_namespace: str
    discovery_backend: str = "kubernetes"  # operator default unless the DGD/pod annotation sets one
    discovery_mode: str = "pod"
    worker_hash: str = ""  # DYN_NAMESPACE_WORKER_SUFFIX for worker types ("" = none)
    epp_config: Optional[dict] = None


def dynamo_namespace(namespace: str, dgd_name: str, global_namespace: bool = False) -> str:
    """``ComputeDynamoNamespace``: ``dynamo`` for globalDynamoNamespace, else ``<ns>-<dgd>`` (dots
    in the DGD name would break the namespace.component.endpoint paths)."""
    if global_namespace:
        return GLOBAL_DYNAMO_NAMESPACE
    return f"{namespace}-{dgd_name.replace('.', '-')}"


def _field_env(name: str, path: str) -> dict:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def _http_probe(path: str, port: str, **timing: int) -> dict:
    return {"httpGet": {"path": path, "port": port}, **timing}


def _grpc_probe(**timing: int) -> dict:
    return {"grpc": {"port": EPP_HEALTH_PORT, "service": "inference-extension"}, **timing}


def _common_container(ctx: ComponentContext) -> dict:
    env: List[dict] = [
        {"name": "DYN_NAMESPACE", "value": ctx.dynamo_namespace},
        {"name": "DYN_COMPONENT", "value": ctx.component_type},
        {"name": "DYN_PARENT_DGD_K8S_NAME", "value": ctx.dgd_name},
        {"name": "DYN_PARENT_DGD_K8S_NAMESPACE", "value": ctx.namespace},
        _field_env("POD_NAME", "metadata.name"),
        _field_env("POD_NAMESPACE", "metadata.namespace"),
        _field_env("POD_UID", "metadata.uid"),
    ]
    if ctx.discovery_backend != "etcd":
        env.append({"name": "DYN_DISCOVERY_BACKEND", "value": "kubernetes"})
    if ctx.discovery_mode == "container":
        env += [{"name": "CONTAINER_NAME", "value": MAIN_CONTAINER},
                {"name": "DYN_KUBE_DISCOVERY_MODE", "value": "container"}]
    return {"name": MAIN_CONTAINER, "command": ["/bin/sh", "-c"], "env": env}


def _system_probes(c: dict) -> None:
    """Workers and the planner serve the same liveness/health endpoints on the system port."""
    c["livenessProbe"] = _http_probe("/live", "system", periodSeconds=5, timeoutSeconds=4, failureThreshold=1)
    c["readinessProbe"] = _http_probe("/health", "system", periodSeconds=10, timeoutSeconds=4, failureThreshold=3)
    c["startupProbe"] = _http_probe("/live", "system", periodSeconds=10, timeoutSeconds=5, failureThreshold=720)


def _worker(c: dict, ctx: ComponentContext) -> None:
    c["ports"] = [
        {"name": "system", "containerPort": SYSTEM_PORT, "protocol": "TCP"},
        {"name": "nixl", "containerPort": NIXL_PORT, "protocol": "TCP"},
    ]
    _system_probes(c)
    c["env"] += [
        {"name": "DYN_SYSTEM_ENABLED", "value": "true"},
        {"name": "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS", "value": '["generate"]'},
        {"name": "DYN_SYSTEM_PORT", "value": str(SYSTEM_PORT)},
        {"name": "DYN_HEALTH_CHECK_ENABLED", "value": "false"},
        {"name": "NIXL_TELEMETRY_ENABLE", "value": "n"},
        {"name": "NIXL_TELEMETRY_EXPORTER", "value": "prometheus"},
        {"name": "NIXL_TELEMETRY_PROMETHEUS_PORT", "value": str(NIXL_PORT)},
        {"name": "DYN_FORWARDPASS_METRIC_PORT", "value": str(FPM_BASE_PORT)},
    ]
    if ctx.worker_hash:
        c["env"].append({"name": api.ENV_WORKER_SUFFIX, "value": ctx.worker_hash})


def _frontend(c: dict, ctx: ComponentContext) -> None:
    c["command"] = ["python3"]
    c["args"] = ["-m", "dynamo.frontend"]
    c["ports"] = [{"name": "http", "containerPort": SERVICE_PORT, "protocol": "TCP"}]
    c["livenessProbe"] = _http_probe("/live", "http", initialDelaySeconds=15, periodSeconds=10, timeoutSeconds=1,
                                     failureThreshold=3)
    c["readinessProbe"] = _http_probe("/health", "http", initialDelaySeconds=10, periodSeconds=10, timeoutSeconds=3,
                                      failureThreshold=3)
    c["env"] += [
        {"name": "DYNAMO_PORT", "value": str(SERVICE_PORT)},
        {"name": "DYN_HTTP_PORT", "value": str(SERVICE_PORT)},
        {"name": "DYN_NAMESPACE_PREFIX", "value": ctx.dynamo_namespace},
    ]


def _planner(c: dict, ctx: ComponentContext) -> None:
    c["ports"] = [
        {"name": "metrics", "containerPort": PLANNER_METRICS_PORT, "protocol": "TCP"},
        {"name": "system", "containerPort": SYSTEM_PORT, "protocol": "TCP"},
    ]
    _system_probes(c)
    c["env"] += [
        {"name": "PLANNER_PROMETHEUS_PORT", "value": str(PLANNER_METRICS_PORT)},
        {"name": "DYN_SYSTEM_PORT", "value": str(SYSTEM_PORT)},
    ]


def epp_config_volume(dgd_name: str, epp_config: Optional[dict]) -> dict:
    ref = (epp_config or {}).get("configMapRef") or {}
    return {"name": EPP_CONFIG_VOLUME, "configMap": {
        "name": ref.get("name") or f"{dgd_name}-epp-config",
        "items": [{"key": ref.get("key") or EPP_CONFIG_KEY, "path": EPP_CONFIG_KEY}],
    }}


def _epp(c: dict, ctx: ComponentContext) -> None:
    c["ports"] = [
        {"name": "grpc", "containerPort": EPP_GRPC_PORT, "protocol": "TCP"},
        {"name": "grpc-health", "containerPort": EPP_HEALTH_PORT, "protocol": "TCP"},
        {"name": "metrics", "containerPort": SYSTEM_PORT, "protocol": "TCP"},
    ]
    c["livenessProbe"] = _grpc_probe(initialDelaySeconds=5, periodSeconds=10)
    c["readinessProbe"] = _grpc_probe(initialDelaySeconds=5, periodSeconds=10)
    c["startupProbe"] = _grpc_probe(periodSeconds=10, failureThreshold=180)
    c["env"] += [
        {"name": "USE_STREAMING", "value": "true"},
        {"name": "RUST_LOG", "value": "info"},
        {"name": "DYN_ENFORCE_DISAGG", "value": "false"},
        {"name": "DYN_NAMESPACE_PREFIX", "value": ctx.dynamo_namespace},
    ]
    c["command"] = []
    c["args"] = [
        "--pool-name", f"{ctx.dgd_name}-pool",
        "--pool-namespace", ctx.namespace,
        "--pool-group", INFERENCE_POOL_GROUP,
        "-v", "4",
        "--zap-encoder", "json",
        "--grpc-port", str(EPP_GRPC_PORT),
        "--grpc-health-port", str(EPP_HEALTH_PORT),
        "--config-file", f"/etc/epp/{EPP_CONFIG_KEY}",
    ]
    c["volumeMounts"] = [
        {"name": EPP_CONFIG_VOLUME, "mountPath": "/etc/epp", "readOnly": True},
        {"name": EPP_HF_CACHE_VOLUME, "mountPath": "/home/nonroot/.cache"},
    ]


_CONTAINER_DEFAULTS = {
    "frontend": _frontend, "worker": _worker, "prefill": _worker, "decode": _worker,
    "planner": _planner, "epp": _epp,
}


def base_container(ctx: ComponentContext) -> dict:
    c = _common_container(ctx)
    extra = _CONTAINER_DEFAULTS.get(ctx.component_type)
    if extra is not None:
        extra(c, ctx)
    return c


def base_pod_spec(ctx: ComponentContext) -> Dict[str, object]:
    pod: Dict[str, object] = {"terminationGracePeriodSeconds": 60, "restartPolicy": "Always"}
    if ctx.component_type == "planner":
        pod["serviceAccountName"] = PLANNER_SERVICE_ACCOUNT
    elif ctx.component_type == "epp":
        pod["serviceAccountName"] = EPP_SERVICE_ACCOUNT
        pod["terminationGracePeriodSeconds"] = 130
        pod["volumes"] = [epp_config_volume(ctx.dgd_name, ctx.epp_config),
                          {"name": EPP_HF_CACHE_VOLUME, "emptyDir": {}}]
    return pod


def frontend_sidecar_base(name: str, parent: ComponentContext) -> dict:
    """The frontend defaults merged into ``frontendSidecar``'s container (no worker hash)."""
    ctx = ComponentContext("frontend", parent.dgd_name, parent.namespace, parent.dynamo_namespace,
                           parent.discovery_backend, parent.discovery_mode)
    c = base_container(ctx)
    c["name"] = name
    return c


def node_count(component: dict) -> int:
    """``GetNumberOfNodes`` (api/v1beta1 dynamocomponentdeployment_types.go): ``multinode.nodeCount``, which
    the CRD defaults to 2, else 1; a value the API server would refuse (not a positive whole number, a
    multinode that is not an object) counts as 1."""
    mn = component.get("multinode")
    if mn is None:
        return 1
    n = mn.get("nodeCount", 2) if isinstance(mn, dict) else 1
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 1


def main_container_of(pod_template: Optional[dict]) -> Optional[dict]:
    for c in ((pod_template or {}).get("spec") or {}).get("containers") or []:
        if c.get("name") == MAIN_CONTAINER:
            return c
    return None
