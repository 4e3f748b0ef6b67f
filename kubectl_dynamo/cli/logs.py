"""``kubectl dynamo logs``: a DGD's ranks' logs interleaved, prefixed component/group/rank(role). Read-only."""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import Duration, finish, kube_options, lazy_complete


@click.command("logs")
@click.argument("name", metavar="DGD", shell_complete=lazy_complete("complete_dgd"))
@click.option("--component", metavar="NAME", help="Only this component (e.g. decode).")
@click.option("--group", type=int, metavar="N", help="Only this group (replica index of a multinode component).")
@click.option("--role", type=click.Choice(["leader", "worker", "main"]), help="Only leaders, workers, or single-node pods.")
@click.option("--rank", type=int, metavar="N", help="Only this rank (0 = the leader).")
@click.option("-c", "--container", metavar="NAME", help="This container instead of each pod's main container.")
@click.option("--init-containers", is_flag=True, help="Also the init containers (printed before their pod's lines).")
@click.option("-f", "--follow", is_flag=True,
              help="Stream new lines; containers that restart and pods that are recreated are picked up.")
@click.option("-p", "--previous", is_flag=True, help="The previous instance of each container (after a restart).")
@click.option("--since", type=Duration(), metavar="DURATION", help="Only lines newer than this, e.g. 10m.")
@click.option("--tail", type=int, default=-1, show_default=True, metavar="N",
              help="The last N lines of each container (-1: all).")
@click.option("--timestamps", is_flag=True, help="Show each line's RFC 3339 timestamp.")
@click.option("--prefix/--no-prefix", default=True, show_default=True, help="Prefix lines with component/group/rank(role).")
@kube_options(all_namespaces=False, formats=False)
def logs_command(name, component, group, role, rank, container, init_containers, follow, previous, since, tail,
                 timestamps, prefix, opts):
    """The logs of a DGD's pods, interleaved, each line prefixed with its rank.

    \b
      kubectl dynamo logs my-dgd -n dynamo                      # every rank, merged by time
      kubectl dynamo logs my-dgd --component decode --rank 1    # one worker
      kubectl dynamo logs my-dgd --role leader -f --since 5m    # follow the leaders

    Without -f lines are merged in timestamp order; with -f they are printed as they arrive.
    Colour per rank on a terminal (never with NO_COLOR or TERM=dumb). Exit 1 when a stream could not be read.
    """
    from kubectl_dynamo.commands.logs import Filters, LogOptions, run_logs

    flt = Filters(component, group, role, rank, container, init_containers)
    finish(run_logs(opts.cluster(), opts.env, name, flt,
                    LogOptions(follow=follow, previous=previous, since=since, tail=tail, timestamps=timestamps,
                               prefix=prefix)))


COMMANDS = [logs_command]
