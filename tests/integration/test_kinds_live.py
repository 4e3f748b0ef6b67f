"""The built-in kinds of the one table (kubectl_dynamo/cluster/kinds.py) against a real kube-apiserver's
discovery: each is served at its version, with its kind name and scope (the custom kinds are held
against their real CRDs in tests/unit/test_kinds.py)."""

from __future__ import annotations

import pytest

from kubectl_dynamo.cluster import kinds
from kubectl_dynamo.cluster.client import Cluster, Target

pytestmark = pytest.mark.cluster

BUILT_IN = [k for k in kinds.KINDS if k.group in ("", "apps", "apiextensions.k8s.io", "scheduling.k8s.io", "storage.k8s.io",
                                                 "admissionregistration.k8s.io", "discovery.k8s.io")]


@pytest.mark.parametrize("kind", BUILT_IN, ids=lambda k: kinds.NAMES[k])
def test_built_in_kind_is_served_as_the_table_says(sandbox, kind):
    cluster = Cluster(Target(kubeconfig=str(sandbox.kubeconfig)))
    doc = cluster.get("/api/v1" if kind.group == "" else f"/apis/{kind.group}/{kind.version}")
    served = {r["name"]: r for r in doc["resources"]}
    assert kind.plural in served
    assert served[kind.plural]["kind"] == kind.kind
    assert served[kind.plural]["namespaced"] == kind.namespaced
