"""Live multinode groups as the Dynamo operator and Grove / LWS would leave them, built from the
``explain`` simulation: a DGD object, and for each group the pods (rendered pod spec, the
orchestrator's labels), the wait-leader ConfigMap and the MPI secret.

What cannot exist here is faked and said so: no KAI scheduler process runs, so pods drop
``schedulerName: kai-scheduler`` and the default scheduler binds them (to kwok's fake GPU nodes);
no Grove / LWS controller runs, so the tests create the pods those controllers would.
"""

from __future__ import annotations

import copy

from kubectl_dynamo.operator.grove import pcs_name_for_dgd
from kubectl_dynamo.operator.render import explain_dgd
from kubectl_dynamo.operator.selection import compute_gates

ALL_GROUPS = ["grove.io", "scheduler.grove.io", "scheduling.run.ai", "leaderworkerset.x-k8s.io",
              "scheduling.volcano.sh"]
OPERATOR_VERSION = "1.6.0"
IMAGE = {"vllm": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0",
         "sglang": "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.0.0",
         "trtllm": "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.0.0"}


def dgd(name, ns, backend, *, nodes=2, gpus=1, tp=None, origin=OPERATOR_VERSION, lws=False, annotations=None,
        extra_args=(), component="decode"):
    tp = tp if tp is not None else nodes * gpus
    module = {"vllm": "dynamo.vllm", "sglang": "dynamo.sglang", "trtllm": "dynamo.trtllm"}[backend]
    tp_flag = {"vllm": "--tensor-parallel-size", "sglang": "--tp-size", "trtllm": "--tensor-parallel-size"}[backend]
    ann = {"nvidia.com/dynamo-operator-origin-version": origin}
    if lws:
        ann["nvidia.com/enable-grove"] = "false"
    ann.update(annotations or {})
    return {
        "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": ns, "annotations": ann},
        "spec": {"backendFramework": backend, "components": [{
            "name": component, "type": "decode", "replicas": 1, "multinode": {"nodeCount": nodes},
            "podTemplate": {"spec": {"containers": [{
                "name": "main", "image": IMAGE[backend], "command": ["python3", "-m", module],
                "args": ["--model", "Qwen/Qwen3-0.6B", tp_flag, str(tp), *extra_args],
                "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}}]},
    }


def render(doc):
    gates = compute_gates(ALL_GROUPS, {"orchestrators": {"grove": {"enabled": True},
                                                         "kaiScheduler": {"enabled": True}}})
    return explain_dgd(copy.deepcopy(doc), operator_version=OPERATOR_VERSION, gates=gates,
                       kai_queues=["dynamo", "dynamo-default"])


def pods(doc, *, group=0):
    """The pods of one group of the first component, labelled as Grove or LWS label them."""
    explained = render(doc)
    comp = explained["components"][0]
    name, ns = doc["metadata"]["name"], doc["metadata"]["namespace"]
    cname = comp["name"].lower()
    out = []
    for role in comp["roles"]:
        for i in range(role["replicas"]):
            spec = copy.deepcopy(role["podSpec"])
            spec.pop("schedulerName", None)  # no KAI scheduler process here (see module docstring)
            spec["terminationGracePeriodSeconds"] = 0
            labels = {"nvidia.com/dynamo-graph-deployment-name": name, "nvidia.com/dynamo-component": comp["name"]}
            if explained["provider"] == "grove":
                pcs = pcs_name_for_dgd(name, doc["spec"]["components"])
                suffix = "ldr" if role["name"] == "leader" else "wkr"
                clique = f"{pcs}-0-{cname}-{group}-{cname}-{suffix}"
                labels.update({"grove.io/podclique": clique, "grove.io/podcliquescalinggroup-replica-index": str(group),
                               "grove.io/podclique-pod-index": str(i), "grove.io/podgang": f"{pcs}-0",
                               "app.kubernetes.io/part-of": pcs})
                pod_name = f"{clique}-{i}"
                spec.update({"hostname": pod_name, "subdomain": f"{pcs}-0"})  # Grove's pod DNS
            else:
                lws = f"{name}-{cname}-0"
                worker = 0 if role["name"] == "leader" else i + 1
                labels.update({"leaderworkerset.sigs.k8s.io/name": lws,
                               "leaderworkerset.sigs.k8s.io/group-index": str(group),
                               "leaderworkerset.sigs.k8s.io/worker-index": str(worker), "role": role["name"]})
                pod_name = f"{lws}-{group}" if worker == 0 else f"{lws}-{group}-{worker}"
                spec.update({"hostname": pod_name, "subdomain": lws})  # LWS's Shared subdomain policy
            out.append({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": pod_name, "namespace": ns, "labels": labels}, "spec": spec})
    return out


def wait_leader_configmap(doc):
    name, ns = doc["metadata"]["name"], doc["metadata"]["namespace"]
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"{name}-wait-leader-script", "namespace": ns,
                         "labels": {"nvidia.com/dynamo-graph-deployment-name": name}},
            "data": {"wait-for-leader.py": "# stand-in for the operator's script\n"}}


def mpi_secret(ns, keys=("private.key", "private.key.pub")):
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "mpi-run-ssh-secret", "namespace": ns},
            "type": "Opaque", "stringData": {k: "test-key-material" for k in keys}}


def headless_services(group):
    """The headless Service per subdomain that Grove / LWS create for the group's DNS names."""
    out = []
    for ns, name in sorted({(p["metadata"]["namespace"], p["spec"]["subdomain"]) for p in group}):
        out.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
                    "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
                             "selector": {"nvidia.com/dynamo-graph-deployment-name":
                                          group[0]["metadata"]["labels"]["nvidia.com/dynamo-graph-deployment-name"]}}})
    return out


def discovery_objects(ns, account):
    """ServiceAccount ``account``; if it is the operator's discovery one (``<dgd>-k8s-service-discovery``), its
    Role and RoleBinding too, as ai-dynamo/dynamo@2a6da14c deploy/operator/internal/discovery/resource.go renders
    them (labels left out)."""
    objs = [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account, "namespace": ns}}]
    if not account.endswith("-k8s-service-discovery"):
        return objs
    rbac = "rbac.authorization.k8s.io"
    return objs + [
        {"apiVersion": f"{rbac}/v1", "kind": "Role", "metadata": {"name": f"{account}-role", "namespace": ns},
         "rules": [{"apiGroups": [""], "resources": ["endpoints", "pods"], "verbs": ["get", "list", "watch"]},
                   {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"],
                    "verbs": ["get", "list", "watch"]},
                   {"apiGroups": ["nvidia.com"], "resources": ["dynamoworkermetadatas"],
                    "verbs": ["create", "get", "list", "watch", "update", "patch", "delete"]}]},
        {"apiVersion": f"{rbac}/v1", "kind": "RoleBinding", "metadata": {"name": f"{account}-binding", "namespace": ns},
         "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": ns}],
         "roleRef": {"apiGroup": rbac, "kind": "Role", "name": f"{account}-role"}}]


def group_objects(doc, *, configmap=True, secret=True, service=True, mutate=None):
    """DGD + pods (+ the ConfigMap / Secret the operator creates); ``mutate(pods)`` injects a fault."""
    ns = doc["metadata"]["namespace"]
    group = pods(doc)
    if mutate:
        mutate(group)
    objs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, doc]
    for sa in sorted({p["spec"].get("serviceAccountName") for p in group} - {None}):
        # The operator creates the discovery ServiceAccount the pods run as, and its Role and RoleBinding.
        objs += discovery_objects(ns, sa)
    backend = doc["spec"]["backendFramework"]
    if configmap and backend == "vllm":
        objs.append(wait_leader_configmap(doc))
    if secret and backend == "trtllm":
        objs.append(mpi_secret(ns))
    if service:
        objs += headless_services(group)
    return objs + group


def grove_objects(doc, pods):
    """The PodCliqueSet, scaling group, PodCliques and PodGang the Grove controller would create for
    the DGD's one multinode component (names as ai-dynamo/grove operator/api/common/namegen.go,
    v0.1.0-alpha.12), linked by Grove's labels only: no Grove controller runs here."""
    name, ns = doc["metadata"]["name"], doc["metadata"]["namespace"]
    comp = pods[0]["metadata"]["labels"]["nvidia.com/dynamo-component"].lower()
    pcsg = f"{name}-0-{comp}"
    part_of = {"app.kubernetes.io/part-of": name}
    cliques = sorted({p["metadata"]["labels"]["grove.io/podclique"] for p in pods})
    objs = [{"apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueSet",
             "metadata": {"name": name, "namespace": ns, "labels": {"nvidia.com/dynamo-graph-deployment-name": name}},
             "spec": {"replicas": 1, "template": {"cliques": []}}},
            {"apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueScalingGroup",
             "metadata": {"name": pcsg, "namespace": ns, "labels": part_of},
             "spec": {"replicas": 1, "cliqueNames": [f"{comp}-ldr", f"{comp}-wkr"]}}]
    for c in cliques:
        objs.append({"apiVersion": "grove.io/v1alpha1", "kind": "PodClique",
                     "metadata": {"name": c, "namespace": ns,
                                  "labels": {**part_of, "grove.io/podcliquescalinggroup": pcsg}},
                     "spec": {"roleName": f"{comp}-{c.rsplit('-', 1)[-1]}", "replicas": 1,
                              "podSpec": {"containers": [{"name": "main", "image": "x"}]}}})
    objs.append({"apiVersion": "scheduler.grove.io/v1alpha1", "kind": "PodGang",
                 "metadata": {"name": f"{name}-0", "namespace": ns, "labels": part_of},
                 "spec": {"podgroups": [{"name": c, "minReplicas": 1, "podReferences": [
                     {"namespace": ns, "name": p["metadata"]["name"]} for p in pods
                     if p["metadata"]["labels"]["grove.io/podclique"] == c]} for c in cliques]}})
    return objs


def kwok_logs(pod_name, ns, current, previous=None, *, other=None):
    """kwok's Logs CR for one pod: what its main container's log (and previous instance's) is;
    ``other`` is every other container's. kwok serves these CRI-format files through the kubelet
    API it fakes (kwok v0.8.0 pkg/kwok/server/debugging_logs.go): the images cannot run here."""
    main = {"containers": ["main"], "logsFile": str(current)}
    if previous:
        main["previousLogsFile"] = str(previous)
    logs = [main] + ([{"logsFile": str(other)}] if other else [])
    return {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Logs", "metadata": {"name": pod_name, "namespace": ns},
            "spec": {"logs": logs}}


def cri_line(ts, text):
    return f"{ts} stdout F {text}\n"  # the CRI log format kwok reads (k8s.io/cri-client pkg/logs)
