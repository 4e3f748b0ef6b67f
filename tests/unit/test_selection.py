"""The orchestrator selection algorithm, pure (the operator's provider choice and webhook defaulting)."""

import pytest

from kubectl_dynamo.operator import selection as s

ALL = {"grove.io", "scheduler.grove.io", "scheduling.run.ai", "kai.scheduler", "leaderworkerset.x-k8s.io",
       "scheduling.volcano.sh"}


def gates(groups, config=None):
    return s.compute_gates(groups, config)


def chart(grove, kai, volcano=False):
    return {"orchestrators": {"grove": {"enabled": grove}, "kaiScheduler": {"enabled": kai},
                              "volcanoScheduler": {"enabled": volcano}}}


def test_auto_detection_without_config():
    g = gates(ALL)
    assert (g.grove, g.lws, g.kai_scheduler, g.volcano_scheduler, g.errors) == (True, True, True, False, ())


def test_lws_gate_needs_volcano_too():
    assert gates({"leaderworkerset.x-k8s.io"}).lws is False
    assert gates({"leaderworkerset.x-k8s.io", "scheduling.volcano.sh"}).lws is True


def test_chart_config_is_explicit_and_beats_detection():
    g = gates(ALL, chart(grove=False, kai=True))
    assert g.grove is False and g.kai_scheduler is True and g.lws is True  # lws never rendered: detected


def test_explicit_gate_without_api_is_a_startup_error():
    g = gates(set(), chart(grove=True, kai=True))
    assert g.errors == (
        "Grove is explicitly enabled in config but the Grove API group was not detected in the cluster",
        "Kai-scheduler is explicitly enabled in config but the scheduling.run.ai API group was not detected in the cluster",
    )
    g = gates({"leaderworkerset.x-k8s.io"}, {"orchestrators": {"lws": {"enabled": True}}})
    assert g.errors == ("LWS is explicitly enabled in config but the Volcano API group was not detected in the cluster",)


@pytest.mark.parametrize("value,provider", [("false", "component"), ("False", "component"), ("FALSE", "component"),
                                            ("true", "grove"), ("no", "grove"), (" false", "grove")])
def test_enable_grove_annotation_is_lower_cased_only(value, provider):
    assert s.select(gates(ALL), {s.ANN_ENABLE_GROVE: value}).provider == provider


def test_truth_table():
    on_on = gates(ALL)
    on_off = gates({"grove.io"})
    off_on = gates({"leaderworkerset.x-k8s.io", "scheduling.volcano.sh"})
    off_off = gates(set())
    no = {s.ANN_ENABLE_GROVE: "false"}
    assert s.select(on_on, {}).orchestrator == "grove"
    assert (s.select(on_on, no).provider, s.select(on_on, no).orchestrator) == ("component", "lws")
    assert s.select(on_off, no).error == s.ERR_NO_ORCHESTRATOR
    assert s.select(off_on, {}).orchestrator == "lws" and s.select(off_on, no).orchestrator == "lws"
    assert s.select(off_off, {}).error == s.ERR_NO_ORCHESTRATOR
    single = s.select(off_off, {}, multinode=False)
    assert single.error is None and single.provider == "component"


def test_kai_queue_default_annotation_and_existence():
    g = gates({"grove.io", "scheduling.run.ai"})
    sel = s.select(g, {})
    assert (sel.scheduler, sel.queue, sel.error) == ("kai-scheduler", "dynamo", None)
    sel = s.select(g, {s.ANN_KAI_QUEUE: "  team-a "}, kai_queues=["team-a"])
    assert (sel.queue, sel.error) == ("team-a", None)
    sel = s.select(g, {}, kai_queues=["default-queue"])
    assert sel.error == s.ERR_QUEUE_MISSING
    assert sel.reason == ("kai-scheduler queue validation failed: queue 'dynamo' not found in cluster. "
                          "Ensure the queue exists before using kai-scheduler")


def test_grove_without_kai_uses_default_scheduler():
    sel = s.select(gates({"grove.io"}), {})
    assert (sel.provider, sel.scheduler, sel.queue, sel.error) == ("grove", "default-scheduler", None, None)


def test_kai_and_volcano_for_grove_conflict():
    sel = s.select(gates(ALL, chart(True, True, volcano=True)), {})
    assert sel.error == s.ERR_SCHEDULER_CONFLICT
    assert sel.reason == "kai-scheduler and volcano scheduler integrations cannot both be enabled for Grove"


def test_grove_with_volcano_scheduler_queue_annotation():
    sel = s.select(gates(ALL, chart(True, False, volcano=True)), {s.ANN_VOLCANO_QUEUE: "gpu"})
    assert (sel.scheduler, sel.queue) == ("volcano", "gpu")


def test_assumed_gates_offline():
    assert s.assumed_gates(None, {}).grove is True
    assert s.assumed_gates(None, {s.ANN_ENABLE_GROVE: "false"}).lws is True
    assert s.select(s.assumed_gates("lws", {}), {}).orchestrator == "lws"
