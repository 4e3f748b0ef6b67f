"""What a command may touch besides its arguments: streams, terminal, colour, clock, cluster, helm.

Core functions take an ``Environment`` instead of reading ``sys`` and ``os.environ`` themselves
(httpie's ``context.Environment``), so tests can hand them a terminal, a closed stdin or a fixed
clock. ``Environment.from_process()`` is the real one; ``cli.options.current_env()`` builds it once
per command run (not for ``--help``).
"""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime, timezone
from typing import IO, TYPE_CHECKING, Callable, Mapping, NamedTuple, Optional

if TYPE_CHECKING:  # the client imports `kubernetes`, which offline commands never load
    from kubectl_dynamo.cluster.client import Cluster, Target


def _real_cluster(target: Target) -> Cluster:
    from kubectl_dynamo.cluster.client import Cluster

    return Cluster(target)


def _isatty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def terminal_columns(environ: Mapping[str, str], stream: object) -> int:
    """COLUMNS when it is a positive number (the shell's, or the user's override), else the
    terminal's size; 0 when neither is known."""
    text = environ.get("COLUMNS", "").strip()
    if text.isdigit() and int(text) > 0:
        return int(text)
    try:
        return os.get_terminal_size(stream.fileno()).columns  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return 0


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class Environment(NamedTuple):  # not a dataclass: creating that class cost every command ~1 ms
    stdin: IO[str]
    stdout: IO[str]
    stderr: IO[str]
    stdin_isatty: bool = False
    stdout_isatty: bool = False
    stderr_isatty: bool = False
    environ: Mapping[str, str] = {}  # read only
    monotonic: Callable[[], float] = time.monotonic
    now: Callable[[], datetime] = _utc_now
    cluster_factory: Callable[[Target], Cluster] = _real_cluster
    columns: int = 0  # the terminal's width (0: unknown, or stdout is not a terminal)

    @classmethod
    def from_process(cls) -> Environment:
        tty = _isatty(sys.stdout)
        return cls(stdin=sys.stdin, stdout=sys.stdout, stderr=sys.stderr, stdin_isatty=_isatty(sys.stdin),
                   stdout_isatty=tty, stderr_isatty=_isatty(sys.stderr), environ=os.environ,
                   columns=terminal_columns(os.environ, sys.stdout) if tty else 0)

    @property
    def no_color(self) -> bool:
        # https://no-color.org: any non-empty value; TERM=dumb: a terminal without escape sequences
        return bool(self.environ.get("NO_COLOR")) or self.environ.get("TERM") == "dumb"

    @property
    def colors(self) -> bool:
        """Colour on stdout: only on a terminal, never with NO_COLOR or TERM=dumb."""
        return self.stdout_isatty and not self.no_color

    @property
    def table_width(self) -> Optional[int]:
        """The width tables are fitted to: the terminal's, None when piped (cells stay whole)."""
        return self.columns if self.stdout_isatty and self.columns > 0 else None

    def out(self, text: str = "", nl: bool = True) -> None:
        self.stdout.write(text + ("\n" if nl else ""))

    def err(self, text: str = "", nl: bool = True) -> None:
        self.stderr.write(text + ("\n" if nl else ""))
        self.stderr.flush()
