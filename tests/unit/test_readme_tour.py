"""The README's offline tour runs as written: every `kubectl dynamo` line of its "Two minutes
offline" section, in a scratch directory holding the repository's examples/, exits 0."""

from __future__ import annotations

import io
import re
import shlex
import shutil

from click.testing import CliRunner

from kubectl_dynamo.cli import PROG, cli
from kubectl_dynamo.environment import Environment
from tests.conftest import REPO


def tour_lines():
    text = (REPO / "README.md").read_text()
    section = text.split("## Two minutes offline", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    return [line.split("  #")[0].strip() for b in blocks for line in b.splitlines() if line.startswith("kubectl dynamo ")]


def test_the_offline_tour_runs(tmp_path, monkeypatch):
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    lines = tour_lines()
    assert len(lines) >= 6 and any(" generate " in x for x in lines) and any(" upgrade " in x for x in lines)
    for line in lines:
        words = shlex.split(line)[2:]
        target = None
        if ">" in words:
            words, target = words[: words.index(">")], words[words.index(">") + 1]
        out = io.StringIO()
        env = Environment(stdin=io.StringIO(), stdout=out, stderr=io.StringIO(),
                          cluster_factory=lambda _t: (_ for _ in ()).throw(AssertionError("the tour is offline")))
        result = CliRunner().invoke(cli, words, prog_name=PROG, obj=env)
        assert result.exit_code == 0, (line, result.output, env.stderr.getvalue())
        assert out.getvalue().strip(), line
        if target:
            (tmp_path / target).write_text(out.getvalue())
