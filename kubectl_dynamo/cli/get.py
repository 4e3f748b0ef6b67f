"""``kubectl dynamo get [dgd] [NAME]``: DGDs with their groups, ranks, restarts, Ready condition and top finding."""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import Duration, emit, finish, kube_options, lazy_complete, without_kind


@click.command("get")
@click.argument("args", nargs=-1, metavar="[dgd] [NAME]", shell_complete=lazy_complete("complete_get_args"))
@click.option("-w", "--watch", is_flag=True, help="After the table, print a row again whenever it changes (Ctrl-C ends).")
@click.option("--watch-timeout", type=Duration(), metavar="DURATION", help="With -w: stop after DURATION.")
@kube_options()
def get_command(args, watch, watch_timeout, opts):
    """One row per DynamoGraphDeployment; with a NAME, one row per component and group.

    \b
      kubectl dynamo get -A                  # every DGD: groups ready/desired, ranks, restarts, Ready, finding
      kubectl dynamo get dgd my-dgd -n dynamo -o wide
      kubectl dynamo get -n dynamo -w        # follow changes (one WATCH per kind)

    Columns: GROUPS ready/desired (a group is ready when every rank's pod is), RANKS present/desired,
    READY the DGD's Ready condition and reason, FINDING the most severe doctor finding.
    """
    from kubectl_dynamo.errors import UsageError

    words = without_kind(args)
    if len(words) > 1:
        raise UsageError(f"get takes one DGD name at most, got: {' '.join(words)}")
    name = words[0] if words else None
    if watch:
        if opts.output not in ("table", "wide"):
            raise UsageError("-w prints rows: use -o table or -o wide")
        from kubectl_dynamo.commands.get import watch_get

        finish(watch_get(opts.cluster(), opts.env, all_namespaces=opts.all_namespaces, name=name,
                         wide=opts.output == "wide", timeout=watch_timeout))
        return
    from kubectl_dynamo.commands.get import run_get

    emit(opts, run_get(opts.cluster(), opts.env, all_namespaces=opts.all_namespaces, name=name))


COMMANDS = [get_command]
