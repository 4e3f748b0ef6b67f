"""At 80 columns no line of any command's table is wider than the terminal (issue 18, part 4).

Each command's table is rendered from real data: the states the real controllers left
(tests/data/recorded/, read through RecordedCluster) and the upstream example manifests
(tests/data/corpus/) for explain; the renderer is told the terminal is 80 columns wide, as
the Environment tells it on a real terminal. Piped (no width), the same tables keep every cell whole.
"""

from __future__ import annotations

import io
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.environment import Environment
from kubectl_dynamo.output.render import render
from tests.conftest import CORPUS_DIR

RECORDED = Path(__file__).resolve().parent.parent / "data" / "recorded"
STATES = sorted(p.name for p in RECORDED.iterdir() if (p / "manifest.json").is_file())  # sequences (NN/ steps) aside
COLUMNS = 80
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def terminal(columns: int = COLUMNS) -> Environment:
    return Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(), stdout_isatty=True,
                       columns=columns, now=lambda: datetime(2026, 12, 2, 10, 0, tzinfo=timezone.utc))


def shown(result, fmt: str = "table", columns: int = COLUMNS) -> list:
    env = terminal(columns)
    render(result, fmt, env)
    return [_ANSI.sub("", line) for line in env.stdout.getvalue().splitlines()]


def assert_fits(lines: list, what: str) -> None:
    wide = [line for line in lines if len(line) > COLUMNS]
    assert not wide, f"{what}: {len(wide)} lines wider than {COLUMNS}, e.g. {wide[0]!r}"


def _dgds(state: str):
    snap = RecordedCluster(str(RECORDED / state))
    import json

    path = RECORDED / state / "resources/nvidia.com/v1beta1/dynamographdeployments.json"
    items = json.loads(path.read_text())["items"] if path.exists() else []
    del snap
    return [(d["metadata"]["namespace"], d["metadata"]["name"]) for d in items]


@pytest.mark.parametrize("state", STATES)
def test_cluster_commands_fit_80_columns(state):
    from kubectl_dynamo.commands.detect import run_detect
    from kubectl_dynamo.commands.doctor import run_doctor
    from kubectl_dynamo.commands.get import run_get
    from kubectl_dynamo.commands.tree import run_tree
    from kubectl_dynamo.commands.version import run_version

    def cluster(ns=None):
        return RecordedCluster(str(RECORDED / state), ns)

    env = terminal()
    assert_fits(shown(run_detect(cluster())), f"{state} detect")
    for severity in ("error", "info"):
        assert_fits(shown(run_doctor(cluster(), all_namespaces=True, min_severity=severity)), f"{state} doctor")
    assert_fits(shown(run_version(cluster())), f"{state} version")
    assert_fits(shown(run_get(cluster(), env, all_namespaces=True)), f"{state} get -A")
    for ns, name in _dgds(state):
        assert_fits(shown(run_get(cluster(ns), env, all_namespaces=False, name=name)), f"{state} get {name}")
        assert_fits(shown(run_tree(cluster(ns), name)), f"{state} tree {name}")


def test_piped_and_wide_keep_every_cell_whole():
    from kubectl_dynamo.commands.doctor import run_doctor

    result = run_doctor(RecordedCluster(str(RECORDED / "grove-gang-pending")), all_namespaces=True)
    messages = [f["message"] for f in result.data["findings"] if f["severity"] == "error"]
    for env in (Environment(io.StringIO(), io.StringIO(), io.StringIO(), stdout_isatty=False, columns=COLUMNS),):
        render(result, "table", env)
        out = env.stdout.getvalue()
        assert all(m in out for m in messages) and "…" not in out
    wide = "\n".join(shown(result, "wide"))
    assert all(m in wide for m in messages)
    narrow = "\n".join(shown(result))
    assert not any(m in narrow for m in messages if len(m) > COLUMNS)  # wrapped on the terminal


@pytest.mark.parametrize("path", sorted((CORPUS_DIR / "v1.0.1").glob("*.yaml")), ids=lambda p: p.name)
def test_explain_fits_80_columns(path):
    from kubectl_dynamo.commands.explain import run_files
    from kubectl_dynamo.errors import InputError
    from kubectl_dynamo.inputs.manifests import load

    try:
        docs = load(str(path))
    except InputError:
        pytest.skip("not a readable manifest")
    for changes in (False, True):
        assert_fits(shown(run_files([(str(path), docs)], changes=changes)), f"explain {path.name}")


def test_field_docs_fit_80_columns():
    from kubectl_dynamo.commands.explain import run_field_docs

    for path in (["spec"], ["spec", "components"], ["spec", "components", "multinode"]):
        assert_fits(shown(run_field_docs(path, "v1beta1", False)), "explain dgd." + ".".join(path))


@pytest.mark.parametrize("state", ["grove-healthy", "lws-mpi-secret-deleted"])
def test_collect_summary_fits_80_columns(state, tmp_path):
    from kubectl_dynamo.commands.collect import run_collect
    from tests.unit.test_daily_pure import RecordedWithLogs

    bundle = str(tmp_path / ("a-rather-long-directory-name-for-the-bundle-" * 2) / "bundle.tar.gz")
    Path(bundle).parent.mkdir()
    result = run_collect(RecordedWithLogs(str(RECORDED / state), "llm"), terminal(), name=None, all_namespaces=True,
                         output=bundle)
    assert_fits(shown(result), f"{state} collect")


@pytest.mark.parametrize("orchestrator, separately", [("grove", False), ("grove", True), ("lws", False)])
def test_install_plan_fits_80_columns(orchestrator, separately):
    from kubectl_dynamo.commands.install import plan as ins
    from kubectl_dynamo.output.tables import format_plan

    plan = ins.build_plan(ins.Request(orchestrator, separately=separately, namespace="team-dynamo-platform"))
    text = format_plan(plan, dry_run=True, width=COLUMNS)
    assert_fits(text.splitlines(), f"install plan {orchestrator}")
    whole = format_plan(plan, dry_run=True)
    assert " ".join(text.split()) == " ".join(whole.split())  # folded at spaces only: the same words
