"""``kubectl dynamo collect``: a support bundle (objects, events, describes, every rank's logs) that
``doctor --from`` reads offline. Read-only; Secret values are never collected."""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import emit, kube_options, lazy_complete


@click.command("collect")
@click.argument("name", required=False, metavar="DGD", shell_complete=lazy_complete("complete_dgd"))
@click.option("-o", "--output", "bundle", metavar="BUNDLE.tar.gz", required=True,
              help="Where to write the bundle (.tar.gz).")
@click.option("--force", is_flag=True, help="Overwrite an existing bundle.")
@click.option("--log-bytes", type=click.IntRange(1), default=4 * 1024 * 1024, show_default=True,
              help="At most this many bytes of each container's log (current and previous each).")
@click.option("--log-lines", type=click.IntRange(1), default=20000, show_default=True,
              help="At most the last N lines of each container's log.")
@click.option("--controller-log-bytes", type=click.IntRange(1), default=2 * 1024 * 1024, show_default=True,
              help="At most this many bytes of each operator/controller container's log.")
@kube_options(formats=False)
def collect_command(name, bundle, force, log_bytes, log_lines, controller_log_bytes, opts):
    """Everything someone needs to help with a DGD, in one .tar.gz.

    \b
      kubectl dynamo collect my-dgd -n dynamo -o bundle.tar.gz
      kubectl dynamo collect -A -o bundle.tar.gz
      kubectl dynamo doctor --from bundle.tar.gz       # the same checks, offline

    The bundle holds the cluster's objects in the snapshot format (docs/snapshot-format.md:
    DGDs, workload, orchestrator and scheduler objects, events, CRD versions, the operator's
    config), a describe of each pod, every rank's logs (current and previous, bounded), the
    operator's and controllers' logs (bounded), detect and doctor JSON, and collect.json: what
    was collected and what was forbidden. Secrets keep their key names only, never a value.
    """
    from kubectl_dynamo.commands.collect import Limits, run_collect

    limits = Limits(log_bytes=log_bytes, log_lines=log_lines, controller_log_bytes=controller_log_bytes)
    emit(opts, run_collect(opts.cluster(), opts.env, name=name, all_namespaces=opts.all_namespaces, output=bundle,
                           force=force, limits=limits))


COMMANDS = [collect_command]
