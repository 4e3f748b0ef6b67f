"""Every YAML the plugin writes reads back the same in Kubernetes (issue 19, part 4).

The judge is Kubernetes' own YAML reader: tests/data/yaml/ records how sigs.k8s.io/yaml reads
thousands of plain scalars. Property: a string the plugin writes *plain* is one that reader reads
back as the same string (a quoted scalar is a string in every YAML reader), and the plugin's own
reader gets the string back too. Both writers are held to it: PyYAML (explain --objects, generate,
-o yaml) and ruamel.yaml (upgrade).
"""

from __future__ import annotations

import io
import json
import lzma

import pytest
import yaml

from kubectl_dynamo.commands.upgrade import _yaml
from kubectl_dynamo.output.render import to_yaml
from tests.conftest import REPO

ROWS = [json.loads(line) for line in lzma.open(REPO / "tests/data/yaml/plain-scalars.jsonl.xz", "rt",
                                               encoding="utf-8")]


def _ruamel(data) -> str:
    out = io.StringIO()
    _yaml().dump(data, out)
    return out.getvalue()


@pytest.mark.parametrize("write", [to_yaml, _ruamel], ids=["pyyaml", "ruamel"])
def test_strings_read_back_the_same_in_kubernetes(write):
    assert sum(1 for r in ROWS if r["read"] != r["s"]) > 500  # the data holds the traps
    wrong = []
    for r in ROWS:
        text = write({"v": r["s"]})
        assert yaml.safe_load(text) == {"v": r["s"]}, text
        if text == f"v: {r['s']}\n" and (r["error"] or r["read"] != r["s"]):
            wrong.append((r["s"], r["read"]))
    assert not wrong, f"written plain, read by Kubernetes as something else: {wrong[:20]}"


@pytest.mark.parametrize("value", ["y", "n", "on", "off", "yes", "no", "1e3", "12e45678", "0x1f", "0o17", "017", "~",
                                   "null", "2001-12-14", ".inf", "1_000"])
def test_keys_and_nested_values_are_quoted(value):
    doc = {"metadata": {"labels": {value: value}}, "spec": [{"env": [{"name": "X", "value": value}]}]}
    for text in (to_yaml(doc), _ruamel(doc)):
        assert f"'{value}'" in text and f" {value}\n" not in text and f" {value}:" not in text, text
