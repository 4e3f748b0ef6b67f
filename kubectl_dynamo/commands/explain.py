"""``explain dgd``: manifests in, operator-exact renderings plus schema findings out.

The simulation is ``operator.render.explain_dgd``; this module adds what only the command knows:
which documents are DGDs, schema validation against the bundled CRD, and (for live DGDs) the
cluster's gates, queues, operator version and MPI secret name.
"""

from __future__ import annotations

from typing import List, NamedTuple, Optional, Sequence

from kubectl_dynamo.inputs.manifests import Document
from kubectl_dynamo.operator.api import MPI_SSH_SECRET_DEFAULT
from kubectl_dynamo.operator.render import explain_dgd
from kubectl_dynamo.validation import schema
from kubectl_dynamo.validation import webhook as validate

DGD_NAMES = ("dgd", "dgds", "dynamographdeployment", "dynamographdeployments",
             "dynamographdeployment.nvidia.com", "dynamographdeployments.nvidia.com")


class ClusterContext(NamedTuple):
    """What rendering a live DGD takes from the cluster: the operator's gates, KAI queue names,
    version (None = unknown), MPI secret name (the operator's default unless its config names
    another) and notes on what could not be read. Here, not in detection.py (which fills it):
    explain -f renders without a cluster and does not import that. A NamedTuple, not a dataclass:
    creating that class cost every explain -f ~0.8 ms."""

    gates: object = None
    kai_queues: Optional[list] = None
    operator_version: Optional[str] = None
    ssh_secret_name: str = MPI_SSH_SECRET_DEFAULT
    notes: Sequence[str] = ()


SCHEMA_HINT = ("Fix the field to match the DynamoGraphDeployment CRD "
               "(kubectl dynamo explain dgd.<path> shows its documentation).")


def validation(doc: dict, *, full: bool = True, provider: Optional[str] = None,
               operator_version: Optional[str] = None) -> tuple:
    """``(plain, findings, simulate)``: what the API server and the operator's admission webhooks
    refuse when the DGD is created (``full``), and whether the operator simulation may run on
    ``plain`` (not when a field has the wrong type: see ``schema.gate``). ``provider`` is the Grove
    gate the admission runs with (``grove``, or ``lws``: off; default: Grove unless the DGD opts
    out). doctor asks for the gate only (``full=False``): live objects passed admission already."""
    from kubectl_dynamo.validation.names import dgd_problems

    plain, errors = schema.gate(doc)
    out = [validate.finding("schema-invalid", validate.ERROR, None, f"{e['path']}: {e['message']}", SCHEMA_HINT)
           for e in errors]
    if any(e["structural"] for e in errors):
        return plain, out, False
    problems = dgd_problems(plain)
    if problems:
        from kubectl_dynamo.findings.catalogue import (
            entry,  # the catalogue (~0.6 ms to load) only when there is a finding
        )

        out += [validate.finding(code, entry(code).severity, None, f"{path}: {message}", entry(code).fix)
                for code, path, message, _ in problems]
    simulate = not any(structural for *_, structural in problems)
    if not full or not simulate:
        return plain, out, simulate
    out += admission_findings(plain, provider, operator_version)
    for where, template in _pod_templates(plain):
        for problem in schema.pod_template_errors(template):
            out.append(validate.finding("pod-template-invalid", validate.WARNING, where["component"],
                                        f"{where['path']}: {problem}",
                                        "The pod template must be a valid Kubernetes PodTemplateSpec."))
    return plain, out, True


def admission_findings(plain: dict, provider: Optional[str], operator_version: Optional[str]) -> List[dict]:
    """The operator's admission webhooks (validation/admission.py) on CREATE, and the fields an older
    operator's CRD does not have."""
    from kubectl_dynamo.operator import selection, versions
    from kubectl_dynamo.validation import admission

    meta: dict = plain["metadata"] if isinstance(plain.get("metadata"), dict) else {}
    grove = (provider or ("grove" if selection.wants_grove(meta.get("annotations")) else "lws")) == "grove"
    hint = "Fix the field the message names: the operator's admission webhook refuses the DGD on create."
    out = [validate.finding("admission-refused", validate.ERROR, None, f"{path}: {message}", hint)
           for path, message in admission.problems(plain, grove)]
    out += [validate.finding("admission-needs-cluster", validate.WARNING, None, f"{path}: {message}",
                             "Check that the object exists in the cluster (kubectl get clustertopologybindings).")
            for path, message in admission.offline_notes(plain, grove)]
    if not versions.at_least(operator_version or versions.NEWEST, "1.6.0"):
        spec: dict = plain["spec"] if isinstance(plain.get("spec"), dict) else {}
        for i, comp in enumerate(spec.get("components") or []):
            if isinstance(comp, dict) and "roles" in comp:
                out.append(validate.finding(
                    "schema-invalid", validate.ERROR, comp.get("name"),
                    f"spec.components[{i}]: unknown field(s) ('roles' was unexpected: the CRD of operator "
                    f"{operator_version} has no roles; they are Dynamo 1.6.0+)", SCHEMA_HINT))
    return out


def _pod_templates(doc: dict):
    spec = doc.get("spec") or {}
    for i, comp in enumerate(spec.get("components") or []):
        if not isinstance(comp, dict):
            continue
        name = comp.get("name")
        if isinstance(comp.get("podTemplate"), dict):
            yield {"component": name, "path": f"spec.components[{i}].podTemplate"}, comp["podTemplate"]
        for j, role in enumerate(comp.get("roles") or []):
            if isinstance(role, dict) and isinstance(role.get("podTemplate"), dict):
                yield ({"component": name, "path": f"spec.components[{i}].roles[{j}].podTemplate"},
                       role["podTemplate"])


def explain_documents(docs: List[Document], *, orchestrator=None, operator_version=None,
                      context: Optional[ClusterContext] = None, objects: bool = False,
                      changes: bool = False) -> dict:
    """Explain every DGD in ``docs``; other kinds are skipped with a note."""
    context = context or ClusterContext()
    items, skipped = [], []
    for d in docs:
        dgd = d.dgd
        if dgd is None:
            skipped.append({"document": d.position + 1, "kind": d.kind, "reason": "not a DynamoGraphDeployment"})
            continue
        items.append(explain_one(dgd, orchestrator=orchestrator, operator_version=operator_version,
                                 context=context, objects=objects, changes=changes))
    return {"items": items, "skipped": skipped}


def explain_one(doc: dict, *, orchestrator=None, operator_version=None,
                context: Optional[ClusterContext] = None, objects: bool = False, changes: bool = False) -> dict:
    context = context or ClusterContext()
    plain, findings, simulate = validation(doc, provider=orchestrator,
                                           operator_version=operator_version or context.operator_version)
    if not simulate:
        return unsimulated(plain, findings, operator_version or context.operator_version)
    try:
        result = explain_dgd(plain, orchestrator=orchestrator,
                             operator_version=operator_version or context.operator_version,
                             gates=context.gates, kai_queues=context.kai_queues, objects=objects,
                             changes=changes, ssh_secret_name=context.ssh_secret_name)
    except Exception:
        # The operator only sees objects the API server admitted: for a DGD with schema errors
        # (e.g. a missing required key) the simulation is best effort and its findings stand alone.
        # A schema-valid DGD it cannot render is a bug and propagates.
        if not any(f["code"] == "schema-invalid" for f in findings):
            raise
        return unsimulated(plain, findings, operator_version or context.operator_version)
    result["findings"] = findings + result["findings"]
    return result


def unsimulated(plain: dict, findings: List[dict], operator_version: Optional[str]) -> dict:
    """explain's result for a DGD the simulation cannot read: its findings and no components."""
    from kubectl_dynamo.operator import versions

    meta = plain.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    text = lambda v: v if isinstance(v, str) else None  # noqa: E731
    return {"name": text(meta.get("name")) or "", "namespace": text(meta.get("namespace")),
            "apiVersion": text(plain.get("apiVersion")) or "", "operatorVersion": operator_version or versions.NEWEST,
            "originVersion": None, "provider": None, "orchestrator": None, "scheduler": None, "queue": None,
            "components": [], "findings": findings}


def has_errors(results: List[dict]) -> bool:
    return any(f["severity"] == "error" for r in results for f in r["findings"])


# -- field docs ------------------------------------------------------------------------------
MULTINODE_NOTES = {
    "spec.components.multinode": (
        "A component with multinode.nodeCount = N > 1 runs one engine across N pods: a leader (rank 0) and "
        "N-1 workers. GPUs per pod come from the main container's nvidia.com/gpu; total GPUs = N x GPUs per pod "
        "(x replicas). vLLM: TP x PP must equal N x GPUs per pod for one engine spanning the nodes (else the "
        "operator picks data-parallel or injects nothing). Grove renders a PodCliqueScalingGroup with cliques "
        "<component>-ldr and <component>-wkr; LWS renders a LeaderWorkerSet of size N."),
    "spec.components.multinode.nodeCount": (
        "Pods per engine (leader + workers); minimum 2. Total GPUs = nodeCount x the main container's GPU request."),
    "spec.components.roles": (
        "Dynamo 1.6.0+: role-specific pod templates. Valid: component.podTemplate alone, or a podTemplate on "
        "both the leader and the worker role. Invalid: component.podTemplate + any role podTemplate, or a "
        "template on only one role. Role templates own the launch command: use $(DYNAMO_RANK) and "
        "$(DYNAMO_LEADER_ADDRESS); the operator still adds --master-port=29500 for vLLM mp, keeps the TRT-LLM "
        "worker readiness probe on port 2222 and mounts the MPI SSH key."),
    "spec.components.podTemplate": (
        "The operator merges this into container 'main'. Give both command and args: args without command run "
        "as /bin/sh -c <args>. The operator injects multinode flags after the token that contains the backend "
        "word (vllm, sglang), so a model path containing that word moves the insertion point."),
    "metadata.annotations": (
        'nvidia.com/enable-grove: "false" opts a new DGD out of Grove (LWS is used when LWS and Volcano are '
        "installed). nvidia.com/kai-scheduler-queue picks the KAI queue (default dynamo; it must exist). "
        "nvidia.com/vllm-distributed-executor-backend: mp|ray overrides the vLLM executor. "
        "nvidia.com/dynamo-operator-origin-version is stamped at creation and gates features (1.6.0: DYNAMO_RANK)."),
}


def field_docs(path: List[str], version: str = "v1beta1", recursive: bool = False, openapi: Optional[dict] = None) -> dict:
    """``kubectl explain``-style documentation of ``dgd.<path>``."""
    from kubectl_dynamo.errors import UsageError

    root = openapi or schema.openapi(version)
    node = root
    for part in path:
        while node.get("type") == "array" and "items" in node:
            node = node["items"]
        props = node.get("properties") or {}
        if part not in props:
            raise UsageError(f'field "{part}" does not exist in dgd.{".".join(path)} '
                             f'(known: {", ".join(sorted(props)) or "none"})')
        node = props[part]
    key = ".".join(path)
    return {
        "group": schema.GROUP, "kind": schema.KIND, "version": version, "field": key or None,
        "type": schema.type_name(node), "description": node.get("description", ""),
        "fields": _field_rows(node, recursive),
        "multinodeNotes": MULTINODE_NOTES.get(key),
    }


def _field_rows(node: dict, recursive: bool, depth: int = 0) -> List[dict]:
    rows = []
    for name, child, required in schema.fields(node):
        rows.append({"name": name, "type": schema.type_name(child), "required": required, "depth": depth,
                     "description": (child.get("description") or "").split("\n")[0]})
        if recursive:
            rows += _field_rows(child, True, depth + 1)
    return rows


# -- the command -------------------------------------------------------------------------------
_RESOURCES = {"PodCliqueSet": "podcliqueset.grove.io", "LeaderWorkerSet": "leaderworkerset.leaderworkerset.x-k8s.io",
              "Deployment": "deployment.apps"}


def _result(result: dict, objects: bool = False, changes: bool = False):
    """One DGD gives its object, several (or skipped documents) the list form, as kubectl get does.

    With ``objects`` the workload objects are the subject: ``-o yaml`` prints them as a YAML stream
    in Kubernetes shape, ``-o name`` names them, the table lists them under the pods."""
    from kubectl_dynamo.errors import ExitCode
    from kubectl_dynamo.output.tables import format_changes, format_results
    from kubectl_dynamo.result import Result

    payload = result["items"][0] if len(result["items"]) == 1 and not result["skipped"] else result
    exit_code = ExitCode.FINDINGS if has_errors(result["items"]) else ExitCode.OK
    dgds = [f"dynamographdeployment.nvidia.com/{r['name']}" for r in result["items"]]
    if changes:
        return Result(payload, lambda _data, wide, color: format_changes(result, wide), exit_code=exit_code,
                      names=dgds)
    if not objects:
        return Result(payload, lambda _data, wide, color: format_results(result, wide, color), exit_code=exit_code,
                      names=dgds)
    from kubectl_dynamo.output.render import to_yaml

    objs = [o for r in result["items"] for o in r["objects"]]

    def table(_data, wide: bool, color: bool) -> str:
        lines = [f"{o['kind']}/{o['metadata']['name']}" for o in objs]
        related = [f"{kind} {', '.join(names)}" for r in result["items"] for kind, names in r["related"].items() if names]
        return "\n".join([format_results(result, wide, color).rstrip("\n"), "", "objects the operator creates:",
                          *("  " + x for x in lines), "related (Services it creates, what the pods refer to):",
                          *("  " + x for x in related)]) + "\n"

    return Result(payload, table, exit_code=exit_code,
                  names=[f"{_RESOURCES[o['kind']]}/{o['metadata']['name']}" for o in objs],
                  text="---\n".join(to_yaml(o) for o in objs))


def run_file(docs: List[Document], source: str, *, orchestrator=None, operator_version=None, objects: bool = False,
             changes: bool = False):
    """``explain dgd -f FILE``: every DGD in the documents."""
    from kubectl_dynamo.errors import InputError

    result = explain_documents(docs, orchestrator=orchestrator, operator_version=operator_version, objects=objects,
                               changes=changes)
    if not result["items"]:
        raise InputError(f"{source}: no DynamoGraphDeployment found")
    return _result(result, objects, changes)


def run_live(cluster, name: str, *, orchestrator=None, operator_version=None, objects: bool = False,
             changes: bool = False):
    """``explain dgd NAME``: a live DGD with the cluster's gates, queues, operator version and MPI secret."""
    from kubectl_dynamo.cluster.live import explain_context, get_dgd
    from kubectl_dynamo.findings.finding import finding

    doc = get_dgd(cluster, name)
    context = explain_context(cluster)
    one = explain_one(doc, orchestrator=orchestrator, operator_version=operator_version, context=context,
                      objects=objects, changes=changes)
    one["findings"] += [finding("permission-denied", note).as_json() for note in context.notes]
    return _result({"items": [one], "skipped": []}, objects, changes)


def run_field_docs(path: List[str], api_version: str, recursive: bool, openapi: Optional[dict] = None):
    from kubectl_dynamo.output.tables import format_field_docs
    from kubectl_dynamo.result import Result

    return Result(field_docs(path, api_version, recursive, openapi=openapi), format_field_docs)
