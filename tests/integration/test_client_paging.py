"""Cluster.iter_list against the real kube-apiserver: every item of a paginated LIST exactly once, in
the server's order, the next page requested while the caller still consumes the current one."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from kubectl_dynamo.cluster.client import PAGE_SIZE, Cluster, Target, path_for

pytestmark = pytest.mark.cluster

NS = "paging"
COUNT = 2 * PAGE_SIZE + 7  # three pages: two full, one of 7


@pytest.fixture(scope="module")
def many(sandbox):
    sandbox.kubectl("create", "namespace", NS)
    names = [f"cm-{i:05d}" for i in range(COUNT)]

    def post(chunk):
        cluster = Cluster(Target(kubeconfig=str(sandbox.kubeconfig)))
        for name in chunk:
            cluster.request("POST", path_for("", "v1", "configmaps", NS),
                            body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"k": "v"}},
                                  "data": {"x": name}})

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(post, [names[0::2], names[1::2]]))
    yield names
    sandbox.kubectl("delete", "namespace", NS, "--wait=false")


def test_every_item_once_in_order_without_managed_fields(sandbox, many):
    cluster = Cluster(Target(kubeconfig=str(sandbox.kubeconfig)))
    items = list(cluster.iter_list(path_for("", "v1", "configmaps", NS), label_selector="k=v"))
    assert [i["metadata"]["name"] for i in items] == many  # etcd returns a namespace's keys in name order
    assert not any("managedFields" in i["metadata"] for i in items)
    assert cluster.requests == 3
    # The LIST's resourceVersion (every page is read at the first page's): get -w watches from it.
    version = cluster.list_versions[(path_for("", "v1", "configmaps", NS), "k=v", None)]
    assert version.isdigit() and int(version) >= max(int(i["metadata"]["resourceVersion"]) for i in items)


def test_next_page_is_requested_while_the_caller_consumes_this_one(sandbox, many):
    cluster = Cluster(Target(kubeconfig=str(sandbox.kubeconfig)))
    pages = cluster.iter_list(path_for("", "v1", "configmaps", NS))
    first = next(pages)
    assert first["metadata"]["name"] == many[0]
    deadline = time.monotonic() + 30
    while cluster.requests < 2:  # page 2 is in flight although 499 items of page 1 are unread
        assert time.monotonic() < deadline, "the second page was not requested ahead"
        time.sleep(0.05)
    pages.close()  # abandoning the list waits for the page in flight and returns
    assert cluster.requests == 2
