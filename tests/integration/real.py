"""LeaderWorkerSet objects and polling shared by the tests that run the real LWS and Volcano."""

from __future__ import annotations

import json
import time

LWS_GROUP = "leaderworkerset.x-k8s.io"
# kubernetes-sigs/lws api/leaderworkerset/v1/leaderworkerset_types.go (v0.9.0)
NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
GROUP_LABEL = "leaderworkerset.sigs.k8s.io/group-index"
WORKER_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
REVISION_LABEL = "leaderworkerset.sigs.k8s.io/template-revision-hash"
# volcano-sh/apis pkg/apis/scheduling/v1beta1/labels.go (v1.12.1, LWS's; v1.10.0, Volcano's): KubeGroupNameAnnotationKey
GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"


def until(what: str, probe, timeout: float = 90.0, interval: float = 0.5):
    """Poll ``probe`` until it returns something truthy; fail with ``what`` and the last value."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; last seen: {last!r}")


def get(sandbox, *args) -> dict:
    return json.loads(sandbox.kubectl("get", *args, "-o", "json").stdout)


def items(sandbox, *args) -> list:
    return get(sandbox, *args)["items"]


def lws(name: str, ns: str, *, replicas: int, size: int, gpus: int = 0, scheduler: str | None = None,
        pool: dict | None = None) -> dict:
    resources = {"requests": {"cpu": "100m", **({"nvidia.com/gpu": str(gpus)} if gpus else {})},
                 "limits": {"nvidia.com/gpu": str(gpus)} if gpus else {}}
    spec = {"containers": [{"name": "main", "image": "registry.example/none:1", "resources": resources}],
            "terminationGracePeriodSeconds": 0}
    if scheduler:
        spec["schedulerName"] = scheduler
    if pool:
        spec["nodeSelector"] = pool
    template = {"spec": spec}
    return {"apiVersion": f"{LWS_GROUP}/v1", "kind": "LeaderWorkerSet", "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": replicas, "leaderWorkerTemplate": {"size": size, "leaderTemplate": template,
                                                                    "workerTemplate": template}}}
