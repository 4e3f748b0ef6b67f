"""Every benchmark in ``benchmarks/`` at its smallest size, as its README documents it: a refactor
that breaks one fails here instead of rotting until the next measurement. Slow tier (minutes): each
starts what it measures itself (``doctor_scale.py`` its own sandbox with an audit log,
``startup.py`` a wheel in a fresh venv).

What is asserted is what the benchmarks' numbers rest on, not the numbers (no timed assertions):
the world is healthy except for the seeded faults, which give exactly their findings; the floor made
every request doctor made, in every round; rounds alternate who runs first and each pair is saved.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow

# 20 DGDs (10 at the first step) of 10 pods on groups of 3/4/5 nodes in 2 namespaces: every seeded
# fault (the highest is DGD 9) is in both steps.
SMALLEST = ["--steps", "100,200", "--pods-per-dgd", "10", "--group-sizes", "3,4,5", "--nodes", "24",
            "--namespaces", "2", "--runs", "2"]
# The faults doctor_scale.py seeds (DGD index -> what it breaks) and the finding each must give
# there, by the catalogue's definition of the code; the DGD is <backend>-<index> in team-<index % 2>.
SEEDED = {0: ("vllm", "wait-leader-configmap-missing"), 1: ("sglang", "worker-probes"),
          2: ("trtllm", "group-incomplete"), 3: ("vllm", "image-mismatch"), 4: ("sglang", "rank-duplicate"),
          6: ("vllm", "kai-queue-missing"), 9: ("vllm", "crash-loop")}


@pytest.mark.xfail(strict=False, reason=(
    "known, issue 42 open: the benchmark's world writes no DGD/DCD status as the operator would, so a minute "
    "after creation doctor rightly reports them never processed (controller-not-reconciling), and its "
    "warm-up run's request list differs from the measured runs' by one DCD LIST"))
def test_doctor_scale_smallest(tmp_path):
    out = tmp_path / "doctor_scale.md"
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "doctor_scale.py"), *SMALLEST, "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-6000:]
    data = json.loads(out.with_suffix(".json").read_text())
    want = sorted([f"team-{i % 2:02d}", f"{backend}-{i:03d}", code] for i, (backend, code) in SEEDED.items())
    assert [st["pods"] for st in data["steps"]] == [100, 199]  # the group-incomplete fault lacks one worker
    for st in data["steps"]:
        assert st["unexpected_findings"] == [] and st["missed_findings"] == [], st
        assert st["expected_findings"] == want  # and doctor found exactly those: nothing unexpected or missed
        assert st["same_requests"] and st["requests_differ"] == []
        assert [p["first"] for p in st["pairs"]] == ["doctor", "floor"]
        for p in st["pairs"]:
            assert p["floor_best"] == min(p["floor"]["sequential"], p["floor"]["prefetched"])
            assert p["ratio"]["doctor"] == pytest.approx(p["doctor"]["doctor"] / p["floor_best"])
    text = out.read_text()
    assert "## Every pair" in text and data["commit"] in text


def test_startup_smallest():
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "startup.py"), "--runs", "1"], cwd=REPO,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-4000:]
    for label in ("kubectl --help", "wheel: --help", "wheel: version --client", "wheel: explain dgd -f ONE"):
        assert f"| `{label}` |" in proc.stdout
    assert "corpus in one process" in proc.stdout
