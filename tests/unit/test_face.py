"""kubectl's face (issue 18, part 4): the catalogue offline, plurals, one help, durations, contexts."""

from __future__ import annotations

import json

from kubectl_dynamo.findings import catalogue
from kubectl_dynamo.words import plural
from tests.conftest import run_cli


def test_plural():
    assert [plural(n, "error") for n in (0, 1, 2)] == ["0 errors", "1 error", "2 errors"]
    assert plural(1, "info") == "1 info" and plural(1, "queue") == "1 queue" and plural(3, "queue") == "3 queues"


def test_doctor_explain_prints_the_catalogue_entry_offline():
    e = catalogue.entry("kai-queue-missing")
    proc = run_cli("doctor", "--explain", e.code, "--kubeconfig", "/nonexistent")  # never connects
    assert proc.returncode == 0, proc.stderr
    words = " ".join(proc.stdout.split())
    for field in (e.severity, e.what, e.why, e.fix):
        assert " ".join(field.replace("`", "").replace("**", "").split()) in words
    data = json.loads(run_cli("doctor", "--explain", e.code, "-o", "json").stdout)
    assert (data["code"], data["severity"], data["what"], data["why"], data["fix"], data["refs"]) == \
        (e.code, e.severity, e.what, e.why, e.fix, list(e.refs))


def test_doctor_explain_all_is_the_whole_checks_page():
    from kubectl_dynamo.findings.docs import INTRO

    data = json.loads(run_cli("doctor", "--explain", "all", "-o", "json").stdout)
    assert [c["code"] for c in data["checks"]] == [e.code for e in catalogue.ENTRIES]
    assert data["about"] == INTRO


def test_doctor_explain_unknown_code_suggests_the_closest():
    proc = run_cli("doctor", "--explain", "kai-queue-mising")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: unknown check code") and "kai-queue-missing" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_unknown_only_code_is_a_usage_error_before_connecting():
    proc = run_cli("doctor", "-A", "--only", "ssh-secret", "--kubeconfig", "/nonexistent")
    assert proc.returncode == 2 and "did you mean ssh-secret-missing" in proc.stderr


def test_bare_command_prints_help_once_and_exits_0():
    proc = run_cli()
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.count("Usage:") == 1 and "Commands:" in proc.stdout


def test_exec_timeout_takes_durations():
    import click

    from kubectl_dynamo.cli.options import Duration

    d = Duration()
    assert d.convert("20s", None, None) == 20 and d.convert("1m30s", None, None) == 90
    assert d.convert("15", None, None) == 15  # a bare number is seconds, as before
    proc = run_cli("doctor", "-A", "--exec", "--exec-timeout", "soon")
    assert proc.returncode == 2 and "soon" in proc.stderr
    assert isinstance(d, click.ParamType)


def test_unknown_context_says_so(tmp_path):
    cfg = tmp_path / "config"
    cfg.write_text("apiVersion: v1\nkind: Config\ncurrent-context: a\n"
                   "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                   "users: [{name: u, user: {token: t}}]\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n")
    proc = run_cli("get", "--kubeconfig", str(cfg), "--context", "nope")
    assert proc.returncode == 2
    assert proc.stderr.startswith('error: context "nope" does not exist') and "invalid kubeconfig" not in proc.stderr
    assert "(contexts: a)" in proc.stderr


def test_term_dumb_gets_no_escape_sequences():
    import io

    from kubectl_dynamo.commands.collect import Progress
    from kubectl_dynamo.environment import Environment

    def env(term):
        return Environment(io.StringIO(), io.StringIO(), io.StringIO(), stdout_isatty=True, stderr_isatty=True,
                           environ={"TERM": term})

    assert Progress(env("xterm-256color")).on and env("xterm-256color").colors
    assert not Progress(env("dumb")).on and not env("dumb").colors
