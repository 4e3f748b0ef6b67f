"""``-f`` as kubectl takes it: repeatable, files and directories, ``-R``; bounded (issue 18, part 4)."""

from __future__ import annotations

import json
import shutil

import pytest

from kubectl_dynamo.errors import InputError
from kubectl_dynamo.inputs import manifests
from kubectl_dynamo.inputs.manifests import expand_filenames
from tests.conftest import CORPUS_DIR, run_cli

VLLM = CORPUS_DIR / "v1.0.1" / "examples_backends_vllm_deploy_disagg-multinode.yaml"
SGLANG = CORPUS_DIR / "v1.0.1" / "examples_backends_sglang_deploy_agg.yaml"
ALPHA = CORPUS_DIR.parent / "upgrade" / "commented-v1alpha1.yaml"


def names(proc) -> list:
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout.split()


def test_explain_every_file_named():
    both = names(run_cli("explain", "dgd", "-f", str(VLLM), "-f", str(SGLANG), "-o", "name"))
    assert both == names(run_cli("explain", "dgd", "-f", str(VLLM), "-o", "name")) + \
        names(run_cli("explain", "dgd", "-f", str(SGLANG), "-o", "name"))
    assert len(both) == 2


def test_directory_reads_its_manifests_and_R_descends(tmp_path):
    (tmp_path / "sub").mkdir()
    shutil.copy(VLLM, tmp_path / "b.yaml")
    shutil.copy(SGLANG, tmp_path / "sub" / "a.yml")
    (tmp_path / "notes.txt").write_text("not a manifest")
    assert expand_filenames([str(tmp_path)]) == [str(tmp_path / "b.yaml")]
    assert expand_filenames([str(tmp_path)], recursive=True) == [str(tmp_path / "b.yaml"), str(tmp_path / "sub" / "a.yml")]
    assert expand_filenames([str(tmp_path / "notes.txt")]) == [str(tmp_path / "notes.txt")]  # named: read as given
    flat = names(run_cli("explain", "dgd", "-f", str(tmp_path), "-o", "name"))
    deep = names(run_cli("explain", "dgd", "-f", str(tmp_path), "-R", "-o", "name"))
    assert flat == ["dynamographdeployment.nvidia.com/vllm-disagg"]
    assert deep == flat + ["dynamographdeployment.nvidia.com/sglang-agg"]


def test_empty_directory_and_stdin_twice_are_one_error_line(tmp_path):
    proc = run_cli("explain", "dgd", "-f", str(tmp_path))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "no *.yaml" in proc.stderr
    with pytest.raises(InputError, match="stdin"):
        expand_filenames(["-", "-"])


def test_bounded_by_file_count_and_total_size(tmp_path, monkeypatch):
    for i in range(4):
        (tmp_path / f"{i}.yaml").write_text("x: 1\n" * 40)
    monkeypatch.setattr(manifests, "MAX_FILES", 3)
    with pytest.raises(InputError, match="more than 3 files"):
        expand_filenames([str(tmp_path)])
    monkeypatch.setattr(manifests, "MAX_FILES", 1000)
    monkeypatch.setenv(manifests.MAX_INPUT_ENV, "100")  # 16 × 100 bytes in all; each file is 200
    with pytest.raises(InputError, match="add up to more than 1600 bytes"):
        expand_filenames([str(tmp_path)] * 3)
    proc = run_cli("explain", "dgd", "-f", str(tmp_path), "-f", str(tmp_path), "-f", str(tmp_path),
                   env={manifests.MAX_INPUT_ENV: "100"})
    assert proc.returncode == 2 and proc.stderr.startswith("error: -f: the files named add up")


def test_upgrade_takes_several_files(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    shutil.copy(ALPHA, a)
    shutil.copy(ALPHA, b)
    one = run_cli("upgrade", "dgd", "-f", str(a), "-o", "json")
    both = run_cli("upgrade", "dgd", "-f", str(a), "-f", str(b), "-o", "json")
    assert one.returncode == both.returncode == 0, both.stderr
    single = json.loads(one.stdout)
    items = json.loads(both.stdout)["items"]
    assert items == (single["items"] if single.get("kind") == "List" else [single]) * 2
    stream = run_cli("upgrade", "dgd", "-f", str(tmp_path))
    assert stream.returncode == 0 and stream.stdout.count("apiVersion: nvidia.com/v1beta1") == \
        2 * run_cli("upgrade", "dgd", "-f", str(a)).stdout.count("apiVersion: nvidia.com/v1beta1")
    proc = run_cli("upgrade", "dgd", "-f", str(a), "-f", str(b), "--write")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "a.yaml.bak").exists() and (tmp_path / "b.yaml.bak").exists()
    assert "nvidia.com/v1beta1" in a.read_text() and "nvidia.com/v1beta1" in b.read_text()
