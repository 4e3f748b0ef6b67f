"""Go's ``encoding/json`` output for a value of a known Go type (what the operator hashes).

The layout (field order, json names, ``omitempty``, ``inline``, field types) of
``v1beta1.DynamoComponentDeploymentSpec`` and every type it reaches is data:
``data/go-layout.json`` (see ``data/GO-LAYOUT.md``). Encoding rules of Go 1.x ``encoding/json``:
struct fields in declaration order, inlined structs spliced in, ``omitempty`` drops false, 0,
"", nil pointers and empty slices/maps (never structs), ``omitzero`` a zero value, maps sorted by key, ``<``, ``>``, ``&``,
U+2028 and U+2029 escaped. ``resource.Quantity`` marshals to its canonical string,
``IntOrString`` to its int or string, a zero ``metav1.Time`` to null.
"""

from __future__ import annotations

import functools
import json
import re
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, InvalidOperation, Overflow, localcontext
from json.encoder import encode_basestring
from typing import Any, Dict, List


@functools.cache
def layout() -> Dict[str, Any]:
    from kubectl_dynamo.data import DATA_DIR  # a plain path: importlib.resources cost explain -f ~5 %

    with open(f"{DATA_DIR}/go-layout.json", encoding="utf-8") as f:
        return json.load(f)


_HTML = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _string(s: str) -> str:
    return encode_basestring(s).translate(_HTML)


_QTY = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([numkMGTPE])|[eE]([+-]?\d+))?$")
_BIN = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DEC = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def quantity(value: Any) -> str:
    """``resource.Quantity``'s canonical form: binary suffixes stay binary when exact, decimal
    values get the largest SI suffix with an integer mantissa (``1000m`` -> ``1``, ``1500`` stays)."""
    text = str(value).strip()
    m = _QTY.match(text)
    if not m:
        return text
    # exact for any quantity the API server accepts (a 30-digit GPU count); beyond what a decimal
    # of 400 digits holds (1e45678) the text is kept rather than raising
    try:
        with localcontext(Context(prec=400, Emax=MAX_EMAX, Emin=MIN_EMIN)):
            return _canonical(*m.groups())
    except (InvalidOperation, Overflow):
        return text


def _canonical(number: str, binary: Any, decimal: Any, exponent: Any) -> str:
    if binary:
        total = Decimal(number) * (2 ** _BIN[binary])
        if total == total.to_integral_value() and total != 0:
            n, power = int(total), 0
            while n % 1024 == 0 and power < 60:
                n //= 1024
                power += 10
            if power:
                suffix = {v: k for k, v in _BIN.items()}[power]
                return f"{n}{suffix}"
            return str(n)
        return _decimal(total, "")
    if exponent is not None:
        return _decimal(Decimal(number) * Decimal(10) ** int(exponent), "e")
    return _decimal(Decimal(number) * Decimal(10) ** _DEC[decimal or ""], "")


def _decimal(total: Decimal, style: str) -> str:
    if total == 0:
        return "0"
    sign = "-" if total < 0 else ""
    total = abs(total)
    # Smallest multiple-of-3 exponent (down to nano, rounding up) with an integer mantissa, then
    # the largest exponent that keeps the mantissa integral.
    exp = -9
    mantissa = (total * Decimal(10) ** 9).to_integral_value(rounding="ROUND_CEILING")
    while exp < 18 and mantissa % 1000 == 0:
        mantissa //= 1000
        exp += 3
    if style == "e":
        return f"{sign}{int(mantissa)}" + (f"e{exp}" if exp else "")
    suffix = {v: k for k, v in _DEC.items()}[exp]
    return f"{sign}{int(mantissa)}{suffix}"


def _zero(shape: str, types: Dict[str, List[list]]) -> str:
    if shape.startswith(("*", "[]", "map[")) or shape in ("any", "raw", "time", "bytes"):
        return "null"
    if shape == "string" or shape == "quantity":
        return '""' if shape == "string" else '"0"'
    if shape == "bool":
        return "false"
    if shape in types:
        return _struct({}, shape, types)
    if shape == "intorstring":
        return "0"
    if shape == "duration":
        return '"0s"'
    return "0"


def _empty(value: Any, shape: str) -> bool:
    if value is None:
        return True
    if shape.startswith("*"):
        return False
    if shape.startswith(("[]", "map[")) or shape == "bytes":
        return len(value) == 0
    if shape in ("string",):
        return value == ""
    if shape == "bool":
        return value is False
    if shape in ("int", "int32", "int64", "float64"):
        return value == 0
    return False


def _struct(value: dict, shape: str, types: Dict[str, List[list]]) -> str:
    parts = []
    for name, fshape, omitempty, omitzero, key, zero in _fields(shape):
        if name not in value or (omitzero and value[name] is None):
            if zero is not None:
                parts.append(key + zero)
            continue
        v = value[name]
        if omitempty and _empty(v, fshape):
            continue
        parts.append(key + encode(v, fshape))
    return "{" + ",".join(parts) + "}"


@functools.cache
def _fields(shape: str) -> List[tuple]:
    """(name, shape, omitempty, omitzero, '"name":', literal when absent or None) per field, inlined
    structs spliced in (Go's promotion rules; no conflicts in these types)."""
    types = layout()["types"]
    out: List[tuple] = []
    for spec in types[shape]:
        name, fshape, flags = spec[0], spec[1], spec[2:]
        if "inline" in flags:
            out += _fields(fshape.lstrip("*"))
            continue
        struct_like = fshape in types or fshape in ("quantity", "intorstring", "time")
        dropped = "omitzero" in flags or ("omitempty" in flags and not struct_like)  # omitempty keeps structs
        out.append((name, fshape, "omitempty" in flags, "omitzero" in flags, _string(name) + ":",
                    None if dropped else _zero(fshape, types)))
    return out


@functools.cache
def _kind(shape: str) -> tuple:
    """(kind, element shape) of a field type, computed once per shape."""
    if shape.startswith("*"):
        return _kind(shape[1:])
    if shape.startswith("[]"):
        return ("list", shape[2:])
    if shape.startswith("map["):
        return ("map", shape[4:])
    if shape in layout()["types"]:
        return ("struct", shape)
    return (shape, "")


def encode(value: Any, shape: str) -> str:
    if value is None:
        return "null"
    kind, elem = _kind(shape)
    if kind == "string":
        return _string(str(value))
    if kind == "struct":
        return _struct(value if isinstance(value, dict) else {}, elem, layout()["types"])
    if kind == "list":
        return "[" + ",".join(encode(v, elem) for v in value) + "]"
    if kind == "map":
        return "{" + ",".join(f"{_string(str(k))}:{encode(value[k], elem)}" for k in sorted(value)) + "}"
    if kind == "bool":
        return "true" if value else "false"
    if kind in ("int", "int32", "int64"):
        return str(int(value))
    if kind == "float64":
        return json.dumps(float(value))
    if kind == "quantity":
        return _string(quantity(value))
    if kind == "intorstring":
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else _string(str(value))
    # any / raw / time / duration / bytes: as given (compact JSON)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def decoded(value: Any, shape: str) -> Any:
    """``value`` as the operator holds it once decoded into Go type ``shape`` and written back:
    quantities canonical (``cpu: 4`` -> ``"4"``, ``2.5`` -> ``"2500m"``), zero values of
    ``omitempty`` fields gone (``initialDelaySeconds: 0``), pointer fields kept (``enableServiceLinks:
    false``), unknown fields dropped; nil pointers, maps and slices (JSON null) left out. A value the
    type cannot hold (only in input the API server refuses) is returned unchanged."""
    try:
        return _without_nulls(json.loads(encode(value, shape)))
    except (ValueError, TypeError, AttributeError, KeyError):
        return value


def sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` in hex, from CPython's built-in implementation when it has one: ``hashlib``
    loads OpenSSL first, ~3 ms of every explain -f for a digest of a few kilobytes."""
    try:
        from _sha2 import sha256  # CPython >= 3.12
    except ImportError:
        try:
            from _sha256 import sha256  # CPython 3.10, 3.11
        except ImportError:
            from hashlib import sha256
    return sha256(data).hexdigest()
