import json

from kubectl_dynamo import schema


def test_bundled_json_matches_the_crd():
    """data/dgd-schema.json is generated from the bundled CRD: regenerate with
    `python -m kubectl_dynamo.schema` after changing either."""
    with (schema._data(schema.SCHEMA_FILE)).open() as f:
        assert json.load(f) == json.loads(json.dumps(schema.generate()))


def test_roles_field_added_for_1_6():
    node = schema.resolve("v1beta1", ["spec", "components", "roles"])
    assert node["type"] == "array" and "podTemplate" in node["items"]["properties"]
    assert schema.resolve("v1alpha1", ["spec", "components"]) is None


def test_nulls_are_pruned_like_the_api_server():
    doc = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment", "metadata": {"name": "x"},
           "spec": {"services": {"a": {"extraPodSpec": {"containers": None}}}}}
    assert schema.schema_errors(doc) == []


def test_unknown_fields_and_wrong_types():
    doc = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "metadata": {"name": "x"},
           "spec": {"components": [{"name": "a", "type": "worker", "replicas": "two", "bogus": 1}]}}
    errs = {e["path"]: e["message"] for e in schema.schema_errors(doc)}
    assert "unknown field" in errs["spec.components[0]"]
    assert "is not of type 'integer'" in errs["spec.components[0].replicas"]


def test_pod_template_checked_as_a_pod():
    errors = schema.pod_template_errors({"spec": {"containers": [{"name": "main", "image": "x", "ports": "80"}]}})
    assert errors and "ports" in errors[0]
