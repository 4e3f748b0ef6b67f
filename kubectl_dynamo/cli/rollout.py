"""``kubectl dynamo rollout status|history [dgd] NAME``: a DGD's rollout, as ``kubectl rollout`` shows a Deployment's."""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import Duration, emit, finish, kube_options, without_kind


def _name(args) -> str:
    from kubectl_dynamo.errors import UsageError

    words = without_kind(args)
    if len(words) != 1:
        raise UsageError("give one DGD: rollout status|history [dgd] NAME")
    return words[0]


@click.group("rollout")
def rollout_group():
    """Follow a DynamoGraphDeployment's rollout, or list its worker generations.

    \b
      kubectl dynamo rollout status my-dgd -n dynamo --timeout 10m   # CI: 0 when rolled out, 1 when stalled
      kubectl dynamo rollout status my-dgd --watch=false             # one look
      kubectl dynamo rollout history my-dgd                          # worker generations
      kubectl dynamo rollout history my-dgd --revision 2             # what changed into generation 2
    """


@rollout_group.command("status")
@click.argument("args", nargs=-1, metavar="[dgd] NAME")
@click.option("-w", "--watch", type=bool, default=True, show_default=True,
              help="Follow the rollout until it completes (--watch=false: one look).")
@click.option("--timeout", type=Duration(), default="0s", show_default=True, metavar="DURATION",
              help="Progress deadline: exit 1 with doctor's findings when nothing moved for this long (0: never).")
@kube_options(all_namespaces=False)
def status_command(args, watch, timeout, opts):
    """Wait for a DGD's rollout: every component's workloads updated, ready and available, every pod of
    the new worker generation Ready and no pod of an older one left.

    Exit codes: 0 rolled out; 1 not rolled out (--watch=false) or stalled past --timeout (with
    doctor's findings, the first rollout-stalled); 2 usage; 3 cluster.
    """
    name = _name(args)
    from kubectl_dynamo.commands import rollout

    if not watch:
        emit(opts, rollout.status_once(opts.cluster(), name))
        return
    if opts.output not in ("table", "wide", "json"):
        from kubectl_dynamo.errors import UsageError

        raise UsageError("rollout status prints lines: use -o table, or -o json for the final state")
    finish(rollout.follow(opts.cluster(), opts.env, name, timeout=timeout or None, json_out=opts.output == "json"))


@rollout_group.command("history")
@click.argument("args", nargs=-1, metavar="[dgd] NAME")
@click.option("--revision", type=click.IntRange(min=1), metavar="N",
              help="Show what changed between worker generation N-1 and N (explain --diff's entries and the DCD spec diff).")
@kube_options(all_namespaces=False)
def history_command(args, revision, opts):
    """List a DGD's worker generations: worker hash, when it appeared, its pods, its DCDs and workloads."""
    from kubectl_dynamo.commands import rollout

    emit(opts, rollout.history(opts.cluster(), _name(args), revision))


COMMANDS = [rollout_group]
