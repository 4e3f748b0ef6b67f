"""Everything the plugin writes passes explain (issue 33, item 3): a property over the whole flag
space of `generate dgd` (backend, orchestrator, role templates, API version, disaggregation, TP/PP/DP,
nodes, GPUs, frontend, compilation cache, shared memory, images, selectors, operator version) and
of `upgrade dgd` (the same outputs in v1alpha1, upgraded with --role-templates / --topology-aliases).

Each output is schema-valid, and explain -- admission (the operator's webhooks as ported, held
against the operator's own verdicts in test_admission*.py) and the render -- gives it no error
finding, for the provider it asks for, at the operator version it targets. A combination generate
cannot write is refused with one line naming the reason (SpecError), never written half-valid.
"""

from __future__ import annotations

import copy

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_dynamo.commands import explain
from kubectl_dynamo.commands import generate as gen
from kubectl_dynamo.commands import upgrade as up
from kubectl_dynamo.operator import api
from kubectl_dynamo.validation.schema import schema_errors

OPERATORS = ["1.6.0", "1.5.0", "1.4.0", "1.1.0"]
SETTINGS = settings(max_examples=120, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def engine(draw, name):
    nodes = draw(st.integers(1, 4))
    gpus = draw(st.sampled_from([1, 2, 4, 8]))
    pp = draw(st.sampled_from([None, None, 1, 2]))
    tp = draw(st.sampled_from([None, None, nodes * gpus, max(1, nodes * gpus // 2), 3]))
    return gen.engine(name, nodes, gpus, tp, pp, draw(st.sampled_from([None, 1, 2])))


@st.composite
def specs(draw):
    disaggregated = draw(st.booleans())
    engines = [draw(engine("prefill")), draw(engine("decode"))] if disaggregated else [draw(engine("worker"))]
    role_templates = draw(st.booleans())
    orchestrator = draw(st.sampled_from(gen.ORCHESTRATORS))
    backend = draw(st.sampled_from(api.BACKENDS))
    return gen.GenerateSpec(
        name=draw(st.sampled_from(["llm", "ds-r1", "q"])), backend=backend, model="Qwen/Qwen3-8B",
        engines=engines, frontend=draw(st.booleans()), orchestrator=orchestrator,
        queue=draw(st.sampled_from([None, "team-a"])) if orchestrator == "grove" else None,
        role_templates=role_templates,
        leader_node_selector=draw(st.sampled_from([{}, {"example.com/engine-role": "leader"}])) if role_templates else {},
        worker_node_selector=draw(st.sampled_from([{}, {"example.com/engine-role": "worker"}])) if role_templates else {},
        leader_image=draw(st.sampled_from([None, f"nvcr.io/nvidia/ai-dynamo/{backend}-runtime:1.6.0"]))
        if role_templates else None,
        compilation_cache=draw(st.sampled_from([None, ("compile-cache", "/cache")]
                                               + ([("compile-cache", None)] if backend == "vllm" else []))),
        shared_memory=draw(st.sampled_from([None, "16Gi"])),
        api_version=draw(st.sampled_from(gen.API_VERSIONS)),
        operator_version=draw(st.sampled_from(OPERATORS)))


def explain_errors(doc: dict, orchestrator: str, operator_version: str) -> list:
    result = explain.explain_one(copy.deepcopy(doc), orchestrator=orchestrator, operator_version=operator_version)
    return [(f["code"], f["message"]) for f in result["findings"] if f["severity"] == "error"]


@SETTINGS
@given(specs())
def test_generate_output_passes_explain(spec):
    try:
        doc = gen.build(spec)
    except gen.SpecError as e:
        assert "\n" not in str(e) and str(e)  # one line, with the reason
        return
    assert schema_errors(doc) == []
    assert explain_errors(doc, spec.orchestrator, spec.operator_version) == []


@SETTINGS
@given(specs(), st.booleans(), st.booleans())
def test_upgrade_output_passes_explain(spec, role_templates, topology_aliases):
    """generate's v1alpha1 form of the same DGD, upgraded (optionally into role templates and the
    1.6 topology aliases), passes explain at the operator version upgrade targeted."""
    spec.api_version, spec.role_templates = api.V1ALPHA1, False
    spec.leader_node_selector = spec.worker_node_selector = {}
    spec.leader_image = spec.worker_image = None
    try:
        alpha = gen.build(spec)
    except gen.SpecError:
        return
    opts = up.Options(role_templates=role_templates, topology_aliases=topology_aliases,
                      orchestrator=spec.orchestrator, operator_version=spec.operator_version)
    try:
        result = up.upgrade_text(yaml.safe_dump(alpha), opts)
    except up.UpgradeError as e:
        assert "\n" not in str(e) and str(e)
        return
    (doc,) = [d for d in yaml.safe_load_all(result.text) if d]
    assert doc["apiVersion"] == api.V1BETA1
    assert schema_errors(doc) == []
    assert explain_errors(doc, spec.orchestrator, spec.operator_version) == []


def test_recorded_writes_are_admitted_by_the_1_6_oracle():
    """A large drawn sample of generate/upgrade outputs at operator 1.6.0 (tests/fuzz/admission.py
    writes16) was fed to the 1.6 admission oracle (tests/data/admission/PROVENANCE-1.6.md): it admits
    every one on the provider it was written for. Today's output for the same flags is that very
    text, or (when generate has changed since) explain admits it -- the port the agreement tests
    hold against the same oracle."""
    import json

    from tests.fuzz import admission, agreement

    texts = agreement.generated("1.6.0")
    rows = [r for r in agreement.verdicts("1.6.0") if r["case"].startswith("write16-")]
    assert len(rows) >= 300
    same = 0
    bases = {c["id"]: json.loads(c["base"]) for c in agreement._rows("generated-1.6.jsonl.xz")
             if c["id"].startswith("write16-")}
    for row in rows:
        flags = bases[row["case"]]
        provider = "grove" if flags["orchestrator"] == "grove" else "lws"
        assert row[provider]["ok"], (row["case"], row[provider]["errors"][:2])
        current = admission.write_text(flags)
        assert current is not None, row["case"]
        if current == texts[row["case"]]:
            same += 1
        else:
            assert explain_errors(json.loads(current), flags["orchestrator"], flags["operator_version"]) == []
    assert same >= len(rows) * 0.9, f"only {same} of {len(rows)} outputs as recorded: re-record (scripts/admission-verdicts)"
