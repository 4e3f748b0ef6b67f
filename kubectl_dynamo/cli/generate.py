"""``kubectl dynamo generate dgd NAME``: a multinode DGD from sizing flags, checked before it is printed.

The manifest is built by ``kubectl_dynamo.commands.generate`` (pure), then judged the way ``explain`` judges
any DGD: the CRD schema, kubernetes-validate on every pod template, and the operator simulation
(no error findings). ``--dry-run=server`` also asks the API server.
"""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import DGD_ALIASES as KINDS
from kubectl_dynamo.cli.options import DRY_RUN, emit, kube_options, operator_version


def _opt_int(*names, help):
    return click.option(*names, type=click.IntRange(min=1), default=None, help=help)


@click.command("generate")
@click.argument("kind", metavar="dgd", type=click.Choice(KINDS, case_sensitive=False))
@click.argument("name")
@click.option("--backend", type=click.Choice(["vllm", "sglang", "trtllm"]), required=True, help="Inference engine.")
@click.option("--model", required=True, help="Model name or path passed to the engine.")
@click.option("--image", help="Runtime image (default: nvcr.io/nvidia/ai-dynamo/<backend>-runtime:<operator version>).")
@click.option("--nodes", type=click.IntRange(min=1), default=2, show_default=True,
              help="Nodes (pods) one engine spans; 1 = single-node.")
@click.option("--gpus-per-node", type=click.IntRange(min=1), default=8, show_default=True, help="GPUs per pod.")
@_opt_int("--tp", help="Tensor parallel size (default: nodes × GPUs per node / PP).")
@_opt_int("--pp", help="Pipeline parallel size (default 1).")
@_opt_int("--dp", help="Data parallel: engine replicas (does not count toward nodeCount).")
@click.option("--disaggregated", is_flag=True, help="Separate prefill and decode components, each sized on its own.")
@_opt_int("--prefill-nodes", help="Nodes per prefill engine (default --nodes).")
@_opt_int("--prefill-tp", help="Prefill TP (default nodes × GPUs / PP).")
@_opt_int("--prefill-dp", help="Prefill engine replicas (default --dp).")
@_opt_int("--decode-nodes", help="Nodes per decode engine (default --nodes).")
@_opt_int("--decode-tp", help="Decode TP (default nodes × GPUs / PP).")
@_opt_int("--decode-dp", help="Decode engine replicas (default --dp).")
@click.option("--frontend/--no-frontend", default=True, show_default=True, help="Add the OpenAI frontend component.")
@click.option("--orchestrator", type=click.Choice(["grove", "lws"]), default="grove", show_default=True,
              help='lws sets nvidia.com/enable-grove: "false".')
@click.option("--queue", help="KAI Scheduler queue (nvidia.com/kai-scheduler-queue; Grove only).")
@click.option("--role-templates", is_flag=True,
              help="1.6 leader/worker pod templates using $(DYNAMO_RANK) and $(DYNAMO_LEADER_ADDRESS).")
@click.option("--leader-node-selector", metavar="K=V[,K=V]", help="nodeSelector of the leader (role templates).")
@click.option("--worker-node-selector", metavar="K=V[,K=V]", help="nodeSelector of the workers (role templates).")
@click.option("--leader-image", help="Leader image (role templates; default --image).")
@click.option("--worker-image", help="Worker image (role templates; default --image).")
@click.option("--compilation-cache", metavar="PVC[:PATH]", help="compilationCache PVC and mount path (PATH required "
              "except for vllm).")
@click.option("--shared-memory", metavar="SIZE", help="sharedMemorySize of the engine pods, e.g. 16Gi.")
@click.option("--api-version", type=click.Choice(["nvidia.com/v1beta1", "nvidia.com/v1alpha1"]),
              default="nvidia.com/v1beta1", show_default=True, help="v1alpha1 for operators before v1beta1.")
@click.option("--operator-version", default=None, metavar="VERSION", callback=operator_version,
              help="Target Dynamo operator version (default: the newest modelled, 1.6.0).")
@click.option("--dry-run", type=click.Choice(DRY_RUN), default="none", show_default=True,
              help="server: also send it to the cluster as a server-side dry run.")
@click.option("--file", "file_path", metavar="PATH", help="Write the manifest to PATH instead of stdout.")
@click.option("--force", is_flag=True, help="Overwrite --file if it exists.")
@kube_options(all_namespaces=False, default_format="yaml")
def generate_command(kind, name, opts, dry_run, file_path, force, **kw):
    """Generate a DynamoGraphDeployment for one engine spanning several nodes.

    \b
    TP × PP must equal nodes × GPUs per node (one engine spans the nodes); --dp adds
    engine replicas. The result is checked against the DGD schema, kubernetes-validate
    and the operator simulation before it is printed.

    \b
    Examples:
      kubectl dynamo generate dgd llama --backend vllm --model meta-llama/Llama-3.1-70B \\
          --nodes 2 --gpus-per-node 8
      kubectl dynamo generate dgd ds --backend sglang --model deepseek-ai/DeepSeek-R1 \\
          --disaggregated --prefill-nodes 2 --decode-nodes 4 --role-templates
      kubectl dynamo generate dgd q --backend trtllm --model Qwen/Qwen3-8B --orchestrator lws \\
          --dry-run=server -n dynamo

    \b
    Exit codes: 0 ok, 1 invalid sizing/content or rejected by the server (the nearest
    valid choices are printed), 2 usage error or --file exists, 3 cluster unreachable.
    """
    from kubectl_dynamo.commands.generate import run_generate

    cluster = opts.cluster() if dry_run == "server" else None
    emit(opts, run_generate(name, kw, namespace=opts.target.namespace, fmt=opts.output, cluster=cluster,
                            file_path=file_path, force=force))


COMMANDS = [generate_command]
