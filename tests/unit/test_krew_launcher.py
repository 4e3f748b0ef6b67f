"""krew/launcher.sh, the krew archive's entry point: started through krew's symlink it finds the
bundled interpreter, passes the arguments and the exit code through and leaves the environment alone.

The interpreter here is this test run's own (a short sh script that notes its environment and
execs sys.executable stands in for the bundled one); the whole bundle is built and run by
scripts/release and scripts/krew-check.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kubectl_dynamo

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bundle_module():
    spec = importlib.util.spec_from_file_location("bundle", REPO / "krew" / "bundle.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def krew_root(tmp_path: Path, bundle_module) -> Path:
    """A krew-like layout: store/dynamo/v<version>/ holds the archive's files, bin/ the symlink."""
    store = tmp_path / "store" / "dynamo" / f"v{kubectl_dynamo.__version__}"
    (store / "_internal").mkdir(parents=True)
    python = store / "_internal" / "python3.X"
    python.write_text(f'#!/bin/sh\nenv > "$0.env"\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    entry = store / "kubectl-dynamo"
    entry.write_text(bundle_module.launcher("python3.X"))
    entry.chmod(0o755)
    (tmp_path / "bin").mkdir()
    os.symlink(os.path.relpath(entry, tmp_path / "bin"), tmp_path / "bin" / "kubectl-dynamo")  # relative, like krew's
    return tmp_path


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kw)


def test_through_krews_symlink(krew_root):
    proc = run([str(krew_root / "bin" / "kubectl-dynamo"), "version", "--client"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"Client Version: {kubectl_dynamo.__version__}"


def test_through_a_chain_of_links_from_another_directory(krew_root, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    os.symlink(krew_root / "bin" / "kubectl-dynamo", elsewhere / "kd")  # absolute -> relative -> file
    proc = run(["./kd", "--help"], cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert "Usage: kubectl dynamo" in proc.stdout


def test_exit_code_and_arguments_pass_through(krew_root):
    proc = run([str(krew_root / "bin" / "kubectl-dynamo"), "--no-such-option", "a b"])
    assert proc.returncode == 2
    assert "No such option '--no-such-option'" in proc.stderr


def test_environment_is_left_alone(krew_root):
    """No LD_LIBRARY_PATH or PYTHON* of its own (the bundle's rpath and ._pth do that job), so
    helm and credential plugins started by kubectl-dynamo see what the caller set."""
    env = {**os.environ, "LD_LIBRARY_PATH": "/caller/lib", "KD_PROBE": "x y"}
    env.pop("PYTHONPATH", None)
    assert run([str(krew_root / "bin" / "kubectl-dynamo"), "version", "--client"], env=env).returncode == 0
    seen = dict(line.split("=", 1) for line in
                next((krew_root / "store").rglob("python3.X.env")).read_text().splitlines() if "=" in line)
    assert seen["LD_LIBRARY_PATH"] == "/caller/lib" and seen["KD_PROBE"] == "x y"
    added = {k for k in seen if k not in env} - {"PWD", "OLDPWD", "SHLVL", "_"}  # what any sh sets
    assert not added, added
