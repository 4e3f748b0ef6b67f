"""``kubectl dynamo placement``: GPU nodes, who holds their GPUs, what is free and which gang waits."""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import emit, kube_options


@click.command("placement")
@kube_options(all_namespaces=False)
def placement_command(opts):
    """Every GPU node: allocatable, used by which DGD / component / group / rank, free, and the pending gangs.

    \b
      kubectl dynamo placement            # one row per GPU node, then the pending gangs and what they wait for
      kubectl dynamo placement -o wide    # with each pod's rank
      kubectl dynamo placement -o json    # the contract: data/schemas/placement.json

    Free GPUs are counted on schedulable nodes (Ready, not cordoned); stranded are free GPUs on nodes
    where no pending pod fits. A pending gang is a DGD group with pods not yet bound; "fits now" places
    its pods first-fit on the free GPUs (node selectors and taints are not modelled).
    """
    from kubectl_dynamo.commands.placement import run_placement

    emit(opts, run_placement(opts.cluster()))


COMMANDS = [placement_command]
