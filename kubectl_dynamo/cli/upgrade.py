"""``kubectl dynamo upgrade dgd``: v1alpha1 -> v1beta1 without losing a field or a comment.

Input is ``-f FILE`` (multi-document; other kinds pass through untouched) or a live DGD by NAME.
Output is the manifest on stdout, a unified diff (``--diff``), or the file rewritten in place
(``--write``: the diff first on stderr, then FILE.bak and an atomic replace).
"""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import DGD_ALIASES as KINDS
from kubectl_dynamo.cli.options import DRY_RUN, emit, kube_options, lazy_complete, operator_version
from kubectl_dynamo.errors import UsageError


@click.command("upgrade")
@click.argument("kind", metavar="dgd", type=click.Choice(KINDS, case_sensitive=False))
@click.argument("name", required=False, shell_complete=lazy_complete("complete_dgd"))
@click.option("-f", "--filename", "filenames", metavar="FILE|DIR", multiple=True,
              help="Manifest files, repeatable (multi-document; a directory: its *.yaml, *.yml, *.json; '-' = stdin).")
@click.option("-R", "--recursive", is_flag=True, help="With -f DIR: also the directories under it (as kubectl).")
@click.option("--write", is_flag=True, help="Rewrite FILE in place (after showing the diff on stderr); keeps FILE.bak.")
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff instead of the manifest.")
@click.option("--strict", is_flag=True, help="Refuse (exit 1, nothing written) a field without a v1beta1 home instead "
              "of keeping it in the nvidia.com/dgd-spec annotation as the operator's conversion does.")
@click.option("--topology-aliases", is_flag=True, help="Replace GROVE_*/LWS_* leader and rank references with "
              "$(DYNAMO_LEADER_ADDRESS) / $(DYNAMO_RANK).")
@click.option("--role-templates", is_flag=True, help="Turn multinode components into 1.6 leader/worker templates.")
@click.option("--orchestrator", type=click.Choice(["grove", "lws"]), default=None,
              help="Provider for TRT-LLM role templates' worker addresses (default: from nvidia.com/enable-grove).")
@click.option("--operator-version", default=None, metavar="VERSION", callback=operator_version, help="Target operator version (default 1.6.0).")
@click.option("--dry-run", type=click.Choice(DRY_RUN), default="none", show_default=True,
              help="server: send every upgraded DGD to the cluster as a server-side dry run.")
@kube_options(all_namespaces=False, default_format="yaml")
def upgrade_command(kind, name, filenames, recursive, write, show_diff, strict, topology_aliases, role_templates, orchestrator,
                    operator_version, dry_run, opts):
    """Upgrade DynamoGraphDeployments from nvidia.com/v1alpha1 to nvidia.com/v1beta1.

    \b
    Comments, key order and quoting are kept; documents that are not DGDs pass through
    byte for byte. A field without a v1beta1 home is kept where the operator's own conversion
    keeps it (the nvidia.com/dgd-spec annotation), with a warning naming its path; --strict
    refuses it instead (nothing is written).

    \b
    Examples:
      kubectl dynamo upgrade dgd -f deploy.yaml > deploy.v1beta1.yaml
      kubectl dynamo upgrade dgd -f deploy.yaml --diff --topology-aliases
      kubectl dynamo upgrade dgd -f deploy.yaml --write --strict
      kubectl dynamo upgrade dgd -f manifests/ -R --write   # every manifest under a directory
      kubectl dynamo upgrade dgd my-dgd -n dynamo

    \b
    Exit codes: 0 ok (also: already v1beta1), 1 a field cannot be converted (--strict) or the server
    rejected the dry run, 2 usage or unreadable input, 3 cluster unreachable.
    """
    from kubectl_dynamo.commands.upgrade import Options as UpgradeOptions
    from kubectl_dynamo.operator import versions

    if bool(name) == bool(filenames):
        raise UsageError("give either NAME (a live DGD) or -f FILE")
    if write and (not filenames or "-" in filenames):
        raise UsageError("--write needs -f FILE (a file to rewrite in place)")
    if write and show_diff:
        raise UsageError("--write already shows the diff (on stderr); drop --diff")
    operator_version = operator_version or versions.NEWEST
    if not versions.is_valid(operator_version):
        raise UsageError(f"--operator-version {operator_version!r} is not a version such as 1.6.0")
    uopts = UpgradeOptions(strict=strict, topology_aliases=topology_aliases, role_templates=role_templates,
                           orchestrator=orchestrator, operator_version=operator_version)

    from kubectl_dynamo.commands.upgrade import run_upgrade

    dry_run_cluster = opts.cluster() if dry_run == "server" else None
    if filenames:
        from kubectl_dynamo.commands.upgrade import combine
        from kubectl_dynamo.inputs.manifests import NoDgd, expand_filenames, read_text

        files = expand_filenames(filenames, recursive)
        texts = [read_text(f, opts.env.stdin) for f in files]  # every file is read before any is written
        results = []
        for f, t in zip(files, texts):
            try:
                results.append(run_upgrade(uopts, filename=f, text=t, fmt=opts.output, write=write,
                                           show_diff=show_diff, dry_run_cluster=dry_run_cluster))
            except NoDgd:  # as explain: a file without one is skipped, input without any is an error
                continue
        if not results:
            raise NoDgd(files)
        result = combine(results)
    else:
        cluster = dry_run_cluster or opts.cluster()
        live = (cluster, name, opts.target.namespace or cluster.namespace)
        result = run_upgrade(uopts, live=live, fmt=opts.output, show_diff=show_diff, dry_run_cluster=dry_run_cluster)
    emit(opts, result)


COMMANDS = [upgrade_command]
