"""Values the API server, the CRD's CEL rules or the kubelet reject (issue #12, case 8).

Expectations are Kubernetes' rules, cited in kubectl_dynamo/k8s_validation.py: apimachinery
pkg/util/validation/validation.go (v0.33) IsDNS1123Subdomain, IsDNS1123Label, IsQualifiedName,
IsValidLabelValue; the CRD's rule 'component names must be unique case-insensitively'
(kubectl_dynamo/data/crds/nvidia.com_dynamographdeployments.yaml); distribution/reference regexp.go.
"""

from __future__ import annotations

import copy
import json

import pytest

from kubectl_dynamo.commands.explain import explain_one
from kubectl_dynamo.findings.catalogue import entry
from kubectl_dynamo.validation import names as kv
from tests.conftest import run_cli

GOOD = {
    "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
    "metadata": {"name": "llama-70b.v2", "namespace": "team-a", "labels": {"app.kubernetes.io/name": "llama"},
                 "annotations": {"nvidia.com/enable-grove": "false", "Example.COM/Note": "x"}},
    "spec": {"backendFramework": "vllm", "components": [
        {"name": "Frontend", "type": "frontend", "podTemplate": {"spec": {"containers": [
            {"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.1"}]}}},
        {"name": "decode", "type": "decode", "podTemplate": {"spec": {
            "nodeSelector": {"nvidia.com/gpu.product": "H100-SXM"},
            "containers": [{"name": "main", "image": "registry.local:5000/a/b@sha256:" + "0" * 64}]}}}]},
}


def codes(doc) -> list:
    return sorted({c for c, *_ in kv.dgd_problems(doc)})


def test_silent_on_valid_values():
    assert kv.dgd_problems(GOOD) == []
    assert not [f for f in explain_one(GOOD)["findings"] if f["code"] in CODES]


CODES = ("name-invalid", "label-key-invalid", "label-value-invalid", "annotation-value-not-string",
         "component-duplicate", "image-invalid", "node-selector-invalid")


def _with(path: str, value):
    doc = copy.deepcopy(GOOD)
    node = doc
    parts = path.split("/")
    for p in parts[:-1]:
        node = node[int(p)] if isinstance(node, list) else node[p]
    node[parts[-1] if not isinstance(node, list) else int(parts[-1])] = value
    return doc


@pytest.mark.parametrize("path,value,code", [
    ("metadata/name", "Bad_Name", "name-invalid"),
    ("metadata/name", "x" * 254, "name-invalid"),
    ("metadata/namespace", "Team-A", "name-invalid"),
    ("metadata/namespace", "a.b", "name-invalid"),  # a subdomain, not a label
    ("metadata/labels", {"k" * 64: "v"}, "label-key-invalid"),
    ("metadata/labels", {"a/b/c": "v"}, "label-key-invalid"),
    ("metadata/labels", {"UPPER.example.com/x": "v"}, "label-key-invalid"),  # label prefixes are not lower-cased
    ("metadata/labels", {"ok": "bad value!"}, "label-value-invalid"),
    ("metadata/labels", {"ok": "v" * 64}, "label-value-invalid"),
    ("metadata/labels", {"ok": 5}, "label-value-invalid"),
    ("metadata/annotations", {"nvidia.com/enable-grove": False}, "annotation-value-not-string"),
    ("metadata/annotations", {"nvidia.com/kai-scheduler-queue": 3}, "annotation-value-not-string"),
    ("spec/components/1/name", "FRONTEND", "component-duplicate"),
    ("spec/components/1/podTemplate/spec/containers/0/image", "runtime 1.0.0", "image-invalid"),
    ("spec/components/1/podTemplate/spec/containers/0/image", " runtime:1", "image-invalid"),
    ("spec/components/1/podTemplate/spec/containers/0/image", "Runtime:1", "image-invalid"),
    ("spec/components/1/podTemplate/spec/nodeSelector", {"x" * 70: "a"}, "node-selector-invalid"),
])
def test_fires(path, value, code):
    doc = _with(path, value)
    assert codes(doc) == [code]
    found = [f for f in explain_one(doc)["findings"] if f["code"] == code]
    # an image or nodeSelector the kubelet / pod validation refuses is admitted by the API server and
    # the operator (tests/data/admission): a warning; what admission refuses is an error
    assert found and found[0]["severity"] == entry(code).severity and found[0]["hint"]


@pytest.mark.parametrize("value,ok", [("a", True), ("a-b.c", True), ("a" * 253, True), ("-a", False), ("a.", False),
                                      ("a..b", False), ("", False), ("A", False)])
def test_dns1123_subdomain(value, ok):
    assert (kv.dns1123_subdomain(value) == []) is ok


@pytest.mark.parametrize("value,ok", [("a/b", True), ("example.com/a_b.c", True), ("/a", False), ("a/", False),
                                      ("a" * 63, True), ("a" * 64, False), ("_a", False), ("a/b/c", False)])
def test_qualified_name(value, ok):
    assert (kv.qualified_name(value) == []) is ok


@pytest.mark.parametrize("image,ok", [("nginx", True), ("nginx:1.27", True), ("localhost:5000/a/b:c", True),
                                      ("[::1]:5000/a", True), ("a b", False), ("a:b:c", False), ("x/UPPER", False), ("UPPER/x", True),
                                      ("a@sha256:abc", False), ("", False)])
def test_image_reference(image, ok):
    assert (kv.image_reference(image) == []) is ok


GENERATE = ("generate", "dgd", "t", "--backend", "vllm", "--model", "m", "-o", "table")


@pytest.mark.parametrize("args,message", [
    (("--nodes", "99999999999999999999"), "--nodes 99999999999999999999 is out of range"),
    (("-n", "UPPER"), "-n 'UPPER' must consist of lower case"),
    (("--image", "a b"), "--image 'a b' is not an image reference"),
    (("--role-templates", "--worker-node-selector", "k" * 100 + "=v"), "--worker-node-selector"),
    (("--request-timeout", "abc"), 'invalid --request-timeout "abc"'),
])
def test_generate_refuses_what_the_api_server_rejects(args, message):
    proc = run_cli(*GENERATE, *args)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: ") and message in line


def test_generate_name_must_be_a_subdomain():
    proc = run_cli("generate", "dgd", "Bad_Name", "--backend", "vllm", "--model", "m")
    assert proc.returncode == 2 and "NAME 'Bad_Name'" in proc.stderr


def test_generated_output_fed_to_explain_has_no_value_findings(tmp_path):
    proc = run_cli(*GENERATE[:-2], "-o", "json", "-n", "team-a")
    assert proc.returncode == 0, proc.stderr
    assert codes(json.loads(proc.stdout)) == []
