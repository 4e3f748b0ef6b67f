"""doctor's pure parts: pod classification, root causes and their table, on hand-made
snapshots (pods from tests/unit/builders.py, written from the upstream controllers' source)."""


import yaml

from kubectl_dynamo.checks import diagnosis
from kubectl_dynamo.checks.registry import run
from kubectl_dynamo.model import views as doctor
from kubectl_dynamo.model.platform import Facts
from kubectl_dynamo.output.tables import format_doctor
from tests.integration import world
from tests.unit import builders as b


def test_classify_grove_and_lws_ranks():
    grove = [doctor.classify(p) for p in b.grove_group("g", "ns", nodes=3)]
    assert [(p.role, p.rank, p.group) for p in grove] == [("leader", 0, 0), ("worker", 1, 0), ("worker", 2, 0)]
    lws = [doctor.classify(p) for p in b.lws_group("l", "ns", nodes=3, group=1)]
    assert [(p.role, p.rank, p.group) for p in lws] == [("leader", 0, 1), ("worker", 1, 1), ("worker", 2, 1)]


def _diagnose(snap) -> dict:
    return diagnosis.diagnose(snap, doctor.build_views(snap))


def test_failed_mount_event_is_reported_once_per_pod():
    doc = b.dgd()
    pods = b.all_running(b.grove_group())
    ev = b.warning_event(pods[1], "FailedMount",
                         'MountVolume.SetUp failed for volume "wait-leader-script": configmap not found', count=4)
    snap = b.snapshot(doc, pods, events=[ev, dict(ev)])
    findings = run("dgd", doctor.build_views(snap)[0], only=["failed-mount"])
    assert len(findings) == 1 and "configmap not found (x4)" in findings[0].message


def test_healthy_snapshot_has_no_errors_and_every_finding_has_a_cause_key():
    pods = [b.on_scheduler(p, "kai-scheduler") for p in b.all_running(b.grove_group())]
    result = _diagnose(b.snapshot(b.dgd(), pods))
    assert [f for f in result["findings"] if f["severity"] == "error"] == []
    assert all(list(f) == ["code", "severity", "message", "hint", "component", "object", "cause", "dgd", "id"]
               for f in result["findings"])
    assert result["deployments"][0]["components"][0]["groups"] == [{"index": 0, "podsReady": 2, "ranks": [0, 1]}]


# -- root causes ---------------------------------------------------------------------------------
def _codes(result: dict) -> list:
    return [(f["code"], f["cause"]["code"] if f["cause"] else None) for f in result["findings"]
            if f["severity"] != "info"]


def test_missing_pods_are_shown_under_the_create_failure_that_explains_them():
    doc = b.dgd()
    objs = b.lws_lineage(doc)
    sts = objs["leader_sts"]["metadata"]["name"]
    event = {"type": "Warning", "reason": "FailedCreate", "count": 2, "source": {"component": "statefulset-controller"},
             "message": f"create Pod {sts}-0 in StatefulSet {sts} failed error: admission webhook denied the request",
             "involvedObject": {"kind": "StatefulSet", "namespace": "ns", "name": sts}}
    snap = b.snapshot(doc, [], facts_=b.facts(b.LWS_GROUPS), events=[event], componentdeployments=[objs["dcd"]],
                      leaderworkersets=[objs["lws"]], statefulsets=[objs["leader_sts"]])
    result = _diagnose(snap)
    # the root first, its consequence right after it, pointing at it
    assert _codes(result) == [("controller-create-failed", None), ("group-incomplete", "controller-create-failed")]
    root, child = result["findings"][:2]
    assert child["cause"] == {"code": root["code"], "object": root["object"]}
    assert "admission webhook denied the request" in root["message"]
    table = format_doctor(result, wide=False, color=False)
    lines = [line for line in table.splitlines() if "controller-create-failed" in line or "group-incomplete" in line]
    assert "└ group-incomplete" in lines[1] and lines.index(lines[1]) == 1


def _kai_facts(kai_version: str) -> Facts:
    """Grove + KAI ``kai_version`` with the Dynamo operator 1.5.0 (its KAI minimum is v0.17.0)."""
    deps = [d for p, v in (("grove", "v0.1.0-alpha.12-rc1"), ("kai", kai_version)) for d in world.controllers(p, v)
            if d["kind"] == "Deployment"]
    objs = world.dynamo_operator(version="1.5.0", grove=True, kai=True)
    deps += [d for d in objs if d["kind"] == "Deployment"]
    for d in deps:
        d["status"] = {"availableReplicas": 1}
    config = yaml.safe_load(next(o for o in objs if o["kind"] == "ConfigMap")["data"]["config.yaml"])
    return b.facts(deployments=deps, operator_config=config, kai_queues=("dynamo",))


def _kai_group(kai_version: str, *, min_member: int, waiting_words: str, running: int) -> dict:
    """A 4-pod Grove group on kai-scheduler whose first ``running`` pods are placed, in one KAI PodGroup."""
    pods = [b.in_podgroup(b.on_scheduler(p, "kai-scheduler"), "kai", "pg-llm")
            for p in b.all_running(b.grove_group(nodes=4))]
    for p in pods[running:]:
        b.unschedulable(p, waiting_words)
    doc = b.dgd(components=[b.component(nodes=4, container=b.main_container(tp=4))])
    snap = b.snapshot(doc, pods, facts_=_kai_facts(kai_version),
                      kai_podgroups=[b.kai_podgroup("ns", "pg-llm", min_member=min_member)])
    return _diagnose(snap)


NO_NODE = "no nodes with enough resources were found: 4 node(s) didn't match the node selector."


def test_kai_before_0_17_partial_gang_is_shown_under_the_version_that_causes_it():
    """KAI v0.15.2 gave the recorded v1beta1 DGD one PodGroup with minMember 1 (grove-kai0152-gang-partial)."""
    result = _kai_group("v0.15.2", min_member=1, waiting_words=NO_NODE, running=1)
    assert _codes(result) == [("orchestrator-too-old", None), ("gang-not-enforced", "orchestrator-too-old"),
                              ("gang-partial", "gang-not-enforced")]
    gang = next(f for f in result["findings"] if f["code"] == "gang-not-enforced")
    assert "minMember 1 for the 4 pods" in gang["message"] and "v0.15.2" in gang["message"]
    partial = next(f for f in result["findings"] if f["code"] == "gang-partial")
    assert "use a gang scheduler" not in partial["hint"] and "KAI" in partial["hint"]


def test_replacement_pod_of_an_enforced_kai_gang_is_pending_not_a_partial_gang():
    """A running gang on KAI (minMember = the group) with one pod recreated and waiting: not gang-partial."""
    result = _kai_group("v0.17.0", min_member=4, waiting_words=NO_NODE, running=3)
    assert _codes(result) == [("group-pending", None)]
    (pending,) = [f for f in result["findings"] if f["code"] == "group-pending"]
    assert "replacement pod" in pending["message"] and NO_NODE in pending["message"]


def test_kai_gpu_words_are_insufficient_gpus_under_the_held_gang():
    """KAI's own words for a GPU shortage (recorded: grove-kai0152-gang-partial) and its gang verdict."""
    words = "no nodes with enough resources were found: 4 node(s) didn't have enough resources: GPUs."
    pods = [b.in_podgroup(b.on_scheduler(p, "kai-scheduler"), "kai", "pg-llm")
            for p in b.grove_group(nodes=2)]
    for p in pods:
        b.unschedulable(p, words)
    gang = "Resources were found for 0 pods while 2 are required for gang scheduling"
    snap = b.snapshot(b.dgd(), pods, facts_=_kai_facts("v0.17.0"),
                      kai_podgroups=[b.kai_podgroup("ns", "pg-llm", min_member=2, reasons=[gang])])
    result = _diagnose(snap)
    # one insufficient-gpus for the group (issue 36: duplicates folded), naming the other pod
    assert _codes(result) == [("gang-held", None), ("group-pending", "gang-held"), ("insufficient-gpus", "gang-held")]
    assert gang in result["findings"][0]["message"]
    short = result["findings"][2]
    assert "1 more pod of the group waits the same way" in short["message"]
    assert all(p["metadata"]["name"] in short["message"] or p["metadata"]["name"] == short["object"]["name"]
               for p in pods)


def test_pod_on_a_not_ready_node_quotes_the_kubelet():
    pods = b.all_running(b.lws_group())
    facts = b.facts(b.LWS_GROUPS, nodes=[b.node("gpu-node-0"), b.node("gpu-node-1", ready="Unknown")])
    (f,) = [f for f in _diagnose(b.snapshot(b.dgd(), pods, facts_=facts))["findings"]
            if f["code"] == "pod-on-unavailable-node"]
    assert "NotReady" in f["message"] and "Kubelet stopped posting node status." in f["message"]
    assert f["object"]["name"] == pods[1]["metadata"]["name"]


def test_nodes_unreadable_is_no_finding():
    result = _diagnose(b.snapshot(b.dgd(), b.all_running(b.lws_group()), facts_=b.facts(b.LWS_GROUPS, nodes=None)))
    assert not [f for f in result["findings"] if f["code"] == "pod-on-unavailable-node"]


def test_nest_findings_depth_follows_cause():
    from kubectl_dynamo.output.tables import nest_findings

    obj = {"kind": "Pod", "namespace": "n", "name": "p"}
    fs = [{"code": "a", "object": obj, "cause": None},
          {"code": "b", "object": obj, "cause": {"code": "a", "object": obj}},
          {"code": "c", "object": obj, "cause": {"code": "b", "object": obj}},
          {"code": "d", "object": obj, "cause": {"code": "zz", "object": obj}}]  # its cause is not shown
    assert [d for _, d in nest_findings(fs)] == [0, 1, 2, 0]


def test_causes_are_linked_within_each_dgd_at_scale(monkeypatch):
    """link_causes looks for a consequence's cause among its own DGD's findings: with a thousand DGDs
    each consequence still finds the cause of its own group, none of another DGD's, and compares it
    with a few candidates, not with every finding (it was quadratic: 0.8 s at 2,000 findings)."""
    from kubectl_dynamo.findings.finding import Finding

    compared = []
    covers = diagnosis._covers
    monkeypatch.setattr(diagnosis, "_covers", lambda c, f: compared.append(1) or covers(c, f))

    findings = []
    for i in range(1000):
        where = ("ns", f"dgd-{i}", "decode", 0)
        obj = {"kind": "Pod", "namespace": "ns", "name": f"dgd-{i}-0"}
        findings.append(Finding("group-incomplete", "error", "m", object=obj, where=where))
        findings.append(Finding("gang-held", "error", "m", object={**obj, "kind": "PodGroup"}, where=where))
    linked = diagnosis.link_causes(findings)
    assert len(compared) <= len(findings)
    incomplete = [f for f in linked if f.code == "group-incomplete"]
    assert len(incomplete) == 1000
    assert all(f.cause == {"code": "gang-held", "object": {**f.object, "kind": "PodGroup"}} for f in incomplete)
    # each consequence follows its own cause in the output order
    assert [f.code for f in linked[:4]] == ["gang-held", "group-incomplete", "gang-held", "group-incomplete"]
