"""A small JSON-Schema validator for the keywords the DGD CRD schema uses.

``explain -f`` validates every manifest; importing ``jsonschema`` alone costs 50-90 ms, more than
the rest of a run. The CRD's structural schema (converted in ``schema.py``) uses only: type,
properties, additionalProperties, required, items, enum, pattern, anyOf, min/maxLength,
minimum/maximum, maxItems and maxProperties (a unit test checks that no other keyword appears),
and ``format`` int32/int64, kept for their ranges (the API server rejects a replicas of 2**31).
Messages follow jsonschema's wording, with long values shortened.

Each error carries its kind: ``type`` and ``range`` errors (a wrong type, an integer beyond its
format) are *structural*: code that reads the document would trip on them, so ``explain``
simulates nothing for such a document (see ``schema.gate``). Other errors, a missing required
key among them, leave the simulation to run best effort (see ``explain.explain_one``).
"""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Tuple

KEYWORDS = {"type", "properties", "additionalProperties", "required", "items", "enum", "pattern", "anyOf",
            "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems", "maxProperties", "default",
            "title", "$schema", "format", "x-kubernetes-validations", "x-kubernetes-list-type",
            "x-kubernetes-list-map-keys"}
# maxItems / maxProperties too: a DGD with 10,000 components is refused whole (the CRD allows 25), so
# neither its items nor a simulation of them are worth the seconds they cost
STRUCTURAL = {"type", "range", "maxItems", "maxProperties"}
_FORMAT_RANGE = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    # the API server decodes JSON numbers as int64 when they are whole and fit, else as float64
    # (apimachinery util/json): 10**30 or 1e30 is a number, not an integer
    "integer": lambda v: ((isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()))
    and -(2**63) <= v < 2**63,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "null": lambda v: v is None,
}
_PATTERNS: dict = {}

Error = Tuple[list, str, str]  # (path, message, kind)


def _type_ok(value, t) -> bool:
    return any(_TYPES[x](value) for x in t) if isinstance(t, list) else _TYPES[t](value)


def shorten(value, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (long values in messages)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _types_text(t) -> str:
    return ", ".join(repr(x) for x in t) if isinstance(t, list) else repr(t)


def errors(schema: dict, value, path: Optional[list] = None) -> Iterator[Error]:
    path = path or []
    t = schema.get("type")
    if t is not None and not _type_ok(value, t):
        yield path, f"{shorten(value)} is not of type {_types_text(t)}", "type"
        return  # the other keywords assume the type
    if "enum" in schema and value not in schema["enum"]:
        yield path, f"{shorten(value)} is not one of {schema['enum']!r}", "enum"
    if "anyOf" in schema and not any(not any(True for _ in errors(s, value, path)) for s in schema["anyOf"]):
        yield path, f"{shorten(value)} is not valid under any of the given schemas", "type"
    if isinstance(value, str):
        yield from _string(schema, value, path)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            yield path, f"{shorten(value)} is less than the minimum of {schema['minimum']!r}", "minimum"
        if "maximum" in schema and value > schema["maximum"]:
            yield path, f"{shorten(value)} is greater than the maximum of {schema['maximum']!r}", "maximum"
        bounds = _FORMAT_RANGE.get(schema.get("format") or "")
        if bounds is not None and not bounds[0] <= value <= bounds[1]:
            yield path, f"{shorten(value)} is out of the {schema['format']} range", "range"
    elif isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            yield path, f"{len(value)} items, more than the {schema['maxItems']} allowed", "maxItems"
            return
        if "minItems" in schema and len(value) < schema["minItems"]:
            yield path, f"{shorten(value)} is too short", "minItems"
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                yield from errors(schema["items"], item, path + [i])
    elif isinstance(value, dict):
        yield from _object(schema, value, path)
    if isinstance(value, list) and schema.get("x-kubernetes-list-type") in ("map", "set"):
        yield from _list_keys(schema, value, path)
    for rule in schema.get("x-kubernetes-validations") or ():
        from kubectl_dynamo.validation import cel

        reason = cel.check(rule, value)
        if reason is not None:
            yield path, reason, "cel"


def _list_keys(schema, value, path):
    """apiextensions ``listtype.ValidateListSetsAndMaps``: the keys of a list-map (every item's
    key fields) or the items of a list-set are unique."""
    keys = schema.get("x-kubernetes-list-map-keys") or []
    seen: dict = {}
    for i, item in enumerate(value):
        if schema["x-kubernetes-list-type"] == "map":
            if not isinstance(item, dict):
                continue
            key = repr([item.get(k) for k in keys])
        else:
            key = repr(item)
        if key in seen:
            yield path + [i], f"duplicate value {shorten(key)} (also item {seen[key]}: a list-{schema['x-kubernetes-list-type']} keeps one)", "duplicate"
        else:
            seen[key] = i


# Go's time.Parse(time.RFC3339, ...), as metav1.Time decodes a date-time
_RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _rfc3339(value: str) -> bool:
    import datetime

    m = _RFC3339.match(value)
    if not m:
        return False
    try:
        year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
        datetime.datetime(year, month, day, hour, minute, second)
    except ValueError:
        return False
    return True


def _string(schema, value, path):
    if schema.get("format") == "date-time" and not _rfc3339(value):
        yield path, f"{shorten(value)} is not an RFC 3339 date-time", "format"
    if "minLength" in schema and len(value) < schema["minLength"]:
        yield path, f"{shorten(value)} is too short", "minLength"
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        yield path, f"{shorten(value)} is too long", "maxLength"
    if "pattern" in schema:
        rx = _PATTERNS.get(schema["pattern"])
        if rx is None:
            rx = _PATTERNS[schema["pattern"]] = re.compile(schema["pattern"])
        if not rx.search(value):
            yield path, f"{shorten(value)} does not match {schema['pattern']!r}", "pattern"


def _object(schema, value, path):
    props = schema.get("properties") or {}
    for name in schema.get("required") or []:
        if name not in value:
            yield path, f"{name!r} is a required property", "required"
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        yield path, f"{len(value)} entries, more than the {schema['maxProperties']} allowed", "maxProperties"
        return
    extra = schema.get("additionalProperties", True)
    unknown = []
    for key, item in value.items():
        if key in props:
            yield from errors(props[key], item, path + [key])
        elif extra is False:
            unknown.append(key)
        elif isinstance(extra, dict):
            yield from errors(extra, item, path + [key])
    if unknown:
        listed = ", ".join(shorten(k) for k in sorted(unknown))
        yield path, f"unknown field(s) ({listed} {'was' if len(unknown) == 1 else 'were'} unexpected)", "unknown"


def validate(schema: dict, value) -> List[Error]:
    return list(errors(schema, value))
