"""The one finding type of every command (detect, explain, doctor, doctor --exec).

Its JSON form is part of each command's contract and always has the same six keys:
``{"code", "severity", "message", "hint", "component", "object"}`` (``component`` is the DGD
component it is about, or null; ``object`` is ``{"kind", "namespace", "name"}`` or null).

``doctor`` adds ``id`` (``identity``: stable across runs on the same state), ``dgd`` and ``cause``: null for a root finding, else ``{"code", "object"}`` of the
finding it follows from (e.g. ``group-incomplete`` under the ``controller-create-failed`` that
explains the missing pod). ``where`` (not in the JSON) says which DGD group a doctor finding is
about, so doctor can tie consequences to their cause (``doctor.link_causes``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from kubectl_dynamo.findings.catalogue import SEVERITIES, entry

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import Cause, FindingJson

RANK = {s: i for i, s in enumerate(SEVERITIES)}  # lower is more severe


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    message: str
    hint: str = ""
    component: Optional[str] = None
    object: Optional[Dict[str, Any]] = None
    cause: Optional[Cause] = None  # {"code", "object"} of the finding this one follows from
    # (namespace, dgd, component or None, group index or None): the group a doctor finding is about
    where: Optional[Tuple[Any, ...]] = field(default=None, compare=False)

    def __post_init__(self) -> None:
        allowed = entry(self.code).severities  # KeyError: a code missing from the catalogue is a bug
        if self.severity not in allowed:
            raise ValueError(f"{self.code} is reported as {self.severity}; the catalogue allows {allowed}")

    def as_json(self) -> FindingJson:
        return {"code": self.code, "severity": self.severity, "message": self.message, "hint": self.hint,
                "component": self.component, "object": self.object}

    def at(self, obj: Optional[Dict[str, Any]]) -> Finding:
        """The same finding about another object (doctor names the object it found the problem on)."""
        return replace(self, object=obj)

    def caused_by(self, other: Finding) -> Finding:
        cause: Cause = {"code": other.code, "object": other.object}
        return replace(self, cause=cause)


def finding(code: str, message: str, hint: Optional[str] = None, *, severity: Optional[str] = None,
            component: Optional[str] = None, obj: Optional[Dict[str, Any]] = None) -> Finding:
    """A finding with the catalogue's severity (unless one of its ``also`` severities is given) and,
    when no specific hint is known, the catalogue's fix."""
    e = entry(code)
    return Finding(code, severity or e.severity, message, e.fix if hint is None else hint, component, obj)


def _ref(obj: Optional[Dict[str, Any]]) -> Optional[List[Any]]:
    return None if obj is None else [obj.get("kind"), obj.get("namespace"), obj.get("name")]


def identity(f: Finding) -> str:
    """A finding's stable id: its code and a digest of what it is about (object, component, DGD group)
    and of its cause, never of its message (which may count pods or ages). The same state gives the
    same id run after run, so an agent or ``doctor --since`` can follow one finding over time."""
    import hashlib
    import json

    cause = None if f.cause is None else [f.cause["code"], _ref(f.cause["object"])]
    key = json.dumps([f.code, _ref(f.object), f.component, list(f.where) if f.where else None, cause],
                     separators=(",", ":"), default=str)
    return f"{f.code}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def at_least(severity: str, threshold: str) -> bool:
    return RANK[severity] <= RANK[threshold]


def worst_first(f: Finding) -> tuple:
    return (RANK[f.severity], f.code)
