"""The DGD schema, bundled: validation of manifests and the source of ``explain`` field docs.

The bundled CRD (``data/crds/nvidia.com_dynamographdeployments.yaml``, 1.5.0) is 1.6 MB of YAML;
parsing it on every ``explain -f`` would dominate the run time, so ``data/dgd-schema.json`` holds
the two versions' ``openAPIV3Schema`` as JSON, generated from the CRD by
``python -m kubectl_dynamo.validation.schema`` (a unit test checks they agree), and ``data/dgd-validation-VERSION.json``
each version's converted for validation (10x smaller, loads in milliseconds; one file per version
because a DGD is validated against its own version only), and ``data/dgd-defaults.json`` the
``default:`` values alone (``operator/defaults.py``). Generation adds the 1.6.0
``components[].roles[]`` field to v1beta1 (from the 1.6.0 docs; the 1.5.0 CRD lacks it).
"""

from __future__ import annotations

import copy
import functools
import json
import os
import sys
from typing import Iterator, List, Optional

from kubectl_dynamo.data import DATA_DIR

GROUP = "nvidia.com"
KIND = "DynamoGraphDeployment"
VERSIONS = ("v1alpha1", "v1beta1")
CRD_FILE = "crds/nvidia.com_dynamographdeployments.yaml"
SCHEMA_FILE = "dgd-schema.json"  # openAPIV3Schema per version, with descriptions (field docs)
VALIDATION_FILE = "dgd-validation-{}.json"  # one version's, converted for validation, without descriptions

ROLES_DESCRIPTION = (
    "Roles of a multinode component (Dynamo 1.6.0+): exactly `leader` and `worker`. `replicas` defaults to 1 "
    "for the leader and multinode.nodeCount - 1 for the worker. A role podTemplate is a complete input, not a "
    "patch: use it on every role and omit the component podTemplate, or on no role."
)




def _data(name: str) -> str:
    return os.path.join(DATA_DIR, name)


@functools.cache
def openapi(version: str) -> dict:
    """The ``openAPIV3Schema`` of a served version, with descriptions (for field docs)."""
    with open(_data(SCHEMA_FILE), encoding="utf-8") as f:
        return json.load(f)["versions"][version]


def generate() -> dict:
    """Build the JSON data file from the bundled CRD."""
    import yaml

    with open(_data(CRD_FILE), encoding="utf-8") as f:
        crd = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    out = {"source": CRD_FILE, "group": crd["spec"]["group"], "kind": crd["spec"]["names"]["kind"],
           "shortNames": crd["spec"]["names"].get("shortNames", []), "versions": {}}
    for v in crd["spec"]["versions"]:
        out["versions"][v["name"]] = v["schema"]["openAPIV3Schema"]
    _add_roles(out["versions"]["v1beta1"])
    return out


def _add_roles(root: dict) -> None:
    comp = root["properties"]["spec"]["properties"]["components"]["items"]
    props = comp["properties"]
    if "roles" in props:
        return
    provider = copy.deepcopy(props["multinode"]["properties"].get("leader", {}).get("properties", {})
                             .get("providerOverride", {"type": "object", "x-kubernetes-preserve-unknown-fields": True}))
    props["roles"] = {
        "description": ROLES_DESCRIPTION,
        "type": "array",
        "maxItems": 2,
        "items": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "description": "Role name: `leader` or `worker` for multinode."},
                "replicas": {"type": "integer", "format": "int32", "minimum": 1,
                             "description": "Pods of this role; must be 1 (leader) or nodeCount - 1 (worker)."},
                "podTemplate": copy.deepcopy(props["podTemplate"]),
                "providerOverride": provider,
            },
        },
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
    }


# -- validation -------------------------------------------------------------------------------
# What the API server checks beyond JSON Schema, kept for the validator: CEL rules (validation/cel.py)
# and list-map / list-set keys (duplicates refused).
KEPT_EXTENSIONS = ("x-kubernetes-validations", "x-kubernetes-list-type", "x-kubernetes-list-map-keys")

def _to_json_schema(node):
    """OpenAPI v3 (a structural CRD schema) -> JSON Schema draft 4, strict about unknown fields:
    the API server would prune them silently; a user wants to know."""
    if isinstance(node, list):
        return [_to_json_schema(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _to_json_schema(v) for k, v in node.items()
           if (not k.startswith("x-kubernetes-") or k in KEPT_EXTENSIONS) and k not in ("nullable", "description", "format")}
    if node.get("format") in ("int32", "int64", "date-time"):  # kept for what Go's decoding refuses
        out["format"] = node["format"]
    if node.get("x-kubernetes-int-or-string") and "anyOf" not in out:
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    if "properties" in node and "additionalProperties" not in node and not node.get(
            "x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    return out


def generate_validation(generated: dict) -> dict:
    return {v: _to_json_schema(root) for v, root in generated["versions"].items()}


@functools.cache
def validation_schema(version: str) -> dict:
    with open(_data(VALIDATION_FILE.format(version)), encoding="utf-8") as f:
        return json.load(f)


def schema_errors(doc: dict) -> List[dict]:
    """Schema errors of a DGD against its apiVersion's schema: ``[{"path", "message", "structural"}]``;
    ``structural`` errors (a wrong type, a missing required key, an integer beyond its format) mean
    code reading the document would trip: see ``gate``."""
    return _errors(normalise(doc))


def _errors(plain) -> List[dict]:
    from kubectl_dynamo.validation.validator import STRUCTURAL, validate

    api = str(plain.get("apiVersion", ""))
    version = api.split("/", 1)[1] if api.startswith(GROUP + "/") else None
    if version not in VERSIONS:
        return [{"path": "apiVersion", "message": f"unsupported apiVersion {api[:60]!r} (want nvidia.com/v1beta1 "
                 "or v1alpha1)", "structural": True}]
    # As the API server on CREATE: status is dropped (the CRD has a status subresource: apiextensions'
    # customResourceStrategy.PrepareForCreate), then structural defaults, then validation.
    from kubectl_dynamo.operator import defaults

    root = validation_schema(version)
    body = defaults.apply(copy.deepcopy({k: v for k, v in plain.items() if k != "status"}), version)
    found = validate(root, body)
    if "status" in plain:
        # status is dropped only after the mutating webhook, which decodes it into the Go types, and
        # strict field validation reads it: unknown fields, wrong types and unparsable times refuse
        found += [e for e in validate(root, {"status": plain["status"]}) if e[2] in ("unknown", "type", "range", "format")]
    found.sort(key=lambda e: list(map(str, e[0])))
    return [{"path": _path(where), "message": message, "structural": kind in STRUCTURAL}
            for where, message, kind in found]


def normalise(doc: dict) -> dict:
    """The DGD as the API server stores it: plain JSON values (ruamel maps, dates), nulls pruned."""
    plain = _drop_nulls(json.loads(json.dumps(doc, default=str)), top=True)
    return plain


def gate(doc: dict) -> tuple:
    """``(plain, errors)`` for the simulation: ``plain`` is the normalised DGD, ``errors`` every schema
    error plus wrong types in ``metadata`` (which the CRD schema leaves to the API server) and a DGD
    without components. The simulation runs on ``plain`` only when no error is structural, so a
    wrongly typed field is a finding naming its path, never an exception."""
    from kubectl_dynamo.validation.names import metadata_structure

    plain = normalise(doc)
    errors = [{"path": p, "message": m, "structural": True} for p, m in metadata_structure(plain)]
    errors += _errors(plain)
    spec = plain.get("spec")
    field = "services" if str(plain.get("apiVersion", "")).endswith("/v1alpha1") else "components"
    if not errors and not (isinstance(spec, dict) and spec.get(field)):
        errors.append({"path": f"spec.{field}", "message": "the DGD has no components (a null or empty value is "
                       "pruned by the API server, and the operator deploys nothing)", "structural": False})
    return plain, errors


def require_structure(docs, source: str) -> Optional[str]:
    """Raise InvalidContent (exit 1) for the first document code cannot read: a DGD with a
    structural schema error, or any object whose ``metadata`` has the wrong types. Returns the
    first other schema error (``document N: path: message``), or None when every DGD is valid."""
    from kubectl_dynamo.errors import InvalidContent
    from kubectl_dynamo.validation.names import dgd_problems, metadata_structure

    other = None
    for d in docs:
        if not isinstance(d.data, dict):
            continue
        problems = [(p, m) for p, m in metadata_structure(d.data)]
        if not problems and d.is_dgd:
            plain, errors = gate(d.data)
            problems = [(e["path"], e["message"]) for e in errors if e["structural"]]
            first = next((e for e in errors if not e["structural"]), None)
            if other is None and first is not None:
                other = f"document {d.position + 1}: {first['path']}: {first['message']}"
            if not problems:
                problems = [(p, m) for _, p, m, structural in dgd_problems(plain) if structural]
        if problems:
            path, message = problems[0]
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise InvalidContent(f"{source}: document {d.position + 1}: {path}: {message}{more} (schema-invalid)",
                                 detail="\n".join(f"{p}: {m}" for p, m in problems))
    return other


def _drop_nulls(node, top: bool = False):
    """The API server prunes null values of non-nullable fields before validating a custom
    resource (e.g. ``containers: null``); the DGD schema marks almost nothing nullable. A null
    label or annotation value decodes into ObjectMeta's map as ``""`` (the key stays)."""
    if isinstance(node, dict):
        out = {k: _drop_nulls(v) for k, v in node.items() if v is not None}
        meta = out.get("metadata") if top else None
        if isinstance(meta, dict) and isinstance(node.get("metadata"), dict):
            for key in ("labels", "annotations"):
                raw = node["metadata"].get(key)
                if isinstance(raw, dict) and isinstance(meta.get(key), dict):
                    meta[key] = {k: "" if v is None else _drop_nulls(v) for k, v in raw.items()}
        return out
    if isinstance(node, list):
        return [_drop_nulls(v) for v in node]
    return node


def _path(parts) -> str:
    text = ""
    for p in parts:
        text += f"[{p}]" if isinstance(p, int) else (f".{p}" if text else str(p))
    return text or "(root)"


@functools.cache
def _pod_validator(kube_version: str):
    """kubernetes-validate's strict Pod schema, built once: its own ``validate()`` re-reads the
    multi-megabyte definitions file on every call."""
    import jsonschema
    from kubernetes_validate import utils
    from referencing import Registry, Resource

    version = [v for v in utils.all_versions() if utils.major_minor(v) <= kube_version][-1]
    base = f"kubernetes-json-schema/v{version}-local-strict"
    pod = utils.schema_contents(f"{base}/pod-v1.json", kube_version)
    defs = utils.schema_contents(f"{base}/_definitions.json", kube_version)
    registry = Resource.from_contents(defs) @ (Resource.from_contents(pod) @ Registry())
    return jsonschema.validators.Draft202012Validator(pod, registry=registry)


def pod_template_errors(template: dict, kube_version: str = "1.33") -> List[str]:
    """Check a pod template as the Pod it becomes, with kubernetes-validate's built-in schemas."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
           "spec": json.loads(json.dumps((template or {}).get("spec") or {"containers": []}, default=str))}
    pod["spec"].setdefault("containers", [])
    out = []
    for e in sorted(_pod_validator(kube_version).iter_errors(pod), key=lambda e: list(map(str, e.path))):
        if e.validator == "additionalProperties":  # the CRD schema (k8s.io/api v0.36) knows newer fields
            continue
        where = ".".join(str(p) for p in e.path)
        out.append(f"{where}: {e.message}" if where else e.message)
    return out


# -- field docs (kubectl explain) ----------------------------------------------------------------
def resolve(version: str, path: List[str]) -> Optional[dict]:
    """The schema node at ``spec.components.multinode`` style path (arrays are stepped through)."""
    node = openapi(version)
    for part in path:
        while node.get("type") == "array" and "items" in node:
            node = node["items"]
        props = node.get("properties") or {}
        if part not in props:
            return None
        node = props[part]
    return node


def fields(node: dict) -> Iterator[tuple]:
    while node.get("type") == "array" and "items" in node:
        node = node["items"]
    required = set(node.get("required") or [])
    for name, child in sorted((node.get("properties") or {}).items()):
        yield name, child, name in required


def type_name(node: dict) -> str:
    t: Optional[str] = node.get("type")
    if node.get("x-kubernetes-int-or-string"):
        return "IntOrString"
    if t == "array":
        inner = node.get("items") or {}
        return f"[]{type_name(inner)}"
    if t == "object":
        return "map[string]" + type_name(node["additionalProperties"]) if isinstance(
            node.get("additionalProperties"), dict) and not node.get("properties") else "Object"
    return t or "Object"


def data_files() -> dict:
    """Every data file generated from the bundled CRD: ``{file name: its text}``."""
    from kubectl_dynamo.operator import defaults

    generated = generate()
    validation = json.loads(json.dumps(generate_validation(generated)))  # as the validation files are read
    files = [(SCHEMA_FILE, generated), *((VALIDATION_FILE.format(v), root) for v, root in validation.items()),
             (defaults.DEFAULTS_FILE, defaults.generate(validation))]
    return {name: json.dumps(data, separators=(",", ":"), sort_keys=True) for name, data in files}


if __name__ == "__main__":  # regenerate the data files from the bundled CRD
    for name, text in data_files().items():
        target = _data(name)
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {target}", file=sys.stderr)
