"""Seeded DGDs drawn from the CRD schema, for holding explain's validation against the operator's
own admission (the verdicts are recorded by ``scripts/admission-verdicts``).

Bases are the real manifests (``tests/data/corpus``), the hand-written cases next to the goldens and
the operator's own v1beta1 form of every corpus DGD (``storedDGD`` in the goldens). Each case is a
base changed by one to three edits picked at a random place of the document, every edit derived
from the schema node found there, none from a list of known inputs:

- ``type``: a value of another JSON type; ``enum``, ``pattern``, ``minimum``/``maximum``,
  ``format`` (int32/int64 range), ``minLength``/``maxLength``, ``minItems``/``maxItems``: a value
  just outside the bound the node declares; ``required``: a required key removed;
  ``unknown``: a key the node does not declare;
- ``add``: a property the node declares but the base lacks, with a value synthesised from its
  schema (most are admitted; some trip a CEL rule or the webhook); ``drop``: an optional key
  removed; ``empty``: an array or map emptied (``containers: []``);
- ``cel``: a property that a CEL rule of the node names (``has(self.x)``), added or removed;
- ``name``: a metadata name, namespace, label or annotation, component name or service key
  replaced by a string from Kubernetes' name grammar (valid or one rule broken);
- ``quantity``: an int-or-string quantity replaced by a canonical, non-canonical or invalid one;
- ``image``: a main container's image replaced by one with or without a semantic-version tag,
  with ``runtimeVersionOverride`` set or removed.

``cases(seed, count, pool)`` is deterministic: the same seed, bases and schema give the same cases.
"""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import yaml

from tests.generative.dgd import dgd_schema

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"

Path_ = Tuple[Any, ...]

# Strings tried for a pattern: the first that matches (synthesis) or does not (violation) is used.
STRING_POOL = ["a", "abc", "main", "zone", "x-1", "1.0.0", "1.6.0", "0.9.0", "10Gi", "1", "500m", "A", "a_b", "-a",
               "a.b", "Bad Value!", "", "UPPER", "1.2.3.4", "v1", "grove.io/v1alpha1", "topology.kubernetes.io/zone"]
QUANTITIES = ["1", "2", "0", "500m", "2.5", "1.5Gi", "10Gi", "1e3", "1E3", "0.1", "1000000000000000000000000000000",
              "1.5.5", "abc", "-1", "10gi", "1Ki", ".5", "5.", "+1", "1m", 2, 2.5, 10**30, -3, "12e45678"]
NAMES = ["a", "ok-name", "Upper", "under_score", "dot.ted", "-lead", "trail-", "trail.", "a" * 63, "a" * 64,
         "a" * 253, "a" * 254, "", "sp ace", "ünï", "1", "x.y-z", "a..b"]
LABEL_KEYS = ["app", "example.com/app", "Example.com/app", "a/b/c", "/x", "x/", "k" * 63, "k" * 64, "under_score",
              "-x", "nvidia.com/enable-grove", "nvidia.com/kai-scheduler-queue", "nvidia.com/dynamo-discovery-backend",
              "nvidia.com/vllm-distributed-executor-backend", "nvidia.com/dynamo-operator-origin-version"]
LABEL_VALUES = ["", "v", "true", "false", "mp", "ray", "RAY", "kubernetes", "etcd", "1.5.0", "x" * 63, "x" * 64,
                "sp ace", "-x", "a/b", 1, True, None]
IMAGES = ["nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.1", "my-registry/sglang-runtime:my-tag", "vllm-runtime",
          "x:latest", "x:1.0.0", "x:v1.2.3", "x:1.0", "x:1.0.0-rc1", "x:0.9.0", "x:1.6.0-dev.1", "registry:5000/x:1.2.3",
          "x@sha256:" + "a" * 64, "x:1.2.3@sha256:" + "b" * 64, "UPPER/x:1.0.0", "x:", ""]
RUNTIME_VERSIONS = [None, "1.5.0", "1.6.0", "0.1.0", "1.5", "01.5.0", "99999.0.0"]


def schema() -> dict:
    return dgd_schema()["versions"]


def _plain(doc: Any) -> Any:
    return json.loads(json.dumps(doc, default=str))


def bases() -> List[Tuple[str, dict]]:
    """(label, DGD) of every base document, in a fixed order."""
    out: List[Tuple[str, dict]] = []
    files = sorted((DATA / "corpus").rglob("*.yaml")) + sorted((DATA / "oracle" / "cases").glob("*.yaml"))
    for path in files:
        for i, doc in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8"))):
            if isinstance(doc, dict) and doc.get("kind") == "DynamoGraphDeployment":
                out.append((f"{path.relative_to(DATA)}#{i}", _plain(doc)))
    for path in sorted((DATA / "oracle" / "goldens" / "corpus").rglob("*.json")):
        for i, item in enumerate(json.loads(path.read_text(encoding="utf-8"))["dgds"]):
            stored = (item.get("grove") or {}).get("storedDGD")
            if stored:
                out.append((f"{path.relative_to(DATA)}#{i}:storedDGD", _stored_as_input(stored)))
    return out


def _stored_as_input(stored: dict) -> dict:
    """The operator's stored v1beta1 DGD as a user would write it: no status, server fields or
    annotations the operator owns."""
    meta = stored.get("metadata") or {}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items()
                   if k not in ("nvidia.com/dgd-spec", "nvidia.com/dynamo-operator-origin-version",
                                "nvidia.com/workload-provider")}
    out_meta: Dict[str, Any] = {"name": meta.get("name")}
    if annotations:
        out_meta["annotations"] = annotations
    if meta.get("labels"):
        out_meta["labels"] = meta["labels"]
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "metadata": out_meta,
            "spec": copy.deepcopy(stored.get("spec") or {})}


# -- walking a document with its schema -------------------------------------------------------
def _child(node: dict, key: Any) -> Optional[dict]:
    if isinstance(key, int):
        items = node.get("items")
        return items if isinstance(items, dict) else None
    props = node.get("properties") or {}
    if key in props:
        return props[key]
    extra = node.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def sites(doc: Any, node: dict, path: Path_ = ()) -> Iterator[Tuple[Path_, Any, dict]]:
    """(path, value, schema node) of every value of ``doc`` the schema describes."""
    yield path, doc, node
    if isinstance(doc, dict):
        for k, v in doc.items():
            child = _child(node, k)
            if child is not None:
                yield from sites(v, child, path + (k,))
    elif isinstance(doc, list):
        child = _child(node, 0)
        if child is not None:
            for i, v in enumerate(doc):
                yield from sites(v, child, path + (i,))


def _set(doc: Any, path: Path_, value: Any) -> None:
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    parent[path[-1]] = value


def _delete(doc: Any, path: Path_) -> None:
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    del parent[path[-1]]


def _get(doc: Any, path: Path_) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _types(node: dict) -> List[str]:
    if node.get("x-kubernetes-int-or-string"):
        return ["integer", "string"]
    t = node.get("type")
    return [t] if isinstance(t, str) else []


def _matches(node: dict, value: str) -> bool:
    pattern = node.get("pattern")
    return pattern is None or re.search(pattern, value) is not None


def synth(node: dict, rng: random.Random, depth: int = 0) -> Any:
    """A value the node's schema accepts (best effort: CEL rules and the webhook are the oracle's)."""
    if "enum" in node:
        return rng.choice(node["enum"])
    types = _types(node)
    if node.get("x-kubernetes-int-or-string"):
        return rng.choice(["1", "2", 1, "500m", "1Gi"] if node.get("pattern") else [1, "1", "http"])
    t = types[0] if types else "object"
    if t == "string":
        pool = [s for s in STRING_POOL if _matches(node, s)
                and node.get("minLength", 0) <= len(s) <= node.get("maxLength", 10**6)]
        return rng.choice(pool) if pool else "a"
    if t == "integer":
        lo, hi = node.get("minimum", 0), node.get("maximum", 8)
        return rng.randint(int(lo), int(max(lo, min(hi, lo + 8))))
    if t == "number":
        lo, hi = node.get("minimum", 0), node.get("maximum", 1)
        return rng.choice([lo, hi, (lo + hi) / 2])
    if t == "boolean":
        return rng.random() < 0.5
    if t == "array":
        items = node.get("items") if isinstance(node.get("items"), dict) else {"type": "string"}
        n = max(node.get("minItems", 0), 1 if depth < 4 else 0)
        return [synth(items, rng, depth + 1) for _ in range(n)]
    out: Dict[str, Any] = {}
    props = node.get("properties") or {}
    for name in node.get("required") or []:
        if name in props:
            out[name] = synth(props[name], rng, depth + 1)
    optional = [k for k in props if k not in out]
    if optional and depth < 4 and rng.random() < 0.5:
        k = rng.choice(optional)
        out[k] = synth(props[k], rng, depth + 1)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and not props:
        out[rng.choice(["a", "key", "example.com/k"])] = synth(extra, rng, depth + 1)
    return out


def _wrong_type(value: Any, node: dict, rng: random.Random) -> Any:
    types = _types(node)
    candidates: List[Any] = [12345, 1.5, True, "text", ["x"], {"k": "v"}, -1]
    fits = {"string": lambda v: isinstance(v, str), "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "boolean": lambda v: isinstance(v, bool), "array": lambda v: isinstance(v, list),
            "object": lambda v: isinstance(v, dict)}
    wrong = [c for c in candidates if not any(fits[t](c) for t in types if t in fits)]
    return rng.choice(wrong)


# -- edits: each returns a description, or None when it does not apply at the site ---------------
Edit = Callable[[dict, Path_, Any, dict, random.Random], Optional[str]]


def _e_type(doc, path, value, node, rng):
    if not path or not _types(node):
        return None
    _set(doc, path, _wrong_type(value, node, rng))
    return "type"


def _e_bounds(doc, path, value, node, rng):
    if not path:
        return None
    options: List[Tuple[str, Any]] = []
    if "enum" in node:
        options.append(("enum", "NotInEnum" if not isinstance(value, int) else 987654))
    if isinstance(value, str):
        if "pattern" in node:
            bad = [s for s in STRING_POOL if not _matches(node, s)]
            if bad:
                options.append(("pattern", rng.choice(bad)))
        if node.get("minLength"):
            options.append(("minLength", ""))
        if "maxLength" in node:
            options.append(("maxLength", "a" * (node["maxLength"] + 1)))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in node:
            options.append(("minimum", node["minimum"] - 1))
        if "maximum" in node:
            options.append(("maximum", node["maximum"] + 1))
        fmt = node.get("format")
        if fmt in ("int32", "int64"):
            options.append((fmt, 2**31 if fmt == "int32" else 2**63))
        options.append(("number", rng.choice([0, -1, 10**30, 1.5, 2**31 - 1])))
    if isinstance(value, list):
        if "maxItems" in node and value:
            options.append(("maxItems", value + [copy.deepcopy(value[-1])] * (node["maxItems"] + 1 - len(value))))
        if node.get("minItems"):
            options.append(("minItems", []))
    if not options:
        return None
    kind, new = rng.choice(options)
    _set(doc, path, new)
    return kind


def _e_required(doc, path, value, node, rng):
    present = [k for k in node.get("required") or [] if isinstance(value, dict) and k in value]
    if not present:
        return None
    _delete(doc, path + (rng.choice(present),))
    return "required"


def _e_unknown(doc, path, value, node, rng):
    if not isinstance(value, dict) or not node.get("properties") or node.get("x-kubernetes-preserve-unknown-fields"):
        return None
    value[rng.choice(["bogusField", "Name", "replica", "extra_key"])] = rng.choice(["x", 1, {"a": 1}])
    return "unknown"


def _e_add(doc, path, value, node, rng):
    if not isinstance(value, dict):
        return None
    missing = [k for k in node.get("properties") or {} if k not in value]
    if not missing:
        return None
    key = rng.choice(missing)
    value[key] = synth(node["properties"][key], rng)
    return "add"


def _e_drop(doc, path, value, node, rng):
    if not isinstance(value, dict) or not value:
        return None
    optional = [k for k in value if k not in (node.get("required") or [])]
    if not optional:
        return None
    del value[rng.choice(optional)]
    return "drop"


def _e_empty(doc, path, value, node, rng):
    if not path or not isinstance(value, (list, dict)) or not value:
        return None
    _set(doc, path, [] if isinstance(value, list) else {})
    return "empty"


_CEL_FIELD = re.compile(r"self\.(\w+)")


def _e_cel(doc, path, value, node, rng):
    rules = node.get("x-kubernetes-validations") or []
    if not isinstance(value, dict) or not rules:
        return None
    names = sorted({n for r in rules for n in _CEL_FIELD.findall(r["rule"]) if n in (node.get("properties") or {})})
    if not names:
        return None
    key = rng.choice(names)
    if key in value and rng.random() < 0.5:
        del value[key]
    else:
        value[key] = synth(node["properties"][key], rng)
    return "cel"


def _name_sites(doc: dict) -> List[Tuple[str, Path_]]:
    """Where Kubernetes' name rules apply, whatever the CRD says about the field."""
    spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
    out: List[Tuple[str, Path_]] = [("name", ("metadata", "name")), ("name", ("metadata", "namespace")),
                                    ("map", ("metadata", "labels")), ("map", ("metadata", "annotations"))]
    for i, comp in enumerate(_list(spec.get("components"))):
        if isinstance(comp, dict):
            out.append(("name", ("spec", "components", i, "name")))
    if _map(spec.get("services")):
        out.append(("key", ("spec", "services")))
    return out


def _e_name(doc, path, value, node, rng):
    if not isinstance(doc.get("metadata"), dict):
        return None
    kind, where = rng.choice(_name_sites(doc))
    if kind == "name":
        _set(doc, where, rng.choice(NAMES))
    elif kind == "key":
        services = _get(doc, where)
        services[rng.choice(NAMES)] = services.pop(rng.choice(sorted(services)))
    else:
        target = doc["metadata"].setdefault(where[-1], {})
        if not isinstance(target, dict):
            return None
        target[rng.choice(LABEL_KEYS)] = rng.choice(LABEL_VALUES)
    return f"name:{_path_text(where)}"


def _e_quantity(doc, path, value, node, rng):
    if not path or not (node.get("x-kubernetes-int-or-string") and node.get("pattern")):
        return None
    _set(doc, path, rng.choice(QUANTITIES))
    return "quantity"


def _list(v: Any) -> list:
    return v if isinstance(v, list) else []


def _map(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _main_containers(doc: dict) -> Iterator[Tuple[Path_, dict]]:
    spec = _map(doc.get("spec"))
    for i, comp in enumerate(_list(spec.get("components"))):
        for c in _list(_map(_map(_map(comp).get("podTemplate")).get("spec")).get("containers")):
            if isinstance(c, dict) and c.get("name") == "main":
                yield ("spec", "components", i), c
    for key, svc in _map(spec.get("services")).items():
        main = _map(_map(svc).get("extraPodSpec")).get("mainContainer")
        if isinstance(main, dict):
            yield ("spec", "services", key), main


def _e_image(doc, path, value, node, rng):
    mains = list(_main_containers(doc))
    if not mains:
        return None
    where, container = rng.choice(mains)
    image = rng.choice(IMAGES + [None])
    if image is None:
        container.pop("image", None)
    else:
        container["image"] = image
    owner = _get(doc, where)
    version = rng.choice(RUNTIME_VERSIONS)
    if version is None:
        owner.pop("runtimeVersionOverride", None)
    else:
        owner["runtimeVersionOverride"] = version
    return f"image:{_path_text(where)}"


# kind -> (edit, weight): the weights keep admitted and refused cases in proportion (most edits of
# a type or bound refuse; most additions and removals are admitted)
EDITS: Dict[str, Tuple[Edit, int]] = {
    "type": (_e_type, 2), "bounds": (_e_bounds, 3), "required": (_e_required, 1), "unknown": (_e_unknown, 1),
    "add": (_e_add, 6), "drop": (_e_drop, 3), "empty": (_e_empty, 1), "cel": (_e_cel, 2), "name": (_e_name, 2),
    "quantity": (_e_quantity, 2), "image": (_e_image, 2)}
DOCUMENT_WIDE = {"name", "image"}  # these pick their own place in the document


def _path_text(path: Path_) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".") or "(root)"


def mutate(doc: dict, root: dict, rng: random.Random, edits: int) -> Tuple[dict, List[str]]:
    out = copy.deepcopy(doc)
    done: List[str] = []
    kinds = sorted(EDITS)
    weights = [EDITS[k][1] for k in kinds]
    while len(done) < edits:
        kind = rng.choices(kinds, weights)[0]
        candidates = [s for s in sites(out, root) if s[0][:1] != ("kind",)]
        rng.shuffle(candidates)
        for path, value, node in candidates[:1 if kind in DOCUMENT_WIDE else None]:
            what = EDITS[kind][0](out, path, value, node, rng)
            if what is not None:
                done.append(what if ":" in what else f"{what}@{_path_text(path)}")
                break
    return out, done


def cases(seed: int, count: int, pool: List[Tuple[str, dict]]) -> List[dict]:
    """``count`` cases ``{"id", "base", "edits", "text"}`` from the bases in ``pool`` (the admitted
    ones: ``scripts/admission-verdicts`` asks the oracle); ``text`` is the DGD as JSON (valid YAML)."""
    rng = random.Random(seed)
    versions = schema()
    out = []
    for n in range(count):
        label, base = pool[rng.randrange(len(pool))]
        version = str(base.get("apiVersion", "")).rpartition("/")[2]
        root = versions.get(version) or versions["v1beta1"]
        doc, edits = mutate(base, root, rng, rng.choice([1, 1, 1, 2]))
        out.append({"id": f"gen-{seed}-{n:05d}", "base": label, "edits": edits,
                    "text": json.dumps(doc, ensure_ascii=False) + "\n"})
    return out


# -- 1.6: steer into the role rules (scripts/admission-verdicts --operator-version 1.6.0) ------------
# Bases are what `generate dgd` writes across its flag space (backend, provider, nodes, role
# templates, disaggregation) plus the seed's role-template DGD; edits aim at each rule of the 1.6
# webhook's roles (shared_v1beta1.go validateComponentRoles, validateComponentRoleSpec,
# validateComponentPodTemplateMode, validateMultinodeComponentType, frontendSidecar, experimental,
# runtime version) and are mixed with the schema-drawn edits above.
def bases16(rng: random.Random, count: int) -> List[Tuple[str, dict]]:
    from kubectl_dynamo.commands import generate as g

    out: List[Tuple[str, dict]] = [("seeds/role-specific-multinode.yaml",
                                    _plain(yaml.safe_load((DATA / "seeds" / "role-specific-multinode.yaml").read_text())))]
    while len(out) < count:
        backend = rng.choice(["vllm", "sglang", "trtllm"])
        gpus = rng.choice([1, 2, 4, 8])
        disagg = rng.random() < 0.3
        engines = ([g.engine("prefill", rng.choice([1, 2, 3]), gpus, None, None, None),
                    g.engine("decode", rng.choice([1, 2, 4]), gpus, None, None, None)] if disagg
                   else [g.engine("worker", rng.choice([1, 2, 3, 4]), gpus, None, None, rng.choice([None, 2]))])
        spec = g.GenerateSpec(name=rng.choice(["llm", "ds", "q"]), backend=backend, model="Qwen/Qwen3-8B",
                              engines=engines, orchestrator=rng.choice(["grove", "lws"]),
                              role_templates=rng.random() < 0.6, frontend=rng.random() < 0.8)
        try:
            doc = g.build(spec)
        except g.SpecError:
            continue
        out.append((f"generate:{backend}:{spec.orchestrator}:{'roles' if spec.role_templates else 'plain'}:"
                    f"{'disagg' if disagg else 'agg'}", _plain(doc)))
    return out


def _engines(doc: dict) -> List[dict]:
    return [c for c in _list(_map(doc.get("spec")).get("components")) if isinstance(c, dict) and c.get("type") != "frontend"]


def _role_edit(doc: dict, rng: random.Random) -> Optional[str]:
    comps = _engines(doc) or _list(_map(doc.get("spec")).get("components"))
    if not comps:
        return None
    c = rng.choice(comps)
    roles = _list(c.get("roles"))
    with_t = [r for r in roles if isinstance(r, dict) and r.get("podTemplate")]
    main = lambda t: next((x for x in _list(_map(_map(t).get("spec")).get("containers")) if _map(x).get("name") == "main"), None)  # noqa: E731
    kind = rng.choice(["drop-role-template", "add-component-template", "role-replicas", "role-name", "drop-role",
                       "roles-without-multinode", "multinode-type", "role-annotation", "sidecar-image", "init-image",
                       "main-renamed", "main-image", "role-image-tag", "frontend-sidecar", "experimental", "roles-empty",
                       "role-provider-override", "to-role-templates", "node-count"])
    if kind == "to-role-templates" and c.get("podTemplate") and c.get("multinode") and not roles:
        t = c.pop("podTemplate")
        c["roles"] = [{"name": "leader", "podTemplate": copy.deepcopy(t)}, {"name": "worker", "podTemplate": copy.deepcopy(t)}]
    elif kind == "drop-role-template" and with_t:
        rng.choice(with_t).pop("podTemplate")
    elif kind == "add-component-template" and with_t:
        c["podTemplate"] = copy.deepcopy(with_t[0]["podTemplate"])
    elif kind == "role-replicas" and roles:
        nodes = int(_map(c.get("multinode")).get("nodeCount") or 2) if isinstance(c.get("multinode"), dict) else 2
        rng.choice(roles)["replicas"] = rng.choice([1, nodes - 1, nodes, 2]) or 1
    elif kind == "role-name" and roles:
        rng.choice(roles)["name"] = rng.choice(["leader", "worker", "head", "Leader"])
    elif kind == "drop-role" and roles:
        roles.remove(rng.choice(roles))
    elif kind == "roles-without-multinode" and roles:
        c.pop("multinode", None)
    elif kind == "multinode-type":
        c["type"] = rng.choice(["frontend", "planner", "epp", "worker", "decode"])
        c.setdefault("multinode", {"nodeCount": 2})
    elif kind == "role-annotation" and with_t:
        ann = rng.choice(with_t)["podTemplate"].setdefault("metadata", {}).setdefault("annotations", {})
        key, value = rng.choice([("nvidia.com/vllm-distributed-executor-backend", rng.choice(["mp", "ray", "", "bogus"])),
                                 ("dynamo.nvidia.com/gpu-power-limit", "300"), ("example.com/x", "y")])
        ann[key] = value
    elif kind == "sidecar-image" and with_t:
        rng.choice(with_t)["podTemplate"]["spec"].setdefault("containers", []).append(
            {"name": "side", **({"image": "busybox:1.36"} if rng.random() < 0.3 else {})})
    elif kind == "init-image" and with_t:
        rng.choice(with_t)["podTemplate"]["spec"].setdefault("initContainers", []).append(
            {"name": "init", **({"image": "busybox:1.36"} if rng.random() < 0.3 else {})})
    elif kind == "main-renamed" and with_t:
        m = main(rng.choice(with_t)["podTemplate"])
        if m is None:
            return None
        m["name"] = "engine"
    elif kind == "main-image" and with_t:
        m = main(rng.choice(with_t)["podTemplate"])
        if m is None:
            return None
        m.pop("image", None)
    elif kind == "role-image-tag" and with_t:
        m = main(rng.choice(with_t)["podTemplate"])
        if m is None:
            return None
        m["image"] = rng.choice(IMAGES)
        if rng.random() < 0.3:
            c["runtimeVersionOverride"] = rng.choice(["1.6.0", "1.5.0"])
    elif kind == "frontend-sidecar":
        c["frontendSidecar"] = rng.choice(["main", "sidecar", "", "frontend"])
    elif kind == "experimental":
        c.setdefault("experimental", {})[rng.choice(["gpuMemoryService", "failover"])] = rng.choice(
            [{}, {"mode": "IntraPod"}, {"mode": "InterPod"}])
    elif kind == "roles-empty":
        c["roles"] = []
    elif kind == "role-provider-override" and roles:
        rng.choice(roles)["providerOverride"] = rng.choice([
            {"apiVersion": "grove.io/v1alpha1", "value": {"topologyConstraint": {"packDomain": "rack"}}},
            {"apiVersion": "grove.io/v1alpha1", "target": "PodCliqueSet", "value": {}}, {"value": {}}])
    elif kind == "node-count" and isinstance(c.get("multinode"), dict):
        c["multinode"]["nodeCount"] = rng.choice([2, 3, 4, 8])
    else:
        return None
    return f"role:{kind}@{c.get('name')}"


def cases16(seed: int, count: int, bases_count: int = 120) -> List[dict]:
    """``count`` cases steering into the 1.6 role rules: a generate/seed base, 0-2 role edits, and
    sometimes one schema-drawn edit (``mutate``)."""
    rng = random.Random(seed)
    pool = bases16(rng, bases_count)
    root = schema()["v1beta1"]
    out = []
    for n in range(count):
        label, base = pool[rng.randrange(len(pool))]
        doc, edits = copy.deepcopy(base), []
        for _ in range(rng.choice([0, 1, 1, 1, 2])):
            what = _role_edit(doc, rng)
            if what:
                edits.append(what)
        if rng.random() < 0.2 and str(doc.get("apiVersion", "")).endswith("v1beta1"):
            doc, more = mutate(doc, root, rng, 1)
            edits += more
        out.append({"id": f"gen16-{seed}-{n:05d}", "base": label, "edits": edits,
                    "text": json.dumps(doc, ensure_ascii=False) + "\n"})
    return out


# -- targeted inputs: one webhook rule each (the recording keeps their verdicts in targeted*.jsonl.xz) --
def _gen_base(api_version: str = "nvidia.com/v1beta1", **kw: Any) -> dict:
    from kubectl_dynamo.commands import generate as g

    spec = g.GenerateSpec(name="llm", backend=kw.pop("backend", "vllm"), model="Qwen/Qwen3-8B",
                          engines=[g.engine("worker", kw.pop("nodes", 2), 4, None, None, None)],
                          api_version=api_version, **kw)
    return _plain(g.build(spec))


def _worker(doc: dict) -> dict:
    return doc["spec"]["components"][-1]


def _front(doc: dict) -> dict:
    return doc["spec"]["components"][0]


def _main_of(c: dict) -> dict:
    return c["podTemplate"]["spec"]["containers"][0]


def _ann(doc: dict, key: str, value: str) -> None:
    doc["metadata"].setdefault("annotations", {})[key] = value


def _roles_of(doc: dict) -> List[dict]:
    return _worker(doc)["roles"]


def _epp(doc: dict, **kw: Any) -> None:
    doc["spec"]["components"].append({"name": "epp", "type": "epp", "eppConfig": {"configMapRef": {"name": "cfg", "key": "epp.yaml"}},
                                      "podTemplate": {"spec": {"containers": [{"name": "main", "image": "x:1.6.0"}]}},
                                      **kw})


def _single(doc: dict) -> dict:
    _worker(doc).pop("multinode", None)
    return doc


GMS = {"gpuMemoryService": {}}


def _targets() -> List[Tuple[str, str, Any]]:
    """(rule id, base kind, edit): base kind ``plain`` (generate's vLLM DGD), ``single`` (no
    multinode), ``roles`` (generate --role-templates), ``alpha`` (v1alpha1)."""
    w, f = _worker, _front
    pod = lambda c: c["podTemplate"]["spec"]  # noqa: E731
    return [
        ("origin-version-semver", "plain", lambda d: _ann(d, "nvidia.com/dynamo-operator-origin-version", "x.y")),
        ("vllm-backend-annotation", "plain", lambda d: _ann(d, "nvidia.com/vllm-distributed-executor-backend", "bogus")),
        ("vllm-backend-annotation-empty", "plain", lambda d: _ann(d, "nvidia.com/vllm-distributed-executor-backend", "")),
        ("grove-update-strategy", "plain", lambda d: _ann(d, "nvidia.com/grove-update-strategy", "Coherent")),
        ("discovery-mode", "plain", lambda d: _ann(d, "nvidia.com/dynamo-kube-discovery-mode", "node")),
        ("intra-failover-discovery", "single", lambda d: w(d).update(experimental={"gpuMemoryService": {}, "failover": {}})),
        ("root-override-apiversion", "plain", lambda d: d["spec"].update(providerOverride={"value": {}})),
        ("root-override-unsupported", "plain", lambda d: d["spec"].update(providerOverride={"apiVersion": "grove.io/v2", "value": {}})),
        ("root-override-target", "plain", lambda d: d["spec"].update(providerOverride={"apiVersion": "grove.io/v1alpha1", "target": "PodCliqueTemplateSpec", "value": {}})),
        ("root-override-owned", "plain", lambda d: d["spec"].update(providerOverride={"apiVersion": "grove.io/v1alpha1", "value": {"spec": {"template": {"topologyConstraint": {"packDomain": "rack"}}}, "metadata": {}}})),
        ("root-override-required", "plain", lambda d: d["spec"].update(providerOverride={"apiVersion": "grove.io/v1alpha1", "value": {"spec": {"template": {}}}})),
        ("component-override", "single", lambda d: w(d).update(providerOverride={"apiVersion": "grove.io/v1alpha1", "value": {"replicas": 2, "topologyConstraint": {"packDomain": "rack"}}})),
        ("components-empty", "plain", lambda d: d["spec"].update(components=[])),
        ("override-scope-interpod", "plain", lambda d: w(d).update(experimental={"gpuMemoryService": {"mode": "InterPod"}}) or w(d)["multinode"].update(leader={"providerOverride": {"apiVersion": "grove.io/v1alpha1", "value": {"topologyConstraint": {"packDomain": "rack"}}}})),
        ("override-topology-conflict", "single", lambda d: d["spec"].update(topologyConstraint={"packDomain": "rack", "clusterTopologyName": "topo"}) or w(d).update(providerOverride={"apiVersion": "grove.io/v1alpha1", "value": {"topologyConstraint": {"packDomain": "rack"}}})),
        ("override-value-not-object", "plain", lambda d: d["spec"].update(providerOverride={"apiVersion": "grove.io/v1alpha1", "value": {"spec": "x"}})),
        ("override-value-missing", "single", lambda d: w(d).update(providerOverride={"apiVersion": "grove.io/v1alpha1"})),
        ("priority-class", "plain", lambda d: d["spec"].update(priorityClassName="high")),
        ("name-length", "plain", lambda d: d["metadata"].update(name="l" * 40) or w(d).update(name="w" * 20)),
        ("gms-interpod-vllm", "single", lambda d: d["spec"].update(backendFramework="sglang") or w(d).update(experimental={"gpuMemoryService": {"mode": "InterPod"}}) or _main_of(w(d)).update(command=["python3", "-m", "dynamo.sglang"], args=["--model-path", "m"])),
        ("gms-interpod-grove", "single", lambda d: w(d).update(experimental={"gpuMemoryService": {"mode": "InterPod"}})),
        ("power-not-integer", "plain", lambda d: w(d)["podTemplate"].setdefault("metadata", {}).setdefault("annotations", {}).update({"dynamo.nvidia.com/gpu-power-limit": "abc"})),
        ("power-not-positive", "plain", lambda d: w(d)["podTemplate"].setdefault("metadata", {}).setdefault("annotations", {}).update({"dynamo.nvidia.com/gpu-power-limit": "0"})),
        ("power-with-dra", "plain", lambda d: w(d)["podTemplate"].setdefault("metadata", {}).setdefault("annotations", {}).update({"dynamo.nvidia.com/gpu-power-limit": "300"}) or _main_of(w(d))["resources"].update(claims=[{"name": "gpu"}]) or pod(w(d)).update(resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "t"}])),
        ("elastic-ep-command", "single", lambda d: _main_of(w(d)).pop("command") and _main_of(w(d)).update(args=["python3 -m dynamo.vllm --enable-elastic-ep --data-parallel-backend ray"])),
        ("min-available-lws", "plain", lambda d: _ann(d, "nvidia.com/enable-grove", "false") or w(d).update(minAvailable=1)),
        ("shared-memory-negative", "plain", lambda d: w(d).update(sharedMemorySize="-1Gi")),
        ("epp-multinode", "plain", lambda d: _epp(d, multinode={"nodeCount": 2})),
        ("frontend-multinode", "plain", lambda d: f(d).update(multinode={"nodeCount": 2})),
        ("epp-replicas", "plain", lambda d: _epp(d, replicas=2)),
        ("epp-config-required", "plain", lambda d: _epp(d) or d["spec"]["components"][-1].pop("eppConfig")),
        ("epp-configmap-name", "plain", lambda d: _epp(d, eppConfig={"configMapRef": {"name": "", "key": "epp.yaml"}})),
        ("frontend-sidecar-no-template", "plain", lambda d: f(d).pop("podTemplate") and f(d).update(frontendSidecar="main")),
        ("frontend-sidecar-empty", "plain", lambda d: w(d).update(frontendSidecar="")),
        ("frontend-sidecar-unknown", "plain", lambda d: w(d).update(frontendSidecar="sidecar")),
        ("gms-type", "plain", lambda d: f(d).update(experimental=GMS) or _main_of(f(d)).update(resources={"limits": {"nvidia.com/gpu": "1"}})),
        ("gms-gpu", "single", lambda d: w(d).update(experimental=GMS) or _main_of(w(d)).pop("resources")),
        ("gms-client-duplicate", "single", lambda d: w(d).update(experimental={"gpuMemoryService": {"extraClientContainers": ["main", "main"]}})),
        ("gms-client-unknown", "single", lambda d: w(d).update(experimental={"gpuMemoryService": {"extraClientContainers": ["other"]}})),
        ("failover-needs-gms", "single", lambda d: _ann(d, "nvidia.com/dynamo-kube-discovery-mode", "container") or w(d).update(experimental={"failover": {}})),
        ("failover-mode-mismatch", "single", lambda d: w(d).update(experimental={"gpuMemoryService": {"mode": "InterPod"}, "failover": {"mode": "IntraPod"}}) or _ann(d, "nvidia.com/dynamo-kube-discovery-mode", "container")),
        ("failover-interpod-gpu", "single", lambda d: w(d).update(experimental={"gpuMemoryService": {"mode": "InterPod"}, "failover": {"mode": "InterPod"}}) or _main_of(w(d)).pop("resources")),
        ("failover-gpu-unreadable", "single", lambda d: w(d).update(experimental={"gpuMemoryService": {"mode": "InterPod"}, "failover": {"mode": "InterPod"}}) or _main_of(w(d)).update(resources={"limits": {"nvidia.com/gpu": "1500m"}})),
        ("failover-type", "plain", lambda d: f(d).update(experimental={"gpuMemoryService": {"mode": "InterPod"}, "failover": {"mode": "InterPod"}}) or _main_of(f(d)).update(resources={"limits": {"nvidia.com/gpu": "1"}})),
        ("checkpoint-interpod-gms", "single", lambda d: w(d).update(experimental={"gpuMemoryService": {"mode": "InterPod"}, "checkpoint": {"enabled": True}})),
        ("checkpoint-failover", "single", lambda d: _ann(d, "nvidia.com/dynamo-kube-discovery-mode", "container") or w(d).update(experimental={"gpuMemoryService": {}, "failover": {}, "checkpoint": {"enabled": True}})),
        ("force-scaling-group-lws", "single", lambda d: _ann(d, "nvidia.com/enable-grove", "false") or w(d).update(experimental={"grove": {"forceScalingGroup": True}})),
        ("checkpoint-disabled", "single", lambda d: w(d).update(experimental={"checkpoint": {"enabled": True}})),
        ("checkpoint-gms-clients", "single", lambda d: w(d).update(experimental={"checkpoint": {"enabled": False, "job": {"gmsClientContainers": ["main"]}}})),
        ("checkpoint-gms-interpod", "single", lambda d: w(d).update(experimental={"gpuMemoryService": {"mode": "InterPod"}, "checkpoint": {"enabled": False, "job": {"gmsClientContainers": ["main"]}}})),
        ("image-required", "plain", lambda d: _main_of(w(d)).pop("image")),
        ("runtime-version-required", "plain", lambda d: _main_of(w(d)).update(image="my-registry/vllm-runtime:my-tag")),
        ("topology-root-required", "plain", lambda d: w(d).update(topologyConstraint={"packDomain": "rack"})),
        ("topology-pack-domain", "plain", lambda d: d["spec"].update(topologyConstraint={"clusterTopologyName": "t"})),
        ("kv-policy-name", "plain", lambda d: d["spec"].update(experimental={"kvTransferPolicy": {"clusterTopologyName": "Bad_Name", "domain": "rack"}})),
        ("kv-policy-lws", "plain", lambda d: _ann(d, "nvidia.com/enable-grove", "false") or d["spec"].update(experimental={"kvTransferPolicy": {"clusterTopologyName": "topo", "domain": "rack"}})),
        # 1.6 role rules
        ("roles-without-multinode", "roles", lambda d: w(d).pop("multinode")),
        ("roles-missing-worker", "roles", lambda d: _roles_of(d).pop()),
        ("roles-name", "roles", lambda d: _roles_of(d)[0].update(name="head")),
        ("roles-replicas", "roles", lambda d: _roles_of(d)[1].update(replicas=3)),
        ("roles-template-one-role", "roles", lambda d: _roles_of(d)[1].pop("podTemplate")),
        ("roles-and-component-template", "roles", lambda d: w(d).update(podTemplate=copy.deepcopy(_roles_of(d)[0]["podTemplate"]))),
        ("roles-main-missing", "roles", lambda d: _roles_of(d)[1]["podTemplate"]["spec"]["containers"][0].update(name="engine")),
        ("roles-main-image", "roles", lambda d: _roles_of(d)[1]["podTemplate"]["spec"]["containers"][0].pop("image")),
        ("roles-sidecar-image", "roles", lambda d: _roles_of(d)[0]["podTemplate"]["spec"]["containers"].append({"name": "side"})),
        ("roles-init-image", "roles", lambda d: _roles_of(d)[0]["podTemplate"]["spec"].update(initContainers=[{"name": "init"}])),
        ("roles-vllm-annotation", "roles", lambda d: _roles_of(d)[0]["podTemplate"].setdefault("metadata", {}).update(annotations={"nvidia.com/vllm-distributed-executor-backend": "bogus"})),
        ("roles-power-annotation", "roles", lambda d: _roles_of(d)[0]["podTemplate"].setdefault("metadata", {}).update(annotations={"dynamo.nvidia.com/gpu-power-limit": "300"})),
        ("roles-runtime-version", "roles", lambda d: [r["podTemplate"]["spec"]["containers"][0].update(image="my-registry/vllm-runtime:my-tag") for r in _roles_of(d)]),
        ("roles-frontend-sidecar", "roles", lambda d: w(d).update(frontendSidecar="sidecar")),
        ("roles-gms", "roles", lambda d: w(d).update(experimental={"gpuMemoryService": {}})),
        ("roles-failover", "roles", lambda d: _ann(d, "nvidia.com/dynamo-kube-discovery-mode", "container") or w(d).update(experimental={"failover": {}})),
        ("roles-old-planner", "roles", lambda d: d["spec"]["components"].append({"name": "planner", "type": "planner", "podTemplate": {"spec": {"containers": [{"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.5.0"}]}}})),
        ("roles-override", "roles", lambda d: _roles_of(d)[0].update(providerOverride={"apiVersion": "grove.io/v1alpha1", "value": {"replicas": 2, "topologyConstraint": {"packDomain": "rack"}}})),
        # v1alpha1 request fields
        ("alpha-pvc-name", "alpha", lambda d: d["spec"].update(pvcs=[{"create": False}])),
        ("alpha-mount-point", "alpha", lambda d: next(iter(d["spec"]["services"].values())).update(volumeMounts=[{"name": "v"}])),
        ("alpha-ingress-host", "alpha", lambda d: next(iter(d["spec"]["services"].values())).update(ingress={"enabled": True})),
        ("alpha-epp-config", "alpha", lambda d: d["spec"]["services"]["worker"].update(eppConfig={})),
        ("alpha-frontend-sidecar", "alpha", lambda d: d["spec"]["services"]["worker"].update(frontendSidecar={"image": "x:1.6.0"}) or d["spec"]["services"]["worker"]["extraPodSpec"].update(containers=[{"name": "sidecar-frontend", "image": "x:1.6.0"}])),
        ("alpha-num-shadows", "alpha", lambda d: d["spec"]["services"]["worker"].update(failover={"enabled": True, "mode": "intraPod", "numShadows": 2})),
        ("alpha-runtime-version", "alpha", lambda d: d["spec"]["services"]["worker"]["extraPodSpec"]["mainContainer"].update(image="my-registry/vllm-runtime:my-tag")),
        ("alpha-image", "alpha", lambda d: [s["extraPodSpec"]["mainContainer"].pop("image") for s in d["spec"]["services"].values() if s.get("componentType") == "worker"]),
    ]


def targeted() -> List[dict]:
    """One case per rule: ``{"id", "base", "edits", "text"}`` like ``cases``."""
    bases = {"plain": lambda: _gen_base(), "single": lambda: _single(_gen_base()),
             "roles": lambda: _gen_base(role_templates=True), "alpha": lambda: _gen_base("nvidia.com/v1alpha1")}
    out = []
    for rule, base, edit in _targets():
        doc = bases[base]()
        edit(doc)
        out.append({"id": f"rule-{rule}", "base": f"generate:{base}", "edits": [rule],
                    "text": json.dumps(doc, ensure_ascii=False) + "\n"})
    return out


# -- what the plugin writes: generate / upgrade outputs, recorded unedited (their verdict must be "ok") --
def write_spec(flags: dict) -> Any:
    """The GenerateSpec of a recorded ``flags`` dict (see ``writes16``)."""
    from kubectl_dynamo.commands import generate as g

    f = dict(flags)
    engines = [g.engine(*e) for e in f.pop("engines")]
    for key in ("leader_node_selector", "worker_node_selector"):
        f[key] = dict(f.get(key) or {})
    if f.get("compilation_cache"):
        f["compilation_cache"] = tuple(f["compilation_cache"])
    f.pop("upgrade", None)
    return g.GenerateSpec(engines=engines, **f)


def write_text(flags: dict) -> Optional[str]:
    """What generate (or generate in v1alpha1 then upgrade, when ``flags["upgrade"]``) writes today."""
    from kubectl_dynamo.commands import generate as g
    from kubectl_dynamo.commands import upgrade as u

    try:
        doc = g.build(write_spec(flags))
    except g.SpecError:
        return None
    if not flags.get("upgrade"):
        return json.dumps(doc, ensure_ascii=False) + "\n"
    opts = u.Options(role_templates=flags["upgrade"]["role_templates"],
                     topology_aliases=flags["upgrade"]["topology_aliases"], orchestrator=flags["orchestrator"],
                     operator_version=flags["operator_version"])
    try:
        text = u.upgrade_text(yaml.safe_dump(doc), opts).text
    except u.UpgradeError:
        return None
    return json.dumps(yaml.safe_load(text), ensure_ascii=False) + "\n"


def writes16(seed: int, count: int) -> List[dict]:
    """``count`` generate/upgrade outputs over their flag space at operator 1.6.0 (``base`` holds the
    flags as JSON, for ``write_text``)."""
    rng = random.Random(seed)
    out: List[dict] = []
    while len(out) < count:
        backend = rng.choice(["vllm", "sglang", "trtllm"])
        gpus = rng.choice([1, 2, 4, 8])
        disagg = rng.random() < 0.4
        engines = ([["prefill", rng.randint(1, 3), gpus, None, rng.choice([None, 2]), None],
                    ["decode", rng.randint(1, 4), gpus, None, None, rng.choice([None, 2])]] if disagg
                   else [["worker", rng.randint(1, 4), gpus, None, rng.choice([None, 2]), rng.choice([None, 2])]])
        role_templates, upgrade = rng.random() < 0.5, rng.random() < 0.3
        orchestrator = rng.choice(["grove", "lws"])
        flags: Dict[str, Any] = {
            "name": rng.choice(["llm", "ds-r1", "q"]), "backend": backend, "model": "Qwen/Qwen3-8B", "engines": engines,
            "frontend": rng.random() < 0.8, "orchestrator": orchestrator,
            "queue": rng.choice([None, "team-a"]) if orchestrator == "grove" else None,
            "role_templates": role_templates and not upgrade,
            "leader_node_selector": {"example.com/engine-role": "leader"} if role_templates and not upgrade and rng.random() < 0.5 else {},
            "compilation_cache": rng.choice([None, ["compile-cache", "/cache"]]),
            "shared_memory": rng.choice([None, "16Gi"]),
            "api_version": "nvidia.com/v1alpha1" if upgrade else rng.choice(["nvidia.com/v1beta1", "nvidia.com/v1beta1", "nvidia.com/v1alpha1"]),
            "operator_version": "1.6.0",
        }
        if upgrade:
            flags["upgrade"] = {"role_templates": role_templates, "topology_aliases": rng.random() < 0.5}
        text = write_text(flags)
        if text is None:
            continue
        out.append({"id": f"write16-{seed}-{len(out):05d}", "base": json.dumps(flags, sort_keys=True),
                    "edits": [], "text": text})
    return out
