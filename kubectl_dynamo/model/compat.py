"""The platform's compatibility facts (``data/compatibility.json``): minimum versions per Dynamo
operator line, the operator's own go.mod pins, and version pairs known to break, each with its
upstream issue. ``checks/cluster.py`` judges the installed versions (``model/platform.detect``)
against them; ``markdown()`` is the generated section of docs/versions.md."""

from __future__ import annotations

import functools
import json
import os
from typing import Dict, List, Optional

from kubectl_dynamo.data import DATA_DIR
from kubectl_dynamo.operator import versions


@functools.lru_cache(maxsize=1)
def facts() -> dict:
    with open(os.path.join(DATA_DIR, "compatibility.json")) as f:
        return json.load(f)


def line_minimums(operator_version: Optional[str]) -> Optional[Dict[str, str]]:
    """{"kai": tag, "grove": tag} for the operator's line, None for an unreadable version."""
    v = versions.parse(operator_version)
    if v is None:
        return None
    key = "1.0" if v[:2] == (1, 0) else "1.1" if v[:2] < (1, 5) else "1.5" if v[:2] == (1, 5) else "1.6"
    return facts()["operatorLines"][key]


def in_range(version: Optional[str], bounds: dict) -> bool:
    """``version`` within [min, below) in the natural order of orchestrator tags."""
    if not version or versions.parse(version) is None:
        return False
    if "min" in bounds and not versions.tag_at_least(version, bounds["min"]):
        return False
    return not ("below" in bounds and versions.tag_at_least(version, bounds["below"]))


def broken_pairs(installed: Dict[str, Optional[str]]) -> List[dict]:
    """The known-broken entries every component of which is installed at a matching version."""
    return [b for b in facts()["knownBroken"]
            if all(in_range(installed.get(name), bounds) for name, bounds in b["when"].items())]


def _range(bounds: dict) -> str:
    parts = ([f">= {bounds['min']}"] if "min" in bounds else []) + ([f"< {bounds['below']}"] if "below" in bounds else [])
    return ", ".join(parts)


NAMES = {"grove": "Grove", "kai": "KAI Scheduler", "lws": "LWS", "volcano": "Volcano", "kubernetes": "Kubernetes",
         "dynamoOperator": "Dynamo operator"}


def markdown() -> str:
    """The compatibility section of docs/versions.md."""
    f = facts()
    lines = ["## Compatibility facts (checked by `detect` and `doctor`)", "",
             "Generated from `kubectl_dynamo/data/compatibility.json` (`scripts/gen-docs`).", "",
             "| Dynamo operator line | minimum Grove | minimum KAI Scheduler |", "|---|---|---|"]
    for key, row in f["operatorLines"].items():
        if key != "source":
            lines.append(f"| {key} | `{row['grove']}` | `{row['kai']}` |")
    lines += ["", f"Source: {f['operatorLines']['source']}.", "",
              f"- Kubernetes `{f['kubernetes']['minimum']}` or newer ({f['kubernetes']['minimumSource']}); "
              f"`{f['kubernetes']['platformChart']}` for {f['kubernetes']['platformChartSource']}.",
              f"- LWS `{f['lws']['minimum']}` or newer ({f['lws']['minimumSource']}); "
              f"`{f['lws']['disaggregatedSet']}` for DisaggregatedSet ({f['lws']['disaggregatedSetSource']}).", "",
              f"The operator's own pins ({f['operatorPins']['source']}):", "",
              "| Go module | pinned |", "|---|---|"]
    lines += [f"| `{k}` | `{v}` |" for k, v in f["operatorPins"].items() if k != "source"]
    lines += ["", "Known-broken combinations (`known-broken-versions`):", "",
              "| when | what breaks | upstream |", "|---|---|---|"]
    for b in f["knownBroken"]:
        when = "; ".join(f"{NAMES.get(k, k)} {_range(v)}" for k, v in b["when"].items())
        lines.append(f"| {when} | {b['what']} | {b['issue']} |")
    return "\n".join(lines) + "\n"
