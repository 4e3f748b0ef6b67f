"""Would the API server and the operator admit this DGD? The CRD schema, object names and values,
the operator's validating webhook (``webhook.py``) and the pod templates, as explain's findings."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from kubectl_dynamo.operator import webhook as validate
from kubectl_dynamo.validation import schema

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import ExplainedDgd

SCHEMA_HINT = ("Fix the field to match the DynamoGraphDeployment CRD "
               "(kubectl dynamo explain dgd.<path> shows its documentation).")


def validation(doc: dict, *, full: bool = True) -> tuple:
    """``(plain, findings, simulate)``: schema, metadata and (``full``) pod template and API-server
    value findings, and whether the operator simulation may run on ``plain`` (not when a field has
    the wrong type: see ``schema.gate``). doctor asks for the gate only (``full=False``): live
    objects passed the API server, and kubernetes-validate on every live pod template is slow."""
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

        out += [validate.finding(code, validate.ERROR, None, f"{path}: {message}", entry(code).fix)
                for code, path, message, _ in problems]
    simulate = not any(structural for *_, structural in problems)
    if not full or not simulate:
        return plain, out, simulate
    for where, template in _pod_templates(plain):
        for problem in schema.pod_template_errors(template):
            out.append(validate.finding("pod-template-invalid", validate.ERROR, where["component"],
                                        f"{where['path']}: {problem}",
                                        "The pod template must be a valid Kubernetes PodTemplateSpec."))
    return plain, out, True


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


def unsimulated(plain: dict, findings: List[dict], operator_version: Optional[str]) -> ExplainedDgd:
    """explain's result for a DGD the simulation cannot read: its findings and no components."""
    from kubectl_dynamo.operator import versions

    meta = plain.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    text = lambda v: v if isinstance(v, str) else None  # noqa: E731
    return {"name": text(meta.get("name")) or "", "namespace": text(meta.get("namespace")),
            "apiVersion": text(plain.get("apiVersion")) or "", "operatorVersion": operator_version or versions.NEWEST,
            "originVersion": None, "provider": None, "orchestrator": None, "scheduler": None, "queue": None,
            "components": [], "findings": findings}
