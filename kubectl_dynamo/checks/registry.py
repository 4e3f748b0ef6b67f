"""The check registry: every diagnosis has a stable kebab-case code and a severity.

A check is one small function registered with ``@check(code, severity, scope)``. It receives the
facts of its scope and yields ``(message, hint)`` pairs (or full ``Finding``s when it needs to
name an object). ``docs/checks.md`` documents every code; a unit test keeps the two in sync.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, Iterable, List, Optional

SEVERITIES = ("error", "warning", "info")
RANK = {s: i for i, s in enumerate(SEVERITIES)}  # lower is more severe


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    message: str
    hint: str = ""
    object: Optional[dict] = None  # {"kind", "namespace", "name"}

    def as_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Check:
    code: str
    severity: str
    scope: str  # "cluster" | "dgd" | "group"
    fn: Callable
    summary: str = field(default="")


# (scope, code) -> Check. One code may be checked at two scopes (e.g. kai-queue-missing for the
# cluster's default queue and for each DGD's own queue) with one meaning.
REGISTRY: Dict[tuple, Check] = {}


def check(code: str, severity: str, scope: str = "cluster"):
    assert severity in SEVERITIES, severity
    assert (scope, code) not in REGISTRY, f"duplicate check {scope}/{code}"

    def register(fn):
        summary = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else ""
        REGISTRY[(scope, code)] = Check(code, severity, scope, fn, summary)
        return fn

    return register


def run(scope: str, facts, *, only: Optional[Iterable[str]] = None) -> List[Finding]:
    """Run every check of ``scope`` over ``facts``, in registration order."""
    wanted = set(only) if only else None
    out: List[Finding] = []
    for c in REGISTRY.values():
        if c.scope != scope or (wanted is not None and c.code not in wanted):
            continue
        for item in c.fn(facts) or ():
            if isinstance(item, Finding):
                out.append(item)
            else:
                message, hint = item
                out.append(Finding(c.code, c.severity, message, hint))
    return out


def codes() -> set:
    return {code for _, code in REGISTRY}


def at_least(severity: str, threshold: str) -> bool:
    return RANK[severity] <= RANK[threshold]
