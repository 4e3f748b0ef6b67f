"""scripts/release check: the release recipe's own checks, as CI runs them.

It builds the wheel and the krew archive from this checkout into a temporary directory and fails
unless the archive's sha256 is the one the committed krew/dynamo.yaml and krew/nvidia-dynamo.yaml
name when they were rendered from these sources, or else two builds give the same bytes (the
archive is byte-reproducible: pinned wheels, fixed mtimes and owners, sorted entries),
unless no file in it is native code for one OS/arch, unless every package data file is in it, and
unless the unpacked archive answers --version, version --client, explain dgd -f and generate dgd
from an empty PATH through a symlink, read-only too, and refuses Python 3.9 in one line. With Go on
the machine it then installs the archive with the real krew (scripts/krew-check).

Slow (1-2 min): it downloads the pinned wheels (pip's cache makes that quick after the first run).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_release_check():
    env = {**os.environ, "KRELEASE_PYTHONS": "default", "KRELEASE_WHEEL": "0"}
    proc = subprocess.run([str(REPO / "scripts" / "release"), "check"], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    # Either the committed manifests' sha256 (they were rendered from these sources) or two builds alike.
    assert re.search(r"archive sha256 [0-9a-f]{64} (= krew/dynamo.yaml's|twice)", proc.stderr), proc.stderr[-2000:]
    assert "ok  archive via symlink" in proc.stderr
