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
from typing import Mapping, Optional

from kubectl_dynamo.operator import api
from kubectl_dynamo.operator.goencode import sha256_hex

PLACEHOLDER = "<worker-hash>"
ANN_V1 = "nvidia.com/current-worker-hash"


def stored(annotations: Optional[Mapping[str, str]]) -> Optional[str]:
    """The active generation suffix the operator stored on a DGD (v1 while a legacy generation is
    still active, else v2), or None for a DGD the operator has not reconciled yet."""
    annotations = annotations or {}
    return annotations.get(ANN_V1) or annotations.get(api.ANN_WORKER_HASH_V2) or None


def for_dgd(dgd: dict) -> str:
    """What explain renders for a stored v1beta1 DGD (CRD defaults and webhook applied): the suffix
    the operator stored on it, else the hash it computes for a new DGD, else (a DGD the operator
    refuses to generate DCDs for) the placeholder."""
    value = stored((dgd.get("metadata") or {}).get("annotations"))
    if value:
        return value
    backend = dgd_backend_framework(dgd.get("spec") or {})
    return PLACEHOLDER if backend is None else compute(dgd, backend)


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


def compute(dgd: dict, backend_framework: str) -> str:
    """The first 8 hex digits of SHA-256 over ``hash_input``."""
    return sha256_hex(hash_input(dgd, backend_framework).encode())[:8]


def hash_input(dgd: dict, backend_framework: str) -> str:
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
    from kubectl_dynamo.operator.podspec import main_container_of, merge_envs

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
        tpl = c.setdefault("podTemplate", {})
        tmeta = tpl.setdefault("metadata", {})
        labels = tmeta.setdefault("labels", {})
        tann = tmeta.setdefault("annotations", {})
        dcd_labels = {**labels, api.LABEL_COMPONENT: cname, api.LABEL_DYNAMO_NAMESPACE: dyn_ns, api.LABEL_DGD: name,
                      api.LABEL_WORKER_HASH: HASH_PLACEHOLDER_VALUE}
        labels[api.LABEL_WORKER_HASH] = HASH_PLACEHOLDER_VALUE
        if has_epp:
            dcd_labels[LABEL_COMPONENT_CLASS] = labels[LABEL_COMPONENT_CLASS] = "worker"
        if spec.get("env"):  # applyDGDTemplateDefaults
            main = main_container_of(tpl)
            if main is None:
                main = {"name": "main"}
                tpl.setdefault("spec", {}).setdefault("containers", []).insert(0, main)
            main["env"] = merge_envs(spec["env"], main.get("env") or [])
        for key in api.PROPAGATED_ANNOTATIONS:
            if key in annotations and key not in tann:
                tann[key] = annotations[key]
        for k, v in (spec.get("annotations") or {}).items():
            tann.setdefault(k, v)
        for k, v in (spec.get("labels") or {}).items():
            labels.setdefault(k, v)
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
        runtime = _runtime_version(main_container_of(tpl) or {}, c.get("runtimeVersionOverride") or "")
        for key in ("replicas", "minAvailable", "scalingAdapter", "runtimeVersionOverride"):
            c.pop(key, None)
        entries[cname] = {"labels": kube_labels, "annotations": kube_annotations, "runtimeVersion": runtime,
                          "spec": {"backendFramework": backend_framework, **c}}
    root = goencode.layout()["root"]
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
        fields.append('"spec":' + goencode.encode(e["spec"], root))
        parts.append(goencode.encode(cname, "string") + ":{" + ",".join(fields) + "}")
    return "{" + ",".join(parts) + "}"


def dgd_backend_framework(spec: dict) -> Optional[str]:
    """``backendFrameworkForGeneratedDCDs``: spec.backendFramework, else the one framework detected
    in the worker components ("" for none); None when the operator would fail (two frameworks)."""
    from kubectl_dynamo.operator.flags import determine_backend_framework
    from kubectl_dynamo.operator.podspec import main_container_of

    if spec.get("backendFramework"):
        return spec["backendFramework"]
    found = ""
    for comp in spec.get("components") or []:
        if comp.get("type") not in api.WORKER_TYPES:
            continue
        main = main_container_of(comp.get("podTemplate")) or {}
        fw, err = determine_backend_framework(comp["type"], main.get("command") or [], main.get("args") or [], None)
        if err:
            return None
        if fw in ("", api.NOOP):
            continue
        if found and found != fw:
            return None
        found = fw
    return found
