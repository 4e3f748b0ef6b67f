"""``kubectl dynamo collect``: a support bundle of the asked scope (objects, events, describes, logs) that
``doctor --from`` reads offline. Read-only on the cluster; Secret values are never collected, env values and
token shapes are redacted."""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import emit, kube_options, lazy_complete


@click.command("collect")
@click.argument("name", required=False, metavar="DGD", shell_complete=lazy_complete("complete_dgd"))
@click.option("-o", "--output", "bundle", metavar="BUNDLE.tar.gz", help="Where to write the bundle (.tar.gz).")
@click.option("--scope", type=click.Choice(["dgd", "namespace", "cluster"]),
              help="What to collect: the DGD named (default), its whole namespace, or every namespace (-A).")
@click.option("--dry-run", is_flag=True, help="List what would be collected; write nothing.")
@click.option("--include-env", is_flag=True, help="Keep env values in the bundle (redacted by default).")
@click.option("--anonymize", is_flag=True, help="Replace namespaces, names, node names and IPs with stable "
              "pseudonyms; the mapping is written beside the bundle (BUNDLE.names.json), never in it.")
@click.option("--mapping", metavar="PATH", help="Where --anonymize writes the mapping (default BUNDLE.names.json).")
@click.option("--force", is_flag=True, help="Overwrite an existing bundle.")
@click.option("--log-bytes", type=click.IntRange(1), default=4 * 1024 * 1024, show_default=True,
              help="At most this many bytes of each container's log (current and previous each).")
@click.option("--log-lines", type=click.IntRange(1), default=20000, show_default=True,
              help="At most the last N lines of each container's log.")
@click.option("--controller-log-bytes", type=click.IntRange(1), default=2 * 1024 * 1024, show_default=True,
              help="At most this many bytes of each operator/controller container's log.")
@click.option("--controller-log-lines", type=click.IntRange(1), default=5000, show_default=True,
              help="At most the last N lines of each operator/controller container's log (before keeping only "
                   "the lines about the scope).")
@click.option("--max-bytes", type=click.IntRange(1), default=256 * 1024 * 1024, show_default=True,
              help="At most this many bytes in the whole bundle (before compression); further logs are left out "
                   "and listed.")
@click.option("--max-pods", type=click.IntRange(0), default=100, show_default=True,
              help="Fetch the logs of at most N pods of the scope (the DGDs' pods first).")
@kube_options(formats=False)
def collect_command(name, bundle, scope, dry_run, include_env, anonymize, mapping, force, log_bytes, log_lines,
                    controller_log_bytes, controller_log_lines, max_bytes, max_pods, opts):
    """A support bundle of one DGD (or a namespace, or the cluster), safe to send: one .tar.gz.

    \b
      kubectl dynamo collect my-dgd -n dynamo -o bundle.tar.gz
      kubectl dynamo collect my-dgd -n dynamo --dry-run              # what it would hold
      kubectl dynamo collect my-dgd -n dynamo -o b.tar.gz --anonymize
      kubectl dynamo collect --scope namespace -n dynamo -o ns.tar.gz
      kubectl dynamo collect -A -o cluster.tar.gz
      kubectl dynamo doctor --from bundle.tar.gz --list   # its scope, versions, counts, files
      kubectl dynamo doctor --from bundle.tar.gz          # the same checks, offline

    The scope is what was asked: a DGD's bundle holds the DGD, its lineage (DynamoComponentDeployments,
    PodCliqueSet/PodCliques/PodGangs or LeaderWorkerSets/StatefulSets, PodGroups and their queues), its pods,
    their logs and events, what they reference (Services, ConfigMaps, ServiceAccounts, claims with their
    volumes and StorageClasses, Jobs mounting the same claims, Secrets by key names only), the nodes its pods
    sit on or could sit on, the controllers' versions and status and their log lines about it, and CRD versions.
    Env values, credential-looking annotations and arguments, and token-shaped strings (in clear or base64)
    are redacted. manifest.json lists every file with its sha256 and what was redacted.
    """
    from kubectl_dynamo.commands.collect import Limits, run_collect

    limits = Limits(log_bytes=log_bytes, log_lines=log_lines, controller_log_bytes=controller_log_bytes,
                    controller_log_lines=controller_log_lines, max_bytes=max_bytes, max_pods=max_pods)
    emit(opts, run_collect(opts.cluster(), opts.env, name=name, all_namespaces=opts.all_namespaces, output=bundle,
                           force=force, limits=limits, scope=scope, include_env=include_env, anonymize=anonymize,
                           mapping=mapping, dry_run=dry_run))


COMMANDS = [collect_command]
