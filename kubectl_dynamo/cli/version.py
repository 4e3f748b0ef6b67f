"""``kubectl dynamo version``: the plugin's version and, unless --client, the server's."""

from __future__ import annotations

import click

from .. import __version__
from ..output import render
from .options import kube_options


def run_version(opts, client_only: bool) -> dict:
    result = {"clientVersion": __version__}
    if client_only:
        return result
    from ..cluster.client import path_for
    from ..detection import find_dynamo_operator, operator_version
    from ..errors import Forbidden

    cluster = opts.cluster()
    result["serverVersion"] = cluster.server_version()
    try:
        deps = cluster.list(path_for("apps", "v1", "deployments"), label_selector="control-plane=controller-manager")
        op = find_dynamo_operator(deps)
        result["dynamoOperator"] = None if op is None else {
            "version": operator_version(op), "namespace": op["metadata"]["namespace"], "name": op["metadata"]["name"]}
    except Forbidden as e:
        result["dynamoOperator"] = {"version": None, "error": f"forbidden ({e.message})"}
    return result


@click.command("version")
@click.option("--client", is_flag=True, help="Only the plugin's version (no cluster needed).")
@kube_options(all_namespaces=False, formats=("table", "json", "yaml"))
def version_command(client, opts):
    """Print the plugin version, the Kubernetes server version and the Dynamo operator version."""
    render(run_version(opts, client), opts.output, format_version)


def format_version(r: dict, wide: bool, color: bool) -> str:
    lines = [f"Client Version: {r['clientVersion']}"]
    if "serverVersion" in r:
        lines.append(f"Server Version: {r['serverVersion']}")
        op = r.get("dynamoOperator")
        if op is None:
            lines.append("Dynamo Operator: not found (looked for a Deployment labelled "
                         "app.kubernetes.io/name=dynamo-operator,control-plane=controller-manager)")
        elif op.get("error"):
            lines.append(f"Dynamo Operator: unknown ({op['error']})")
        else:
            lines.append(f"Dynamo Operator Version: {op['version']} ({op['namespace']}/{op['name']})")
    return "\n".join(lines)


COMMANDS = [version_command]
