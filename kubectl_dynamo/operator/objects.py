"""The workload objects the operator creates for a DGD, in Kubernetes shape (``explain --objects``).

ai-dynamo/dynamo@2a6da14c deploy/operator/internal/dynamo/graph.go (GenerateGrovePodCliqueSet,
buildCliqueForRole, generateLabels, generateAnnotations, applyCliqueStartupDependencies,
buildGroveScalingGroupConfig), grove.go (KAI queue label), failover.go (GMS claim templates),
internal/controller/dynamocomponentdeployment_renderer.go and _controller.go (the DCD's
Deployment / LeaderWorkerSet). Grove provider: one PodCliqueSet; component provider: one
Deployment per single-node and one LeaderWorkerSet per multinode component. Worker names and
labels carry the worker hash (``workerhash``).
"""

from __future__ import annotations

import copy
import json
from typing import Dict, List, Optional

from kubectl_dynamo.operator import api, gms, rollingupdate
from kubectl_dynamo.operator.components import node_count
from kubectl_dynamo.operator.grove import pcs_name_for_dgd, uses_scaling_group

GROVE_API = "grove.io/v1alpha1"
LWS_API = "leaderworkerset.x-k8s.io/v1"
LABEL_SELECTOR = "nvidia.com/selector"
LABEL_SUB_COMPONENT_TYPE = "nvidia.com/dynamo-sub-component-type"
LABEL_COMPONENT_CLASS = "nvidia.com/dynamo-component-class"
LABEL_METRICS = "nvidia.com/metrics-enabled"
LABEL_DISCOVERY_BACKEND = "nvidia.com/dynamo-discovery-backend"
LABEL_DISCOVERY_ENABLED = "nvidia.com/dynamo-discovery-enabled"
LABEL_BASE_MODEL_HASH = "nvidia.com/dynamo-base-model-hash"
ANN_BASE_MODEL = "nvidia.com/dynamo-base-model"
LABEL_FAILOVER_MEMBER = "nvidia.com/dynamo-failover-engine-group-member"
MAX_SERVICE_NAME = 63
TERMINATION_DELAY = "15m0s"  # operator config orchestrators.grove.terminationDelay default


def _alpha(annotations: Dict[str, str], component: str) -> dict:
    """What a v1alpha1 service kept in the conversion annotation (labels, annotations, …)."""
    raw = annotations.get(api.ANN_DGD_SPEC)
    if not raw:
        return {}
    try:
        services = (json.loads(raw).get("spec") or {}).get("services") or {}
    except (ValueError, AttributeError):
        return {}
    return services.get(component) or {}


def _sub_component_type(annotations: Dict[str, str], component: dict) -> str:
    """The v1alpha1 view's subComponentType (the operator converts back to read it): a prefill or
    decode type, else what a v1alpha1 service kept."""
    ctype = component.get("type") or ""
    if ctype in ("prefill", "decode"):
        return ctype
    return _alpha(annotations, component.get("name") or "").get("subComponentType") or ""


def _model_hash(name: str) -> str:
    from kubectl_dynamo.operator.goencode import sha256_hex

    return sha256_hex(name.encode())[:8]


def _metadata(component: dict) -> dict:
    return (component.get("podTemplate") or {}).get("metadata") or {}


def _worker(component: dict) -> bool:
    return (component.get("type") or "") in api.WORKER_TYPES


def selector_name(dgd: str, component: str) -> str:
    return f"{dgd}-{component.lower()}"


def dcd_name(dgd: str, component: dict, worker_hash: str) -> str:
    base = selector_name(dgd, component.get("name") or "")
    return f"{base}-{worker_hash}" if _worker(component) and worker_hash else base


def _labels(dgd: dict, component: dict, *, dynamo_ns: str, worker_hash: str, discovery: str,
            has_epp: bool) -> Dict[str, str]:
    """``generateLabels``: system labels, then DGD spec / preserved / pod-template labels, system again."""
    meta, spec = dgd["metadata"], dgd["spec"]
    name, ctype = component.get("name") or "", component.get("type") or ""
    alpha = _alpha(meta.get("annotations") or {}, name)

    def system(out: Dict[str, str]) -> None:
        out[LABEL_SELECTOR] = selector_name(meta["name"], name)
        out[api.LABEL_DGD] = meta["name"]
        out[api.LABEL_COMPONENT] = name
        if ctype:
            out[api.LABEL_COMPONENT_TYPE] = ctype
        if has_epp and ctype in api.WORKER_TYPES:
            out[LABEL_COMPONENT_CLASS] = "worker"
        sub = _sub_component_type(meta.get("annotations") or {}, component)
        if sub:
            out[LABEL_SUB_COMPONENT_TYPE] = sub
        out[api.LABEL_DYNAMO_NAMESPACE] = dynamo_ns

    labels: Dict[str, str] = {}
    system(labels)
    model = (component.get("modelRef") or {}).get("name")
    if model:
        labels[LABEL_BASE_MODEL_HASH] = _model_hash(model)
    if (meta.get("annotations") or {}).get(api.ANN_ENABLE_METRICS) != "false":
        labels[LABEL_METRICS] = "true"
    for extra in (spec.get("labels"), alpha.get("labels"), _metadata(component).get("labels")):
        labels.update({k: v for k, v in (extra or {}).items() if v != ""})
    system(labels)
    if _worker(component) and worker_hash:
        labels[api.LABEL_WORKER_HASH] = worker_hash
    if discovery == "kubernetes":
        labels[LABEL_DISCOVERY_BACKEND] = "kubernetes"
        labels[LABEL_DISCOVERY_ENABLED] = "true"
    return labels


def resource_annotations(dgd: dict, component: dict) -> Dict[str, str]:
    """``GetDGDComponentResourceAnnotations`` (graph.go): the DGD's spec annotations, then what a v1alpha1
    service kept, then the component's pod template annotations; the DGD's rolling update reads its
    strategy and budget from them."""
    out: Dict[str, str] = dict((dgd.get("spec") or {}).get("annotations") or {})
    out.update(_alpha((dgd.get("metadata") or {}).get("annotations") or {}, component.get("name") or "")
               .get("annotations") or {})
    out.update(_metadata(component).get("annotations") or {})
    return out


def _annotations(dgd: dict, component: dict, discovery: str) -> Dict[str, str]:
    """``generateAnnotations`` over the component after DGD annotations were propagated."""
    meta = dgd["metadata"]
    out: Dict[str, str] = dict(dgd["spec"].get("annotations") or {})
    out.update(_alpha(meta.get("annotations") or {}, component.get("name") or "").get("annotations") or {})
    pod = dict(_metadata(component).get("annotations") or {})
    for key in api.PROPAGATED_ANNOTATIONS:
        if key in (meta.get("annotations") or {}) and key not in pod:
            pod[key] = meta["annotations"][key]
    if discovery:
        pod[api.ANN_DISCOVERY_BACKEND] = discovery
    out.update(pod)
    return {k: v for k, v in out.items() if v != ""}


def _with_topology_source(dgd: dict, component: dict, annotations: Dict[str, str]) -> Dict[str, str]:
    """The topology label controller's source annotations: only the DGD's ``kvTransferPolicy`` sets
    them, on worker components (ai-dynamo/dynamo@2a6da14c internal/dynamo/graph.go
    ``applyKvTransferPolicyTopologyAnnotations``; ``GetDCDKubeAnnotations`` copies the DCD's to its pods)."""
    out = {k: v for k, v in annotations.items()
           if k not in (api.ANN_TOPOLOGY_LABEL_KEY, api.ANN_TOPOLOGY_CLUSTER_TOPOLOGY)}
    policy = (dgd["spec"].get("experimental") or {}).get("kvTransferPolicy") or {}
    if _worker(component) and (policy.get("labelKey") or policy.get("clusterTopologyName")):
        if policy.get("labelKey"):
            out[api.ANN_TOPOLOGY_LABEL_KEY] = policy["labelKey"]
        if policy.get("clusterTopologyName"):
            out[api.ANN_TOPOLOGY_CLUSTER_TOPOLOGY] = policy["clusterTopologyName"]
    return out


def _effective_for_role(component: dict, role: str) -> dict:
    if component.get("podTemplate") or not any(r.get("podTemplate") for r in component.get("roles") or []):
        return component
    kind = _role_kind(role)
    tpl = next((r.get("podTemplate") for r in component.get("roles") or [] if r.get("name") == kind), None)
    return {**component, "podTemplate": tpl} if tpl else component


def _role_kind(role: str) -> str:
    return role.split("-")[0]


def pod_clique_set(dgd: dict, rendered: List[dict], *, queue: Optional[str], worker_hash: str) -> dict:
    """The PodCliqueSet of a Grove DGD; ``rendered`` is explain's components (roles with pod specs)."""
    meta, spec = dgd["metadata"], dgd["spec"]
    name, ns = meta["name"], meta.get("namespace") or "default"
    components = {c.get("name"): c for c in spec.get("components") or []}
    discovery = (meta.get("annotations") or {}).get(api.ANN_DISCOVERY_BACKEND, "kubernetes")
    has_epp = any(c.get("type") == "epp" for c in components.values())

    cliques: List[dict] = []
    groups: List[dict] = []
    claim_templates: List[dict] = []
    explicit_startup = False
    for out in rendered:
        comp = components.get(out["name"]) or {}
        lower = out["name"].lower()
        pcsg, multinode, inter = uses_scaling_group(comp), node_count(comp) > 1, gms.is_inter_pod(comp)
        names: List[str] = []
        for role in out["roles"]:
            # 1.6 role templates: each clique's metadata comes from its role's template
            # (tu-kim/dynamo@3f3d3dfa internal/dynamo/graph.go EffectiveComponentForRole).
            source = _effective_for_role(comp, role["name"])
            labels = _labels(dgd, source, dynamo_ns=_dynamo_ns(dgd, comp), worker_hash=worker_hash,
                             discovery=discovery, has_epp=has_epp)
            annotations = _annotations(dgd, source, discovery)
            clique_name = lower if role["name"] == "main" else f"{lower}-{_clique_suffix(role['name'])}"
            min_available = role["replicas"] if multinode and not gms.is_inter_pod_failover(comp) else (
                comp.get("minAvailable") or 1 if not pcsg else 1)
            clique_labels = dict(labels)
            if gms.is_inter_pod_failover(comp) and not role["name"].startswith("gms"):
                clique_labels[LABEL_FAILOVER_MEMBER] = "true"
            if role["name"].startswith("gms"):
                clique_labels.pop(LABEL_DISCOVERY_BACKEND, None)
                clique_labels.pop(LABEL_DISCOVERY_ENABLED, None)
            if queue and role["podSpec"].get("schedulerName") == "kai-scheduler":
                clique_labels[api.LABEL_KAI_QUEUE] = queue
            clique_annotations = dict(annotations) if role["name"].startswith("gms") else _with_topology_source(
                dgd, comp, annotations)
            clique = {"name": clique_name, "labels": clique_labels, "annotations": clique_annotations,
                      "spec": {"roleName": clique_name, "podSpec": role["podSpec"], "replicas": role["replicas"],
                               "minAvailable": min_available}}
            cliques.append(clique)
            names.append(clique_name)
        after = _starts_after(out, comp, lower)
        for clique in cliques[-len(names):]:
            deps = after.get(clique["name"])
            if deps:
                clique["spec"]["startsAfter"] = deps
                explicit_startup = True
        if inter:
            claim_templates += _gms_claim_templates(comp, lower, out)
        if pcsg:
            group = {"name": lower, "cliqueNames": names, "replicas": comp.get("replicas", 1),
                     "minAvailable": comp.get("minAvailable") or 1}
            if inter:
                group["resourceSharing"] = [
                    {"name": f"{lower}-gpu-rank-{rank}", "scope": "PerReplica", "filter": {"childCliqueNames": [
                        n for n in names if _rank_of(n, lower) == rank]}}
                    for rank in sorted({_rank_of(n, lower) for n in names})]
            groups.append(group)
    template: dict = {"cliques": cliques,
                      "cliqueStartupType": "CliqueStartupTypeExplicit" if explicit_startup else "CliqueStartupTypeAnyOrder",
                      "headlessServiceConfig": {"publishNotReadyAddresses": True}}
    if spec.get("priorityClassName"):
        template["priorityClassName"] = spec["priorityClassName"]
    template["terminationDelay"] = TERMINATION_DELAY
    if groups:
        template["podCliqueScalingGroups"] = groups
    if claim_templates:
        template["resourceClaimTemplates"] = claim_templates
    pcs_meta = {"name": pcs_name_for_dgd(name, components.values()),
                "namespace": ns, "labels": {**(spec.get("labels") or {}), api.LABEL_DGD: name}}
    if spec.get("annotations"):
        pcs_meta["annotations"] = dict(spec["annotations"])
    return _sorted_maps({"apiVersion": GROVE_API, "kind": "PodCliqueSet", "metadata": pcs_meta,
                         "spec": {"replicas": 1, "template": template}})


def _dynamo_ns(dgd: dict, component: dict) -> str:
    from kubectl_dynamo.operator.components import dynamo_namespace

    meta = dgd["metadata"]
    return dynamo_namespace(meta.get("namespace") or "default", meta["name"], bool(component.get("globalDynamoNamespace")))


def _clique_suffix(role: str) -> str:
    return {"leader": "ldr", "worker": "wkr"}.get(role, role.replace("worker-", "wkr-"))


def _rank_of(clique: str, lower: str) -> int:
    rest = clique[len(lower) + 1:] if clique != lower else ""
    if rest in ("", "ldr"):
        return 0
    return int(rest.rsplit("-", 1)[-1])


def _starts_after(out: dict, comp: dict, lower: str) -> Dict[str, List[str]]:
    """``applyCliqueStartupDependencies``: TRT-LLM leaders wait for their workers; with inter-pod
    GMS every engine clique waits for its rank's weight server."""
    deps: Dict[str, List[str]] = {}
    names = [lower if r["name"] == "main" else f"{lower}-{_clique_suffix(r['name'])}" for r in out["roles"]]
    inter = gms.is_inter_pod(comp)
    trtllm = out["backend"] == "trtllm" and node_count(comp) > 1
    if not (inter or trtllm):
        return deps
    gms_by_rank = {_rank_of(n, lower): n for n in names if n[len(lower) + 1:].startswith("gms")}
    workers = [n for n, r in zip(names, out["roles"]) if _role_kind(r["name"]) == "worker"]
    for n, r in zip(names, out["roles"]):
        kind = _role_kind(r["name"])
        after: List[str] = []
        if inter and kind != "gms" and _rank_of(n, lower) in gms_by_rank:
            after.append(gms_by_rank[_rank_of(n, lower)])
        if trtllm and kind == "leader":
            after += workers
        if after:
            deps[n] = after
    return deps


def _gms_claim_templates(comp: dict, lower: str, out: dict) -> List[dict]:
    from kubectl_dynamo.operator.flags import resolve_gpu_count

    main: dict = next((c for c in ((comp.get("podTemplate") or {}).get("spec") or {}).get("containers") or []
                       if c.get("name") == "main"), {})
    gpus, _ = resolve_gpu_count(main.get("resources"))
    device_class = (gms.spec(comp) or {}).get("deviceClassName") or "gpu.nvidia.com"
    ranks = sorted({_rank_of(lower if r["name"] == "main" else f"{lower}-{_clique_suffix(r['name'])}", lower)
                    for r in out["roles"]})
    return [{"name": f"{lower.replace('.', '-')}-gpu-rank-{rank}", "templateSpec": {"metadata": {}, "spec": {"devices": {
        "requests": [{"name": "gpu", "exactly": {"deviceClassName": device_class, "allocationMode": "ExactCount",
                                                 "count": gpus}}]}}}} for rank in ranks]


# ---- component provider (DCD controller) ---------------------------------------------------------

def _dcd_annotations(dgd: dict, component: dict, v16: bool = False) -> Dict[str, str]:
    """``GetDCDKubeAnnotations``: the DCD pod template's annotations (DGD ones propagated, DGD spec
    annotations under them, EPP's Istio opt-out) plus preserved v1alpha1 ones, minus the origin version."""
    meta = dgd["metadata"]
    pod = dict(_metadata(component).get("annotations") or {})
    if component.get("type") == "epp":
        pod.setdefault(api.ANN_ISTIO_SIDECAR_INJECT, "false")
    if v16:  # 1.6 applyDGDTemplateDefaults: spec metadata before the DGD's propagated annotations
        for k, v in (dgd["spec"].get("annotations") or {}).items():
            pod.setdefault(k, v)
    for key in api.PROPAGATED_ANNOTATIONS:
        if key in (meta.get("annotations") or {}) and key not in pod:
            pod[key] = meta["annotations"][key]
    for k, v in (dgd["spec"].get("annotations") or {}).items():
        pod.setdefault(k, v)
    out = dict(_alpha(meta.get("annotations") or {}, component.get("name") or "").get("annotations") or {})
    out.update(pod)
    model = (component.get("modelRef") or {}).get("name")
    if model:
        out[ANN_BASE_MODEL] = model
    out.pop(api.ANN_ORIGIN_VERSION, None)
    return {k: v for k, v in _with_topology_source(dgd, component, out).items() if v != ""}


def component_workloads(dgd: dict, rendered: List[dict], *, worker_hash: str, v16: bool = False) -> List[dict]:
    """One Deployment per single-node component, one LeaderWorkerSet per multinode one (what the
    DCD controller renders from each generated DynamoComponentDeployment)."""
    meta, spec = dgd["metadata"], dgd["spec"]
    ns = meta.get("namespace") or "default"
    components = {c.get("name"): c for c in spec.get("components") or []}
    discovery = (meta.get("annotations") or {}).get(api.ANN_DISCOVERY_BACKEND, "kubernetes")
    has_epp = any(c.get("type") == "epp" for c in components.values())
    out: List[dict] = []
    for r in rendered:
        comp = components.get(r["name"]) or {}
        dcd = dcd_name(meta["name"], comp, worker_hash)
        dyn_ns = _dynamo_ns(dgd, comp)
        alpha = _alpha(meta.get("annotations") or {}, r["name"])
        # The DCD's own labels (generateSingleDCD).
        # spec.labels sit under the template's (applyDGDTemplateDefaults, mergeLowPriorityMetadata).
        dcd_labels = {**(spec.get("labels") or {}), **(_metadata(comp).get("labels") or {}), api.LABEL_COMPONENT: r["name"],
                      api.LABEL_DYNAMO_NAMESPACE: dyn_ns, api.LABEL_DGD: meta["name"]}
        tpl_labels = dict(_metadata(comp).get("labels") or {})
        if _worker(comp) and worker_hash:
            dcd_labels[api.LABEL_WORKER_HASH] = tpl_labels[api.LABEL_WORKER_HASH] = worker_hash
            if has_epp:
                dcd_labels[LABEL_COMPONENT_CLASS] = tpl_labels[LABEL_COMPONENT_CLASS] = "worker"
        for k, v in (spec.get("labels") or {}).items():
            tpl_labels.setdefault(k, v)
        # The pods' labels (GetDCDKubeLabels, then the renderer's own).
        pod_labels = {**dcd_labels, **(alpha.get("labels") or {}), **tpl_labels}
        model = (comp.get("modelRef") or {}).get("name")
        if model:
            pod_labels[LABEL_BASE_MODEL_HASH] = dcd_labels[LABEL_BASE_MODEL_HASH] = _model_hash(model)
        sub = _sub_component_type(meta.get("annotations") or {}, comp)
        if sub:
            pod_labels[LABEL_SUB_COMPONENT_TYPE] = dcd_labels[LABEL_SUB_COMPONENT_TYPE] = sub
        for key in (api.LABEL_COMPONENT, api.LABEL_DYNAMO_NAMESPACE, api.LABEL_DGD, api.LABEL_WORKER_HASH,
                    LABEL_COMPONENT_CLASS):
            if key in dcd_labels:
                pod_labels[key] = dcd_labels[key]
        # GetDCDDynamoNamespace: a v1alpha1 service's (deprecated) dynamoNamespace still names the pods.
        pod_labels[api.LABEL_DYNAMO_NAMESPACE] = alpha.get("dynamoNamespace") or dyn_ns
        annotations = _dcd_annotations(dgd, comp, v16)
        if annotations.get(api.ANN_ENABLE_METRICS) != "false":
            pod_labels[LABEL_METRICS] = "true"
        if comp.get("type"):
            pod_labels[api.LABEL_COMPONENT_TYPE] = comp["type"]
        pod_labels[LABEL_SELECTOR] = dcd
        if annotations.get(api.ANN_DISCOVERY_BACKEND, discovery) == "kubernetes":
            pod_labels[LABEL_DISCOVERY_BACKEND] = "kubernetes"
            pod_labels[LABEL_DISCOVERY_ENABLED] = "true"
        template_meta = {"labels": pod_labels, **({"annotations": annotations} if annotations else {})}
        obj_meta = {"name": dcd, "namespace": ns, "labels": dcd_labels,
                    **({"annotations": dict(annotations)} if annotations else {})}
        roles = {x["name"]: x for x in r["roles"]}
        if "leader" in roles:
            leader_meta, worker_meta = copy.deepcopy(template_meta), copy.deepcopy(template_meta)
            for m, role in ((leader_meta, "leader"), (worker_meta, "worker")):
                m["labels"].pop(LABEL_SELECTOR, None)
                m["labels"]["role"] = role
            out.append({"apiVersion": LWS_API, "kind": "LeaderWorkerSet",
                        "metadata": {"name": f"{dcd}-0", "namespace": ns, "labels": dcd_labels},
                        "spec": {"replicas": comp.get("replicas", 1), "leaderWorkerTemplate": {
                            "leaderTemplate": {"metadata": leader_meta, "spec": roles["leader"]["podSpec"]},
                            "workerTemplate": {"metadata": worker_meta, "spec": roles["worker"]["podSpec"]},
                            "size": node_count(comp)},
                            "rolloutStrategy": {"type": ""}, "startupPolicy": "LeaderCreated"}})
            continue
        main = roles.get("main") or next(iter(roles.values()))
        out.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": obj_meta,
                    "spec": {"replicas": main["replicas"], "selector": {"matchLabels": {LABEL_SELECTOR: dcd}},
                             "template": {"metadata": template_meta, "spec": main["podSpec"]},
                             "strategy": rollingupdate.deployment_strategy(annotations)}})
    return [_sorted_maps(o) for o in out]


def _sorted_maps(obj: dict) -> dict:
    """Labels and annotations in key order, as the API server returns them."""
    def walk(node):
        if isinstance(node, dict):
            for key in ("labels", "annotations", "matchLabels"):
                if isinstance(node.get(key), dict) and key in node and not isinstance(node.get("spec"), str):
                    node[key] = dict(sorted(node[key].items()))
            for v in node.values():
                if isinstance(v, (dict, list)) and v is not node.get("podSpec"):
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(obj)
    return obj


def _pod_specs(obj: dict) -> List[dict]:
    spec = obj.get("spec") or {}
    if obj["kind"] == "PodCliqueSet":
        return [c["spec"]["podSpec"] for c in spec["template"]["cliques"]]
    if obj["kind"] == "LeaderWorkerSet":
        t = spec["leaderWorkerTemplate"]
        return [t["leaderTemplate"]["spec"], t["workerTemplate"]["spec"]]
    return [spec["template"]["spec"]]


def component_services(dgd: dict, *, grove: bool, worker_hash: str) -> List[str]:
    """The Services the operator creates: per component with Kubernetes discovery (else for
    frontends), named after the component (Grove) or the DCD (LWS) with dots as dashes (graph.go
    GenerateComponentService); one headless ``dynamo-model-<hash>`` per base model (modelRef);
    the ``<component>-ray`` Service of a single-pod elastic-EP leader on Grove."""
    from kubectl_dynamo.operator.grove import fnv32a
    from kubectl_dynamo.operator.podspec import main_container_of
    from kubectl_dynamo.operator.vllm import single_pod_elastic_ep

    meta = dgd["metadata"]
    discovery = (meta.get("annotations") or {}).get(api.ANN_DISCOVERY_BACKEND, "kubernetes")
    out = []
    for comp in dgd["spec"].get("components") or []:
        base = selector_name(meta["name"], comp.get("name") or "")
        if discovery == "kubernetes" or comp.get("type") == "frontend":
            name = base if grove else dcd_name(meta["name"], comp, worker_hash)
            out.append(name.replace(".", "-").lower())
        model = (comp.get("modelRef") or {}).get("name")
        if model:  # one headless Service per base model (model_service.go)
            out.append(f"dynamo-model-{_model_hash(model)}")
        main = main_container_of(comp.get("podTemplate")) or {}
        if grove and node_count(comp) == 1 and comp.get("replicas", 1) == 1 and single_pod_elastic_ep(main):
            ray = f"{base}-ray".replace(".", "-").lower()  # ElasticEPLeaderServiceName
            if len(ray) > MAX_SERVICE_NAME:
                ray = f"{ray[:MAX_SERVICE_NAME - 5]}-{fnv32a(ray.encode()) & 0xFFFF:04x}"
            out.append(ray)
    return out


def related(objs: List[dict], services: List[str]) -> Dict[str, List[str]]:
    """Names of the Services the operator creates and of what the rendered pods refer to:
    ConfigMaps (the operator's wait-leader script and EPP config, or the user's), Secrets (the MPI
    SSH key, env, image pulls), service accounts, PVCs."""
    found: Dict[str, set] = {"services": set(services), "configMaps": set(), "secrets": set(),
                             "serviceAccounts": set(), "persistentVolumeClaims": set()}
    for obj in objs:
        for pod in _pod_specs(obj):
            if pod.get("serviceAccountName"):
                found["serviceAccounts"].add(pod["serviceAccountName"])
            for ref in pod.get("imagePullSecrets") or []:
                found["secrets"].add(ref.get("name"))
            for vol in pod.get("volumes") or []:
                if "configMap" in vol:
                    found["configMaps"].add(vol["configMap"].get("name"))
                if "secret" in vol:
                    found["secrets"].add(vol["secret"].get("secretName"))
                if "persistentVolumeClaim" in vol:
                    found["persistentVolumeClaims"].add(vol["persistentVolumeClaim"].get("claimName"))
            for c in (pod.get("containers") or []) + (pod.get("initContainers") or []):
                for src in c.get("envFrom") or []:
                    if "secretRef" in src:
                        found["secrets"].add(src["secretRef"].get("name"))
                    if "configMapRef" in src:
                        found["configMaps"].add(src["configMapRef"].get("name"))
                for env in c.get("env") or []:
                    ref = (env.get("valueFrom") or {})
                    if "secretKeyRef" in ref:
                        found["secrets"].add(ref["secretKeyRef"].get("name"))
                    if "configMapKeyRef" in ref:
                        found["configMaps"].add(ref["configMapKeyRef"].get("name"))
    return {k: sorted(n for n in v if n) for k, v in found.items()}
