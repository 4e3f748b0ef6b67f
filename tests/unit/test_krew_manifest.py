"""krew/dynamo.yaml: well-formed for krew, and in step with the package version and its template.

The real krew (install from the archive, validate-krew-manifest) runs in scripts/krew-check; these
checks are the fast subset that CI runs on every change.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest
import yaml

import kubectl_dynamo

REPO = Path(__file__).resolve().parents[2]
MANIFEST = REPO / "krew" / "dynamo.yaml"
PLATFORMS = {("linux", "amd64"), ("linux", "arm64"), ("darwin", "amd64"), ("darwin", "arm64")}
SEMVER = re.compile(r"^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")


@pytest.fixture(scope="module")
def manifest() -> dict:
    return yaml.safe_load(MANIFEST.read_text())


def test_version_has_one_source():
    text = (REPO / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in text and 'attr = "kubectl_dynamo.__version__"' in text
    assert not re.search(r'^version\s*=\s*"', text, re.M)


def test_header(manifest):
    assert manifest["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert manifest["kind"] == "Plugin"
    assert manifest["metadata"]["name"] == "dynamo" == MANIFEST.stem  # krew-index: file name = plugin name


def test_version_matches_package(manifest):
    version = manifest["spec"]["version"]
    assert SEMVER.match(version), version
    assert version == "v" + kubectl_dynamo.__version__


def test_texts(manifest):
    spec = manifest["spec"]
    for key in ("shortDescription", "description", "caveats", "homepage"):
        assert isinstance(spec.get(key), str) and spec[key].strip(), key
    assert spec["homepage"].startswith("https://")
    assert "\n" not in spec["shortDescription"].strip()
    assert "kubectl dynamo completion --install ~/.krew/bin" in spec["caveats"]
    assert "helm" in spec["caveats"]


def test_platforms(manifest):
    spec = manifest["spec"]
    seen = set()
    for p in spec["platforms"]:
        labels = p["selector"]["matchLabels"]
        key = (labels["os"], labels["arch"])
        assert key not in seen, f"two platforms select {key}"
        seen.add(key)
        assert re.fullmatch(r"[0-9a-f]{64}", p["sha256"]), p["sha256"]
        uri = p["uri"]
        assert uri.startswith("https://") and uri.endswith(f"_{key[0]}_{key[1]}.tar.gz"), uri
        assert f"/{spec['version']}/kubectl-dynamo_{spec['version']}_" in uri, uri
        assert p["bin"] == "kubectl-dynamo"
        sources = {f["from"] for f in p["files"]}
        assert "kubectl-dynamo/LICENSE" in sources  # krew-index requires the LICENSE to be extracted
        assert {"kubectl-dynamo/kubectl-dynamo", "kubectl-dynamo/_internal"} <= sources
        assert all(f["to"] == "." for f in p["files"])
    assert seen == PLATFORMS


def test_license_is_apache():
    text = (REPO / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text


def test_manifest_is_rendered_from_template(tmp_path):
    """Re-rendering with no archives keeps every sha256, so it must reproduce the file exactly:
    krew/dynamo.yaml is never edited by hand (edit krew/dynamo.yaml.in, run scripts/release manifest)."""
    spec = importlib.util.spec_from_file_location("render_manifest", REPO / "krew" / "render_manifest.py")
    render = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(render)
    out = tmp_path / "dynamo.yaml"
    shutil.copy(MANIFEST, out)
    (tmp_path / "dist").mkdir()
    assert render.main(["--dist", str(tmp_path / "dist"), "--out", str(out)]) == 0
    assert out.read_text() == MANIFEST.read_text()
