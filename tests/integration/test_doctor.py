"""``doctor`` against the real control plane: healthy groups, then each fault injected alone.

Every scenario lives in its own namespace and runs ``doctor -n <ns> -o json``; the expected code
must appear and no other error.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from tests.integration import scenarios as s
from tests.integration import world as w


@pytest.fixture(scope="module")
def world(sandbox):
    world = w.World(sandbox).full_stack(s.OPERATOR_VERSION)
    yield world
    world.clear_objects()
    for ns in list(CREATED):
        sandbox.kubectl("delete", "namespace", ns, "--wait=false", check=False)


CREATED = set()


def install(world, objs):
    # One namespace per scenario, kept until the module ends (later tests read several); the
    # session sandbox has 8 nodes x 8 fake GPUs, room for all of them.
    CREATED.add(objs[0]["metadata"]["name"])
    world.sb.kubectl("apply", "-f", "-", input="\n---\n".join(json.dumps(o) for o in objs[:1]))
    world.sb.kubectl("apply", "--server-side", "-f", "-", input="\n---\n".join(json.dumps(o) for o in objs[1:]))


def wait_pods(world, ns, *, running):
    if running:
        world.sb.kubectl("-n", ns, "wait", "--for=condition=Ready", "pod", "--all", "--timeout=90s")
    else:  # the scheduler has tried and recorded why it could not place them
        world.sb.kubectl("-n", ns, "wait", "--for=condition=PodScheduled=False", "pod", "--all", "--timeout=90s")


def doctor(sandbox, ns, *extra, kubeconfig=None):
    proc = run_cli("doctor", "-n", ns, "-o", "json", "--kubeconfig", str(kubeconfig or sandbox.kubeconfig), *extra)
    assert proc.returncode in (0, 1), proc.stderr
    data = json.loads(proc.stdout)
    return proc.returncode, data


def errors(data):
    return sorted({f["code"] for f in data["findings"] if f["severity"] == "error"})


@pytest.mark.parametrize("backend,lws", [("vllm", False), ("trtllm", True), ("sglang", False)],
                         ids=["grove-kai-vllm", "lws-volcano-trtllm", "grove-sglang"])
def test_healthy_group(sandbox, world, backend, lws):
    ns = f"healthy-{backend}"
    doc = s.dgd("llm", ns, backend, nodes=2, gpus=1, lws=lws)
    install(world, s.group_objects(doc))
    wait_pods(world, ns, running=True)
    rc, data = doctor(sandbox, ns)
    assert errors(data) == [], data["findings"]
    assert rc == 0
    (dep,) = data["deployments"]
    (comp,) = dep["components"]
    assert comp["nodeCount"] == 2 and comp["groups"] == [{"index": 0, "podsReady": 2, "ranks": [0, 1]}]
    assert {"check": "sshd-not-listening", "reason": "needs --exec (runs read-only commands in pods)"} in data["skipped"]


def fault(world, sandbox, ns, doc, *, mutate=None, running=True, **kw):
    install(world, s.group_objects(doc, mutate=mutate, **kw))
    wait_pods(world, ns, running=running)
    return doctor(sandbox, ns)


def test_missing_queue(sandbox, world):
    ns = "fault-queue"
    doc = s.dgd("llm", ns, "vllm", annotations={"nvidia.com/kai-scheduler-queue": "team-a"})
    rc, data = fault(world, sandbox, ns, doc)
    assert rc == 1 and errors(data) == ["kai-queue-missing"]
    f = next(f for f in data["findings"] if f["code"] == "kai-queue-missing")
    assert "team-a" in f["message"] and f["object"] == {"kind": "DynamoGraphDeployment", "namespace": ns, "name": "llm"}


def test_tp_mismatch(sandbox, world):
    ns = "fault-tp"
    rc, data = fault(world, sandbox, ns, s.dgd("llm", ns, "vllm", nodes=2, gpus=1, tp=8))
    assert errors(data) == ["parallelism-mismatch"]


def test_too_few_gpus(sandbox, world):
    ns = "fault-gpus"  # 16 GPUs per pod: no 8-GPU node fits
    rc, data = fault(world, sandbox, ns, s.dgd("llm", ns, "vllm", nodes=2, gpus=16), running=False)
    # the whole group is Pending (kube-scheduler's words), each pod's GPU shortage shown under it
    assert errors(data) == ["group-pending", "insufficient-gpus"]
    assert all("Insufficient nvidia.com/gpu" in f["message"] for f in data["findings"]
               if f["code"] in ("insufficient-gpus", "group-pending"))
    assert all(f["cause"]["code"] == "group-pending" for f in data["findings"] if f["code"] == "insufficient-gpus")


def test_half_a_gang_scheduled(sandbox, world):
    ns = "fault-gang"

    def strand_worker(pods):  # what a non-gang scheduler does: the worker cannot be placed, the leader is
        pods[1]["spec"]["nodeSelector"] = {"example.com/pool": "missing"}

    install(world, s.group_objects(s.dgd("llm", ns, "vllm"), mutate=strand_worker))
    world.sb.kubectl("-n", ns, "wait", "--for=condition=PodScheduled=False", f"pod/{_worker(world, ns)}", "--timeout=90s")
    rc, data = doctor(sandbox, ns)
    # the injected cause (the worker's nodeSelector) leads as the partial placement; that no gang scheduler
    # holds the group (the pods name none) is folded into its fix, not a second root (issue 36: one cause, once)
    assert errors(data) == ["gang-partial"], data["findings"]
    partial = next(f for f in data["findings"] if f["code"] == "gang-partial")
    assert "didn't match Pod's node affinity/selector" in partial["message"]
    assert "gang" in json.dumps(partial.get("hint") or partial), partial


def _worker(world, ns):
    names = world.sb.kubectl("-n", ns, "get", "pods", "-o", "name").stdout.split()
    return next(n for n in names if "-wkr-" in n or n.rsplit("-", 1)[-1] != "0").split("/", 1)[1]


def test_duplicate_rank(sandbox, world):
    ns = "fault-dup"

    def duplicate(pods):  # workers 0 and 1 both claim clique index 0 -> rank 1 twice
        pods[2]["metadata"]["labels"]["grove.io/podclique-pod-index"] = "0"

    rc, data = fault(world, sandbox, ns, s.dgd("llm", ns, "vllm", nodes=3, gpus=1), mutate=duplicate)
    assert errors(data) == ["rank-duplicate"]


def test_missing_rank(sandbox, world):
    ns = "fault-gap"

    def skip(pods):
        pods[1]["metadata"]["labels"]["grove.io/podclique-pod-index"] = "1"  # ranks 0, 2 of 0..1

    rc, data = fault(world, sandbox, ns, s.dgd("llm", ns, "vllm"), mutate=skip)
    assert errors(data) == ["rank-gap"]
    (dep,) = data["deployments"]
    assert dep["components"][0]["groups"][0]["ranks"] == [0, 2]


def test_worker_probes_left_on(sandbox, world):
    ns = "fault-probes"

    def probes(pods):
        pods[1]["spec"]["containers"][0]["livenessProbe"] = {"httpGet": {"path": "/live", "port": 9090}}

    rc, data = fault(world, sandbox, ns, s.dgd("llm", ns, "sglang"), mutate=probes)
    assert errors(data) == ["worker-probes"]


def test_missing_ssh_secret(sandbox, world):
    ns = "fault-ssh"
    rc, data = fault(world, sandbox, ns, s.dgd("llm", ns, "trtllm", lws=True), secret=False)
    assert errors(data) == ["ssh-secret-missing"]
    f = next(f for f in data["findings"] if f["code"] == "ssh-secret-missing")
    assert f["object"] == {"kind": "Secret", "namespace": ns, "name": "mpi-run-ssh-secret"}


def test_wait_leader_configmap_missing(sandbox, world):
    ns = "fault-cm"
    rc, data = fault(world, sandbox, ns, s.dgd("llm", ns, "vllm"), configmap=False)
    assert errors(data) == ["wait-leader-configmap-missing"]


def test_image_mismatch(sandbox, world):
    ns = "fault-image"

    def other_image(pods):
        pods[1]["spec"]["containers"][0]["image"] = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0"

    rc, data = fault(world, sandbox, ns, s.dgd("llm", ns, "vllm"), mutate=other_image)
    assert errors(data) == ["image-mismatch"]


def test_topology_vars_with_origin_1_5(sandbox, world):
    ns = "fault-origin"
    doc = s.dgd("llm", ns, "vllm", origin="1.5.0", extra_args=["--node-rank-hint", "$(DYNAMO_RANK)"])
    rc, data = fault(world, sandbox, ns, doc)
    assert errors(data) == ["topology-vars-unavailable"]


def test_leader_not_ready_and_crash_loop(sandbox, world):
    ns = "fault-leader"
    doc = s.dgd("llm", ns, "vllm")
    install(world, s.group_objects(doc))
    wait_pods(world, ns, running=True)
    leader = next(n for n in world.sb.kubectl("-n", ns, "get", "pods", "-o", "name").stdout.split() if "-ldr-" in n)
    # The kubelet's view of a leader whose engine never becomes healthy (kwok has no probes to fail).
    world.sb.kubectl("-n", ns, "patch", leader, "--subresource=status", "--type=strategic", "-p", json.dumps(
        {"status": {"conditions": [{"type": "Ready", "status": "False"}]}}))
    rc, data = doctor(sandbox, ns)
    assert errors(data) == ["leader-not-ready"]
    world.sb.kubectl("-n", ns, "patch", leader, "--subresource=status", "--type=strategic", "-p", json.dumps(
        {"status": {"containerStatuses": [{"name": "main", "image": s.IMAGE["vllm"], "imageID": "", "ready": False,
                                           "restartCount": 5,
                                           "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}}))
    rc, data = doctor(sandbox, ns)
    assert "crash-loop" in errors(data)


def test_min_severity_and_only(sandbox, world):
    rc, data = doctor(sandbox, "fault-tp", "--only", "rank-gap")
    assert rc == 0 and data["findings"] == []
    proc = run_cli("doctor", "-n", "fault-tp", "--only", "nope", "--kubeconfig", str(sandbox.kubeconfig))
    assert proc.returncode == 2 and "unknown check code nope" in proc.stderr


def test_all_namespaces_counts_every_dgd(sandbox, world):
    proc = run_cli("doctor", "-A", "-o", "json", "--kubeconfig", str(sandbox.kubeconfig))
    data = json.loads(proc.stdout)
    names = {(d["namespace"], d["name"]) for d in data["deployments"]}
    assert {("healthy-vllm", "llm"), ("fault-tp", "llm")} <= names
    assert proc.returncode == 1


DOCTOR_READ_ONLY = [
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "kd-doctor-partial"},
     "rules": [{"apiGroups": ["nvidia.com"], "resources": ["dynamographdeployments"], "verbs": ["get", "list"]},
               {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "kd-doctor-partial"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kd-doctor-partial"},
     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "doctor-partial"}]},
]


def test_limited_rbac_user_gets_skipped_entries(sandbox, world):
    world.apply(DOCTOR_READ_ONLY)
    kubeconfig = sandbox.user("doctor-partial")
    rc, data = doctor(sandbox, "fault-ssh", kubeconfig=kubeconfig)
    skipped = {x["check"] for x in data["skipped"]}
    assert {"configmaps", "events", "controller deployments", "ssh-secret-missing"} <= skipped
    assert all("forbidden" in x["reason"] for x in data["skipped"] if x["check"] in ("configmaps", "events"))
    # Without the secret's key names nothing is claimed about it; pods were readable, so groups are there.
    assert "ssh-secret-missing" not in errors(data)
    assert data["deployments"][0]["components"][0]["groups"]
    assert rc in (0, 1)


def test_documented_read_only_role_is_enough(sandbox, world):
    """docs/rbac/doctor-readonly.yaml grants exactly what doctor reads: nothing is skipped but --exec."""
    import yaml

    from tests.conftest import REPO

    docs = list(yaml.safe_load_all((REPO / "docs" / "rbac" / "doctor-readonly.yaml").read_text()))
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "kd-doctor-documented"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "kubectl-dynamo-doctor"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "doctor-reader"}]}
    world.apply(docs + [binding])
    kubeconfig = sandbox.user("doctor-reader")
    for ns in ("healthy-trtllm", "fault-ssh"):
        rc, data = doctor(sandbox, ns, kubeconfig=kubeconfig)
        assert {x["check"] for x in data["skipped"]} == {"sshd-not-listening", "ray-incomplete"}, data["skipped"]
    assert errors(data) == ["ssh-secret-missing"]
    # Read-only: the role has no verb that writes.
    writes = {"create", "update", "patch", "delete", "deletecollection"}
    role = docs[0]
    assert not any(writes & set(rule["verbs"]) for rule in role["rules"])


# -- --exec: through the real pods/exec API to kwok's kubelet API, which runs the command on this
# machine (kwok's Exec objects choose the environment per pod). What cannot exist here stands in:
# tests/data/fakebin/ray for the Ray CLI of a vLLM image; the port-2222 probe is real Python
# against a real listener (the "sshd") on 127.0.0.1:2222, or no listener.



def kwok_exec(world, ns, pod, **env):
    # kwok finds commands on its own PATH (the sandbox puts tests/data/fakebin first); envs reach them.
    envs = [{"name": k, "value": str(v)} for k, v in env.items()]
    world.sb.kubectl("apply", "-f", "-", input=json.dumps(
        {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Exec", "metadata": {"name": pod, "namespace": ns},
         "spec": {"execs": [{"local": {"envs": envs}}]}}))


def pod_names(world, ns):
    return [n.split("/", 1)[1] for n in world.sb.kubectl("-n", ns, "get", "pods", "-o", "name").stdout.split()]


@pytest.mark.parametrize("joined,expect", [(3, []), (2, ["ray-incomplete"])], ids=["all-joined", "one-missing"])
def test_exec_ray_status(sandbox, world, joined, expect):
    ns = f"exec-ray-{joined}"
    doc = s.dgd("llm", ns, "vllm", nodes=3, gpus=1,
                annotations={"nvidia.com/vllm-distributed-executor-backend": "ray"})
    install(world, s.group_objects(doc))
    wait_pods(world, ns, running=True)
    for pod in pod_names(world, ns):
        kwok_exec(world, ns, pod, FAKE_RAY_NODES=joined)
    rc, data = doctor(sandbox, ns, "--exec")
    assert data["deployments"][0]["components"][0]["mode"] == "ray"
    assert errors(data) == expect, data["findings"]
    assert not [x for x in data["skipped"] if x["check"] == "ray-incomplete"], data["skipped"]
    if expect:
        f = next(f for f in data["findings"] if f["code"] == "ray-incomplete")
        assert f["message"].startswith("`ray status` on the leader shows 2 of 3 nodes") and "-ldr-" in f["object"]["name"]


@pytest.mark.parametrize("listening", [True, False], ids=["sshd-up", "sshd-down"])
def test_exec_sshd_port_2222(sandbox, world, listening):
    import socket

    ns = f"exec-ssh-{'up' if listening else 'down'}"
    install(world, s.group_objects(s.dgd("llm", ns, "trtllm", nodes=3, gpus=1, lws=True)))
    wait_pods(world, ns, running=True)
    for pod in pod_names(world, ns):
        kwok_exec(world, ns, pod)
    server = None
    if listening:
        server = socket.create_server(("127.0.0.1", 2222))
    else:
        probe = socket.socket()
        assert probe.connect_ex(("127.0.0.1", 2222)) != 0, "something else listens on 127.0.0.1:2222"
        probe.close()
    try:
        rc, data = doctor(sandbox, ns, "--exec")
    finally:
        if server:
            server.close()
    assert not [x for x in data["skipped"] if x["check"] == "sshd-not-listening"], data["skipped"]
    sshd = [f for f in data["findings"] if f["code"] == "sshd-not-listening"]
    if listening:
        assert errors(data) == [] and rc == 0
    else:
        assert errors(data) == ["sshd-not-listening"] and rc == 1
        assert len(sshd) == 2  # both workers of the 3-node group
        assert all(f["object"]["kind"] == "Pod" for f in sshd)


def test_exec_without_a_target_is_skipped_not_fatal(sandbox, world):
    ns = "exec-ray-3"  # pods exist; remove their Exec targets: kwok refuses the exec
    world.sb.kubectl("-n", ns, "delete", "execs.kwok.x-k8s.io", "--all")
    rc, data = doctor(sandbox, ns, "--exec", "--exec-timeout", "10")
    skipped = [x for x in data["skipped"] if x["check"] == "ray-incomplete"]
    assert skipped and 'exec failed (error executing command in container: no exec found for container "main"' \
        in skipped[0]["reason"], skipped
    assert errors(data) == []


def test_lists_drop_managed_fields(sandbox, world):
    """A LIST keeps no metadata.managedFields (half of a pod's JSON) unless asked for."""
    from kubectl_dynamo.cluster.client import Cluster, Target, path_for

    cluster = Cluster(Target(kubeconfig=str(sandbox.kubeconfig)))
    pods = cluster.list(path_for("", "v1", "pods", "healthy-vllm"))
    assert pods and not any("managedFields" in p["metadata"] for p in pods)
    full = cluster.list(path_for("", "v1", "pods", "healthy-vllm"), managed_fields=True)
    assert all(p["metadata"].get("managedFields") for p in full)


def test_headless_service_missing(sandbox, world):
    ns = "fault-dns"
    rc, data = fault(world, sandbox, ns, s.dgd("llm", ns, "sglang", lws=True), service=False)
    assert errors(data) == ["leader-dns-missing"]
    f = next(f for f in data["findings"] if f["code"] == "leader-dns-missing")
    assert f["object"] == {"kind": "Service", "namespace": ns, "name": "llm-decode-0"}


def test_headless_service_not_publishing_not_ready(sandbox, world):
    ns = "fault-publish"
    objs = s.group_objects(s.dgd("llm", ns, "vllm"))
    for o in objs:
        if o["kind"] == "Service":
            o["spec"]["publishNotReadyAddresses"] = False
    install(world, objs)
    wait_pods(world, ns, running=True)
    rc, data = doctor(sandbox, ns)
    assert errors(data) == ["headless-service-invalid"]


def test_live_explain_uses_the_clusters_operator_gates_and_queues(sandbox, world):
    proc = run_cli("explain", "dgd", "llm", "-n", "healthy-vllm", "-o", "json", "--kubeconfig", str(sandbox.kubeconfig))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert (data["operatorVersion"], data["originVersion"]) == (s.OPERATOR_VERSION, s.OPERATOR_VERSION)
    assert (data["provider"], data["scheduler"], data["queue"]) == ("grove", "kai-scheduler", "dynamo")
    assert [r["name"] for r in data["components"][0]["roles"]] == ["leader", "worker"]
    # The DGD whose queue does not exist in this cluster: the live form finds it, offline cannot.
    proc = run_cli("explain", "dgd", "llm", "-n", "fault-queue", "-o", "json", "--kubeconfig", str(sandbox.kubeconfig))
    assert proc.returncode == 1
    assert any(f["code"] == "kai-queue-missing" for f in json.loads(proc.stdout)["findings"])
    missing = run_cli("explain", "dgd", "nope", "-n", "healthy-vllm", "--kubeconfig", str(sandbox.kubeconfig))
    assert missing.returncode == 1 and missing.stderr.startswith('error: dynamographdeployments.nvidia.com "nope" not found')


def test_scheduling_gated_group(sandbox, world):
    ns = "fault-gated"

    def gate(pods):  # what Grove does until the PodGang exists (no PodGang is created here)
        for p in pods:
            p["spec"]["schedulingGates"] = [{"name": "grove.io/podgang-pending-creation"}]

    install(world, s.group_objects(s.dgd("llm", ns, "vllm"), mutate=gate))
    world.sb.kubectl("-n", ns, "wait", "--for=condition=PodScheduled=False", "pod", "--all", "--timeout=90s")
    rc, data = doctor(sandbox, ns)
    assert errors(data) == ["scheduling-gated"]
    gated = [f for f in data["findings"] if f["code"] == "scheduling-gated"]
    assert len(gated) == 2 and all("PodGang llm-0 does not exist" in f["message"] for f in gated)


def _doctor_until(sandbox, ns, code, *, timeout=120.0):
    """doctor -n ns until ``code`` is reported (the controllers act asynchronously), or fail at the deadline."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        rc, data = doctor(sandbox, ns)
        if any(f["code"] == code for f in data["findings"]) or time.monotonic() > deadline:
            return rc, data
        time.sleep(2)  # poll interval of a condition with a deadline, not a synchronisation


def test_scheduler_not_running(sandbox, world):
    """Pods naming schedulerName volcano, and no Volcano scheduler process (its Deployment here is a stand-in
    that kwok marks Available): the real kube-scheduler skips them, nothing writes PodScheduled."""
    ns = "fault-nosched"

    def on_volcano(pods):
        for p in pods:
            p["spec"]["schedulerName"] = "volcano"

    install(world, s.group_objects(s.dgd("llm", ns, "sglang", lws=True), mutate=on_volcano))
    rc, data = _doctor_until(sandbox, ns, "scheduler-not-running")
    assert errors(data) == ["scheduler-not-running"], data["findings"]
    f = next(f for f in data["findings"] if f["code"] == "scheduler-not-running")
    assert "schedulerName volcano have no PodScheduled condition and no event" in f["message"]
    assert "looks Available, yet it did not act" in f["message"]


def test_statefulset_create_failed(sandbox, world):
    """The real StatefulSet controller cannot create the group's pod (a ResourceQuota of 0 pods refuses it):
    its FailedCreate Warning is the root, the DGD's missing pods are shown under it."""
    ns = "fault-create"
    doc = s.dgd("llm", ns, "vllm", lws=True)
    objs = s.group_objects(doc)
    install(world, [o for o in objs if o["kind"] in ("Namespace", "DynamoGraphDeployment", "ConfigMap", "Service")])
    uid = world.sb.kubectl("-n", ns, "get", "dynamographdeployment", "llm", "-o", "jsonpath={.metadata.uid}").stdout
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "no-pods", "namespace": ns},
             "spec": {"hard": {"pods": "0"}}}
    pod = next(o for o in objs if o["kind"] == "Pod")
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
           # doctor lists the StatefulSets LWS creates (labelled with their LeaderWorkerSet); owned by the DGD
           # directly here (no LWS controller runs in this sandbox)
           "metadata": {"name": "llm-decode-0", "namespace": ns,
                        "labels": {"leaderworkerset.sigs.k8s.io/name": "llm-decode-0"}, "ownerReferences": [
               {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "name": "llm", "uid": uid}]},
           "spec": {"replicas": 1, "serviceName": "llm-decode-0",
                    "selector": {"matchLabels": {"nvidia.com/dynamo-graph-deployment-name": "llm"}},
                    "template": {"metadata": {"labels": pod["metadata"]["labels"]},
                                 "spec": {"containers": [{"name": "main", "image": pod["spec"]["containers"][0]["image"]}]}}}}
    world.sb.kubectl("apply", "-f", "-", input=json.dumps(quota))
    world.sb.kubectl("apply", "-f", "-", input=json.dumps(sts))
    rc, data = _doctor_until(sandbox, ns, "controller-create-failed")
    assert rc == 1 and errors(data) == ["controller-create-failed", "group-incomplete"], data["findings"]
    root, child = data["findings"][:2]
    assert root["code"] == "controller-create-failed" and "exceeded quota: no-pods" in root["message"]
    assert root["object"] == {"kind": "StatefulSet", "namespace": ns, "name": "llm-decode-0"}
    assert child["code"] == "group-incomplete" and child["cause"] == {"code": root["code"], "object": root["object"]}
