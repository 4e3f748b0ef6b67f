#!/bin/sh
# kubectl-dynamo: the krew archive's entry point, a sh script and a Python program in one file.
# sh picks an interpreter and runs this same file with it: KUBECTL_DYNAMO_PYTHON if set, else the
# python3 on PATH (the one the user chose), else the usual absolute paths (only sh builtins: this
# works with an empty PATH). Python then checks its version (below), puts lib/ (next to the real
# file, past krew's symlink) on sys.path and starts the CLI.
# -I: no PYTHON* variables, no user site-packages, no script directory on sys.path; -S: not even
# the host's site-packages, so only the standard library and lib/ are importable.
# (krew/build_app.py copies this file into the archive; docs/distribution.md.)
""":"
for py in "${KUBECTL_DYNAMO_PYTHON:-}" python3 /opt/homebrew/bin/python3 /usr/local/bin/python3 /usr/bin/python3; do
  case $py in
    '') ;;
    */*) [ -x "$py" ] && exec "$py" -I -S "$0" "$@" ;;
    *) command -v "$py" >/dev/null 2>&1 && exec "$py" -I -S "$0" "$@" ;;
  esac
done
echo "error: kubectl-dynamo needs python3 >= 3.10 and found no python3 (install one, or: pipx install kubectl-dynamo)" >&2
exit 2
":"""
import os
import sys


def newer_python():
    """A python3.1x >= 3.10 on PATH or in Homebrew's or python.org's directory, asked for its version
    (pyenv's shims of versions not selected exist but fail): only when the first one is too old."""
    import subprocess

    dirs = os.environ.get("PATH", "").split(os.pathsep) + ["/opt/homebrew/bin", "/usr/local/bin"]
    for minor in range(20, 9, -1):
        for d in dirs:
            exe = os.path.join(d, "python3.%d" % minor)
            if d and os.access(exe, os.X_OK):
                try:
                    ok = subprocess.run([exe, "-I", "-S", "-c", "import sys; sys.exit(sys.version_info < (3, 10))"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10).returncode == 0
                except (OSError, subprocess.SubprocessError):
                    ok = False
                if ok:
                    return exe
    return None


if sys.version_info < (3, 10):
    exe = None if os.environ.get("KUBECTL_DYNAMO_PYTHON") else newer_python()
    if exe:
        os.execv(exe, [exe, "-I", "-S", __file__] + sys.argv[1:])
    sys.stderr.write("error: kubectl-dynamo needs Python >= 3.10, but %s is %d.%d.%d and no newer python3.1x was "
                     "found (install one, e.g. brew install python, or set KUBECTL_DYNAMO_PYTHON)\n"
                     % ((sys.executable,) + tuple(sys.version_info[:3])))
    sys.exit(2)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "lib"))
sys.argv[0] = "kubectl-dynamo"
from kubectl_dynamo.cli import run  # noqa: E402

run()
