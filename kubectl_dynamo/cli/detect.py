"""``kubectl dynamo detect``: what is installed and what Dynamo will pick for a multinode DGD."""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import emit, kube_options


@click.command("detect")
@kube_options(all_namespaces=False)
def detect_command(opts):
    """Show installed orchestrators, queues, the Dynamo operator, GPU nodes, and the
    orchestrator Dynamo will select for a new multinode DGD, with the reasons.

    Read-only. Exits 0 when the cluster answered (problems are listed, see `doctor`
    for a check that fails), 3 when it is unreachable or the credentials are refused.
    """
    from kubectl_dynamo.commands.detect import run_detect

    emit(opts, run_detect(opts.cluster()))


COMMANDS = [detect_command]
