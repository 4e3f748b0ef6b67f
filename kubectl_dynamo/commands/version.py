"""``version``: the plugin's version and, given a cluster, the server's and the Dynamo operator's.

Its own module so that ``version --client`` imports nothing of detection or the operator model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_dynamo.result import Result

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import VersionData


def run_version(cluster) -> Result[VersionData]:
    """Plugin version and, given a cluster, the server's and the Dynamo operator's."""
    from kubectl_dynamo import __version__
    from kubectl_dynamo.output.tables import format_version

    data: VersionData = {"clientVersion": __version__}
    if cluster is None:
        return Result(data, format_version)
    from kubectl_dynamo.cluster.client import path_for
    from kubectl_dynamo.errors import Forbidden
    from kubectl_dynamo.model.platform import find_dynamo_operator, operator_version

    data["serverVersion"] = cluster.server_version()
    names = []
    try:
        deps = cluster.list(path_for("apps", "v1", "deployments"), label_selector="control-plane=controller-manager")
        op = find_dynamo_operator(deps)
        data["dynamoOperator"] = None if op is None else {
            "version": operator_version(op), "namespace": op["metadata"]["namespace"], "name": op["metadata"]["name"]}
        if op is not None:
            names.append(f"deployment.apps/{op['metadata']['name']}")
    except Forbidden as e:
        data["dynamoOperator"] = {"version": None, "error": f"forbidden ({e.message})"}
    return Result(data, format_version, names=names)
