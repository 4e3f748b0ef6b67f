"""``kubectl dynamo explain dgd``: what the operator renders, offline or live, and field docs."""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import (
    DGD_ALIASES,
    collector_paused,
    emit,
    kube_options,
    lazy_complete,
    operator_version,
)
from kubectl_dynamo.errors import UsageError


@click.command("explain")
@click.argument("target", metavar="dgd[.FIELD.PATH]")
@click.argument("name", required=False, shell_complete=lazy_complete("complete_dgd"))
@click.option("-f", "--filename", "filenames", metavar="FILE|DIR", multiple=True,
              help="Manifests to explain offline, repeatable: a file, a directory (its *.yaml, *.yml, *.json) "
                   "or '-' for stdin.")
@click.option("--orchestrator", type=click.Choice(["grove", "lws"]),
              help="Offline: assume this orchestrator (default: Grove unless the DGD sets "
                   'nvidia.com/enable-grove: "false", then LWS).')
@click.option("--operator-version", metavar="X.Y.Z", callback=operator_version,
              help="The operator that creates the DGD (default: the cluster's when live, else the newest modelled).")
@click.option("--objects", is_flag=True, help="Also the objects the operator creates (PodCliqueSet, LeaderWorkerSets, "
              "Deployments) in Kubernetes shape: -o yaml prints them, -o json adds objects and related.")
@click.option("--diff", "changes", is_flag=True, help="Show per role what the operator changes in your pod template "
              "(flags inserted, env added, probes removed or replaced, mounts, volumes, command wrapped).")
@click.option("-R", "--recursive", is_flag=True, help="With -f DIR: also the directories under it (as kubectl). "
              "Field docs: list the whole subtree.")
@click.option("--api-version", "api_version", type=click.Choice(["v1beta1", "v1alpha1"]), default="v1beta1",
              show_default=True, help="Field docs: the DGD API version to document.")
@click.option("--cluster-schema", is_flag=True, help="Field docs: read the CRD from the cluster instead of the bundled one.")
@kube_options(all_namespaces=False, junit=True)
@collector_paused()  # bounded input (expand_filenames), or one live DGD
def explain_command(target, name, filenames, orchestrator, operator_version, objects, changes, recursive, api_version,
                    cluster_schema, opts):
    """Show exactly what the Dynamo operator renders for a DynamoGraphDeployment.

    \b
      kubectl dynamo explain dgd -f deploy.yaml           # offline, every DGD in the file
      kubectl dynamo explain dgd -f a.yaml -f deploy/ -R  # several files, a directory tree
      kubectl dynamo explain dgd my-dgd -n dynamo          # a live DGD with the cluster's gates
      kubectl dynamo explain dgd -f deploy.yaml -o yaml --objects   # the PodCliqueSet / LWS / Deployments
      kubectl dynamo explain dgd -f deploy.yaml --diff     # what the operator changes in each role
      kubectl dynamo explain dgd.spec.components.multinode # field documentation
      kubectl dynamo explain dgd.spec --recursive

    The worker hash (env DYN_NAMESPACE_WORKER_SUFFIX, worker DCD names) is computed as the
    operator does; a live DGD shows the one the operator stored.

    Exit 1 when a finding is an error (the operator would fail or mis-render), 2 for
    unreadable input, 3 when the cluster is unreachable.
    """
    from kubectl_dynamo.commands import explain as core

    resource, _, path = target.partition(".")
    if resource.lower() not in DGD_ALIASES and target.lower() not in DGD_ALIASES:
        raise UsageError(f'unknown resource "{resource}": only dgd (dynamographdeployments.nvidia.com) is explained')
    if path and target.lower() not in DGD_ALIASES:
        openapi = None
        if cluster_schema:
            from kubectl_dynamo.cluster.live import dgd_openapi_schema

            openapi = dgd_openapi_schema(opts.cluster(), api_version)
        emit(opts, core.run_field_docs(path.split("."), api_version, recursive, openapi=openapi))
        return
    if filenames and name:
        raise UsageError("give either NAME (a live DGD) or -f FILE, not both")
    if filenames:
        from kubectl_dynamo.inputs.manifests import expand_filenames, load

        sources = [(f, load(f, opts.env.stdin)) for f in expand_filenames(filenames, recursive)]
        result = core.run_files(sources, orchestrator=orchestrator, operator_version=operator_version,
                                objects=objects, changes=changes)
    elif name:
        result = core.run_live(opts.cluster(), name, orchestrator=orchestrator, operator_version=operator_version,
                               objects=objects, changes=changes)
    else:
        raise UsageError("explain dgd needs NAME (a live DGD) or -f FILE, or a field path such as dgd.spec")
    emit(opts, result)


COMMANDS = [explain_command]
