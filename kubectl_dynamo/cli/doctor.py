"""``kubectl dynamo doctor``: diagnose the cluster and every multinode group. Read-only."""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import emit, kube_options
from kubectl_dynamo.findings.catalogue import SEVERITIES


@click.command("doctor")
@click.argument("name", required=False, metavar="[DGD]")
@click.option("--min-severity", type=click.Choice(list(SEVERITIES)), default="error", show_default=True,
              help="Exit 1 when a finding is at or above this severity; the table shows only those.")
@click.option("--only", metavar="CODE,...", help="Run only these checks (codes in docs/checks.md).")
@click.option("--exec", "exec_checks", is_flag=True,
              help="Also run read-only commands in pods: `ray status` on Ray leaders, a port-2222 probe on "
                   "TRT-LLM workers (needs pods/exec).")
@click.option("--exec-timeout", type=float, default=20.0, show_default=True, metavar="SECONDS",
              help="Timeout of each --exec command.")
@click.option("--from", "from_path", metavar="PATH",
              help="Diagnose a `collect` bundle (.tar.gz) or a snapshot directory instead of the cluster "
                   "(docs/snapshot-format.md).")
@kube_options()
def doctor_command(name, min_severity, only, exec_checks, exec_timeout, from_path, opts):
    """Diagnose the cluster and every multinode DynamoGraphDeployment.

    \b
      kubectl dynamo doctor -A                  # every DGD in every namespace
      kubectl dynamo doctor my-dgd -n dynamo    # one DGD
      kubectl dynamo doctor -A -o json --min-severity warning
      kubectl dynamo doctor -A --from bundle.tar.gz   # offline, on what `collect` saved

    Read-only: never creates, patches or deletes; secrets are read by name and only their key
    names are kept. Exit 1 when a finding is at or above --min-severity.
    """
    from kubectl_dynamo.cluster.recorded import RecordedCluster
    from kubectl_dynamo.errors import UsageError
    from kubectl_dynamo.model.views import run_doctor

    if from_path and exec_checks:
        raise UsageError("--exec runs commands in live pods: it cannot be combined with --from")
    cluster = RecordedCluster(from_path, opts.target.namespace) if from_path else opts.cluster()
    codes = [c.strip() for c in only.split(",") if c.strip()] if only else None
    emit(opts, run_doctor(cluster, all_namespaces=opts.all_namespaces, name=name, only=codes,
                          exec_checks=exec_checks, exec_timeout=exec_timeout, min_severity=min_severity))


COMMANDS = [doctor_command]
