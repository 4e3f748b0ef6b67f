"""krew/launcher.py, the krew archive's entry point (a sh script and a Python program in one file):
started through krew's symlink with an empty PATH it finds a python3, runs it isolated (-I -S) with
lib/ next to the real file first on sys.path, passes the arguments and the exit code through, leaves
the environment alone, and refuses a Python older than 3.10 in one line (exit 2), trying a newer
python3.1x on PATH first.

lib/ here holds a stand-in kubectl_dynamo.cli that reports what it was started with; the real
archive is built and run by scripts/release (tests/unit/test_release.py). The interpreters are real.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
REPORT = """\
import json, os, sys
def run():
    print(json.dumps({"argv": sys.argv, "path0": sys.path[0], "isolated": sys.flags.isolated,
                      "no_site": sys.flags.no_site, "env": sorted(os.environ), "exe": sys.executable,
                      "version": list(sys.version_info[:2]), "cli": __file__}))
    sys.exit(int(os.environ.get("EXIT", "0")))
"""


def real_python(minor: int) -> str | None:
    """A CPython 3.<minor> of this machine (PATH or pyenv), or None."""
    cands = [shutil.which(f"python3.{minor}") or "",
             *glob.glob(os.path.expanduser(f"~/.pyenv/versions/3.{minor}.*/bin/python3"))]
    for c in cands:
        try:
            out = subprocess.run([c, "-c", "import sys; print(sys.executable, sys.version_info[:2] == (3, %d))" % minor],
                                 capture_output=True, text=True, timeout=30).stdout.split()
        except OSError:
            continue
        if out and out[-1] == "True":
            return out[0]
    return None


@pytest.fixture()
def krew_root(tmp_path: Path) -> Path:
    """krew's layout: store/dynamo/v<version>/ has the archive's files, bin/ the symlink to the entry point."""
    store = tmp_path / "store" / "dynamo" / "v0"
    (store / "lib" / "kubectl_dynamo").mkdir(parents=True)
    (store / "lib" / "kubectl_dynamo" / "__init__.py").write_text("")
    (store / "lib" / "kubectl_dynamo" / "cli.py").write_text(REPORT)
    entry = store / "kubectl-dynamo"
    shutil.copy(REPO / "krew" / "launcher.py", entry)
    entry.chmod(0o755)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "kubectl-dynamo").symlink_to(entry)
    return tmp_path


def start(root: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(root / "bin" / "kubectl-dynamo"), *args], env=env, capture_output=True, text=True,
                          timeout=60)


def test_symlink_empty_path_isolated(krew_root):
    env = {"PATH": "", "KUBECTL_DYNAMO_PYTHON": sys.executable, "PYTHONPATH": "/nonexistent", "EXIT": "3"}
    proc = start(krew_root, "explain", "dgd", "-f", "a file with spaces.yaml", env=env)
    assert proc.returncode == 3, proc.stderr
    seen = json.loads(proc.stdout)
    store = krew_root / "store" / "dynamo" / "v0"
    assert seen["argv"] == ["kubectl-dynamo", "explain", "dgd", "-f", "a file with spaces.yaml"]
    assert seen["path0"] == str(store / "lib") and seen["cli"] == str(store / "lib" / "kubectl_dynamo" / "cli.py")
    assert seen["isolated"] == 1 and seen["no_site"] == 1
    # Nothing added for the programs it starts (helm, exec plugins) but PWD (every POSIX sh exports it)
    # and, in the C locale of env -i, CPython's own LC_CTYPE coercion (PEP 538); nothing removed either.
    assert set(env) <= set(seen["env"]) and set(seen["env"]) - set(env) <= {"PWD", "LC_CTYPE"}


def test_no_variable_picks_a_python3_by_itself(krew_root):
    """No KUBECTL_DYNAMO_PYTHON, empty PATH: the absolute fall-backs (this machine has /usr/bin/python3)."""
    if not any(os.access(p, os.X_OK) for p in ("/opt/homebrew/bin/python3", "/usr/local/bin/python3", "/usr/bin/python3")):
        pytest.skip("no python3 at the launcher's absolute paths on this machine")
    proc = start(krew_root, "version", env={"PATH": ""})
    if proc.returncode == 2:  # this machine's python3 is too old: the one-line refusal
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: kubectl-dynamo needs Python >= 3.10")
    else:
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["version"] >= [3, 10]


def test_too_old_python_is_one_line_exit_2(krew_root):
    old = real_python(9)
    if old is None:
        pytest.skip("no Python 3.9 on this machine")
    proc = start(krew_root, "version", env={"PATH": "", "KUBECTL_DYNAMO_PYTHON": old})
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("error: kubectl-dynamo needs Python >= 3.10, but ") and "3.9." in proc.stderr


def test_too_old_python3_first_then_a_newer_one(krew_root, tmp_path):
    """macOS: /usr/bin/python3 is 3.9 and Homebrew's python3.1x is on PATH: the newer one runs."""
    old = real_python(9)
    if old is None:
        pytest.skip("no Python 3.9 on this machine")
    first = tmp_path / "first"
    first.mkdir()
    (first / "python3").symlink_to(old)
    newer = tmp_path / "newer"
    newer.mkdir()
    (newer / f"python3.{sys.version_info.minor}").symlink_to(sys.executable)
    proc = start(krew_root, "version", env={"PATH": f"{first}:{newer}"})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["version"] == list(sys.version_info[:2])
