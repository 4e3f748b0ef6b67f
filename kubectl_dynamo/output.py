"""The one renderer: every command hands its ``Result`` here; nothing else prints results.

``-o json|yaml`` print ``result.data`` (the documented contracts), ``-o name`` the objects the
result is about (as kubectl), ``table``/``wide`` the command's formatter. Colour only on a terminal and never
with NO_COLOR (decided by the ``Environment``).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Optional

from .environment import Environment
from .result import Result

FORMATS = ("table", "wide", "json", "yaml", "name")

_COLORS = {"error": "red", "warning": "yellow", "info": "cyan", "ok": "green"}


def paint(text: str, kind: str, color: bool) -> str:
    if not color or kind not in _COLORS:
        return text
    import click

    return click.style(text, fg=_COLORS[kind])


def to_yaml(data: Any) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, width=1 << 16)


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


def render(result: Result, fmt: str, env: Optional[Environment] = None) -> int:
    """Print ``result`` in ``fmt`` on ``env`` (the process's streams by default); return its exit code."""
    env = env or Environment.from_process()
    for note in result.notes:
        env.err(note)
    if result.verbatim or (result.text is not None and fmt == result.text_format):
        env.out(result.text or "", nl=False)
    elif fmt == "json":
        env.out(to_json(result.data))
    elif fmt == "yaml":
        env.out(to_yaml(result.data), nl=False)
    elif fmt == "name":  # as kubectl's -o name: one resource.group/name per line
        for name in result.names:
            env.out(name)
    else:
        text = result.table(result.data, fmt == "wide", env.colors) if result.table else to_yaml(result.data)
        env.out(text.rstrip("\n"))
    env.stdout.flush()
    return int(result.exit_code)


def grid(rows: Iterable[Iterable[Any]], headers: Iterable[str]) -> str:
    """A kubectl-style table: upper-case headers, columns separated by three spaces, no borders."""
    from tabulate import tabulate

    text = tabulate([[("-" if c is None else c) for c in r] for r in rows],
                    headers=[h.upper() for h in headers], tablefmt="plain", disable_numparse=True)
    return "\n".join(line.rstrip() for line in text.splitlines())


def yes_no(value: Optional[bool]) -> str:
    return "unknown" if value is None else ("yes" if value else "no")
