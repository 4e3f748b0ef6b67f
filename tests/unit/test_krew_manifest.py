"""krew/dynamo.yaml and krew/nvidia-dynamo.yaml: well-formed for krew, what krew-index reviewers ask
for, and in step with the package version, the template and the committed archive checksum.

The archive itself is built, checked for reproducibility and installed with the real krew by
`scripts/release check` (tests/unit/test_release.py, slow); these are the fast checks.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import yaml

import kubectl_dynamo

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = {"dynamo": REPO / "krew" / "dynamo.yaml", "nvidia-dynamo": REPO / "krew" / "nvidia-dynamo.yaml"}
# Every os/arch pair a user may have (krew's selectors take Go's GOOS/GOARCH names).
PAIRS = [(os_, arch) for os_ in ("linux", "darwin") for arch in ("amd64", "arm64")]
SEMVER = re.compile(r"^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")


def load_render():
    spec = importlib.util.spec_from_file_location("render_manifest", REPO / "krew" / "render_manifest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module", params=sorted(MANIFESTS))
def manifest(request) -> dict:
    return yaml.safe_load(MANIFESTS[request.param].read_text())


def selector_matches(selector: dict, labels: dict) -> bool:
    """Kubernetes label selector semantics (what krew evaluates against {os, arch})."""
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expr in selector.get("matchExpressions", []):
        value, op = labels.get(expr["key"]), expr["operator"]
        if (op == "In" and value not in expr["values"]) or (op == "NotIn" and value in expr["values"]) \
                or (op == "Exists" and value is None) or (op == "DoesNotExist" and value is not None):
            return False
    return True


def test_version_has_one_source():
    text = (REPO / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in text and 'attr = "kubectl_dynamo.__version__"' in text
    assert not re.search(r'^version\s*=\s*"', text, re.M)


def test_header(manifest):
    assert manifest["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert manifest["kind"] == "Plugin"
    name = manifest["metadata"]["name"]
    assert MANIFESTS[name].stem == name  # krew-index: file name = plugin name


def test_version_matches_package(manifest):
    version = manifest["spec"]["version"]
    assert SEMVER.match(version), version
    assert version == "v" + kubectl_dynamo.__version__


def test_texts_as_reviewers_ask(manifest):
    """krew-index's review: shortDescription <= 50 characters, description wrapped at 80 columns and
    without usage examples, caveats only for prerequisites."""
    spec = manifest["spec"]
    short = spec["shortDescription"]
    assert 0 < len(short) <= 50 and "\n" not in short.strip(), short
    for key in ("description", "caveats"):
        assert all(len(line) <= 80 for line in spec[key].splitlines()), key
    assert "kubectl dynamo" not in spec["description"] and "$ " not in spec["description"]
    assert "python3" in spec["caveats"] and "3.10" in spec["caveats"]  # the one real prerequisite
    assert "helm" in spec["caveats"]
    assert "completion" not in spec["caveats"]  # a how-to, not a prerequisite: docs/distribution.md
    assert spec["homepage"].startswith("https://")


def test_every_platform_is_matched_once(manifest):
    spec = manifest["spec"]
    for os_, arch in PAIRS:
        hits = [p for p in spec["platforms"] if selector_matches(p["selector"], {"os": os_, "arch": arch})]
        assert len(hits) == 1, (os_, arch, len(hits))
    assert not [p for p in spec["platforms"] if selector_matches(p["selector"], {"os": "windows", "arch": "amd64"})]


def test_platform_entries(manifest):
    spec = manifest["spec"]
    for p in spec["platforms"]:
        assert re.fullmatch(r"[0-9a-f]{64}", p["sha256"]) and p["sha256"] != "0" * 64, p["sha256"]
        uri = p["uri"]
        assert uri.startswith("https://") and uri.endswith(f"/{spec['version']}/kubectl-dynamo_{spec['version']}.tar.gz")
        assert p["bin"] == "kubectl-dynamo"
        assert {f["from"] for f in p["files"]} == {"kubectl-dynamo/kubectl-dynamo", "kubectl-dynamo/lib",
                                                   "kubectl-dynamo/LICENSE"}  # krew-index: LICENSE extracted
        assert all(f["to"] == "." for f in p["files"])


def test_fallback_name_differs_only_in_name():
    a, b = (yaml.safe_load(MANIFESTS[n].read_text()) for n in ("dynamo", "nvidia-dynamo"))
    assert b["metadata"]["name"] == "nvidia-dynamo"
    b["metadata"]["name"] = "dynamo"
    assert a == b


def test_license_is_apache():
    text = (REPO / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text


def test_manifests_are_rendered_from_template(tmp_path):
    """Rendering the template with the committed sha256 must give the committed files byte for byte:
    krew/*.yaml are never edited by hand (edit krew/dynamo.yaml.in, run scripts/release)."""
    render = load_render()
    version = kubectl_dynamo.__version__
    text = MANIFESTS["dynamo"].read_text()
    digest = yaml.safe_load(text)["spec"]["platforms"][0]["sha256"]
    commit = re.search(r"^# Rendered from commit ([0-9a-f]{40}) ", text, re.M).group(1)  # a clean build's
    template = (REPO / "krew" / "dynamo.yaml.in").read_text()
    for name, path in MANIFESTS.items():
        assert render.render(template, name, version, digest, commit) == path.read_text(), name


def test_render_check_refuses_another_archive(tmp_path):
    """--check (what scripts/release check runs) fails when the archive's sha256 is not the committed one."""
    render = load_render()
    archive = tmp_path / f"kubectl-dynamo_v{kubectl_dynamo.__version__}.tar.gz"
    archive.write_bytes(b"not the released archive")
    assert render.main(["--archive", str(archive), "--check"]) == 1
    out = tmp_path / "out"
    out.mkdir()
    assert render.main(["--archive", str(archive), "--outdir", str(out)]) == 0
    assert render.main(["--archive", str(archive), "--outdir", str(out), "--check"]) == 0
    assert yaml.safe_load((out / "dynamo.yaml").read_text())["spec"]["platforms"][0]["sha256"] == render.sha256(archive)
