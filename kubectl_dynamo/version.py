"""``version``: the plugin's version and, given a cluster, the server's and the Dynamo operator's.

Its own module so that ``version --client`` imports nothing of detection or the operator model.
"""

from __future__ import annotations

from .result import Result


def run_version(cluster) -> Result:
    """Plugin version and, given a cluster, the server's and the Dynamo operator's."""
    from . import __version__
    from .tables import format_version

    data: dict = {"clientVersion": __version__}
    if cluster is None:
        return Result(data, format_version)
    from .cluster.client import path_for
    from .detection import find_dynamo_operator, operator_version
    from .errors import Forbidden

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
