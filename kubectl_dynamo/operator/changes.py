"""What the operator changed in what the user wrote, per role (``explain --diff``).

Compares a role's pod template as authored (after v1alpha1 conversion) with the pod the operator
renders: the launch line (flags inserted, command wrapped or replaced), env added / changed /
removed, probes, ports, volume mounts, volumes, init containers, containers and pod fields.
Structured entries (``{"what", "name", "detail"}``) so the JSON stays stable; long scripts are
reported once per role as "replaced" with their length instead of being repeated.
"""

from __future__ import annotations

import difflib
import json
from typing import TYPE_CHECKING, List, Optional

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import TemplateChange

PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
LONG = 240  # a launch line longer than this is summarised, not quoted


def _main(template: Optional[dict]) -> dict:
    for c in ((template or {}).get("spec") or {}).get("containers") or []:
        if c.get("name") == "main":
            return c
    return {}


def _line(container: dict) -> List[str]:
    return [t for part in (container.get("command") or []) + (container.get("args") or []) for t in str(part).split()]


def _short(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return text if len(text) <= 80 else text[:77] + "..."


def _launch(before: dict, after: dict) -> List[TemplateChange]:
    if (before.get("command"), before.get("args")) == (after.get("command"), after.get("args")):
        return []
    old, new = _line(before), _line(after)
    wrapped = (after.get("command") or [])[-1:] == ["-c"] and (before.get("command") or [])[-1:] != ["-c"]
    if wrapped:  # sh -c "exec <quoted argv> <flags>": compare the words inside the script
        new = [t.strip('"') for t in new[len(after.get("command") or []):] if t != "exec"]
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    kept = sum(size for _, _, size in matcher.get_matching_blocks())
    if wrapped and old and kept == len(old):
        inserted = [" ".join(new[j1:j2]) for op, _, _, j1, j2 in matcher.get_opcodes() if op == "insert"]
        return [{"what": "command wrapped", "name": " ".join(after.get("command") or []),
                 "detail": "flags inserted: " + " ".join(inserted) if inserted else ""}]
    if old and kept < len(old):
        text = " ".join(new)
        detail = text if len(text) <= LONG else f"{len(new)} tokens: {text[:LONG]}..."
        return [{"what": "launch replaced", "name": "command/args", "detail": detail}]
    out: List[TemplateChange] = []
    for op, _, _, j1, j2 in matcher.get_opcodes():
        if op == "insert":
            out.append({"what": "flags inserted", "name": "args", "detail": " ".join(new[j1:j2])})
    if before.get("command") != after.get("command"):
        out.append({"what": "command changed", "name": "command",
                    "detail": f"{_short(before.get('command') or [])} -> {_short(after.get('command') or [])}"})
    return out


def _named(before: List[dict], after: List[dict], what: str) -> List[TemplateChange]:
    old = {str(x.get("name") or ""): x for x in before or []}  # the contract's name is a string
    new = {str(x.get("name") or ""): x for x in after or []}
    out: List[TemplateChange] = [{"what": f"{what} added", "name": n, "detail": _short({k: v for k, v in x.items() if k != "name"})}
           for n, x in new.items() if n not in old]
    out += [{"what": f"{what} changed", "name": n, "detail": f"{_short(old[n])} -> {_short(x)}"}
            for n, x in new.items() if n in old and old[n] != x]
    out += [{"what": f"{what} removed", "name": n, "detail": ""} for n in old if n not in new]
    return out


def role_changes(template: Optional[dict], pod_spec: dict) -> List[TemplateChange]:
    """The operator's changes to one role's authored pod template."""
    user_spec = (template or {}).get("spec") or {}
    before, after = _main(template), (pod_spec.get("containers") or [{}])[0]
    out = _launch(before, after)
    env_before = {e.get("name"): e for e in before.get("env") or []}
    for e in after.get("env") or []:
        if e.get("name") not in env_before:
            out.append({"what": "env added", "name": str(e.get("name") or ""),
                        "detail": _short(e.get("value", e.get("valueFrom", "")))})
        elif env_before[e["name"]] != e:
            out.append({"what": "env changed", "name": e["name"], "detail": _short(e.get("value", e.get("valueFrom")))})
    for probe in PROBES:
        if probe in before and probe not in after:
            out.append({"what": "probe removed", "name": probe, "detail": ""})
        elif probe in after and before.get(probe) != after[probe]:
            out.append({"what": "probe added" if probe not in before else "probe replaced", "name": probe,
                        "detail": _short(after[probe])})
    out += _named(before.get("ports") or [], after.get("ports") or [], "port")
    out += _named(before.get("volumeMounts") or [], after.get("volumeMounts") or [], "mount")
    if before.get("resources") != after.get("resources") and after.get("resources") is not None:
        out.append({"what": "resources changed", "name": "resources", "detail": _short(after.get("resources"))})
    if after.get("name") != "main":
        out.append({"what": "main container renamed", "name": str(after.get("name") or ""), "detail": ""})
    out += _named(user_spec.get("volumes") or [], pod_spec.get("volumes") or [], "volume")
    out += _named(user_spec.get("initContainers") or [], pod_spec.get("initContainers") or [], "init container")
    out += _named([c for c in user_spec.get("containers") or [] if c.get("name") != "main"],
                  (pod_spec.get("containers") or [])[1:], "container")
    for key in sorted(set(pod_spec) - {"containers", "initContainers", "volumes"}):
        if user_spec.get(key) != pod_spec[key]:
            out.append({"what": "pod field set" if key not in user_spec else "pod field changed", "name": key,
                        "detail": _short(pod_spec[key])})
    return out
