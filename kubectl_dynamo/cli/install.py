"""``kubectl dynamo install --orchestrator grove|lws``: preflight, plan, confirm, run helm, verify.

The plan is ``kubectl_dynamo.commands.install.plan`` (pure); running it is ``kubectl_dynamo.commands.install``.
"""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import emit, kube_options
from kubectl_dynamo.commands.install import plan as ins


@click.command("install")
@click.option("--orchestrator", type=click.Choice(["grove", "lws"]), required=True,
              help="grove: Grove + KAI Scheduler (Option 1); lws: LeaderWorkerSet + Volcano (Option 2).")
@click.option("--separately", is_flag=True,
              help="grove only (production): install Grove and KAI from their own charts, create the KAI "
                   "queues, then the platform with them enabled. Default: the platform chart installs both.")
@click.option("--platform-version", "--release-version", "platform_version", metavar="V",
              help="Dynamo platform chart version (archive dynamo-platform-V.tgz).")
@click.option("--grove-version", metavar="V", help="Grove chart version (with --separately).")
@click.option("--kai-version", metavar="V", help="KAI Scheduler chart version (with --separately).")
@click.option("--volcano-version", metavar="V", help="Volcano chart version (lws).")
@click.option("--lws-version", metavar="V", help=f"LWS chart version (lws; >= {ins.LWS_MINIMUM}, "
                                                 f"{ins.LWS_DISAGGREGATED_SET} for DisaggregatedSet).")
@click.option("--chart-source", metavar="DIR",
              help="Use local chart archives DIR/<chart>-<version>.tgz instead of repositories and OCI "
                   "references (air-gapped clusters).")
@click.option("--values", "values", metavar="[COMPONENT=]FILE", multiple=True,
              help="A values file passed to helm (repeatable). Plain FILE goes to the main chart (the "
                   "platform for grove, LWS for lws); COMPONENT= is one of platform, grove, kai, volcano, lws.")
@click.option("--helm", "helm_path", metavar="PATH", help="The helm binary (default: helm on $PATH).")
@click.option("--upgrade", is_flag=True, help="Change components installed at another version or with other values.")
@click.option("--timeout", default="300s", show_default=True, metavar="DURATION",
              help="helm --wait --timeout for every chart.")
@click.option("--dry-run", is_flag=True, help="Print the preflight and the ordered plan; change nothing.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation (needed when stdin is not a terminal).")
@kube_options(all_namespaces=False,
              namespace_help="Namespace of the Dynamo platform release (default: dynamo-system).")
def install_command(orchestrator, separately, platform_version, grove_version, kai_version, volcano_version,
                    lws_version, chart_source, values, helm_path, upgrade, timeout, dry_run, yes, opts):
    """Install the multinode prerequisites with helm: Grove + KAI Scheduler (with the Dynamo
    platform chart) or LeaderWorkerSet + Volcano.

    \b
    Preflight first (cluster, Kubernetes version, helm, permissions, what is installed); then the
    ordered plan: the exact helm command lines and the objects the plugin creates. Components
    already installed at the wanted version are skipped; other versions change only with
    --upgrade. After the install, detect runs again and the command exits 0 only if a new
    multinode DGD would use the orchestrator asked for.

    \b
    -n/--namespace is the platform's namespace (default dynamo-system). Helm gets the same
    --kubeconfig and --context (as --kube-context).

    \b
    Exit codes: 0 done (or nothing to do), 1 blocked, a step failed or the outcome is not the
    one asked for, 2 bad input or no confirmation, 3 cluster unreachable, 130 interrupted.
    """
    from kubectl_dynamo.commands.install import build_request, run_install

    versions = {k: v for k, v in (("platform", platform_version), ("grove", grove_version),
                                  ("kai", kai_version), ("volcano", volcano_version),
                                  ("lws", lws_version)) if v}
    req = build_request(orchestrator, separately, versions, chart_source, values, upgrade, timeout, opts.target)
    machine = opts.output in ("json", "yaml")

    def confirm(question: str) -> bool:
        return click.confirm(question, default=False, err=machine)

    emit(opts, run_install(req, opts.env, opts.cluster, opts.target, fmt=opts.output, helm_path=helm_path,
                           dry_run=dry_run, yes=yes, confirm=confirm))


COMMANDS = [install_command]
