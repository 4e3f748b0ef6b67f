"""How the recording scripts call the operator's own code, and how they write what it answers.

The two Go programs are built outside this repository from ai-dynamo/dynamo (tests/data/oracle/PROVENANCE.md):
ORACLE renders DGDs as the operator's reconcilers do (``-f FILE [-operator-version V]`` → JSON ``{"dgds": [...]}``
with a ``grove`` and an ``lws`` render per DGD); KDVALIDATE runs the operator's admission (``FILE...`` → one JSON
line per DGD: ``{"file", "name", "apiVersion", "grove": {"ok", "errors"}, "lws": {...}}``; exit 2 when a file
cannot be read or the CRD cannot be loaded). The scripts only take their paths on the command line.
"""
from __future__ import annotations

import gzip
import json
import lzma
import subprocess
from pathlib import Path
from typing import Iterable, List, Optional

# What a provider's render carries that no golden keeps: the stored DGD and the oracle's program trace.
UNRECORDED = ("storedDGD", "program")
ADMISSION_BATCH = 200  # files per KDVALIDATE process: far below the argument-length limit


class OracleFailed(Exception):
    """The Go program exited non-zero; the message ends with its stderr."""


def _run(argv: List[str], timeout: float) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise OracleFailed(f"{Path(argv[0]).name} exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return proc.stdout


def render(oracle: str, path: Path, operator_version: Optional[str] = None, timeout: float = 900) -> dict:
    """The oracle's whole answer for one file."""
    argv = [oracle, "-f", str(path)] + (["-operator-version", operator_version] if operator_version else [])
    return json.loads(_run(argv, timeout))


def admission(kdvalidate: str, paths: Iterable[Path], timeout: float = 600) -> List[dict]:
    """KDVALIDATE's line for every DGD of every file, in file order."""
    files = [str(p) for p in paths]
    lines: List[dict] = []
    for i in range(0, len(files), ADMISSION_BATCH):
        out = _run([kdvalidate, *files[i:i + ADMISSION_BATCH]], timeout)
        lines += [json.loads(x) for x in out.splitlines() if x.strip()]
    return lines


def slim(provider_render: dict) -> dict:
    return {k: v for k, v in provider_render.items() if k not in UNRECORDED}


def write_jsonl(path: Path, rows: Iterable[dict], *, sort_keys: bool = True, compact: bool = False) -> None:
    """One JSON document per line, compressed by the suffix (.gz reproducibly with mtime 0, .xz at its best)."""
    seps = (",", ":") if compact else None
    data = "".join(json.dumps(r, sort_keys=sort_keys, ensure_ascii=False, separators=seps) + "\n"
                   for r in rows).encode("utf-8")
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    elif path.suffix == ".xz":
        path.write_bytes(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))
    else:
        path.write_bytes(data)
