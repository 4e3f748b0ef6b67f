"""doctor for CI: --skip, the ignore file, -o junit (issue 18, part 4), on a state the real
controllers left (tests/data/recorded/lws-mpi-secret-deleted: the MPI SSH secret deleted, so
ssh-secret-missing is an error on trtllm-mn)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kubectl_dynamo.errors import InputError
from kubectl_dynamo.findings import catalogue
from kubectl_dynamo.inputs.ignore import parse_rules
from tests.conftest import REPO, run_cli

STATE = str(Path(__file__).resolve().parent.parent / "data" / "recorded" / "lws-mpi-secret-deleted")


def doctor(*args):
    return run_cli("doctor", "-A", "--from", STATE, *args)


def test_skip_moves_findings_to_skipped_and_out_of_the_exit_code():
    before = doctor("-o", "json")
    assert before.returncode == 1
    codes = {f["code"] for f in json.loads(before.stdout)["findings"]}
    assert "ssh-secret-missing" in codes
    after = doctor("--skip", "ssh-secret-missing", "-o", "json")
    assert after.returncode == 0, after.stderr
    data = json.loads(after.stdout)
    assert "ssh-secret-missing" not in {f["code"] for f in data["findings"]}
    assert data["summary"]["errors"] == 0
    (s,) = [s for s in data["skipped"] if s["check"] == "ssh-secret-missing"]
    assert s["reason"] == "skipped by --skip" and s["object"]["name"] == "mpi-run-ssh-secret"


def test_ignore_file_skips_one_object_only(tmp_path):
    ignore = tmp_path / "ignore"
    ignore.write_text("# accepted\ngang-not-enforced llm/vllm-mn   # this DGD only\n")
    data = json.loads(doctor("--ignore-file", str(ignore), "--min-severity", "info", "-o", "json").stdout)
    left = [f for f in data["findings"] if f["code"] == "gang-not-enforced"]
    assert left and all(f["dgd"]["name"] != "vllm-mn" for f in left)
    assert [s["reason"] for s in data["skipped"] if s["check"] == "gang-not-enforced"] == [f"skipped by {ignore}:2"]


def test_default_ignore_file_is_read_from_the_current_directory(tmp_path, monkeypatch):
    from kubectl_dynamo.inputs.ignore import DEFAULT_IGNORE_FILE, ignore_rules

    monkeypatch.chdir(tmp_path)
    assert ignore_rules(None) == []  # none there: nothing skipped
    (tmp_path / DEFAULT_IGNORE_FILE).write_text("ssh-secret-missing\n")
    assert [(r.code, r.target, r.source) for r in ignore_rules(None)] == \
        [("ssh-secret-missing", None, f"{DEFAULT_IGNORE_FILE}:1 (read from the current directory)")]


def test_skipped_lists_each_skipped_finding_once_with_its_object(tmp_path):
    """lws-healthy: gang-not-enforced on each of the three DGDs (the real operator renders LWS pods without
    schedulerName while LWS makes Volcano PodGroups); one rule skips them all, and the table tells them apart."""
    ignore = tmp_path / "ignore"
    ignore.write_text("gang-not-enforced\n")
    state = str(Path(STATE).parent / "lws-healthy")
    data = json.loads(run_cli("doctor", "-A", "--from", state, "--ignore-file", str(ignore), "--min-severity",
                              "info", "-o", "json").stdout)
    skips = [s for s in data["skipped"] if s["check"] == "gang-not-enforced"]
    keys = [(s["object"]["kind"], s["object"]["namespace"], s["object"]["name"]) for s in skips]
    assert len(skips) >= 2 and len(keys) == len(set(keys))
    table = run_cli("doctor", "-A", "--from", state, "--ignore-file", str(ignore), "--min-severity", "info").stdout
    lines = [ln for ln in table.splitlines() if ln.startswith("  gang-not-enforced")]
    assert len(lines) == len(skips) == len(set(lines))
    assert all(f"/{k[2]}): skipped by {ignore}:1" in "".join(lines) for k in keys)


def test_ignore_file_errors_are_one_line():
    with pytest.raises(InputError, match=r"f:1: expected CODE"):
        parse_rules("a b c\n", "f")
    assert parse_rules("\n# x\nssh-secret-missing\n", "f")[0].source == "f:3"
    proc = doctor("--skip", "ssh-secret-mising")
    assert proc.returncode == 2 and "did you mean ssh-secret-missing" in proc.stderr and proc.stderr.count("\n") == 1


def _ints(el, *names):
    return [int(el.attrib[n]) for n in names]


def assert_junit_shape(text: str) -> ET.Element:
    """What JUnit readers (Jenkins' junit-10.xsd, GitLab) require: testsuites > testsuite[name, tests,
    failures, errors, skipped] > testcase[classname, name] with at most one failure[message, type]
    or skipped; the counts add up."""
    root = ET.fromstring(text)
    assert root.tag == "testsuites"
    totals = [0, 0, 0]
    for suite in root:
        assert suite.tag == "testsuite" and suite.attrib["name"]
        tests, failures, errors, skipped = _ints(suite, "tests", "failures", "errors", "skipped")
        cases = list(suite)
        assert all(c.tag == "testcase" and c.attrib["classname"] and c.attrib["name"] for c in cases)
        assert tests == len(cases) and errors == 0
        assert failures == sum(c.find("failure") is not None for c in cases)
        assert skipped == sum(c.find("skipped") is not None for c in cases)
        for c in cases:
            assert len(c) <= 1 and all(child.tag in ("failure", "skipped") for child in c)
            f = c.find("failure")
            if f is not None:
                assert f.attrib["message"] and f.attrib["type"] in catalogue.SEVERITIES
        totals = [a + b for a, b in zip(totals, (tests, failures, skipped))]
    assert totals == _ints(root, "tests", "failures", "skipped")
    return root


def test_doctor_junit_one_testcase_per_check_per_dgd():
    proc = doctor("-o", "junit")
    assert proc.returncode == 1
    root = assert_junit_shape(proc.stdout)
    data = json.loads(doctor("-o", "json").stdout)
    suites = {s.attrib["name"]: s for s in root}
    assert set(suites) == {"cluster"} | {f"{d['namespace']}/{d['name']}" for d in data["deployments"]}
    dgd_codes = [e.code for e in catalogue.ENTRIES if set(e.scopes) & {"dgd", "manifest", "exec"}]
    assert [c.attrib["name"] for c in suites["llm/trtllm-mn"]] == dgd_codes
    failed = {(s.attrib["name"], c.attrib["name"]) for s in root for c in s if c.find("failure") is not None}
    assert failed == {(f"{f['dgd']['namespace']}/{f['dgd']['name']}", f["code"])
                      for f in data["findings"] if f["severity"] == "error"}
    skipped = {c.attrib["name"] for c in suites["llm/trtllm-mn"] if c.find("skipped") is not None}
    assert skipped == {"sshd-not-listening", "ray-incomplete"}  # need --exec
    info = assert_junit_shape(doctor("-o", "junit", "--min-severity", "info").stdout)
    assert int(info.attrib["failures"]) > int(root.attrib["failures"])  # the threshold decides


def test_explain_junit():
    path = REPO / "tests" / "data" / "corpus" / "v1.0.1" / "examples_backends_vllm_deploy_disagg-multinode.yaml"
    proc = run_cli("explain", "dgd", "-f", str(path), "-o", "junit")
    root = assert_junit_shape(proc.stdout)
    assert [s.attrib["name"].split("/")[-1] for s in root] == ["vllm-disagg"]
    assert proc.returncode == (1 if int(root.attrib["failures"]) else 0)


def test_junit_is_only_for_doctor_and_explain():
    proc = run_cli("get", "-o", "junit")
    assert proc.returncode == 2 and "junit" in proc.stderr
