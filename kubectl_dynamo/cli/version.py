"""``kubectl dynamo version``: the plugin's version and, unless --client, the server's."""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import emit, kube_options


@click.command("version")
@click.option("--client", is_flag=True, help="Only the plugin's version (no cluster needed).")
@kube_options(all_namespaces=False)
def version_command(client, opts):
    """Print the plugin version, the Kubernetes server version and the Dynamo operator version."""
    from kubectl_dynamo.commands.version import run_version

    emit(opts, run_version(None if client else opts.cluster()))


COMMANDS = [version_command]
