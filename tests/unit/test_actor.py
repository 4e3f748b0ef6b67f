"""Who should act, who holds the GPUs, one cause once (issue 36), on states the REAL controllers left
(tests/data/recorded, PROVENANCE.md). Expectations are computed from the recorded objects (the nodes'
allocatable, the pods' nodeName and GPU limits, the pods the scheduler left Pending), never from doctor."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Dict, List

import pytest

from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.commands.doctor import run_doctor

RECORDED = Path(__file__).resolve().parent.parent / "data" / "recorded"
DGD = "nvidia.com/dynamo-graph-deployment-name"


def items(state: str, group: str, version: str, plural: str) -> List[dict]:
    path = RECORDED / state / "resources" / (group or "core") / version / f"{plural}.json"
    return json.loads(path.read_text())["items"] if path.exists() else []


_CACHE: Dict[str, dict] = {}


def doctor(state: str) -> dict:
    if state not in _CACHE:
        _CACHE[state] = run_doctor(RecordedCluster(str(RECORDED / state)), all_namespaces=True).data
    return _CACHE[state]


def gpus(pod: dict) -> int:
    return sum(int((c.get("resources") or {}).get("limits", {}).get("nvidia.com/gpu", 0))
               for c in pod["spec"].get("containers") or [])


def expected_holders(state: str, need: int) -> Dict[str, set]:
    """DGD -> nodes: the bound GPU pods on the schedulable nodes big enough for ``need`` whose free GPUs are
    fewer than ``need``, read from the recorded nodes and pods."""
    nodes = {n["metadata"]["name"]: n for n in items(state, "", "v1", "nodes")
             if int(n["status"].get("allocatable", {}).get("nvidia.com/gpu", 0)) >= need
             and not n["spec"].get("unschedulable")}
    used: Dict[str, int] = defaultdict(int)
    pods = [p for p in items(state, "", "v1", "pods") if p["spec"].get("nodeName") in nodes
            and p["status"].get("phase") not in ("Succeeded", "Failed") and gpus(p)]
    for p in pods:
        used[p["spec"]["nodeName"]] += gpus(p)
    full = {n for n, node in nodes.items() if int(node["status"]["allocatable"]["nvidia.com/gpu"]) - used[n] < need}
    out: Dict[str, set] = defaultdict(set)
    for p in pods:
        if p["spec"]["nodeName"] in full:
            out[f"{p['metadata']['namespace']}/{p['metadata']['labels'].get(DGD)}"].add(p["spec"]["nodeName"])
    return out


# (state, code, the pending DGD): insufficient GPUs as the real schedulers reported them
HOLDERS = [("lws-gang-not-enforced", "insufficient-gpus", "vllm-big"),
           ("grove-gang-pending", "insufficient-gpus", "vllm-big"),
           ("grove-gang-pending", "gang-held", "vllm-big"),
           ("lws-volcano-gang-held", "gang-held", "vllm-big-volcano")]


@pytest.mark.parametrize("state, code, dgd", HOLDERS)
def test_gpu_shortage_names_who_holds_the_gpus(state, code, dgd):
    (d,) = [x for x in items(state, "nvidia.com", "v1beta1", "dynamographdeployments") if x["metadata"]["name"] == dgd]
    need = max(gpus({"spec": c["podTemplate"]["spec"]}) for c in d["spec"]["components"] if c.get("multinode"))
    want = expected_holders(state, need)
    assert want, "the recording has holders"
    (f,) = [f for f in doctor(state)["findings"] if f["code"] == code and f["dgd"]["name"] == dgd]
    for holder, nodes in want.items():
        assert f"DGD {holder} (" in f["message"] and all(n in f["message"] for n in nodes), (holder, f["message"])
        # a gang not enforced holds GPUs with its own placed pods: said as such
        said = f["message"].split(f"DGD {holder} (")[1].split(")")[0]
        assert ("its own placed pods" in said) == (holder == f"llm/{dgd}"), said
    # every pod in these recordings has priority 0 (no PriorityClass): preemption cannot free them
    assert "none has a lower priority than the pending pod's (0): preemption cannot free them" in f["message"]
    if state.startswith("grove"):  # every KAI pod is in queue dynamo (the operator's default)
        assert "all are in KAI queue dynamo, the pending pod's own" in f["message"]


def test_one_insufficient_gpus_per_group_names_its_other_pods():
    """grove-gang-pending: KAI left all 5 pods of vllm-big's group Pending for want of GPUs: one finding for the
    group (not five), naming the other four pods."""
    state = "grove-gang-pending"
    pending = sorted(p["metadata"]["name"] for p in items(state, "", "v1", "pods")
                     if p["metadata"].get("labels", {}).get(DGD) == "vllm-big" and not p["spec"].get("nodeName"))
    assert len(pending) == 5
    (f,) = [f for f in doctor(state)["findings"] if f["code"] == "insufficient-gpus"]
    named = [p for p in pending if p == f["object"]["name"] or p in f["message"]]
    assert named == pending and "4 more pods of the group wait the same way" in f["message"]


@pytest.mark.parametrize("state", ["lws-direct-gpu-too-big", "lws-direct-gpus-not-advertised", "lws-direct-gpu-typo"])
def test_no_holders_named_when_no_node_could_take_the_pod(state):
    """A request bigger than every node, GPUs not advertised, a mistyped resource: no pod holds what the pending
    pod needs, so nobody is named as holding it."""
    assert not any("are held by" in f["message"] or "is held by" in f["message"] for f in doctor(state)["findings"])


@pytest.mark.parametrize("state, words", [("lws-direct-anti-affinity", "required podAntiAffinity"),
                                          ("lws-direct-hostport-conflict", "hostPort")])
def test_a_placement_fault_leads_once_with_its_cause(state, words):
    """The fault injected (PROVENANCE.md): 3 groups of 2 pods on 4 nodes, each pod with a required anti-affinity
    against the DGD's pods (or a hostPort). Expected before running doctor: the first error names that field,
    once for every group it leaves waiting (the real scheduler left groups 1 and 2 half placed), and no
    gang-not-enforced error leads ahead of it."""
    waiting = sorted(p["metadata"]["name"] for p in items(state, "", "v1", "pods") if not p["spec"].get("nodeName"))
    assert len(waiting) == 2
    errors = [f for f in doctor(state)["findings"] if f["severity"] == "error"]
    assert [f["code"] for f in errors] == ["gang-partial"]
    assert words in errors[0]["message"] + errors[0]["hint"]
    assert all(p in errors[0]["message"] for p in waiting)


# -- every reference resolved -------------------------------------------------------------------------------

def _without_secret(tmp_path, state: str, secret: str) -> str:
    """A copy of a real recording with one Secret gone, as `kubectl delete secret` leaves it (the pods that
    name it keep running: env is read at container start). Edited, not recorded: no recorded state deletes a
    Secret the pods only read through envFrom (lws-mpi-secret-deleted deletes a mounted one, which
    ssh-secret-missing reports)."""
    import shutil

    dest = tmp_path / state
    shutil.copytree(RECORDED / state, dest)
    path = dest / "resources" / "core" / "v1" / "secrets.json"
    doc = json.loads(path.read_text())
    before = len(doc["items"])
    doc["items"] = [s for s in doc["items"] if s["metadata"]["name"] != secret]
    assert len(doc["items"]) < before
    path.write_text(json.dumps(doc))
    return str(dest)


def test_a_secret_the_pods_read_through_envfrom_that_is_gone_is_named(tmp_path):
    state = "lws-healthy"
    readers = sorted(p["metadata"]["name"] for p in items(state, "", "v1", "pods")
                     if any((e.get("secretRef") or {}).get("name") == "hf-token-secret"
                            for c in p["spec"]["containers"] for e in c.get("envFrom") or []))
    assert readers  # the recorded operator copies the DGD's envFrom to every worker pod
    data = run_doctor(RecordedCluster(_without_secret(tmp_path, state, "hf-token-secret")), all_namespaces=True).data
    found = [f for f in data["findings"] if f["code"] == "reference-missing"]
    assert {f["object"]["name"] for f in found} == {"hf-token-secret"}
    # every pod naming it runs (kwok): it bites at the next restart, a warning
    assert all(f["severity"] == "warning" and "envFrom" in f["message"] for f in found)
    named = " ".join(f["message"] for f in found)
    assert all(p in named or "more" in named for p in readers)


@pytest.mark.parametrize("state", ["lws-healthy", "grove-healthy", "lws-direct-healthy", "lws-mpi-secret-deleted",
                                   "lws-wait-leader-cm-deleted"])
def test_references_that_exist_or_have_their_own_check_are_silent(state):
    """Healthy states name only what exists; the deleted MPI secret and wait-leader ConfigMap are reported by
    ssh-secret-missing and wait-leader-configmap-missing, not a second time."""
    assert [f for f in doctor(state)["findings"] if f["code"] == "reference-missing"] == []


# -- tree -------------------------------------------------------------------------------------------------------

def _tree(state: str, name: str) -> dict:
    from kubectl_dynamo.commands.tree import run_tree

    return run_tree(RecordedCluster(str(RECORDED / state), "llm"), name).data


def test_tree_of_a_dgd_the_operator_made_nothing_for_says_so():
    """grove-queue-missing: the real operator refused to render vllm-q (its KAI queue does not exist) and made
    no workload; tree says the operator made nothing, in the operator's words from the DGD's Ready condition."""
    (dgd,) = [d for d in items("grove-queue-missing", "nvidia.com", "v1beta1", "dynamographdeployments")
              if d["metadata"]["name"] == "vllm-q"]
    (ready,) = [c for c in dgd["status"]["conditions"] if c["type"] == "Ready"]
    tree = _tree("grove-queue-missing", "vllm-q")
    assert tree["children"] == []
    assert "nothing created: the Dynamo operator has not made its workloads" in tree["status"]
    assert ready["message"] in tree["status"]
    # a DGD with children says nothing of the kind
    assert "nothing created" not in _tree("grove-queue-missing", "vllm-mn")["status"]


def test_tree_of_a_dgd_no_operator_reconciled_says_so():
    """lws-direct-*: the DGD was applied with no operator running (PROVENANCE.md): it has no status at all."""
    from kubectl_dynamo.model.lineage import build_tree

    (dgd,) = items("lws-direct-healthy", "nvidia.com", "v1beta1", "dynamographdeployments")
    assert not dgd.get("status")
    tree = build_tree(dgd, [], [], lambda kind, name: None)
    assert tree["status"] == "no status and nothing created: the Dynamo operator has not reconciled it"
    # scaled to zero, nothing is wanted: nothing to say
    zero = json.loads(json.dumps(dgd))
    for c in zero["spec"]["components"]:
        c["replicas"] = 0
    assert build_tree(zero, [], [], lambda kind, name: None)["status"] == ""


def test_tree_shows_why_a_pending_pod_has_no_node():
    """lws-cordoned: every node cordoned; each Pending pod shows kube-scheduler's PodScheduled words."""
    pods = {p["metadata"]["name"]: p for p in items("lws-cordoned", "", "v1", "pods")}

    def walk(node):
        yield node
        for child in node["children"]:
            yield from walk(child)

    shown = {n["name"]: n["status"] for n in walk(_tree("lws-cordoned", "vllm-mn")) if n["kind"] == "Pod"}
    pending = [n for n in shown if not pods[n]["spec"].get("nodeName")]
    assert pending
    for name in pending:
        (cond,) = [c for c in pods[name]["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert shown[name] == f"Pending, not ready: {cond['reason']}: {cond['message']}"
    assert all(s == "Running, ready" for n, s in shown.items() if n not in pending)


# -- who did not act ------------------------------------------------------------------------------------------

def test_an_operator_reconcile_error_that_is_no_admission_refusal_is_silent():
    """lws-rollout-single-node: the real operator's ReconcileError Warnings there are write conflicts
    ("Operation cannot be fulfilled ... the object has been modified"), retried at once: nothing to blame."""
    for step in ("01", "02", "03"):
        state = f"lws-rollout-single-node/{step}"
        said = [e for e in items(state, "", "v1", "events") if e["reason"] == "ReconcileError"]
        data = run_doctor(RecordedCluster(str(RECORDED / state)), all_namespaces=True).data
        if said:
            assert not [f for f in data["findings"] if "ReconcileError" in f["message"]]


def _operator_refused_by_lws(tmp_path) -> str:
    """lws-controller-stopped (the real operator, LWS stopped by SIGSTOP) plus what its recording lacks:
    LWS v0.9.0's two webhook configurations as lws-direct-controller-stopped recorded them (that recording
    predates none of the kinds), and one operator ReconcileError Warning on the worker DCD in the operator's
    own form (copied from lws-rollout-single-node) whose error is the API server's words for LWS's pod
    webhook not answering (copied from the recorded FailedCreate). Edited, not recorded: no recording here
    holds the operator's write of a LeaderWorkerSet refused by a stopped LWS (the sandbox build was not ready
    to record one)."""
    import shutil

    src = RECORDED / "lws-controller-stopped"
    dest = tmp_path / "lws-operator-refused"
    shutil.copytree(src, dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    direct = RECORDED / "lws-direct-controller-stopped"
    for plural in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        rel = Path("resources") / "admissionregistration.k8s.io" / "v1" / f"{plural}.json"
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(direct / rel, dest / rel)
        entry = next(r for r in json.loads((direct / "manifest.json").read_text())["resources"]
                     if r["resource"] == plural)
        manifest["resources"].append(entry)
    (dest / "manifest.json").write_text(json.dumps(manifest))
    events_path = dest / "resources" / "core" / "v1" / "events.json"
    events = json.loads(events_path.read_text())
    failed = next(e for e in events["items"] if e["reason"] == "FailedCreate")
    (dcd,) = [d for d in items("lws-controller-stopped", "nvidia.com", "v1beta1", "dynamocomponentdeployments")
              if d["metadata"]["name"].startswith("trtllm-mn-worker")]
    template = next(e for e in items("lws-rollout-single-node/02", "", "v1", "events") if e["reason"] == "ReconcileError")
    refusal = "Internal error occurred: " + failed["message"].split("Internal error occurred: ", 1)[1]
    event = json.loads(json.dumps(template))
    event["involvedObject"].update(name=dcd["metadata"]["name"], uid=dcd["metadata"]["uid"],
                                   resourceVersion=dcd["metadata"]["resourceVersion"])
    event["metadata"]["name"] = dcd["metadata"]["name"] + ".refused"
    event["message"] = f"Failed to reconcile DynamoComponentDeployment: {refusal}"
    events["items"].append(event)
    events_path.write_text(json.dumps(events))
    return str(dest)


def test_the_operators_write_refused_by_the_stopped_lws_blames_lws_not_the_operator(tmp_path):
    data = run_doctor(RecordedCluster(_operator_refused_by_lws(tmp_path)), all_namespaces=True).data
    about_dcd = [f for f in data["findings"] if f["object"]["kind"] == "DynamoComponentDeployment"]
    assert about_dcd and all("the LWS controller is down or hung" in f["message"] for f in about_dcd)
    assert all(f["hint"].startswith("check the LWS controller's process and logs") for f in about_dcd)
    # one root: the LWS the operator made, which LWS stopped updating; the refused write is under it
    roots = [f for f in data["findings"] if f["severity"] == "error" and f["cause"] is None]
    assert [(f["code"], f["object"]["kind"]) for f in roots] == [("controller-not-reconciling", "LeaderWorkerSet")]
    # no finding tells the user to restart the operator: it acted
    assert not any("dynamo-operator" in f["hint"] for f in data["findings"] if f["severity"] == "error")


def test_configmaps_that_may_not_be_listed_are_never_called_missing(tmp_path):
    """lws-healthy's pods name ConfigMaps; with ConfigMaps forbidden (as a recording taken without that
    permission holds them) doctor cannot know: neither reference-missing nor wait-leader-configmap-missing
    (which called the vLLM wait-leader ConfigMap missing then) says anything of them."""
    import shutil

    dest = tmp_path / "no-configmaps"
    shutil.copytree(RECORDED / "lws-healthy", dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest["resources"] = [r for r in manifest["resources"] if r["resource"] != "configmaps"]
    manifest["forbidden"] = [{"group": "", "version": "v1", "resource": "configmaps",
                              "reason": 'configmaps is forbidden: User "doctor" cannot list resource "configmaps"'}]
    (dest / "manifest.json").write_text(json.dumps(manifest))
    data = run_doctor(RecordedCluster(str(dest)), all_namespaces=True).data
    assert any(f["code"] == "permission-denied" and "configmaps" in f["message"] for f in data["findings"])
    assert not [f for f in data["findings"] if f["code"] in ("reference-missing", "wait-leader-configmap-missing")]


def test_a_leaderworkerset_the_stopped_lws_refused_is_not_blamed_on_the_operator(tmp_path):
    """As above, and the LeaderWorkerSet the DGD's status names is gone (the operator's re-create refused by
    LWS's own webhook, as during a scale with LWS stopped): the DGD-status finding says the operator cannot
    create it because LWS is down, and restarts LWS, not the operator."""
    state = Path(_operator_refused_by_lws(tmp_path))
    path = state / "resources" / "leaderworkerset.x-k8s.io" / "v1" / "leaderworkersets.json"
    doc = json.loads(path.read_text())
    gone = [o["metadata"]["name"] for o in doc["items"] if o["metadata"]["name"].startswith("trtllm-mn-worker")]
    doc["items"] = [o for o in doc["items"] if o["metadata"]["name"] not in gone]
    path.write_text(json.dumps(doc))
    data = run_doctor(RecordedCluster(str(state)), all_namespaces=True).data
    (f,) = [f for f in data["findings"] if f["code"] == "controller-not-reconciling" and f["object"]["name"] in gone]
    assert "the Dynamo operator cannot create it because the LWS controller is down" in f["message"]
    assert f["hint"].startswith("check the LWS controller's") and "re-apply" not in f["hint"]


# -- the served CRD against the operator --------------------------------------------------------------------------

def _operator_at(tmp_path, version: str, whole_crd: bool) -> str:
    """lws-healthy with its operator stand-in's --operator-version edited to ``version`` and (``whole_crd``) the
    recorded DGD CRD (reduced by the recorder to names and versions) replaced by the whole CRD of the same operator
    commit (kubectl_dynamo/data/crds, chart 1.5.0: no components[].roles), as the sandbox served it. Edited."""
    import shutil

    import yaml

    dest = tmp_path / f"op-{version}"
    shutil.copytree(RECORDED / "lws-healthy", dest)
    deps = dest / "resources" / "apps" / "v1" / "deployments.json"
    text = deps.read_text()
    assert "--operator-version=1.5.0" in text
    deps.write_text(text.replace("--operator-version=1.5.0", f"--operator-version={version}"))
    if whole_crd:
        crds = dest / "resources" / "apiextensions.k8s.io" / "v1" / "customresourcedefinitions.json"
        doc = json.loads(crds.read_text())
        whole = yaml.load((Path(__file__).resolve().parents[2] / "kubectl_dynamo" / "data" / "crds" /
                           "nvidia.com_dynamographdeployments.yaml").read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        doc["items"] = [whole if o["metadata"]["name"] == whole["metadata"]["name"] else o for o in doc["items"]]
        crds.write_text(json.dumps(doc))
    return str(dest)


def test_a_crd_without_roles_under_a_1_6_operator_is_named(tmp_path):
    cluster = RecordedCluster(_operator_at(tmp_path, "1.6.0", whole_crd=True))
    data = run_doctor(cluster, all_namespaces=True).data
    (f,) = [f for f in data["findings"] if f["code"] == "crd-behind-operator"]
    assert f["severity"] == "error" and "spec.components[].roles" in f["message"] and "1.6.0" in f["message"]
    assert "kubectl apply --server-side" in f["hint"]


@pytest.mark.parametrize("version, whole", [("1.5.0", True), ("1.6.0", False)])
def test_a_crd_that_matches_or_cannot_be_read_says_nothing(tmp_path, version, whole):
    """Operator 1.5.0 with its own CRD: not even read (no request); 1.6.0 with a CRD whose schema the recording
    does not hold: unknown, nothing said."""
    cluster = RecordedCluster(_operator_at(tmp_path, version, whole_crd=whole))
    data = run_doctor(cluster, all_namespaces=True).data
    assert not [f for f in data["findings"] if f["code"] == "crd-behind-operator"]
    base = RecordedCluster(str(RECORDED / "lws-healthy"))
    run_doctor(base, all_namespaces=True)
    assert cluster.requests == base.requests + (0 if version == "1.5.0" else 1)


def test_a_scale_lws_has_not_acted_on_blames_lws_once(tmp_path):
    """lws-healthy with the operator's scale written and not acted on by LWS: the trtllm-mn DCD and its
    LeaderWorkerSet one generation ahead of what their controllers observed (as the operator leaves them when it
    wrote the new replicas and LWS is stopped). Edited from the recording (generation bumped by one on both),
    not recorded. Expected: LWS blamed on the LeaderWorkerSet, the operator's DCD not blamed (it acted)."""
    import shutil

    dest = tmp_path / "scaled"
    shutil.copytree(RECORDED / "lws-healthy", dest)
    for group, plural, prefix in (("nvidia.com", "dynamocomponentdeployments", "trtllm-mn-worker"),
                                  ("leaderworkerset.x-k8s.io", "leaderworkersets", "trtllm-mn-worker")):
        path = dest / "resources" / group / ("v1beta1" if group == "nvidia.com" else "v1") / f"{plural}.json"
        doc = json.loads(path.read_text())
        for o in doc["items"]:
            if o["metadata"]["name"].startswith(prefix):
                assert o["status"]["observedGeneration"] == o["metadata"]["generation"]
                o["metadata"]["generation"] += 1
        path.write_text(json.dumps(doc))
    data = run_doctor(RecordedCluster(str(dest)), all_namespaces=True).data
    blamed = [f for f in data["findings"] if f["code"] == "controller-not-reconciling"]
    assert [f["object"]["kind"] for f in blamed] == ["LeaderWorkerSet"]
    assert "the LWS controller has not acted" in blamed[0]["message"]
    assert not any("Dynamo operator" in f["message"] and f["severity"] == "error" for f in data["findings"])


# -- recorded for issue 36 (tests/data/recorded/PROVENANCE.md): expectations written from the injected fault ------
# These three ran on a sandbox with LWS and no Volcano: lws-without-volcano / no-multinode-orchestrator (and,
# with no operator process, discovery-rbac-missing) are true of that sandbox and not what these tests judge.

def _refs(state: str) -> list:
    return [(f["code"], f["object"], f["severity"]) for f in doctor(state)["findings"] if f["code"] == "reference-missing"]


def test_recorded_missing_pull_secret_is_named():
    """Fault: imagePullSecrets regcred on both LWS templates, no Secret regcred. Expected before running doctor:
    reference-missing on Secret llm/regcred, a warning (kwok ran the pods; a kubelet pulls without it), naming
    both pods."""
    state = "lws-direct-pull-secret-missing"
    pods = sorted(p["metadata"]["name"] for p in items(state, "", "v1", "pods")
                  if p["metadata"].get("labels", {}).get(DGD) == "sglang-mn")
    assert pods and not [s for s in items(state, "", "v1", "secrets") if s["metadata"]["name"] == "regcred"]
    assert _refs(state) == [("reference-missing", {"kind": "Secret", "namespace": "llm", "name": "regcred"}, "warning")]
    (f,) = [f for f in doctor(state)["findings"] if f["code"] == "reference-missing"]
    assert "imagePullSecrets" in f["message"] and all(p in f["message"] for p in pods)


def test_recorded_missing_configmap_is_named():
    """Fault: envFrom configMapRef engine-config on the containers, no ConfigMap engine-config. Expected:
    reference-missing on ConfigMap llm/engine-config, a warning while the pods run (a restart fails)."""
    assert _refs("lws-direct-configmap-missing") == [
        ("reference-missing", {"kind": "ConfigMap", "namespace": "llm", "name": "engine-config"}, "warning")]


def test_recorded_lws_that_never_leads_is_blamed():
    """Fault: the LWS manager running with leader election on while another holder keeps its Lease (its webhooks
    answer, its controllers never start). Expected before running doctor: a root error blames the LWS controller on
    the LeaderWorkerSet it never processed; no error says the Dynamo operator has not acted."""
    state = "lws-direct-lws-not-leader"
    (lws,) = items(state, "leaderworkerset.x-k8s.io", "v1", "leaderworkersets")
    assert not lws.get("status") and not items(state, "apps", "v1", "statefulsets")
    errors = [f for f in doctor(state)["findings"] if f["severity"] == "error"]
    (f,) = [f for f in errors if f["code"] == "controller-not-reconciling"]
    assert f["cause"] is None and f["object"] == {"kind": "LeaderWorkerSet", "namespace": "llm",
                                                  "name": lws["metadata"]["name"]}
    assert "the LWS controller has not acted" in f["message"] and "has no status" in f["message"]
    assert not any("Dynamo operator has not" in x["message"] for x in errors)
