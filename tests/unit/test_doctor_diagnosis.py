"""doctor names the cause and the fix, on faults the real components produced (tests/data/recorded/lws-direct-*,
see its PROVENANCE.md: the real kube-scheduler, kube-controller-manager, kube-apiserver admission, LWS and
Volcano of the sandbox; DGD sglang-mn as the real Dynamo operator rendered it in lws-healthy).

For each fault the *first* error (doctor orders roots first) must be about it, name the object, and its hint
must carry the concrete fix. Every expected word is read off the recorded objects (the nodes' taints and
labels, the pods' specs, the quota, the queue, the event the controller wrote), never typed from doctor's code.
The healthy states and the ones after a repair must have no error or warning about the DGD.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import pytest

from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.commands.doctor import run_doctor

RECORDED = Path(__file__).resolve().parent.parent / "data" / "recorded"
NS, DGD = "llm", "sglang-mn"
DGD_OBJ = {"kind": "DynamoGraphDeployment", "namespace": NS, "name": DGD}


def _items(state: str, group: str, version: str, plural: str) -> List[dict]:
    path = RECORDED / state / "resources" / (group or "core") / version / f"{plural}.json"
    return json.loads(path.read_text())["items"] if path.exists() else []


def _doctor(state: str) -> dict:
    return run_doctor(RecordedCluster(str(RECORDED / state)), all_namespaces=True).data


def _first_error(state: str) -> dict:
    return next(f for f in _doctor(state)["findings"] if f["severity"] == "error")


def _pods(state: str) -> List[dict]:
    return [p for p in _items(state, "", "v1", "pods") if p["metadata"]["namespace"] == NS
            and p["metadata"].get("labels", {}).get("nvidia.com/dynamo-graph-deployment-name") == DGD]


def _scheduler_says(state: str) -> str:
    """The recorded pods' PodScheduled message (kube-scheduler's own sentence)."""
    return next(c["message"] for p in _pods(state) for c in p["status"].get("conditions", [])
                if c["type"] == "PodScheduled" and c.get("message"))


def _failed_create(state: str, sts: Optional[str] = None) -> dict:
    return next(e for e in _items(state, "", "v1", "events") if e["reason"] == "FailedCreate"
                and e["involvedObject"]["kind"] == "StatefulSet" and (sts is None or e["involvedObject"]["name"] == sts))


def test_untolerated_taint_names_the_taint_the_nodes_and_the_toleration():
    state = "lws-direct-taint-untolerated"
    taints = {(t["key"], t.get("value", ""), t["effect"]) for n in _items(state, "", "v1", "nodes")
              for t in n["spec"].get("taints", [])}
    ((key, value, effect),) = taints
    f = _first_error(state)
    assert (f["code"], f["object"]) == ("group-pending", DGD_OBJ)
    assert f"carry taint {key}={value}:{effect}" in f["message"]
    assert f"{key}: {value}" in _scheduler_says(state) and _scheduler_says(state) in f["message"]
    assert f"{{key: {key}, operator: Equal, value: {value}, effect: {effect}}}" in f["hint"]
    assert "to spec.tolerations in the component's podTemplate" in f["hint"]


def test_a_selector_no_node_matches_names_the_label():
    state = "lws-direct-selector-unmatched"
    ((key, value),) = _pods(state)[0]["spec"]["nodeSelector"].items()
    have = sorted({n["metadata"]["labels"][key] for n in _items(state, "", "v1", "nodes")})
    assert value not in have
    f = _first_error(state)
    assert (f["code"], f["object"]) == ("group-pending", DGD_OBJ)
    assert f"{key}={value} (nodes have {key}: {', '.join(have)})" in f["message"]
    assert f"kubectl label node NODE {key}={value}" in f["hint"]


def test_a_missing_pvc_is_named():
    state = "lws-direct-pvc-missing"
    claim = next(v["persistentVolumeClaim"]["claimName"] for v in _pods(state)[0]["spec"]["volumes"]
                 if v.get("persistentVolumeClaim"))
    assert not _items(state, "", "v1", "persistentvolumeclaims")
    f = _first_error(state)
    assert (f["code"], f["object"]) == ("group-pending", DGD_OBJ)
    assert f"PersistentVolumeClaim {NS}/{claim} does not exist" in f["message"]
    assert f"create PersistentVolumeClaim {claim} in namespace {NS}" in f["hint"]


def _claim(state: str) -> dict:
    (pvc,) = _items(state, "", "v1", "persistentvolumeclaims")
    assert pvc["status"]["phase"] == "Pending"
    return pvc


def test_an_unbound_pvc_names_the_storageclass_that_does_not_exist():
    state = "lws-direct-pvc-unbound"
    pvc = _claim(state)
    wanted = pvc["spec"]["storageClassName"]
    assert not _items(state, "storage.k8s.io", "v1", "storageclasses")
    f = _first_error(state)
    assert (f["code"], f["object"]) == ("group-pending", DGD_OBJ)
    assert (f"PersistentVolumeClaim {NS}/{pvc['metadata']['name']} asks for StorageClass {wanted}, which does not "
            "exist (the cluster has no StorageClass)") in f["message"]
    assert f"create StorageClass {wanted}, or recreate the claim" in f["hint"]


def test_an_unbound_pvc_without_a_class_and_no_default_class_says_so():
    state = "lws-direct-pvc-no-class"
    pvc = _claim(state)
    assert "storageClassName" not in pvc["spec"] and not _items(state, "storage.k8s.io", "v1", "storageclasses")
    f = _first_error(state)
    assert f"{NS}/{pvc['metadata']['name']} sets no storageClassName and no StorageClass is the default" in f["message"]
    assert "kubectl annotate storageclass NAME storageclass.kubernetes.io/is-default-class=true" in f["hint"]
    size = pvc["spec"]["resources"]["requests"]["storage"]
    assert f"capacity >= {size}, accessModes {','.join(pvc['spec']['accessModes'])}" in f["hint"]


def test_an_unbound_pvc_names_a_provisioner_that_does_not_provision():
    state = "lws-direct-pvc-no-provisioner"
    pvc = _claim(state)
    (sc,) = _items(state, "storage.k8s.io", "v1", "storageclasses")
    assert sc["metadata"]["name"] == pvc["spec"]["storageClassName"]
    # the PV controller's own word that it waits for that provisioner
    assert any(sc["provisioner"] in (e.get("message") or "") for e in _items(state, "", "v1", "events")
               if e["involvedObject"]["kind"] == "PersistentVolumeClaim")
    f = _first_error(state)
    assert f"of StorageClass {sc['metadata']['name']} is still Pending: its provisioner {sc['provisioner']}" in f["message"]
    assert f"check that the provisioner {sc['provisioner']} runs" in f["hint"]


def test_a_claim_of_a_class_without_provisioner_asks_for_a_volume():
    state = "lws-direct-pvc-wait-for-first-consumer"
    pvc = _claim(state)
    (sc,) = _items(state, "storage.k8s.io", "v1", "storageclasses")
    assert (sc["provisioner"], sc["volumeBindingMode"]) == ("kubernetes.io/no-provisioner", "WaitForFirstConsumer")
    assert "didn't find available persistent volumes to bind" in _scheduler_says(state)
    f = _first_error(state)
    assert (f"asks for StorageClass {sc['metadata']['name']}, which has no provisioner (kubernetes.io/no-provisioner, "
            "volumeBindingMode WaitForFirstConsumer)") in f["message"]
    assert (f"create a PersistentVolume that matches it (storageClassName '{sc['metadata']['name']}', capacity >= "
            f"{pvc['spec']['resources']['requests']['storage']}") in f["hint"]


def test_a_bound_claim_is_not_a_finding():
    state = "lws-direct-pvc-bound"
    (pvc,) = _items(state, "", "v1", "persistentvolumeclaims")
    assert pvc["status"]["phase"] == "Bound"
    assert [f for f in _doctor(state)["findings"] if f["severity"] in ("error", "warning")] == []


def test_a_resource_no_node_has_is_a_typo_not_a_gpu_shortage():
    state = "lws-direct-gpu-typo"
    (asked,) = [r for r in _pods(state)[0]["spec"]["containers"][0]["resources"]["limits"] if r.startswith("nvidia")]
    offered = {r for n in _items(state, "", "v1", "nodes") for r in n["status"]["allocatable"]}
    assert asked not in offered and "nvidia.com/gpu" in offered
    codes = [f["code"] for f in _doctor(state)["findings"]]
    assert "insufficient-gpus" not in codes  # no GPU is short: none was asked for
    f = _first_error(state)
    assert (f["code"], f["object"]) == ("group-pending", DGD_OBJ)
    assert f"no node has resource {asked} at all" in f["message"] and "it probably means nvidia.com/gpu" in f["message"]
    assert f"request nvidia.com/gpu instead of {asked}" in f["hint"]


def test_a_request_above_every_node_names_the_largest():
    state = "lws-direct-gpu-too-big"
    asked = int(_pods(state)[0]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"])
    largest = max(int(n["status"]["allocatable"]["nvidia.com/gpu"]) for n in _items(state, "", "v1", "nodes"))
    assert asked > largest
    f = _first_error(state)
    assert (f["code"], f["object"]) == ("group-pending", DGD_OBJ)
    assert f"each pod requests {asked} nvidia.com/gpu, more than any node has" in f["message"]
    assert f"has {largest} allocatable" in f["message"] and f"request at most {largest} nvidia.com/gpu" in f["hint"]
    pods = [x for x in _doctor(state)["findings"] if x["code"] == "insufficient-gpus"]
    assert pods and all("no node can ever fit it" in x["message"] for x in pods)


def test_an_exhausted_quota_names_used_and_hard():
    state = "lws-direct-quota-exceeded"
    (quota,) = _items(state, "", "v1", "resourcequotas")
    event = _failed_create(state)
    f = _first_error(state)
    assert (f["code"], f["object"]["kind"]) == ("controller-create-failed", "StatefulSet")
    assert f["object"]["name"] == event["involvedObject"]["name"]
    name, hard = quota["metadata"]["name"], quota["spec"]["hard"]["requests.nvidia.com/gpu"]
    assert f"ResourceQuota {NS}/{name} is exhausted" in f["message"] and f"of hard {hard}" in f["message"]
    assert event["message"] in f["message"]  # whole, never cut
    assert f"kubectl edit resourcequota -n {NS} {name}" in f["hint"]


def test_pod_security_names_the_level_and_every_violation():
    state = "lws-direct-pod-security-restricted"
    (ns,) = [n for n in _items(state, "", "v1", "namespaces") if n["metadata"]["name"] == NS]
    level = ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"]
    event = _failed_create(state)
    violations = event["message"].split('": ', 1)[1]
    f = _first_error(state)
    assert f["code"] == "controller-create-failed"
    assert f"namespace {NS} enforces Pod Security level {level}:latest" in f["message"]
    for v in ("allowPrivilegeEscalation != false", "unrestricted capabilities", "runAsNonRoot != true",
              "seccompProfile"):
        assert v in violations and v in f["message"]
    assert event["message"] in f["message"]
    assert "securityContext" in f["hint"] and f"kubectl label namespace {NS} pod-security.kubernetes.io/enforce=" in f["hint"]


def test_a_missing_priorityclass_is_named():
    state = "lws-direct-priorityclass-missing"
    (lws,) = _items(state, "leaderworkerset.x-k8s.io", "v1", "leaderworkersets")
    pc = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["priorityClassName"]
    assert pc not in {p["metadata"]["name"] for p in _items(state, "scheduling.k8s.io", "v1", "priorityclasses")}
    f = _first_error(state)
    assert f["code"] == "controller-create-failed" and f"PriorityClass {pc} does not exist" in f["message"]
    assert f"kubectl create priorityclass {pc}" in f["hint"]


def test_a_missing_serviceaccount_is_named():
    state = "lws-direct-serviceaccount-missing"
    (lws,) = _items(state, "leaderworkerset.x-k8s.io", "v1", "leaderworkersets")
    sa = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["serviceAccountName"]
    assert sa not in {s["metadata"]["name"] for s in _items(state, "", "v1", "serviceaccounts")}
    f = _first_error(state)
    assert f["code"] == "controller-create-failed" and f"ServiceAccount {NS}/{sa} does not exist" in f["message"]
    assert f"kubectl create serviceaccount -n {NS} {sa}" in f["hint"]


def test_a_failing_webhook_is_named_with_its_endpoint():
    """lws-statefulset-failedcreate (recorded with the Dynamo operator): an unreachable validating webhook."""
    state = "lws-statefulset-failedcreate"
    event = _failed_create(state, "trtllm-mn-worker-7ebd8947-0")
    f = next(f for f in _doctor(state)["findings"] if f["code"] == "controller-create-failed")
    assert "admission webhook unreachable.record-states.kubectl-dynamo at https://127.0.0.1:9/validate" in f["message"]
    assert "connection refused" in f["message"] and event["message"] in f["message"]
    assert "bring back the server at https://127.0.0.1:9/validate" in f["hint"]


def test_a_failing_webhook_names_its_configuration_and_the_service_without_endpoints():
    state = "lws-direct-webhook-no-endpoints"
    (config,) = [c for c in _items(state, "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations")
                 if not c["metadata"]["name"].startswith("lws-")]
    (hook,) = config["webhooks"]
    svc = hook["clientConfig"]["service"]
    slices = [s for s in _items(state, "discovery.k8s.io", "v1", "endpointslices")
              if s["metadata"]["labels"].get("kubernetes.io/service-name") == svc["name"]]
    assert slices and not any(s.get("endpoints") for s in slices)  # the EndpointSlice controller's word
    event = _failed_create(state)
    assert f'failed calling webhook "{hook["name"]}"' in event["message"]
    f = _first_error(state)
    assert f["code"] == "controller-create-failed" and event["message"] in f["message"]
    assert (f"admission webhook {hook['name']} of ValidatingWebhookConfiguration {config['metadata']['name']} "
            f"(failurePolicy {hook['failurePolicy']}) calls Service {svc['namespace']}/{svc['name']} "
            f"(port {svc['port']}, path {svc['path']}), which has no endpoints") in f["message"]
    assert f"kubectl delete validatingwebhookconfiguration {config['metadata']['name']}" in f["hint"]
    assert f"kubectl get pods,endpointslices -n {svc['namespace']}" in f["hint"]


@pytest.mark.parametrize("state, plural", [("lws-direct-webhook-url-unreachable", "validatingwebhookconfigurations")])
def test_a_webhook_at_a_url_names_its_configuration(state, plural):
    """A URL webhook that refuses connections (a server nobody runs)."""
    event = _failed_create(state)
    name = event["message"].split('failed calling webhook "')[1].split('"')[0]
    (config, hook) = next((c, w) for c in _items(state, "admissionregistration.k8s.io", "v1", plural)
                          for w in c["webhooks"] if w["name"] == name)
    f = next(f for f in _doctor(state)["findings"] if f["code"] == "controller-create-failed")
    kind = {"validatingwebhookconfigurations": "ValidatingWebhookConfiguration",
            "mutatingwebhookconfigurations": "MutatingWebhookConfiguration"}[plural]
    assert (f"admission webhook {name} of {kind} {config['metadata']['name']} (failurePolicy {hook['failurePolicy']}) "
            f"calls URL {hook['clientConfig']['url']}") in f["message"]
    assert event["message"] in f["message"]
    assert f"usually the controller that installed {kind} {config['metadata']['name']}, restarted" in f["hint"]


def test_a_stopped_lws_controller_is_blamed_once_with_its_webhook_as_evidence():
    """lws-direct-controller-stopped: the fault injected was the LWS manager process stopped (SIGSTOP), then a
    worker deleted (PROVENANCE.md). Expected from that fault, before running doctor: the first error blames
    the LWS controller on the LeaderWorkerSet it stopped updating, the StatefulSet's FailedCreate (LWS's own
    pod webhook not answering) is nested under it, not a second root, and its fix restarts LWS, never
    deleting LWS's webhook configuration."""
    state = "lws-direct-controller-stopped"
    (lws,) = _items(state, "leaderworkerset.x-k8s.io", "v1", "leaderworkersets")
    event = _failed_create(state)
    name = event["message"].split('failed calling webhook "')[1].split('"')[0]
    (config,) = [c for c in _items(state, "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations")
                 if any(w["name"] == name for w in c["webhooks"])]
    findings = [f for f in _doctor(state)["findings"] if f["severity"] == "error"]
    first = findings[0]
    assert first["code"] == "controller-not-reconciling" and first["cause"] is None
    assert first["object"] == {"kind": "LeaderWorkerSet", "namespace": NS, "name": lws["metadata"]["name"]}
    assert "the LWS controller" in first["message"] and f"its own webhook {name} fails" in first["message"]
    assert "Dynamo operator" not in first["message"] + first["hint"]
    failed = next(f for f in findings if f["code"] == "controller-create-failed")
    assert failed["cause"] == {"code": "controller-not-reconciling", "object": first["object"]}
    assert (f"{config['metadata']['name']} (failurePolicy Fail) is served by the LWS controller's own process"
            in failed["message"]) and "the LWS controller is down or hung" in failed["message"]
    assert "kubectl delete" not in failed["hint"] and "the LWS controller" in failed["hint"]
    assert [f["code"] for f in findings if f["cause"] is None] == ["controller-not-reconciling"]


def test_a_webhook_that_fails_open_refuses_nothing():
    """The same Service without endpoints behind a MutatingWebhookConfiguration with failurePolicy Ignore: the
    API server admits the pods, and doctor says nothing (it does not even read the configurations)."""
    state = "lws-direct-webhook-ignore-no-endpoints"
    (config,) = [c for c in _items(state, "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations")
                 if not c["metadata"]["name"].startswith("lws-")]
    assert config["webhooks"][0]["failurePolicy"] == "Ignore"
    assert [f for f in _doctor(state)["findings"] if f["severity"] in ("error", "warning")] == []


def test_what_is_read_when_needed_is_read_only_then():
    from kubectl_dynamo.model.snapshot import take

    quiet = take(RecordedCluster(str(RECORDED / "lws-direct-healthy")), None, compact=True)
    assert (quiet.persistentvolumeclaims, quiet.storageclasses, quiet.validatingwebhookconfigurations) == (None,) * 3
    claims = take(RecordedCluster(str(RECORDED / "lws-direct-pvc-unbound")), None, compact=True)
    assert claims.persistentvolumeclaims and claims.storageclasses == []
    hooks = take(RecordedCluster(str(RECORDED / "lws-direct-webhook-no-endpoints")), None, compact=True)
    assert hooks.validatingwebhookconfigurations and not any(
        "caBundle" in w["clientConfig"] for c in hooks.validatingwebhookconfigurations for w in c["webhooks"])
    assert hooks.webhook_backends == {("policy-system", "pod-policy"): {"service": True, "endpoints": 0, "ready": 0}}


def test_a_volcano_queue_annotation_the_lws_path_ignores_is_named():
    state = "lws-direct-volcano-queue-ignored"
    (dgd,) = _items(state, "nvidia.com", "v1beta1", "dynamographdeployments")
    queue = dgd["metadata"]["annotations"]["nvidia.com/volcano-queue"]
    (lws,) = _items(state, "leaderworkerset.x-k8s.io", "v1", "leaderworkersets")
    assert "scheduling.volcano.sh/queue-name" not in lws["metadata"].get("annotations", {})
    (pg,) = _items(state, "scheduling.volcano.sh", "v1beta1", "podgroups")
    assert "queue" not in pg["spec"]  # LWS named none: Volcano's default
    (f,) = [f for f in _doctor(state)["findings"] if f["code"] == "queue-annotation-ignored"]
    assert (f["severity"], f["object"]) == ("warning", DGD_OBJ)
    assert f"nvidia.com/volcano-queue: {queue} has no effect on the LWS path" in f["message"]
    assert f"The pods get Volcano queue default (PodGroup {pg['metadata']['name']})" in f["message"]
    assert (f"kubectl annotate leaderworkerset -n {NS} -l nvidia.com/dynamo-graph-deployment-name={DGD} "
            f"scheduling.volcano.sh/queue-name={queue}") in f["hint"]


def test_the_queue_set_where_lws_reads_it_is_not_a_finding():
    """What the hint says, done with the real LWS: the LeaderWorkerSet annotated and the leader deleted; the
    recreated group's PodGroup is in the queue."""
    state = "lws-direct-volcano-queue-fixed"
    (dgd,) = _items(state, "nvidia.com", "v1beta1", "dynamographdeployments")
    (pg,) = _items(state, "scheduling.volcano.sh", "v1beta1", "podgroups")
    assert pg["spec"]["queue"] == dgd["metadata"]["annotations"]["nvidia.com/volcano-queue"]
    assert [f for f in _doctor(state)["findings"] if f["severity"] in ("error", "warning")] == []


def test_a_full_volcano_queue_is_named():
    state = "lws-direct-volcano-queue-full"
    (queue,) = [q for q in _items(state, "scheduling.volcano.sh", "v1beta1", "queues")
                if q["metadata"]["name"] != "default"]
    cap = queue["spec"]["capability"]["nvidia.com/gpu"]
    f = _first_error(state)
    assert f["code"] == "gang-held" and f"Volcano queue {queue['metadata']['name']} has no room" in f["message"]
    assert f"capability is {cap}" in f["message"]
    assert f"raise queue {queue['metadata']['name']}'s spec.capability" in f["hint"]


def test_after_the_repair_and_a_re_create_nothing_is_wrong():
    """The same names through fail, repair, delete and re-create: the old objects' events are still recorded,
    and doctor says nothing about them."""
    for state in ("lws-direct-healthy", "lws-direct-serviceaccount-repaired", "lws-direct-recreated-healthy"):
        assert [e for e in _items(state, "", "v1", "events") if e["reason"] == "FailedCreate"] or \
            state == "lws-direct-healthy"
        ours = [f for f in _doctor(state)["findings"] if f["severity"] in ("error", "warning")
                and (f["object"] or {}).get("namespace") == NS]
        assert ours == [], (state, ours)


def test_a_re_created_dgd_is_judged_on_its_own_fault():
    state = "lws-direct-recreated-other-fault"
    old = [e for e in _items(state, "", "v1", "events") if e["reason"] == "FailedCreate"]
    sts = {s["metadata"]["name"]: s["metadata"]["uid"] for s in _items(state, "apps", "v1", "statefulsets")}
    assert old and all(e["involvedObject"]["uid"] != sts.get(e["involvedObject"]["name"]) for e in old)
    codes = [f["code"] for f in _doctor(state)["findings"]]
    assert "controller-create-failed" not in codes
    f = _first_error(state)
    assert f["code"] == "group-pending" and "(nodes have nvidia.com/gpu.product: " in f["message"]


@pytest.mark.parametrize("state", sorted(p.name for p in RECORDED.glob("lws-direct-*")))
def test_messages_are_whole(state):
    """Every quoted sentence of the components appears whole in the JSON (never cut mid-word)."""
    said = {c["message"] for p in _pods(state) for c in p["status"].get("conditions", []) if c.get("message")}
    said |= {e["message"] for e in _items(state, "", "v1", "events") if e["reason"] == "FailedCreate"}
    text = json.dumps(_doctor(state))
    quoted = [s for s in said if s[:40] in text]
    assert all(json.dumps(s)[1:-1] in text for s in quoted), state


@pytest.mark.parametrize("state", ["lws-direct-limitrange-exceeded", "lws-direct-limitrange-several"])
def test_a_limitrange_names_each_bound_and_the_value_to_set(state):
    """The LimitRanger admission plugin's sentences (one per violated bound) become one cause and one fix."""
    (lws,) = _items(state, "leaderworkerset.x-k8s.io", "v1", "leaderworkersets")
    limit = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]["resources"]["limits"]["memory"]
    event = _failed_create(state)
    bounds = [(b.split()[0], b.split(" is ")[1].split(",")[0]) for b in event["message"].split("forbidden: ")[1]
              .strip("[]").split(", ") if " usage per " in b]
    assert bounds
    f = _first_error(state)
    assert f["code"] == "controller-create-failed" and f"a LimitRange of namespace {NS} refuses the pod" in f["message"]
    assert f"memory limit {limit} against the maximum" in f["message"] and event["message"] in f["message"]
    for bound, value in bounds:
        assert f"the {bound} {value} per" in f["message"]
        assert f"{'at most' if bound == 'maximum' else 'at least'} {value}" in f["hint"]
    assert f"kubectl get limitrange -n {NS}" in f["hint"]


def test_a_quota_that_requires_limits_names_the_quota_and_the_fields():
    state = "lws-direct-quota-requires-limits"
    (quota,) = _items(state, "", "v1", "resourcequotas")
    f = _first_error(state)
    assert f["code"] == "controller-create-failed"
    assert f"ResourceQuota {NS}/{quota['metadata']['name']} tracks" in f["message"]
    for resource in quota["spec"]["hard"]:
        assert resource in f["message"] and f"resources.{resource}" in f["hint"]
    assert _failed_create(state)["message"] in f["message"]


def test_a_missing_runtimeclass_is_named():
    state = "lws-direct-runtimeclass-missing"
    (lws,) = _items(state, "leaderworkerset.x-k8s.io", "v1", "leaderworkersets")
    name = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["runtimeClassName"]
    f = _first_error(state)
    assert f["code"] == "controller-create-failed" and f"RuntimeClass {name} does not exist" in f["message"]
    assert "remove runtimeClassName" in f["hint"] and f"RuntimeClass {name}" in f["hint"]


def _waiting(state: str) -> List[dict]:
    return [p for p in _pods(state) if not p["spec"].get("nodeName")]


def test_a_host_port_taken_on_every_node_is_named():
    """6 pods with hostPort on 4 nodes: the scheduler places one per node; the first error says which port."""
    state = "lws-direct-hostport-conflict"
    (pod, *_) = _waiting(state)
    port = next(p for c in pod["spec"]["containers"] for p in c.get("ports", []) if p.get("hostPort"))
    f = _first_error(state)
    assert "didn't have free ports" in _scheduler_says(state)
    assert f"host port(s) {port['hostPort']}/{port['protocol']} (hostPort)" in f["message"]
    assert f["hint"].startswith("drop the hostPort")


def test_a_required_anti_affinity_is_named_with_its_terms():
    state = "lws-direct-anti-affinity"
    (pod, *_) = _waiting(state)
    (term,) = pod["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    (label, value), = term["labelSelector"]["matchLabels"].items()
    f = _first_error(state)
    assert "didn't match pod anti-affinity rules" in _scheduler_says(state)
    assert f"required podAntiAffinity (pods with {label}={value} per {term['topologyKey']})" in f["message"]
    assert f["hint"].startswith("relax it to preferredDuringSchedulingIgnoredDuringExecution")


def test_a_missing_volcano_queue_is_named_although_volcano_never_wrote():
    """Volcano v1.10.0 leaves a PodGroup of a missing queue untouched (no phase, no condition, no event)."""
    state = "lws-direct-volcano-queue-missing"
    (pg,) = _items(state, "scheduling.volcano.sh", "v1beta1", "podgroups")
    queue = pg["spec"]["queue"]
    assert queue not in {q["metadata"]["name"] for q in _items(state, "scheduling.volcano.sh", "v1beta1", "queues")}
    assert not pg.get("status", {}).get("phase")
    f = _first_error(state)
    assert (f["code"], f["object"]["name"]) == ("gang-held", pg["metadata"]["name"])
    assert f"Volcano queue {queue} does not exist" in f["message"] and f"create Volcano queue {queue}" in f["hint"]


def test_gpus_no_node_advertises_point_at_the_device_plugin_not_the_request():
    """Every node's nvidia.com/gpu at 0 (the device plugin gone): "request at most 0" would be wrong."""
    state = "lws-direct-gpus-not-advertised"
    nodes = _items(state, "", "v1", "nodes")
    assert {n["status"]["allocatable"]["nvidia.com/gpu"] for n in nodes} == {"0"}
    f = _first_error(state)
    assert "Insufficient nvidia.com/gpu" in _scheduler_says(state)
    assert f"no node advertises allocatable nvidia.com/gpu (0 on all {len(nodes)} nodes" in f["message"]
    assert "device plugin" in f["hint"] and "request at most" not in f["hint"]
