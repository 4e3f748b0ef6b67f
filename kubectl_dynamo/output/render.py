"""The one renderer: every command hands its ``Result`` here; nothing else prints results.

``-o json|yaml`` print ``result.data`` (the documented contracts), ``-o name`` the objects the
result is about (as kubectl), ``table``/``wide`` the command's formatter. Colour only on a terminal and never
with NO_COLOR (decided by the ``Environment``).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Optional

from kubectl_dynamo.environment import Environment
from kubectl_dynamo.result import Result

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
    import json

    return json.dumps(data, indent=2, ensure_ascii=False)


def render(result: Result[Any], fmt: str, env: Optional[Environment] = None) -> int:
    """Print ``result`` in ``fmt`` on ``env`` (the process's streams by default); return its exit code."""
    env = env or Environment.from_process()
    for note in result.notes:
        env.err(note)
    if result.verbatim or (result.text is not None and fmt == "yaml"):
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
    """A kubectl-style table: upper-case headers, no borders, left-aligned columns two spaces apart,
    each as wide as its widest cell and at least its header + 2; a cell may span lines; colour codes
    take no width. The layout of tabulate's "plain" format, which this replaced (importing tabulate
    cost ~30 ms of every run that printed a table; a unit test compares the two)."""
    head = [[h.upper()] for h in headers]
    body = [[("-" if c is None else str(c)).strip().splitlines() or [""] for c in r] for r in rows]
    widths = [max([_width(h[0]) + 2] + [_width(line) for r in body for line in r[i]]) for i, h in enumerate(head)]
    out = []
    for row in [head, *body]:
        for k in range(max(len(cell) for cell in row)):
            parts = [_pad(cell[k] if k < len(cell) else "", w) for cell, w in zip(row, widths)]
            out.append("  ".join(parts).rstrip())
    return "\n".join(out)


_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def _width(text: str) -> int:
    return len(_COLOUR.sub("", text))


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))


def yes_no(value: Optional[bool]) -> str:
    return "unknown" if value is None else ("yes" if value else "no")
