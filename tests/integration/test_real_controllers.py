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
from pathlib import Path

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


# -- doctor on what the real controllers leave behind -------------------------------------------------
DGD_LABEL = "nvidia.com/dynamo-graph-deployment-name"  # ai-dynamo/dynamo deploy/operator api consts (KubeLabelDynamoGraphDeploymentName)
COMPONENT_LABEL = "nvidia.com/dynamo-component"
SA = "llm-discovery"
# kube-apiserver's ServiceAccount admission (kubernetes@v1.33 plugin/pkg/admission/serviceaccount/admission.go):
# "error looking up service account %s/%s: %v" around the NotFound 'serviceaccount "%s" not found'.
SA_REFUSED = f'serviceaccount "{SA}" not found'


def _dgd_objects(sandbox, ns: str, *, node_selector: dict | None = None) -> None:
    """A DGD (no operator runs here) and the LeaderWorkerSet the operator would make for its one
    multinode component, owned by the DGD and labelled as the operator labels its pod templates."""
    from tests.integration import scenarios as s

    doc = s.dgd("llm", ns, "sglang", nodes=2, gpus=1, lws=True)
    sandbox.kubectl("apply", "-f", "-", input=json.dumps(doc))
    uid = get(sandbox, "dynamographdeployments.nvidia.com", "llm", "-n", ns)["metadata"]["uid"]
    obj = lws("llm-decode-0", ns, replicas=1, size=2, gpus=1, pool=POOL)
    labels = {DGD_LABEL: "llm", COMPONENT_LABEL: "decode"}
    obj["metadata"]["labels"] = labels
    obj["metadata"]["ownerReferences"] = [{"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
                                          "name": "llm", "uid": uid, "controller": True, "blockOwnerDeletion": True}]
    for role in ("leaderTemplate", "workerTemplate"):
        template = obj["spec"]["leaderWorkerTemplate"][role]
        template["metadata"] = {"labels": labels}
        template["spec"]["serviceAccountName"] = SA
        if node_selector:
            template["spec"]["nodeSelector"] = {**template["spec"].get("nodeSelector", {}), **node_selector}
    sandbox.kubectl("apply", "-f", "-", input=json.dumps(obj))


def _delete_dgd(sandbox, ns: str) -> None:
    sandbox.kubectl("delete", "dynamographdeployments.nvidia.com", "llm", "-n", ns, "--cascade=foreground",
                    "--timeout=120s")
    until("the LeaderWorkerSet, StatefulSets and pods gone", lambda: not items(sandbox, "lws", "-n", ns) and not
          items(sandbox, "statefulsets", "-n", ns) and not items(sandbox, "pods", "-n", ns))


def _doctor(sandbox, ns: str, *extra: str, kubeconfig=None) -> tuple:
    from tests.conftest import run_cli

    proc = run_cli("doctor", *(extra or ("-n", ns)), "-o", "json", "--kubeconfig",
                   str(kubeconfig or sandbox.kubeconfig))
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _ours(data: dict, ns: str, severity: str = "error") -> list:
    """The findings at ``severity`` about objects of the test's namespace (the shared sandbox has no Dynamo
    operator: cluster findings about it are not this test's subject)."""
    return [f for f in data["findings"] if f["severity"] == severity and (f["object"] or {}).get("namespace") == ns]


def _running(sandbox, ns: str) -> dict:
    return until("both pods Running and Ready", lambda: (lambda p: p if len(p) == 2 and all(
        x["status"].get("phase") == "Running" and any(c["type"] == "Ready" and c["status"] == "True"
                                                      for c in x["status"].get("conditions", []))
        for x in p.values()) else None)(pods_of(sandbox, ns, "llm-decode-0")), timeout=180)


@pytest.fixture
def dgd_crds(controllers):
    """The Dynamo CRDs beside the running controllers' own (World.ensure would swap the LWS set for the
    chart copy in tests/data/crds)."""
    world = w.World(controllers)
    controllers.kubectl("apply", "--server-side", "--force-conflicts",
                        *[a for f in w.crd_files("dynamo") for a in ("-f", str(f))])
    world.wait_established(w.crd_names("dynamo"))
    return controllers


def test_doctor_after_fail_repair_recreate(dgd_crds, ns):
    """Fail (missing ServiceAccount), repair, delete and re-create with the same names, then re-create with
    another fault: doctor reports each failure once, with its cause, and nothing about earlier objects."""
    sandbox = dgd_crds
    _dgd_objects(sandbox, ns)
    # The leader StatefulSet cannot create its pod: the statefulset controller's FailedCreate
    # (kubernetes pkg/controller/statefulset/stateful_pod_control.go "create Pod %s in StatefulSet %s failed error: %s").
    until("the StatefulSet's FailedCreate", lambda: [
        e for e in items(sandbox, "events", "-n", ns, "--field-selector", "reason=FailedCreate")
        if e["involvedObject"]["kind"] == "StatefulSet" and SA_REFUSED in e["message"]])
    rc, data = _doctor(sandbox, ns)
    (f,) = [f for f in _ours(data, ns) if f["code"] == "controller-create-failed"]
    assert f["object"] == {"kind": "StatefulSet", "namespace": ns, "name": "llm-decode-0"}
    assert f"ServiceAccount {ns}/{SA} does not exist" in f["message"] and SA_REFUSED in f["message"]
    assert f"kubectl create serviceaccount -n {ns} {SA}" in f["hint"]
    assert rc == 1

    # Repaired: the same StatefulSet (same UID) creates its pods; its FailedCreate events stay an hour.
    sandbox.kubectl("create", "serviceaccount", "-n", ns, SA)
    _running(sandbox, ns)
    sts = get(sandbox, "statefulset", "llm-decode-0", "-n", ns)
    until("the StatefulSet's status counts its pod", lambda: get(sandbox, "statefulset", "llm-decode-0", "-n", ns)
          .get("status", {}).get("replicas") == 1)
    rc, data = _doctor(sandbox, ns)
    assert _ours(data, ns) == [], data["findings"]

    # Deleted and applied again under the same names: the old StatefulSet's events name another UID.
    _delete_dgd(sandbox, ns)
    _dgd_objects(sandbox, ns)
    _running(sandbox, ns)
    assert get(sandbox, "statefulset", "llm-decode-0", "-n", ns)["metadata"]["uid"] != sts["metadata"]["uid"]
    assert [e for e in items(sandbox, "events", "-n", ns, "--field-selector", "reason=FailedCreate")
            if SA_REFUSED in e["message"]], "the earlier object's events are still there"
    rc, data = _doctor(sandbox, ns)
    assert _ours(data, ns) == [], data["findings"]

    # Re-created with another fault: that fault, not the old refusal, is what doctor names.
    _delete_dgd(sandbox, ns)
    _dgd_objects(sandbox, ns, node_selector={"nvidia.com/gpu.product": "NVIDIA-B200"})
    until("both pods unschedulable", lambda: (lambda p: len(p) == 2 and all(any(
        c["type"] == "PodScheduled" and c["status"] == "False" for c in x["status"].get("conditions", []))
        for x in p.values()))(pods_of(sandbox, ns, "llm-decode-0")))
    rc, data = _doctor(sandbox, ns)
    codes = sorted({f["code"] for f in _ours(data, ns)})
    assert "controller-create-failed" not in codes, data["findings"]
    # kube-scheduler's nodeaffinity reason, diagnosed: the label no node has (the DGD is the object)
    (pending,) = [f for f in data["findings"] if f["code"] == "group-pending"
                  if f["object"] == {"kind": "DynamoGraphDeployment", "namespace": ns, "name": "llm"}]
    # (the sandbox's other nodes carry nvidia.com/gpu.product; only kd-real-gpu the test's pool label)
    assert "nvidia.com/gpu.product=NVIDIA-B200 (nodes have nvidia.com/gpu.product: " in pending["message"]
    assert rc == 1


def test_a_namespace_token_never_passes_a_scope_it_cannot_read(dgd_crds, ns, tmp_path):
    """A ServiceAccount bound (RoleBinding) to the read-only role in one namespace: doctor -A is an error
    naming what it could not list; doctor -n NS reads that namespace and diagnoses it."""
    sandbox = dgd_crds
    _dgd_objects(sandbox, ns)
    sandbox.kubectl("create", "serviceaccount", "-n", ns, SA)
    _running(sandbox, ns)
    rbac = Path(__file__).resolve().parents[2] / "docs" / "rbac" / "doctor-readonly.yaml"
    sandbox.kubectl("apply", "-f", str(rbac))
    sandbox.kubectl("create", "serviceaccount", "-n", ns, "viewer")
    sandbox.kubectl("create", "rolebinding", "-n", ns, "viewer", "--clusterrole=kubectl-dynamo-doctor",
                    f"--serviceaccount={ns}:viewer")
    token = sandbox.kubectl("create", "token", "-n", ns, "viewer").stdout.strip()
    config = json.loads(sandbox.kubectl("config", "view", "--raw", "-o", "json").stdout)
    cluster = config["clusters"][0]
    kubeconfig = tmp_path / "viewer.kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "clusters": [cluster],
        "users": [{"name": "viewer", "user": {"token": token}}],
        "contexts": [{"name": "viewer", "context": {"cluster": cluster["name"], "user": "viewer", "namespace": ns}}],
        "current-context": "viewer"}))

    rc, data = _doctor(sandbox, ns, "-A", kubeconfig=kubeconfig)
    assert rc == 1
    denied = [f for f in data["findings"] if f["code"] == "permission-denied" and f["severity"] == "error"]
    assert [f["message"].split(":")[0] for f in denied] == [
        "cannot list dynamographdeployments.nvidia.com in all namespaces"], data["findings"]
    # the server's own words name the user and the verb
    assert f'"system:serviceaccount:{ns}:viewer" cannot list resource "dynamographdeployments"' in denied[0]["message"]

    rc, data = _doctor(sandbox, ns, "-n", ns, kubeconfig=kubeconfig)
    assert [d["name"] for d in data["deployments"]] == ["llm"]
    assert data["deployments"][0]["components"][0]["groups"] == [{"index": 0, "podsReady": 2, "ranks": [0, 1]}]
    # cluster-wide reads are refused and said so (warnings); nothing in the namespace is a false error
    assert _ours(data, ns) == [], data["findings"]
    warned = {f["message"].split(":")[0] for f in data["findings"] if f["code"] == "permission-denied"}
    assert any("nodes" in w for w in warned), data["findings"]
    assert all(f["severity"] == "warning" for f in data["findings"] if f["code"] == "permission-denied")
