"""Completion of DGD names, namespaces, contexts and check codes through kubectl's ``__complete``
protocol (issue 18, part 4): names read from a recorded cluster, nothing when the cluster cannot be read."""

from __future__ import annotations

import io
import time
from pathlib import Path

from click.shell_completion import ShellComplete

from kubectl_dynamo.cli import cli
from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.environment import Environment
from kubectl_dynamo.findings import catalogue
from tests.conftest import run_cli

STATE = str(Path(__file__).resolve().parent.parent / "data" / "recorded" / "lws-mpi-secret-deleted")
KUBECONFIG = """apiVersion: v1
kind: Config
current-context: lab
clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: lab, context: {cluster: c, user: u}}, {name: prod-east, context: {cluster: c, user: u}}]
"""


def complete(words, incomplete, env=None):
    args = {"obj": env} if env else {}
    return [c.value for c in ShellComplete(cli, args, "kubectl-dynamo", "_X").get_completions(words, incomplete)]


def recorded_env(namespace="llm"):
    return Environment(io.StringIO(), io.StringIO(), io.StringIO(),
                       cluster_factory=lambda target: RecordedCluster(STATE, target.namespace or namespace))


def test_dgd_names_from_the_cluster():
    env = recorded_env()
    assert complete(["doctor"], "", env) == ["sglang-mn", "trtllm-mn", "vllm-mn"]
    assert complete(["tree"], "v", env) == ["vllm-mn"]
    assert complete(["get"], "", env)[0] == "dgd" and complete(["get", "dgd"], "t", env) == ["trtllm-mn"]
    assert complete(["doctor", "-n", "elsewhere"], "", env) == []


def test_namespaces_and_contexts(tmp_path):
    assert "llm" in complete(["doctor", "-n"], "", recorded_env())
    cfg = tmp_path / "config"
    cfg.write_text(KUBECONFIG)
    assert complete(["get", "--kubeconfig", str(cfg), "--context"], "") == ["lab", "prod-east"]
    assert complete(["get", "--kubeconfig", str(cfg), "--context"], "p") == ["prod-east"]


def test_codes_for_only_skip_and_explain():
    assert complete(["doctor", "--explain"], "ssh") == [c for c in catalogue.CATALOGUE if c.startswith("ssh")]
    assert complete(["doctor", "--only"], "ssh-secret-missing,kai-queue-m") == ["ssh-secret-missing,kai-queue-missing"]
    assert "group-pending" in complete(["doctor", "--skip"], "group-")


def test_unreadable_cluster_completes_nothing_quickly_and_silently(tmp_path):
    cfg = tmp_path / "config"
    cfg.write_text(KUBECONFIG)  # a server nothing listens on
    start = time.monotonic()
    proc = run_cli("__complete", "doctor", "--kubeconfig", str(cfg), "")
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout == ":4\n"
    assert time.monotonic() - start < 15
    proc = run_cli("__complete", "doctor", "--kubeconfig", str(tmp_path / "missing"), "-n", "")
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout == ":4\n"
