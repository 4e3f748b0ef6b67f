"""explain equals the operator's own rendering on generated DGDs nobody wrote down.

tests/data/generative/oracle-<origin>.jsonl.gz: DGDs drawn by tests/generative/dgd.py (seeded), kept
when the operator's own admission admits them, with what the operator's rendering code made of
them, for each provider (tests/data/generative/PROVENANCE.md; ``scripts/oracle-generated``
records them). The comparison is test_oracle_goldens' (tests/generative/compare.py): strict, after
Go's omitempty only; where the operator fails to render, explain must give an error finding.
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path
from typing import Dict, List

import pytest

from tests.generative import dgd as gen
from tests.generative.compare import check, records

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "generative"
SETS = sorted(DATA.glob("oracle-*.jsonl.gz"))
CHUNK = 250  # DGDs per test case: failures stay readable, the run stays parallelisable

_records = functools.cache(records)  # once per set, not once per chunk (check copies each input)


def _origin(path: Path) -> str:
    return path.name[len("oracle-"):-len(".jsonl.gz")]


def _chunks():
    for path in SETS:
        n = len(_records(path))
        for start in range(0, n, CHUNK):
            yield pytest.param(path, start, id=f"{_origin(path)}-{start // CHUNK}")


@pytest.mark.parametrize("path,start", list(_chunks()))
def test_explain_and_objects_match_operator(path: Path, start: int):
    origin = _origin(path)
    problems: List[str] = []
    for record in _records(path)[start:start + CHUNK]:
        for provider in ("grove", "lws"):
            if record["admitted"][provider]:  # else the operator's admission refuses it with this provider's gates
                problems += check(record, provider, origin)[0]
    assert not problems, "\n".join(problems[:40])


def test_recorded_sets_are_large_and_both_versions():
    counts: Dict[str, int] = {_origin(p): len(_records(p)) for p in SETS}
    assert set(counts) == {"1.5.0", "1.6.0"}, counts
    assert all(n >= 1000 for n in counts.values()), counts


def test_recorded_inputs_are_the_generators():
    """The goldens' inputs are what the seeded generator draws today (re-record after changing it)."""
    for path in SETS:
        records = _records(path)
        for record in records[:: max(1, len(records) // 50)]:
            assert gen.draw(record["seed"], record["index"], _origin(path)) == record["input"], record["index"]


def _fields() -> List[str]:
    with open(DATA / "render-fields.tsv", encoding="utf-8") as f:
        rows = [r for r in csv.reader((line for line in f if not line.startswith("#")), delimiter="\t")]
    return [r[0] for r in rows[1:]]


def test_generator_reaches_every_field_the_rendering_reads():
    """Every field in render-fields.tsv (the operator's Go files that read it, with commits) occurs in
    the generated DGDs of the recorded seed, at origin 1.5 and 1.6 together."""
    seen = set()
    for origin in ("1.5.0", "1.6.0"):
        for i in range(1500):
            doc = gen.draw(1, i, origin)
            if doc["apiVersion"].endswith("v1beta1"):
                seen |= gen.paths(doc)
    fields = _fields()
    assert len(fields) > 100
    missing = [f for f in fields if f not in seen]
    assert not missing, missing


def test_generator_is_deterministic_and_seeded():
    assert gen.draw(7, 3, "1.6.0") == gen.draw(7, 3, "1.6.0")
    assert [gen.draw(7, i, "1.5.0") for i in range(20)] != [gen.draw(8, i, "1.5.0") for i in range(20)]
