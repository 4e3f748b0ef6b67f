"""Live objects for ``explain dgd NAME``: the DGD and the operator context it renders in."""

from __future__ import annotations

from ..detection import operator_context
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
    return operator_context(gather(cluster, nodes=False))
