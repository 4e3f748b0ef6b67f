"""The real LWS manager and Volcano scheduler, controller-manager and admission on the sandbox.

Nothing here is fabricated but the nodes (kwok) and the GPUs on them: a LeaderWorkerSet is applied
as a user would, and every assertion is about what the real controllers made of it. Each
expectation cites the upstream source it comes from (repository, file, tag and commit):
- LWS: kubernetes-sigs/lws v0.9.0 (f056f611ae7721f9983ac35f26bfbae8547fd9f3), built by scripts/sandbox;
- Volcano: volcano-sh/volcano v1.10.0 (c601aed1f0bbedc254eaafed5dc57b0cc90fb60c) and the
  volcano-sh/apis v1.10.0 it builds with.
The controllers join the shared sandbox for this module only; see tests/conftest.py.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import CONTROLLERS
from tests.integration import world as w
from tests.integration.real import (
    GROUP_LABEL,
    GROUP_NAME_ANNOTATION,
    NAME_LABEL,
    REVISION_LABEL,
    WORKER_LABEL,
    get,
    items,
    lws,
    until,
)

pytestmark = [pytest.mark.fullcluster, pytest.mark.controllers]

NODE = "kd-real-gpu"  # a node of our own: what other modules left on the shared nodes cannot change the sums
POOL = {"kubectl-dynamo.test/pool": "real-controllers"}


# Volcano's admission runs only in test_volcano_admission_*: with it, a pod of schedulerName volcano
# that names a PodGroup not yet there is refused, and LWS creates the PodGroup from the leader pod.
RUNNING = tuple(c for c in CONTROLLERS if c != "volcano-admission")


@pytest.fixture(scope="module")
def controllers(sandbox):
    """LWS, Volcano's scheduler and controller-manager with their real CRDs and chart webhooks, plus
    one 8-GPU kwok node."""
    # CRDs other modules installed (other versions) would meet the charts' server-side apply.
    w.delete_crds(sandbox, [n for p in ("lws", "volcano") for n in w.crd_names(p)])
    sandbox.start_controllers(*RUNNING)
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": NODE, "annotations": {"kwok.x-k8s.io/node": "fake"},
                         "labels": {"kubernetes.io/hostname": NODE, "type": "kwok", **POOL}},
            "status": {"capacity": {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"},
                       "allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}}}
    try:
        sandbox.kubectl("create", "-f", "-", input=json.dumps(node))
        until(f"node {NODE} Ready", lambda: any(
            c["type"] == "Ready" and c["status"] == "True"
            for c in get(sandbox, "node", NODE).get("status", {}).get("conditions", [])))
        yield sandbox
    finally:
        sandbox.stop_controllers(*RUNNING)
        sandbox.kubectl("delete", "node", NODE, "--ignore-not-found", "--wait=false", check=False)
        w.delete_crds(sandbox, [n for p in ("lws", "volcano") for n in w.crd_names(p)])


@pytest.fixture
def ns(controllers, request):
    name = "kd-real-" + request.node.name.removeprefix("test_").replace("_", "-")[:40]
    controllers.kubectl("create", "namespace", name)
    yield name
    controllers.kubectl("delete", "namespace", name, "--wait=false", check=False)


def pods_of(sandbox, ns: str, name: str) -> dict:
    return {p["metadata"]["name"]: p for p in items(sandbox, "pods", "-n", ns, "-l", f"{NAME_LABEL}={name}")}


def podgroups(sandbox, ns: str) -> dict:
    return {g["metadata"]["name"]: g for g in items(sandbox, "podgroups.scheduling.volcano.sh", "-n", ns)}


def test_lws_becomes_statefulsets_pods_and_podgroups(controllers, ns):
    sandbox = controllers
    sandbox.kubectl("apply", "-f", "-", input=json.dumps(lws("web", ns, replicas=2, size=3)))

    # The leader StatefulSet is named after the LWS, one replica per group; each leader pod gets a
    # worker StatefulSet named after it with size-1 replicas and ordinals from 1
    # (lws pkg/controllers/leaderworkerset_controller.go constructLeaderStatefulSetApplyConfiguration,
    # pkg/controllers/pod_controller.go constructWorkerStatefulSetApplyConfiguration).
    sts = until("the leader and both worker StatefulSets", lambda: (
        lambda got: got if {"web", "web-0", "web-1"} <= set(got) else None)(
        {s["metadata"]["name"]: s for s in items(sandbox, "statefulsets", "-n", ns)}))
    assert sts["web"]["spec"]["replicas"] == 2
    for g in ("0", "1"):
        assert sts[f"web-{g}"]["spec"]["replicas"] == 2
        assert sts[f"web-{g}"]["spec"]["ordinals"] == {"start": 1}
        assert sts[f"web-{g}"]["spec"]["serviceName"] == "web"  # the Shared subdomain policy (the default)

    want = {"web-0": ("0", "0"), "web-0-1": ("0", "1"), "web-0-2": ("0", "2"),
            "web-1": ("1", "0"), "web-1-1": ("1", "1"), "web-1-2": ("1", "2")}
    pods = until("six Running and Ready pods", lambda: (lambda p: p if set(p) == set(want) and all(
        x["status"].get("phase") == "Running" and any(c["type"] == "Ready" and c["status"] == "True"
                                                      for c in x["status"].get("conditions", []))
        for x in p.values()) else None)(pods_of(sandbox, ns, "web")))
    # Group and worker index labels (the pod webhook, pkg/webhooks/pod_webhook.go; leaders get
    # worker-index 0 from the leader StatefulSet's template) and the subdomain = the headless Service.
    for name, (group, worker) in want.items():
        labels = pods[name]["metadata"]["labels"]
        assert (labels[GROUP_LABEL], labels[WORKER_LABEL]) == (group, worker), name
        assert pods[name]["spec"]["subdomain"] == "web", name
    assert sandbox.kubectl("get", "service", "web", "-n", ns, "-o", "jsonpath={.spec.clusterIP}").stdout == "None"

    # With gangSchedulingManagement.schedulerProvider=volcano, one PodGroup per group named
    # <lws>-<group>-<revision>, minMember = size, owned by the leader pod, and every pod of the group
    # annotated with it (pkg/schedulerprovider/volcano_provider.go, interface.go PodGroupNameFmt).
    groups = until("a PodGroup per group", lambda: (lambda g: g if len(g) == 2 else None)(podgroups(sandbox, ns)))
    for g in ("0", "1"):
        leader = pods[f"web-{g}"]
        pg_name = f"web-{g}-{leader['metadata']['labels'][REVISION_LABEL]}"
        pg = groups[pg_name]
        assert pg["spec"]["minMember"] == 3
        assert [(o["kind"], o["name"]) for o in pg["metadata"]["ownerReferences"]] == [("Pod", f"web-{g}")]
        assert (pg["metadata"]["labels"][NAME_LABEL], pg["metadata"]["labels"][GROUP_LABEL]) == ("web", g)
        for name in (f"web-{g}", f"web-{g}-1", f"web-{g}-2"):
            assert pods[name]["metadata"]["annotations"][GROUP_NAME_ANNOTATION] == pg_name, name
    # The provider never sets schedulerName (volcano_provider.go only annotates and creates the
    # PodGroup): these pods were placed by kube-scheduler, so Volcano did not enforce the gang.
    assert {p["spec"]["schedulerName"] for p in pods.values()} == {"default-scheduler"}

    status = until("LWS status readyReplicas 2", lambda: (
        lambda s: s if s.get("readyReplicas") == 2 else None)(get(sandbox, "lws", "web", "-n", ns).get("status", {})))
    assert any(c["type"] == "Available" and c["status"] == "True" for c in status["conditions"])


def test_volcano_schedules_a_gang_it_owns(controllers, ns):
    sandbox = controllers
    sandbox.kubectl("apply", "-f", "-", input=json.dumps(
        lws("gang", ns, replicas=1, size=2, gpus=2, scheduler="volcano", pool=POOL)))
    pods = until("both pods bound", lambda: (lambda p: p if len(p) == 2 and all(
        x["spec"].get("nodeName") for x in p.values()) else None)(pods_of(sandbox, ns, "gang")))
    assert {p["spec"]["nodeName"] for p in pods.values()} == {NODE}
    # The binding event comes from the scheduler named volcano (volcano pkg/scheduler/cache/cache.go:
    # "Scheduled", "Successfully assigned %v/%v to %v"; the recorder's component is the scheduler name).
    events = until("the Scheduled events", lambda: (lambda e: e if len(e) == 2 else None)(
        [e for e in items(sandbox, "events", "-n", ns, "--field-selector", "reason=Scheduled")
         if e["involvedObject"]["name"] in pods]))
    assert {e["source"].get("component") or e.get("reportingComponent") for e in events} == {"volcano"}
    assert {e["message"] for e in events} == {f"Successfully assigned {ns}/{n} to {NODE}" for n in pods}
    # The scheduler's session moves a gang whose members all run to phase Running.
    group = pods["gang-0"]["metadata"]["annotations"][GROUP_NAME_ANNOTATION]
    until("PodGroup phase Running", lambda: get(sandbox, "podgroups.scheduling.volcano.sh", group, "-n", ns)
          .get("status", {}).get("phase") == "Running")


def test_volcano_holds_a_gang_short_of_gpus(controllers, ns):
    """3 pods x 4 GPUs on one 8-GPU node: two would fit, so Volcano places none."""
    sandbox = controllers
    sandbox.kubectl("apply", "-f", "-", input=json.dumps(
        lws("big", ns, replicas=1, size=3, gpus=4, scheduler="volcano", pool=POOL)))
    pods = until("the three pods", lambda: (lambda p: p if len(p) == 3 else None)(pods_of(sandbox, ns, "big")))
    group = pods["big-0"]["metadata"]["annotations"][GROUP_NAME_ANNOTATION]

    whole = "tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable"

    def unschedulable():
        # A session that ran before the job's cache held all three tasks writes the condition with a
        # smaller histogram ("1 Pending"); the next session rewrites it, so wait for the whole gang.
        pg = get(sandbox, "podgroups.scheduling.volcano.sh", group, "-n", ns)
        return next((c for c in pg.get("status", {}).get("conditions", [])
                     if c["type"] == "Unschedulable" and whole in c.get("message", "")), None)

    # volcano pkg/scheduler/plugins/gang/gang.go OnSessionClose: condition Unschedulable, reason
    # NotEnoughResources, "<n>/<tasks> tasks in gang unschedulable: " + JobInfo.FitError(), which starts
    # "pod group is not ready, <histogram of task states and minAvailable>" (pkg/scheduler/api/job_info.go;
    # apis pkg/apis/scheduling/types.go PodGroupNotReady).
    cond = until("the PodGroup condition Unschedulable", unschedulable)
    assert (cond["status"], cond["reason"]) == ("True", "NotEnoughResources")
    pg = get(sandbox, "podgroups.scheduling.volcano.sh", group, "-n", ns)
    assert pg["status"]["phase"] == "Inqueue", pg["status"]  # enqueued (the cluster has the GPUs), not placed
    # Nothing of the gang is bound, although two of its pods would fit (all or nothing).
    pods = pods_of(sandbox, ns, "big")
    assert [n for n, p in pods.items() if p["spec"].get("nodeName")] == []
    # The pods' PodScheduled condition says so (cache.go RecordJobStatusEvent -> taskUnschedulable).
    for name, p in pods.items():
        sched = next(c for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled")
        assert sched["status"] == "False", (name, sched)
    # ... and the PodGroup gets a Warning event Unschedulable with the same words.
    events = until("the PodGroup's Unschedulable event", lambda: [
        e for e in items(sandbox, "events", "-n", ns, "--field-selector", "reason=Unschedulable")
        if e["involvedObject"]["kind"] == "PodGroup" and e["involvedObject"]["name"] == group
        and whole in e["message"]])
    assert events[0]["type"] == "Warning"


def test_volcano_admission_refuses_a_leader_before_its_podgroup(controllers, ns):
    """The Volcano chart's admission (pods/validate is on by default) with LWS's volcano provider."""
    sandbox = controllers
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": ns},
             "spec": {"weight": 1}}
    sandbox.kubectl("apply", "-f", "-", input=json.dumps(queue))
    sandbox.kubectl("annotate", "namespace", ns, f"scheduling.volcano.sh/queue-name={ns}")
    sandbox.start_controllers("volcano-admission")
    try:
        # schedulerName volcano: LWS's pod webhook names the PodGroup on the leader pod, but the
        # provider creates that PodGroup only once the leader pod exists (lws pod_controller.go
        # CreatePodGroupIfNotExists); Volcano's validatepod refuses a pod whose named PodGroup is
        # missing (volcano pkg/webhooks/admission/pods/validate/admit_pod.go checkPG). So the leader
        # StatefulSet cannot create its pod.
        sandbox.kubectl("apply", "-f", "-", input=json.dumps(lws("gang", ns, replicas=1, size=2, scheduler="volcano")))
        # (the admission's refusal, not any other FailedCreate a busy control plane may write first)
        events = until("the leader StatefulSet's FailedCreate", lambda: [
            e for e in items(sandbox, "events", "-n", ns, "--field-selector", "reason=FailedCreate")
            if e["involvedObject"]["kind"] == "StatefulSet" and e["involvedObject"]["name"] == "gang"
            and "validatepod.volcano.sh" in e["message"]])
        revision = get(sandbox, "statefulset", "gang", "-n", ns)["metadata"]["labels"][REVISION_LABEL]
        assert events[0]["type"] == "Warning"
        assert (f'create Pod gang-0 in StatefulSet gang failed error: admission webhook "validatepod.volcano.sh" '
                f'denied the request: failed to get PodGroup for pod <{ns}/gang-0>: podgroups.scheduling.volcano.sh '
                f'"gang-0-{revision}" not found') == events[0]["message"]
        assert pods_of(sandbox, ns, "gang") == {} and podgroups(sandbox, ns) == {}

        # Pods left on default-scheduler pass; the PodGroup LWS creates is mutated by the admission:
        # the queue comes from the namespace annotation (volcano pkg/webhooks/admission/podgroups/mutate/
        # mutate_podgroup.go createPodGroupPatch).
        sandbox.kubectl("apply", "-f", "-", input=json.dumps(lws("plain", ns, replicas=1, size=2)))
        pods = until("both plain pods Running", lambda: (lambda p: p if len(p) == 2 and all(
            x["status"].get("phase") == "Running" for x in p.values()) else None)(pods_of(sandbox, ns, "plain")))
        pg = podgroups(sandbox, ns)[pods["plain-0"]["metadata"]["annotations"][GROUP_NAME_ANNOTATION]]
        assert pg["spec"]["queue"] == ns
    finally:
        sandbox.stop_controllers("volcano-admission")
        sandbox.kubectl("delete", "queues.scheduling.volcano.sh", ns, "--ignore-not-found", "--wait=false",
                        check=False)
