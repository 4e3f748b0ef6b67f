"""Hand-made live objects for doctor's unit cases: DGDs, the pods Grove and LWS create for a
multinode group, and what the operator creates beside them.

The pods are written here, never rendered with ``explain_dgd``: doctor compares the simulation
against them, so they must come from the upstream controllers' source, cited next to each fact.
They are the pods as the API server returns them (``doctor`` reads only the fields built here).

Sources (repository, file, commit):
- [D] ai-dynamo/dynamo@2a6da14c deploy/operator/internal/consts/consts.go (pod labels
  ``nvidia.com/dynamo-graph-deployment-name``, ``nvidia.com/dynamo-component``; shared memory
  volume ``shared-memory`` at ``/dev/shm``, ``8Gi``); .../dynamo/backend_vllm.go (ConfigMap
  ``<dgd>-wait-leader-script`` with the DGD label, init container ``wait-for-leader-mp``); .../dynamo/backend_trtllm.go
  (the MPI key is mounted at ``/ssh-pk`` and read as ``private.key`` / ``private.key.pub``);
  .../controller/dynamocomponentdeployment_controller.go ``leaderWorkerSetName`` = ``<dcd>-0`` and
  .../dynamo/graph.go ``GetDCDResourceName`` = ``<dgd>-<lower(component)>``;
  .../controller/dynamocomponentdeployment_renderer.go (LWS pod label ``role``: leader / worker).
- [G] ai-dynamo/grove@v0.1.0-alpha.11 (8fa3ece9) operator/api/common/labels.go (label keys),
  operator/api/common/namegen.go (``GeneratePodCliqueName`` = ``<owner>-<replica>-<template>``,
  ``GeneratePodCliqueScalingGroupName`` = ``<pcs>-<replica>-<pcsg>``, headless Service and base
  PodGang = ``<pcs>-<replica>``), operator/internal/controller/podclique/components/pod/pod.go
  (``GenerateName: <pclq>-``, hostname ``<pclq>-<podIndex>``, subdomain = the headless Service,
  scheduling gate ``grove.io/podgang-pending-creation`` until the PodGang exists, labels from
  ``getLabels`` plus the clique's), operator/internal/controller/podcliquescalinggroup/components/
  podclique/podclique.go (cliques of a scaling group carry ``grove.io/podcliquescalinggroup`` and
  ``…-replica-index``), operator/internal/controller/podcliqueset/components/service/service.go
  (``clusterIP: None``, ``publishNotReadyAddresses`` from the PCS's headlessServiceConfig).
- [V] volcano-sh/apis@v1.12.2 pkg/apis/scheduling/v1beta1/types.go (PodGroup phases Pending / Inqueue /
  Running / Unknown, condition Unschedulable reason NotEnoughResources); pod messages as volcano@v1.10.0
  docs/design/scheduling-reason.md words them.
- [K] kai-scheduler/KAI-Scheduler@v0.17.0 pkg/apis/scheduling/v2alpha2/podgroup_types.go (minMember, queue,
  schedulingConditions of type UnschedulableOnNodePool with reasons[].message).
- [L] kubernetes-sigs/lws@v0.9.0 api/leaderworkerset/v1/leaderworkerset_types.go (labels
  ``leaderworkerset.sigs.k8s.io/name``, ``…/group-index``, ``…/worker-index``; leader = worker 0),
  pkg/controllers/leaderworkerset_controller.go (leader StatefulSet pods ``<lws>-<group>``) and
  pod_controller.go (worker StatefulSet ``<lws>-<group>``, pods ``<lws>-<group>-<worker>``; the
  Shared subdomain policy puts every pod under subdomain ``<lws>``),
  pkg/utils/controller/controller_utils.go (headless Service: ``clusterIP: None``,
  ``publishNotReadyAddresses: true``).
"""

from __future__ import annotations

import copy
from typing import Dict, List, Optional

from kubectl_dynamo.model.platform import Facts
from kubectl_dynamo.model.snapshot import Snapshot

DGD_LABEL = "nvidia.com/dynamo-graph-deployment-name"  # [D]
COMPONENT_LABEL = "nvidia.com/dynamo-component"  # [D]
SHM_VOLUME, SHM_PATH, SHM_SIZE = "shared-memory", "/dev/shm", "8Gi"  # [D]
GROVE_GATE = "grove.io/podgang-pending-creation"  # [G] pod.go
MPI_SECRET = "mpi-run-ssh-secret"  # [D] the operator's default sshSecretName
MPI_KEYS = ("private.key", "private.key.pub")  # [D] backend_trtllm.go
IMAGES = {"vllm": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0",
          "sglang": "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.0.0",
          "trtllm": "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.0.0"}
IMAGE = IMAGES["vllm"]
MODULE = {"vllm": "dynamo.vllm", "sglang": "dynamo.sglang", "trtllm": "dynamo.trtllm"}
TP_FLAG = {"vllm": "--tensor-parallel-size", "sglang": "--tp-size", "trtllm": "--tensor-parallel-size"}

# API groups served by a cluster with Grove + KAI, or with LWS + Volcano.
GROVE_GROUPS = {"grove.io": ["v1alpha1"], "scheduler.grove.io": ["v1alpha1"], "scheduling.run.ai": ["v2"],
                "nvidia.com": ["v1beta1"]}
LWS_GROUPS = {"leaderworkerset.x-k8s.io": ["v1"], "scheduling.volcano.sh": ["v1beta1"], "nvidia.com": ["v1beta1"]}


# -- a DGD -----------------------------------------------------------------------------------
def main_container(backend: str = "vllm", *, gpus: Optional[str] = "1", tp: Optional[int] = 2,
                   args: Optional[List[str]] = None, image: Optional[str] = None) -> dict:
    c: dict = {"name": "main", "image": image or IMAGES[backend], "command": ["python3", "-m", MODULE[backend]],
               "args": args if args is not None else ["--model", "Qwen/Qwen3-0.6B", TP_FLAG[backend], str(tp)]}
    if gpus is not None:
        c["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    return c


def component(name: str = "decode", *, nodes: Optional[int] = 2, container: Optional[dict] = None,
              **extra) -> dict:
    c: dict = {"name": name, "type": "decode", "replicas": 1,
               "podTemplate": {"spec": {"containers": [container or main_container()]}}}
    if nodes is not None:
        c["multinode"] = {"nodeCount": nodes}
    c.update(extra)
    return c


def dgd(name: str = "llm", ns: str = "ns", *, backend: Optional[str] = "vllm", components: Optional[list] = None,
        annotations: Optional[Dict[str, str]] = None, origin: Optional[str] = "1.6.0") -> dict:
    ann = {"nvidia.com/dynamo-operator-origin-version": origin} if origin else {}
    ann.update(annotations or {})
    spec: dict = {"components": components if components is not None else [component()]}
    if backend:
        spec["backendFramework"] = backend
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": name, "namespace": ns, "annotations": ann}, "spec": spec}


# -- pods --------------------------------------------------------------------------------------
def _pod(name: str, ns: str, labels: dict, *, image: str, hostname: str, subdomain: str,
         gpus: Optional[str]) -> dict:
    main: dict = {"name": "main", "image": image,
                  "volumeMounts": [{"name": SHM_VOLUME, "mountPath": SHM_PATH}]}
    if gpus is not None:
        main["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"containers": [main], "hostname": hostname, "subdomain": subdomain,
                     "volumes": [{"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": SHM_SIZE}}]},
            "status": {"phase": "Pending"}}


def grove_group(dgd_name: str = "llm", ns: str = "ns", comp: str = "decode", nodes: int = 2, *, group: int = 0,
                image: str = IMAGE, gpus: Optional[str] = "1", pod_index_label: bool = True) -> List[dict]:
    """The leader and nodeCount-1 worker pods of PodCliqueScalingGroup replica ``group`` [G].

    Dynamo names the PodCliqueSet after a short DGD, the scaling group ``lower(<comp>)`` and its
    cliques ``<comp>-ldr`` (1 pod) and ``<comp>-wkr`` (nodeCount-1 pods) [D grove.go].
    ``pod_index_label=False``: Grove before v0.1.0-alpha.8 (611224c1 adds ``grove.io/podclique-pod-index``;
    v0.1.0-alpha.6, 81768026, sets only the hostname ``<pclq>-<podIndex>``)."""
    pcs, replica, pcsg = dgd_name, 0, comp.lower()
    pcsg_fqn = f"{pcs}-{replica}-{pcsg}"
    # The headless Service and the base PodGang; scaling-group replicas beyond minAvailable (1 unless
    # the component sets it [D graph.go]) get scaled PodGangs <pcsg>-<replica - minAvailable> [G namegen.go].
    service = f"{pcs}-{replica}"
    out = []
    for clique, size in ((f"{pcsg}-ldr", 1), (f"{pcsg}-wkr", nodes - 1)):
        fqn = f"{pcsg_fqn}-{group}-{clique}"
        for i in range(size):
            labels = {DGD_LABEL: dgd_name, COMPONENT_LABEL: comp,
                      "app.kubernetes.io/managed-by": "grove-operator", "app.kubernetes.io/part-of": pcs,
                      "grove.io/podclique": fqn, "grove.io/podcliqueset-replica-index": str(replica),
                      "grove.io/podcliquescalinggroup": pcsg_fqn,
                      "grove.io/podcliquescalinggroup-replica-index": str(group),
                      "grove.io/podgang": service if group == 0 else f"{pcsg_fqn}-{group - 1}",
                      "grove.io/podclique-pod-index": str(i)}
            if not pod_index_label:
                del labels["grove.io/podclique-pod-index"]
            out.append(_pod(f"{fqn}-{'abcde'[i % 5]}{i:04d}", ns, labels, image=image, hostname=f"{fqn}-{i}",
                            subdomain=service, gpus=gpus))
    return out


def lws_group(dgd_name: str = "llm", ns: str = "ns", comp: str = "decode", nodes: int = 2, *, group: int = 0,
              image: str = IMAGE, gpus: Optional[str] = "1") -> List[dict]:
    """The leader and workers of LeaderWorkerSet group ``group`` [L], as Dynamo names the LWS [D]."""
    lws = f"{dgd_name}-{comp.lower()}-0"
    out = []
    for worker in range(nodes):
        name = f"{lws}-{group}" if worker == 0 else f"{lws}-{group}-{worker}"
        labels = {DGD_LABEL: dgd_name, COMPONENT_LABEL: comp, "role": "leader" if worker == 0 else "worker",
                  "leaderworkerset.sigs.k8s.io/name": lws, "leaderworkerset.sigs.k8s.io/group-index": str(group),
                  "leaderworkerset.sigs.k8s.io/worker-index": str(worker)}
        out.append(_pod(name, ns, labels, image=image, hostname=name, subdomain=lws, gpus=gpus))
    return out


def running(pod: dict, *, ready: bool = True, node: str = "gpu-node-0") -> dict:
    pod["spec"]["nodeName"] = node
    pod["status"] = {"phase": "Running", "conditions": [
        {"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "True" if ready else "False"}],
        "containerStatuses": [{"name": "main", "ready": ready, "restartCount": 0, "state": {"running": {}}}]}
    return pod


def unschedulable(pod: dict, message: str) -> dict:
    """Pending as kube-scheduler leaves it: PodScheduled False, reason Unschedulable, its message."""
    pod["spec"].pop("nodeName", None)
    pod["status"] = {"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}]}
    return pod


def on_scheduler(pod: dict, scheduler: str) -> dict:
    """The pod template names ``scheduler`` (``spec.schedulerName``)."""
    pod["spec"]["schedulerName"] = scheduler
    return pod


def in_podgroup(pod: dict, flavour: str, podgroup: str) -> dict:
    """The annotation a gang scheduler's grouper puts on a member pod: LWS's volcano provider
    ``scheduling.k8s.io/group-name`` [L pkg/schedulerprovider/volcano_provider.go], KAI's podgrouper
    ``pod-group-name`` [K]."""
    key = "scheduling.k8s.io/group-name" if flavour == "volcano" else "pod-group-name"
    pod["metadata"].setdefault("annotations", {})[key] = podgroup
    return pod


def volcano_podgroup(ns: str, name: str, *, phase: str, min_member: int, message: Optional[str] = None) -> dict:
    """A Volcano PodGroup [V]; ``message``: its Unschedulable/NotEnoughResources condition (Volcano keeps
    it after the gang runs)."""
    status: dict = {"phase": phase}
    if message:
        status["conditions"] = [{"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources",
                                 "message": message}]
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns}, "spec": {"minMember": min_member}, "status": status}


def kai_podgroup(ns: str, name: str, *, min_member: int, queue: str = "dynamo",
                 reasons: Optional[List[str]] = None) -> dict:
    """A KAI PodGroup [K]; ``reasons``: an UnschedulableOnNodePool scheduling condition's messages."""
    status: dict = {}
    if reasons:
        status["schedulingConditions"] = [{"type": "UnschedulableOnNodePool", "nodePool": "default", "status": "True",
                                           "reason": "Unschedulable",
                                           "reasons": [{"reason": "Unschedulable", "message": m} for m in reasons]}]
    return {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns}, "spec": {"minMember": min_member, "queue": queue},
            "status": status}


def owned(obj: dict, owner: dict) -> dict:
    """``obj`` with a controller ownerReference to ``owner`` (as every controller here sets it)."""
    obj["metadata"].setdefault("ownerReferences", []).append(
        {"apiVersion": owner.get("apiVersion"), "kind": owner["kind"], "name": owner["metadata"]["name"],
         "controller": True})
    return obj


def lws_lineage(doc: dict, comp: str = "decode") -> Dict[str, dict]:
    """The objects between a DGD and its LWS pods: DynamoComponentDeployment ``<dgd>-<comp>`` [D graph.go],
    LeaderWorkerSet ``<dcd>-0`` [D], its leader StatefulSet ``<lws>`` and group 0's worker StatefulSet
    ``<lws>-0`` [L]."""
    ns, name = doc["metadata"]["namespace"], doc["metadata"]["name"]
    labels = {DGD_LABEL: name, COMPONENT_LABEL: comp}
    dcd = owned({"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoComponentDeployment",
                 "metadata": {"name": f"{name}-{comp.lower()}", "namespace": ns, "labels": dict(labels)}}, doc)
    lws = owned({"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                 "metadata": {"name": f"{dcd['metadata']['name']}-0", "namespace": ns, "labels": dict(labels)}}, dcd)
    lws_name = lws["metadata"]["name"]
    leader = owned({"apiVersion": "apps/v1", "kind": "StatefulSet",
                    "metadata": {"name": lws_name, "namespace": ns,
                                 "labels": {"leaderworkerset.sigs.k8s.io/name": lws_name}}}, lws)
    return {"dcd": dcd, "lws": lws, "leader_sts": leader}


def gated(pod: dict) -> dict:
    """A Grove pod before its PodGang exists [G pod.go]."""
    pod["spec"]["schedulingGates"] = [{"name": GROVE_GATE}]
    pod["spec"].pop("nodeName", None)
    pod["status"] = {"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
         "message": "Scheduling is blocked due to non-empty scheduling gates"}]}
    return pod


def all_running(pods: List[dict]) -> List[dict]:
    """Every pod Running and Ready, one per node (as a multinode group is placed)."""
    return [running(p, node=NODE_NAMES[i % len(NODE_NAMES)]) for i, p in enumerate(pods)]


# -- what the orchestrators and the operator create beside the pods ---------------------------
def headless_service(ns: str, name: str, *, cluster_ip: str = "None", publish_not_ready: bool = True) -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
            "spec": {"clusterIP": cluster_ip, "publishNotReadyAddresses": publish_not_ready}}


def services_for(pods: List[dict]) -> List[dict]:
    """One headless Service per subdomain the pods use, as Grove / LWS create them."""
    return [headless_service(ns, sub) for ns, sub in
            sorted({(p["metadata"]["namespace"], p["spec"]["subdomain"]) for p in pods})]


def wait_leader_configmap(dgd_name: str = "llm", ns: str = "ns") -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"{dgd_name}-wait-leader-script", "namespace": ns, "labels": {DGD_LABEL: dgd_name}}}


def warning_event(pod: dict, reason: str, message: str, count: int = 1) -> dict:
    meta = pod["metadata"]
    return {"type": "Warning", "reason": reason, "message": message, "count": count,
            "involvedObject": {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"]}}


TAKEN_AT = "2026-12-01T09:00:00Z"  # when a hand-made snapshot was "read"
NODE_NAMES = ("gpu-node-0", "gpu-node-1", "gpu-node-2", "gpu-node-3")


def node(name: str, *, ready: str = "True", gpus: str = "8", unschedulable: bool = False) -> dict:
    """A GPU node as the API server returns it: the kubelet's Ready condition, allocatable GPUs."""
    n: dict = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": {},
               "status": {"allocatable": {"cpu": "64", "nvidia.com/gpu": gpus},
                          "conditions": [{"type": "Ready", "status": ready,
                                          "reason": "KubeletReady" if ready == "True" else "NodeStatusUnknown",
                                          "message": "kubelet is posting ready status" if ready == "True" else
                                          "Kubelet stopped posting node status."}]}}
    if unschedulable:
        n["spec"]["unschedulable"] = True
    return n


def nodes() -> List[dict]:
    return [node(n) for n in NODE_NAMES]


def facts(groups: Optional[dict] = None, *, kai_queues=("dynamo",), **kw) -> Facts:
    """A cluster's facts without an installed operator (gates from API discovery)."""
    groups = copy.deepcopy(GROVE_GROUPS if groups is None else groups)
    queues = [{"metadata": {"name": q}, "spec": {}} for q in kai_queues] if "scheduling.run.ai" in groups else None
    base = dict(server_version="v1.33.1", groups=groups, deployments=[], nodes=nodes(), kai_queues=queues,
                dgd_crd_served="nvidia.com" in groups)
    base.update(kw)
    return Facts(**base)


def snapshot(doc: dict, pods: List[dict], *, facts_: Optional[Facts] = None, configmaps: Optional[list] = None,
             services: Optional[list] = None, events: Optional[list] = None, podgangs: Optional[list] = None,
             secrets: Optional[dict] = None, taken_at: str = TAKEN_AT, **lists) -> Snapshot:
    """A doctor snapshot of one DGD; by default the operator's ConfigMap and the orchestrator's
    headless Services exist (a healthy group), so a case changes one fact. ``lists``: further kinds
    (``volcano_podgroups``, ``kai_podgroups``, ``leaderworkersets``, ``statefulsets``, ...)."""
    ns, name = doc["metadata"]["namespace"], doc["metadata"]["name"]
    return Snapshot(facts=facts_ or facts(), namespace=ns, dgds=[doc], pods=pods,
                    configmaps=[wait_leader_configmap(name, ns)] if configmaps is None else configmaps,
                    services=services_for(pods) if services is None else services,
                    events=events or [], podgangs=podgangs, secrets=secrets or {}, taken_at=taken_at, **lists)


def created(pod: dict, seconds_before: int) -> dict:
    """The pod was created ``seconds_before`` the snapshot was taken."""
    import datetime

    t = datetime.datetime.fromisoformat(TAKEN_AT.replace("Z", "+00:00")) - datetime.timedelta(seconds=seconds_before)
    pod["metadata"]["creationTimestamp"] = t.strftime("%Y-%m-%dT%H:%M:%SZ")
    return pod
