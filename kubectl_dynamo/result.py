"""What every command returns: data for the documented contract, plus how to show it and how it ends.

Core functions build a ``Result``; ``output.render`` is the only place that prints it and decides
the exit code (pipx's ``result.py``). ``data`` is the ``-o json|yaml`` contract; ``table`` turns it
into text for humans; ``names`` are the objects it is about, as ``resource.group/name`` (``-o name``);
``text`` is a verbatim YAML document (a manifest that keeps its comments) printed for ``-o yaml``; ``notes`` go to stderr before the output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional

from .errors import ExitCode

Table = Callable[[Any, bool, bool], str]  # (data, wide, color) -> text


@dataclass
class Result:
    data: Any
    table: Optional[Table] = None
    exit_code: int = ExitCode.OK
    names: List[str] = field(default_factory=list)
    text: Optional[str] = None
    notes: List[str] = field(default_factory=list)
    verbatim: bool = False  # print `text` whatever -o says (a diff)
