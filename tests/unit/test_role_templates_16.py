"""The seed's "Role-Specific Pod Templates" (Dynamo 1.6.0 docs, tests/data/seeds/) on both providers:
the four template-source modes, the role-replica defaulting and the TensorRT-LLM sshd rule, as
explain reports them at operator 1.6.0.

Expectations come from the 1.6 operator's code where it has the rule, with its field path and
message: michaelfeil/dynamo @80b177f2c87c3c80dec88524bb0cda666cc3effc
deploy/operator/internal/webhook/validation/shared_v1beta1.go (validateComponentRoles,
validateComponentRoleSpec, validateComponentPodTemplateMode, validateMultinodeComponentType) and
tu-kim/dynamo @3f3d3dfa22e790642d10c1ffcf5d72750f4f91a8 (Chart 1.6.0)
deploy/operator/internal/webhook/defaulting/dynamographdeployment_handler.go (role replicas from
nodeCount). The sshd rule is not in the webhook (the operator admits and renders such a DGD): it is
the docs' contract, checked as a warning.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from kubectl_dynamo.commands import explain

SEED = Path(__file__).resolve().parents[1] / "data" / "seeds" / "role-specific-multinode.yaml"
PROVIDERS = ["grove", "lws"]


def seed() -> dict:
    return yaml.safe_load(SEED.read_text(encoding="utf-8"))


def run(doc: dict, provider: str) -> dict:
    return explain.explain_one(copy.deepcopy(doc), orchestrator=provider, operator_version="1.6.0")


ADMISSION = ("schema-invalid", "admission-refused", "template-source-mode")


def errors(result: dict) -> list:
    """Admission's errors (what the API server and the webhooks refuse; render errors of a refused
    DGD are its consequences and are judged elsewhere)."""
    return [(f["code"], f["message"]) for f in result["findings"] if f["severity"] == "error" and f["code"] in ADMISSION]


def replicas(result: dict) -> dict:
    return {r["name"]: r["replicas"] for r in result["components"][0]["roles"]}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_valid_leader_and_worker_templates(provider):
    """The seed's own DGD: admitted, rendered with one leader and nodeCount - 1 workers."""
    r = run(seed(), provider)
    assert errors(r) == []
    assert replicas(r) == {"leader": 1, "worker": 1}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_valid_component_template(provider):
    doc = seed()
    comp = doc["spec"]["components"][0]
    comp["podTemplate"] = comp.pop("roles")[0]["podTemplate"]
    r = run(doc, provider)
    assert errors(r) == []
    assert replicas(r) == {"leader": 1, "worker": 1}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_invalid_component_and_role_templates(provider):
    doc = seed()
    comp = doc["spec"]["components"][0]
    comp["podTemplate"] = copy.deepcopy(comp["roles"][0]["podTemplate"])
    assert errors(run(doc, provider)) == [(
        "template-source-mode", "spec.components[0].podTemplate: Forbidden: cannot be combined with "
        "roles[].podTemplate; choose one complete PodTemplate source mode")]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("missing", [0, 1])
def test_invalid_template_on_one_role_only(provider, missing):
    doc = seed()
    del doc["spec"]["components"][0]["roles"][missing]["podTemplate"]
    assert errors(run(doc, provider)) == [(
        "template-source-mode", f"spec.components[0].roles[{missing}].podTemplate: Required value: is required "
        "on every role when role-specific PodTemplates are used")]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("nodes", [2, 3, 5])
def test_role_replicas_default_from_node_count(provider, nodes):
    doc = seed()
    comp = doc["spec"]["components"][0]
    comp["multinode"]["nodeCount"] = nodes
    r = run(doc, provider)
    assert errors(r) == []
    assert replicas(r) == {"leader": 1, "worker": nodes - 1}
    # authored replicas must equal what nodeCount implies
    comp["roles"][1]["replicas"] = nodes - 1
    assert errors(run(doc, provider)) == []
    comp["roles"][1]["replicas"] = nodes
    assert errors(run(doc, provider)) == [(
        "template-source-mode", f"spec.components[0].roles[1].replicas: Invalid value: {nodes}: must equal "
        f'{nodes - 1} for multinode role "worker"')]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_role_templates_before_1_6_are_refused_once(provider):
    r = explain.explain_one(seed(), orchestrator=provider, operator_version="1.5.0")
    assert errors(r)[0][0] == "schema-invalid" and "has no roles" in errors(r)[0][1]
    assert not [m for c, m in errors(r) if c == "template-source-mode"]


def trtllm(worker_line: str) -> dict:
    doc = seed()
    doc["spec"]["backendFramework"] = "trtllm"
    for role, line in zip(doc["spec"]["components"][0]["roles"],
                          ["mpirun -n 2 bash -c 'trtllm-llmapi-launch python3 -m dynamo.trtllm --model-path m'",
                           worker_line]):
        main = role["podTemplate"]["spec"]["containers"][0]
        main.update(image="nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.6.0", command=["/bin/sh", "-c"], args=[line])
    return doc


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("line,fires", [
    ("sleep infinity", True),
    ("exec /usr/sbin/sshd -D", True),  # sshd, but on its default port 22
    ("printf 'Port 2222\\n' > /tmp/c && exec /usr/sbin/sshd -D -f /tmp/c", False),
    ("exec /usr/sbin/sshd -D -p 2222", False),
])
def test_trtllm_worker_must_start_sshd_on_2222(provider, line, fires):
    r = run(trtllm(line), provider)
    assert errors(r) == []  # the operator admits and renders it
    worker = next(x for x in r["components"][0]["roles"] if x["name"] == "worker")
    main = next(c for c in worker["podSpec"]["containers"] if c["name"] == "main")
    assert main["args"] == [line] and main["readinessProbe"]["tcpSocket"] == {"port": 2222}
    assert any(f["code"] == "trtllm-worker-no-sshd" for f in r["findings"]) is fires
