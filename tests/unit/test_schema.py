import json

from kubectl_dynamo.validation import schema


def test_bundled_json_matches_the_crd():
    """data/dgd-schema.json, dgd-validation-VERSION.json and dgd-defaults.json are generated from the
    bundled CRD: regenerate with `python -m kubectl_dynamo.validation.schema` after changing it or a generator.
    Byte for byte: the order of keys in dgd-defaults.json is the order defaults are inserted in."""
    for name, text in schema.data_files().items():
        with open(schema._data(name), encoding="utf-8") as f:
            assert f.read() == text, f"{name} is stale: run python -m kubectl_dynamo.validation.schema"


def test_defaults_tree_holds_every_default_of_the_schema():
    """Every ``default:`` of the validation schema is in the shipped tree at its path, and nothing else."""
    from kubectl_dynamo.operator import defaults

    def walk(node, path, out):
        if not isinstance(node, dict):
            return
        for key, child in (node.get("properties") or {}).items():
            if isinstance(child, dict) and "default" in child:
                out[(*path, "d", key)] = child["default"]
            walk(child, (*path, "p", key), out)
        walk(node.get("items"), (*path, "i"), out)
        walk(node.get("additionalProperties"), (*path, "a"), out)
        return out

    def leaves(branch, path, out):
        for kind, children in branch.items():
            for key, value in (children.items() if kind in ("d", "p") else [(None, children)]):
                where = (*path, kind) if key is None else (*path, kind, key)
                if kind == "d":
                    out[where] = value
                else:
                    leaves(value, where, out)
        return out

    with open(schema._data(defaults.DEFAULTS_FILE), encoding="utf-8") as f:
        shipped = json.load(f)["versions"]
    assert set(shipped) == set(schema.VERSIONS)
    for version in schema.VERSIONS:
        expected = walk(schema.validation_schema(version), (), {})
        assert expected and leaves(shipped[version], (), {}) == expected, version


def test_validator_knows_every_keyword_the_schema_uses():
    from kubectl_dynamo.validation.validator import KEYWORDS

    seen = set()

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                seen.add(key)
                if key == "properties":
                    for child in value.values():
                        walk(child)
                elif key not in ("enum", "required", "default", "x-kubernetes-validations", "x-kubernetes-list-map-keys"):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for version in schema.VERSIONS:
        walk(schema.validation_schema(version))
    assert seen <= KEYWORDS, seen - KEYWORDS


def test_validator_agrees_with_jsonschema_on_the_corpus_and_on_bad_documents():
    """Same verdicts as jsonschema's Draft 4 validator (the reference) over every corpus DGD and
    broken variants of it."""
    import copy

    import jsonschema

    from kubectl_dynamo.inputs.manifests import load
    from kubectl_dynamo.validation.validator import validate
    from tests.conftest import CORPUS_DIR

    docs = [d.data for f in sorted(CORPUS_DIR.rglob("*.yaml")) for d in load(str(f))
            if d.is_dgd]
    bad = []
    for d in docs[:10]:
        b = copy.deepcopy(d)
        b["spec"]["bogus"] = 1
        b["metadata"]["name"] = 5
        bad.append(b)
    for doc in docs + bad:
        plain = schema._drop_nulls(json.loads(json.dumps(doc, default=str)))
        version = doc["apiVersion"].split("/")[1]
        ref = jsonschema.Draft4Validator(schema.validation_schema(version))
        ours = sorted(tuple(map(str, p)) for p, *_ in validate(schema.validation_schema(version), plain))
        theirs = sorted(tuple(map(str, e.absolute_path)) for e in ref.iter_errors(plain))
        assert ours == theirs, doc["metadata"]


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
