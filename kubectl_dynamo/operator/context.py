"""What a backend needs to know about the pod it is rendering (one component, one role)."""

from __future__ import annotations

from typing import Mapping, NamedTuple, Optional, Sequence

from kubectl_dynamo.operator.api import MPI_SSH_SECRET_DEFAULT
from kubectl_dynamo.operator.deployer import MultinodeDeployer

LEADER, WORKER, MAIN = "leader", "worker", "main"


class RoleContext(NamedTuple):  # not a dataclass: creating that class cost every explain -f ~1 ms
    role: str  # leader | worker | main
    nodes: int  # multinode.nodeCount, 1 for single-node
    service: str  # component name (serviceName in the operator)
    deployer: MultinodeDeployer
    gpus: int = 0  # scalar GPUs of this role's main container
    annotations: Mapping[str, str] = {}  # pod-template annotations after propagation (read only)
    parent_dgd: str = ""
    operator_version: Optional[str] = None
    compilation_cache_path: Optional[str] = None  # resolved mount path when compilationCache is set
    role_templates: bool = False  # 1.6: roles[].podTemplate own the launch command
    ssh_secret_name: str = MPI_SSH_SECRET_DEFAULT
    worker_hash: str = ""  # DYN_NAMESPACE_WORKER_SUFFIX value for worker-type components
    inter_pod_gms: bool = False  # experimental.gpuMemoryService.mode InterPod
    inter_pod_failover: bool = False  # experimental.failover.mode InterPod

    @property
    def multinode(self) -> bool:
        return self.nodes > 1


class Decision(NamedTuple):  # not a dataclass: creating that class cost every explain -f ~0.5 ms
    """The launch mode a backend chose, for `explain`."""

    mode: str
    reason: str


class ClusterContext(NamedTuple):
    """What rendering a live DGD takes from the cluster: the operator's gates, KAI queue names,
    version (None = unknown), MPI secret name (the operator's default unless its config names
    another) and notes on what could not be read. Here, beside the other inputs of the simulation (model.platform fills it):
    explain -f renders without a cluster and does not import that. A NamedTuple, not a dataclass:
    creating that class cost every explain -f ~0.8 ms."""

    gates: object = None
    kai_queues: Optional[list] = None
    operator_version: Optional[str] = None
    ssh_secret_name: str = MPI_SSH_SECRET_DEFAULT
    notes: Sequence[str] = ()


class RenderError(Exception):
    """The operator would refuse to render this pod (the message is the operator's)."""
