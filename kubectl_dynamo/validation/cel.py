"""The DGD CRD's CEL rules (``x-kubernetes-validations``), evaluated as the API server does on CREATE.

There is no CEL interpreter here: the CRD has a few dozen rules, each written once below in Python,
keyed by its exact text (ai-dynamo/dynamo ``deploy/operator/config/crd/bases/
nvidia.com_dynamographdeployments.yaml`` @2a6da14c, bundled in ``data/crds/``). A unit test checks
that every rule of the bundled CRD has its function, so a CRD update with a new rule fails there
instead of passing silently. The API server runs the rules after structural defaulting and skips
*transition rules* (those reading ``oldSelf`` without ``optionalOldSelf``) on CREATE; with
``optionalOldSelf`` on CREATE, ``oldSelf.hasValue()`` is false.

A rule that cannot be evaluated (a value of the wrong type: ``quantity()`` of an integer) refuses
the object, as CEL's runtime errors do (``RuleError``).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Optional

# apimachinery resource.ParseQuantity's grammar (the CRD's quantity pattern): sign, digits, suffix
_QUANTITY = re.compile(r"^([+-]?)((?:[0-9]+(?:\.[0-9]*)?)|(?:\.[0-9]+))((?:[KMGTPE]i)|[numkMGTPE]|(?:[eE][+-]?(?:(?:[0-9]+(?:\.[0-9]*)?)|(?:\.[0-9]+))))?$")


class RuleError(Exception):
    """CEL's runtime error: the rule refuses the object with this reason."""


def _has(obj: Any, key: str) -> bool:
    if not isinstance(obj, dict):
        raise RuleError(f"invalid data, expected a map for the provided schema with type=object (field {key})")
    return key in obj


def _get(obj: Any, key: str) -> Any:
    if not _has(obj, key):
        raise RuleError(f"no such key: {key}")
    return obj[key]


def _size(value: Any) -> int:
    if not isinstance(value, (list, dict, str)):
        raise RuleError(f"no such overload: size({type(value).__name__})")
    return len(value)


def _lower_ascii(value: Any) -> str:
    if not isinstance(value, str):
        raise RuleError(f"no such overload: lowerAscii({type(value).__name__})")
    return "".join(c.lower() if c.isascii() else c for c in value)


def _quantity_positive(value: Any) -> bool:
    if not isinstance(value, str):  # CEL's quantity() takes a string only
        raise RuleError(f"no such overload: quantity({'int' if isinstance(value, int) else type(value).__name__})")
    m = _QUANTITY.match(value)
    if not m:
        raise RuleError(f"quantity({value!r}): invalid quantity")
    return m.group(1) != "-" and any(ch in "123456789" for ch in m.group(2))  # sign and a non-zero digit


def _unique_names(items: Any) -> bool:
    named = [_lower_ascii(c["name"]) for c in items if isinstance(c, dict) and "name" in c]
    return len(named) == len(set(named))


def _exactly_one(a: str, b: str) -> Callable[[Any], bool]:
    return lambda s: _has(s, a) != _has(s, b)


GMS_MODES = {"v1alpha1": ("intraPod", "interPod"), "v1beta1": ("IntraPod", "InterPod")}


def _gms(intra: str, inter: str) -> Dict[str, Callable[[Any], bool]]:
    return {
        f"!has(self.extraClientContainers) || size(self.extraClientContainers) == 0 || self.mode == '{intra}'":
            lambda s: not _has(s, "extraClientContainers") or _size(s["extraClientContainers"]) == 0
            or _get(s, "mode") == intra,
        f"!has(self.extraClientPods) || size(self.extraClientPods) == 0 || self.mode == '{inter}'":
            lambda s: not _has(s, "extraClientPods") or _size(s["extraClientPods"]) == 0 or _get(s, "mode") == inter,
    }


# rule text -> its meaning on CREATE (None: a transition rule, not evaluated on CREATE)
RULES: Dict[str, Optional[Callable[[Any], bool]]] = {
    "oldSelf.hasValue() || !has(self.restart)": lambda s: not _has(s, "restart"),
    "self.filter(c, has(c.type) && c.type == 'epp').size() <= 1":
        lambda s: sum(1 for c in s if _has(c, "type") and c["type"] == "epp") <= 1,
    "self.all(c1, !has(c1.name) || self.filter(c2, has(c2.name) && c2.name.lowerAscii() == c1.name.lowerAscii())"
    ".size() == 1)": _unique_names,
    "!has(self.eppConfig) || (has(self.type) && self.type == 'epp')":
        lambda s: not _has(s, "eppConfig") or (_has(s, "type") and s["type"] == "epp"),
    "!has(self.minAvailable) || (has(self.replicas) && self.replicas == 0) || self.minAvailable <= (has(self.replicas) "
    "? self.replicas : 1)":
        lambda s: not _has(s, "minAvailable") or (_has(s, "replicas") and s["replicas"] == 0)
        or s["minAvailable"] <= (s["replicas"] if _has(s, "replicas") else 1),
    "!has(oldSelf.minAvailable) || (has(self.minAvailable) && self.minAvailable == oldSelf.minAvailable)": None,
    "has(self.configMapRef) != has(self.config)": _exactly_one("configMapRef", "config"),
    "!has(self.job) || !has(self.checkpointRef) || size(self.checkpointRef) == 0":
        lambda s: not _has(s, "job") or not _has(s, "checkpointRef") or _size(s["checkpointRef"]) == 0,
    **_gms(*GMS_MODES["v1alpha1"]), **_gms(*GMS_MODES["v1beta1"]),
    "!has(self.extraClientPods) || size(self.extraClientPods) == 0":
        lambda s: not _has(s, "extraClientPods") or _size(s["extraClientPods"]) == 0,
    '!("nvidia.com/vllm-distributed-executor-backend" in self) || '
    'self["nvidia.com/vllm-distributed-executor-backend"].lowerAscii() in ["mp", "ray"]':
        lambda s: "nvidia.com/vllm-distributed-executor-backend" not in s
        or _lower_ascii(s["nvidia.com/vllm-distributed-executor-backend"]) in ("mp", "ray"),
    'self.name == "main" || (has(self.image) && self.image != "")':
        lambda s: _get(s, "name") == "main" or (_has(s, "image") and s["image"] != ""),
    'has(self.image) && self.image != ""': lambda s: _has(s, "image") and s["image"] != "",
    "(has(self.labelKey) && !has(self.clusterTopologyName)) || (!has(self.labelKey) && has(self.clusterTopologyName))":
        _exactly_one("labelKey", "clusterTopologyName"),
    "!has(self.enforcement) || self.enforcement != 'preferred' || has(self.preferredWeight)":
        lambda s: not _has(s, "enforcement") or s["enforcement"] != "preferred" or _has(s, "preferredWeight"),
    "!has(self.preferredWeight) || (has(self.enforcement) && self.enforcement == 'preferred')":
        lambda s: not _has(s, "preferredWeight") or (_has(s, "enforcement") and s["enforcement"] == "preferred"),
    "!self.contains('/') || self.split('/')[0].size() <= 253": lambda s: "/" not in s or len(s.split("/")[0]) <= 253,
    "!has(self.create) || self.create == false || (has(self.size) && has(self.storageClass) && "
    "has(self.volumeAccessMode))":
        lambda s: not _has(s, "create") or s["create"] is False
        or (_has(s, "size") and _has(s, "storageClass") and _has(s, "volumeAccessMode")),
    "(has(self.disabled) && self.disabled) || (has(self.size) && quantity(self.size).isGreaterThan(quantity('0')))":
        lambda s: (_has(s, "disabled") and s["disabled"] is True) or (_has(s, "size") and _quantity_positive(s["size"])),
}


def check(rule: dict, value: Any) -> Optional[str]:
    """The reason ``rule`` (an ``x-kubernetes-validations`` entry) refuses ``value`` on CREATE, or None.
    A rule without a function here is reported (a unit test keeps the table complete)."""
    text = " ".join(rule["rule"].split())
    if text not in RULES:
        return f"rule not modelled offline: {text}"
    fn = RULES[text]
    if fn is None or ("oldSelf" in text and not rule.get("optionalOldSelf") and not text.startswith("oldSelf.hasValue")):
        return None
    try:
        ok = fn(value)
    except RuleError as e:
        return f"{e} evaluating rule: {rule.get('message') or text}"
    except (TypeError, KeyError, AttributeError) as e:  # the value has the wrong shape: CEL's error too
        return f"invalid data ({e}) evaluating rule: {rule.get('message') or text}"
    return None if ok else (rule.get("message") or f"failed rule: {text}")
