"""Render-time refusals predicted (issue 33, item 2): explain says the operator's rendering refuses a DGD
exactly where the operator's own rendering code refuses it, with the operator's reason.

Judged on every recorded input, both providers, where the operator's admission took it:
tests/data/generative/refusals-1.5.0.jsonl.gz (DGDs steered into the render path's error returns by
tests/generative/dgd.py ``draw_refusal``: one refusal or a near miss each) and the whole-API sets
oracle-1.5.0 / oracle-1.6.0 (tests/data/generative/PROVENANCE.md). The error returns and the finding
each becomes are listed in tests/data/generative/render-refusals.tsv (Go file and commit).
"""

from __future__ import annotations

import csv
import functools
import gzip
from pathlib import Path
from typing import List

import pytest

from tests.generative import dgd as gen
from tests.generative.compare import (
    RENDER_REFUSAL_CODES,
    carries_operator_message,
    check,
    operator_refuses,
    records,
    refusal_agreement,
)

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "generative"
REFUSALS = DATA / "refusals-1.5.0.jsonl.gz"
SETS = [REFUSALS, DATA / "oracle-1.5.0.jsonl.gz", DATA / "oracle-1.6.0.jsonl.gz"]
CHUNK = 200

_records = functools.cache(records)


def _origin(path: Path) -> str:
    return path.name.split("-", 1)[1][: -len(".jsonl.gz")]


def _count(path: Path) -> int:
    # at collection, without holding the records: every test process forks children (test_bad_input)
    # whose peak RSS counts what the parent holds
    with gzip.open(path, "rb") as f:
        return sum(1 for _ in f)


def _chunks():
    for path in SETS:
        for start in range(0, _count(path), CHUNK):
            yield pytest.param(path, start, id=f"{path.name.split('.jsonl')[0]}-{start // CHUNK}")


@pytest.mark.parametrize("path,start", list(_chunks()))
def test_explain_says_refused_exactly_where_the_operator_refuses(path: Path, start: int):
    origin = _origin(path)
    problems: List[str] = []
    for record in _records(path)[start:start + CHUNK]:
        for provider in ("grove", "lws"):
            if not record["admitted"][provider]:
                continue
            refuses, says, findings = refusal_agreement(record, provider, origin)
            name = f"{record['input']['metadata']['name']}[{provider}]"
            if refuses and not says:
                problems.append(f"{name}: the operator refuses ({operator_refuses(record[provider])[0][:200]}), "
                                "explain does not say so")
            elif says and not refuses:
                problems.append(f"{name}: explain says the operator refuses ({findings[0]['message'][:200]}), "
                                "it renders")
            elif refuses and not carries_operator_message(operator_refuses(record[provider])[0], findings):
                problems.append(f"{name}: explain's reason {[f['message'][:150] for f in findings]} is not the "
                                f"operator's ({operator_refuses(record[provider])[0][:200]})")
    assert not problems, "\n".join(problems[:30])


@pytest.mark.parametrize("start", range(0, _count(REFUSALS), CHUNK))
def test_the_refusal_set_renders_as_the_operator_does(start: int):
    problems: List[str] = []
    for record in _records(REFUSALS)[start:start + CHUNK]:
        for provider in ("grove", "lws"):
            if record["admitted"][provider]:
                problems += check(record, provider, "1.5.0")[0]
    assert not problems, "\n".join(problems[:30])


def _table() -> List[dict]:
    with open(DATA / "render-refusals.tsv", encoding="utf-8") as f:
        return list(csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t"))


def test_every_steered_refusal_is_reached_and_refused_in_the_recorded_set():
    """Each kind of draw_refusal (a row of render-refusals.tsv) occurs in the recorded set where the
    admission took it; every one but the near miss makes the operator refuse at least once."""
    kinds = {k: [0, 0] for k in gen.REFUSALS}
    for record in _records(REFUSALS):
        kind = record["input"]["metadata"]["name"].split("-", 1)[1]
        if kind not in kinds:
            continue
        for provider in ("grove", "lws"):
            if record["admitted"][provider]:
                kinds[kind][0] += 1
                kinds[kind][1] += bool(operator_refuses(record[provider]))
    assert all(seen >= 5 for seen, _ in kinds.values()), kinds
    assert all(refused for k, (_, refused) in kinds.items() if k != "near-miss"), kinds
    steered = {row["steer"] for row in _table()}
    assert set(gen.REFUSALS) - {"near-miss"} <= steered


def test_the_table_names_findings_the_catalogue_has():
    from kubectl_dynamo.findings.catalogue import entry

    rows = _table()
    assert len(rows) >= 20
    for row in rows:
        code = row["explain_finding"].split(" ")[0]
        assert entry(code).code == code, row
        assert row["commit"] == "2a6da14c" and row["go_file"].startswith("internal/"), row
    assert {r["explain_finding"].split(" ")[0] for r in rows} >= RENDER_REFUSAL_CODES


def test_recorded_refusal_inputs_are_the_generators():
    for record in _records(REFUSALS)[::20]:
        assert gen.draw_refusal(record["seed"], record["index"], "1.5.0") == record["input"], record["index"]
