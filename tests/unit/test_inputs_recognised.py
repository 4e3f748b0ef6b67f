"""Inputs are recognised the same way by every command (issue 33, item 5): a v1alpha1 body is
v1alpha1 whatever its apiVersion line says, input without a DGD is one message and exit 2, and
--operator-version must be a version (one newer than the modelled ones is assumed, with a warning)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubectl_dynamo.operator import versions
from tests.unit.test_bad_input import run_in_process

REPO = Path(__file__).resolve().parents[2]
CORPUS = sorted((REPO / "tests" / "data" / "corpus" / "v1.0.1").glob("*.yaml"))
GENERATE = ["generate", "dgd", "x", "--backend", "vllm", "--model", "m", "--nodes", "2", "--gpus-per-node", "8"]
NOT_DGDS = {
    "empty": "",
    "deployment": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {}\n",
    "helm-values": "replicaCount: 1\nmetadata:\n  labels: {}\nimage: {tag: latest}\n",
    "comments-only": "# nothing here\n---\n# nor here\n",
}


@pytest.mark.parametrize("name", sorted(NOT_DGDS))
def test_no_dgd_is_one_message_and_exit_two_in_every_command(name, tmp_path):
    f = tmp_path / f"{name}.yaml"
    f.write_text(NOT_DGDS[name])
    for argv in (["explain", "dgd", "-f", str(f)], ["upgrade", "dgd", "-f", str(f)],
                 ["upgrade", "dgd", "-f", str(f), "--write"], ["explain", "dgd", "-f", "-"], ["upgrade", "dgd", "-f", "-"]):
        code, out, err, _ = run_in_process(argv, stdin=NOT_DGDS[name].encode())
        where = "<stdin>" if argv[-1] == "-" else str(f)
        assert (code, out, err) == (2, "", f"error: {where}: no DynamoGraphDeployment found\n"), argv
    assert f.read_text() == NOT_DGDS[name] and not (tmp_path / f"{name}.yaml.bak").exists()


def test_a_file_without_a_dgd_among_others_is_skipped(tmp_path):
    (tmp_path / "a.yaml").write_text(NOT_DGDS["deployment"])
    (tmp_path / "b.yaml").write_text(CORPUS[0].read_text())
    for command in ("explain", "upgrade"):
        code, _, err, _ = run_in_process([command, "dgd", "-f", str(tmp_path)])
        assert code in (0, 1) and "no DynamoGraphDeployment" not in err, (command, err)


def _relabelled(text: str) -> str:
    assert "apiVersion: nvidia.com/v1alpha1" in text
    return text.replace("apiVersion: nvidia.com/v1alpha1", "apiVersion: nvidia.com/v1beta1")


@pytest.mark.parametrize("path", CORPUS[::4], ids=lambda p: p.stem)
def test_a_v1alpha1_body_is_upgraded_whatever_its_apiversion_says(path, tmp_path):
    # the judge is the same body under its own apiVersion: upgrade must give the same manifest
    text = path.read_text()
    code, want, err_want, _ = run_in_process(["upgrade", "dgd", "-f", "-"], stdin=text.encode())
    assert code == 0, err_want
    code, got, err, _ = run_in_process(["upgrade", "dgd", "-f", "-"], stdin=_relabelled(text).encode())
    assert code == 0, err
    assert got == want
    assert "apiVersion is nvidia.com/v1beta1 but the body is v1alpha1" in err and "upgraded as v1alpha1" in err


def _item(out: str) -> dict:
    data = json.loads(out)
    return data["items"][0] if "items" in data else data


@pytest.mark.parametrize("path", CORPUS[1::8], ids=lambda p: p.stem)
def test_explain_says_run_upgrade_for_a_v1alpha1_body(path):
    code, out, err, _ = run_in_process(["explain", "dgd", "-f", "-", "-o", "json"], stdin=_relabelled(path.read_text()).encode())
    assert code == 1, err
    first = _item(out)["findings"][0]
    assert first["severity"] == "error" and "body is v1alpha1" in first["message"]
    assert "kubectl dynamo upgrade dgd" in first["hint"]
    # silent on the same body under its own apiVersion
    code, out, err, _ = run_in_process(["explain", "dgd", "-f", "-", "-o", "json"], stdin=path.read_text().encode())
    assert all("body is v1alpha1" not in f["message"] for f in _item(out)["findings"])


@pytest.mark.parametrize("value", ["banana", "1.6", "v", "1.6.0.1", "", "latest"])
@pytest.mark.parametrize("command", ["explain", "upgrade", "generate"])
def test_operator_version_must_be_a_version(command, value):
    argv = {"explain": ["explain", "dgd", "-f", str(CORPUS[0])], "upgrade": ["upgrade", "dgd", "-f", str(CORPUS[0])],
            "generate": GENERATE}[command]
    code, out, err, _ = run_in_process([*argv, "--operator-version", value])
    assert code == 2 and out == "", err
    assert err.count("\n") == 1 and err.startswith("error: --operator-version"), err


@pytest.mark.parametrize("value", ["1.6.1", "1.7.0", "2.0.0"])
@pytest.mark.parametrize("command", ["explain", "upgrade", "generate"])
def test_an_unmodelled_operator_version_names_the_nearest_and_what_is_assumed(command, value):
    argv = {"explain": ["explain", "dgd", "-f", str(CORPUS[0])], "upgrade": ["upgrade", "dgd", "-f", str(CORPUS[0])],
            "generate": GENERATE}[command]
    code, _, err, _ = run_in_process([*argv, "--operator-version", value])
    assert code in (0, 1), err
    warning = [ln for ln in err.splitlines() if ln.startswith("warning: operator")]
    assert len(warning) == 1 and value in warning[0] and versions.NEWEST in warning[0] and "assumed" in warning[0]


@pytest.mark.parametrize("value", ["1.5.0", versions.NEWEST, "1.6.0-rc1"])
def test_a_modelled_operator_version_gives_no_warning(value):
    code, _, err, _ = run_in_process(["explain", "dgd", "-f", str(CORPUS[0]), "--operator-version", value])
    assert code in (0, 1) and "not modelled" not in err, err
