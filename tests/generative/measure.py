"""Components exact, per provider, of explain against recorded oracle renders.

    python -m tests.generative.measure tests/data/generative/oracle-1.5.0.jsonl.gz [...] [--objects] [-v]
    python -m tests.generative.measure tests/data/oracle/goldens tests/data/oracle/goldens-1.6.0

Prints, per file and provider, DGDs and components compared, components exact (strict, as the
tests compare) and the most frequent problem classes.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from pathlib import Path

from kubectl_dynamo.commands import explain
from tests.generative.compare import check, compare_roles, records

PROVIDERS = ("grove", "lws")


def origin_of(path: Path) -> str:
    return re.search(r"(\d+\.\d+\.\d+)", path.name).group(1)  # type: ignore[union-attr]


def _class(problem: str) -> str:
    text = re.sub(r"^g\d+-\w+(\[\w+\])?(/[^/.:]+(/[^/.:]+)?)?", "", problem)
    text = re.sub(r"\[\d+\]", "[]", text)
    return re.sub(r"(operator|explain|only in [a-z ]+:) .*", r"\1 …", text)[:160]


def golden_dir(directory: Path, origin: str) -> None:
    """The same count over a tests/data/oracle/goldens* directory (one JSON per manifest)."""
    from kubectl_dynamo.inputs import manifests

    repo = Path(__file__).resolve().parents[2]
    for provider in PROVIDERS:
        compared = exact = 0
        for golden in sorted(directory.rglob("*.json")):
            if "hybrid" in golden.name:
                continue  # the 1.6 oracle's 1.5 TRT-LLM code: no evidence (PROVENANCE.md)
            recorded = json.loads(golden.read_text())
            docs = manifests.load(str(repo / recorded["file"]))
            items = {it["name"]: it for it in explain.explain_documents(
                docs, orchestrator=provider, operator_version=origin)["items"]}
            for dgd in recorded["dgds"]:
                _, c, e = compare_roles(dgd["name"], dgd[provider], items[dgd["name"]])
                compared += c
                exact += e
        print(f"{directory.name} {provider}: {exact}/{compared} components exact ({100.0 * exact / max(compared, 1):.2f} %)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--objects", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    for path in a.files:
        if path.is_dir():
            golden_dir(path, "1.5.0" if path.name == "goldens" else origin_of(path))
            continue
        origin = origin_of(path)
        for provider in PROVIDERS:
            dgds = compared = exact = 0
            classes: collections.Counter = collections.Counter()
            examples = {}
            for record in records(path):
                if not record["admitted"][provider]:
                    continue
                problems, c, e = check(record, provider, origin, a.objects)
                dgds += 1
                compared += c
                exact += e
                for p in problems:
                    classes[_class(p)] += 1
                    examples.setdefault(_class(p), p)
            pct = 100.0 * exact / compared if compared else 100.0
            print(f"{path.name} {provider}: {dgds} DGDs, {exact}/{compared} components exact ({pct:.2f} %)")
            for cls, n in classes.most_common(25 if a.verbose else 8):
                print(f"  {n:5d} {cls}")
                if a.verbose:
                    print(f"        e.g. {examples[cls][:400]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
