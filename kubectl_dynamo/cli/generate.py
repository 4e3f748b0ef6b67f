"""``kubectl dynamo generate dgd NAME``: a multinode DGD from sizing flags, checked before it is printed.

The manifest is built by ``kubectl_dynamo.generate`` (pure), then judged the way ``explain`` judges
any DGD: the CRD schema, kubernetes-validate on every pod template, and the operator simulation
(no error findings). ``--dry-run=server`` also asks the API server.
"""

from __future__ import annotations

import click

from ..errors import InvalidContent, UsageError
from ..files import write_new_file
from ..output import grid, render, to_json, to_yaml
from .options import kube_options

KINDS = ("dgd", "dynamographdeployment", "dynamographdeployments")
DRY_RUN = ("none", "client", "server")
FORMATS = ("table", "json", "yaml")  # yaml is the default; table summarises the sizing


# ------------------------------------------------------------------------------ shared helpers

def server_dry_run(opts, doc: dict) -> str:
    """Send the DGD as a server-side dry run; return ``namespace/name (created|updated)``.

    A create is ``POST …/dynamographdeployments?dryRun=All``. When the object already exists (a
    live DGD being upgraded) the create answers AlreadyExists, so the dry run becomes a
    server-side apply of the manifest onto it, which is what ``kubectl apply`` would do.
    Rejections raise InvalidContent with the server's own message; unreachable/unauthorized keep
    their exit code.
    """
    import json

    from ..cluster.client import path_for
    from ..errors import DynamoError, NotFound

    cluster = opts.cluster()
    meta = doc.get("metadata") or {}
    name = meta.get("name")
    namespace = meta.get("namespace") or opts.target.namespace or cluster.namespace
    group, version = str(doc.get("apiVersion")).split("/", 1)
    body = json.loads(json.dumps(doc, default=str))  # ruamel trees -> plain JSON
    body.setdefault("metadata", {})["namespace"] = namespace
    # Strict like kubectl: an unknown field (e.g. roles on a pre-1.6 CRD) is an error, not a silent prune.
    params = {"dryRun": "All", "fieldValidation": "Strict"}

    def rejected(e: DynamoError):
        if getattr(e, "status", None) is None:
            raise e  # unreachable / unauthorized keep their own exit codes
        server = e.body.get("message") if isinstance(getattr(e, "body", None), dict) else None
        return InvalidContent(f"server dry run rejected {name}: {server or e.message}")

    try:
        cluster.request("POST", path_for(group, version, "dynamographdeployments", namespace), params=params,
                        body=body)
        return f"{namespace}/{name} (created)"
    except NotFound as e:
        raise InvalidContent(f"server dry run: {doc.get('apiVersion')} dynamographdeployments is not served by the "
                             f"cluster (is the Dynamo CRD installed?): {e.message}") from None
    except DynamoError as e:
        if getattr(e, "status", None) != 409:
            raise rejected(e) from None
    try:
        cluster.request("PATCH", path_for(group, version, "dynamographdeployments", namespace, name),
                        params={**params, "fieldManager": "kubectl-dynamo", "force": "true"},
                        body=json.dumps(body), content_type="application/apply-patch+yaml")
    except DynamoError as e:
        raise rejected(e) from None
    return f"{namespace}/{name} (updated)"


def check_generated(doc: dict, *, orchestrator: str, operator_version: str) -> None:
    """The judge: CRD schema, kubernetes-validate on every pod template, explain's error findings."""
    from ..generate import pod_templates
    from ..operator.render import explain_dgd
    from ..schema import pod_template_errors, schema_errors

    problems = [f"{e['path']}: {e['message']}" for e in schema_errors(doc)]
    for where, template in pod_templates(doc):
        problems += [f"{where}: {m}" for m in pod_template_errors(template)]
    report = explain_dgd(doc, orchestrator=orchestrator, operator_version=operator_version)
    problems += [f"{f['code']}: {f['message']}" for f in report["findings"] if f["severity"] == "error"]
    if problems:
        raise InvalidContent(f"the generated DGD does not validate: {problems[0]}", detail="\n".join(problems))


# ------------------------------------------------------------------------------ the command

def build_spec(name, kw, namespace):
    from .. import generate as gen

    gpus = kw["gpus_per_node"]
    if kw["disaggregated"]:
        engines = [
            gen.engine("prefill", kw["prefill_nodes"] or kw["nodes"], gpus, kw["prefill_tp"] or kw["tp"], kw["pp"],
                       kw["prefill_dp"] or kw["dp"]),
            gen.engine("decode", kw["decode_nodes"] or kw["nodes"], gpus, kw["decode_tp"] or kw["tp"], kw["pp"],
                       kw["decode_dp"] or kw["dp"]),
        ]
    else:
        used = [f"--{k.replace('_', '-')}" for k in ("prefill_nodes", "prefill_tp", "prefill_dp", "decode_nodes",
                                                      "decode_tp", "decode_dp") if kw[k] is not None]
        if used:
            raise UsageError(f"{', '.join(used)} need --disaggregated")
        engines = [gen.engine("worker", kw["nodes"], gpus, kw["tp"], kw["pp"], kw["dp"])]
    return gen.GenerateSpec(
        name=name, backend=kw["backend"], model=kw["model"], engines=engines, image=kw["image"], namespace=namespace,
        frontend=kw["frontend"], orchestrator=kw["orchestrator"], queue=kw["queue"],
        role_templates=kw["role_templates"],
        leader_node_selector=gen.parse_selector(kw["leader_node_selector"]),
        worker_node_selector=gen.parse_selector(kw["worker_node_selector"]),
        leader_image=kw["leader_image"], worker_image=kw["worker_image"],
        compilation_cache=gen.parse_cache(kw["compilation_cache"]), shared_memory=kw["shared_memory"],
        api_version=kw["api_version"], operator_version=kw["operator_version"],
    )


def run_generate(name: str, kw: dict, namespace=None):
    """(spec, doc) or a DynamoError; pure except for nothing (no cluster)."""
    from .. import generate as gen

    try:
        spec = build_spec(name, kw, namespace)
        doc = gen.build(spec)
    except gen.SpecError as e:
        if e.usage:
            raise UsageError(str(e)) from None
        text = str(e)
        if e.choices:
            text += "; nearest valid choices:\n" + "\n".join(f"  {c}" for c in e.choices)
        raise InvalidContent(text) from None
    check_generated(doc, orchestrator=spec.orchestrator, operator_version=spec.operator_version)
    return spec, doc


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
@click.option("--operator-version", default=None, metavar="VERSION",
              help="Target Dynamo operator version (default: the newest modelled, 1.6.0).")
@click.option("--dry-run", type=click.Choice(DRY_RUN), default="none", show_default=True,
              help="server: also send it to the cluster as a server-side dry run.")
@click.option("--file", "file_path", metavar="PATH", help="Write the manifest to PATH instead of stdout.")
@click.option("--force", is_flag=True, help="Overwrite --file if it exists.")
@kube_options(all_namespaces=False, formats=FORMATS, default_format="yaml")
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
    from .. import generate as gen

    kw["operator_version"] = kw["operator_version"] or gen.DEFAULT_OPERATOR_VERSION
    spec, doc = run_generate(name, kw, opts.target.namespace)
    if dry_run == "server":
        where = server_dry_run(opts, doc)
        click.echo(f"server dry run: accepted {doc['apiVersion']} dynamographdeployment {where}", err=True)
    fmt = opts.output
    if file_path:
        write_new_file(file_path, to_json(doc) + "\n" if fmt == "json" else to_yaml(doc), force)
        click.echo(f"wrote {file_path}", err=True)
        if fmt != "table":
            return 0
    render(doc if fmt != "table" else {"name": spec.name, "engines": gen.summary(spec)}, fmt, format_summary)
    return 0


def format_summary(result: dict, wide: bool, color: bool) -> str:
    rows = [[e["component"], e["nodes"], e["gpusPerNode"], e["tp"], e["pp"], e["replicas"], e["totalGpus"], e["roles"]]
            for e in result["engines"]]
    return grid(rows, ["component", "nodes", "gpus/node", "tp", "pp", "replicas", "gpus", "pods"])


COMMANDS = [generate_command]
