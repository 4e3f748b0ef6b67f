"""The API server's structural defaulting from the bundled DGD CRD (``default:`` in the schema).

The API server applies it to the request version before conversion and to the storage version
(v1beta1) after it; the operator renders from the result, so e.g. a container port without a
protocol is rendered with ``protocol: TCP``. Only schema branches that hold a default are kept:
the trees of both versions are data (``data/dgd-defaults.json``, 9 KB), built by ``tree`` from
the validation schema when ``python -m kubectl_dynamo.validation.schema`` regenerates the data files (a unit
test keeps them in sync). Building them at run time walked the whole CRD (~13,000 calls).
"""

from __future__ import annotations

import copy
import functools
import json
import os
from typing import Any, Dict, Optional

# A defaults tree: {"d": {prop: default}, "p": {prop: tree}, "i": tree (array items), "a": tree (map values)}
Tree = dict
DEFAULTS_FILE = "dgd-defaults.json"
SOURCE = "the default: values of data/dgd-validation-*.json (the bundled CRD), by python -m kubectl_dynamo.validation.schema"


def tree(node: Any) -> Optional[Tree]:
    """The defaults tree of a validation schema node (None when no default is below it)."""
    if not isinstance(node, dict):
        return None
    out: Tree = {}
    props = node.get("properties") or {}
    defaults = {k: v["default"] for k, v in props.items() if isinstance(v, dict) and "default" in v}
    if defaults:
        out["d"] = defaults
    sub = {k: t for k, v in props.items() if (t := tree(v))}
    if sub:
        out["p"] = sub
    for key, short in (("items", "i"), ("additionalProperties", "a")):
        t = tree(node.get(key))
        if t:
            out[short] = t
    return out or None


def generate(validation: Dict[str, dict]) -> dict:
    """The content of ``data/dgd-defaults.json`` from the validation schemas of every version."""
    return {"source": SOURCE, "versions": {version: tree(root) for version, root in validation.items()}}


@functools.cache
def _trees() -> Dict[str, Optional[Tree]]:
    from kubectl_dynamo.data import DATA_DIR

    with open(os.path.join(DATA_DIR, DEFAULTS_FILE), encoding="utf-8") as f:
        return json.load(f)["versions"]


def _apply(obj: Any, branch: Tree) -> None:
    if isinstance(obj, list):
        if "i" in branch:
            for item in obj:
                _apply(item, branch["i"])
        return
    if not isinstance(obj, dict):
        return
    for key, value in branch.get("d", {}).items():
        if key not in obj:
            obj[key] = copy.deepcopy(value)
    for key, sub in branch.get("p", {}).items():
        if key in obj:
            _apply(obj[key], sub)
    if "a" in branch:
        for value in obj.values():
            _apply(value, branch["a"])


def apply(doc: dict, version: str) -> dict:
    """Default ``doc`` (a DGD of API version ``v1alpha1`` or ``v1beta1``) in place; returns it."""
    found = _trees().get(version)
    if found:
        _apply(doc, found)
    return doc
