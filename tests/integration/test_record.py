"""record() on the real control plane, and RecordedCluster's selectors judged by the real kube-apiserver.

The same LIST with the same selector goes to the live server and to its recording; the names must
match. So the replay's label/field selector semantics are the API server's, not our reading of them.
"""

from __future__ import annotations

import json
import time

import pytest

from kubectl_dynamo.cluster.client import Cluster, Target, path_for
from kubectl_dynamo.cluster.record import Kind, record
from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.errors import DynamoError

pytestmark = pytest.mark.fullcluster
NS = "record-selectors"

LABELS = [{"tier": "frontend", "env": "prod"}, {"tier": "backend", "env": "dev"}, {"env": "qa", "rank": "3"},
          {"tier": ""}, {"rank": "12", "in": "notin"}, {}]
LABEL_SELECTORS = ["", "tier=frontend", "tier==frontend", "tier!=frontend", "env=prod,tier=frontend",
                   "env in (prod, qa)", "tier notin (frontend,backend)", "tier", "!tier", "env,!tier", "tier=",
                   "tier in ()", "rank>2", "rank<4", "in=notin", "env in (prod,)", "tier in (,backend)"]
BAD_LABEL_SELECTORS = ["tier in frontend", "a=b=c", "tier in (a b)", "a,", "!a=b", "rank>x"]


@pytest.fixture(scope="module")
def recorded(sandbox, tmp_path_factory):
    sb = sandbox
    node = json.loads(sb.kubectl("get", "nodes", "-o", "json").stdout)["items"][0]["metadata"]["name"]
    objs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}]
    objs += [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}", "namespace": NS, "labels": l}}
             for i, l in enumerate(LABELS)]
    objs += [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "ssh", "namespace": NS},
              "stringData": {"private.key": "not-for-disk", "private.key.pub": "pub"}}]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": NS},
           "spec": {"containers": [{"name": "main", "image": "busybox"}],
                    "tolerations": [{"operator": "Exists"}]}}
    objs += [dict(pod, metadata={"name": "bound", "namespace": NS, "labels": {"env": "prod"}},
                  spec=dict(pod["spec"], nodeName=node)),
             dict(pod, metadata={"name": "unplaceable", "namespace": NS},
                  spec=dict(pod["spec"], nodeSelector={"no-such": "node"}))]
    sb.kubectl("apply", "-f", "-", input="\n---\n".join(json.dumps(o) for o in objs))
    cluster = Cluster(Target(kubeconfig=str(sb.kubeconfig)))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # kwok reports the bound pod Running; the scheduler gives up on the other
        pods = {p["metadata"]["name"]: p for p in cluster.list(path_for("", "v1", "pods", NS))}
        if len(pods) == 2 and pods["bound"]["status"].get("phase") == "Running" and any(
                c.get("reason") == "Unschedulable" for c in pods["unplaceable"]["status"].get("conditions") or []):
            break
        time.sleep(1)
    else:
        pytest.fail(f"pods did not settle: {[(n, p['status'].get('phase')) for n, p in pods.items()]}")
    dest = tmp_path_factory.mktemp("snapshot")
    kinds = [Kind("", "v1", r) for r in ("pods", "configmaps", "secrets", "events", "nodes")]
    record(cluster, str(dest), kinds, namespace=NS, source={"test": "test_record"})
    yield cluster, RecordedCluster(str(dest)), dest
    sb.kubectl("delete", "namespace", NS, "--wait=false", check=False)


def names(items):
    return sorted(o["metadata"]["name"] for o in items)


@pytest.mark.parametrize("selector", LABEL_SELECTORS)
def test_label_selectors_match_the_api_server(recorded, selector):
    live, replay, _ = recorded
    path = path_for("", "v1", "configmaps", NS)
    assert names(replay.list(path, label_selector=selector)) == names(live.list(path, label_selector=selector))


@pytest.mark.parametrize("selector", BAD_LABEL_SELECTORS)
def test_label_selectors_the_api_server_refuses_are_refused(recorded, selector):
    live, replay, _ = recorded
    path = path_for("", "v1", "configmaps", NS)
    with pytest.raises(DynamoError):
        live.list(path, label_selector=selector)
    with pytest.raises(DynamoError):
        replay.list(path, label_selector=selector)


@pytest.mark.parametrize("path, selector", [
    (path_for("", "v1", "pods", NS), "status.phase=Running"),
    (path_for("", "v1", "pods", NS), "status.phase!=Running"),
    (path_for("", "v1", "pods", NS), "spec.nodeName="),
    (path_for("", "v1", "pods", NS), "spec.schedulerName=default-scheduler,metadata.name=bound"),
    (path_for("", "v1", "events", NS), "type=Warning"),
    (path_for("", "v1", "events", NS), "involvedObject.kind=Pod,reason=FailedScheduling"),
    (path_for("", "v1", "nodes"), "spec.unschedulable=false"),
    (path_for("", "v1", "secrets", NS), "type=Opaque"),
    (path_for("", "v1", "pods", NS), "spec.host=" + "x"),  # the old alias of spec.nodeName
    (path_for("", "v1", "configmaps", NS), r"metadata.name=cm-1,metadata.namespace!=x"),
])
def test_field_selectors_match_the_api_server(recorded, path, selector):
    live, replay, _ = recorded
    got = names(replay.list(path, field_selector=selector))
    assert got == names(live.list(path, field_selector=selector))
    if "Warning" in selector:
        assert got, "the unplaceable pod's FailedScheduling event is recorded"


@pytest.mark.parametrize("path, selector, words", [
    (path_for("", "v1", "configmaps", NS), "data.x=y",
     '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"'),
    (path_for("", "v1", "pods", NS), "spec.foo=x", "field label not supported: spec.foo"),
    (path_for("", "v1", "nodes"), "metadata.namespace=x", "field label not supported: metadata.namespace"),
])
def test_unsupported_field_is_refused_like_the_api_server(recorded, path, selector, words):
    live, replay, _ = recorded
    for cluster in (live, replay):
        with pytest.raises(DynamoError) as err:
            cluster.list(path, field_selector=selector)
        assert words in err.value.message


def test_the_recording_keeps_secret_key_names_only(recorded):
    live, replay, dest = recorded
    path = path_for("", "v1", "secrets", NS, "ssh")
    assert sorted(replay.get(path)["data"]) == sorted(live.get(path)["data"]) == ["private.key", "private.key.pub"]
    assert set(replay.get(path)["data"].values()) == {""}
    assert all(b"not-for-disk" not in p.read_bytes() and b"bm90LWZvci1kaXNr" not in p.read_bytes()
               for p in dest.rglob("*.json"))
    assert replay.server_version() == live.server_version()
    assert replay.groups() == live.groups()
