"""tree and get without a cluster: hand-made objects, and the states the REAL controllers left.

Hand-made Grove objects carry only the labels Grove sets (ai-dynamo/grove
operator/api/common/labels.go and namegen.go, v0.1.0-alpha.12: PodClique ``<pcs>-<i>-<clique>`` or
``<pcsg>-<j>-<clique>``, base PodGang ``<pcs>-<i>``), no ownerReferences, so the label links are what is
tested. The recorded states (tests/data/recorded/, real Dynamo operator + Grove/KAI or LWS/Volcano)
are the judge for the ownerReference links: every pod must sit under the object its own recorded
ownerReference names.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.commands.collect import crd_versions, describe, selected_by
from kubectl_dynamo.commands.get import human_age, run_get
from kubectl_dynamo.commands.tree import run_tree
from kubectl_dynamo.model.lineage import build_tree
from kubectl_dynamo.model.references import needs

RECORDED = Path(__file__).resolve().parent.parent / "data" / "recorded"


def obj(kind, name, labels=None, owner=None, **extra):
    meta = {"name": name, "namespace": "ns", "uid": f"uid-{kind}-{name}", "labels": labels or {}}
    if owner:
        meta["ownerReferences"] = [{"kind": owner[0], "name": owner[1], "uid": f"uid-{owner[0]}-{owner[1]}",
                                    "controller": True}]
    return {"kind": kind, "metadata": meta, **extra}


def grove_world():
    dgd = obj("DynamoGraphDeployment", "llm")
    pcs = obj("PodCliqueSet", "llm", {"nvidia.com/dynamo-graph-deployment-name": "llm"})
    pcsg = obj("PodCliqueScalingGroup", "llm-0-decode", {"app.kubernetes.io/part-of": "llm"})
    cliques = [obj("PodClique", f"llm-0-decode-0-decode-{s}", {"app.kubernetes.io/part-of": "llm",
                                                               "grove.io/podcliquescalinggroup": "llm-0-decode"})
               for s in ("ldr", "wkr")]
    gang = obj("PodGang", "llm-0", status={"phase": "Running"})
    other_gang = obj("PodGang", "other-0")  # another DGD's: must not appear

    def pod(name, clique, index, **spec):
        return obj("Pod", name, {"nvidia.com/dynamo-graph-deployment-name": "llm", "nvidia.com/dynamo-component": "decode",
                                 "grove.io/podclique": clique, "grove.io/podgang": "llm-0",
                                 "grove.io/podcliquescalinggroup-replica-index": "0",
                                 "grove.io/podclique-pod-index": str(index)},
                   spec={"nodeName": f"node-{name}", "subdomain": "llm-0", **spec}, status={"phase": "Running"})

    pods = [pod("wkr-1", "llm-0-decode-0-decode-wkr", 1,
                volumes=[{"name": "s", "secret": {"secretName": "mpi-run-ssh-secret"}}]),
            pod("ldr-0", "llm-0-decode-0-decode-ldr", 0,
                volumes=[{"name": "w", "configMap": {"name": "llm-wait-leader-script"}}],
                containers=[{"name": "main", "envFrom": [{"secretRef": {"name": "hf-token", "optional": True}}]}]),
            pod("wkr-0", "llm-0-decode-0-decode-wkr", 0)]
    return dgd, [pcs, pcsg, *cliques, gang, other_gang], pods


def walk(node, depth=0):
    yield depth, node
    for c in node["children"]:
        yield from walk(c, depth + 1)


def test_grove_lineage_from_labels_with_the_podgang_between_clique_and_pods():
    dgd, objects, pods = grove_world()
    present = {("Service", "llm-0"), ("ConfigMap", "llm-wait-leader-script")}
    tree = build_tree(dgd, objects, pods, lambda kind, name: (kind, name) in present)
    shape = [(d, n["kind"], n["name"]) for d, n in walk(tree)]
    assert shape == [
        (0, "DynamoGraphDeployment", "llm"),
        (1, "PodCliqueSet", "llm"),
        (2, "PodCliqueScalingGroup", "llm-0-decode"),
        (3, "PodClique", "llm-0-decode-0-decode-ldr"),
        (4, "PodGang", "llm-0"),
        (5, "Pod", "ldr-0"),
        (3, "PodClique", "llm-0-decode-0-decode-wkr"),
        (4, "PodGang", "llm-0"),
        (5, "Pod", "wkr-0"),  # rank order: worker index 0 is rank 1
        (5, "Pod", "wkr-1"),
    ]
    pods_by_name = {n["name"]: n for _, n in walk(tree) if n["kind"] == "Pod"}
    assert [(p["rank"], p["role"], p["node"]) for p in pods_by_name.values()] == [
        (0, "leader", "node-ldr-0"), (1, "worker", "node-wkr-0"), (2, "worker", "node-wkr-1")]
    assert pods_by_name["ldr-0"]["via"] == "label grove.io/podclique"
    needs_ = {(n["kind"], n["name"]): (n["present"], n["optional"], n["neededBy"]) for n in tree["needs"]}
    assert needs_ == {("Service", "llm-0"): (True, False, ["decode/0"]),
                      ("ConfigMap", "llm-wait-leader-script"): (True, False, ["decode/0"]),
                      ("Secret", "mpi-run-ssh-secret"): (False, False, ["decode/0"]),
                      ("Secret", "hf-token"): (False, True, ["decode/0"])}
    assert tree["needs"][0]["present"] is False  # missing first


def test_pods_no_object_claims_hang_under_the_dgd():
    dgd, _, pods = grove_world()
    tree = build_tree(dgd, [], pods, lambda kind, name: True)
    assert [(n["kind"], n["name"], n["via"]) for n in tree["children"]] == [
        ("Pod", "ldr-0", "label nvidia.com/dynamo-graph-deployment-name (no owner listed)"),
        ("Pod", "wkr-0", "label nvidia.com/dynamo-graph-deployment-name (no owner listed)"),
        ("Pod", "wkr-1", "label nvidia.com/dynamo-graph-deployment-name (no owner listed)")]


def test_needs_reads_every_kind_of_reference_once():
    pod = {"spec": {"subdomain": "svc", "imagePullSecrets": [{"name": "pull"}],
                    "volumes": [{"name": "p", "projected": {"sources": [{"configMap": {"name": "cm1"}},
                                                                         {"secret": {"name": "s1", "optional": True}}]}}],
                    "initContainers": [{"name": "i", "env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "s2", "key": "k"}}}]}],
                    "containers": [{"name": "m", "envFrom": [{"configMapRef": {"name": "cm1"}}],
                                    "env": [{"name": "Y", "valueFrom": {"configMapKeyRef": {"name": "cm2", "key": "k"}}}]}]}}
    assert needs(pod) == [("Service", "svc", False), ("ConfigMap", "cm1", False), ("Secret", "s1", True),
                          ("Secret", "s2", False), ("ConfigMap", "cm2", False), ("Secret", "pull", False)]


def _recorded_owner(state, kind_plural, name):
    for f in (RECORDED / state / "resources").rglob(f"{kind_plural}.json"):
        for o in json.loads(f.read_text())["items"]:
            if o["metadata"]["name"] == name:
                return o["metadata"].get("ownerReferences") or []
    raise KeyError(name)


@pytest.mark.parametrize("state,dgd", [("grove-healthy", "vllm-mn"), ("lws-healthy", "trtllm-mn"),
                                       ("lws-healthy", "vllm-mn")])
def test_recorded_pods_sit_under_their_real_owners(state, dgd):
    tree = run_tree(RecordedCluster(str(RECORDED / state), "llm"), dgd).data
    parents = {}  # id(node) -> its parent (a PodGang appears once per clique: names are not unique)
    for _, node in walk(tree):
        for c in node["children"]:
            parents[id(c)] = node
    pods = [n for _, n in walk(tree) if n["kind"] == "Pod"]
    assert pods, "the recording has pods for this DGD"
    for pod in pods:
        (ref,) = _recorded_owner(state, "pods", pod["name"])
        parent = parents[id(pod)]
        if parent["kind"] == "PodGang":  # Grove: the gang sits between the clique and its pods
            parent = parents[id(parent)]
        if ref["kind"] == "ReplicaSet":  # not in the recordings (doctor reads none): the pod hangs under the DGD
            assert parent["kind"] == "DynamoGraphDeployment" and "no owner listed" in pod["via"]
            assert any(s["check"] == "replicasets" for s in tree["skipped"])
            continue
        assert (parent["kind"], parent["name"]) == (ref["kind"], ref["name"])
    kinds = {n["kind"] for _, n in walk(tree)}
    if state.startswith("grove"):
        assert {"PodCliqueSet", "PodCliqueScalingGroup", "PodClique", "PodGang"} <= kinds
        assert sum(1 for _, n in walk(tree) if n["kind"] == "PodGang" and not n["children"]) == 0
    else:
        assert {"DynamoComponentDeployment", "LeaderWorkerSet", "StatefulSet"} <= kinds
        # the worker StatefulSet is owned by the leader pod in the recording; shown beside the leader's
        worker_sts = [n for _, n in walk(tree) if n["kind"] == "StatefulSet" and (n["via"] or "").startswith("owned by")]
        assert worker_sts and all(parents[id(s)]["kind"] == "LeaderWorkerSet" for s in worker_sts)
    # a healthy state needs nothing missing; ServiceAccounts were not recorded (unknown, never "missing")
    assert all(n["present"] or (n["present"] is None and n["kind"] == "ServiceAccount") for n in tree["needs"]), \
        tree["needs"]
    assert any(n["kind"] == "ServiceAccount" and n["name"] == f"{dgd}-k8s-service-discovery" for n in tree["needs"])


# -- get ----------------------------------------------------------------------------------------------

# k8s.io/apimachinery pkg/util/duration/duration_test.go (v0.33.3), TestHumanDuration and TestHumanDurationBoundaries
@pytest.mark.parametrize("seconds,want", [
    (1, "1s"), (70, "70s"), (190, "3m10s"), (70 * 60, "70m"), (47 * 3600, "47h"), (49 * 3600, "2d1h"),
    ((8 * 24 + 2) * 3600, "8d"), (367 * 24 * 3600, "367d"), ((365 * 2 * 24 + 25) * 3600, "2y1d"),
    ((365 * 8 * 24 + 2) * 3600, "8y"), (-2, "<invalid>"), (-1.999, "0s"), (0, "0s"), (119.999, "119s"),
    (120, "2m"), (121, "2m1s"), (599.999, "9m59s"), (600, "10m"), (601, "10m"), (3 * 3600 - 0.001, "179m"),
    (3 * 3600, "3h"), (3 * 3600 + 60, "3h1m"), (8 * 3600 - 0.001, "7h59m"), (8 * 3600, "8h"),
    (2 * 24 * 3600, "2d"), (8 * 24 * 3600 - 0.001, "7d23h"), (2 * 365 * 24 * 3600 - 0.001, "729d"),
    (2 * 365 * 24 * 3600, "2y")])
def test_age_as_kubectl_prints_it(seconds, want):
    assert human_age(seconds) == want


class Env:
    def __init__(self, now):
        self._now = now

    def now(self):
        return self._now


def _recorded_dgd(state, name):
    items = json.loads((RECORDED / state / "resources/nvidia.com/v1beta1/dynamographdeployments.json").read_text())["items"]
    return next(d for d in items if d["metadata"]["name"] == name)


@pytest.mark.parametrize("state", ["grove-healthy", "lws-healthy"])
def test_get_on_recorded_healthy_states(state):
    created = datetime.fromisoformat(_recorded_dgd(state, "vllm-mn")["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    result = run_get(RecordedCluster(str(RECORDED / state), "llm"), Env(created + timedelta(minutes=5)),
                     all_namespaces=False)
    rows = {d["name"]: d for d in result.data["deployments"]}
    for name, d in rows.items():
        dgd = _recorded_dgd(state, name)
        ready = next(c for c in dgd["status"]["conditions"] if c["type"] == "Ready")
        assert d["ready"]["status"] == ready["status"] == "True" and d["ready"]["reason"] == ready["reason"]
        multinode = [c for c in dgd["spec"]["components"] if (c.get("multinode") or {}).get("nodeCount", 1) > 1]
        want_ranks = sum(c["multinode"]["nodeCount"] * c.get("replicas", 1) for c in multinode)
        got = sum(g["pods"] for c in d["components"] if c["multinode"] for g in c["groups"])
        assert got == want_ranks and d["groupsReady"] == d["groupsDesired"]
        assert d["topFinding"] is None or d["topFinding"]["severity"] == "info"
    assert rows["vllm-mn"]["age"] == "5m"
    assert result.names == [f"dynamographdeployment.nvidia.com/{n}" for n in sorted(rows)]
    text = result.table(result.data, False, False, None)
    assert text.splitlines()[0].split() == ["NAMESPACE", "NAME", "ORCHESTRATOR", "COMPONENTS", "GROUPS", "RANKS",
                                            "RESTARTS", "READY", "AGE", "FINDING"]


def test_get_names_the_top_finding_of_a_faulty_group():
    state = "lws-mpi-secret-deleted"
    result = run_get(RecordedCluster(str(RECORDED / state), "llm"), Env(datetime.now(timezone.utc)),
                     all_namespaces=False, name="trtllm-mn")
    (d,) = result.data["deployments"]
    assert d["topFinding"]["code"] == "ssh-secret-missing" and d["topFinding"]["severity"] == "error"
    detail = result.table(result.data, True, False, None)
    assert "ssh-secret-missing" in detail and detail.splitlines()[2].split()[:2] == ["COMPONENT", "GROUP"]


# -- collect's pieces -----------------------------------------------------------------------------------

def test_describe_names_rank_conditions_and_the_pods_events_only():
    pod = {"metadata": {"name": "p", "namespace": "ns", "uid": "u1", "labels": {
        "nvidia.com/dynamo-component": "decode", "leaderworkerset.sigs.k8s.io/worker-index": "1",
        "leaderworkerset.sigs.k8s.io/group-index": "0"}},
           "spec": {"nodeName": "n1", "volumes": [{"name": "k", "secret": {"secretName": "mpi"}}]},
           "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                                                          "message": "not ready"}],
                      "containerStatuses": [{"name": "main", "image": "img", "restartCount": 3, "ready": False,
                                             "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                                             "lastState": {"terminated": {"reason": "Error", "exitCode": 1}}}]}}
    events = [{"involvedObject": {"kind": "Pod", "name": "p", "uid": "u1", "namespace": "ns"}, "type": "Warning",
               "reason": "BackOff", "message": "Back-off restarting", "metadata": {"namespace": "ns"}},
              {"involvedObject": {"kind": "Pod", "name": "q", "uid": "u2", "namespace": "ns"}, "type": "Normal",
               "reason": "Pulled", "metadata": {"namespace": "ns"}}]
    text = describe(pod, events)
    assert "Rank:         decode/0/1(worker)" in text and "Ready=False (ContainersNotReady: not ready)" in text
    assert "main: image img, waiting (CrashLoopBackOff), ready False, restarts 3" in text
    assert "last terminated: Error exit 1" in text and "k: Secret mpi" in text
    assert "BackOff" in text and "Pulled" not in text


def test_crd_versions_and_deployment_selection():
    crds = json.loads((RECORDED / "grove-healthy/resources/apiextensions.k8s.io/v1/customresourcedefinitions.json")
                      .read_text())["items"]
    versions = crd_versions(crds)
    dgd = next(c for c in crds if c["metadata"]["name"] == "dynamographdeployments.nvidia.com")
    assert versions["dynamographdeployments.nvidia.com"]["served"] == [v["name"] for v in dgd["spec"]["versions"]
                                                                       if v["served"]]
    dep = {"metadata": {"namespace": "a"}, "spec": {"selector": {"matchLabels": {"app": "x"}}}}
    assert selected_by(dep, {"metadata": {"namespace": "a", "labels": {"app": "x", "b": "c"}}})
    assert not selected_by(dep, {"metadata": {"namespace": "b", "labels": {"app": "x"}}})
    assert not selected_by(dep, {"metadata": {"namespace": "a", "labels": {"app": "y"}}})


class RecordedWithLogs(RecordedCluster):
    """A recording that also serves pod logs: each container's log is one line naming it (a
    recording holds no logs; this stands in for the kubelet's)."""

    timeout = 30.0

    def stream(self, path, params=None, *, read_timeout=None):
        from kubectl_dynamo.cluster.client import Stream
        from kubectl_dynamo.errors import NotFound

        if (params or {}).get("previous"):
            raise NotFound("previous terminated container not found")
        pod = path.rsplit("/", 2)[-2]
        return Stream(FakeChunks([f"2026-12-01T09:00:00Z {pod} {params['container']} says hello\n".encode()]))


class FakeChunks:
    def __init__(self, chunks):
        self.chunks = list(chunks)

    def read1(self, n):
        return self.chunks.pop(0) if self.chunks else b""

    def close(self):
        pass


def tty_env(tty):
    import io

    from kubectl_dynamo.environment import Environment

    return Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(), stderr_isatty=tty,
                       now=lambda: datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc))


@pytest.mark.parametrize("state", ["grove-healthy", "lws-mpi-secret-deleted"])
def test_collect_of_a_recorded_state_replays_the_same_doctor(state, tmp_path):
    import tarfile

    from kubectl_dynamo.commands.collect import run_collect
    from kubectl_dynamo.commands.doctor import run_doctor

    source = RecordedWithLogs(str(RECORDED / state), "llm")
    bundle = str(tmp_path / "b.tar.gz")
    env = tty_env(True)
    result = run_collect(source, env, name=None, all_namespaces=True, output=bundle)
    assert "collect: logs" in env.stderr.getvalue() and env.stderr.getvalue().endswith("\r\x1b[K")  # progress, then cleared
    direct = run_doctor(RecordedCluster(str(RECORDED / state)), all_namespaces=True).data
    offline = run_doctor(RecordedCluster(bundle), all_namespaces=True).data
    assert offline["findings"] == direct["findings"] and offline["deployments"] == direct["deployments"]
    with tarfile.open(bundle) as tar:
        names = tar.getnames()
        manifest = json.loads(tar.extractfile("b/collect.json").read())
    pods = json.loads((RECORDED / state / "resources/core/v1/pods.json").read_text())["items"]
    ranked = [p for p in pods if "nvidia.com/dynamo-graph-deployment-name" in p["metadata"].get("labels", {})]
    for p in ranked:
        for c in p["spec"]["containers"]:
            assert f"b/pods/{p['metadata']['namespace']}/{p['metadata']['name']}/{c['name']}.log" in names
    assert len(manifest["ranks"]) == len(ranked) and result.data["pods"] == len(ranked)
    assert any(n.startswith("b/controllers/") for n in names)  # the operator's and controllers' pods
    quiet = tty_env(False)
    run_collect(source, quiet, name=None, all_namespaces=True, output=bundle, force=True)
    assert quiet.stderr.getvalue() == ""  # no progress off a terminal


def test_collect_refuses_what_it_must_not_do(tmp_path):
    from kubectl_dynamo.commands.collect import run_collect
    from kubectl_dynamo.errors import InputError, NotFound, UsageError

    source = RecordedWithLogs(str(RECORDED / "grove-healthy"), "llm")
    existing = tmp_path / "x.tar.gz"
    existing.write_text("keep me")
    with pytest.raises(InputError, match="--force"):
        run_collect(source, tty_env(False), name="vllm-mn", all_namespaces=False, output=str(existing))
    assert existing.read_text() == "keep me"
    with pytest.raises(UsageError, match=".tar.gz"):
        run_collect(source, tty_env(False), name="vllm-mn", all_namespaces=False, output=str(tmp_path / "x.zip"))
    with pytest.raises(UsageError):
        run_collect(source, tty_env(False), name=None, all_namespaces=False, output=str(tmp_path / "y.tar.gz"))
    with pytest.raises(NotFound):
        run_collect(source, tty_env(False), name="nope", all_namespaces=False, output=str(tmp_path / "y.tar.gz"))
    assert not (tmp_path / "y.tar.gz").exists()


def test_get_puts_a_groups_finding_on_its_own_row():
    """lws-cordoned (recorded): vllm-mn's decode group is Pending; its Frontend runs. The decode row shows
    group-pending, the Frontend row does not (it is another component's problem)."""
    result = run_get(RecordedCluster(str(RECORDED / "lws-cordoned"), "llm"), Env(datetime.now(timezone.utc)),
                     all_namespaces=False, name="vllm-mn")
    (d,) = result.data["deployments"]
    rows = {c["name"]: c["groups"] for c in d["components"]}
    assert [g["topFinding"]["code"] for g in rows["decode"]] == ["group-pending"]
    assert all((g["topFinding"] or {}).get("code") != "group-pending" for g in rows["Frontend"]), rows["Frontend"]
    assert d["topFinding"]["code"] == "group-pending"


@pytest.mark.parametrize("state, present", [("lws-healthy", True), ("lws-mpi-secret-deleted", False), (None, None)])
def test_tree_reads_a_needed_secret_by_name(state, present):
    """The MPI SSH Secret the trtllm pods mount: in lws-healthy the recording holds it, lws-mpi-secret-deleted
    deleted it; a GET the API server forbids (None) leaves it unknown and says so in skipped. Read by name as
    doctor reads it (model/snapshot.read_secret_keys): never listed, its values never kept."""
    from kubectl_dynamo.errors import Forbidden

    class NoSecrets(RecordedCluster):
        def get(self, path, **kw):
            if "/secrets/" in path:
                raise Forbidden('secrets "mpi-run-ssh-secret" is forbidden')
            return super().get(path, **kw)

    cluster = (RecordedCluster if state else NoSecrets)(str(RECORDED / (state or "lws-healthy")), "llm")
    tree = run_tree(cluster, "trtllm-mn").data
    (need,) = [n for n in tree["needs"] if (n["kind"], n["name"]) == ("Secret", "mpi-run-ssh-secret")]
    assert need["present"] is present
    assert any(s["check"] == "secret mpi-run-ssh-secret" for s in tree["skipped"]) is (present is None)
