"""The k9s plugins (kubectl_dynamo/data/k9s/plugins.yaml): valid for k9s, and every kubectl-dynamo command
line in them parses with the real CLI. k9s's schema: tests/data/k9s (see its PROVENANCE.md)."""

from __future__ import annotations

import json
import shlex

import click
import pytest
import yaml
from click.testing import CliRunner
from jsonschema import Draft7Validator

from kubectl_dynamo.cli import cli
from kubectl_dynamo.data import DATA_DIR
from kubectl_dynamo.operator.api import LABEL_DGD
from tests.conftest import DATA, REPO

PLUGINS_FILE = f"{DATA_DIR}/k9s/plugins.yaml"
PLUGINS = yaml.safe_load(open(PLUGINS_FILE))["plugins"]
K9S_SCHEMA = json.loads((DATA / "k9s" / "plugins.json").read_text())
VARS = {"$NAME": "qwen-0", "$NAMESPACE": "llm", "$CONTEXT": "prod", "$dgd": "qwen"}  # what k9s / the script set
SEPARATORS = {"|", "||", "&&", ";", "&", "(", ")", "{", "}"}


def test_validates_against_k9s_schema():
    Draft7Validator.check_schema(K9S_SCHEMA)
    Draft7Validator(K9S_SCHEMA).validate({"plugins": PLUGINS})


def test_the_schema_catches_a_misspelt_key():  # the validation is not vacuous
    bad = {"plugins": {"x": {**PLUGINS["dynamo-tree"], "shortcut": "Shift-T"}}}
    assert list(Draft7Validator(K9S_SCHEMA).iter_errors(bad))


def test_completion_k9s_prints_the_file():
    result = CliRunner().invoke(cli, ["completion", "--k9s"])
    assert result.exit_code == 0 and result.stdout == open(PLUGINS_FILE).read()


def dynamo_command_lines(plugin: dict) -> list:
    """Every `kubectl dynamo …` the plugin runs, its k9s variables filled in."""
    if plugin["command"] == "kubectl":
        words = [str(a) for a in plugin["args"]]
        assert words[0] == "dynamo"
        return [[VARS.get(w, w) for w in words[1:]]]
    assert plugin["command"] == "sh" and plugin["args"][0] == "-c"
    lexer = shlex.shlex(plugin["args"][1], posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    tokens = list(lexer)
    out = []
    for i in range(len(tokens) - 1):
        if tokens[i] == "kubectl" and tokens[i + 1] == "dynamo":
            words = []
            for t in tokens[i + 2:]:
                if t in SEPARATORS:
                    break
                words.append(VARS.get(t, t))
            out.append(words)
    return out


def parse(argv: list) -> click.Context:
    """Parse argv with the real Click commands (no run): a flag typo or a missing argument fails."""
    command: click.Command = cli
    argv = list(argv)
    while isinstance(command, click.Group):  # rollout status: the group's words first
        sub = command.get_command(click.Context(command), argv.pop(0))
        assert sub is not None
        command = sub
    return command.make_context(command.name, argv)


@pytest.mark.parametrize("key", sorted(PLUGINS))
def test_each_command_line_parses_and_reads_only(key):
    lines = dynamo_command_lines(PLUGINS[key])
    assert lines, key
    for argv in lines:
        ctx = parse(argv)
        assert ctx.command.name not in ("install", "generate", "upgrade"), argv  # read-only commands only
        assert ctx.params.get("context") == "prod" and ctx.params.get("namespace") == "llm"
        assert not ctx.params.get("write") and not ctx.params.get("exec_checks")


def test_scopes_and_coverage():
    crd = yaml.safe_load(open(f"{DATA_DIR}/crds/nvidia.com_dynamographdeployments.yaml"))
    dgd_scopes = {crd["spec"]["names"]["plural"], *crd["spec"]["names"]["shortNames"]}
    on_dgd = {k: p for k, p in PLUGINS.items() if set(p["scopes"]) == dgd_scopes}
    on_pods = {k: p for k, p in PLUGINS.items() if p["scopes"] == ["pods"]}
    assert len(on_dgd) + len(on_pods) == len(PLUGINS)
    commands = {tuple(w for w in line[:2] if not w.startswith("-") and w not in VARS.values())
                for p in on_dgd.values() for line in dynamo_command_lines(p)}
    assert {("tree",), ("doctor",), ("logs",), ("rollout", "status")} <= commands
    ranks = [line for p in on_dgd.values() for line in dynamo_command_lines(p) if "--rank" in line]
    assert ranks, "logs by rank"
    for group in (on_dgd, on_pods):  # one key, one plugin, in each view
        keys = [p["shortCut"] for p in group.values()]
        assert len(keys) == len(set(keys))
    for p in on_pods.values():  # a pod finds its DGD by the operator's label
        assert LABEL_DGD.replace(".", "\\.") in p["args"][1]


def test_documented():
    doc = (REPO / "docs" / "k9s.md").read_text()
    assert "kubectl dynamo completion --k9s" in doc
    for p in PLUGINS.values():
        assert p["shortCut"] in doc
