"""Stable finding ids (code + object + component + group + cause, never the message) and doctor --since.

The states are the recorded real clusters of tests/data/recorded (see its PROVENANCE.md)."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
from click.testing import CliRunner

from kubectl_dynamo import contracts
from kubectl_dynamo.cli import cli
from kubectl_dynamo.findings.finding import finding, identity
from tests.conftest import DATA, run_cli

RECORDED = DATA / "recorded"
STATES = sorted(p.name for p in RECORDED.iterdir() if (p / "manifest.json").is_file())
DRAW = random.Random(4)


def doctor(state: str, *extra: str, input: str | None = None):
    proc = CliRunner().invoke(cli, ["doctor", "--from", str(RECORDED / state), "-A", *extra, "-o", "json"], input=input)
    assert proc.exit_code in (0, 1), proc.output
    return proc.exit_code, json.loads(proc.stdout)


@pytest.mark.parametrize("state", STATES)
def test_every_finding_has_a_unique_id(state):
    _, data = doctor(state)
    ids = [f["id"] for f in data["findings"]]
    assert len(ids) == len(set(ids))
    assert all(i.startswith(f["code"] + "-") for i, f in zip(ids, data["findings"]))
    contracts.validator("doctor").validate(data)


@pytest.mark.parametrize("state", DRAW.sample(STATES, 3))
def test_ids_are_the_same_run_after_run(state):
    """Two separate processes (another hash seed, another dict order) on the same state."""
    runs = [json.loads(run_cli("doctor", "--from", str(RECORDED / state), "-A", "-o", "json").stdout)
            for _ in range(2)]
    assert [f["id"] for f in runs[0]["findings"]] == [f["id"] for f in runs[1]["findings"]]
    assert runs[0]["findings"]


def test_id_follows_what_a_finding_is_about_not_its_message():
    obj = {"kind": "Pod", "namespace": "llm", "name": "qwen-0-decode-0-decode-wkr-abc"}
    f = finding("insufficient-gpus", "worker rank 1 is Pending for 2m", obj=obj)
    base = identity(f)
    assert identity(replace(f, message="worker rank 1 is Pending for 9m", hint="other")) == base
    assert identity(replace(f, severity=f.severity)) == base
    different = [replace(f, object={**obj, "name": "other"}), replace(f, component="prefill"),
                 replace(f, where=("llm", "qwen", "decode", 1)), f.caused_by(finding("kai-queue-missing", "m"))]
    assert len({base, *(identity(g) for g in different)}) == 1 + len(different)


@pytest.mark.parametrize("state", DRAW.sample(STATES, 4))
def test_since_itself_reports_no_change(state, tmp_path):
    code, data = doctor(state)
    before = tmp_path / "before.json"
    before.write_text(json.dumps(data))
    code_since, changed = doctor(state, "--since", str(before))
    assert changed["findings"] == [] and changed["since"]["resolved"] == []
    assert changed["since"] == {"file": str(before), "resolved": [], "unchanged": len(data["findings"])}
    assert changed["summary"] == {"errors": 0, "warnings": 0, "infos": 0}
    assert code_since == 0  # nothing new: CI passes even though the old errors remain
    contracts.validator("doctor").validate(changed)


PAIRS = [("grove-gang-pending", "grove-healthy"), ("grove-healthy", "grove-gang-pending"),
         ("grove-rollout-stalled/01", "grove-rollout-stalled/02"), ("grove-rollout-stalled/02", "grove-rollout-stalled/03"),
         ("lws-direct-serviceaccount-missing", "lws-direct-serviceaccount-repaired")]


def test_a_finding_keeps_its_id_while_its_message_changes():
    """A recorded rollout, snapshot after snapshot: the gang KAI holds is the same finding while what the
    pods say changes (scheduling gates, then the node selector), so it keeps its id."""
    _, before = doctor("grove-rollout-stalled/02")
    _, after = doctor("grove-rollout-stalled/03")
    held = [(b, a) for b in before["findings"] for a in after["findings"]
            if b["code"] == a["code"] == "gang-held" and b["object"] == a["object"]]
    assert held and all(b["id"] == a["id"] and b["message"] != a["message"] for b, a in held)


@pytest.mark.parametrize("before_state,after_state", PAIRS + [tuple(DRAW.sample(STATES, 2))])
def test_since_lists_new_and_resolved(before_state, after_state, tmp_path):
    _, before = doctor(before_state)
    _, after = doctor(after_state)
    path = tmp_path / "before.json"
    path.write_text(json.dumps(before))
    code, changed = doctor(after_state, "--since", str(path))
    old = {f["id"] for f in before["findings"]}
    now = {f["id"] for f in after["findings"]}
    assert [f["id"] for f in changed["findings"]] == [f["id"] for f in after["findings"] if f["id"] not in old]
    assert [f["id"] for f in changed["since"]["resolved"]] == [f["id"] for f in before["findings"]
                                                               if f["id"] not in now]
    assert changed["since"]["unchanged"] == len(old & now)
    assert code == int(any(f["severity"] == "error" for f in changed["findings"]))
    contracts.validator("doctor").validate(changed)
    table = CliRunner().invoke(cli, ["doctor", "--from", str(RECORDED / after_state), "-A", "--since", str(path)]).stdout
    assert f"Resolved since {path}: {len(changed['since']['resolved'])}; unchanged: {len(old & now)}" in table
    assert ("Resolved (no longer found):" in table) == bool(changed["since"]["resolved"])


def test_since_from_stdin(tmp_path):
    _, data = doctor("grove-healthy")
    _, changed = doctor("grove-healthy", "--since", "-", input=json.dumps(data))
    assert changed["since"]["file"] == "-" and changed["findings"] == []


@pytest.mark.parametrize("content,needle", [
    ("not json", "not JSON"),
    ("[]", "no findings list"),
    ('{"findings": [{"code": "x"}]}', "have no id"),
])
def test_since_bad_file_is_one_error_line_exit_2(tmp_path, content, needle):
    path = tmp_path / "prev.json"
    path.write_text(content)
    proc = run_cli("doctor", "--from", str(RECORDED / "grove-healthy"), "--since", str(path))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: --since {path}: ") and needle in lines[0]


def test_since_missing_file_exit_2():
    proc = run_cli("doctor", "--from", str(RECORDED / "grove-healthy"), "--since", "/nonexistent/prev.json")
    assert proc.returncode == 2 and proc.stderr.strip() == "error: --since /nonexistent/prev.json: no such file"
