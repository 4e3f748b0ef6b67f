"""Live DGDs for `explain dgd NAME` and `upgrade dgd NAME`, and the operator context they render in."""

from __future__ import annotations

from typing import Callable, List, Optional

from kubectl_dynamo.cluster.client import Cluster, path_for
from kubectl_dynamo.cluster.kinds import DGD
from kubectl_dynamo.errors import Forbidden, NotFound


def dgd_not_found(name: str, namespace: Optional[str]) -> NotFound:
    """The API server's words for a missing DGD, as kubectl prints them."""
    return NotFound(f'dynamographdeployments.nvidia.com "{name}" not found in namespace {namespace}')


def get_dgd(cluster: Cluster, name: str) -> dict:
    try:
        return cluster.get(DGD.path(cluster.namespace, name))
    except NotFound:
        raise dgd_not_found(name, cluster.namespace) from None


def dgd_openapi_schema(cluster: Cluster, version: str) -> dict:
    """The cluster's own DGD schema for ``version`` (``explain --cluster-schema``)."""
    from kubectl_dynamo.errors import UsageError

    crd = cluster.get(path_for("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                               name="dynamographdeployments.nvidia.com"))
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return v["schema"]["openAPIV3Schema"]
    raise UsageError(f"the cluster's DGD CRD does not serve {version}")


def node_reader(cluster) -> Callable[[], list]:
    """The cluster's nodes, listed once however many pending pods ask ([] when they may not be read: the
    scheduler's own words remain)."""
    listed: List[list] = []

    def nodes() -> list:
        if not listed:
            try:
                listed.append(cluster.list(path_for("", "v1", "nodes")))
            except (Forbidden, NotFound):  # may not read them; any other failure is exit 3, never "no nodes"
                listed.append([])
        return listed[0]

    return nodes
