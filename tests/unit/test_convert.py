"""v1alpha1 -> v1beta1 DGD conversion (kubectl_dynamo.operator.convert)."""

from __future__ import annotations

import copy
import functools
import io
import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from ruamel.yaml import YAML

from kubectl_dynamo.operator.api import V1ALPHA1 as API_V1ALPHA1
from kubectl_dynamo.operator.api import V1BETA1 as API_V1BETA1
from kubectl_dynamo.operator.convert import ANN_DGD_SPEC, is_dgd, to_v1beta1

REPO = Path(__file__).resolve().parents[2]
CRD = REPO / "kubectl_dynamo" / "data" / "crds" / "nvidia.com_dynamographdeployments.yaml"
CORPUS = REPO / "tests" / "data" / "corpus"


# ---------------------------------------------------------------- CRD schema as JSON Schema

def _to_json_schema(node):
    """OpenAPI v3 (structural CRD schema) -> JSON Schema draft 4, strict about unknown fields
    (the API server prunes them; for a generated manifest we want to know)."""
    if isinstance(node, list):
        return [_to_json_schema(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _to_json_schema(v) for k, v in node.items()
           if not k.startswith("x-kubernetes-") and k != "nullable"}
    if node.get("x-kubernetes-int-or-string") and "anyOf" not in out:
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    if ("properties" in node and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    return out


@functools.cache
def crd_schema(version: str) -> dict:
    crd = yaml.safe_load(CRD.read_text())
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return _to_json_schema(v["schema"]["openAPIV3Schema"])
    raise KeyError(version)


def schema_errors(doc, version="v1beta1"):
    validator = jsonschema.Draft4Validator(crd_schema(version))
    return sorted(f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
                  for e in validator.iter_errors(json.loads(json.dumps(doc))))


# ---------------------------------------------------------------- helpers

def dgd(services=None, **spec):
    d = {
        "apiVersion": API_V1ALPHA1,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": dict(spec),
    }
    if services is not None:
        d["spec"]["services"] = services
    return d


def svc(**kw):
    base = {"extraPodSpec": {"mainContainer": {"image": "img:1.0.0"}}}
    base.update(kw)
    return base


def convert(doc, **kw):
    out, problems = to_v1beta1(doc, **kw)
    return out, problems


def comp(out, name):
    return next(c for c in out["spec"]["components"] if c["name"] == name)


def main_of(component):
    return next(c for c in component["podTemplate"]["spec"]["containers"] if c["name"] == "main")


def paths(problems, severity=None):
    return [p["path"] for p in problems if severity in (None, p["severity"])]


# ---------------------------------------------------------------- API basics

def test_is_dgd():
    assert is_dgd(dgd({}))
    assert is_dgd({**dgd({}), "apiVersion": API_V1BETA1})
    assert not is_dgd({"apiVersion": "v1", "kind": "ConfigMap"})
    assert not is_dgd(None)
    assert not is_dgd({"apiVersion": "other.io/v1", "kind": "DynamoGraphDeployment"})


def test_rejects_non_dgd_and_unknown_version():
    with pytest.raises(ValueError):
        to_v1beta1({"apiVersion": "v1", "kind": "Pod"})
    with pytest.raises(ValueError):
        to_v1beta1({**dgd({}), "apiVersion": "nvidia.com/v2"})


def test_v1beta1_returned_unchanged():
    doc = {"apiVersion": API_V1BETA1, "kind": "DynamoGraphDeployment", "metadata": {"name": "x"},
           "spec": {"components": [{"name": "a", "type": "worker"}]}}
    out, problems = to_v1beta1(doc)
    assert out is doc and problems == []


def test_idempotent():
    doc = dgd({"w": svc(componentType="worker", envs=[{"name": "A", "value": "1"}])})
    once, _ = to_v1beta1(doc)
    twice, problems = to_v1beta1(once)
    assert twice == once and problems == []


def test_input_not_mutated():
    doc = dgd({"w": svc(componentType="worker", subComponentType="prefill",
                        envs=[{"name": "A", "value": "1"}], resources={"limits": {"gpu": "1"}},
                        labels={"x": "y"})},
              pvcs=[{"name": "p", "create": False}])
    before = copy.deepcopy(doc)
    to_v1beta1(doc, force=True)
    assert doc == before


def test_metadata_and_top_level_kept():
    doc = dgd({"w": svc()})
    doc["metadata"] = {"name": "g", "namespace": "ns", "labels": {"a": "b"},
                       "annotations": {"nvidia.com/enable-grove": "false"}}
    out, _ = convert(doc)
    assert out["apiVersion"] == API_V1BETA1
    assert out["kind"] == "DynamoGraphDeployment"
    assert out["metadata"] is doc["metadata"]
    assert list(out) == ["apiVersion", "kind", "metadata", "spec"]


# ---------------------------------------------------------------- graph-level spec

def test_graph_level_fields():
    doc = dgd({"w": svc()}, envs=[{"name": "E", "value": "v"}], backendFramework="vllm",
              annotations={"a": "1"}, labels={"l": "2"}, priorityClassName="high",
              restart={"id": "r1", "strategy": {"type": "Parallel"}},
              experimental={"kvTransferPolicy": {"domain": "rack"}},
              topologyConstraint={"topologyProfile": "prof", "packDomain": "rack"},
              providerOverride={"apiVersion": "grove.io/v1alpha1", "value": {"a": 1}})
    out, problems = convert(doc)
    spec = out["spec"]
    assert spec["env"] is doc["spec"]["envs"]
    assert "envs" not in spec
    for k in ("backendFramework", "annotations", "labels", "priorityClassName", "restart",
              "experimental", "providerOverride"):
        assert spec[k] == doc["spec"][k]
    assert spec["topologyConstraint"] == {"clusterTopologyName": "prof", "packDomain": "rack"}
    assert "services" not in spec
    assert problems == []


def test_pvcs_have_no_home():
    pvcs = [{"name": "cache", "create": True, "size": "10Gi", "storageClass": "s",
             "volumeAccessMode": "ReadWriteMany"}]
    out, problems = convert(dgd({"w": svc()}, pvcs=pvcs))
    assert "pvcs" not in out["spec"]
    assert problems[0]["path"] == "spec.pvcs" and problems[0]["severity"] == "error"
    assert ANN_DGD_SPEC not in (out["metadata"].get("annotations") or {})


def test_force_keeps_pvcs_in_annotation():
    pvcs = [{"name": "cache", "create": True, "size": "10Gi"}]
    out, problems = convert(dgd({"w": svc()}, pvcs=pvcs), force=True)
    assert [p["severity"] for p in problems] == ["warning"]
    saved = json.loads(out["metadata"]["annotations"][ANN_DGD_SPEC])
    assert saved == {"version": 1, "spec": {"pvcs": pvcs}}


def test_unknown_fields_are_reported():
    doc = dgd({"w": svc(replica=2)}, bogus=1)
    out, problems = convert(doc)
    assert set(paths(problems, "error")) == {"spec.bogus", "spec.services.w.replica"}
    assert "bogus" not in out["spec"] and "replica" not in comp(out, "w")
    _, problems = convert(doc, force=True)
    assert {p["severity"] for p in problems} == {"warning"}


# ---------------------------------------------------------------- components list

def test_services_become_sorted_components():
    doc = dgd({"b": svc(), "Frontend": svc(componentType="frontend"), "a": svc()})
    out, _ = convert(doc)
    assert [c["name"] for c in out["spec"]["components"]] == ["Frontend", "a", "b"]
    assert list(comp(out, "a"))[:1] == ["name"]


def test_service_name_is_map_key():
    out, problems = convert(dgd({"w": svc(serviceName="other")}))
    assert comp(out, "w")["name"] == "w"
    assert paths(problems, "error") == ["spec.services.w.serviceName"]
    out, problems = convert(dgd({"w": svc(serviceName="w")}))
    assert paths(problems, "error") == [] and paths(problems, "warning") == ["spec.services.w.serviceName"]


def test_invalid_component_name():
    _, problems = convert(dgd({"my_worker": svc()}))
    assert paths(problems, "error") == ["spec.services.my_worker"]


def test_null_service():
    out, problems = convert(dgd({"a": None, "b": svc()}))
    assert [c["name"] for c in out["spec"]["components"]] == ["b"]
    assert paths(problems, "error") == ["spec.services.a"]
    out, _ = convert(dgd({"a": None, "b": svc()}), force=True)
    assert json.loads(out["metadata"]["annotations"][ANN_DGD_SPEC])["spec"]["services"] == {"a": None}


@pytest.mark.parametrize("ctype,sub,want", [
    ("worker", "prefill", "prefill"),
    ("worker", "decode", "decode"),
    ("worker", None, "worker"),
    ("frontend", None, "frontend"),
    ("planner", None, "planner"),
    ("epp", None, "epp"),
])
def test_component_type(ctype, sub, want):
    s = svc(componentType=ctype)
    if sub:
        s["subComponentType"] = sub
    out, problems = convert(dgd({"c": s}))
    assert comp(out, "c")["type"] == want
    assert "componentType" not in comp(out, "c") and "subComponentType" not in comp(out, "c")
    assert problems == []


def test_component_type_without_v1beta1_value():
    out, problems = convert(dgd({"c": svc(componentType="default")}))
    assert "type" not in comp(out, "c")
    assert paths(problems, "warning") == ["spec.services.c.componentType"]


def test_sub_component_type_without_promotion():
    out, problems = convert(dgd({"c": svc(componentType="frontend", subComponentType="x")}))
    assert comp(out, "c")["type"] == "frontend"
    assert paths(problems, "error") == ["spec.services.c.subComponentType"]
    out, _ = convert(dgd({"c": svc(componentType="frontend", subComponentType="x")}), force=True)
    saved = json.loads(out["metadata"]["annotations"][ANN_DGD_SPEC])
    assert saved["spec"]["services"] == {"c": {"subComponentType": "x"}}


def test_verbatim_component_fields():
    fields = {
        "replicas": 3, "minAvailable": 1, "globalDynamoNamespace": True,
        "runtimeVersionOverride": "1.4.0",
        "multinode": {"nodeCount": 2, "leader": {"providerOverride": {"apiVersion": "v", "value": {}}}},
        "modelRef": {"name": "m", "revision": "r"},
        "topologyConstraint": {"packDomain": "rack"},
        "eppConfig": {"configMapRef": {"name": "cm", "key": "k"}},
        "providerOverride": {"apiVersion": "leaderworkerset.x-k8s.io/v1", "value": {"x": 1}},
    }
    s = svc(**fields)
    out, problems = convert(dgd({"c": s}))
    c = comp(out, "c")
    for k, v in fields.items():
        assert c[k] is s[k]
    assert problems == []


# ---------------------------------------------------------------- podTemplate

def test_resources_to_main_container():
    s = svc(resources={
        "requests": {"cpu": "1", "memory": "4Gi", "gpu": "1", "custom": {"rdma/ib": "1"}},
        "limits": {"gpu": "2", "gpuType": "nvidia.com/mig-1g.10gb"},
        "claims": [{"name": "c"}],
    })
    out, problems = convert(dgd({"c": s}))
    res = main_of(comp(out, "c"))["resources"]
    assert res == {
        "requests": {"cpu": "1", "memory": "4Gi", "nvidia.com/gpu": "1", "rdma/ib": "1"},
        "limits": {"nvidia.com/mig-1g.10gb": "2"},
        "claims": [{"name": "c"}],
    }
    assert problems == []


def test_invalid_quantity_has_no_home():
    out, problems = convert(dgd({"c": svc(resources={"limits": {"gpu": "lots"}})}))
    assert "resources" not in main_of(comp(out, "c"))
    assert paths(problems, "error") == ["spec.services.c.resources.limits.gpu"]
    out, problems = convert(dgd({"c": svc(resources={"limits": {"gpu": "lots"}})}), force=True)
    saved = json.loads(out["metadata"]["annotations"][ANN_DGD_SPEC])
    assert saved["spec"]["services"]["c"]["resources"] == {"limits": {"gpu": "lots"}}


def test_envs_secret_probes():
    probe = {"httpGet": {"path": "/live", "port": 9090}, "periodSeconds": 5}
    s = svc(envs=[{"name": "A", "value": "1"}], envFromSecret="hf", livenessProbe=probe,
            readinessProbe={"exec": {"command": ["true"]}})
    out, _ = convert(dgd({"c": s}))
    main = main_of(comp(out, "c"))
    assert main["name"] == "main" and main["image"] == "img:1.0.0"
    assert main["env"] is s["envs"]
    assert main["envFrom"] == [{"secretRef": {"name": "hf"}}]
    assert main["livenessProbe"] is probe
    assert main["readinessProbe"] == {"exec": {"command": ["true"]}}


def test_main_container_merge_precedence():
    s = svc(
        envs=[{"name": "A", "value": "svc"}, {"name": "B", "value": "svc"}],
        envFromSecret="hf",
        resources={"limits": {"gpu": "1", "cpu": "2"}},
        volumeMounts=[{"name": "models", "mountPoint": "/models"}],
        livenessProbe={"httpGet": {"path": "/a", "port": 1}, "periodSeconds": 5},
        extraPodSpec={"mainContainer": {
            "name": "mine",
            "image": "img:1.0.0",
            "env": [{"name": "B", "value": "main"}, {"name": "C", "value": "main"}],
            "envFrom": [{"configMapRef": {"name": "cm"}}],
            "resources": {"limits": {"cpu": "4"}},
            "volumeMounts": [{"name": "cfg", "mountPath": "/cfg"}],
            "livenessProbe": {"periodSeconds": 10},
        }},
    )
    out, problems = convert(dgd({"c": s}))
    main = main_of(comp(out, "c"))
    assert main["name"] == "main"
    # env is additive, mainContainer wins per name, in place.
    assert main["env"] == [{"name": "A", "value": "svc"}, {"name": "B", "value": "main"},
                           {"name": "C", "value": "main"}]
    # a non-empty mainContainer list replaces the dedicated one (mergo WithOverride).
    assert main["envFrom"] == [{"configMapRef": {"name": "cm"}}]
    # maps merge key by key.
    assert main["resources"] == {"limits": {"nvidia.com/gpu": "1", "cpu": "4"}}
    assert main["livenessProbe"] == {"httpGet": {"path": "/a", "port": 1}, "periodSeconds": 10}
    # mainContainer mounts first, then the service-level ones.
    assert main["volumeMounts"] == [{"name": "cfg", "mountPath": "/cfg"},
                                    {"name": "models", "mountPath": "/models"}]
    assert paths(problems, "warning") == ["spec.services.c.extraPodSpec.mainContainer.name"]


def test_empty_main_container_fields_do_not_override():
    s = svc(resources={"limits": {"gpu": "1"}})
    s["extraPodSpec"]["mainContainer"]["resources"] = {}
    out, _ = convert(dgd({"c": s}))
    assert main_of(comp(out, "c"))["resources"] == {"limits": {"nvidia.com/gpu": "1"}}


def test_extra_pod_spec_and_metadata():
    s = svc(
        extraPodMetadata={"annotations": {"a": "1"}, "labels": {"l": "2"}},
        extraPodSpec={
            "tolerations": [{"key": "k", "operator": "Exists"}],
            "mainContainer": {"image": "img:1.0.0", "args": ["--model", "m"]},
            "containers": [{"name": "side", "image": "s"}, {"name": "main", "image": "dup"}],
            "volumes": [{"name": "cfg", "configMap": {"name": "cm"}}],
        },
    )
    out, problems = convert(dgd({"c": s}))
    tpl = comp(out, "c")["podTemplate"]
    assert tpl["metadata"] == {"annotations": {"a": "1"}, "labels": {"l": "2"}}
    assert list(tpl["spec"]) == ["tolerations", "containers", "volumes"]
    assert [c["name"] for c in tpl["spec"]["containers"]] == ["main", "side"]
    assert tpl["spec"]["containers"][0]["args"] is s["extraPodSpec"]["mainContainer"]["args"]
    assert tpl["spec"]["volumes"] is s["extraPodSpec"]["volumes"]
    assert paths(problems, "error") == ["spec.services.c.extraPodSpec.containers[1]"]


def test_no_pod_template_without_pod_content():
    out, problems = convert(dgd({"c": {"componentType": "worker", "replicas": 1}}))
    assert "podTemplate" not in comp(out, "c")
    # v1beta1 admission wants a main image on new components: say so.
    assert paths(problems, "warning") == ["spec.services.c.extraPodSpec.mainContainer.image"]


def test_volume_mounts_and_compilation_cache():
    s = svc(volumeMounts=[
        {"name": "models", "mountPoint": "/models"},
        {"name": "cache", "mountPoint": "/root/.cache/vllm", "useAsCompilationCache": True},
    ])
    out, problems = convert(dgd({"c": s}))
    c = comp(out, "c")
    assert c["compilationCache"] == {"pvcName": "cache", "mountPath": "/root/.cache/vllm"}
    assert main_of(c)["volumeMounts"] == [{"name": "models", "mountPath": "/models"},
                                          {"name": "cache", "mountPath": "/root/.cache/vllm"}]
    assert "volumes" not in c["podTemplate"]["spec"]  # the operator adds PVC volumes for mounts
    assert problems == []


def test_compilation_cache_without_mount_point_uses_backend_default():
    s = {"componentType": "worker",
         "volumeMounts": [{"name": "cache", "useAsCompilationCache": True}]}
    out, problems = convert(dgd({"c": s}))
    c = comp(out, "c")
    assert c["compilationCache"] == {"pvcName": "cache"}
    assert "podTemplate" not in c  # a cache-only mount builds no podTemplate (upstream)
    assert paths(problems, "error") == []


def test_second_compilation_cache():
    s = svc(volumeMounts=[
        {"name": "a", "mountPoint": "/a", "useAsCompilationCache": True},
        {"name": "b", "mountPoint": "/b", "useAsCompilationCache": True},
    ])
    out, problems = convert(dgd({"c": s}))
    assert comp(out, "c")["compilationCache"] == {"pvcName": "a", "mountPath": "/a"}
    assert paths(problems) == ["spec.services.c.volumeMounts[1].useAsCompilationCache"]


@pytest.mark.parametrize("shm,want,severities", [
    ({"size": "16Gi"}, "16Gi", []),
    ({"disabled": True}, "0", []),
    ({"disabled": True, "size": "1Gi"}, "0", ["warning"]),
    ({"size": "0"}, None, ["warning"]),
])
def test_shared_memory(shm, want, severities):
    out, problems = convert(dgd({"c": svc(sharedMemory=shm)}))
    assert comp(out, "c").get("sharedMemorySize") == want
    assert "sharedMemory" not in comp(out, "c")
    assert [p["severity"] for p in problems] == severities


def test_frontend_sidecar():
    s = svc(componentType="epp", frontendSidecar={
        "image": "fe:1", "args": ["-m", "dynamo.frontend"], "envFromSecret": "hf",
        "envs": [{"name": "X", "value": "1"}]})
    out, problems = convert(dgd({"c": s}))
    c = comp(out, "c")
    assert c["frontendSidecar"] == "sidecar-frontend"
    assert c["podTemplate"]["spec"]["containers"][1] == {
        "name": "sidecar-frontend", "image": "fe:1", "args": ["-m", "dynamo.frontend"],
        "envFrom": [{"secretRef": {"name": "hf"}}], "env": [{"name": "X", "value": "1"}]}
    assert problems == []


def test_experimental():
    s = svc(
        gpuMemoryService={"enabled": True, "mode": "interPod", "deviceClassName": "gpu.nvidia.com"},
        failover={"enabled": True, "mode": "intraPod", "numShadows": 1},
        checkpoint={"mode": "Auto", "checkpointRef": "ck"},
    )
    out, problems = convert(dgd({"c": s}))
    assert comp(out, "c")["experimental"] == {
        "gpuMemoryService": {"mode": "InterPod", "deviceClassName": "gpu.nvidia.com"},
        "failover": {"mode": "IntraPod", "numShadows": 1},
        "checkpoint": {"enabled": False, "mode": "Auto", "checkpointRef": "ck"},
    }
    assert problems == []


def test_disabled_features_are_absence():
    s = svc(gpuMemoryService={"enabled": False}, failover={"enabled": False},
            scalingAdapter={"enabled": False})
    out, problems = convert(dgd({"c": s}))
    c = comp(out, "c")
    assert "experimental" not in c and "scalingAdapter" not in c
    assert sorted(paths(problems, "warning")) == [
        "spec.services.c.failover", "spec.services.c.gpuMemoryService",
        "spec.services.c.scalingAdapter"]


def test_scaling_adapter_enabled_is_presence():
    out, _ = convert(dgd({"c": svc(scalingAdapter={"enabled": True})}))
    assert comp(out, "c")["scalingAdapter"] == {}


@pytest.mark.parametrize("field,value,severity", [
    ("annotations", {"a": "b"}, "error"),
    ("labels", {"a": "b"}, "error"),
    ("ingress", {"enabled": True, "host": "h"}, "error"),
    ("dynamoNamespace", "ns", "warning"),
    ("autoscaling", {"enabled": True}, "warning"),
])
def test_alpha_only_component_fields(field, value, severity):
    out, problems = convert(dgd({"c": svc(**{field: value})}))
    assert field not in comp(out, "c")
    assert [(p["path"], p["severity"]) for p in problems] == [(f"spec.services.c.{field}", severity)]
    out, problems = convert(dgd({"c": svc(**{field: value})}), force=True)
    assert [p["severity"] for p in problems] == ["warning"]
    saved = json.loads(out["metadata"]["annotations"][ANN_DGD_SPEC])
    assert saved["spec"]["services"]["c"] == {field: value}


def test_force_annotation_merges_with_existing_annotations():
    doc = dgd({"c": svc(labels={"a": "b"})})
    doc["metadata"]["annotations"] = {"keep": "me"}
    out, _ = convert(doc, force=True)
    assert list(out["metadata"]["annotations"]) == ["keep", ANN_DGD_SPEC]
    assert doc["metadata"]["annotations"] == {"keep": "me"}


def test_stale_conversion_annotation_is_removed():
    doc = dgd({"c": svc()})
    doc["metadata"]["annotations"] = {ANN_DGD_SPEC: "{}", "keep": "me"}
    out, problems = convert(doc)
    assert out["metadata"]["annotations"] == {"keep": "me"}
    assert paths(problems, "error") == [f"metadata.annotations.{ANN_DGD_SPEC}"]


def test_status_conversion():
    doc = dgd({"c": svc()})
    doc["status"] = {"state": "successful",
                     "services": {"c": {"componentKind": "Deployment", "componentName": "g-c",
                                        "replicas": 1, "updatedReplicas": 1}},
                     "rollingUpdate": {"phase": "Completed", "updatedServices": ["c"]}}
    out, _ = convert(doc)
    assert out["status"]["components"] == {"c": {"componentKind": "Deployment", "replicas": 1,
                                                 "updatedReplicas": 1, "componentNames": ["g-c"]}}
    assert out["status"]["rollingUpdate"] == {"phase": "Completed", "updatedComponents": ["c"]}
    assert schema_errors(out) == []


def test_converted_docs_validate():
    s = svc(componentType="worker", subComponentType="decode",
            envs=[{"name": "A", "value": "1"}], envFromSecret="hf",
            resources={"limits": {"gpu": "1"}}, sharedMemory={"size": "8Gi"},
            volumeMounts=[{"name": "c", "mountPoint": "/c", "useAsCompilationCache": True}],
            multinode={"nodeCount": 2}, checkpoint={"enabled": True},
            frontendSidecar={"image": "fe"}, scalingAdapter={"enabled": True},
            labels={"x": "y"}, dynamoNamespace="old")
    doc = dgd({"w": s}, pvcs=[{"name": "c", "create": False}], envs=[{"name": "G", "value": "1"}])
    assert schema_errors(doc, "v1alpha1") == []
    for force in (False, True):
        out, _ = convert(doc, force=force)
        assert schema_errors(out) == []


# ---------------------------------------------------------------- ruamel round trip

COMMENTED = """\
# header comment
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata:
  name: demo  # metadata comment
  namespace: ns
spec:
  backendFramework: vllm  # backend comment
  envs:
    - name: GLOBAL  # global env comment
      value: "1"
  services:
    VllmWorker:
      componentType: worker
      subComponentType: decode
      replicas: 2  # replicas comment
      envs:
        - name: HF_HOME  # env entry comment
          value: /cache
      resources:
        limits:
          gpu: "1"
      extraPodSpec:
        mainContainer:
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.1
          args:
            - --model
            - Qwen/Qwen3-0.6B  # model arg comment
"""


def _rt_yaml():
    y = YAML(typ="rt")
    # Without this ruamel writes "yes"/"on" unquoted (plain strings in YAML 1.2), which
    # YAML 1.1 readers such as kubectl and PyYAML take for booleans.
    y.preserve_quotes = True
    return y


def _rt_convert(text, **kw):
    y = _rt_yaml()
    doc = y.load(text)
    out, problems = to_v1beta1(doc, **kw)
    buf = io.StringIO()
    y.dump(out, buf)
    return doc, out, buf.getvalue(), problems


def test_ruamel_comments_survive():
    doc, out, text, problems = _rt_convert(COMMENTED)
    for comment in ("# header comment", "# metadata comment", "# backend comment",
                    "# global env comment", "# replicas comment", "# env entry comment",
                    "# model arg comment"):
        assert comment in text, comment
    assert type(out) is type(doc)
    assert type(out["spec"]["components"][0]) is type(doc)
    reloaded = yaml.safe_load(text)
    assert reloaded["apiVersion"] == API_V1BETA1
    c = reloaded["spec"]["components"][0]
    assert c["name"] == "VllmWorker" and c["type"] == "decode"
    assert c["podTemplate"]["spec"]["containers"][0]["args"] == ["--model", "Qwen/Qwen3-0.6B"]
    assert schema_errors(reloaded) == []
    assert problems == []


def test_ruamel_source_unchanged_and_force_annotation():
    y = _rt_yaml()
    src = y.load(COMMENTED)
    before = io.StringIO()
    y.dump(src, before)
    doc, out, text, problems = _rt_convert(before.getvalue().replace(
        "      replicas: 2", "      dynamoNamespace: old\n      replicas: 2"), force=True)
    after = io.StringIO()
    y.dump(doc, after)
    assert "dynamoNamespace: old" in after.getvalue()  # the input tree is not modified
    assert "# metadata comment" in text and ANN_DGD_SPEC in text
    assert [p["severity"] for p in problems] == ["warning"]


# ---------------------------------------------------------------- corpus

def _corpus_docs():
    for path in sorted(CORPUS.rglob("*.yaml")):
        for i, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if is_dgd(doc):
                yield pytest.param(doc, id=f"{path.name}#{i}")


CORPUS_DOCS = list(_corpus_docs())


def test_corpus_present():
    assert len(CORPUS_DOCS) >= 71


@pytest.mark.parametrize("force", [False, True], ids=["strict", "force"])
@pytest.mark.parametrize("doc", CORPUS_DOCS)
def test_corpus_converts_and_validates(doc, force):
    out, problems = to_v1beta1(doc, force=force)
    assert out["apiVersion"] == API_V1BETA1
    assert schema_errors(out) == []
    for p in problems:
        assert set(p) == {"path", "message", "severity"}
        assert p["severity"] in (("warning",) if force else ("error", "warning"))
    again, more = to_v1beta1(out)
    assert again is out and more == []
    names = [c["name"] for c in out["spec"]["components"]]
    assert names == sorted(doc["spec"]["services"])
    for c in out["spec"]["components"]:
        if "podTemplate" in c:
            assert c["podTemplate"]["spec"]["containers"][0]["name"] == "main"


def test_corpus_ruamel_round_trip():
    y = _rt_yaml()
    for path in sorted(CORPUS.rglob("*.yaml")):
        for doc in y.load_all(path.read_text()):
            if is_dgd(doc):
                out, _ = to_v1beta1(doc)
                buf = io.StringIO()
                y.dump(out, buf)
                assert schema_errors(yaml.safe_load(buf.getvalue())) == [], path.name


def test_service_envs_deduplicated_when_main_container_set():
    s = svc(envs=[{"name": "A", "value": "1"}, {"name": "A", "value": "2"}])
    out, _ = convert(dgd({"c": s}))
    assert main_of(comp(out, "c"))["env"] == [{"name": "A", "value": "2"}]
    plain = {"envs": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]}
    out, _ = convert(dgd({"c": plain}))
    assert main_of(comp(out, "c"))["env"] is plain["envs"]  # no mainContainer: kept as is


def test_probe_handlers_merged_field_by_field():
    s = svc(livenessProbe={"httpGet": {"path": "/h", "port": 1}})
    s["extraPodSpec"]["mainContainer"]["livenessProbe"] = {"exec": {"command": ["true"]}}
    out, problems = convert(dgd({"c": s}))
    assert set(main_of(comp(out, "c"))["livenessProbe"]) == {"httpGet", "exec"}
    assert paths(problems, "warning") == ["spec.services.c.livenessProbe"]
