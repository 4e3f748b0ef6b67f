"""The API server's structural defaulting from the bundled DGD CRD (``default:`` in the schema).

The API server applies it to the request version before conversion and to the storage version
(v1beta1) after it; the operator renders from the result, so e.g. a container port without a
protocol is rendered with ``protocol: TCP``. Only schema branches that hold a default are kept
(built once per version from the validation schema, which loads in milliseconds).
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Optional

# A defaults tree: {"d": {prop: default}, "p": {prop: tree}, "i": tree (array items), "a": tree (map values)}
Tree = dict


def _tree(node: Any) -> Optional[Tree]:
    if not isinstance(node, dict):
        return None
    out: Tree = {}
    props = node.get("properties") or {}
    defaults = {k: v["default"] for k, v in props.items() if isinstance(v, dict) and "default" in v}
    if defaults:
        out["d"] = defaults
    sub = {k: t for k, v in props.items() if (t := _tree(v))}
    if sub:
        out["p"] = sub
    for key, short in (("items", "i"), ("additionalProperties", "a")):
        t = _tree(node.get(key))
        if t:
            out[short] = t
    return out or None


@functools.cache
def _tree_for(version: str) -> Optional[Tree]:
    from ..schema import validation_schema

    return _tree(validation_schema(version))


def _apply(obj: Any, tree: Tree) -> None:
    if isinstance(obj, list):
        if "i" in tree:
            for item in obj:
                _apply(item, tree["i"])
        return
    if not isinstance(obj, dict):
        return
    for key, value in tree.get("d", {}).items():
        if key not in obj:
            obj[key] = copy.deepcopy(value)
    for key, sub in tree.get("p", {}).items():
        if key in obj:
            _apply(obj[key], sub)
    if "a" in tree:
        for value in obj.values():
            _apply(value, tree["a"])


def apply(doc: dict, version: str) -> dict:
    """Default ``doc`` (a DGD of API version ``v1alpha1`` or ``v1beta1``) in place; returns it."""
    tree = _tree_for(version)
    if tree:
        _apply(doc, tree)
    return doc
