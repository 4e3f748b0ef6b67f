# Shared by scripts/test and scripts/demo: a project virtualenv with the package and its test deps.
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${KD_VENV:-$REPO/.venv}

ensure_venv() {
  local py=${PYTHON:-python3}
  "$py" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { echo "needs Python >= 3.10" >&2; return 1; }
  [[ -x $VENV/bin/python ]] || "$py" -m venv "$VENV"
  # Reinstall only when the dependency list changed (pyproject.toml newer than the stamp).
  if [[ ! -f $VENV/.installed || $REPO/pyproject.toml -nt $VENV/.installed ]]; then
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    "$VENV/bin/python" -m pip install --quiet -e "$REPO[test]"
    touch "$VENV/.installed"
  fi
}
