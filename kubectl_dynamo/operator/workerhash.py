"""The worker hash: suffix of worker DCD / LeaderWorkerSet names and value of DYN_NAMESPACE_WORKER_SUFFIX.

ai-dynamo/dynamo@2a6da14c deploy/operator/internal/dynamo/hash.go, worker-hash.md. The operator
computes it as the first 8 hex digits of SHA-256 over the Go JSON encoding of every worker DCD it
generates (labels, annotations, resolved runtime version, spec minus replicas/minAvailable/
scalingAdapter), with a placeholder standing for the hash inside. ``compute`` reproduces that
(``goencode`` + ``data/go-layout.json``); a live DGD carries the value the operator stored, which
wins (it names the active generation, also during a rollout). ``PLACEHOLDER`` is rendered only when
the operator would not generate DCDs at all (workers of two different backends).
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from kubectl_dynamo.operator import api, versions
from kubectl_dynamo.operator.goencode import sha256_hex

PLACEHOLDER = "<worker-hash>"
ANN_V1 = "nvidia.com/current-worker-hash"
_UNSET: Any = object()  # for_dgd: the caller did not pass the backend


def stored(annotations: Optional[Mapping[str, str]]) -> Optional[str]:
    """The active generation suffix the operator stored on a DGD (v1 while a legacy generation is
    still active, else v2), or None for a DGD the operator has not reconciled yet."""
    annotations = annotations or {}
    return annotations.get(ANN_V1) or annotations.get(api.ANN_WORKER_HASH_V2) or None


def for_dgd(dgd: dict, operator_version: str = "1.5.0", *, backend: Any = _UNSET) -> str:
    """What explain renders for a stored v1beta1 DGD (CRD defaults and webhook applied): the suffix
    the operator stored on it, else the hash it computes for a new DGD, else (a DGD the operator
    refuses to generate DCDs for) the placeholder. ``backend``: ``dgd_backend_framework`` of this
    DGD's spec where the caller already has it."""
    value = stored((dgd.get("metadata") or {}).get("annotations"))
    if value:
        return value
    if backend is _UNSET:
        backend = dgd_backend_framework(dgd.get("spec") or {}, operator_version)
    return PLACEHOLDER if backend is None else compute(dgd, backend, operator_version)


def is_placeholder(value: Optional[str]) -> bool:
    return value == PLACEHOLDER


# ---- the operator's computation (hash.go ComputeDGDWorkersSpecHash) ---------------------------------

HASH_PLACEHOLDER_VALUE = "worker-hash-placeholder"  # stands for the hash while it is computed
MIN_HASHED_RUNTIME = (1, 5, 0)
_TAG = re.compile(r"^[vV]?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")


def _runtime_version(main: dict, override: str) -> str:
    """The resolved runtime version (override, else the image tag) when >= 1.5.0, else ""."""
    if override:
        m = _TAG.match(override)
    else:
        ref = str(main.get("image") or "").strip().split("@")[0]
        tag = ref[ref.rfind(":") + 1:] if ref.rfind(":") > ref.rfind("/") else ""
        m = _TAG.match(tag.strip())
    if not m:
        return ""
    major, minor, patch = (int(x) for x in m.groups())
    return f"{major}.{minor}.{patch}" if (major, minor, patch) >= MIN_HASHED_RUNTIME else ""


def compute(dgd: dict, backend_framework: str, operator_version: str = "1.5.0") -> str:
    """The first 8 hex digits of SHA-256 over ``hash_input``."""
    return sha256_hex(hash_input(dgd, backend_framework, operator_version).encode())[:8]


def hash_input(dgd: dict, backend_framework: str, operator_version: str = "1.5.0") -> str:
    """What the operator hashes for the worker hash of a stored v1beta1 DGD (CRD defaults and the webhook applied):
    SHA-256 over Go's JSON of every worker DCD the operator generates, first 8 hex digits.
    ``backend_framework``: the DGD-wide framework the DCDs carry (``spec.backendFramework`` or the
    one detected from the worker components, "" for none)."""
    import json

    from kubectl_dynamo.operator import goencode
    from kubectl_dynamo.operator.components import dynamo_namespace
    from kubectl_dynamo.operator.objects import (
        LABEL_BASE_MODEL_HASH,
        LABEL_COMPONENT_CLASS,
        LABEL_SUB_COMPONENT_TYPE,
        _alpha,
        _model_hash,
    )
    from kubectl_dynamo.operator.podspec import main_container_of

    v16 = versions.at_least(operator_version, api.ROLE_TEMPLATES_SINCE)
    meta, spec = dgd["metadata"], dgd["spec"]
    annotations = meta.get("annotations") or {}
    name, namespace = meta["name"], meta.get("namespace") or "default"
    components = spec.get("components") or []
    has_epp = any(c.get("type") == "epp" for c in components)
    entries = {}
    for comp in components:
        if comp.get("type") not in api.WORKER_TYPES:
            continue
        c = json.loads(json.dumps(comp))  # plain data (YAML): faster than deepcopy
        cname = c.get("name") or ""
        dyn_ns = dynamo_namespace(namespace, name, bool(c.get("globalDynamoNamespace")))
        # 1.6 role-template mode: the DCD carries the roles' templates and no component template
        # (tu-kim/dynamo@3f3d3dfa internal/dynamo/graph.go, v1beta1_helpers.go HasRolePodTemplates).
        role_mode = v16 and not c.get("podTemplate") and any(
            isinstance(r, dict) and r.get("podTemplate") for r in c.get("roles") or [])
        templates = [r["podTemplate"] for r in c["roles"] if r.get("podTemplate")] if role_mode else [
            c.setdefault("podTemplate", {})]
        dcd_labels = {**({} if role_mode else ((templates[0].get("metadata") or {}).get("labels") or {})),
                      api.LABEL_COMPONENT: cname, api.LABEL_DYNAMO_NAMESPACE: dyn_ns, api.LABEL_DGD: name,
                      api.LABEL_WORKER_HASH: HASH_PLACEHOLDER_VALUE}
        if has_epp:
            dcd_labels[LABEL_COMPONENT_CLASS] = "worker"
        for tpl in templates:
            _template_defaults(tpl, spec, annotations, has_epp, v16)
        tpl = templates[0]
        labels = {} if role_mode else tpl["metadata"]["labels"]
        tann = {} if role_mode else tpl["metadata"]["annotations"]
        alpha = _alpha(annotations, cname)
        # GetDCDKubeLabels / GetDCDKubeAnnotations
        kube_labels = {**dcd_labels, **(alpha.get("labels") or {}), **labels}
        model = (c.get("modelRef") or {}).get("name")
        if model:
            kube_labels[LABEL_BASE_MODEL_HASH] = _model_hash(model)
        sub = c.get("type") if c.get("type") in ("prefill", "decode") else alpha.get("subComponentType")
        if sub:
            kube_labels[LABEL_SUB_COMPONENT_TYPE] = sub
        kube_labels[api.LABEL_COMPONENT] = cname
        kube_labels[api.LABEL_DYNAMO_NAMESPACE] = alpha.get("dynamoNamespace") or dyn_ns
        for key in (api.LABEL_COMPONENT, api.LABEL_DYNAMO_NAMESPACE, api.LABEL_DGD, api.LABEL_WORKER_HASH,
                    LABEL_COMPONENT_CLASS):
            if dcd_labels.get(key):
                kube_labels[key] = dcd_labels[key]
        kube_annotations = {**(alpha.get("annotations") or {}), **tann}
        if model:
            kube_annotations["nvidia.com/dynamo-base-model"] = model
        kube_annotations.pop(api.ANN_ORIGIN_VERSION, None)
        for key in (api.ANN_TOPOLOGY_LABEL_KEY, api.ANN_TOPOLOGY_CLUSTER_TOPOLOGY):
            kube_annotations.pop(key, None)
        # The DCD's topology annotations, copied to its pods: both keys (graph.go
        # applyKvTransferPolicyTopologyAnnotations, v1beta1_helpers.go GetDCDKubeAnnotations).
        kv_policy = (spec.get("experimental") or {}).get("kvTransferPolicy") or {}
        for key, field in ((api.ANN_TOPOLOGY_LABEL_KEY, "labelKey"),
                           (api.ANN_TOPOLOGY_CLUSTER_TOPOLOGY, "clusterTopologyName")):
            if kv_policy.get(field):
                kube_annotations[key] = kv_policy[field]
        override = c.get("runtimeVersionOverride") or ""
        # Role mode: no component template, so only an override resolves (runtimeversion.Resolve).
        runtime = _runtime_version({} if role_mode else main_container_of(tpl) or {}, override)
        role_runtimes = {r["name"]: v for r in c.get("roles") or [] if r.get("podTemplate") for v in [
            _runtime_version(main_container_of(r["podTemplate"]) or {}, override)] if v} if role_mode else {}
        for key in ("replicas", "minAvailable", "scalingAdapter", "runtimeVersionOverride"):
            c.pop(key, None)
        if v16:
            _hash_spec_16(c, backend_framework)
        entries[cname] = {"labels": kube_labels, "annotations": kube_annotations, "runtimeVersion": runtime,
                          "roleRuntimeVersions": role_runtimes, "spec": {"backendFramework": backend_framework, **c}}
    root = _layout_16() if v16 else goencode.layout()["root"]
    parts = []
    for cname in sorted(entries):
        e = entries[cname]
        fields = []
        if e["labels"]:
            fields.append('"labels":' + goencode.encode(e["labels"], "map[string"))
        if e["annotations"]:
            fields.append('"annotations":' + goencode.encode(e["annotations"], "map[string"))
        if e["runtimeVersion"]:
            fields.append('"runtimeVersion":' + goencode.encode(e["runtimeVersion"], "string"))
        if e["roleRuntimeVersions"]:
            fields.append('"roleRuntimeVersions":' + goencode.encode(e["roleRuntimeVersions"], "map[string"))
        fields.append('"spec":' + goencode.encode(e["spec"], root))
        parts.append(goencode.encode(cname, "string") + ":{" + ",".join(fields) + "}")
    return "{" + ",".join(parts) + "}"


def _template_defaults(tpl: dict, spec: dict, annotations: dict, has_epp: bool, v16: bool = False) -> None:
    """What the generated worker DCD's pod template holds (``GenerateDynamoComponentsDeployments``:
    the worker-hash label, then ``applyDGDTemplateDefaults``): DGD env under the main container's,
    the kvTransferPolicy wiring, propagated DGD annotations, spec annotations and labels beneath."""
    from kubectl_dynamo.operator.podspec import (
        applies_kv_transfer_policy,
        apply_kv_transfer_policy,
        main_container_of,
        merge_envs,
    )

    tmeta = tpl.setdefault("metadata", {})
    labels = tmeta.setdefault("labels", {})
    tann = tmeta.setdefault("annotations", {})
    labels[api.LABEL_WORKER_HASH] = HASH_PLACEHOLDER_VALUE
    if has_epp:
        labels["nvidia.com/dynamo-component-class"] = "worker"
    kv_policy = (spec.get("experimental") or {}).get("kvTransferPolicy") or {}
    if spec.get("env") or applies_kv_transfer_policy(kv_policy):
        main = main_container_of(tpl)
        if main is None:
            main = {"name": "main"}
            tpl.setdefault("spec", {}).setdefault("containers", []).insert(0, main)
        if spec.get("env"):
            main["env"] = merge_envs(spec["env"], main.get("env") or [])
        if applies_kv_transfer_policy(kv_policy):  # applyKvTransferPolicyToWorkerComponent
            apply_kv_transfer_policy(main, tpl.setdefault("spec", {}), kv_policy)
    if v16:  # spec metadata first, then the DGD's (origin version always the DGD's)
        for k, v in (spec.get("annotations") or {}).items():
            tann.setdefault(k, v)
        tann.pop(api.ANN_ORIGIN_VERSION, None)
    for key in api.PROPAGATED_ANNOTATIONS:
        if key in annotations and key not in tann:
            tann[key] = annotations[key]
    for k, v in (spec.get("annotations") or {}).items():
        tann.setdefault(k, v)
    for k, v in (spec.get("labels") or {}).items():
        labels.setdefault(k, v)


def _hash_spec_16(c: dict, backend_framework: str) -> None:
    """1.6 ``workerHashSpec``'s normalisations (tu-kim/dynamo@3f3d3dfa internal/dynamo/hash.go): role
    replicas dropped on multinode components, roles that only restate the implicit leader/worker
    dropped (``ExplicitMultinodeRolesMatchImplicit``), other roles sorted by name, an empty
    ``experimental.grove`` / disabled checkpoint / empty ``experimental`` dropped, the backend's
    default compilation-cache path written as none."""
    from kubectl_dynamo.operator import vllm

    roles = c.get("roles")
    if roles:
        if c.get("multinode") is not None:
            roles = c["roles"] = [{k: v for k, v in r.items() if k != "replicas"} for r in roles]
        if _roles_match_implicit(c):
            c.pop("roles")
        else:
            c["roles"] = sorted(roles, key=lambda r: r.get("name") or "")
    exp = c.get("experimental")
    if isinstance(exp, dict):
        exp = dict(exp)
        if exp.get("grove") is not None and not (exp["grove"] or {}).get("forceScalingGroup"):
            exp.pop("grove")
        if exp.get("checkpoint") is not None and not (exp["checkpoint"] or {}).get("enabled"):
            exp.pop("checkpoint")
        if any(v is not None for v in exp.values()):
            c["experimental"] = exp
        else:
            c.pop("experimental")
    cache = c.get("compilationCache")
    if isinstance(cache, dict) and backend_framework == "vllm" and cache.get("mountPath") == vllm.DEFAULT_CACHE_PATH:
        c["compilationCache"] = {k: v for k, v in cache.items() if k != "mountPath"}


def _roles_match_implicit(c: dict) -> bool:
    roles, multinode = c.get("roles") or [], c.get("multinode")
    if multinode is None or len(roles) != 2:
        return False
    expected = {"leader": 1, "worker": (multinode.get("nodeCount") or 0) - 1}
    seen = set()
    for r in roles:
        name = r.get("name")
        if name in seen or name not in expected or r.get("providerOverride") is not None or r.get("podTemplate") is not None:
            return False
        seen.add(name)
        if r.get("replicas") is not None and r["replicas"] != expected[name]:
            return False
    return True


def _layout_16() -> str:
    """The 1.6 DCD spec's Go layout: the 1.5 one with ``roles`` after ``multinode`` (the Dynamo 1.6
    ``ComponentRoleSpec``: name, replicas, providerOverride, podTemplate; tu-kim/dynamo@3f3d3dfa
    api/v1beta1 as its deepcopy names them). Registered once under new type names."""
    from kubectl_dynamo.operator import goencode

    types = goencode.layout()["types"]
    if "dynamo16.DynamoComponentDeploymentSpec" not in types:
        types["dynamo16.ComponentRoleSpec"] = [["name", "string"], ["replicas", "*int32", "omitempty"],
                                              ["providerOverride", "*dynamo.ProviderOverride", "omitempty"],
                                              ["podTemplate", "*core.PodTemplateSpec", "omitempty"]]
        shared: list = []
        for field in types["dynamo.DynamoComponentDeploymentSharedSpec"]:
            shared.append(field)
            if field[0] == "multinode":
                shared.append(["roles", "[]dynamo16.ComponentRoleSpec", "omitempty"])
        types["dynamo16.DynamoComponentDeploymentSharedSpec"] = shared
        types["dynamo16.DynamoComponentDeploymentSpec"] = [
            f if f[0] != "DynamoComponentDeploymentSharedSpec" else
            ["DynamoComponentDeploymentSharedSpec", "dynamo16.DynamoComponentDeploymentSharedSpec", "inline"]
            for f in types[goencode.layout()["root"]]]
    return "dynamo16.DynamoComponentDeploymentSpec"


def dgd_backend_conflict(spec: dict, operator_version: str = "1.5.0") -> Optional[str]:
    """The operator's error when the worker components run two frameworks and spec.backendFramework
    names none: it refuses the whole DGD computing its worker hash (ai-dynamo/dynamo@2a6da14c
    internal/dynamo/graph.go backendFrameworkForGeneratedDCDs)."""
    from kubectl_dynamo.operator.flags import component_backend_framework

    if spec.get("backendFramework"):
        return None
    found = ""
    for comp in spec.get("components") or []:
        if comp.get("type") not in api.WORKER_TYPES:
            continue
        fw, err = component_backend_framework(comp, None, operator_version)
        if err:
            return None  # the component's own error, reported with the component
        if fw in ("", api.NOOP):
            continue
        if found and found != fw:
            return f"multiple backend frameworks detected for generated DynamoComponentDeployments: {found} and {fw}"
        found = fw
    return None


def dgd_backend_framework(spec: dict, operator_version: str = "1.5.0") -> Optional[str]:
    """``backendFrameworkForGeneratedDCDs``: spec.backendFramework, else the one framework detected
    in the worker components ("" for none); None when the operator would fail (two frameworks)."""
    from kubectl_dynamo.operator.flags import component_backend_framework

    if spec.get("backendFramework"):
        return spec["backendFramework"]
    found = ""
    for comp in spec.get("components") or []:
        if comp.get("type") not in api.WORKER_TYPES:
            continue
        fw, err = component_backend_framework(comp, None, operator_version)
        if err:
            return None
        if fw in ("", api.NOOP):
            continue
        if found and found != fw:
            return None
        found = fw
    return found
