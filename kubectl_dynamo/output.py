"""The one renderer: every command hands its result here with a table formatter.

``-o json|yaml`` print the result itself (the documented contracts); ``table``/``wide`` call the
command's formatter, which returns text. Colour only on a terminal and never with NO_COLOR.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Callable, Optional

import click

FORMATS = ("table", "wide", "json", "yaml")

_COLORS = {"error": "red", "warning": "yellow", "info": "cyan", "ok": "green"}


def use_color(stream=None) -> bool:
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def paint(text: str, kind: str, color: bool) -> str:
    return click.style(text, fg=_COLORS.get(kind)) if color and kind in _COLORS else text


def to_yaml(data) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, width=1 << 16)


def to_json(data) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


def render(result, fmt: str, table: Optional[Callable[[object, bool, bool], str]] = None) -> None:
    """Write ``result`` to stdout in ``fmt``; ``table(result, wide, color) -> str`` for humans."""
    if fmt == "json":
        click.echo(to_json(result))
    elif fmt == "yaml":
        click.echo(to_yaml(result), nl=False)
    else:
        text = table(result, fmt == "wide", use_color()) if table else to_yaml(result)
        click.echo(text.rstrip("\n"))


def grid(rows, headers) -> str:
    """A kubectl-style table: upper-case headers, columns separated by three spaces, no borders."""
    from tabulate import tabulate

    text = tabulate([[("-" if c is None else c) for c in r] for r in rows],
                    headers=[h.upper() for h in headers], tablefmt="plain", disable_numparse=True)
    return "\n".join(line.rstrip() for line in text.splitlines())


def yes_no(value) -> str:
    return "unknown" if value is None else ("yes" if value else "no")
