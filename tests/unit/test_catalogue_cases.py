"""Every catalogued code has a case that fires and a near-miss that stays silent, without a cluster.

``CASES[code] = (fires, silent)``: two small functions that build a hand-made input and run it
through the real code path of the code's scope; ``silent`` is the same input with the one fact
fixed, so the pair shows the check tells them apart. The pairs live in one table per scope
(``CLUSTER``, ``MANIFEST``, ``DGD``, ``EXEC``): adding a code is one entry there. A code reported
at several scopes has its other scopes in ``MORE_SCOPES[(code, scope)]``. ``MORE_SILENT`` holds
further healthy inputs a check once misread, ``MORE_FIRES`` further faults it once missed;
``KNOWN_BUGS`` marks cases that show a known bug or gap (strict xfail, so a fix turns them into
failures to remove); ``UNREACHED`` names catalogued scopes no pure path reaches.

Scopes and their real paths (see ``checks/catalogue.py``):
- cluster: hand-made ``Facts`` -> ``detection.detect`` -> ``ClusterView`` -> ``registry.run("cluster")``;
- manifest: a DGD dict -> ``explain.explain_one`` (explain's findings, schema included);
- dgd: a hand-made ``Snapshot`` (pods from ``builders``, never from ``explain_dgd``) ->
  ``doctor.build_views`` -> ``diagnosis.diagnose``;
- exec: ``checks.execs.run_exec_checks`` over doctor's views. The pods/exec transport needs an
  API server and a kubelet (tests/integration drives it through kwok), so here ``exec_in_pod`` is a
  stand-in returning what the kubelet would: the exit code decoded by the real ``execute.exit_code``
  from the Status the kubelet writes, and the command's output.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple
from unittest import mock

import pytest
import yaml

from kubectl_dynamo.checks import cluster as cluster_checks
from kubectl_dynamo.checks import diagnosis, execs, registry
from kubectl_dynamo.cluster import execute
from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.commands import explain
from kubectl_dynamo.findings.catalogue import CATALOGUE, entry
from kubectl_dynamo.model import views as doctor
from kubectl_dynamo.model.platform import Facts, detect, operator_context
from kubectl_dynamo.model.snapshot import take
from kubectl_dynamo.operator.context import ClusterContext
from tests.integration import world
from tests.unit import builders as b

RECORDED = Path(__file__).resolve().parents[1] / "data" / "recorded"


@dataclass
class Ran:
    scope: str
    findings: List[dict]  # the JSON form: code, severity, message, hint, component, object

    def of(self, code: str) -> List[dict]:
        return [f for f in self.findings if f["code"] == code]


Case = Callable[[], Ran]


# -- the real paths ----------------------------------------------------------------------------
def _crd_fields(facts: Facts) -> Facts:
    """``facts`` with the component fields of the bundled DGD CRD (as model/views.read_dgd_fields reads them)."""
    crd = yaml.load((Path(__file__).resolve().parents[2] / "kubectl_dynamo" / "data" / "crds" /
                          "nvidia.com_dynamographdeployments.yaml").read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    (served,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1beta1"]
    item = served["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["components"]["items"]
    facts.dgd_component_fields = sorted(item["properties"])
    return facts


def run_cluster(facts: Facts) -> Ran:
    view = cluster_checks.ClusterView(facts, detect(facts))
    return Ran("cluster", [f.as_json() for f in registry.run("cluster", view)])


def run_manifest(doc: dict, *, facts: Optional[Facts] = None, operator_version: Optional[str] = None) -> Ran:
    """explain -f (offline), or explain NAME's live form when ``facts`` give the cluster context."""
    context = operator_context(facts) if facts is not None else ClusterContext()
    return Ran("manifest", explain.explain_one(copy.deepcopy(doc), operator_version=operator_version,
                                               context=context)["findings"])


def run_dgd(snap) -> Ran:
    """doctor over one snapshot; the cluster section's findings (object kind Cluster) are left out."""
    result = diagnosis.diagnose(snap, doctor.build_views(snap))
    return Ran("dgd", [f for f in result["findings"] if (f["object"] or {}).get("kind") != "Cluster"])


def kubelet_status(exit_code: int) -> str:
    """The Status the kubelet writes on the exec error channel (k8s.io/kubelet v0.33.13
    pkg/cri/streaming/remotecommand/exec.go; reason/cause constants from k8s.io/apimachinery
    v0.35.4 pkg/util/remotecommand/constants.go); ``Success`` for exit 0."""
    if exit_code == 0:
        return json.dumps({"metadata": {}, "status": "Success"})
    return json.dumps({"metadata": {}, "status": "Failure", "reason": "NonZeroExitCode",
                       "message": f"command terminated with non-zero exit code: exit status {exit_code}",
                       "details": {"causes": [{"reason": "ExitCode", "message": str(exit_code)}]}})


def run_exec(snap, answers: Dict[str, Tuple[int, str]]) -> Ran:
    """doctor --exec over one snapshot; ``answers`` maps a command's first word to (exit code, output)."""
    calls = []

    def stand_in(cluster, namespace, pod, command, timeout, container="main"):
        calls.append((pod, command))
        code, out = answers[command[0]]
        decoded, problem = execute.exit_code(kubelet_status(code))
        assert problem is None
        return decoded, out

    with mock.patch.object(execs, "exec_in_pod", stand_in):
        result = execs.run_exec_checks(None, doctor.build_views(snap), timeout=5)
    assert calls, "no command ran: the case's group does not reach the exec check"
    assert result["skipped"] == []
    return Ran("exec", [f.as_json() for f in result["findings"]])


# -- cluster scope: an install's controllers and queues, as their charts leave them ------------
GROUPS = {
    "grove": {"grove.io": ["v1alpha1"], "scheduler.grove.io": ["v1alpha1"]},
    "kai": {"scheduling.run.ai": ["v2"]},
    "lws": {"leaderworkerset.x-k8s.io": ["v1"], "disaggregatedset.x-k8s.io": ["v1"]},
    "volcano": {"scheduling.volcano.sh": ["v1beta1"], "batch.volcano.sh": ["v1alpha1"]},
}
VERSIONS = {"grove": "v0.1.0-alpha.15", "kai": "v0.17.0", "lws": "v0.10.0", "volcano": "v1.15.1"}


def installed(*projects: str, operator: Optional[str] = None, config: Optional[dict] = None,
              versions: Optional[Dict[str, str]] = None, kai_queues: Optional[list] = None,
              server: str = "v1.33.1") -> Facts:
    """Facts of a cluster with ``projects`` installed (and the Dynamo operator ``operator``, its
    config.yaml overridden by ``config``): Deployments with the upstream labels (tests/integration/world.py)."""
    vs = {**VERSIONS, **(versions or {})}
    groups: Dict[str, list] = {}
    deployments = []
    for p in projects:
        groups.update(GROUPS[p])
        deployments += [d for d in world.controllers(p, vs[p]) if d["kind"] == "Deployment"]
    operator_config = None
    if operator:
        groups["nvidia.com"] = ["v1beta1", "v1alpha1"]
        objs = world.dynamo_operator(version=operator, grove="grove" in projects, kai="kai" in projects)
        deployments += [d for d in objs if d["kind"] == "Deployment"]
        operator_config = yaml.safe_load(next(o for o in objs if o["kind"] == "ConfigMap")["data"]["config.yaml"])
        if config:
            for key, value in config.items():
                operator_config["orchestrators"][key] = value
    for d in deployments:
        d["status"] = {"availableReplicas": 1}
    if kai_queues is None and "kai" in projects:
        kai_queues = world.kai_queues()
    return Facts(server_version=server, groups=groups, deployments=deployments, nodes=b.nodes(),
                 kai_queues=kai_queues, volcano_queues=world.volcano_queues() if "volcano" in projects else None,
                 operator_config=operator_config, dgd_crd_served="nvidia.com" in groups)


def grove_kai(**kw) -> Facts:
    return installed("grove", "kai", operator="1.6.0", **kw)


def _deny(facts: Facts, what: str, attr: str) -> Facts:
    setattr(facts, attr, None)
    facts.unknown[what] = f"forbidden ({attr} is forbidden: User \"viewer\" cannot list resource \"{attr}\")"
    return facts


def _queues_with_child_of_dynamo() -> list:
    qs = world.kai_queues()
    qs.append({"metadata": {"name": "team-a"}, "spec": {"parentQueue": "dynamo"}})
    return qs


def _unavailable(facts: Facts, app_name: str) -> Facts:
    for d in facts.deployments:
        if d["metadata"]["labels"].get("app.kubernetes.io/name") == app_name:
            d["status"] = {"availableReplicas": 0}
    return facts


def _without_config(facts: Facts) -> Facts:
    facts.operator_config = None
    facts.unknown["dynamoOperator.config"] = "forbidden (configmaps is forbidden)"
    return facts


def _nodes(facts: Facts, nodes: list) -> Facts:
    facts.nodes = nodes
    return facts


def _no_ds_group(facts: Facts) -> Facts:
    facts.groups.pop("disaggregatedset.x-k8s.io")
    return facts


CLUSTER: Dict[str, Tuple[Case, Case]] = {
    "permission-denied": (lambda: run_cluster(_deny(grove_kai(), "nodes", "nodes")),
                          lambda: run_cluster(grove_kai())),
    "kubernetes-too-old": (lambda: run_cluster(grove_kai(server="v1.29.4")),
                           lambda: run_cluster(grove_kai(server="v1.30.0"))),
    "no-multinode-orchestrator": (lambda: run_cluster(installed("kai", operator="1.6.0")),
                                  lambda: run_cluster(installed("grove", "kai", operator="1.6.0"))),
    "lws-without-volcano": (lambda: run_cluster(installed("lws", operator="1.6.0")),
                            lambda: run_cluster(installed("lws", "volcano", operator="1.6.0"))),
    "kai-queue-missing": (lambda: run_cluster(grove_kai(kai_queues=world.kai_queues(with_dynamo=False))),
                          lambda: run_cluster(grove_kai())),
    "kai-queue-not-leaf": (lambda: run_cluster(grove_kai(kai_queues=_queues_with_child_of_dynamo())),
                           lambda: run_cluster(grove_kai())),
    # The config enables LWS explicitly; LWS is served but Volcano is not: the operator exits.
    "operator-gate-error": (lambda: run_cluster(installed("grove", "kai", "lws", operator="1.6.0",
                                                          config={"lws": {"enabled": True}})),
                            lambda: run_cluster(installed("grove", "kai", "lws", "volcano", operator="1.6.0",
                                                          config={"lws": {"enabled": True}}))),
    "grove-disabled": (lambda: run_cluster(grove_kai(config={"grove": {"enabled": False}})),
                       lambda: run_cluster(grove_kai(config={"grove": {"enabled": True}}))),
    "kai-disabled": (lambda: run_cluster(grove_kai(config={"kaiScheduler": {"enabled": False}})),
                     lambda: run_cluster(grove_kai(config={"kaiScheduler": {"enabled": True}}))),
    "gates-unreadable": (lambda: run_cluster(_without_config(grove_kai())),
                         lambda: run_cluster(grove_kai())),
    "orchestrator-unhealthy": (lambda: run_cluster(_unavailable(grove_kai(), "grove-operator")),
                               lambda: run_cluster(grove_kai())),
    # Operator 1.6 needs Grove alpha.15 (the topology variables).
    "orchestrator-too-old": (lambda: run_cluster(grove_kai(versions={"grove": "v0.1.0-alpha.13"})),
                             lambda: run_cluster(grove_kai(versions={"grove": "v0.1.0-alpha.15"}))),
    # Grove alpha.12 with KAI v0.14.1 (KAI-Scheduler#2117: both create PodGroups); the near-miss has KAI v0.15.0.
    "known-broken-versions": (
        lambda: run_cluster(installed("grove", "kai", operator="1.5.0",
                                      versions={"grove": "v0.1.0-alpha.12", "kai": "v0.14.1"})),
        lambda: run_cluster(installed("grove", "kai", operator="1.5.0",
                                      versions={"grove": "v0.1.0-alpha.12", "kai": "v0.15.0"}))),
    "lws-without-disaggregatedset": (
        lambda: run_cluster(_no_ds_group(installed("lws", "volcano", operator="1.6.0", versions={"lws": "v0.9.0"}))),
        lambda: run_cluster(installed("lws", "volcano", operator="1.6.0"))),
    "no-gpu-nodes": (lambda: run_cluster(_nodes(grove_kai(), [{"metadata": {"name": "cpu-0"},
                                                               "status": {"allocatable": {"cpu": "64"}}}])),
                     lambda: run_cluster(grove_kai())),
    # the DGD CRD of the recorded operator's commit (chart 1.5.0, kubectl_dynamo/data/crds/PROVENANCE.md, no
    # components[].roles) served under an operator 1.6.0 (fires), and under the 1.5.0 it belongs to (silent)
    "crd-behind-operator": (lambda: run_cluster(_crd_fields(installed("grove", "kai", operator="1.6.0"))),
                            lambda: run_cluster(_crd_fields(installed("grove", "kai", operator="1.5.0")))),
    "dynamo-operator-missing": (lambda: run_cluster(installed("grove", "kai")),
                                lambda: run_cluster(installed("grove", "kai", operator="1.6.0"))),
    "scheduler-integration-conflict": (
        lambda: run_cluster(installed("grove", "kai", "volcano", operator="1.6.0",
                                      config={"volcanoScheduler": {"enabled": True}})),
        lambda: run_cluster(installed("grove", "kai", "volcano", operator="1.6.0",
                                      config={"volcanoScheduler": {"enabled": False}}))),
}


# -- manifest scope: explain's findings on a small DGD -------------------------------------------
def _dgd(backend: str = "vllm", *, nodes: int = 2, annotations: Optional[dict] = None, origin: str = "1.6.0",
         **main) -> dict:
    """A one-component multinode DGD (default: 2 pods × 1 GPU, vLLM, TP = nodes) with its main
    container changed by ``main`` (``builders.main_container`` arguments)."""
    main.setdefault("tp", nodes)
    return b.dgd(backend=backend, annotations=annotations, origin=origin,
                 components=[b.component(nodes=nodes, container=b.main_container(backend, **main))])


def _with_container(backend: Optional[str] = "vllm", **fields) -> dict:
    c = b.main_container()
    c.update(fields)
    return b.dgd(backend=backend, components=[b.component(container=c)])


def _pod_spec(**fields) -> dict:
    doc = _with_container()
    doc["spec"]["components"][0]["podTemplate"]["spec"].update(fields)
    return doc


def _kv_policy(**policy) -> dict:
    doc = b.dgd()
    doc["spec"]["experimental"] = {"kvTransferPolicy": {"domain": "zone", **policy}}
    return doc


def _shell(line: str, backend: Optional[str] = "vllm") -> dict:
    """A main container that launches the engine from a shell script."""
    return _with_container(backend, command=["/bin/sh", "-c"], args=[line])


def _roles(worker_template: bool = True, worker_mutate=None) -> dict:
    """A 1.6 component with role templates (leader and, optionally, worker)."""
    comp = b.component()
    template = comp.pop("podTemplate")
    worker = {"name": "worker"}
    if worker_template:
        worker["podTemplate"] = copy.deepcopy(template)
        if worker_mutate:
            worker_mutate(worker["podTemplate"])
    comp["roles"] = [{"name": "leader", "podTemplate": copy.deepcopy(template)}, worker]
    return b.dgd(components=[comp])


def _trtllm_roles(worker_line: str) -> dict:
    """A TRT-LLM component with 1.6 role templates; the worker runs ``worker_line``."""
    doc = _roles()
    comp = doc["spec"]["components"][0]
    for role, line in (("leader", "mpirun -n 2 trtllm-llmapi-launch python3 -m dynamo.trtllm"), ("worker", worker_line)):
        main = next(r for r in comp["roles"] if r["name"] == role)["podTemplate"]["spec"]["containers"][0]
        main.update(command=["/bin/sh", "-c"], args=[line])
    doc["spec"]["backendFramework"] = "trtllm"
    return doc


def _v1alpha1(**spec) -> dict:
    """A v1alpha1 DGD (spec.services map, extraPodSpec.mainContainer)."""
    doc = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
           "metadata": {"name": "llm", "namespace": "ns"},
           "spec": {"services": {"Decode": {"componentType": "worker", "replicas": 1,
                                            "extraPodSpec": {"mainContainer": {"image": b.IMAGE}}}}}}
    doc["spec"].update(spec)
    return doc


def _metadata(**fields) -> dict:
    doc = b.dgd()
    doc["metadata"].update(fields)
    return doc


def _replicas(value) -> dict:
    doc = b.dgd()
    doc["spec"]["components"][0]["replicas"] = value
    return doc


def _pinned_grove(facts: Facts) -> Ran:
    # An existing DGD (a uid: the provider annotation only counts once stored; on CREATE the
    # defaulting webhook derives the provider afresh).
    doc = b.dgd(annotations={"nvidia.com/workload-provider": "grove"})
    doc["metadata"]["uid"] = "5f0c3a52-0000-4000-8000-000000000001"
    return run_manifest(doc, facts=facts)


TP_ARGS = ["--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size"]
RANK_ARGS = [*TP_ARGS, "2", "--node-rank", "$(DYNAMO_RANK)"]  # the 1.6 topology variable
PVCS = [{"name": "model-cache", "create": True, "size": "100Gi"}]

MANIFEST: Dict[str, Tuple[Case, Case]] = {
    # the LWS path (the DGD opts out of Grove) does not read the Volcano queue annotation; the Grove path
    # with KAI (offline default) reads its KAI queue annotation
    "queue-annotation-ignored": (
        lambda: run_manifest(_dgd(annotations={"nvidia.com/enable-grove": "false", "nvidia.com/volcano-queue": "team-a"})),
        lambda: run_manifest(_dgd(annotations={"nvidia.com/kai-scheduler-queue": "team-a"}))),
    "schema-invalid": (lambda: run_manifest(_replicas("one")), lambda: run_manifest(_replicas(1))),
    # A role template is checked as the Pod it becomes (the 1.6 roles field is not in the 1.5 CRD).
    "pod-template-invalid": (
        lambda: run_manifest(_roles(worker_mutate=lambda t: t["spec"]["containers"][0].pop("name"))),
        lambda: run_manifest(_roles())),
    "args-without-command": (
        lambda: run_manifest(_with_container(command=None, args=["python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B",
                                                                 "--tensor-parallel-size", "2"])),
        lambda: run_manifest(_with_container(command=["python3"], args=["-m", "dynamo.vllm", *TP_ARGS, "2"]))),
    "model-path-contains-framework": (
        lambda: run_manifest(_shell("python3 -m dynamo.vllm --model /models/vllm-qwen3 --tensor-parallel-size 2")),
        lambda: run_manifest(_shell("python3 -m dynamo.vllm --model /models/qwen3 --tensor-parallel-size 2"))),
    "template-source-mode": (lambda: run_manifest(_roles(worker_template=False)),
                             lambda: run_manifest(_roles())),
    "trtllm-worker-no-sshd": (lambda: run_manifest(_trtllm_roles("sleep infinity")),
                              lambda: run_manifest(_trtllm_roles("exec /usr/sbin/sshd -D -p 2222"))),
    "node-count-too-small": (lambda: run_manifest(_dgd(nodes=1)), lambda: run_manifest(_dgd(nodes=2))),
    "compilation-cache-invalid": (
        lambda: run_manifest(b.dgd(components=[b.component(compilationCache={"mountPath": "/cache"})])),
        lambda: run_manifest(b.dgd(components=[b.component(compilationCache={"pvcName": "cache"})]))),
    "backend-framework-mismatch": (lambda: run_manifest(b.dgd(backend="sglang")),
                                   lambda: run_manifest(b.dgd(backend="vllm"))),
    # No spec.backendFramework to settle it: the operator cannot tell the backend.
    "backend-framework-ambiguous": (
        lambda: run_manifest(_shell("python3 -m dynamo.vllm --model m & python3 -m dynamo.sglang --model m", None)),
        lambda: run_manifest(_shell("python3 -m dynamo.vllm --model m --tensor-parallel-size 2", None))),
    # Operators before 1.6 read only separate `--flag value` tokens.
    "vllm-flag-form-ignored": (
        lambda: run_manifest(_dgd(args=[*TP_ARGS[:2], "--tensor-parallel-size=2"]), operator_version="1.5.0"),
        lambda: run_manifest(_dgd(args=[*TP_ARGS, "2"]), operator_version="1.5.0")),
    "gpu-count-invalid": (lambda: run_manifest(_dgd(gpus="1.5")), lambda: run_manifest(_dgd(gpus="1"))),
    "workload-provider-unavailable": (
        lambda: _pinned_grove(grove_kai(config={"grove": {"enabled": False}})),
        lambda: _pinned_grove(grove_kai(config={"grove": {"enabled": True}}))),
    # A volumeMount without a name (the operator refuses to render it).
    "render-error": (lambda: run_manifest(_with_container(volumeMounts=[{"mountPath": "/data"}])),
                     lambda: run_manifest(_with_container(volumeMounts=[{"name": "data", "mountPath": "/data"}]))),
    "conversion-problem": (lambda: run_manifest(_v1alpha1(pvcs=PVCS)), lambda: run_manifest(_v1alpha1())),
    # 2 pods × 1 GPU = 2 GPUs: TP 4 cannot start (error), TP 2 spans both pods.
    "parallelism-mismatch": (lambda: run_manifest(_dgd(tp=4)), lambda: run_manifest(_dgd(tp=2))),
    "no-gpu-request": (lambda: run_manifest(_dgd(gpus=None)), lambda: run_manifest(_dgd(gpus="1"))),
    "topology-vars-unavailable": (lambda: run_manifest(_dgd(origin="1.5.0", args=RANK_ARGS)),
                                  lambda: run_manifest(_dgd(origin="1.6.0", args=RANK_ARGS))),
    # Values the API server, the CRD's CEL rule or the kubelet reject (kubectl_dynamo/k8s_validation.py).
    "name-invalid": (lambda: run_manifest(b.dgd(name="Bad_Name")), lambda: run_manifest(b.dgd(name="bad-name"))),
    "label-key-invalid": (lambda: run_manifest(_metadata(labels={"k" * 64: "v"})),
                          lambda: run_manifest(_metadata(labels={"k" * 63: "v"}))),
    "label-value-invalid": (lambda: run_manifest(_metadata(labels={"team": "a b"})),
                            lambda: run_manifest(_metadata(labels={"team": "a-b"}))),
    "annotation-value-not-string": (lambda: run_manifest(b.dgd(annotations={"nvidia.com/enable-grove": False})),
                                    lambda: run_manifest(b.dgd(annotations={"nvidia.com/enable-grove": "false"}))),
    "component-duplicate": (lambda: run_manifest(b.dgd(components=[b.component("decode"), b.component("Decode")])),
                            lambda: run_manifest(b.dgd(components=[b.component("decode"), b.component("decode2")]))),
    "image-invalid": (lambda: run_manifest(_with_container(image="runtime 1.0.0")),
                      lambda: run_manifest(_with_container(image="runtime:1.0.0"))),
    "node-selector-invalid": (lambda: run_manifest(_pod_spec(nodeSelector={"zone": "a b"})),
                              lambda: run_manifest(_pod_spec(nodeSelector={"zone": "a-b"}))),
    # The webhook needs runtimeVersionOverride when the main image tag is not a semantic version
    # (upstream's own examples: my-registry/sglang-runtime:my-tag).
    "admission-refused": (lambda: run_manifest(_with_container(image="my-registry/sglang-runtime:my-tag")),
                          lambda: run_manifest(_with_container(image="my-registry/sglang-runtime:1.0.1"))),
    "admission-needs-cluster": (lambda: run_manifest(_kv_policy(clusterTopologyName="rack-topology")),
                                lambda: run_manifest(_kv_policy(labelKey="topology.kubernetes.io/zone"))),
}


# -- dgd scope: doctor on a hand-made snapshot of one 2-node vLLM DGD on Grove + KAI -------------
# kube-scheduler's FailedScheduling messages (kubernetes/kubernetes pkg/scheduler/framework/types.go
# "0/%v nodes are available", plugins/noderesources/fit.go "Insufficient %v",
# plugins/nodeaffinity/node_affinity.go "node(s) didn't match Pod's node affinity/selector").
NO_GPU = ("0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: "
          "4 No preemption victims found for incoming pod.")
# KAI's words for the same (kai-scheduler/KAI-Scheduler@v0.17.0 pkg/scheduler/api/common_info/pod_errors.go
# TasksFitErrors.Error(); recorded from the real KAI in tests/data/recorded/grove-gang-pending).
KAI_NO_GPU = "no nodes with enough resources were found: 4 node(s) didn't have enough resources: GPUs."
NO_MATCH = ("0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes "
            "are available: 4 Preemption is not helpful for scheduling.")
RAY = "nvidia.com/vllm-distributed-executor-backend"


def doctor_on(mutate=None, *, doc: Optional[dict] = None, nodes: int = 2, lws: bool = False, **snap) -> Ran:
    """doctor over the DGD ``doc`` (default: 2-node vLLM) with its group's pods Running and Ready,
    after ``mutate(pods)`` changed one fact."""
    return run_dgd(_snapshot(mutate, doc=doc, nodes=nodes, lws=lws, **snap))


def _snapshot(mutate=None, *, doc: Optional[dict] = None, nodes: int = 2, lws: bool = False, **snap):
    doc = doc or _dgd(nodes=nodes)
    comp = doc["spec"]["components"][0]
    image = comp["podTemplate"]["spec"]["containers"][0]["image"]
    group = (b.lws_group if lws else b.grove_group)(doc["metadata"]["name"], doc["metadata"]["namespace"],
                                                   comp["name"], comp["multinode"]["nodeCount"], image=image)
    pods = b.all_running(group)
    if mutate:
        mutate(pods)
    snap.setdefault("facts_", b.facts(b.LWS_GROUPS) if lws else None)
    return b.snapshot(doc, pods, **snap)


def _leader(pods: list) -> dict:
    return pods[0]


def _worker(pods: list, i: int = 0) -> dict:
    return pods[1 + i]


def _set(pod: dict, path: str, value) -> None:
    node = pod
    *parents, last = path.split(".")
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
    node[last] = value


def _crash(restarts: int, waiting: Optional[str]):
    def mutate(pods):
        state = {"waiting": {"reason": waiting}} if waiting else {"running": {}}
        _worker(pods)["status"]["containerStatuses"] = [
            {"name": "main", "ready": False, "restartCount": restarts, "state": state}]
    return mutate


def _failed_mount(pod_name: Optional[str] = None):
    def events(pods):
        ev = b.warning_event(_worker(pods), "FailedMount",
                             'MountVolume.SetUp failed for volume "wait-leader-script" : configmap '
                             '"llm-wait-leader-script" not found', count=4)
        if pod_name:
            ev["involvedObject"]["name"] = pod_name
        return [ev]
    snap = _snapshot()
    snap.events = events(snap.pods)
    return run_dgd(snap)


def _worker_index(worker: int, index: str):
    return lambda pods: _worker(pods, worker)["metadata"]["labels"].update(
        {"leaderworkerset.sigs.k8s.io/worker-index": index})


def _pod_index(worker: int, index: str):
    return lambda pods: _worker(pods, worker)["metadata"]["labels"].update({"grove.io/podclique-pod-index": index})


# Scheduler words, as the real schedulers wrote them in the recorded states (tests/data/recorded/:
# lws-cordoned for kube-scheduler's, lws-volcano-gang-held for Volcano's).
CORDONED = ("0/4 nodes are available: 4 node(s) were unschedulable. preemption: 0/4 nodes are available: "
            "4 Preemption is not helpful for scheduling.")
VOLCANO_POD = "pod group is not ready, 3 Pending, 3 minAvailable; Pending: 1 Unschedulable, 2 Schedulable"
VOLCANO_PG = f"1/3 tasks in gang unschedulable: {VOLCANO_POD}"
PG = "llm-decode-0-0-5586b75c74"  # LWS names the PodGroup <lws>-<group>-<revision> [L volcano_provider.go]


def _volcano_gang(pods: list, scheduler: str) -> list:
    """Every pod of the LWS group annotated with its Volcano PodGroup, on ``scheduler``."""
    return [b.in_podgroup(b.on_scheduler(p, scheduler), "volcano", PG) for p in pods]


def _gang_not_enforced(scheduler: str) -> Ran:
    """The operator's LWS rendering: a Volcano PodGroup, pods on ``scheduler``, one worker waits."""
    def mutate(pods):
        _volcano_gang(pods, scheduler)
        b.unschedulable(_worker(pods), NO_MATCH)
    return doctor_on(mutate, lws=True, nodes=3,
                     volcano_podgroups=[b.volcano_podgroup("ns", PG, phase="Running", min_member=3)])


def _gang_held(phase: str) -> Ran:
    """Volcano's verdict on a 3-pod gang it cannot place at once (phase Inqueue), or on one it placed
    (phase Running: the old Unschedulable condition stays)."""
    def mutate(pods):
        _volcano_gang(pods, "volcano")
        if phase != "Running":
            for p in pods:
                b.unschedulable(p, VOLCANO_POD)
    return doctor_on(mutate, lws=True, nodes=3,
                     volcano_podgroups=[b.volcano_podgroup("ns", PG, phase=phase, min_member=3, message=VOLCANO_PG)])


def _idle_scheduler(age: int) -> Ran:
    """Pods on volcano with no PodScheduled condition and no event, ``age`` seconds after creation."""
    def mutate(pods):
        for p in pods:
            b.created(b.on_scheduler(p, "volcano"), age)
            p["spec"].pop("nodeName", None)
            p["status"] = {"phase": "Pending"}
    return doctor_on(mutate, lws=True)


def _lws_nodes(*names: str, ready: str = "True") -> Facts:
    return b.facts(b.LWS_GROUPS, nodes=[b.node(n, ready=ready) for n in names])


def _create_failed(event_on: str) -> Ran:
    """The leader StatefulSet of the DGD's LWS could not create its pod (a failing webhook): the
    StatefulSet controller's FailedCreate event, on that StatefulSet or on another one."""
    doc = _dgd(nodes=2)
    objs = b.lws_lineage(doc)
    sts = objs["leader_sts"]["metadata"]["name"]
    event = {"type": "Warning", "reason": "FailedCreate", "count": 3, "source": {"component": "statefulset-controller"},
             "message": f"create Pod {sts}-0 in StatefulSet {sts} failed error: Internal error occurred: failed calling "
                        'webhook "pods.example.com": failed to call webhook: connection refused',
             "involvedObject": {"kind": "StatefulSet", "namespace": "ns", "name": sts if event_on == "own" else "other-0"}}
    return doctor_on(lambda pods: pods.clear(), doc=doc, lws=True, events=[event],
                     componentdeployments=[objs["dcd"]], leaderworkersets=[objs["lws"]],
                     statefulsets=[objs["leader_sts"]])


def _generation(observed: int) -> Ran:
    doc = _dgd(nodes=2)
    doc["metadata"]["generation"] = 2
    doc["status"] = {"observedGeneration": observed, "state": "successful"}
    return doctor_on(doc=doc)



# -- the DGD over time: two worker generations (hand-made, as the operator labels them: ai-dynamo/dynamo
# @2a6da14c internal/dynamo/graph.go GetDCDResourceName / KubeLabelDynamoWorkerHash, the DGD's
# nvidia.com/current-worker-hash-v2 annotation; LWS status fields as lws@v0.9.0 reports them).
HASH_LABEL = "nvidia.com/dynamo-worker-hash"
OLD, NEW = "0ld0ld00", "4e4e4e4e"


def _gen_labels(doc: dict, h: str) -> dict:
    comp = doc["spec"]["components"][0]["name"]
    return {"nvidia.com/dynamo-graph-deployment-name": doc["metadata"]["name"], "nvidia.com/dynamo-component": comp,
            HASH_LABEL: h}


def _owned_by_gen(doc: dict, kind: str, name: str, h: str, **status) -> dict:
    meta = {"name": name, "namespace": doc["metadata"]["namespace"], "labels": _gen_labels(doc, h),
            "creationTimestamp": "2026-12-01T08:00:00Z" if h == OLD else "2026-12-01T08:30:00Z"}
    spec: dict = {"replicas": 1}
    if kind == "LeaderWorkerSet":
        spec["rolloutStrategy"] = {"type": "RollingUpdate", "rollingUpdateConfiguration": {"maxUnavailable": 0}}
    return {"kind": kind, "metadata": meta, "spec": spec, "status": status}


def _generations(*, annotate: bool = True, old_pods: bool = True, old_objects: bool = True, ready: int = 1,
                 phase: Optional[str] = None, started: str = "2026-12-01T08:30:00Z", condition=None) -> Ran:
    """A multinode DGD on LWS whose worker hash moved from OLD to NEW: the new generation's group is
    Running; the old DCD and LeaderWorkerSet (and, with ``old_pods``, their pods) are still there."""
    doc = _dgd()
    ns, name, comp = doc["metadata"]["namespace"], doc["metadata"]["name"], doc["spec"]["components"][0]["name"]
    if annotate:
        doc["metadata"]["annotations"]["nvidia.com/current-worker-hash-v2"] = NEW
    doc["metadata"]["generation"] = 2
    doc["status"] = {"observedGeneration": 2, "conditions": [condition or {"type": "Ready", "status": "True",
                                                                         "reason": "all_resources_are_ready"}]}
    if phase:
        doc["status"]["rollingUpdate"] = {"phase": phase, "startTime": started}
    gens = [NEW] + ([OLD] if old_objects else [])
    pods = []
    for h in gens if old_pods else [NEW]:
        for p in b.all_running(b.lws_group(name, ns, comp, 2)):
            p["metadata"]["labels"][HASH_LABEL] = h
            if h == OLD:
                p["metadata"]["name"] += "-old"
            pods.append(p)
    base = f"{name}-{comp.lower()}"
    dcds = [_owned_by_gen(doc, "DynamoComponentDeployment", f"{base}-{h}", h) for h in gens]
    lwss = [_owned_by_gen(doc, "LeaderWorkerSet", f"{base}-{h}-0", h, replicas=1, updatedReplicas=1,
                          readyReplicas=ready if h == NEW else 0,
                          conditions=[{"type": "Available", "status": "True" if ready else "False"}])
            for h in gens]
    return run_dgd(b.snapshot(doc, pods, facts_=b.facts(b.LWS_GROUPS), componentdeployments=dcds,
                              leaderworkersets=lwss))


# -- Kubernetes discovery (hand-made as the operator renders them at ai-dynamo/dynamo@2a6da14c:
# internal/discovery/resource.go for the ServiceAccount, Role and RoleBinding; internal/dynamo/graph.go
# GenerateComponentService and the pod labels it selects; the DynamoWorkerMetadata as the runtime writes it,
# lib/runtime/src/discovery/kube/crd.rs build_cr: named after the pod, owned by it; a stand-in here, since only
# a running runtime writes one).
DISCOVERY_SA = "llm-k8s-service-discovery"
DISCOVERY_RULES = [
    {"apiGroups": [""], "resources": ["endpoints", "pods"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["nvidia.com"], "resources": ["dynamoworkermetadatas"],
     "verbs": ["create", "get", "list", "watch", "update", "patch", "delete"]}]
DISCOVERY_POD_LABELS = {"nvidia.com/dynamo-component-type": "worker", "nvidia.com/dynamo-namespace": "ns-llm",
                        "nvidia.com/dynamo-discovery-backend": "kubernetes", "nvidia.com/dynamo-discovery-enabled": "true"}


def _discovery(*, binding: bool = True, account: str = DISCOVERY_SA, unlabel: Optional[str] = None,
               registered_uid: Optional[str] = None, annotations: Optional[dict] = None,
               subjects: Tuple[str, ...] = (DISCOVERY_SA,)) -> Ran:
    """A 2-node vLLM DGD on LWS with the operator's discovery objects; one fact changed by the arguments:
    ``binding`` False deletes the RoleBinding, ``account`` runs the pods as another ServiceAccount, ``unlabel``
    removes one label from the leader pod, ``registered_uid`` adds the leader's DynamoWorkerMetadata owned by
    that pod UID (the live leader's UID is ``uid-leader``)."""
    doc = _dgd(nodes=2, annotations=annotations)
    ns, name = doc["metadata"]["namespace"], doc["metadata"]["name"]

    def mutate(pods):
        for p in pods:
            p["metadata"]["labels"].update(DISCOVERY_POD_LABELS)
            p["metadata"]["uid"] = f"uid-{p['metadata']['labels']['role']}"
            p["spec"]["serviceAccountName"] = account
            b.created(p, 600)
        if unlabel:
            del _leader(pods)["metadata"]["labels"][unlabel]

    meta = {"namespace": ns, "labels": {"app.kubernetes.io/managed-by": "dynamo-operator",
                                        "app.kubernetes.io/component": "rbac", "app.kubernetes.io/name": DISCOVERY_SA}}
    accounts = [{"metadata": dict(meta, name=a)} for a in sorted({DISCOVERY_SA, account})]
    roles = [{"metadata": dict(meta, name=f"{DISCOVERY_SA}-role"), "rules": DISCOVERY_RULES}]
    bindings = [{"metadata": dict(meta, name=f"{DISCOVERY_SA}-binding"),
                 "subjects": [{"kind": "ServiceAccount", "name": a, "namespace": ns} for a in subjects],
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": f"{DISCOVERY_SA}-role"}}]
    service = {"metadata": {"name": "llm-decode", "namespace": ns, "labels": {
        "nvidia.com/dynamo-discovery-backend": "kubernetes", "nvidia.com/dynamo-discovery-enabled": "true"},
        "ownerReferences": [{"kind": "DynamoGraphDeployment", "name": name, "uid": "uid-dgd"}]},
        "spec": {"selector": {"nvidia.com/dynamo-component-type": "worker", "nvidia.com/dynamo-namespace": "ns-llm",
                              "nvidia.com/dynamo-component": "decode", "role": "leader"}}}
    pods = _snapshot(mutate, lws=True).pods
    registrations = [] if registered_uid is None else [{"metadata": {
        "name": pods[0]["metadata"]["name"], "namespace": ns, "uid": "uid-dwm", "creationTimestamp": "2026-12-01T08:40:00Z",
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pods[0]["metadata"]["name"],
                             "uid": registered_uid, "controller": True, "blockOwnerDeletion": False}]},
        "spec": {"data": {}}}]
    return run_dgd(b.snapshot(doc, pods, facts_=b.facts(b.LWS_GROUPS), services=b.services_for(pods) + [service],
                              serviceaccounts=accounts, roles=roles, rolebindings=bindings if binding else [],
                              workermetadatas=registrations))


DGD: Dict[str, Tuple[Case, Case]] = {
    # The operator's RoleBinding deleted; the near-miss has it.
    "discovery-rbac-missing": (lambda: _discovery(binding=False), lambda: _discovery()),
    # The leader without nvidia.com/dynamo-namespace, which its discovery Service selects; the near-miss keeps it.
    "discovery-unselected": (lambda: _discovery(unlabel="nvidia.com/dynamo-namespace"), lambda: _discovery()),
    # The leader's registration owned by an earlier pod of its name; the near-miss by the live pod.
    "worker-registration-stale": (lambda: _discovery(registered_uid="uid-earlier"),
                                  lambda: _discovery(registered_uid="uid-leader")),
    # Stuck halfway: the old generation's pods still run beside the new one (multinode: never deleted);
    # the near-miss has only the new generation.
    "rollout-stalled": (lambda: _generations(), lambda: _generations(old_objects=False)),
    # Left behind: the old DCD and LeaderWorkerSet at zero pods; the near-miss deleted them.
    "old-worker-generation": (lambda: _generations(old_pods=False), lambda: _generations(old_objects=False)),
    "worker-hash-missing": (lambda: _generations(annotate=False, old_objects=False),
                            lambda: _generations(old_objects=False)),
    # maxUnavailable 0 while the old group is gone and the new one not ready; the near-miss has it ready.
    "max-unavailable-exceeded": (lambda: _generations(ready=0), lambda: _generations()),
    "dgd-not-ready": (lambda: _generations(old_objects=False, condition={
        "type": "Ready", "status": "False", "reason": "pods_not_ready", "message": "Resources not ready"}),
        lambda: _generations(old_objects=False)),
    "group-incomplete": (lambda: doctor_on(lambda pods: pods.pop()), lambda: doctor_on()),
    "insufficient-gpus": (lambda: doctor_on(lambda pods: b.unschedulable(_worker(pods), NO_GPU)),
                          lambda: doctor_on()),
    # The near-miss waits for GPUs: insufficient-gpus says that, not gang-partial.
    "gang-partial": (lambda: doctor_on(lambda pods: b.unschedulable(_worker(pods), NO_MATCH)),
                     lambda: doctor_on(lambda pods: b.unschedulable(_worker(pods), NO_GPU))),
    "scheduling-gated": (lambda: doctor_on(lambda pods: [b.gated(p) for p in pods]), lambda: doctor_on()),
    "rank-duplicate": (lambda: doctor_on(_worker_index(1, "1"), nodes=3, lws=True),
                       lambda: doctor_on(nodes=3, lws=True)),
    "rank-gap": (lambda: doctor_on(_pod_index(1, "2"), nodes=3), lambda: doctor_on(nodes=3)),
    "leader-not-ready": (lambda: doctor_on(lambda pods: b.running(_leader(pods), ready=False)),
                         lambda: doctor_on()),
    "crash-loop": (lambda: doctor_on(_crash(4, "CrashLoopBackOff"), lws=True),
                   lambda: doctor_on(_crash(2, None), lws=True)),
    "worker-probes": (
        lambda: doctor_on(lambda pods: _set(_worker(pods), "spec.containers.0.livenessProbe",
                                            {"httpGet": {"path": "/live", "port": "system"}})),
        lambda: doctor_on()),
    "ssh-secret-missing": (
        lambda: doctor_on(doc=_dgd("trtllm"), secrets={("ns", b.MPI_SECRET): ["private.key"]}),
        lambda: doctor_on(doc=_dgd("trtllm"), secrets={("ns", b.MPI_SECRET): list(b.MPI_KEYS)})),
    "wait-leader-configmap-missing": (lambda: doctor_on(configmaps=[]), lambda: doctor_on()),
    # a pull secret the worker names, absent (None) or present (its key names) when doctor reads it by name
    "reference-missing": (
        lambda: doctor_on(lambda pods: _set(_worker(pods), "spec.imagePullSecrets", [{"name": "regcred"}]),
                          secrets={("ns", "regcred"): None}),
        lambda: doctor_on(lambda pods: _set(_worker(pods), "spec.imagePullSecrets", [{"name": "regcred"}]),
                          secrets={("ns", "regcred"): [".dockerconfigjson"]})),
    "image-mismatch": (
        lambda: doctor_on(lambda pods: _set(_worker(pods), "spec.containers.0.image", b.IMAGE[:-1] + "1")),
        lambda: doctor_on()),
    "shm-too-small": (
        lambda: doctor_on(lambda pods: _set(_worker(pods), "spec.volumes.0.emptyDir.sizeLimit", "1Gi")),
        lambda: doctor_on()),
    "leader-dns-missing": (lambda: doctor_on(services=[]), lambda: doctor_on()),
    # Without publishNotReadyAddresses the not-Ready leader has no DNS record for its workers.
    "headless-service-invalid": (
        lambda: doctor_on(services=[b.headless_service("ns", "llm-decode-0", publish_not_ready=False)], lws=True),
        lambda: doctor_on(services=[b.headless_service("ns", "llm-decode-0")], lws=True)),
    # The near-miss event is about a pod of another DGD.
    "failed-mount": (lambda: _failed_mount(), lambda: _failed_mount("other-decode-0")),
    # Pinned to the component provider (LWS) while the pods still come from Grove.
    "workload-provider-mismatch": (
        lambda: doctor_on(doc=_dgd(annotations={"nvidia.com/workload-provider": "component"}),
                          facts_=b.facts({**b.GROVE_GROUPS, **b.LWS_GROUPS})),
        lambda: doctor_on(doc=_dgd(annotations={"nvidia.com/workload-provider": "grove"}),
                          facts_=b.facts({**b.GROVE_GROUPS, **b.LWS_GROUPS}))),
    # The operator renders LWS pods without schedulerName: default-scheduler ignores the PodGroup.
    "gang-not-enforced": (lambda: _gang_not_enforced("default-scheduler"), lambda: _gang_not_enforced("volcano")),
    # A Running PodGroup keeps its last Unschedulable condition: only Pending/Inqueue is a held gang.
    "gang-held": (lambda: _gang_held("Inqueue"), lambda: _gang_held("Running")),
    # The near-miss: Pending pods no scheduler has written on yet (no reason to quote).
    "group-pending": (lambda: doctor_on(lambda pods: [b.unschedulable(p, CORDONED) for p in pods]),
                      lambda: doctor_on(lambda pods: [p["status"].update(phase="Pending", conditions=[]) or
                                                      p["spec"].pop("nodeName") for p in pods])),
    "scheduler-not-running": (lambda: _idle_scheduler(22), lambda: _idle_scheduler(5)),
    # gpu-node-1 (the worker's node) was deleted; the near-miss has it.
    "pod-on-unavailable-node": (lambda: doctor_on(lws=True, facts_=_lws_nodes("gpu-node-0", "gpu-node-2")),
                            lambda: doctor_on(lws=True, facts_=_lws_nodes("gpu-node-0", "gpu-node-1"))),
    "group-on-one-node": (lambda: doctor_on(lambda pods: [b.running(p, node="gpu-node-2") for p in pods]),
                          lambda: doctor_on()),
    # The near-miss event is about another DGD's StatefulSet.
    "controller-create-failed": (lambda: _create_failed("own"), lambda: _create_failed("other")),
    "controller-not-reconciling": (lambda: _generation(1), lambda: _generation(2)),
}


# -- exec scope: doctor --exec with a stand-in exec result --------------------------------------
NODE_IDS = ["3f6c0e2a9b8d7c6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a", "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a7b8c9d0e1f2"]


def _nodes_under(heading: str, ids: List[str]) -> str:
    return f"{heading}:\n" + ("\n".join(f" 1 node_{i}" for i in ids) if ids else f" (no {heading.lower()} nodes)")


def ray_status(active: int, idle: int = 0, *, legacy: bool = False) -> str:
    """``ray status`` on a Ray head (ray-project/ray python/ray/autoscaler/_private/util.py
    ``format_info_string``): joined nodes one line per node type under "Active:" and "Idle:", or
    under "Healthy:" in older releases; a cluster started without an autoscaler config types each
    node ``node_<id>`` (``format_readonly_node_type``)."""
    ids = NODE_IDS[:active + idle]
    nodes = (_nodes_under("Healthy", ids) if legacy
             else _nodes_under("Active", ids[:active]) + "\n" + _nodes_under("Idle", ids[active:]))
    return ("======== Autoscaler status: 2026-12-01 08:00:00.000000 ========\nNode status\n"
            "---------------------------------------------------------------\n"
            f"{nodes}\nPending:\n (no pending nodes)\nRecent failures:\n (no failures)\n\n"
            "Resources\n---------------------------------------------------------------\n"
            f"Usage:\n 0.0/{8.0 * len(ids)} CPU\n 0.0/{1.0 * len(ids)} GPU\n\nDemands:\n (no resource demands)\n")


def test_ray_status_counts_every_joined_node():
    assert [execs.count_ray_nodes(ray_status(a, i)) for a, i in ((1, 0), (2, 0), (1, 1), (0, 2))] == [1, 2, 2, 2]
    assert execs.count_ray_nodes(ray_status(2, legacy=True)) == 2
    assert execs.count_ray_nodes("ray: command not found") == 0


REFUSED = ("Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
           "ConnectionRefusedError: [Errno 111] Connection refused\n")

EXEC: Dict[str, Tuple[Case, Case]] = {
    "sshd-not-listening": (lambda: run_exec(_snapshot(doc=_dgd("trtllm")), {"python3": (1, REFUSED)}),
                           lambda: run_exec(_snapshot(doc=_dgd("trtllm")), {"python3": (0, "")})),
    # The near-miss worker has joined the head but runs nothing yet ("Idle").
    "ray-incomplete": (lambda: run_exec(_snapshot(doc=_dgd(annotations={RAY: "ray"})), {"ray": (0, ray_status(1))}),
                       lambda: run_exec(_snapshot(doc=_dgd(annotations={RAY: "ray"})),
                                        {"ray": (0, ray_status(1, idle=1))})),
}


# -- the other scopes of codes reported at several ----------------------------------------------
def _queue_annotated(queues) -> Ran:
    doc = _dgd(annotations={"nvidia.com/kai-scheduler-queue": "team-a"})
    return doctor_on(doc=doc, facts_=b.facts(kai_queues=queues))


MORE_SCOPES: Dict[Tuple[str, str], Tuple[Case, Case]] = {
    ("no-multinode-orchestrator", "manifest"): (
        lambda: run_manifest(b.dgd(), facts=installed("kai", operator="1.6.0")),
        lambda: run_manifest(b.dgd(), facts=grove_kai())),
    ("kai-queue-missing", "manifest"): (
        lambda: run_manifest(b.dgd(), facts=grove_kai(kai_queues=world.kai_queues(with_dynamo=False))),
        lambda: run_manifest(b.dgd(), facts=grove_kai())),
    ("scheduler-integration-conflict", "manifest"): (
        lambda: run_manifest(b.dgd(), facts=installed("grove", "kai", "volcano", operator="1.6.0",
                                                      config={"volcanoScheduler": {"enabled": True}})),
        lambda: run_manifest(b.dgd(), facts=installed("grove", "kai", "volcano", operator="1.6.0"))),
    ("no-multinode-orchestrator", "dgd"): (
        lambda: doctor_on(facts_=b.facts({"scheduling.run.ai": ["v2"], "nvidia.com": ["v1beta1"]})),
        lambda: doctor_on()),
    # The DGD's own queue (the cluster check looks at the default queue only).
    ("kai-queue-missing", "dgd"): (lambda: _queue_annotated(("dynamo",)),
                                   lambda: _queue_annotated(("dynamo", "team-a"))),
    ("parallelism-mismatch", "dgd"): (lambda: doctor_on(doc=_dgd(tp=4)), lambda: doctor_on(doc=_dgd(tp=2))),
    # recorded with the real LWS and Volcano: the PodGroup in Volcano's default queue; then, after the
    # LeaderWorkerSet was annotated and the group recreated, in the annotated queue
    ("queue-annotation-ignored", "dgd"): (lambda: _recorded("lws-direct-volcano-queue-ignored"),
                                          lambda: _recorded("lws-direct-volcano-queue-fixed")),
    ("no-gpu-request", "dgd"): (lambda: doctor_on(doc=_dgd(gpus=None)), lambda: doctor_on(doc=_dgd(gpus="1"))),
    ("topology-vars-unavailable", "dgd"): (lambda: doctor_on(doc=_dgd(origin="1.5.0", args=RANK_ARGS)),
                                           lambda: doctor_on(doc=_dgd(origin="1.6.0", args=RANK_ARGS))),
}

def _recorded(state: str) -> Ran:
    """doctor over a state the real components produced (tests/data/recorded/STATE, its PROVENANCE.md)."""
    return run_dgd(take(RecordedCluster(str(RECORDED / state)), None, compact=True))


def _scaled_to_zero() -> Ran:
    doc = _dgd()
    doc["spec"]["components"][0]["replicas"] = 0
    return doctor_on(lambda pods: pods.clear(), doc=doc)


def _grove_alpha6() -> Ran:
    doc = _dgd()
    pods = b.all_running(b.grove_group(pod_index_label=False))
    return run_dgd(b.snapshot(doc, pods))


def _replaced(make_inactive):
    """A worker made inactive beside the replacement Grove created for its freed index (Grove counts
    only active pods as holding an index: ai-dynamo/grove@v0.1.0-alpha.11 operator/internal/index/tracker.go)."""
    def replace(pods):
        old = _worker(pods)
        new = copy.deepcopy(old)
        new["metadata"]["name"] = old["metadata"]["name"][:-5] + "fghij"
        make_inactive(old)
        pods.append(new)
    return replace


def _terminating(pod: dict) -> None:
    pod["metadata"]["deletionTimestamp"] = "2026-12-01T08:00:00Z"


def _evicted(pod: dict) -> None:
    pod["status"] = {"phase": "Failed", "reason": "Evicted",
                     "message": "The node was low on resource: memory. Threshold quantity: 100Mi, available: 92Mi."}


def _worker_replaced_while_terminating() -> Ran:
    return doctor_on(_replaced(_terminating))


def _worker_replaced_after_eviction() -> Ran:
    return doctor_on(_replaced(_evicted))


def _dynamo_142_with_grove_alpha12() -> Ran:
    """dynamo#14278: operator 1.4.2 with Grove alpha.12 breaks scale-from-zero (KAI new enough for the other pair)."""
    return run_cluster(installed("grove", "kai", operator="1.4.2", versions={"grove": "v0.1.0-alpha.12", "kai": "v0.17.0"}))


def _dynamo_143_with_grove_alpha12() -> Ran:
    """The next operator release with the same Grove: past the broken one."""
    return run_cluster(installed("grove", "kai", operator="1.4.3", versions={"grove": "v0.1.0-alpha.12", "kai": "v0.17.0"}))


def _managed_rollout_for_30_minutes() -> Ran:
    """The operator's rolling update (status.rollingUpdate) InProgress since half an hour."""
    return _generations(phase="InProgress", started="2026-12-01T08:30:00Z")


def _managed_rollout_for_5_minutes() -> Ran:
    """The same rolling update, started 5 minutes before the snapshot: still within the deadline."""
    return _generations(phase="InProgress", started="2026-12-01T08:55:00Z")


def _rolling_update_halfway() -> Ran:
    """A new image rolls out: the old worker terminates beside its replacement."""
    def roll(pods):
        for p in pods:
            p["spec"]["containers"][0]["image"] = b.IMAGE[:-1] + "1"
        _replaced(_terminating)(pods)
        _worker(pods)["spec"]["containers"][0]["image"] = b.IMAGE
    return doctor_on(roll)


def _leader_terminating() -> Ran:
    """A deleted leader turns not Ready while it shuts down."""
    def delete(pods):
        b.running(_leader(pods), ready=False)
        _terminating(_leader(pods))
    return doctor_on(delete)


def _explicit_backend_settles_it() -> Ran:
    """Two backends in the command, but spec.backendFramework names one: the operator uses it."""
    return run_manifest(_shell("python3 -m dynamo.vllm --model m & python3 -m dynamo.sglang --model m", "vllm"))


def _nodes_unreadable() -> Ran:
    return run_cluster(_deny(grove_kai(), "nodes", "nodes"))


def _groups_unreadable(facts: Facts) -> Ran:
    facts.groups = None
    facts.unknown["API groups"] = "the server was unable to return a response in the time allotted"
    return run_cluster(facts)


def _groups_unreadable_without_operator() -> Ran:
    return _groups_unreadable(installed("grove", "kai"))


def _groups_unreadable_with_operator() -> Ran:
    return _groups_unreadable(grove_kai())


# More near-misses that must stay silent: plausible healthy inputs a check once misread.
def _own_service_account_unbound() -> Ran:
    """The pods run as the user's ServiceAccount (podTemplate serviceAccountName), which no RoleBinding names."""
    return _discovery(account="team-sa")


def _own_service_account_bound() -> Ran:
    """The same, with the operator's RoleBinding also naming team-sa."""
    return _discovery(account="team-sa", subjects=(DISCOVERY_SA, "team-sa"))


def _etcd_backend_without_binding() -> Ran:
    """The DGD annotated for etcd discovery: no Role or RoleBinding is needed (the operator makes none)."""
    return _discovery(binding=False, annotations={"nvidia.com/dynamo-discovery-backend": "etcd"})


MORE_SILENT: Dict[Tuple[str, str], List[Case]] = {
    ("discovery-rbac-missing", "dgd"): [_own_service_account_bound, _etcd_backend_without_binding],
    ("known-broken-versions", "cluster"): [_dynamo_143_with_grove_alpha12],
    ("rollout-stalled", "dgd"): [_managed_rollout_for_5_minutes],
    ("group-incomplete", "dgd"): [_scaled_to_zero],  # replicas 0: no group is wanted
    # Grove before alpha.8 labels no pod index, so worker ranks are unknown, not missing.
    ("rank-gap", "dgd"): [_grove_alpha6],
    ("rank-duplicate", "dgd"): [_worker_replaced_while_terminating, _worker_replaced_after_eviction],
    ("image-mismatch", "dgd"): [_rolling_update_halfway],
    ("leader-not-ready", "dgd"): [_leader_terminating],
    # Unreadable nodes are permission-denied's to report, not a cluster without GPUs.
    ("no-gpu-nodes", "cluster"): [_nodes_unreadable],
    ("backend-framework-ambiguous", "manifest"): [_explicit_backend_settles_it],
    # Unread API groups are unknown, not absent.
    ("no-multinode-orchestrator", "cluster"): [_groups_unreadable_without_operator],
    ("operator-gate-error", "cluster"): [_groups_unreadable_with_operator],
}

def _second_replica_missing() -> Ran:
    doc = _dgd()
    doc["spec"]["components"][0]["replicas"] = 2
    return doctor_on(doc=doc)  # only group 0's pods exist


def _wait_for_leader_crashing() -> Ran:
    """vLLM mp workers wait for the leader in init container wait-for-leader-mp
    (ai-dynamo/dynamo@2a6da14c deploy/operator/internal/dynamo/backend_vllm.go)."""
    def crash(pods):
        worker = _worker(pods)
        worker["status"] = {"phase": "Pending", "initContainerStatuses": [
            {"name": "wait-for-leader-mp", "ready": False, "restartCount": 5,
             "state": {"waiting": {"reason": "CrashLoopBackOff"}}}],
            "containerStatuses": [{"name": "main", "ready": False, "restartCount": 0,
                                   "state": {"waiting": {"reason": "PodInitializing"}}}]}
    return doctor_on(crash)


def _kai_gang_waits_for_gpus() -> Ran:
    """KAI holds the whole gang back for GPUs and says so in its own words."""
    return doctor_on(lambda pods: [b.unschedulable(p, KAI_NO_GPU) for p in pods])


# More inputs that must fire.
MORE_FIRES: Dict[Tuple[str, str], List[Case]] = {
    ("discovery-rbac-missing", "dgd"): [_own_service_account_unbound],
    ("known-broken-versions", "cluster"): [_dynamo_142_with_grove_alpha12],
    ("rollout-stalled", "dgd"): [_managed_rollout_for_30_minutes],
    ("group-incomplete", "dgd"): [_second_replica_missing],
    ("crash-loop", "dgd"): [_wait_for_leader_crashing],
    ("insufficient-gpus", "dgd"): [_kai_gang_waits_for_gpus],
}

# Scopes a code is catalogued for that no pure path reaches, with the reason.
UNREACHED: Dict[Tuple[str, str], str] = {
    ("permission-denied", "manifest"): "explain.run_live adds it for a live DGD's unreadable context; it reads "
                                       "the DGD and the context from a cluster",
    ("permission-denied", "dgd"): "doctor reports each read the server refused itself (model/views.denied, "
                                  "tests/unit/test_doctor_recorded.py), not through a per-DGD check",
}

TABLES = {"cluster": CLUSTER, "manifest": MANIFEST, "dgd": DGD, "exec": EXEC}
CASES: Dict[str, Tuple[Case, Case]] = {code: pair for table in TABLES.values() for code, pair in table.items()}
SCOPE = {code: scope for scope, table in TABLES.items() for code in table}  # where CASES[code] runs
CASES_AT = {**{(code, SCOPE[code]): pair for code, pair in CASES.items()}, **MORE_SCOPES}

KNOWN_BUGS: dict = {}  # (test, case id) -> mark (a strict xfail showing a bug outside the checks)


# -- the meta-tests ------------------------------------------------------------------------------
def test_every_catalogued_code_has_a_case():
    assert set(CASES) == set(CATALOGUE)
    assert len(CASES) == sum(map(len, TABLES.values())), "a code is in two tables"


def test_every_catalogued_scope_is_covered():
    wanted = {(e.code, s) for e in CATALOGUE.values() for s in e.scopes}
    assert set(CASES_AT) | set(UNREACHED) == wanted
    assert not set(CASES_AT) & set(UNREACHED)
    assert set(MORE_SILENT) | set(MORE_FIRES) <= set(CASES_AT)
    ids = {id_ for kind in ("fires", "silent") for p in _params(kind) for id_ in [p.id]}
    assert {id_ for _, id_ in KNOWN_BUGS} <= ids, "a known bug names no case"


def _params(kind: str) -> list:
    cases = [(code, scope, pair[kind == "silent"], f"{code}@{scope}") for (code, scope), pair in sorted(CASES_AT.items())]
    cases += [(code, scope, case, f"{code}@{scope}-{case.__name__.strip('_')}")
              for (code, scope), more in sorted((MORE_SILENT if kind == "silent" else MORE_FIRES).items())
              for case in more]
    return [pytest.param(code, scope, case, id=id_, marks=[KNOWN_BUGS[(kind, id_)]] if (kind, id_) in KNOWN_BUGS else [])
            for code, scope, case, id_ in cases]


@pytest.mark.parametrize("code, scope, fires", _params("fires"))
def test_fires(code: str, scope: str, fires: Case):
    ran = fires()
    assert ran.scope == scope
    found = ran.of(code)
    assert found, f"{code} did not fire; got {[f['code'] for f in ran.findings]}"
    allowed = entry(code).severities
    assert all(f["severity"] in allowed and f["message"] for f in found), found


@pytest.mark.parametrize("code, scope, silent", _params("silent"))
def test_stays_silent_on_the_near_miss(code: str, scope: str, silent: Case):
    ran = silent()
    assert ran.scope == scope
    assert ran.of(code) == [], ran.of(code)


@pytest.mark.parametrize("backend", ["vllm", "sglang", "trtllm"])
@pytest.mark.parametrize("lws", [False, True], ids=["grove", "lws"])
def test_healthy_hand_made_groups_have_no_findings(backend: str, lws: bool):
    """The base of every dgd near-miss: doctor finds nothing wrong with a healthy group, and ties
    its pods to group and rank by the orchestrators' own labels."""
    secrets = {("ns", b.MPI_SECRET): list(b.MPI_KEYS)}
    facts = installed("lws", "volcano", operator="1.6.0") if lws else grove_kai()
    # Healthy means on a gang scheduler too (else doctor says, at info, that nothing holds the gang).
    scheduler = "volcano" if lws else "kai-scheduler"
    snap = _snapshot(lambda pods: [b.on_scheduler(p, scheduler) for p in pods], doc=_dgd(backend, nodes=3), lws=lws,
                     secrets=secrets, facts_=facts)
    result = diagnosis.diagnose(snap, doctor.build_views(snap))
    assert result["findings"] == []
    assert result["deployments"][0]["components"][0]["groups"] == [{"index": 0, "podsReady": 3, "ranks": [0, 1, 2]}]


@pytest.mark.parametrize("lws", [False, True], ids=["grove", "lws"])
def test_two_replicas_make_two_healthy_groups(lws: bool):
    """Replica r of a multinode component is scaling-group replica r (Grove) or LWS group r."""
    doc = _dgd()
    doc["spec"]["components"][0]["replicas"] = 2
    group = b.lws_group if lws else b.grove_group
    scheduler = "volcano" if lws else "kai-scheduler"  # healthy: on its gang scheduler
    pods = [b.on_scheduler(p, scheduler) for p in b.all_running(group(group=0) + group(group=1))]
    facts = installed("lws", "volcano", operator="1.6.0") if lws else grove_kai()
    snap = b.snapshot(doc, pods, facts_=facts)
    result = diagnosis.diagnose(snap, doctor.build_views(snap))
    assert result["findings"] == []
    assert result["deployments"][0]["components"][0]["groups"] == [
        {"index": i, "podsReady": 2, "ranks": [0, 1]} for i in (0, 1)]
