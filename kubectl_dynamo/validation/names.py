"""What the API server (or the kubelet) rejects in a DGD's values, checked offline.

The CRD schema says nothing about ``metadata``; the API server validates it for every object.
The rules are Kubernetes' (kubernetes/apimachinery ``pkg/util/validation/validation.go``, v0.33):
``IsDNS1123Subdomain`` (object names, at most 253 characters of dot-separated DNS-1123 labels),
``IsDNS1123Label`` (namespaces, at most 63), ``IsQualifiedName`` (label and annotation keys: an
optional DNS-subdomain prefix and ``/``, then at most 63 of ``[A-Za-z0-9_.-]`` beginning and ending
alphanumeric), ``IsValidLabelValue`` (empty or a qualified name part); annotation keys are checked lower-cased
(``pkg/api/validation/objectmeta.go``, ``ValidateAnnotations``). A value that is not
a string (``nvidia.com/enable-grove: false`` unquoted) cannot be decoded into ObjectMeta: the API
server answers 400. Image references follow the grammar of github.com/distribution/reference
(``regexp.go``), which the kubelet applies before pulling (``InvalidImageName`` otherwise).
The CRD's own CEL rule makes component names unique case-insensitively.

``dgd_problems`` returns ``[(code, path, message, structural)]``: ``explain`` turns them into
findings (a structural one, a value of the wrong type, also stops the simulation, which reads
annotations as strings); ``generate`` refuses its flags with usage errors.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, List, Tuple

from kubectl_dynamo.validation.validator import shorten

Problem = Tuple[str, str, str, bool]  # (finding code, path, message, structural)

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63
INT32_MAX = 2**31 - 1

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL = re.compile(_LABEL)
_DNS1123_SUBDOMAIN = re.compile(rf"{_LABEL}(\.{_LABEL})*")
_QUALIFIED_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")

# distribution/reference: name components, an optional registry host[:port], :tag, @digest.
_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_IMAGE = re.compile(rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
                    r"(?::[\w][\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,})?")


def _bounded(value: str, limit: int, pattern: re.Pattern, must: str, *, subject: str = "",
             empty_ok: bool = False) -> List[str]:
    """The two checks of each apimachinery name rule: a length bound and a pattern."""
    out = []
    if len(value) > limit:
        out.append(f"{subject}must be no more than {limit} characters")
    if (value or not empty_ok) and not pattern.fullmatch(value):
        out.append(f"{subject}must {must}")
    return out


def dns1123_label(value: str) -> List[str]:
    """apimachinery ``IsDNS1123Label``: the reasons ``value`` is not one (empty = valid)."""
    return _bounded(value, DNS1123_LABEL_MAX, _DNS1123_LABEL, "consist of lower case alphanumeric characters "
                    "or '-', and start and end with an alphanumeric character")


def dns1123_subdomain(value: str) -> List[str]:
    """apimachinery ``IsDNS1123Subdomain``."""
    return _bounded(value, DNS1123_SUBDOMAIN_MAX, _DNS1123_SUBDOMAIN, "consist of lower case alphanumeric "
                    "characters, '-' or '.', and start and end with an alphanumeric character")


def qualified_name(value: str) -> List[str]:
    """apimachinery ``IsQualifiedName``: ``[prefix/]name`` (label and annotation keys)."""
    parts = value.split("/")
    if len(parts) > 2:
        return ["must be a name with an optional DNS-subdomain prefix and one '/'"]
    name = parts[-1]
    out = []
    if len(parts) == 2:
        if not parts[0]:
            out.append("the prefix before '/' must be non-empty")
        else:
            out += [f"prefix {m}" for m in dns1123_subdomain(parts[0])]
    if not name:
        out.append("the name part must be non-empty")
    else:
        out += _bounded(name, QUALIFIED_NAME_MAX, _QUALIFIED_PART, "consist of alphanumeric characters, '-', "
                        "'_' or '.', and start and end with an alphanumeric character", subject="the name part ")
    return out


def label_value(value: str) -> List[str]:
    """apimachinery ``IsValidLabelValue``."""
    return _bounded(value, LABEL_VALUE_MAX, _QUALIFIED_PART, "be empty or consist of alphanumeric characters, "
                    "'-', '_' or '.', and start and end with an alphanumeric character", empty_ok=True)


def image_reference(value: str) -> List[str]:
    if not value.strip():
        return ["must not be empty"]
    if value != value.strip():
        return ["must not have leading or trailing whitespace"]
    if not _IMAGE.fullmatch(value):
        return ["is not an image reference ([registry/]path[:tag][@digest], lower-case path, no spaces)"]
    return []


# -- a DGD --------------------------------------------------------------------------------------
def metadata_structure(doc: dict) -> List[Tuple[str, str]]:
    """Wrong types in ``metadata`` (the CRD schema leaves it to the API server): ``[(path, message)]``.
    Code that reads the DGD relies on these, so they stop the simulation like schema type errors."""
    meta = doc.get("metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        return [("metadata", f"{shorten(meta)} is not of type 'object'")]
    out = [(f"metadata.{key}", f"{shorten(meta[key])} is not of type 'string'")
           for key in ("name", "namespace", "generateName") if key in meta and not isinstance(meta[key], str)]
    if "name" not in meta:  # the API server requires it (or generateName, which only creation resolves)
        out.append(("metadata", "'name' is a required property"))
    out += [(f"metadata.{key}", f"{shorten(meta[key])} is not of type 'object'")
            for key in ("labels", "annotations") if key in meta and not isinstance(meta[key], dict)]
    return out


def dgd_problems(doc: dict) -> List[Problem]:
    """Values the API server, the CRD's CEL rules or the kubelet reject, in a structurally valid DGD."""
    out: List[Problem] = []
    meta = doc.get("metadata") or {}
    name, namespace = meta.get("name"), meta.get("namespace")
    code = "name-invalid"
    if isinstance(name, str):
        out += [(code, "metadata.name", f"{shorten(name)} {m} (DNS-1123 subdomain)", False)
                for m in dns1123_subdomain(name)]
    if isinstance(namespace, str) and namespace:  # empty: the request's namespace is used
        out += [(code, "metadata.namespace", f"{shorten(namespace)} {m} (DNS-1123 label)", False)
                for m in dns1123_label(namespace)]
    out += map_problems(meta.get("labels"), "metadata.labels", labels=True)
    out += map_problems(meta.get("annotations"), "metadata.annotations", labels=False)
    spec: dict = doc["spec"] if isinstance(doc.get("spec"), dict) else {}
    out += _component_names(spec.get("components"))
    code = "image-invalid"
    for path, image in _images(spec, "spec"):
        out += [(code, path, f"{shorten(image)} {m}", False) for m in image_reference(image)]
    code = "node-selector-invalid"  # admitted; the API server refuses the pods made from it
    for path, selector in _node_selectors(spec, "spec"):
        out += [(code, p, m, structural) for _, p, m, structural in map_problems(selector, path, labels=True)]
    return out


def map_problems(mapping: Any, path: str, *, labels: bool) -> List[Problem]:
    """Keys and values of labels (``labels=True``; also a nodeSelector) or annotations."""
    if not isinstance(mapping, dict):
        return []
    out: List[Problem] = []
    for key, value in mapping.items():
        key = str(key)
        where = f"{path}[{key[:60]!r}]"
        # ValidateAnnotations checks the lower-cased key; label keys are checked as written
        code = "label-key-invalid"
        out += [(code, where, f"key {shorten(key)} {m}", False)
                for m in qualified_name(key if labels else key.lower())]
        if not isinstance(value, str):
            code = "label-value-invalid" if labels else "annotation-value-not-string"
            out.append((code, where,
                        f"{shorten(value)} is a {type(value).__name__}, not a string (quote it: the API server "
                        "rejects the object)", True))
        elif labels:
            out += [("label-value-invalid", where, f"value {shorten(value)} {m}", False) for m in label_value(value)]
    return out


def _component_names(components: Any) -> List[Problem]:
    if not isinstance(components, list):
        return []
    seen: dict = {}
    out: List[Problem] = []
    for i, comp in enumerate(components):
        name = comp.get("name") if isinstance(comp, dict) else None
        if not isinstance(name, str):
            continue
        first = seen.setdefault(name.lower(), i)
        if first != i:
            code = "component-duplicate"
            out.append((code, f"spec.components[{i}].name",
                        f"{shorten(name)} repeats spec.components[{first}].name (names must be unique "
                        "case-insensitively: the CRD's rule)", False))
    return out


def _walk(node: Any, path: str) -> Iterator[Tuple[str, str, Any]]:
    """(path, key, value) of every mapping entry under ``node``."""
    stack = [(node, path)]
    while stack:
        n, p = stack.pop()
        if isinstance(n, dict):
            for k, v in n.items():
                yield f"{p}.{k}", str(k), v
                stack.append((v, f"{p}.{k}"))
        elif isinstance(n, list):
            stack += [(v, f"{p}[{i}]") for i, v in enumerate(n)]


def _images(spec: dict, path: str) -> Iterator[Tuple[str, str]]:
    for where, key, value in _walk(spec, path):
        if key == "image" and isinstance(value, str):
            yield where, value


def _node_selectors(spec: dict, path: str) -> Iterator[Tuple[str, dict]]:
    for where, key, value in _walk(spec, path):
        if key == "nodeSelector" and isinstance(value, dict):
            yield where, value


# -- generate's flags -----------------------------------------------------------------------------
COUNT_FLAGS = ("nodes", "gpus_per_node", "tp", "pp", "dp", "prefill_nodes", "prefill_tp", "prefill_dp",
               "decode_nodes", "decode_tp", "decode_dp")


def check_generate(name: str, namespace: Any, kw: dict, spec: Any) -> None:
    """``generate``'s flags the API server or kubelet would reject: a UsageError (exit 2) for the first."""
    from kubectl_dynamo.errors import UsageError

    counts = {f"--{k.replace('_', '-')}": kw.get(k) for k in COUNT_FLAGS}
    nodes, gpus = kw.get("nodes") or 1, kw.get("gpus_per_node") or 1
    counts["--nodes x --gpus-per-node"] = nodes * gpus  # the engine's total GPUs become a TP flag
    images = {f"--{k.replace('_', '-')}": kw.get(k) for k in ("image", "leader_image", "worker_image")}
    selectors = {"--leader-node-selector": spec.leader_node_selector, "--worker-node-selector": spec.worker_node_selector}
    problems = generate_problems(name, namespace, counts, images, selectors)
    if problems:
        raise UsageError(problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))


def generate_problems(name: str, namespace: Any, counts: dict, images: dict, selectors: dict) -> List[str]:
    """What ``generate`` must refuse as a usage error (flag -> message), before building anything."""
    out = [f"NAME {name!r} {m} (a DNS-1123 subdomain)" for m in dns1123_subdomain(name)]
    if namespace is not None:
        out += [f"-n {namespace!r} {m} (a DNS-1123 label)" for m in dns1123_label(namespace)]
    for flag, value in counts.items():
        if value is not None and value > INT32_MAX:
            out.append(f"{flag} {value} is out of range (at most {INT32_MAX:,}: the CRD's int32)")
    for flag, value in images.items():
        if value is not None:
            out += [f"{flag} {value!r} {m}" for m in image_reference(value)]
    for flag, mapping in selectors.items():
        for _, where, message, _ in map_problems(mapping, flag, labels=True):
            out.append(f"{where}: {message}")
    return out
