"""logs without a cluster: prefixes, rank order, timestamp merge, bounded lines and queues, colour.

Pods are hand-made with the labels Grove and LWS put on them (ai-dynamo/grove
operator/api/common/labels.go v0.1.0-alpha.12; LWS ``leaderworkerset.sigs.k8s.io/*``); the expected
ranks follow the operator's rule quoted in doctor.py (Grove worker rank = pod index + 1).
"""

from __future__ import annotations

import io
import threading
import time

from kubectl_dynamo.cluster.client import Stream
from kubectl_dynamo.cluster.streams import Readers, drain
from kubectl_dynamo.commands.logs import Filters, Printer, Source, merged, sources, split_timestamp, timestamp_key
from kubectl_dynamo.environment import Environment
from tests.unit.fake_body import Body


def grove_pod(name, clique_suffix, index, group=0, component="decode"):
    return {"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "labels": {
        "nvidia.com/dynamo-graph-deployment-name": "llm", "nvidia.com/dynamo-component": component,
        "grove.io/podclique": f"llm-0-{component}-{group}-{component}-{clique_suffix}",
        "grove.io/podcliquescalinggroup-replica-index": str(group), "grove.io/podclique-pod-index": str(index)}},
        "spec": {"initContainers": [{"name": "wait-for-leader"}], "containers": [{"name": "main"}, {"name": "sidecar"}]}}


def lws_pod(name, group, worker):
    return {"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "labels": {
        "nvidia.com/dynamo-graph-deployment-name": "llm", "nvidia.com/dynamo-component": "worker",
        "leaderworkerset.sigs.k8s.io/group-index": str(group), "leaderworkerset.sigs.k8s.io/worker-index": str(worker)}},
        "spec": {"containers": [{"name": "main"}]}}


PODS = [grove_pod("w1", "wkr", 1), grove_pod("ldr", "ldr", 0), grove_pod("w0", "wkr", 0),
        grove_pod("g1-ldr", "ldr", 0, group=1)]


def test_prefix_is_component_group_rank_role():
    by_pod = {s.pod: s.prefix for s in sources(PODS, Filters())}
    assert by_pod == {"ldr": "decode/0/0(leader)", "w0": "decode/0/1(worker)", "w1": "decode/0/2(worker)",
                      "g1-ldr": "decode/1/0(leader)"}
    lws = sources([lws_pod("l-0", 0, 0), lws_pod("l-0-1", 0, 1)], Filters())
    assert [s.prefix for s in lws] == ["worker/0/0(leader)", "worker/0/1(worker)"]
    single = {"metadata": {"name": "fe", "namespace": "ns", "labels": {"nvidia.com/dynamo-component": "Frontend"}},
              "spec": {"containers": [{"name": "main"}]}}
    assert sources([single], Filters())[0].prefix == "Frontend/0/-(main)"


def test_sources_in_rank_order_leader_first_and_filters():
    assert [s.pod for s in sources(PODS, Filters())] == ["ldr", "w0", "w1", "g1-ldr"]
    assert [s.pod for s in sources(PODS, Filters(rank=1))] == ["w0"]
    assert [s.pod for s in sources(PODS, Filters(role="leader"))] == ["ldr", "g1-ldr"]
    assert [s.pod for s in sources(PODS, Filters(group=1))] == ["g1-ldr"]
    assert sources(PODS, Filters(component="prefill")) == []


def test_init_containers_on_request_and_named_containers():
    srcs = sources([PODS[1]], Filters(init_containers=True))
    assert [(s.container, s.prefix) for s in srcs] == [
        ("wait-for-leader", "decode/0/0(leader)[init:wait-for-leader]"), ("main", "decode/0/0(leader)")]
    side = sources([PODS[1]], Filters(container="sidecar"))
    assert [s.prefix for s in side] == ["decode/0/0(leader)[sidecar]"]


def test_timestamps_sort_as_times_not_as_text():
    # RFC3339Nano trims trailing zeros, so "…:00Z" < "…:00.5Z" must hold although "Z" > "." as text.
    keys = [timestamp_key(t) for t in ("2026-12-01T09:00:00Z", "2026-12-01T09:00:00.5Z",
                                        "2026-12-01T09:00:00.123456789Z", "2026-12-01T10:00:00.1+01:00")]
    assert keys == ["2026-12-01T09:00:00.000000000", "2026-12-01T09:00:00.500000000",
                    "2026-12-01T09:00:00.123456789", "2026-12-01T09:00:00.100000000"]
    assert split_timestamp(b"2026-12-01T09:00:01Z hello world") == ("2026-12-01T09:00:01.000000000", b"hello world")
    assert split_timestamp(b"no timestamp here") == ("", b"no timestamp here")


class FakeRaw:
    """What urllib3 hands ``Stream``: read1() chunks, then b"" at the end."""

    def __init__(self, chunks):
        self.chunks = list(chunks)
        self.closed = False

    def read1(self, n):
        return self.chunks.pop(0) if self.chunks else b""

    def close(self):
        self.closed = True


def test_stream_lines_split_across_chunks_and_long_lines_are_cut():
    s = Stream(FakeRaw([b"one\ntw", b"o\nthr", b"ee"]))
    assert list(s.lines()) == [b"one", b"two", b"three"]
    s = Stream(FakeRaw([b"x" * 11 + b"\nshort\n", b"y" * 12]))  # 12 bytes without a newline: cut as they come
    assert list(s.lines(max_line=5)) == [b"xxxxx", b"xxxxx", b"x", b"short", b"yyyyy", b"yyyyy", b"yy"]


def test_merge_interleaves_streams_by_time():
    a = Source("ns", "a", "", "decode", 0, 0, "leader", "main")
    b = Source("ns", "b", "", "decode", 0, 1, "worker", "main")
    readers = Readers()
    qa = readers.add(a, Stream(FakeRaw([b"2026-12-01T09:00:01Z a1\n2026-12-01T09:00:03Z a3\n"])), own_queue=True)
    qb = readers.add(b, Stream(FakeRaw([b"2026-12-01T09:00:02Z b2\n2026-12-01T09:00:03Z b3\n"])), own_queue=True)
    failed = []
    out = [(src.pod, split_timestamp(line)[1]) for src, line in merged([(a, qa), (b, qb)], failed)]
    # equal times: rank order (the leader first)
    assert out == [("a", b"a1"), ("b", b"b2"), ("a", b"a3"), ("b", b"b3")] and failed == []


class Endless:
    """A stream that never ends: a pod that logs faster than anyone reads."""

    def __init__(self):
        self.served = 0
        self.closed = False

    def read1(self, n):
        if self.closed:
            raise OSError("closed")
        self.served += 1
        return b"line\n"

    def close(self):
        self.closed = True

    def shutdown(self):
        self.closed = True


def test_queue_bounds_memory_and_close_ends_the_reader():
    raw = Endless()
    readers = Readers(per_stream=8)
    q = readers.add("k", Stream(raw), own_queue=True)
    deadline = time.monotonic() + 5
    while q.qsize() < 8 and time.monotonic() < deadline:
        time.sleep(0.01)
    served = raw.served
    time.sleep(0.2)
    # the reader is blocked on the full queue (8 batches): it stopped reading (back-pressure)
    assert q.qsize() == 8 and raw.served <= served + 1
    readers.close()
    items = list(drain(q, tick=0.05))
    assert items[-1].end and items[-1].error is None  # closed by us: not an error
    assert len(items) <= 8 + 2
    assert not any(t.name == "stream k" for t in threading.enumerate() if t.is_alive())


def env(tty=True, no_color=False):
    return Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(), stdout_isatty=tty,
                       environ={"NO_COLOR": "1"} if no_color else {})


def test_colour_per_rank_only_on_a_terminal_without_no_color():
    srcs = sources(PODS[:3], Filters())
    for e, coloured in ((env(), True), (env(tty=False), False), (env(no_color=True), False)):
        p = Printer(e, srcs)
        p.line(srcs[0], b"2026-12-01T09:00:01Z hi")
        p.line(srcs[1], b"2026-12-01T09:00:02Z ho")
        text = e.stdout.getvalue()
        assert ("\x1b[" in text) is coloured
        if coloured:  # rank 0 and rank 1 in different colours
            first, second = text.splitlines()
            assert first.split("decode")[0] != second.split("decode")[0]
        else:  # prefixes padded to one width
            assert text == "decode/0/0(leader) hi\ndecode/0/1(worker) ho\n"


def test_a_cut_line_stays_whole_and_in_place():
    a = Source("ns", "a", "", "decode", 0, 0, "leader", "main")
    b = Source("ns", "b", "", "decode", 0, 1, "worker", "main")
    readers = Readers(max_line=32)
    long = b"2026-12-01T09:00:02Z " + b"x" * 20 + b" tail-of-the-line"
    qa = readers.add(a, Stream(FakeRaw([long + b"\n2026-12-01T09:00:04Z a4\n"])), own_queue=True)
    qb = readers.add(b, Stream(FakeRaw([b"2026-12-01T09:00:01Z b1\n2026-12-01T09:00:03Z b3\n"])), own_queue=True)
    e = env(tty=False)
    p = Printer(e, [a, b])
    for src, line in merged([(a, qa), (b, qb)], []):
        p.line(src, line)
    out = e.stdout.getvalue().splitlines()
    # the rest of rank 0's long line (cut at 32 bytes) follows its start, not ahead of rank 1's earlier
    # line, and is printed whole (it has no timestamp to strip)
    assert out == ["decode/0/1(worker) b1", "decode/0/0(leader) " + "x" * 11,
                   "decode/0/0(leader) " + "x" * 9 + " tail-of-the-line", "decode/0/1(worker) b3",
                   "decode/0/0(leader) a4"]


def test_a_pod_that_is_not_running_says_why():
    """doctor's reason for a Pending pod, on the recorded real state lws-cordoned (tests/data/recorded): the
    scheduler's "4 node(s) were unschedulable" read against the nodes, with the fix."""
    from pathlib import Path

    from kubectl_dynamo.cluster.client import path_for
    from kubectl_dynamo.cluster.live import node_reader
    from kubectl_dynamo.cluster.recorded import RecordedCluster
    from kubectl_dynamo.commands.logs import not_running

    cluster = RecordedCluster(str(Path(__file__).resolve().parent.parent / "data" / "recorded" / "lws-cordoned"))
    pods = cluster.list(path_for("", "v1", "pods", "llm"))
    pending = next(p for p in pods if not p["spec"].get("nodeName"))
    running = next(p for p in pods if p["spec"].get("nodeName"))
    src = lambda p: Source("llm", p["metadata"]["name"], "", "decode", 0, 0, "leader", "main")  # noqa: E731
    nodes = node_reader(cluster)
    why = not_running(nodes, pending, src(pending), False)
    assert why is not None and why.startswith("Pending, not scheduled: 4 of 4 nodes are cordoned (gpu-node-0")
    assert "kubectl uncordon gpu-node-0" in why
    assert not_running(nodes, running, src(running), False) is None
    # -p on a container that never restarted (restartCount 0 in the recording): no previous instance, said as
    # such (not the kubelet's 'previous terminated container "main" ... not found')
    assert running["status"]["containerStatuses"][0]["restartCount"] == 0
    why = not_running(nodes, running, src(running), True)
    assert why is not None and why.startswith("no previous instance: container main has not restarted")
    restarted = {**running, "status": {**running["status"], "containerStatuses": [
        {**running["status"]["containerStatuses"][0], "restartCount": 1}]}}
    assert not_running(nodes, restarted, src(restarted), True) is None


# -- logs -f: the pods' WATCH is cluster/streams.Watched on the logs' own readers ---------------------

def _running(pod, restarts=0, **annotations):
    pod = {**pod, "metadata": {**pod["metadata"], "annotations": annotations},
           "status": {"containerStatuses": [{"name": "main", "restartCount": restarts, "state": {"running": {}}}]}}
    return pod


class _Gated(Body):
    """A watch body that hands out each event once the output shows what it waits for (each event then
    meets the state the one before left)."""

    def __init__(self, events, out):
        super().__init__([])
        self.events, self.out = list(events), out

    def read1(self, n):
        import json

        while not self.closed.is_set():
            if self.events and self.events[0][0] in self.out.getvalue():
                return json.dumps(self.events.pop(0)[1]).encode() + b"\n"
            self.closed.wait(0.01)
        return b""


class _FollowCluster:
    """The DGD llm in ns with ``listed`` pods; the pods' first WATCH hands out ``events`` (after, event)
    as the output shows ``after``; each log follow prints one line naming its pod and how many times it
    was opened, then stays open."""

    namespace = "ns"

    def __init__(self, listed, events, out):
        self.listed, self.events, self.out = listed, events, out
        self.watches, self.logs, self.bodies = [], [], {}

    def get(self, path, params=None):
        if "/pods" in path:
            return {"metadata": {"resourceVersion": "1"}, "items": self.listed}
        return {"metadata": {"name": "llm"}}  # the DGD

    def stream(self, path, params=None, **kw):
        if (params or {}).get("watch") == "true":
            self.watches.append(params["resourceVersion"])
            return Stream(_Gated(self.events if len(self.watches) == 1 else [], self.out))
        pod = path.split("/pods/")[1].split("/")[0]
        self.logs.append(pod)
        n = self.logs.count(pod)
        body = self.bodies[(pod, n)] = Body([f"{pod} log {n}\n".encode()])
        return Stream(body)


class _Stop(Exception):
    pass


class _Until(io.StringIO):
    """stdout that ends the follow once ``last`` was printed."""

    def __init__(self, last):
        super().__init__()
        self.last = last

    def write(self, s):
        n = super().write(s)
        if self.last in self.getvalue():
            raise _Stop
        return n


def test_follow_reads_whole_pod_events_restarts_and_drops_deleted_pods():
    """A pod's watch event is one line holding the whole pod, often above the 16 KiB log line limit (a real
    pod with its managedFields): it is read whole (was: cut at the log limit, never decoded, the watch
    reopened at the same version). A restart opens the container's new log; a DELETED pod's log is closed."""
    from kubectl_dynamo.commands.logs import LogOptions, run_logs

    a, b = lws_pod("l-0", 0, 0), lws_pod("l-0-1", 0, 1)

    def at(pod, version):
        return {**pod, "metadata": {**pod["metadata"], "resourceVersion": version}}

    big = _running(a, restarts=1, note="x" * 40_000)
    out = _Until("l-0-1 log 2")
    cluster = _FollowCluster([_running(a)], [
        ("l-0 log 1", {"type": "MODIFIED", "object": at(big, "2")}),
        ("l-0 log 2", {"type": "ADDED", "object": at(_running(b), "3")}),
        ("l-0-1 log 1", {"type": "DELETED", "object": at(big, "4")}),
        ("l-0-1 log 1", {"type": "MODIFIED", "object": at(_running(b, restarts=1), "5")}),
    ], out)
    env = Environment(stdin=io.StringIO(), stdout=out, stderr=io.StringIO())
    done = []

    def follow():
        try:
            run_logs(cluster, env, "llm", Filters(), LogOptions(follow=True))
        except _Stop:
            done.append(True)

    t = threading.Thread(target=follow, daemon=True)
    t.start()
    t.join(20)
    assert done, f"never printed the last line: {out.getvalue()!r} {cluster.logs}"
    lines = out.getvalue().splitlines()
    assert [x.split(" ", 1)[1] for x in lines] == ["l-0 log 1", "l-0 log 2", "l-0-1 log 1", "l-0-1 log 2"]
    assert cluster.watches == ["1"]  # one WATCH from the LIST's version, never reopened
    assert cluster.bodies[("l-0", 2)].closed.is_set()  # l-0 deleted: its follow closed
