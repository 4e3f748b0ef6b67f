"""``kubectl dynamo tree DGD``: a DGD's lineage down to each rank's pod, with what the groups need. Read-only."""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import emit, kube_options, lazy_complete


@click.command("tree")
@click.argument("name", metavar="DGD", shell_complete=lazy_complete("complete_dgd"))
@kube_options(all_namespaces=False)
def tree_command(name, opts):
    """The lineage ownerReferences alone do not show, down to each rank's pod.

    \b
      Grove: DGD -> PodCliqueSet -> PodCliqueScalingGroup -> PodClique -> PodGang -> Pod
      LWS:   DGD -> DynamoComponentDeployment -> LeaderWorkerSet -> StatefulSet -> Pod
      kubectl dynamo tree my-dgd -n dynamo -o wide     # wide: how each link was found

    Each pod shows its component/group/rank(role), node and phase; then every Service,
    ConfigMap and Secret the groups need, present or missing (Secrets by name only).
    """
    from kubectl_dynamo.commands.tree import run_tree

    emit(opts, run_tree(opts.cluster(), name))


COMMANDS = [tree_command]
