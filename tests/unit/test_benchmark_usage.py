"""The benchmarks' documented command lines use options that exist (their docstrings and
benchmarks/README.md): the scripts themselves run in tests/integration/test_benchmarks.py (slow tier)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import REPO

BENCH = REPO / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py"))


def documented_options(script: str) -> set:
    """Every --option on a line that runs ``script``, in its docstring and in benchmarks/README.md and
    docs/benchmarks.md (a command line may continue on the next line after a backslash)."""
    text = (BENCH / script).read_text().split('"""')[1] + (BENCH / "README.md").read_text() \
        + (REPO / "docs" / "benchmarks.md").read_text()
    opts = set()
    for command in re.split(r"(?<!\\)\n", text):
        if f"benchmarks/{script}" in command or command.lstrip().startswith(f"python benchmarks/{script}"):
            tail = command.split(f"benchmarks/{script}", 1)[1]
            opts |= set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", tail))
    return opts


@pytest.mark.parametrize("script", SCRIPTS)
def test_documented_options_exist(script):
    opts = documented_options(script)
    assert opts, f"no documented command line for {script}"
    helptext = subprocess.run([sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True,
                              timeout=120, cwd=REPO).stdout
    assert set(re.findall(r"(--[a-z][a-z-]*)", helptext)) >= opts, sorted(opts - set(re.findall(r"--[a-z-]+", helptext)))


def test_the_check_sees_a_missing_option(tmp_path, monkeypatch):
    # the docstring of doctor_scale.py once showed --dgds and --pods, which never existed
    assert {"--dgds", "--pods"}.isdisjoint(documented_options("doctor_scale.py"))
    fake = tmp_path / "benchmarks"
    fake.mkdir()
    (fake / "x.py").write_text('"""Usage:\n\n    python benchmarks/x.py --dgds 200 \\\n        --steps 1\n"""\n')
    (fake / "README.md").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "BENCH", fake)
    assert documented_options("x.py") == {"--dgds", "--steps"}


def test_floor_finds_the_continue_token_in_the_head():
    sys.path.insert(0, str(BENCH))
    try:
        import doctor_floor
    finally:
        sys.path.remove(str(BENCH))
    page = b'{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ","remainingItemCount":7},"items":[{"metadata":{"continue":"no"}}]}'
    assert doctor_floor.head_token(page) == "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ"
    assert doctor_floor.head_token(b'{"kind":"PodList","metadata":{"resourceVersion":"42"},"items":[]}') is None
