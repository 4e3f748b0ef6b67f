"""explain's validation equals the operator's own admission (issue 19, part 3).

The verdicts in tests/data/admission/ are the operator's (ai-dynamo/dynamo @2a6da14c: the API
server's checks of the CRD, conversion, the mutating and validating webhooks, Grove gate on and
off; see PROVENANCE.md there) for the corpus, the oracle cases, the bad-input corpus and a seeded
set of DGDs drawn from the schema. Each is replayed through explain's validation: a DGD the
operator refuses must give an error finding (or be unreadable: exit 2), one it admits must give no
error finding. ``scripts/admission-agreement`` replays all of them and prints the matrix.
"""

from __future__ import annotations

import functools

import pytest
import yaml

from kubectl_dynamo.data import DATA_DIR
from kubectl_dynamo.validation import cel, webhooks
from tests.fuzz import agreement

# Where the oracle departs from the API server: it validates `status` as a whole on create. The DGD
# CRD has a status subresource, so the API server drops status after the mutating webhook decoded it
# and before validating the create (apiextensions-apiserver customResourceStrategy.PrepareForCreate):
# a status value only the schema refuses (an enum, a pattern, a required key) is admitted; unknown
# fields, wrong types and unparsable times still refuse (strict decoding, the webhook's decoding).
SCHEMA_ONLY = ("Unsupported value", "Required value", "should match", "should be")


def _departure(r: agreement.Replay) -> bool:
    return not r.admitted and bool(r.oracle_errors) and all(
        e.startswith("status.") and any(w in e for w in SCHEMA_ONLY) for e in r.oracle_errors)


@functools.cache
def _subset(orchestrator=None) -> list:
    """The fixed inputs and every third generated DGD, replayed once (the whole set: scripts/admission-agreement)."""
    return [r for r in agreement.replay(orchestrator)
            if not r.case.startswith("gen-") or int(r.case.rsplit("-", 1)[1]) % 3 == 0]


@pytest.mark.parametrize("orchestrator", [None, "lws"])
def test_validation_agrees_with_the_operators_admission(orchestrator):
    replays = _subset(orchestrator)
    assert len(replays) > 1000
    wrong = [r for r in replays if r.admitted == r.refused_by_explain and not _departure(r)]
    shown = [(r.case, r.dgd, r.provider, "admitted" if r.admitted else r.oracle_errors[:2],
              [f["message"][:160] for f in r.findings][:2]) for r in wrong[:10]]
    assert not wrong, f"{len(wrong)} of {len(replays)} disagree: {shown}"
    m = agreement.matrix(replays)
    assert m["admitted-passed"] > 300 and m["refused-refused"] > 300  # both sides are exercised


def test_webhook_refusals_agree_rule_by_rule():
    """Where the operator refuses for webhook reasons only, explain names the same fields with the
    same reasons (its words: tests/fuzz/agreement.py webhook_rules), not only the same verdict."""
    checked, wrong = 0, []
    for r in _subset():
        if r.oracle_errors and all(e.startswith("webhook: ") for e in r.oracle_errors):
            checked += 1
            oracle, mine = agreement.webhook_rules(r)
            if oracle != mine:
                wrong.append((r.case, r.provider, oracle[:2], mine[:2]))
    assert checked > 100
    assert not wrong, f"{len(wrong)} of {checked}: {wrong[:5]}"


def test_every_refusal_names_a_field_and_the_operators_reason():
    for r in _subset():
        if r.refused_by_explain and r.findings and r.findings[0]["code"] != "input-error":
            assert all(": " in f["message"] for f in r.findings), r.findings


def test_every_cel_rule_of_the_bundled_crd_is_modelled():
    with open(f"{DATA_DIR}/crds/nvidia.com_dynamographdeployments.yaml", encoding="utf-8") as f:
        crd = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    rules = set()

    def walk(node):
        if isinstance(node, dict):
            rules.update(" ".join(r["rule"].split()) for r in node.get("x-kubernetes-validations") or ())
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(crd)
    assert rules and rules <= set(cel.RULES), rules - set(cel.RULES)


@pytest.mark.parametrize("image,parses", [
    # runtimeversion.ParseImageVersion (ai-dynamo/dynamo@2a6da14c internal/runtimeversion/runtimeversion.go)
    ("nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.1", True), ("x:v1.2.3", True), ("x:1.0.0-rc1", True),
    ("registry:5000/x:1.2.3", True), ("x:1.2.3@sha256:" + "b" * 64, True), ("x:1.0", False),
    ("my-registry/sglang-runtime:my-tag", False), ("registry:5000/x", False), ("x", False), ("x:01.0.0", False)])
def test_image_version(image, parses):
    assert webhooks.image_version(image) is parses


def test_a_document_explain_did_not_see_counts_against_the_verdict_of_its_provider(monkeypatch):
    """explain saw fewer DGDs than the operator: the replay disagrees with that provider's verdict
    (it read the Grove verdict whatever the provider)."""
    rows = [{"case": "c", "dgd": 1, "grove": {"ok": False}, "lws": {"ok": True}}]
    monkeypatch.setattr(agreement, "verdicts", lambda: rows)
    monkeypatch.setattr(agreement, "generated", lambda: {"c": ""})
    monkeypatch.setattr(agreement, "explain_validation", lambda *a: [("lws", [])])
    (r,) = agreement.replay("lws")
    assert r.provider == "lws" and r.admitted and r.refused_by_explain
    assert agreement.matrix([r])["admitted-refused"] == 1
