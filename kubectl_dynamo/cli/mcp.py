"""``kubectl dynamo mcp``: serve the read-only commands to agents over the Model Context Protocol."""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import _duration

INSTALL_HINT = "install the extra kubectl-dynamo[mcp]: pip install 'kubectl-dynamo[mcp]' (pipx: pipx inject kubectl-dynamo 'mcp>=2.3,<3')"


@click.command("mcp")
@click.option("--kubeconfig", metavar="PATH", help="Path to the kubeconfig file (default: $KUBECONFIG, then "
              "~/.kube/config); every tool call uses it.")
@click.option("--context", metavar="NAME", help="The kubeconfig context every tool call uses (default: the current one).")
@click.option("--request-timeout", metavar="DURATION", default="10s", show_default=True, callback=_duration,
              help='Per-request timeout of each call, e.g. 30s, 2m; "0" waits forever.')
@click.option("--http", "port", type=click.IntRange(min=1, max=65535), metavar="PORT",
              help="Serve streamable HTTP on 127.0.0.1:PORT (path /mcp) instead of stdio.")
@click.option("-v", "--verbose", is_flag=True, help="Show details of errors.")
def mcp_command(kubeconfig, context, request_timeout, port, verbose):
    """Serve the read-only commands to agents over the Model Context Protocol (stdio).

    \b
      kubectl dynamo mcp                         # stdio: an MCP client starts it (docs/mcp.md)
      kubectl dynamo mcp --context prod          # every call reads this context, nothing wider
      kubectl dynamo mcp --http 8765             # streamable HTTP on 127.0.0.1:8765/mcp

    Tools: detect, explain, get, tree, doctor, logs (bounded), placement, rollout_status,
    rollout_history, upgrade and generate (both print); each returns its command's -o json with
    the command's JSON Schema as output schema. Resources: the findings catalogue, the DGD field
    docs, the schemas. Nothing writes to the cluster (install is not a tool). Needs the extra
    kubectl-dynamo[mcp].
    """
    import importlib.util

    from kubectl_dynamo.errors import UsageError

    if importlib.util.find_spec("mcp") is None:
        raise UsageError(f"kubectl dynamo mcp needs the MCP SDK; {INSTALL_HINT}")
    from kubectl_dynamo.cli import invoke
    from kubectl_dynamo.mcpserver import server

    connection = [*(["--kubeconfig", kubeconfig] if kubeconfig else []), *(["--context", context] if context else []),
                  "--request-timeout", request_timeout]
    if port:
        server.serve_http(invoke, connection, port)
    else:
        server.serve_stdio(invoke, connection)


COMMANDS = [mcp_command]
