"""Would the API server and the operator admit this DGD? The CRD schema with its CEL rules, object
names and values, the operator's mutating and validating webhooks (``webhooks.py``) and the pod
templates, as explain's findings (held against the operator's own verdicts: tests/unit/test_admission.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from kubectl_dynamo.operator import webhook as validate
from kubectl_dynamo.validation import schema

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import ExplainedDgd

SCHEMA_HINT = ("Fix the field to match the DynamoGraphDeployment CRD "
               "(kubectl dynamo explain dgd.<path> shows its documentation).")


def validation(doc: dict, *, full: bool = True, provider: Optional[str] = None,
               operator_version: Optional[str] = None) -> tuple:
    """``(plain, findings, simulate)``: what the API server and the operator's admission webhooks
    refuse when the DGD is created (``full``), and whether the operator simulation may run on
    ``plain`` (not when a field has the wrong type: see ``schema.gate``). ``provider`` is the Grove
    gate the admission runs with (``grove``, or ``lws``: off; default: Grove unless the DGD opts
    out). doctor asks for the gate only (``full=False``): live objects passed admission already."""
    from kubectl_dynamo.operator import api
    from kubectl_dynamo.validation.names import dgd_problems

    plain, errors = schema.gate(doc)
    hint = SCHEMA_HINT
    out = []
    if api.mislabelled(doc):  # the cause of every schema error that follows
        hint = api.UPGRADE_HINT
        out.append(validate.finding("schema-invalid", validate.ERROR, None, api.mislabelled_message(doc), hint))
    out += [validate.finding("schema-invalid", validate.ERROR, None, f"{e['path']}: {e['message']}", hint)
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
    out += webhook_findings(plain, provider, operator_version)
    # kubernetes-validate's Pod schema (jsonschema and a multi-megabyte definitions file: half of an
    # explain -f run) only as a second opinion on a template the CRD's own schema found an error in:
    # on the 14,468 templates of the generated sets it reported nothing where the CRD reported nothing
    flagged = [e["path"] for e in errors]
    for where, template in _pod_templates(plain):
        if not any(p == where["path"] or p.startswith(where["path"] + ".") for p in flagged):
            continue
        for problem in schema.pod_template_errors(template):
            out.append(validate.finding("pod-template-invalid", validate.WARNING, where["component"],
                                        f"{where['path']}: {problem}",
                                        "The pod template must be a valid Kubernetes PodTemplateSpec."))
    return plain, out, True


def webhook_findings(plain: dict, provider: Optional[str], operator_version: Optional[str]) -> List[dict]:
    """The operator's admission webhooks (validation/webhooks.py) on CREATE, and the fields an older
    operator's CRD does not have."""
    from kubectl_dynamo.operator import api, selection, versions
    from kubectl_dynamo.validation import webhooks

    meta: dict = plain["metadata"] if isinstance(plain.get("metadata"), dict) else {}
    grove = (provider or ("grove" if selection.wants_grove(meta.get("annotations")) else "lws")) == "grove"
    hint = "Fix the field the message names: the operator's admission webhook refuses the DGD on create."
    out = []
    # First: the cause. The webhook's refusals that follow (a component left without its podTemplate) are its effects.
    if not versions.at_least(operator_version or versions.NEWEST, api.ROLE_TEMPLATES_SINCE):
        spec: dict = plain["spec"] if isinstance(plain.get("spec"), dict) else {}
        for i, comp in enumerate(spec.get("components") or []):
            if isinstance(comp, dict) and "roles" in comp:
                out.append(validate.finding(
                    "schema-invalid", validate.ERROR, comp.get("name"),
                    f"spec.components[{i}]: unknown field(s) ('roles' was unexpected: the CRD of operator "
                    f"{operator_version} has no roles; they are Dynamo 1.6.0+)",
                    "Use a component-level podTemplate, or upgrade the operator to 1.6.0+."))
    out += [validate.finding(_code(path, message), validate.ERROR, _component(plain, path), f"{path}: {message}", hint)
            for path, message in webhooks.problems(plain, grove, operator_version)]
    out += [validate.finding("admission-needs-cluster", validate.WARNING, None, f"{path}: {message}",
                             "Check that the object exists in the cluster (kubectl get clustertopologybindings).")
            for path, message in webhooks.offline_notes(plain, grove)]
    return out


def _code(path: str, message: str) -> str:
    """The 1.6 webhook's template-source rules (roles[], roles[].podTemplate, component podTemplate
    beside role templates) are ``template-source-mode``; every other refusal ``admission-refused``."""
    code = "admission-refused"
    if (".roles" in path and ".providerOverride" not in path) or "cannot be combined with roles[]" in message:
        code = "template-source-mode"
    return code


def _component(plain: dict, path: str) -> Optional[str]:
    """The component a ``spec.components[i]…`` path names (its name), else None."""
    if not path.startswith("spec.components["):
        return None
    index = path[len("spec.components["):].split("]", 1)[0]
    spec = plain.get("spec")
    components = spec.get("components") if isinstance(spec, dict) else None
    if not isinstance(components, list) or not index.isdigit() or int(index) >= len(components):
        return None
    comp = components[int(index)]
    name = comp.get("name") if isinstance(comp, dict) else None
    return name if isinstance(name, str) else None


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
