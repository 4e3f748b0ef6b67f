"""Operator versions the simulation models, and semver comparison as the operator does it.

The operator compares origin versions with Masterminds semver: a pre-release such as
``1.6.0-rc1`` sorts *below* ``1.6.0``, and a missing or unparsable version disables every
origin-gated feature.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

NEWEST = "1.6.0"

_SEMVER = re.compile(
    r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$"
)

Version = Tuple[int, int, int, Tuple]


def parse(text: Optional[str]) -> Optional[Version]:
    """``"1.6.0-rc1"`` -> ``(1, 6, 0, ("rc1",))``; None when it is not semver."""
    if not text:
        return None
    m = _SEMVER.match(text.strip())
    if not m:
        return None
    pre = tuple(int(p) if p.isdigit() else p for p in m.group(4).split(".")) if m.group(4) else ()
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), pre


def _key(v: Version):
    major, minor, patch, pre = v
    # A release sorts above all of its pre-releases; numeric identifiers sort below strings.
    pre_key = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in pre)
    return (major, minor, patch, 1 if not pre else 0, pre_key)


def at_least(text: Optional[str], minimum: str) -> bool:
    """True iff ``text`` parses and is >= ``minimum`` (False for missing or invalid)."""
    v, m = parse(text), parse(minimum)
    return v is not None and m is not None and _key(v) >= _key(m)


def line(text: Optional[str]) -> Optional[str]:
    """The modelled line ("1.4", "1.5", "1.6") that governs an operator version."""
    v = parse(text)
    if v is None:
        return None
    major, minor = v[0], v[1]
    if (major, minor) < (1, 5):
        return "1.4"
    if (major, minor) == (1, 5):
        return "1.5"
    return "1.6"


def is_valid(text: Optional[str]) -> bool:
    return parse(text) is not None


def unmodelled(text: str) -> Optional[str]:
    """What is assumed for a valid operator version newer than any the simulation models, else None."""
    v, newest = parse(text), parse(NEWEST)
    if v is None or newest is None or _key(v) <= _key(newest):
        return None
    return (f"operator {text} is not modelled; the nearest modelled version is {NEWEST}, and what it renders, "
            f"admits and refuses is assumed for {text}")


def _natural(text: str):
    """Orchestrator tags such as ``v0.1.0-alpha.12-rc1``: numbers compare as numbers inside
    pre-release parts, and an ``rc`` of a pre-release sorts below it (strict semver would put the
    alphanumeric ``12-rc1`` above ``13``)."""
    v = parse(text)
    if v is None:
        return None
    tokens = []
    for part in ".".join(str(p) for p in v[3]).replace("-", ".").split("."):
        for tok in re.findall(r"\d+|[A-Za-z]+", part):
            tokens.append((0, int(tok), "") if tok.isdigit() else (1, 0, tok))
    # "rc" after a pre-release number: (alpha, 14, rc, 1) < (alpha, 14) -> mark the rc tail as lower.
    out: List[Tuple[int, int, str]] = []
    for tok in tokens:
        if tok[2] == "rc" and out:
            out.append((-1, 0, "rc"))
        else:
            out.append(tok)
    return (v[0], v[1], v[2], 1 if not v[3] else 0, tuple(out) + ((0.5, 0, ""),))


def tag_at_least(text: Optional[str], minimum: str) -> bool:
    """``at_least`` for orchestrator image tags (natural pre-release order)."""
    a, b = _natural(text or ""), _natural(minimum)
    return a is not None and b is not None and a >= b
