"""The Dynamo operator's API surface in one place: API versions, annotations, labels, env names,
component types, backends and the version cut-offs the simulation switches on.

Values: ai-dynamo/dynamo@2a6da14c deploy/operator/internal/consts/consts.go and api/v1beta1 (the
1.5-era operator); the 1.6 cut-offs are from the 1.6.0 documentation (docs/versions.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

GROUP = "nvidia.com"
V1ALPHA1 = "nvidia.com/v1alpha1"
V1BETA1 = "nvidia.com/v1beta1"
DGD_KIND = "DynamoGraphDeployment"
# What the v1alpha1 conversion keeps for the round trip (v1alpha1 conversion.go), and the frontend sidecar
# container name: here, not in convert.py, so explain of a v1beta1 DGD never imports the converter.
ANN_DGD_SPEC = "nvidia.com/dgd-spec"
FRONTEND_SIDECAR_CONTAINER = "sidecar-frontend"

# -- DGD annotations --------------------------------------------------------------------------
ANN_ORIGIN_VERSION = "nvidia.com/dynamo-operator-origin-version"  # stamped on CREATE, immutable
ANN_WORKLOAD_PROVIDER = "nvidia.com/workload-provider"  # grove | component, stamped on CREATE (>= 1.5)
ANN_ENABLE_GROVE = "nvidia.com/enable-grove"
ANN_KAI_QUEUE = "nvidia.com/kai-scheduler-queue"
ANN_VOLCANO_QUEUE = "nvidia.com/volcano-queue"
ANN_ENABLE_METRICS = "nvidia.com/enable-metrics"
ANN_DISCOVERY_BACKEND = "nvidia.com/dynamo-discovery-backend"
ANN_KUBE_DISCOVERY_MODE = "nvidia.com/dynamo-kube-discovery-mode"
DISCOVERY_BACKEND_DEFAULT = "kubernetes"  # the chart's operator config (discovery.backend)
ANN_VLLM_EXECUTOR_BACKEND = "nvidia.com/vllm-distributed-executor-backend"
ANN_WORKER_HASH_V2 = "nvidia.com/current-worker-hash-v2"
ANN_ISTIO_SIDECAR_INJECT = "sidecar.istio.io/inject"
ANN_TOPOLOGY_LABEL_KEY = "nvidia.com/topology-label-key"  # kvTransferPolicy.labelKey, on worker DCDs and pods
ANN_TOPOLOGY_CLUSTER_TOPOLOGY = "nvidia.com/topology-cluster-topology-name"
# DGD annotations copied into every component's pod-template annotations (component wins).
PROPAGATED_ANNOTATIONS = (
    ANN_ENABLE_METRICS, ANN_DISCOVERY_BACKEND, ANN_KUBE_DISCOVERY_MODE, ANN_ORIGIN_VERSION,
    ANN_VLLM_EXECUTOR_BACKEND,
)

# -- labels -----------------------------------------------------------------------------------
LABEL_DGD = "nvidia.com/dynamo-graph-deployment-name"
LABEL_COMPONENT = "nvidia.com/dynamo-component"
LABEL_COMPONENT_TYPE = "nvidia.com/dynamo-component-type"
LABEL_DYNAMO_NAMESPACE = "nvidia.com/dynamo-namespace"
LABEL_WORKER_HASH = "nvidia.com/dynamo-worker-hash"
LABEL_KAI_QUEUE = "kai.scheduler/queue"

# -- env --------------------------------------------------------------------------------------
ENV_WORKER_SUFFIX = "DYN_NAMESPACE_WORKER_SUFFIX"

# -- component types and backends -------------------------------------------------------------
WORKER_TYPES = ("worker", "prefill", "decode")
COMPONENT_TYPES = ("frontend", "worker", "prefill", "decode", "planner", "epp")
BACKENDS = ("vllm", "sglang", "trtllm")
NOOP = "noop"
GPU_RESOURCE = "nvidia.com/gpu"
MPI_SSH_SECRET_DEFAULT = "mpi-run-ssh-secret"
PLANNER_SERVICE_ACCOUNT = "planner-serviceaccount"  # consts.PlannerServiceAccountName

# -- version cut-offs (operator version unless noted) ------------------------------------------
LWS_KUBELET_FORM_SINCE = "1.1.0"  # $(LWS_LEADER_ADDRESS) instead of "$LWS_LEADER_ADDRESS" (see lws.py)
PROVIDER_ANNOTATION_SINCE = "1.5.0"
VLLM_MP_ORIGIN_SINCE = "1.0.0"  # origin version: vLLM multinode defaults to mp instead of Ray
TOPOLOGY_SINCE = "1.6.0"  # operator and origin: DYNAMO_RANK / DYNAMO_LEADER_ADDRESS
ROLE_TEMPLATES_SINCE = "1.6.0"  # components[].roles[].podTemplate
VLLM_FLAG_NORMALIZATION_SINCE = "1.6.0"



def body_version(doc: Any) -> Optional[str]:
    """The DGD version its body is written in, whatever ``apiVersion`` says: a spec with ``services``
    and no ``components`` is v1alpha1 (a common hand edit changes only the apiVersion line), one with
    ``components`` v1beta1; otherwise the ``apiVersion``."""
    if not isinstance(doc, Mapping):
        return None
    spec = doc.get("spec")
    if isinstance(spec, Mapping):
        if "services" in spec and "components" not in spec:
            return V1ALPHA1
        if "components" in spec:
            return V1BETA1
    version = doc.get("apiVersion")
    return version if isinstance(version, str) else None


def mislabelled(doc: Any) -> bool:
    """A DynamoGraphDeployment with a v1alpha1 body under another apiVersion (e.g. nvidia.com/v1beta1)."""
    return (isinstance(doc, Mapping) and doc.get("kind") == DGD_KIND
            and str(doc.get("apiVersion") or "").startswith(GROUP + "/")
            and doc.get("apiVersion") != V1ALPHA1 and body_version(doc) == V1ALPHA1)


def mislabelled_message(doc: Mapping) -> str:
    return f"apiVersion is {doc.get('apiVersion')} but the body is v1alpha1 (spec.services, no spec.components)"


UPGRADE_HINT = "Run kubectl dynamo upgrade dgd -f FILE: it converts a v1alpha1 body to v1beta1 (--write rewrites FILE)."
