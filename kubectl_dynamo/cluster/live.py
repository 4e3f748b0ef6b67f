"""Live DGDs for `explain dgd NAME` and `upgrade dgd NAME`, and the operator context they render in."""

from __future__ import annotations

from typing import Optional, Tuple

from kubectl_dynamo.cluster.client import Cluster, path_for
from kubectl_dynamo.errors import NotFound
from kubectl_dynamo.model.facts import gather
from kubectl_dynamo.model.platform import operator_context

DGD_VERSION = "v1beta1"  # the storage version; reading it never needs the conversion webhook


def get_dgd(cluster: Cluster, name: str) -> dict:
    try:
        return cluster.get(path_for("nvidia.com", DGD_VERSION, "dynamographdeployments", cluster.namespace, name))
    except NotFound:
        raise NotFound(f'dynamographdeployments.nvidia.com "{name}" not found in namespace {cluster.namespace}') from None


def explain_context(cluster: Cluster):
    return operator_context(gather(cluster, nodes=False))


def dgd_openapi_schema(cluster: Cluster, version: str) -> dict:
    """The cluster's own DGD schema for ``version`` (``explain --cluster-schema``)."""
    from kubectl_dynamo.errors import UsageError

    crd = cluster.get(path_for("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                               name="dynamographdeployments.nvidia.com"))
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return v["schema"]["openAPIV3Schema"]
    raise UsageError(f"the cluster's DGD CRD does not serve {version}")


def get_dgd_for_upgrade(cluster: Cluster, name: str, namespace: str) -> Tuple[dict, dict, Optional[str]]:
    """(manifest to upgrade, stored object, note) for a live DGD.

    The stored object is read as v1beta1 (v1alpha1 only where an old CRD serves nothing else).
    When it was written as v1alpha1 without a last-applied copy, the manifest is its v1alpha1
    view from the server (the operator's conversion webhook); if that is unavailable, the stored
    v1beta1 object is upgraded instead and the note says so."""
    from kubectl_dynamo.commands.upgrade import authored_version, manifest_from_live
    from kubectl_dynamo.errors import DynamoError

    obj = None
    for version in ("v1beta1", "v1alpha1"):
        try:
            obj = cluster.get(path_for("nvidia.com", version, "dynamographdeployments", namespace, name))
            break
        except NotFound:
            continue
    if obj is None:
        raise NotFound(f"dynamographdeployment {name!r} not found in namespace {namespace!r}")
    note = None
    manifest = manifest_from_live(obj)
    if authored_version(obj) == "nvidia.com/v1alpha1" and manifest.get("apiVersion") != "nvidia.com/v1alpha1":
        try:
            alpha = cluster.get(path_for("nvidia.com", "v1alpha1", "dynamographdeployments", namespace, name))
            manifest = manifest_from_live(alpha)
        except DynamoError as e:
            if getattr(e, "status", None) is None and not isinstance(e, NotFound):
                raise
            note = (f"note: {name} was written as v1alpha1 but its v1alpha1 view is unavailable "
                    f"({e.message}); upgrading the stored v1beta1 object instead")
    manifest.setdefault("metadata", {}).setdefault("namespace", namespace)
    return manifest, obj, note
