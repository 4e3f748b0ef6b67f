"""``version``: the plugin's version and, given a cluster, the server's and the Dynamo operator's.

Its own module so that ``version --client`` imports nothing of detection or the operator model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_dynamo.result import Result

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import ClientBuild, VersionData


def client_build() -> ClientBuild:
    """The commit this copy was built from (scripts/release writes kubectl_dynamo/_build.py into the
    wheel and the krew archive; a source checkout has none: null), the OS/arch in Go's names (as krew
    and kubectl say it), and the Python that runs it."""
    import os
    import sys

    try:
        from kubectl_dynamo._build import COMMIT  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        COMMIT = ""
    machine = os.uname().machine.lower()
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)
    return {"gitCommit": COMMIT or None, "platform": f"{sys.platform}/{arch}",
            "python": ".".join(map(str, sys.version_info[:3]))}


def run_version(cluster) -> Result[VersionData]:
    """Plugin version and, given a cluster, the server's and the Dynamo operator's."""
    from kubectl_dynamo import __version__
    from kubectl_dynamo.output.tables import format_version

    data: VersionData = {"clientVersion": __version__, "clientBuild": client_build()}
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
