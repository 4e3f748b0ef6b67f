"""The check registry: the functions that produce the catalogue's findings.

A check is one small function registered with ``@check(code, scope)``; its severity, text and
fix live in ``catalogue.py``. It receives the facts of its scope and yields ``(message, hint)``
pairs (severity and code from the catalogue) or full ``Finding``s when it must name an object or
use one of the code's other severities.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from kubectl_dynamo.findings.catalogue import SEVERITIES as SEVERITIES
from kubectl_dynamo.findings.catalogue import entry
from kubectl_dynamo.findings.finding import RANK as RANK
from kubectl_dynamo.findings.finding import Finding, at_least  # noqa: F401  (re-exported for the checks)


@dataclass(frozen=True)
class Check:
    code: str
    scope: str  # "cluster" | "dgd"
    fn: Callable


# (scope, code) -> Check. One code may be checked at two scopes (e.g. kai-queue-missing for the
# cluster's default queue and for each DGD's own queue) with one meaning.
REGISTRY: Dict[Tuple[str, str], Check] = {}


def check(code: str, scope: str = "cluster") -> Callable[[Callable], Callable]:
    e = entry(code)  # KeyError: register the code in the catalogue first
    assert scope in e.scopes, f"{code} is not catalogued for scope {scope}"
    assert (scope, code) not in REGISTRY, f"duplicate check {scope}/{code}"

    def register(fn: Callable) -> Callable:
        REGISTRY[(scope, code)] = Check(code, scope, fn)
        return fn

    return register


def run(scope: str, facts: object, *, only: Optional[Iterable[str]] = None) -> List[Finding]:
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
                out.append(Finding(c.code, entry(c.code).severity, message, hint))
    return out


def codes() -> set:
    return {code for _, code in REGISTRY}
