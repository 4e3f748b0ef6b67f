"""RecordedCluster: the live Cluster's read interface answered from a snapshot (docs/snapshot-format.md).

Selector expectations come from Kubernetes, not from the code under test:
- the labels concept page, https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/
  ("Label selectors": equality- and set-based requirements, comma = AND, ``!=`` and ``notin`` also
  select objects without the key, ``!key`` = does not exist), and
- k8s.io/apimachinery v0.33.13 ``pkg/labels/selector.go`` (``Requirement.Matches``, the lexer and
  parser: ``()`` is the empty value, ``>``/``<`` compare integers) and ``pkg/fields/selector.go``
  (``splitTerms``/``UnescapeValue``: ``\\,`` escapes, ``==`` is ``=``), with the fields each kind accepts
  in k8s.io/kubernetes v1.33.13 ``pkg/apis/core/v1/conversion.go`` and their values in
  ``pkg/registry/core/{pod,event,node}/strategy.go``; tests/integration/test_record.py compares these
  against the real kube-apiserver.
"""

from __future__ import annotations

import json
import os
import tarfile

import pytest

from kubectl_dynamo.cluster.record import Kind, record
from kubectl_dynamo.cluster.recorded import BadRequest, RecordedCluster, parse_labels, parse_path
from kubectl_dynamo.errors import DynamoError, Forbidden, InputError, NotFound


def pod(name, ns="llm", labels=None, node="", phase="Running", scheduler="default-scheduler"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
            "spec": {"nodeName": node, "schedulerName": scheduler}, "status": {"phase": phase}}


PODS = [
    pod("a", labels={"tier": "frontend", "env": "prod"}, node="n1"),
    pod("b", labels={"tier": "backend", "env": "dev"}, node="n2", phase="Pending"),
    pod("c", labels={"env": "qa", "rank": "3"}, node="n1"),
    pod("d", ns="other", labels={"tier": "frontend"}, node="n2"),
    pod("e", labels={"tier": ""}, phase="Pending", scheduler="volcano"),
]
EVENTS = [
    {"metadata": {"name": "e1", "namespace": "llm"}, "type": "Warning", "reason": "FailedCreate",
     "involvedObject": {"kind": "StatefulSet", "name": "s", "namespace": "llm"}, "source": {"component": "statefulset-controller"}},
    {"metadata": {"name": "e2", "namespace": "llm"}, "type": "Normal", "reason": "Scheduled",
     "involvedObject": {"kind": "Pod", "name": "a", "namespace": "llm"}, "reportingComponent": "default-scheduler"},
]
NODES = [{"metadata": {"name": "n1", "labels": {"gpu": "yes"}}, "spec": {"unschedulable": True}},
         {"metadata": {"name": "n2"}, "spec": {}}]


def write_tree(root, *, forbidden=(), namespace=None):
    files = {
        "version.json": {"gitVersion": "v1.33.13", "major": "1", "minor": "33"},
        "discovery.json": {"apps": ["v1"], "scheduling.volcano.sh": ["v1beta1"], "nvidia.com": ["v1beta1", "v1alpha1"]},
        "resources/core/v1/pods.json": {"items": PODS},
        "resources/core/v1/events.json": {"items": EVENTS},
        "resources/core/v1/nodes.json": {"items": NODES},
        "resources/apps/v1/deployments.json": {"items": [{"metadata": {"name": "op", "namespace": "dynamo-system"}}]},
    }
    files["manifest.json"] = {
        "format": "kubectl-dynamo/snapshot", "formatVersion": 1, "createdAt": "2026-12-01T09:00:00Z",
        "namespace": namespace, "source": {"tool": "test"},
        "resources": [{"group": "", "version": "v1", "resource": "pods", "namespaced": True, "count": len(PODS)},
                      {"group": "", "version": "v1", "resource": "events", "namespaced": True, "count": 2},
                      {"group": "", "version": "v1", "resource": "nodes", "namespaced": False, "count": 2},
                      {"group": "apps", "version": "v1", "resource": "deployments", "namespaced": True, "count": 1}],
        "forbidden": [{"group": g, "version": v, "resource": r, "reason": why} for g, v, r, why in forbidden]}
    for name, data in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(data, f)
    return str(root)


@pytest.fixture
def rc(tmp_path):
    return RecordedCluster(write_tree(tmp_path))


def names(items):
    return sorted(o["metadata"]["name"] for o in items)


# -- label selectors -------------------------------------------------------------------------
@pytest.mark.parametrize("selector, expected", [
    # labels doc: "environment = production" / "tier != frontend"; "!=" also selects objects without the key
    ("tier=frontend", ["a", "d"]),
    ("tier==frontend", ["a", "d"]),
    ("tier!=frontend", ["b", "c", "e"]),
    # labels doc: comma = AND ("environment=production,tier!=frontend")
    ("env=prod,tier=frontend", ["a"]),
    # labels doc: set-based "environment in (production, qa)"; "tier notin (frontend, backend)" also
    # selects objects without the key; "partition" = exists; "!partition" = does not exist
    ("env in (prod, qa)", ["a", "c"]),
    ("tier notin (frontend,backend)", ["c", "e"]),
    ("tier", ["a", "b", "d", "e"]),
    ("!tier", ["c"]),
    ("env,!tier", ["c"]),
    # selector.go parseExactValue / parseValues: "k=" and "k in ()" mean the empty value
    ("tier=", ["e"]),
    ("tier in ()", ["e"]),
    # selector.go Matches: Gt/Lt parse both sides as integers
    ("rank>2", ["c"]),
    ("rank<3", []),
    # labels doc: an empty selector selects every object
    ("", ["a", "b", "c", "d", "e"]),
])
def test_label_selector_semantics(rc, selector, expected):
    assert names(rc.list("/api/v1/pods", label_selector=selector)) == expected


@pytest.mark.parametrize("selector", ["tier in frontend", "=x", "a=b=c", "tier in (a b)", "a,", "!a=b", "rank>x"])
def test_invalid_label_selector_is_a_bad_request(rc, selector):
    # the API server answers 400 to what selector.go's parser rejects
    with pytest.raises(BadRequest):
        rc.list("/api/v1/pods", label_selector=selector)


def test_keywords_are_identifiers_in_key_and_value_position():
    # selector.go Parser.consume(Values) turns the in/notin tokens into identifiers
    assert [(r.key, r.op, r.values) for r in parse_labels("in=notin")] == [("in", "=", ("notin",))]


# -- field selectors -------------------------------------------------------------------------
@pytest.mark.parametrize("path, selector, expected", [
    ("/api/v1/namespaces/llm/pods", "status.phase=Pending", ["b", "e"]),
    ("/api/v1/namespaces/llm/pods", "status.phase!=Pending", ["a", "c"]),
    ("/api/v1/pods", "spec.nodeName=n1", ["a", "c"]),
    ("/api/v1/pods", "spec.nodeName==n2,metadata.namespace=other", ["d"]),
    ("/api/v1/pods", "spec.nodeName=", ["e"]),  # not yet scheduled
    ("/api/v1/pods", "spec.schedulerName=volcano", ["e"]),
    ("/api/v1/pods", "metadata.name=b", ["b"]),
    ("/api/v1/events", "type=Warning", ["e1"]),
    ("/api/v1/events", "involvedObject.kind=Pod", ["e2"]),
    ("/api/v1/events", "source=default-scheduler", ["e2"]),  # event strategy: source falls back to reportingComponent
    ("/api/v1/nodes", "spec.unschedulable=true", ["n1"]),
])
def test_field_selector_semantics(rc, path, selector, expected):
    assert names(rc.list(path, field_selector=selector)) == expected


def test_field_selector_escapes_and_unknown_fields(rc):
    # fields/selector.go: "\," is a literal comma inside a value; a bare "=" in a value is an error
    assert rc.list("/api/v1/pods", field_selector=r"metadata.name=a\,b") == []
    with pytest.raises(BadRequest):
        rc.list("/api/v1/pods", field_selector="metadata.name=a=b")
    # the server rejects a field the kind is not selectable by ("field label not supported")
    with pytest.raises(BadRequest, match="field label not supported: spec.foo"):
        rc.list("/api/v1/pods", field_selector="spec.foo=x")
    # nodes accept metadata.name and spec.unschedulable only (core/v1 conversion.go)
    with pytest.raises(BadRequest, match="field label not supported: metadata.namespace"):
        rc.list("/api/v1/nodes", field_selector="metadata.namespace=x")
    # a kind without its own conversion takes metadata.name and metadata.namespace only, in these words
    # (apimachinery runtime.DefaultMetaV1FieldSelectorConversion)
    with pytest.raises(BadRequest, match='"spec.replicas" is not a known field selector: only "metadata.name"'):
        rc.list("/apis/apps/v1/deployments", field_selector="spec.replicas=1")
    assert names(rc.list("/apis/apps/v1/deployments", field_selector="metadata.namespace=dynamo-system")) == ["op"]


# -- paths, scope, errors --------------------------------------------------------------------
def test_parse_path():
    assert parse_path("/api/v1/namespaces/llm/pods") == ("", "v1", "pods", "llm", None)
    assert parse_path("/api/v1/namespaces/llm/pods/a") == ("", "v1", "pods", "llm", "a")
    assert parse_path("/api/v1/namespaces/llm") == ("", "v1", "namespaces", None, "llm")
    assert parse_path("/apis/apps/v1/deployments") == ("apps", "v1", "deployments", None, None)
    assert parse_path("/apis/nvidia.com/v1beta1/namespaces/x/dynamographdeployments/d") == (
        "nvidia.com", "v1beta1", "dynamographdeployments", "x", "d")
    with pytest.raises(DynamoError):
        parse_path("/api/v1/namespaces/llm/pods/a/log")


def test_namespace_filter_get_and_not_found(rc):
    assert names(rc.list("/api/v1/namespaces/llm/pods")) == ["a", "b", "c", "e"]
    assert names(rc.list("/api/v1/namespaces/other/pods")) == ["d"]
    assert rc.get("/api/v1/namespaces/other/pods/d")["metadata"]["name"] == "d"
    with pytest.raises(NotFound, match='pods "d" not found'):
        rc.get("/api/v1/namespaces/llm/pods/d")
    # a group/version the server did not serve: the API server's 404
    with pytest.raises(NotFound, match="could not find the requested resource"):
        rc.list("/apis/scheduler.grove.io/v1alpha1/podgangs")
    # served but not recorded: neither absent nor forbidden, the kind is unknown
    with pytest.raises(DynamoError, match="not recorded") as err:
        rc.list("/apis/scheduling.volcano.sh/v1beta1/podgroups")
    assert not isinstance(err.value, (NotFound, Forbidden))


def test_server_facts_and_requests(rc):
    assert rc.server_version() == "v1.33.13"
    assert rc.groups()["nvidia.com"] == ["v1beta1", "v1alpha1"]
    assert {g["name"] for g in rc.get("/apis")["groups"]} == {"apps", "scheduling.volcano.sh", "nvidia.com"}
    assert {r["name"]: r["namespaced"] for r in rc.get("/api/v1")["resources"]} == {
        "pods": True, "events": True, "nodes": False}
    assert rc.namespace == "default"  # no recorded scope, no -n: kubectl's default
    before = rc.requests
    rc.list("/api/v1/pods")
    rc.get("/api/v1/nodes/n1")
    assert rc.requests == before + 2
    with pytest.raises(DynamoError, match="cannot be changed"):
        rc.request("POST", "/api/v1/namespaces/llm/pods", body={})


def test_forbidden_kinds_and_can_i(tmp_path):
    rc = RecordedCluster(write_tree(tmp_path, forbidden=[("", "v1", "secrets", 'secrets is forbidden: User "x"')]))
    with pytest.raises(Forbidden, match="secrets is forbidden"):
        rc.get("/api/v1/namespaces/llm/secrets/mpi-run-ssh-secret")
    assert rc.can_i("list", "secrets") is False
    assert rc.can_i("list", "pods") is True
    assert rc.can_i("create", "pods") is False  # a recording cannot be written


def test_namespace_scoped_recording(tmp_path):
    rc = RecordedCluster(write_tree(tmp_path, namespace="llm"))
    assert rc.namespace == "llm"
    assert names(rc.list("/api/v1/namespaces/llm/pods", label_selector="tier")) == ["a", "b", "e"]
    with pytest.raises(DynamoError, match="holds namespace llm only"):
        rc.list("/api/v1/namespaces/kube-system/pods")


def test_tar_gz_with_a_top_directory(tmp_path):
    tree = write_tree(tmp_path / "snap")
    archive = tmp_path / "bundle.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tree, arcname="bundle-20261201")
    rc = RecordedCluster(str(archive))
    assert names(rc.list("/api/v1/pods", field_selector="spec.nodeName=n1")) == ["a", "c"]


def test_not_a_snapshot(tmp_path):
    with pytest.raises(InputError):
        RecordedCluster(str(tmp_path / "missing"))
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(InputError, match="no manifest.json"):
        RecordedCluster(str(tmp_path))


# -- the writer ------------------------------------------------------------------------------
def test_record_round_trip_blanks_secrets(tmp_path):
    secret = {"metadata": {"name": "mpi-run-ssh-secret", "namespace": "llm", "annotations": {
        "kubectl.kubernetes.io/last-applied-configuration": '{"data":{"private.key":"c2VjcmV0"}}', "keep": "me"}},
        "type": "Opaque", "data": {"private.key": "c2VjcmV0", "private.key.pub": "cHVi"}}
    src = tmp_path / "src"
    write_tree(src)
    (src / "resources/core/v1/secrets.json").write_text(json.dumps({"items": [secret]}))
    manifest = json.loads((src / "manifest.json").read_text())
    manifest["resources"].append({"group": "", "version": "v1", "resource": "secrets", "namespaced": True, "count": 1})
    (src / "manifest.json").write_text(json.dumps(manifest))

    kinds = [Kind("", "v1", "pods"), Kind("", "v1", "secrets"), Kind("", "v1", "nodes"),
             Kind("scheduler.grove.io", "v1alpha1", "podgangs")]  # the last is not served: left out
    for dest in (tmp_path / "out", tmp_path / "out.tar.gz"):
        written = record(RecordedCluster(str(src)), str(dest), kinds, namespace="llm", source={"scenario": "t"})
        assert [(r["resource"], r["count"]) for r in written["resources"]] == [("pods", 4), ("secrets", 1), ("nodes", 2)]
        back = RecordedCluster(str(dest))
        assert back.namespace == "llm" and back.manifest["source"] == {"scenario": "t"}
        assert names(back.list("/api/v1/namespaces/llm/pods", label_selector="env")) == ["a", "b", "c"]
        got = back.get("/api/v1/namespaces/llm/secrets/mpi-run-ssh-secret")
        assert got["data"] == {"private.key": "", "private.key.pub": ""}  # key names only, never a value
        assert got["metadata"]["annotations"] == {"keep": "me"}
        with pytest.raises(NotFound):
            back.list("/apis/scheduler.grove.io/v1alpha1/podgangs")
    raw = b"".join(p.read_bytes() for p in (tmp_path / "out").rglob("*.json"))
    assert b"c2VjcmV0" not in raw
