"""``explain dgd``: manifests in, operator-exact renderings plus schema findings out.

The simulation is ``operator.render.explain_dgd``; this module adds what only the command knows:
which documents are DGDs, schema validation against the bundled CRD, and (for live DGDs) the
cluster's gates, queues, operator version and MPI secret name.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Sequence, Tuple

from kubectl_dynamo.inputs.manifests import Document
from kubectl_dynamo.operator.context import ClusterContext
from kubectl_dynamo.operator.render import explain_dgd
from kubectl_dynamo.result import Result
from kubectl_dynamo.validation import schema
from kubectl_dynamo.validation.admission import unsimulated, validation

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import ExplainData, ExplainedDgd, ExplainList, FieldDocs, FieldRow, SkippedDocument


def explain_documents(docs: List[Document], *, orchestrator=None, operator_version=None,
                      context: Optional[ClusterContext] = None, objects: bool = False,
                      changes: bool = False) -> ExplainList:
    """Explain every DGD in ``docs``; other kinds are skipped with a note."""
    context = context or ClusterContext()
    items: List[ExplainedDgd] = []
    skipped: List[SkippedDocument] = []
    for d in docs:
        dgd = d.dgd
        if dgd is None:
            skipped.append({"document": d.position + 1, "kind": d.kind, "reason": "not a DynamoGraphDeployment"})
            continue
        items.append(explain_one(dgd, orchestrator=orchestrator, operator_version=operator_version,
                                 context=context, objects=objects, changes=changes))
    return {"items": items, "skipped": skipped}


def explain_one(doc: dict, *, orchestrator=None, operator_version=None,
                context: Optional[ClusterContext] = None, objects: bool = False, changes: bool = False) -> ExplainedDgd:
    context = context or ClusterContext()
    plain, findings, simulate = validation(doc, provider=orchestrator,
                                           operator_version=operator_version or context.operator_version)
    if not simulate:
        out = unsimulated(plain, findings, operator_version or context.operator_version)
        out["findings"] = _once_and_named(out["findings"], plain)
        return out
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
        out = unsimulated(plain, findings, operator_version or context.operator_version)
        out["findings"] = _once_and_named(out["findings"], plain)
        return out
    result["findings"] = _once_and_named(findings + result["findings"], plain)
    return result


_COMPONENT_PATH = re.compile(r"^spec\.components\[(\d+)\]")


def _once_and_named(findings: List[dict], plain: dict) -> List[dict]:
    """Each finding once, and one about ``spec.components[i]`` names that component (COMPONENT column)."""
    spec: Any = plain.get("spec")
    comps: Any = spec.get("components") if isinstance(spec, dict) else None
    comps = comps if isinstance(comps, list) else []
    out, seen = [], set()
    for f in findings:
        key = (f["code"], f["severity"], f.get("component"), f["message"])
        if key in seen:
            continue
        seen.add(key)
        m = _COMPONENT_PATH.match(f["message"]) if not f.get("component") else None
        if m and int(m.group(1)) < len(comps) and isinstance(comps[int(m.group(1))], dict):
            name = comps[int(m.group(1))].get("name")
            if isinstance(name, str) and name:
                f = {**f, "component": name}
        out.append(f)
    return out


def has_errors(results: Sequence[Mapping[str, Any]]) -> bool:
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


def field_docs(path: List[str], version: str = "v1beta1", recursive: bool = False, openapi: Optional[dict] = None) -> FieldDocs:
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


def _field_rows(node: dict, recursive: bool, depth: int = 0) -> List[FieldRow]:
    rows: List[FieldRow] = []
    for name, child, required in schema.fields(node):
        rows.append({"name": name, "type": schema.type_name(child), "required": required, "depth": depth,
                     "description": (child.get("description") or "").split("\n")[0]})
        if recursive:
            rows += _field_rows(child, True, depth + 1)
    return rows


# -- the command -------------------------------------------------------------------------------
_RESOURCES = {"PodCliqueSet": "podcliqueset.grove.io", "LeaderWorkerSet": "leaderworkerset.leaderworkerset.x-k8s.io",
              "Deployment": "deployment.apps"}


def _result(result: ExplainList, objects: bool = False, changes: bool = False) -> Result[ExplainData]:
    """One DGD gives its object, several (or skipped documents) the list form, as kubectl get does.

    With ``objects`` the workload objects are the subject: ``-o yaml`` prints them as a YAML stream
    in Kubernetes shape, ``-o name`` names them, the table lists them under the pods."""
    from kubectl_dynamo.errors import ExitCode
    from kubectl_dynamo.output.tables import format_changes, format_results

    payload: ExplainData = result["items"][0] if len(result["items"]) == 1 and not result["skipped"] else result
    exit_code = ExitCode.FINDINGS if has_errors(result["items"]) else ExitCode.OK
    dgds = [f"dynamographdeployment.nvidia.com/{r['name']}" for r in result["items"]]
    junit = functools.partial(_junit, result)
    if changes:
        return Result(payload, lambda _data, wide, color, width: format_changes(result, wide, width), exit_code=exit_code,
                      names=dgds, junit=junit)
    if not objects:
        return Result(payload, lambda _data, wide, color, width: format_results(result, wide, color, width), exit_code=exit_code,
                      names=dgds, junit=junit)
    from kubectl_dynamo.output.render import to_yaml

    objs = [o for r in result["items"] for o in r["objects"]]

    def table(_data, wide: bool, color: bool, width: Optional[int] = None) -> str:
        lines = [f"{o['kind']}/{o['metadata']['name']}" for o in objs]
        related = [f"{kind} {', '.join(names)}" for r in result["items"] for kind, names in r["related"].items() if names]
        return "\n".join([format_results(result, wide, color, width).rstrip("\n"), "", "objects the operator creates:",
                          *("  " + x for x in lines), "related (Services it creates, what the pods refer to):",
                          *("  " + x for x in related)]) + "\n"

    return Result(payload, table, exit_code=exit_code,
                  names=[f"{_RESOURCES[o['kind']]}/{o['metadata']['name']}" for o in objs],
                  text="---\n".join(to_yaml(o) for o in objs), junit=junit)


def _junit(result: ExplainList, _data: object) -> str:
    from kubectl_dynamo.output.junit import explain_junit

    return explain_junit(result)


def run_files(sources: List[Tuple[str, List[Document]]], *, orchestrator=None, operator_version=None,
              objects: bool = False, changes: bool = False) -> Result[ExplainData]:
    """``explain dgd -f A -f DIR``: every DGD of every file, in order. With several files each
    skipped document also names its ``file`` (a key added to the single-file shape)."""
    from kubectl_dynamo.inputs.manifests import NoDgd

    result: ExplainList = {"items": [], "skipped": []}
    for source, docs in sources:
        one = explain_documents(docs, orchestrator=orchestrator, operator_version=operator_version, objects=objects,
                                changes=changes)
        result["items"] += one["items"]
        result["skipped"] += [{**s, "file": source} if len(sources) > 1 else s for s in one["skipped"]]
    if not result["items"]:
        raise NoDgd([source for source, _ in sources])
    return _result(result, objects, changes)


def run_live(cluster, name: str, *, orchestrator=None, operator_version=None, objects: bool = False,
             changes: bool = False) -> Result[ExplainData]:
    """``explain dgd NAME``: a live DGD with the cluster's gates, queues, operator version and MPI secret."""
    from kubectl_dynamo.cluster.live import get_dgd
    from kubectl_dynamo.findings.finding import finding

    doc = get_dgd(cluster, name)
    context = explain_context(cluster)
    one = explain_one(doc, orchestrator=orchestrator, operator_version=operator_version, context=context,
                      objects=objects, changes=changes)
    one["findings"] += [dict(finding("permission-denied", note).as_json()) for note in context.notes]
    return _result({"items": [one], "skipped": []}, objects, changes)


def run_field_docs(path: List[str], api_version: str, recursive: bool, openapi: Optional[dict] = None) -> Result[FieldDocs]:
    from kubectl_dynamo.output.tables import format_field_docs

    return Result(field_docs(path, api_version, recursive, openapi=openapi), format_field_docs)


def explain_context(cluster) -> ClusterContext:
    from kubectl_dynamo.model.facts import gather
    from kubectl_dynamo.model.platform import operator_context

    return operator_context(gather(cluster, nodes=False))
