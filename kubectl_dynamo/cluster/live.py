"""Live objects for ``explain dgd NAME``: the DGD and the operator context it renders in."""

from __future__ import annotations

from ..detection import effective_gates, find_dynamo_operator, operator_version
from ..errors import NotFound
from .client import Cluster, path_for
from .facts import gather

DGD_VERSION = "v1beta1"  # the storage version; reading it never needs the conversion webhook


def get_dgd(cluster: Cluster, name: str) -> dict:
    try:
        return cluster.get(path_for("nvidia.com", DGD_VERSION, "dynamographdeployments", cluster.namespace, name))
    except NotFound:
        raise NotFound(f'dynamographdeployments.nvidia.com "{name}" not found in namespace {cluster.namespace}') from None


def explain_context(cluster: Cluster):
    from ..explain import ClusterContext

    facts = gather(cluster, nodes=False)
    op = find_dynamo_operator(facts.deployments)
    ctx = ClusterContext(gates=effective_gates(facts, op is not None),
                         kai_queues=[q["metadata"]["name"] for q in facts.kai_queues]
                         if facts.kai_queues is not None else None,
                         operator_version=operator_version(op) if op else None)
    mpi = ((facts.operator_config or {}).get("mpi") or {})
    ctx.ssh_secret_name = mpi.get("sshSecretName") or None
    ctx.notes = [f"{what} unknown: {why}" for what, why in sorted(facts.unknown.items())]
    return ctx
