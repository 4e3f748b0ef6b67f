"""``kubectl dynamo mcp``'s cluster tools against the sandbox's real API server, through the official
MCP SDK client, each compared with the CLI's ``-o json`` on the same cluster.

The cluster is test_daily's (its ``state`` fixture: a Grove DGD whose pods kwok runs and whose logs kwok
serves through the real ``pods/log`` proxy; the images and the Grove controller are faked as it says, and
rank 2 runs another image, the fault doctor must find). Nothing changes the cluster between a tool call
and the CLI run it is compared with, so both read the same state.
"""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from kubectl_dynamo import contracts
from kubectl_dynamo.mcpserver.tools import BY_NAME
from tests.conftest import run_cli
from tests.integration.test_daily import NS, state  # noqa: F401  (the fixture)
from tests.mcp_client import mcp_server, structured, text_of

pytest.importorskip("mcp")
pytestmark = [pytest.mark.fullcluster]

DGD = "llm"


@pytest.fixture(scope="module")
def client(state):  # noqa: F811
    with mcp_server("--kubeconfig", str(state.sb.kubeconfig)) as c:
        yield c


@pytest.fixture(scope="module")
def listed(client):
    return {t.name: t for t in client.tools()}


def cli_json(state, *argv):  # noqa: F811
    proc = run_cli(*argv, "--kubeconfig", str(state.sb.kubeconfig), "-o", "json", timeout=180)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def without_ages(doc):
    """Ages count seconds since creation: the only values that differ between two reads of one state."""
    if isinstance(doc, dict):
        return {k: without_ages(v) for k, v in doc.items() if k not in ("age", "ageSeconds")}
    if isinstance(doc, list):
        return [without_ages(v) for v in doc]
    return doc


CALLS = [
    ("detect", {}, ["detect"]),
    ("get", {"namespace": NS}, ["get", "-n", NS]),
    ("get", {"name": DGD, "namespace": NS}, ["get", "dgd", DGD, "-n", NS]),
    ("tree", {"name": DGD, "namespace": NS}, ["tree", DGD, "-n", NS]),
    ("doctor", {"name": DGD, "namespace": NS}, ["doctor", DGD, "-n", NS]),
    ("doctor", {"allNamespaces": True, "minSeverity": "info"}, ["doctor", "-A", "--min-severity", "info"]),
    ("placement", {}, ["placement"]),
    ("rollout_status", {"name": DGD, "namespace": NS}, ["rollout", "status", DGD, "-n", NS, "--watch=false"]),
    ("rollout_history", {"name": DGD, "namespace": NS}, ["rollout", "history", DGD, "-n", NS]),
    ("explain", {"name": DGD, "namespace": NS}, ["explain", "dgd", DGD, "-n", NS]),
]


@pytest.mark.parametrize("tool,args,argv", CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)])
def test_cluster_tool_equals_cli(state, client, listed, tool, args, argv):  # noqa: F811
    data = structured(client.call(tool, args))
    Draft202012Validator(listed[tool].output_schema).validate(data)
    contracts.validator(BY_NAME[tool].schema).validate(data)
    assert without_ages(data) == without_ages(cli_json(state, *argv))


def test_doctor_finds_the_injected_fault_with_a_stable_id(client):
    first = structured(client.call("doctor", {"name": DGD, "namespace": NS}))
    again = structured(client.call("doctor", {"name": DGD, "namespace": NS}))
    assert [f["id"] for f in first["findings"]] == [f["id"] for f in again["findings"]]
    assert any(f["code"] == "image-mismatch" for f in first["findings"])


def test_logs_are_bounded_text(state, client):  # noqa: F811
    result = client.call("logs", {"name": DGD, "namespace": NS, "rank": 1, "tail": 1})
    assert not result.is_error, text_of(result)
    proc = run_cli("logs", DGD, "-n", NS, "--rank", "1", "--tail", "1", "--kubeconfig", str(state.sb.kubeconfig))
    assert text_of(result) == proc.stdout
    assert len(text_of(result).splitlines()) == 1 and "rank 1 serving" in text_of(result)


def test_unknown_dgd_is_the_cli_error_and_the_server_keeps_serving(state, client):  # noqa: F811
    result = client.call("tree", {"name": "no-such-dgd", "namespace": NS})
    assert result.is_error
    proc = run_cli("tree", "no-such-dgd", "-n", NS, "--kubeconfig", str(state.sb.kubeconfig))
    assert text_of(result) == proc.stderr.strip().splitlines()[-1]
    assert not client.call("get", {"namespace": NS}).is_error
