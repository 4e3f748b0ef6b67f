"""What every command returns: data for the documented contract, plus how to show it and how it ends.

Core functions build a ``Result``; ``output.render`` is the only place that prints it and decides
the exit code (pipx's ``result.py``). ``data`` is the ``-o json|yaml`` contract; ``table`` turns it
into text for humans; ``names`` are the objects it is about, as ``resource.group/name`` (``-o name``);
``text`` is a verbatim YAML document (a manifest that keeps its comments) printed for ``-o yaml``; ``notes`` go to stderr before the output.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional, Sequence

from kubectl_dynamo.errors import ExitCode

# (data, wide, color, width) -> text; width: the terminal's columns to fit, None for whole cells
Table = Callable[[Any, bool, bool, Optional[int]], str]


class Result(NamedTuple):  # not a dataclass: creating that class cost every command ~0.8 ms
    data: Any
    table: Optional[Table] = None
    exit_code: int = ExitCode.OK
    names: Sequence[str] = ()
    text: Optional[str] = None
    notes: Sequence[str] = ()
    verbatim: bool = False  # print `text` whatever -o says (a diff)
    junit: Optional[Callable[[Any], str]] = None  # -o junit (doctor, explain): data -> JUnit XML
