"""explain's admission at operator 1.6.0 held against the 1.6 admission oracle, rule by rule.

The verdicts in tests/data/admission/*-1.6.jsonl.xz are the 1.6 admission oracle's (the 1.5 operator
code of ai-dynamo/dynamo @2a6da14c with the 1.6 webhook's role rules overlaid from michaelfeil/dynamo
@80b177f2 and tu-kim/dynamo @3f3d3dfa; every shim in tests/data/admission/PROVENANCE-1.6.md):
``generated-1.6`` steers into role templates, backends, nodeCount and both providers (what `generate
dgd` writes, the seed's role-template DGD, role edits, schema-drawn edits); ``targeted`` holds one
input per webhook rule of the port (and ``targeted`` without ``-1.6`` the 1.5 oracle's verdicts on
them). Compared: the verdict, and where the operator refuses for webhook reasons only, the field path
and reason of every refusal.
"""

from __future__ import annotations

import functools
import re

import pytest

from tests.fuzz import agreement


@functools.cache
def _replays(orchestrator, version="1.6.0", targeted=False) -> list:
    """Every targeted input; of the drawn ones every third (the whole set: scripts/admission-agreement)."""
    return [r for r in agreement.replay(orchestrator, version, targeted)
            if targeted or not r.case.startswith(("gen", "write")) or int(r.case.rsplit("-", 1)[1]) % 3 == 0]


def _webhook_only(r: agreement.Replay) -> bool:
    return bool(r.oracle_errors) and all(e.startswith("webhook: ") for e in r.oracle_errors)


@pytest.mark.parametrize("orchestrator", [None, "lws"])
def test_verdicts_agree_with_the_1_6_oracle(orchestrator):
    replays = _replays(orchestrator)
    assert len(replays) > 1000
    wrong = [r for r in replays if r.admitted == r.refused_by_explain]
    shown = [(r.case, r.provider, "admitted" if r.admitted else r.oracle_errors[:2],
              [f["message"][:160] for f in r.findings][:2]) for r in wrong[:8]]
    assert not wrong, f"{len(wrong)} of {len(replays)} disagree: {shown}"
    m = agreement.matrix(replays)
    assert m["admitted-passed"] > 200 and m["refused-refused"] > 200


@pytest.mark.parametrize("orchestrator", [None, "lws"])
def test_webhook_refusals_agree_rule_by_rule(orchestrator):
    """Where the 1.6 oracle refuses for webhook reasons only, explain names the same fields with the
    same reasons (quotes unified: the port words some values as Python does)."""
    checked = wrong = 0
    shown = []
    for r in _replays(orchestrator):
        if not _webhook_only(r):
            continue
        checked += 1
        oracle, mine = agreement.webhook_rules(r)
        if oracle != mine:
            wrong += 1
            shown.append((r.case, r.provider, oracle[:3], mine[:3]))
    assert checked > 100
    assert not wrong, f"{wrong} of {checked}: {shown[:5]}"


@pytest.mark.parametrize("version", ["1.6.0", "1.5.0"])
@pytest.mark.parametrize("orchestrator", ["grove", "lws"])
def test_targeted_rules_agree(version, orchestrator):
    """Each targeted input, on each provider, at each version: explain's webhook refusals equal the
    operator's, field path and reason (and the verdict agrees)."""
    wrong = []
    for r in _replays(orchestrator, version, True):
        oracle, mine = agreement.webhook_rules(r)
        if r.admitted == r.refused_by_explain or oracle != mine:
            wrong.append((r.case, r.admitted, oracle[:2], mine[:2], [f["message"][:100] for f in r.findings][:3]))
    assert not wrong, f"{len(wrong)}: {wrong[:5]}"


def _rule(text: str) -> str:
    """A webhook refusal without its values: the rule it comes from."""
    path, _, reason = text.partition(": ")
    path = re.sub(r"\[[^\]]*\]", "[]", path)
    reason = re.sub(r'"[^"]*"|\'[^\']*\'|-?\d+', "_", reason)
    return f"{path}: {reason}"


def test_every_webhook_rule_is_reached_alone():
    """Every rule of the port is, in the recorded targeted verdicts (1.6 or 1.5 oracle, either
    provider), the only webhook rule the operator refuses its input with: the input shows that rule
    and no other, so a test comparing rule by rule fails when it breaks (scripts/admission-mutants
    breaks each one). A schema error the CRD reports for the same mistake may stand beside it (the
    CRD and the webhook both check sidecar images, pvc names, duplicate client containers)."""
    from tests.fuzz import admission

    alone = set()
    for version in ("1.6.0", "1.5.0"):
        for orchestrator in ("grove", "lws"):
            for r in _replays(orchestrator, version, True):
                rules = {_rule(e[len("webhook: "):]) for e in r.oracle_errors if e.startswith("webhook: ")}
                if len(rules) == 1:
                    alone.add(r.case)
    missing = sorted({f"rule-{rule}" for rule, _, _ in admission._targets()} - alone - set(NOT_ALONE))
    assert not missing, missing


# Targeted inputs whose rule cannot be alone: another webhook rule always fires with it.
NOT_ALONE = {
    "rule-roles-name": "renaming a role also leaves the required role missing",
    "rule-frontend-sidecar-no-template": "a component without podTemplate also has no main image",
    "rule-failover-interpod-gpu": "GMS, which inter-pod failover needs, refuses the same missing GPU",
    "rule-alpha-num-shadows": "v1alpha1 intra-pod failover also needs GMS and the container discovery mode",
    "rule-failover-gpu-unreadable": "GMS, which inter-pod failover needs, refuses the same GPU quantity",
    "rule-failover-type": "GMS refuses the same component type",
    "rule-checkpoint-interpod-gms": "checkpointing is disabled in the operator's default configuration",
    "rule-checkpoint-failover": "checkpointing is disabled in the operator's default configuration",
}
