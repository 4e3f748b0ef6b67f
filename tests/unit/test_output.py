"""The one renderer: formats, colour from the Environment, notes on stderr, exit codes."""

from __future__ import annotations

import io
import re

from kubectl_dynamo.environment import Environment
from kubectl_dynamo.output.render import render
from kubectl_dynamo.result import Result
from tests.conftest import CORPUS_DIR, run_cli


def env(tty: bool = False, no_color: bool = False) -> Environment:
    return Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(), stdout_isatty=tty,
                       environ={"NO_COLOR": "1"} if no_color else {})


def table(data, wide, color, width=None):
    return f"table wide={wide} color={color} {data['x']}"


def test_table_json_yaml_and_exit_code():
    r = Result({"x": 1}, table, exit_code=1, notes=["note: hello"])
    e = env()
    assert render(r, "table", e) == 1
    assert e.stdout.getvalue() == "table wide=False color=False 1\n"
    assert e.stderr.getvalue() == "note: hello\n"
    e = env()
    render(r, "json", e)
    assert e.stdout.getvalue() == '{\n  "x": 1\n}\n'
    e = env()
    render(r, "yaml", e)
    assert e.stdout.getvalue() == "x: 1\n"


def test_colour_only_on_a_terminal_and_never_with_no_color():
    r = Result({"x": 1}, table)
    for tty, no_color, want in ((True, False, True), (False, False, False), (True, True, False)):
        e = env(tty, no_color)
        render(r, "wide", e)
        assert e.stdout.getvalue() == f"table wide=True color={want} 1\n"


def test_verbatim_text_wins_and_text_stands_for_its_format():
    e = env()
    render(Result({"x": 1}, table, text="--- a\n+++ b\n", verbatim=True), "json", e)
    assert e.stdout.getvalue() == "--- a\n+++ b\n"
    e = env()
    render(Result({"x": 1}, table, text="x: 1  # a comment kept\n"), "yaml", e)
    assert e.stdout.getvalue() == "x: 1  # a comment kept\n"


def test_name_lists_the_objects_as_kubectl_does():
    e = env()
    render(Result({"x": 1}, table, names=["dynamographdeployment.nvidia.com/a", "dynamographdeployment.nvidia.com/b"]),
           "name", e)
    assert e.stdout.getvalue() == "dynamographdeployment.nvidia.com/a\ndynamographdeployment.nvidia.com/b\n"


def test_name_through_the_command_line():
    path = CORPUS_DIR / "v1.0.1" / "examples_backends_vllm_deploy_disagg-multinode.yaml"
    proc = run_cli("explain", "dgd", "-f", str(path), "-o", "name")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["dynamographdeployment.nvidia.com/vllm-disagg"]


def _tabwriter(rows, headers):
    """The reference: kubectl's printers (kubernetes pkg/printers/tabwriter.go, now
    k8s.io/cli-runtime/pkg/printers/tabwriter.go: text/tabwriter with minwidth 6, padding 3, flags 0):
    each column but the last as wide as its widest cell + 3 and at least 6; lines right-stripped."""
    table = [[h.upper() for h in headers]] + [[("-" if c is None else str(c)).strip() for c in r] for r in rows]
    visible = [[re.sub(r"\x1b\[[0-9;]*m", "", c) for c in r] for r in table]
    widths = [max(6, max(len(r[i]) for r in visible) + 3) for i in range(len(headers) - 1)]
    return "\n".join(("".join(c + " " * (w - len(v)) for c, v, w in zip(r[:-1], vr[:-1], widths)) + r[-1]).rstrip()
                     for r, vr in zip(table, visible))


def test_grid_lays_out_tables_as_kubectls_tabwriter():
    import random

    from kubectl_dynamo.output.render import grid, paint

    rng = random.Random(14)
    cells = ["a", "error", "crash-loop", "", " padded ", "x" * 30, None, 0, 12, 3.5, True,
             "α×…", "-", "team-00/vllm-000"]
    for _ in range(2000):
        ncol = rng.randint(1, 5)
        headers = [rng.choice(["severity", "code", "a", "dgd", "message", "hint"]) for _ in range(ncol)]
        rows = []
        for _ in range(rng.randint(0, 5)):
            row = [rng.choice(cells) for _ in range(ncol)]
            row = [paint(c, rng.choice(["error", "ok"]), True) if isinstance(c, str) and c.strip() and rng.random() < 0.3
                   else c for c in row]
            rows.append(row)
        assert grid(rows, headers) == _tabwriter(rows, headers), (rows, headers)


def test_grid_matches_gos_tabwriter_as_kubectl_configures_it():
    """The judge: Go's text/tabwriter's own output (tests/data/tabwriter/PROVENANCE.md)."""
    import json
    from pathlib import Path

    from kubectl_dynamo.output.render import grid

    path = Path(__file__).resolve().parent.parent / "data" / "tabwriter" / "goldens.json"
    cases = json.loads(path.read_text())
    assert len(cases) == 300
    for case in cases:
        want = "\n".join(line.rstrip() for line in case["out"].split("\n")[:-1])
        assert grid(case["rows"][1:], case["rows"][0]) == want, case["rows"]


def test_grid_fits_a_terminal_wrapping_prose_at_words_and_cutting_other_cells():
    from kubectl_dynamo.output.render import grid

    message = "the operator refuses to render: kai-scheduler queue validation failed: queue not found in cluster"
    rows = [["error", "kai-queue-missing", "DynamoGraphDeployment/team-a/vllm-disagg-multinode", message]]
    whole = grid(rows, ["severity", "code", "object", "message"])
    assert whole.splitlines()[1].endswith(message)  # no width: every cell whole, one line
    text = grid(rows, ["severity", "code", "object", "message"], width=80)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "kai-queue-missing" in lines[1]  # a code is never cut
    assert "…" in lines[1].split("kai-queue-missing")[1].split()[0]  # the object is cut
    start = lines[0].index("MESSAGE")
    words = " ".join(line[start:].strip() for line in lines[1:]).split()
    assert words == message.split()  # wrapped at word boundaries only: no word split, none lost
    assert grid(rows, ["severity", "code", "object", "message"], width=80, optional=("object",)).count("Dynamo") == 0


def test_environment_columns_only_on_a_terminal():
    from kubectl_dynamo.environment import terminal_columns

    assert env(tty=True)._replace(columns=80).table_width == 80
    assert env(tty=False)._replace(columns=80).table_width is None  # piped: whole
    assert terminal_columns({"COLUMNS": "132"}, io.StringIO()) == 132
    assert terminal_columns({"COLUMNS": "x"}, io.StringIO()) == 0  # not a terminal, no usable COLUMNS


def test_render_fits_table_to_the_terminal_but_not_wide():
    seen = []

    def table(data, wide, color, width=None):
        seen.append((wide, width))
        return "t"

    for fmt, want in (("table", (False, 72)), ("wide", (True, None))):
        render(Result({}, table), fmt, env(tty=True)._replace(columns=72))
        assert seen[-1] == want
    render(Result({}, table), "table", env(tty=False)._replace(columns=72))
    assert seen[-1] == (False, None)


def test_term_dumb_means_no_colour():
    e = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(), stdout_isatty=True,
                    environ={"TERM": "dumb"})
    assert not e.colors and env(tty=True).colors


def test_fold_keeps_a_lines_indent_when_its_first_word_is_too_wide():
    from kubectl_dynamo.output.render import fold

    # textwrap dropped the whitespace-only first chunk when the first word did not fit after it
    assert fold("      " + "y" * 40, 30, "        ") == ["      " + "y" * 23 + "…"]
    assert fold("      " + "y" * 20 + " zz", 25, "        ") == ["      " + "y" * 18 + "…", "        zz"]
    assert fold("  a bb cc", 6, "    ") == ["  a bb", "    cc"]


def test_rollout_findings_fit_a_width_and_are_whole_without_one():
    from kubectl_dynamo.output.tables import format_findings_lines

    findings = [{"severity": "error", "code": "rollout-stalled", "object": {"kind": "DynamoGraphDeployment",
                 "namespace": "ns", "name": "llm"}, "message": "the rollout made no progress for ten minutes " * 3,
                 "hint": "kubectl dynamo doctor -n ns llm shows what holds it"}]
    whole = format_findings_lines(findings)
    assert "DynamoGraphDeployment/llm" in whole and "fix: kubectl dynamo doctor -n ns llm shows what holds it" in whole
    assert max(len(line) for line in whole.splitlines()) > 80
    fitted = format_findings_lines(findings, 80).splitlines()
    assert max(len(line) for line in fitted) <= 80
    assert " ".join(" ".join(fitted).split()).count("ten minutes") == 3
