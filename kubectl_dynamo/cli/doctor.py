"""``kubectl dynamo doctor``: diagnose the cluster and every multinode group. Read-only."""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import Duration, emit, kube_options, lazy_complete
from kubectl_dynamo.findings.catalogue import SEVERITIES


@click.command("doctor")
@click.argument("name", required=False, metavar="[DGD]", shell_complete=lazy_complete("complete_dgd"))
@click.option("--min-severity", type=click.Choice(list(SEVERITIES)), default="error", show_default=True,
              help="Exit 1 when a finding is at or above this severity; the table shows only those.")
@click.option("--only", metavar="CODE,...", shell_complete=lazy_complete("complete_codes"), help="Run only these checks (doctor --explain all lists the codes).")
@click.option("--exec", "exec_checks", is_flag=True,
              help="Also run read-only commands in pods: `ray status` on Ray leaders, a port-2222 probe on "
                   "TRT-LLM workers (needs pods/exec).")
@click.option("--exec-timeout", type=Duration(), default="20s", show_default=True, metavar="DURATION",
              help="Timeout of each --exec command, e.g. 20s, 1m (a bare number is seconds).")
@click.option("--from", "from_path", metavar="PATH",
              help="Diagnose a `collect` bundle (.tar.gz) or a snapshot directory instead of the cluster "
                   "(docs/snapshot-format.md).")
@click.option("--list", "list_bundle", is_flag=True,
              help="With --from: what the bundle holds (scope, versions, counts, redaction, caps, every file with "
                   "its checksum checked) instead of diagnosing it.")
@click.option("--skip", "skip", metavar="CODE", multiple=True, shell_complete=lazy_complete("complete_codes"),
              help="Leave out the findings of this check (repeatable); JSON lists them under skipped.")
@click.option("--ignore-file", metavar="PATH", help="Accepted findings, one per line: CODE, or CODE namespace/name "
              "for one object or DGD; # comments (default: .kubectl-dynamo-ignore in the current directory, if any).")
@click.option("--since", "since_path", metavar="FILE", help="Report only what changed since FILE, a previous "
              "`doctor -o json` ('-': stdin): the new findings, and those resolved (findings are matched by id). "
              "Exit 1 only for a new finding at or above --min-severity.")
@click.option("--explain", "explain_code", metavar="CODE", shell_complete=lazy_complete("complete_codes"),
              help="Print what a check code means (severity, what, why, fix, refs) and exit; "
                   "'all' prints the whole catalogue. Offline.")
@kube_options(junit=True)
def doctor_command(name, min_severity, only, exec_checks, exec_timeout, from_path, list_bundle, skip, ignore_file,
                   since_path, explain_code, opts):
    """Diagnose the cluster and every multinode DynamoGraphDeployment.

    \b
      kubectl dynamo doctor -A                  # every DGD in every namespace
      kubectl dynamo doctor my-dgd -n dynamo    # one DGD
      kubectl dynamo doctor -A -o json --min-severity warning
      kubectl dynamo doctor --from bundle.tar.gz      # offline, on what `collect` saved (its scope)
      kubectl dynamo doctor --from bundle.tar.gz --list   # what the bundle holds
      kubectl dynamo doctor --explain kai-queue-missing   # what a code means and how to fix it
      kubectl dynamo doctor -A --skip group-on-one-node -o junit > doctor.xml   # for CI
      kubectl dynamo doctor -A -o json > before.json; kubectl dynamo doctor -A --since before.json

    Read-only: never creates, patches or deletes; secrets are read by name and only their key
    names are kept. Exit 1 when a finding is at or above --min-severity.
    """
    if explain_code is not None:
        from kubectl_dynamo.commands.doctor import run_explain_code

        emit(opts, run_explain_code(explain_code.strip()))
        return
    from kubectl_dynamo.cluster.recorded import RecordedCluster
    from kubectl_dynamo.commands.doctor import run_doctor, unknown_codes
    from kubectl_dynamo.errors import UsageError

    if from_path and exec_checks:
        raise UsageError("--exec runs commands in live pods: it cannot be combined with --from")
    codes = [c.strip() for c in only.split(",") if c.strip()] if only else None
    if codes:
        unknown_codes(codes, "--only")  # before connecting: a typo is a usage error, not a cluster one
    from kubectl_dynamo.inputs.ignore import ignore_rules, skip_rules

    rules = skip_rules(skip) + ignore_rules(ignore_file)
    for rule in rules:
        unknown_codes([rule.code], rule.source)
    if list_bundle and not from_path:
        raise UsageError("--list lists a bundle: it needs --from BUNDLE")
    since = None
    if since_path:
        from kubectl_dynamo.commands.doctor import previous_findings

        since = (since_path, previous_findings(since_path, opts.env.stdin))  # before connecting: bad input is exit 2
    cluster = RecordedCluster(from_path, opts.target.namespace) if from_path else opts.cluster()
    if from_path:
        from kubectl_dynamo.commands import bundle

        if list_bundle:
            emit(opts, bundle.run_list(cluster))
            return
        bundle.collect_format(cluster)  # refuses a bundle of a newer format, with the reason
        # a bundle of one DGD or namespace diagnoses that and nothing else; asking for more is a usage error
        bundle.check_asked(cluster, name, opts.target.namespace)
    # A bundle answers for the scope it was collected in: one of all namespaces is read whole unless -n
    # (or a DGD name, which needs one) narrows it; a one-namespace bundle defaults to its namespace.
    whole = bool(from_path) and cluster.scope is None and not opts.target.namespace and not name
    result = run_doctor(cluster, all_namespaces=opts.all_namespaces or whole, name=name, only=codes,
                        exec_checks=exec_checks, exec_timeout=exec_timeout, min_severity=min_severity, ignore=rules,
                        since=since)
    if from_path:
        result.data["skipped"] += bundle.unjudged(cluster)  # what the bundle's scope did not collect
    emit(opts, result)


COMMANDS = [doctor_command]
