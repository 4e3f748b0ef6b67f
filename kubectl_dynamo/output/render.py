"""The one renderer: every command hands its ``Result`` here; nothing else prints results.

``-o json|yaml`` print ``result.data`` (the documented contracts), ``-o name`` the objects the
result is about (as kubectl), ``table``/``wide`` the command's formatter. Colour only on a terminal and never
with NO_COLOR or TERM=dumb; ``table`` on a terminal is fitted to its width (both decided by the ``Environment``).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, List, Optional, Sequence

from kubectl_dynamo.environment import Environment
from kubectl_dynamo.result import Result

FORMATS = ("table", "wide", "json", "yaml", "name")
JUNIT = "junit"  # only for commands with a verdict per check (kube_options(junit=True))

_COLORS = {"error": "red", "warning": "yellow", "info": "cyan", "ok": "green"}


def paint(text: str, kind: str, color: bool) -> str:
    if not color or kind not in _COLORS:
        return text
    import click

    return click.style(text, fg=_COLORS[kind])


def to_yaml(data: Any) -> str:
    import yaml

    from kubectl_dynamo.output.yamlquote import safe_dumper

    return yaml.dump(data, Dumper=safe_dumper(), sort_keys=False, default_flow_style=False, width=1 << 16)


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
    elif fmt == "junit":
        if result.junit is None:
            from kubectl_dynamo.errors import UsageError

            raise UsageError("-o junit is for doctor and explain")
        env.out(result.junit(result.data))
    elif fmt == "json":
        env.out(to_json(result.data))
    elif fmt == "yaml":
        env.out(to_yaml(result.data), nl=False)
    elif fmt == "name":  # as kubectl's -o name: one resource.group/name per line
        for name in result.names:
            env.out(name)
    else:
        wide = fmt == "wide"
        width = None if wide else env.table_width  # -o wide: every cell whole, as piped
        text = result.table(result.data, wide, env.colors, width) if result.table else to_yaml(result.data)
        env.out(text.rstrip("\n"))
    env.stdout.flush()
    return int(result.exit_code)


# kubectl's printers write tables through a tabwriter with minwidth 6, tabwidth 4, padding 3
# (k8s.io/cli-runtime/pkg/printers/tabwriter.go: github.com/liggitt/tabwriter, Go's text/tabwriter
# plus RememberWidths, which only matters across the flushes of a watch): every column but the last
# is as wide as its widest cell + 3, and at least 6. tests/data/tabwriter holds Go's own output.
GAP = 3
MIN_CELL = 6
# Columns of prose: on a narrow terminal they wrap at word boundaries instead of being cut.
PROSE = frozenset({"message", "hint", "notes", "outcome", "reason", "fix"})
PROSE_EASY = 40  # prose gives way to this first, before any other column is cut
PROSE_MIN = 20  # and is never squeezed below this (or its longest word, if shorter)
CUT_MIN = 6  # nor is any other column cut below this (or its header)
KEEP = frozenset({"name", "code", "finding"})  # identifiers a user types again: never cut
ELLIPSIS = "…"


def grid(rows: Iterable[Iterable[Any]], headers: Iterable[str], width: Optional[int] = None,
         optional: Sequence[str] = ()) -> str:
    """A kubectl-style table: upper-case headers, no borders, left-aligned columns laid out as
    kubectl's tabwriter lays them out (above); a cell may span lines; colour codes take no width.

    ``width`` (the terminal's, only when stdout is one): when the table is wider, prose columns
    (``PROSE``) wrap at word boundaries first, then the widest other columns are cut with "…";
    the ``optional`` columns are left out (in that order) when the table cannot fit or they would be cut.
    ``None`` (piped, ``-o wide``): every cell and column whole."""
    names = list(headers)
    body = [[("-" if c is None else str(c)).strip() for c in r] for r in rows]
    while True:
        head = [h.upper() for h in names]
        prose = [h.lower() in PROSE for h in names]
        natural = natural_widths(head, body)
        if width is None:
            cols = natural
            break
        floors = _floors(names, body)
        cols = _fit(natural, floors, prose, width)
        drop = next((h for h in optional if h in names), None)
        if drop is None:
            break
        i = names.index(drop)  # left out when the table cannot fit, or it would be cut
        if table_width(floors) <= width and cols[i] == natural[i]:
            break
        names.pop(i)
        body = [r[:i] + r[i + 1:] for r in body]
    out = []
    for row in [head, *body]:
        cells = [_lines(text, w, p, width is not None) for text, w, p in zip(row, cols, prose)]
        for k in range(max(len(cell) for cell in cells)):
            out.append(row_line([cell[k] if k < len(cell) else "" for cell in cells], cols))
    return "\n".join(out)


def natural_widths(head: Sequence[str], body: Sequence[Sequence[str]]) -> List[int]:
    """Each column's width with every cell whole: its widest line (header included); colour codes
    take no width. (``get -w`` keeps the first table's, as kubectl's watch does.)"""
    return [max([_width(head[i])] + [_width(line) for r in body if i < len(r) for line in r[i].splitlines()])
            for i in range(len(head))]


def row_line(cells: Sequence[str], cols: Sequence[int]) -> str:
    """One line of a table in columns ``cols`` wide: every cell but the last padded to its column's
    width + GAP (at least MIN_CELL), the last as it is; trailing blanks dropped."""
    return "".join([_pad(c, max(w + GAP, MIN_CELL)) for c, w in zip(cells[:-1], cols)] + list(cells[-1:])).rstrip()


def table_width(cols: List[int]) -> int:
    return sum(max(w + GAP, MIN_CELL) for w in cols[:-1]) + (cols[-1] if cols else 0)


def _floors(names: List[str], body: List[List[str]]) -> List[int]:
    """How narrow each column may become: never below its header; prose to PROSE_MIN (or its
    longest word), other columns to CUT_MIN (or their widest cell)."""
    floors = []
    for i, name in enumerate(names):
        cells = [_COLOUR.sub("", r[i]) for r in body]
        if name.lower() in PROSE:
            longest = max([1] + [len(w) for c in cells for w in c.split()])
            floors.append(max(len(name), min(PROSE_MIN, longest)))
        else:
            widest = max([0] + [len(line) for c in cells for line in c.splitlines()])
            floors.append(max(len(name), widest if name.lower() in KEEP else min(CUT_MIN, widest)))
    return floors


def _fit(natural: List[int], floors: List[int], prose: List[bool], width: int) -> List[int]:
    """Column widths that fit ``width``: prose columns give way to PROSE_EASY first, then the
    other columns are cut (the one with the most to spare first), then prose to its floor."""
    cols = list(natural)
    for pick, floor in ((True, lambda i: max(floors[i], PROSE_EASY)), (False, lambda i: floors[i]),
                        (True, lambda i: floors[i])):
        while table_width(cols) > width:
            spare = [i for i, c in enumerate(cols) if prose[i] == pick and c > floor(i)]
            if not spare:
                break
            cols[max(spare, key=lambda j: cols[j] - floors[j])] -= 1
    return cols


_PAINTED = re.compile(r"(\x1b\[[0-9;]*m)(.*)(\x1b\[0m)", re.S)


def _lines(text: str, width: int, prose: bool, fit: bool) -> List[str]:
    """The lines of one cell in a column ``width`` wide: prose wrapped at word boundaries (never a
    word split), anything still wider cut with "…". Colour is kept on every line."""
    lines = text.splitlines() or [""]
    if not fit or all(_width(line) <= width for line in lines):
        return lines
    import textwrap  # only here and in fold: every command imports this module, few tables need wrapping

    out = []
    for line in lines:
        m = _PAINTED.fullmatch(line)
        start, plain, end = (m.group(1), m.group(2), m.group(3)) if m else ("", line, "")
        parts = (textwrap.wrap(plain, width, break_long_words=False, break_on_hyphens=False) or [""]) if prose \
            else [plain]
        out += [start + cut(p, width) + end for p in parts]
    return out


def cut(text: str, width: int) -> str:
    """``text`` (no colour codes) cut to ``width`` with "…" when longer."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + ELLIPSIS


def fold(text: str, width: Optional[int], indent: str = "") -> List[str]:
    """A line of prose for a terminal ``width`` wide: wrapped at word boundaries, later lines
    indented by ``indent``, a word still too wide cut with "…"; whole when ``width`` is None
    (piped, ``-o wide``)."""
    if width is None or _width(text) <= width:
        return [text]
    import textwrap

    # the line's own indent goes in as initial_indent: left as a leading chunk, textwrap drops it
    # (whitespace-only) when the first word does not fit after it
    body = text.lstrip(" ")
    lines = textwrap.wrap(body, width, initial_indent=text[: len(text) - len(body)], subsequent_indent=indent,
                          break_long_words=False, break_on_hyphens=False, drop_whitespace=True) or [text]
    # a single word wider than the terminal (a JSON argument) is cut: -o wide or a pipe shows it whole
    return [line if _width(line) <= width else cut(_COLOUR.sub("", line), width) for line in lines]


def folded(lines: Iterable[str], width: Optional[int]) -> str:
    """Every line of a block folded (continuations indented two past the line's own indent); an
    item of several lines (a ``grid``) is already laid out and kept as it is."""
    out: List[str] = []
    for line in lines:
        if "\n" in line:
            out.append(line)
            continue
        lead = line[: len(line) - len(line.lstrip(" "))]
        out += fold(line, width, lead + "  ")
    return "\n".join(out)


_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def _width(text: str) -> int:
    return len(_COLOUR.sub("", text))


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))


def yes_no(value: Optional[bool]) -> str:
    return "unknown" if value is None else ("yes" if value else "no")
