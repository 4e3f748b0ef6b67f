"""`generate dgd` writes what the operator admits and renders as upstream's examples do, and
round-trips through explain with no finding (issue 19, part 6).

tests/data/generate/grid.jsonl.xz holds, for a grid of generate flags (3 backends x 1 or 2 nodes x
aggregated or disaggregated x Grove or LWS x v1beta1 or v1alpha1), the DGD generate wrote, the
operator's admission verdict and the command and args of every main container the operator
renders (ai-dynamo/dynamo@2a6da14c, scripts/generate-goldens). When generate changes what it
writes, re-record with that script (the first assertion says so).
"""

from __future__ import annotations

import json
import lzma

import pytest

from tests.conftest import REPO
from tests.unit.test_bad_input import run_in_process

ROWS = [json.loads(line) for line in lzma.open(REPO / "tests/data/generate/grid.jsonl.xz", "rt", encoding="utf-8")]


def _containers(objects: list) -> dict:
    """{pod role: {command, args}} of the main containers in explain's --objects (Kubernetes shape)."""
    out = {}
    for obj in objects:
        if obj["kind"] == "PodCliqueSet":
            pods = [(c["name"], c["spec"]["podSpec"]) for c in obj["spec"]["template"]["cliques"]]
        elif obj["kind"] == "Deployment":
            pods = [(obj["metadata"]["name"], obj["spec"]["template"]["spec"])]
        else:
            t = obj["spec"]["leaderWorkerTemplate"]
            pods = [(obj["metadata"]["name"] + "-leader", t["leaderTemplate"]["spec"]),
                    (obj["metadata"]["name"] + "-worker", t["workerTemplate"]["spec"])]
        for name, pod in pods:
            main = next(c for c in pod["containers"] if c["name"] == "main")
            out[name] = {"command": main.get("command"), "args": main.get("args")}
    return out


@pytest.mark.parametrize("row", ROWS, ids=lambda r: "-".join(r["flags"][i] for i in (1, 5, 9, 11)) +
                         ("-disagg" if "--disaggregated" in r["flags"] else ""))
def test_generated_dgd_is_admitted_and_explained_as_the_operator_renders_it(row, tmp_path):
    code, text, err, _ = run_in_process(["generate", "dgd", "g", *row["flags"]])
    assert code == 0, err
    assert text == row["dgd"], "generate writes something else now: re-record with scripts/generate-goldens"
    provider = "lws" if "lws" in row["flags"] else "grove"
    assert row["admission"][provider]["ok"] and not row["render"][provider]["error"], row["admission"]
    path = tmp_path / "g.yaml"
    path.write_text(text)
    code, out, err, _ = run_in_process(["explain", "dgd", "-f", str(path), "--objects", "-o", "json",
                                        "--operator-version", "1.5.0"])
    result = json.loads(out)
    assert code == 0 and not [(f["code"], f["message"]) for f in result["findings"] if f["severity"] != "info"], out
    assert _containers(result["objects"]) == row["render"][provider]["containers"]
