"""The one table of kinds (kubectl_dynamo/cluster/kinds.py) against the real APIs, and what derives from it.

Expectations come from upstream, not from the table: custom kinds from the real CRDs under tests/data/crds/ and kubectl_dynamo/data/crds/
(their group, plural, kind, scope and served versions; provenance in tests/data/crds/PROVENANCE.md), built-in
kinds from what a real kube-apiserver's discovery said when the states under tests/data/recorded/ were
recorded (manifest.json ``namespaced``; tests/data/recorded/PROVENANCE.md).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
import yaml

from kubectl_dynamo.cluster import kinds
from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.commands import tree
from kubectl_dynamo.model import snapshot, views
from kubectl_dynamo.model.snapshot import Snapshot, take

DATA = Path(__file__).resolve().parents[1] / "data"
PACKAGE_CRDS = Path(__file__).resolve().parents[2] / "kubectl_dynamo" / "data" / "crds"
BUILT_IN = ("", "apps", "batch", "apiextensions.k8s.io", "scheduling.k8s.io", "rbac.authorization.k8s.io",
            "storage.k8s.io", "admissionregistration.k8s.io", "discovery.k8s.io")  # kube-apiserver's own


@functools.cache
def crds() -> dict:
    out = {}
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    # The DGD CRD ships in the package (kubectl_dynamo/data/crds, its PROVENANCE.md); the others are test data.
    for path in sorted([*(DATA / "crds").rglob("*.yaml"), *(PACKAGE_CRDS.glob("*.yaml"))]):
        for doc in yaml.load_all(path.read_text(), Loader=loader):
            if doc and doc.get("kind") == "CustomResourceDefinition":
                spec = doc["spec"]
                out[(spec["group"], spec["names"]["plural"])] = spec
    return out


@functools.cache
def discovered() -> dict:
    """(group, plural) -> namespaced, as real API servers answered in every recording."""
    out: dict = {}
    for manifest in sorted((DATA / "recorded").glob("*/manifest.json")):
        for r in json.loads(manifest.read_text())["resources"]:
            out[(r["group"], r["resource"])] = r["namespaced"]
    return out


@pytest.mark.parametrize("kind", [k for k in kinds.KINDS if k.group not in BUILT_IN], ids=lambda k: kinds.NAMES[k])
def test_custom_kinds_match_their_real_crd(kind):
    spec = crds().get((kind.group, kind.plural))
    assert spec is not None, f"no upstream CRD for {kind.group}/{kind.plural}"
    assert spec["names"]["kind"] == kind.kind
    assert (spec["scope"] == "Namespaced") == kind.namespaced
    assert kind.version in [v["name"] for v in spec["versions"] if v.get("served")]


@pytest.mark.parametrize("kind", [k for k in kinds.KINDS if k.group in BUILT_IN], ids=lambda k: kinds.NAMES[k])
def test_built_in_kinds_match_a_real_api_server(kind):
    seen = discovered()
    if (kind.group, kind.plural) in seen:  # the others (replicasets) only in tests/integration/test_kinds_live.py
        assert seen[(kind.group, kind.plural)] == kind.namespaced


def test_recordings_hold_built_in_kinds_to_compare():
    assert sum((k.group, k.plural) in discovered() for k in kinds.KINDS if k.group in BUILT_IN) >= 9
    # the kinds read only when needed were recorded too (lws-direct-pvc-*, lws-direct-webhook-*)
    for plural in ("storageclasses", "validatingwebhookconfigurations", "mutatingwebhookconfigurations",
                   "endpointslices", "persistentvolumeclaims"):
        assert any(p == plural for _, p in discovered()), plural


def test_a_kind_read_when_needed_names_what_needs_it():
    """Each ``need`` is a predicate of the snapshot, over a kind read before it in table order."""
    for k in kinds.SNAPSHOT:
        if k.need:
            assert k.need in snapshot.NEEDS, k
    order = [k.field for k in kinds.SNAPSHOT]
    assert order.index("pods") < order.index("persistentvolumeclaims") < order.index("storageclasses")
    assert order.index("events") < order.index("validatingwebhookconfigurations")


def test_derived_tables_follow_the_one_table():
    assert kinds.RECORDED == kinds.KINDS
    assert [k.field for k in kinds.SNAPSHOT] == list(snapshot.FIELDS)
    assert len(set(snapshot.FIELDS)) == len(kinds.SNAPSHOT)  # one list per kind
    assert all(k.field for k in kinds.OWNERS)  # the owner tree reads them from the snapshot
    assert tuple((k.kind, k.field) for k in kinds.OWNERS) == views.OWNED_KINDS
    assert all(kinds.by_kind(k) for k in tree.NEEDED)  # tree looks up the kinds its pods need in the table
    assert len(set(kinds.NAMES.values())) == len(kinds.KINDS)  # names in messages are unambiguous
    assert kinds.NAMES[next(k for k in kinds.KINDS if k.plural == "podgroups" and k.group == "scheduling.run.ai")] \
        == "podgroups.scheduling.run.ai"  # KAI and Volcano both define podgroups
    assert all(k.scope in ("all", "dgd", "lws", "warnings", "name") for k in kinds.KINDS)


def test_snapshot_holds_one_list_per_table_kind_and_refuses_others():
    snap = Snapshot(facts=None, namespace="llm", pods=[{"metadata": {"name": "p"}}])  # type: ignore[arg-type]
    assert snap.pods == [{"metadata": {"name": "p"}}]
    for kind in kinds.SNAPSHOT:  # required lists start empty, the others unread (None)
        if kind.field != "pods":
            assert getattr(snap, kind.field) == ([] if kind.required else None)
    with pytest.raises(TypeError, match="no list"):
        Snapshot(facts=None, namespace="llm", widgets=[])  # type: ignore[arg-type]


def test_take_reads_each_served_table_kind_once_from_a_real_recording():
    """A recording of the real LWS + Volcano stack: every SNAPSHOT kind it serves is read with one LIST."""
    cluster = RecordedCluster(str(DATA / "recorded" / "lws-healthy"))
    snap = take(cluster, None, compact=True)
    served = {(r["group"], r["resource"]) for r in cluster.manifest["resources"]}
    for kind in kinds.SNAPSHOT:
        value = getattr(snap, kind.field)
        if (kind.group, kind.plural) in served and (not kind.when or kind.when in (snap.facts.groups or {})):
            assert value is not None, kinds.NAMES[kind]
        elif not kind.required:
            assert value is None, kinds.NAMES[kind]
    assert snap.dgds and snap.pods and snap.leaderworkersets and snap.statefulsets
