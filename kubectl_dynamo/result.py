"""What every command returns: data for the documented contract, plus how to show it and how it ends.

Core functions build a ``Result``; ``output.render`` is the only place that prints it and decides
the exit code (pipx's ``result.py``). ``data`` is the ``-o json|yaml`` contract, typed per command
(``Result[DetectData]``: the TypedDicts and JSON Schemas of ``kubectl_dynamo.contracts``); ``table``
turns it into text for humans; ``names`` are the objects it is about, as ``resource.group/name``
(``-o name``); ``text`` is a verbatim YAML document (a manifest that keeps its comments) printed for
``-o yaml``; ``notes`` go to stderr before the output.
"""

from __future__ import annotations

from typing import Callable, Generic, Optional, Sequence, TypeVar

from kubectl_dynamo.errors import ExitCode

D = TypeVar("D")
# (data, wide, color, width) -> text; width: the terminal's columns to fit, None for whole cells
Table = Callable[[D, bool, bool, Optional[int]], str]


class Result(Generic[D]):
    """Not a dataclass (creating that class cost every command ~0.8 ms) nor a NamedTuple (a generic
    NamedTuple needs Python 3.11; and creating one costs ~0.27 ms, this class ~0.01 ms)."""

    __slots__ = ("data", "exit_code", "junit", "names", "notes", "table", "text", "verbatim")

    def __init__(self, data: D, table: Optional[Table[D]] = None, exit_code: int = ExitCode.OK,
                 names: Sequence[str] = (), text: Optional[str] = None, notes: Sequence[str] = (),
                 verbatim: bool = False, junit: Optional[Callable[[D], str]] = None) -> None:
        self.data = data
        self.table = table
        self.exit_code = exit_code
        self.names = names
        self.text = text
        self.notes = notes
        self.verbatim = verbatim  # print `text` whatever -o says (a diff)
        self.junit = junit  # -o junit (doctor, explain): data -> JUnit XML
