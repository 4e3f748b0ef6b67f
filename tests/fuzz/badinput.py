"""The hand-written bad-input corpus (tests/data/bad-input/): one file per reproduced failure,
its first line ``# expect: explain=N upgrade=M`` (the exit codes of ``explain dgd -f`` and
``upgrade dgd -f``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

DIR = Path(__file__).resolve().parents[1] / "data" / "bad-input"


def files() -> List[Path]:
    return sorted(DIR.glob("*.yaml"))


def expected(path: Path) -> Dict[str, int]:
    first = path.read_bytes().split(b"\n", 1)[0].decode("ascii")
    found = dict(re.findall(r"(\w+)=(\d+)", first))
    if not first.startswith("# expect:") or not found:
        raise ValueError(f"{path.name}: the first line must be '# expect: explain=N upgrade=M'")
    return {k: int(v) for k, v in found.items()}


def cases() -> Iterator[Tuple[str, bytes]]:
    for path in files():
        yield f"bad-input/{path.name}", path.read_bytes()
