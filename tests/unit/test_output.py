"""The one renderer: formats, colour from the Environment, notes on stderr, exit codes."""

from __future__ import annotations

import io

from kubectl_dynamo.environment import Environment
from kubectl_dynamo.output.render import render
from kubectl_dynamo.result import Result
from tests.conftest import CORPUS_DIR, run_cli


def env(tty: bool = False, no_color: bool = False) -> Environment:
    return Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(), stdout_isatty=tty,
                       environ={"NO_COLOR": "1"} if no_color else {})


def table(data, wide, color):
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


def _tabulate_plain(rows, headers):
    """The reference: what grid() replaced (tabulate "plain", no number parsing, lines right-stripped)."""
    from tabulate import tabulate

    text = tabulate([[("-" if c is None else c) for c in r] for r in rows], headers=[h.upper() for h in headers],
                    tablefmt="plain", disable_numparse=True)
    return "\n".join(line.rstrip() for line in text.splitlines())


def test_grid_lays_out_tables_as_tabulate_plain():
    import random

    from kubectl_dynamo.output.render import grid, paint

    rng = random.Random(14)
    cells = ["a", "error", "crash-loop", "", " padded ", "x" * 30, None, 0, 12, 3.5, True, "two\nlines",
             "α×…", "-", "line1\nline2\nline3", "team-00/vllm-000"]
    for _ in range(2000):
        ncol = rng.randint(1, 5)
        headers = [rng.choice(["severity", "code", "a", "dgd", "message", "hint"]) for _ in range(ncol)]
        rows = []
        for _ in range(rng.randint(0, 5)):
            row = [rng.choice(cells) for _ in range(ncol)]
            row = [paint(c, rng.choice(["error", "ok"]), True) if isinstance(c, str) and c.strip() and rng.random() < 0.3
                   else c for c in row]
            row[0] = row[0] if str(row[0]).strip() else "z"  # the first column is never empty (a name)
            rows.append(row)
        assert grid(rows, headers) == _tabulate_plain(rows, headers), (rows, headers)
