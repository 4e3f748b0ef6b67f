"""``rollout status|history`` on what real controllers left (tests/data/recorded, see its PROVENANCE.md),
and the watch machinery they follow with (``cluster/streams.Watched``).

Expectations are what the real operator, LWS and Grove said in those recordings (their own status
fields and conditions), never what this code computes.
"""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from typing import Dict, List

import pytest

from kubectl_dynamo.cluster.client import Stream
from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.cluster.streams import Watched
from kubectl_dynamo.commands import rollout
from kubectl_dynamo.environment import Environment
from tests.unit.fake_body import Body

RECORDED = Path(__file__).resolve().parent.parent / "data" / "recorded"


def look(state: str, name: str, ns: str = "llm"):
    return rollout.status_once(RecordedCluster(str(RECORDED / state), namespace=ns), name)


# The real controllers' word in each recording: the DGD's Ready condition (the operator), the
# LeaderWorkerSet's Available condition / the PodCliqueSet's availableReplicas (LWS, Grove).
@pytest.mark.parametrize("state, name, done, waiting", [
    ("lws-healthy", "vllm-mn", True, None),  # Ready all_resources_are_ready; LWS AllGroupsReady
    ("lws-healthy", "trtllm-mn", True, None),
    ("grove-healthy", "sglang-mn", True, None),  # PodCliqueSet availableReplicas 1 = updatedReplicas 1
    # every node cordoned, the decode group recreated Pending: LWS readyReplicas 0, Available False
    ("lws-cordoned", "vllm-mn", False, "decode: LeaderWorkerSet vllm-mn-decode-bb67ccf2-0: 0 of 1 updated groups ready"),
    # Grove counts a replica updated only once available: a Pending replacement worker makes both 0
    ("grove-replacement-pod", "vllm-mn", False, "PodCliqueSet vllm-mn: 0 of 1 replicas available"),
    # the operator refused the DGD (missing KAI queue): it never observed generation 1
    ("grove-queue-missing", "vllm-q", False, "the operator has not observed generation 1 yet (observed 0)"),
    # kwok stopped: the frontend Deployment's availableReplicas dropped to 0
    ("lws-nodes-not-ready", "vllm-mn", False, "Frontend: Deployment vllm-mn-frontend: 0 of 1 updated replicas are "
                                              "available"),
])
def test_one_look_at_recorded_states(state, name, done, waiting):
    result = look(state, name)
    assert result.data["done"] is done
    assert result.data["waiting"] == waiting
    assert result.exit_code == (0 if done else 1)
    text = result.table(result.data, False, False, None)
    assert text == (f'dynamographdeployment "{name}" successfully rolled out' if done else
                    f'Waiting for dynamographdeployment "{name}" rollout to finish: {waiting}...')


def test_history_lists_the_recorded_generation():
    """lws-healthy: one worker generation, the hash the operator stored (nvidia.com/current-worker-hash-v2
    bb67ccf2) on the DCD vllm-mn-decode-bb67ccf2, its LeaderWorkerSet and 2 Ready pods."""
    cluster = RecordedCluster(str(RECORDED / "lws-healthy"), namespace="llm")
    data = rollout.history(cluster, "vllm-mn").data
    assert [(g["revision"], g["hash"], g["current"], g["dcds"], g["workloads"], g["pods"], g["podsReady"])
            for g in data["generations"]] == [
        (1, "bb67ccf2", True, ["vllm-mn-decode-bb67ccf2"], ["LeaderWorkerSet/vllm-mn-decode-bb67ccf2-0"], 2, 2)]
    with pytest.raises(Exception, match="revision 2 not found"):
        rollout.history(cluster, "vllm-mn", 2)


def test_a_missing_dgd_is_not_found():
    from kubectl_dynamo.errors import NotFound

    with pytest.raises(NotFound, match='"nope" not found in namespace llm'):
        look("lws-healthy", "nope")


# -- the watch machinery -----------------------------------------------------------------------------

class _Raw(Body):
    """A watch body: the given events, then (``end``) the server ends it, else it blocks."""

    def __init__(self, lines: List[dict], end: bool):
        super().__init__([json.dumps(line).encode() + b"\n" for line in lines] + ([b""] if end else []))


class _Cluster:
    """LISTs from ``lists`` (one answer per call), WATCHes from ``watches`` (one script per open)."""

    def __init__(self, lists: List[dict], watches: List[tuple]):
        self.lists, self.watches = lists, watches
        self.opened: List[Dict[str, str]] = []
        self.listed = 0

    def get(self, path, params=None):
        self.listed += 1
        return self.lists.pop(0)

    def stream(self, path, params=None):
        self.opened.append(dict(params))
        lines, end = self.watches.pop(0) if self.watches else ([], False)
        return Stream(_Raw(lines, end))


def _pod(name: str, version: str, ready: str = "True") -> dict:
    return {"metadata": {"name": name, "uid": name, "resourceVersion": version},
            "status": {"conditions": [{"type": "Ready", "status": ready}]}}


def _until(watched: Watched, want, tries: int = 200):
    for _ in range(tries):
        watched.wait(0.05)
        if want():
            return
    raise AssertionError(f"never: {watched.state}")


def test_watched_resumes_from_the_last_version_and_relists_after_410():
    """A watch the server ends is reopened at the last resourceVersion seen; an ERROR event (410 Gone:
    that version expired) makes it LIST again and watch from the new LIST's version (what
    ``kubectl get -w`` and client-go's reflector do)."""
    cluster = _Cluster(
        lists=[{"metadata": {"resourceVersion": "10"}, "items": [_pod("a", "9")]},
               {"metadata": {"resourceVersion": "50"}, "items": [_pod("a", "49", "False"), _pod("c", "48")]}],
        watches=[([{"type": "ADDED", "object": _pod("b", "11")}], True),  # then the server ends it
                 ([{"type": "ERROR", "object": {"kind": "Status", "code": 410}}], False),
                 ([{"type": "DELETED", "object": _pod("c", "51")}], False)])
    watched = Watched(cluster, {"pod": ("/api/v1/pods", None, None)})
    watched.start()
    try:
        _until(watched, lambda: sorted(watched.state["pod"]) == ["a", "c"] and cluster.listed == 2
               and len(cluster.opened) == 3 and "c" not in watched.state["pod"] or sorted(watched.state["pod"]) == ["a"])
    finally:
        watched.close()
    assert [o["resourceVersion"] for o in cluster.opened] == ["10", "11", "50"]
    assert all(o["watch"] == "true" and o["allowWatchBookmarks"] == "true" for o in cluster.opened)
    assert sorted(watched.state["pod"]) == ["a"]  # b vanished with the re-list, c was deleted after it
    assert watched.state["pod"]["a"]["status"]["conditions"][0]["status"] == "False"


def _env() -> Environment:
    return Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())


class _StillCluster(RecordedCluster):
    """A recorded state whose watches stay open and quiet: nothing moves."""

    def stream(self, path, params=None):
        return Stream(_Raw([], False))


def test_follow_exits_1_with_doctors_findings_when_nothing_moves():
    """lws-cordoned: the recreated decode group cannot be scheduled; with a 1 s progress deadline
    rollout status ends with rollout-stalled first, then doctor's findings on that DGD."""
    env = _env()
    cluster = _StillCluster(str(RECORDED / "lws-cordoned"), namespace="llm")
    code = rollout.follow(cluster, env, "vllm-mn", timeout=1.0)
    out = env.stdout.getvalue()
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == ('Waiting for dynamographdeployment "vllm-mn" rollout to finish: decode: LeaderWorkerSet '
                        'vllm-mn-decode-bb67ccf2-0: 0 of 1 updated groups ready...')
    assert lines[1].split()[:2] == ["SEVERITY", "CODE"]
    assert lines[2].split()[:2] == ["warning", "rollout-stalled"]
    # its fix does not send the user back to the command that printed it
    env = _env()
    assert rollout.follow(cluster, env, "vllm-mn", timeout=1.0, json_out=True) == 1
    (stall,) = [f for f in json.loads(env.stdout.getvalue())["findings"] if f["code"] == "rollout-stalled"]
    assert "rollout status" not in stall["hint"] and "rollout history vllm-mn -n llm" in stall["hint"]
    # doctor's word on the Pending group: the recorded scheduler's verdict, every node cordoned
    assert any(x.split()[:2] == ["error", "group-pending"] and "4 of 4 nodes are cordoned" in x for x in lines), out


def test_follow_json_ends_with_the_state_and_findings():
    env = _env()
    cluster = _StillCluster(str(RECORDED / "lws-healthy"), namespace="llm")
    assert rollout.follow(cluster, env, "vllm-mn", timeout=1.0, json_out=True) == 0
    data = json.loads(env.stdout.getvalue())
    assert data["done"] is True and data["findings"] == []


def test_versions_md_carries_the_generated_compatibility_section():
    """docs/versions.md's cog section is what model/compat.markdown() renders from data/compatibility.json
    (scripts/gen-docs; CI runs cog --check)."""
    from kubectl_dynamo.model.compat import markdown

    text = (Path(__file__).resolve().parents[2] / "docs" / "versions.md").read_text()
    assert markdown() in text


# -- recorded sequences: the real operator and LWS moving a DGD from one worker generation to the next ----------

SEQUENCES = sorted(p.name for p in RECORDED.iterdir() if p.is_dir() and (p / "01" / "manifest.json").is_file())


def _steps(name: str) -> List[Path]:
    return sorted(p for p in (RECORDED / name).iterdir() if (p / "manifest.json").is_file())


def _raw_items(step: Path, group: str, version: str, resource: str) -> List[dict]:
    path = step / "resources" / (group or "core") / version / f"{resource}.json"
    return json.loads(path.read_text())["items"] if path.is_file() else []


def _sequence_dgd(step: Path) -> str:
    """The DGD the sequence changes: named in its manifest (``source.dgd``), or by the LWS scenario."""
    source = json.loads((step / "manifest.json").read_text())["source"]
    return source.get("dgd") or {"rollout-multinode": "vllm-mn", "rollout-single-node": "agg"}[source["scenario"]]


# A sequence recorded up to a change that cannot complete (PROVENANCE.md): it ends not done.
STALLED = {"grove-kai0152-rollout-stalled", "grove-rollout-stalled"}
COMPLETED = [s for s in SEQUENCES if s not in STALLED]


def _old_pods_or_rolling(step: Path, dgd_name: str) -> bool:
    """From the raw recording alone: a pod of the DGD carries a worker hash the DGD does not name as active,
    or (Grove) a pod template hash other than the one its PodClique names (the PodClique label
    grove.io/pod-template-hash, or the target of its own update: ai-dynamo/grove@19905d53
    operator/internal/controller/podclique/reconcilestatus.go mutateUpdatedReplica); or the operator's
    rolling update is Pending/InProgress, or Grove's PodCliqueSet update has not ended
    (status.updateProgress without updateEndedAt)."""
    (dgd,) = [d for d in _raw_items(step, "nvidia.com", "v1beta1", "dynamographdeployments")
              if d["metadata"]["name"] == dgd_name]
    ann = dgd["metadata"].get("annotations") or {}
    active = {ann.get("nvidia.com/current-worker-hash"), ann.get("nvidia.com/current-worker-hash-v2")} - {None}
    phase = ((dgd.get("status") or {}).get("rollingUpdate") or {}).get("phase")
    pods = [p for p in _raw_items(step, "", "v1", "pods")
            if (p["metadata"].get("labels") or {}).get("nvidia.com/dynamo-graph-deployment-name") == dgd_name]
    hashes = {(p["metadata"].get("labels") or {}).get("nvidia.com/dynamo-worker-hash") for p in pods} - {None}
    cliques = {c["metadata"]["name"]: ((c.get("status") or {}).get("updateProgress") or {}).get("podTemplateHash")
               or c["metadata"]["labels"].get("grove.io/pod-template-hash")
               for c in _raw_items(step, "grove.io", "v1alpha1", "podcliques")}
    stale = [p for p in pods if (p["metadata"]["labels"].get("grove.io/podclique") in cliques
                                 and p["metadata"]["labels"].get("grove.io/pod-template-hash")
                                 != cliques[p["metadata"]["labels"]["grove.io/podclique"]])]
    grove_rolling = any(((x.get("status") or {}).get("updateProgress") or {}) and not x["status"]["updateProgress"].get(
        "updateEndedAt") for x in _raw_items(step, "grove.io", "v1alpha1", "podcliquesets")
        if x["metadata"]["name"] == dgd_name)
    return phase in ("Pending", "InProgress") or bool(hashes - active) or bool(stale) or grove_rolling


@pytest.mark.parametrize("sequence", COMPLETED)
def test_never_done_while_an_old_pod_is_left_and_done_at_the_end(sequence):
    steps = _steps(sequence)
    name = _sequence_dgd(steps[0])
    verdicts = []
    for step in steps:
        data = rollout.status_once(RecordedCluster(str(step), namespace="llm"), name).data
        if _old_pods_or_rolling(step, name):
            assert not data["done"], (step.name, data["waiting"])
        verdicts.append(data["done"])
    assert verdicts[-1] is True, "the recording ends with the change complete"
    assert False in verdicts, "the recording shows the rollout under way"


def test_get_reports_doctors_top_finding_per_dgd():
    """get runs doctor's per-DGD checks (registered when their modules load): on lws-cordoned the recreated
    vllm-mn group is Pending on cordoned nodes."""
    from kubectl_dynamo.commands.get import run_get

    cluster = RecordedCluster(str(RECORDED / "lws-cordoned"), namespace="llm")
    data = run_get(cluster, _env(), all_namespaces=False).data
    top = {d["name"]: (d["topFinding"] or {}).get("code") for d in data["deployments"]}
    assert top["vllm-mn"] == "group-pending"


def test_watched_takes_events_larger_than_a_log_line():
    """A watch event is one line holding a whole object; a LeaderWorkerSet with its templates is tens of KB
    (the live LWS test met one of 16+ KB, cut at the log line limit it then never decoded)."""
    big = {"metadata": {"name": "big", "uid": "big", "resourceVersion": "2"}, "spec": {"x": "y" * 200_000}}
    cluster = _Cluster(lists=[{"metadata": {"resourceVersion": "1"}, "items": []}],
                       watches=[([{"type": "ADDED", "object": big}], False)])
    watched = Watched(cluster, {"lws": ("/apis/leaderworkerset.x-k8s.io/v1/leaderworkersets", None, None)})
    watched.start()
    try:
        _until(watched, lambda: "big" in watched.state["lws"])
    finally:
        watched.close()
    assert len(watched.state["lws"]["big"]["spec"]["x"]) == 200_000


class _Clock:
    """Releases the recorded steps one by one, to every watch at once."""

    def __init__(self, last: int):
        self.released, self.last = 1, last
        self._stop = threading.Event()
        threading.Thread(target=self._tick, daemon=True).start()

    def _tick(self):
        while not self._stop.wait(0.3) and self.released < self.last:
            self.released += 1

    def stop(self):
        self._stop.set()


class _StepRaw(_Raw):
    """A watch body that hands out each step's events once the clock has released that step."""

    def __init__(self, events: List[tuple], clock: _Clock):
        super().__init__([], False)
        self.events, self.clock = events, clock

    def read1(self, n: int) -> bytes:
        while not self.closed.is_set():
            if self.events and self.events[0][0] <= self.clock.released:
                return json.dumps(self.events.pop(0)[1]).encode() + b"\n"
            self.closed.wait(0.02)
        return b""


class _Replay(RecordedCluster):
    """The first step LISTed; the later steps arrive as watch events (ADDED / MODIFIED / DELETED by uid)."""

    def __init__(self, steps: List[Path], clock: _Clock):
        super().__init__(str(steps[0]), namespace="llm")
        self.steps, self.clock = steps, clock

    def stream(self, path, params=None):
        query = {k: v for k, v in (params or {}).items() if k in ("labelSelector", "fieldSelector")}
        seen = {o["metadata"]["uid"]: o for o in self.get(path, query)["items"]}
        events = []
        for i, step in enumerate(self.steps[1:], 2):
            now = {o["metadata"]["uid"]: o for o in RecordedCluster(str(step), namespace="llm").get(path, query)["items"]}
            events += [(i, {"type": "DELETED", "object": o}) for uid, o in seen.items() if uid not in now]
            events += [(i, {"type": "ADDED" if uid not in seen else "MODIFIED", "object": o})
                       for uid, o in now.items() if seen.get(uid) != o]
            seen = now
        return Stream(_StepRaw(events, self.clock))


@pytest.mark.parametrize("sequence", COMPLETED)
def test_follow_replayed_sequence_ends_only_at_the_final_state(sequence):
    """The recorded steps replayed as watch events: rollout status keeps waiting through every step the
    real operator called Ready while old pods served, and says done only once the last step is out."""
    steps = _steps(sequence)
    clock = _Clock(len(steps))
    env = _env()
    try:
        code = rollout.follow(_Replay(steps, clock), env, _sequence_dgd(steps[0]), timeout=30)
        released = clock.released
    finally:
        clock.stop()
    lines = env.stdout.getvalue().splitlines()
    assert code == 0
    assert released == len(steps), "said done before the final state was shown"
    assert lines[0].startswith("Waiting for ") and lines[-1].endswith("successfully rolled out"), lines
    assert sum("successfully" in x for x in lines) == 1


def test_history_diffs_the_recorded_generations():
    """lws-rollout-multinode/03: the recording added --enforce-eager to the decode args (scripts/record-states),
    the operator made a second worker generation for it; --revision 2 shows that change."""
    cluster = RecordedCluster(str(RECORDED / "lws-rollout-multinode" / "03"), namespace="llm")
    data = rollout.history(cluster, "vllm-mn", 2).data
    assert [(g["revision"], g["current"], g["pods"]) for g in data["generations"]] == [(1, False, 2), (2, True, 2)]
    (change,) = data["changes"]
    assert change["component"] == "decode"
    assert change["changes"] == [{"what": "flags inserted", "name": "args", "detail": "--enforce-eager"}]
    assert "+      - --enforce-eager\n" in change["diff"]


@pytest.mark.parametrize("step, stalled", [("02", True), ("03", True), ("05", False)])
def test_doctor_flags_the_recorded_multinode_rollout_stuck_halfway(step, stalled):
    """While both worker generations of vllm-mn run (the operator never deletes the old one) doctor says
    rollout-stalled; once the old one is gone it says nothing of rollouts."""
    from kubectl_dynamo.checks.diagnosis import diagnose
    from kubectl_dynamo.model.views import read_views

    snap, views = read_views(RecordedCluster(str(RECORDED / "lws-rollout-multinode" / step)), None)
    codes = {(f["code"], (f["object"] or {}).get("name")) for f in diagnose(snap, views)["findings"]}
    assert (("rollout-stalled", "vllm-mn") in codes) is stalled
    assert not {c for c, _ in codes} & {"old-worker-generation", "worker-hash-missing", "max-unavailable-exceeded"}


@pytest.mark.parametrize("step", ["01", "03", "05"])
def test_rollout_inputs_are_the_dgds_labelled_objects_grouped_once(step):
    """The rollout checks read each DGD's DCDs, LeaderWorkerSets, PodCliqueSets and PodCliques from lists grouped once per
    run on the shared Index: the same objects, in list order, as filtering the whole list by namespace and
    DGD label; and one RolloutInputs per view."""
    from kubectl_dynamo.checks.rollout import inputs_of
    from kubectl_dynamo.model.views import read_views

    snap, views = read_views(RecordedCluster(str(RECORDED / "lws-rollout-multinode" / step)), None)
    assert views
    for view in views:
        def filtered(attr):
            return [o for o in getattr(snap, attr) or [] if o["metadata"].get("namespace") == view.namespace
                    and (o["metadata"].get("labels") or {}).get("nvidia.com/dynamo-graph-deployment-name") == view.name]

        inputs = inputs_of(view)
        assert inputs is inputs_of(view)
        assert inputs.dcds == filtered("componentdeployments") and inputs.dcds
        assert inputs.workloads == {"LeaderWorkerSet": filtered("leaderworkersets"),
                                    "PodCliqueSet": filtered("podcliquesets"), "PodClique": filtered("podcliques")}
    assert set(views[0].index.by_dgd) == {"componentdeployments", "leaderworkersets", "podcliquesets", "podcliques"}


# -- Grove + KAI: the real operator and Grove rolling a DGD (tests/data/recorded/PROVENANCE.md) ----------------

def _held_pods(step: Path, dgd_name: str) -> List[dict]:
    """The DGD's pods the scheduler turned down in this recording (PodScheduled False, Unschedulable)."""
    return [p for p in _raw_items(step, "", "v1", "pods")
            if (p["metadata"].get("labels") or {}).get("nvidia.com/dynamo-graph-deployment-name") == dgd_name
            and not p["metadata"].get("deletionTimestamp")
            and any(c["type"] == "PodScheduled" and c["status"] == "False" and c.get("reason") == "Unschedulable"
                    for c in (p.get("status") or {}).get("conditions") or [])]


@pytest.mark.parametrize("sequence", sorted(STALLED))
def test_a_grove_rollout_that_cannot_complete_is_never_done_and_names_the_scheduler(sequence):
    """A nodeSelector no node carries (KAI v0.15.2 and v0.17.0). Every step is not done; once KAI has turned a new
    pod down, the cause quotes KAI's own message on that pod."""
    steps = _steps(sequence)
    for step in steps:
        result = rollout.status_once(RecordedCluster(str(step), namespace="llm"), "roll-mn")
        assert not result.data["done"] and result.exit_code == 1, step.name
    last = steps[-1]
    held = _held_pods(last, "roll-mn")
    assert held, "the recording ends with a new pod turned down"
    said = {p["metadata"]["name"]: " ".join(next(c["message"] for c in p["status"]["conditions"]
                                                 if c["type"] == "PodScheduled").split())  # KAI's spans lines
            for p in held}
    data = rollout.status_once(RecordedCluster(str(last), namespace="llm"), "roll-mn").data
    assert data["cause"] is not None and f"{len(held)} pods of the new generation cannot be scheduled" in data["cause"]
    assert any(f"{pod}: {message}" in data["cause"] for pod, message in said.items()), data["cause"]


@pytest.mark.parametrize("sequence", sorted(STALLED))
def test_follow_a_stalled_grove_rollout_exits_1_with_the_stall_first(sequence):
    """The stalled sequence replayed as watch events: nothing moves after the last step, so with a 2 s progress
    deadline rollout status exits 1, its last Waiting line naming the cause, then rollout-stalled first."""
    steps = _steps(sequence)
    clock = _Clock(len(steps))
    env = _env()
    try:
        code = rollout.follow(_Replay(steps, clock), env, "roll-mn", timeout=2)
        released = clock.released
    finally:
        clock.stop()
    lines = env.stdout.getvalue().splitlines()
    assert code == 1 and released == len(steps)
    assert not any("successfully" in x for x in lines)
    header = next(i for i, x in enumerate(lines) if x.split()[:2] == ["SEVERITY", "CODE"])
    assert lines[header - 1].startswith("  cause: ") and "cannot be scheduled" in lines[header - 1], lines
    assert lines[header + 1].split()[:2] == ["warning", "rollout-stalled"], lines


@pytest.mark.parametrize("sequence, step, stalled", [
    ("grove-kai0152-rollout-stalled", -1, True),
    ("grove-kai0152-rollout-multinode", -1, False),
    ("grove-kai0152-rollout-reverted", -1, False),
    ("grove-kai0152-rollout-single-node", -1, False),
    ("grove-kai0152-rollout-scaled", -1, False),
    ("grove-rollout-stalled", -1, True),  # KAI v0.17.0: the gang scheduled as one
    ("grove-rollout-multinode", -1, False),
    ("grove-rollout-reverted", -1, False),
    ("grove-rollout-single-node", -1, False),
    ("grove-rollout-scaled", -1, False),
])
def test_doctor_on_grove_rollouts(sequence, step, stalled):
    """doctor flags the Grove rollout held by the scheduler, and says nothing of rollouts once one completed."""
    from kubectl_dynamo.checks.diagnosis import diagnose
    from kubectl_dynamo.model.views import read_views

    at = _steps(sequence)[step]
    name = _sequence_dgd(at)
    snap, views = read_views(RecordedCluster(str(at)), None)
    found = [f for f in diagnose(snap, views)["findings"] if (f["object"] or {}).get("name") == name]
    codes = {f["code"] for f in found}
    assert ("rollout-stalled" in codes) is stalled, found
    assert not codes & {"old-worker-generation", "worker-hash-missing"}


def test_grove_pods_of_an_older_template_are_old_before_the_operator_moves_the_hash():
    """grove-kai0152-rollout-single-node/01: Grove already rolls PodClique agg-0-worker to a new template
    (its status.updateProgress.podTemplateHash) while both worker pods still carry the old one and the DGD
    still names the old worker hash: both pods count as old, neither as the new generation."""
    step = _steps("grove-kai0152-rollout-single-node")[0]
    (clique,) = [c for c in _raw_items(step, "grove.io", "v1alpha1", "podcliques") if c["metadata"]["name"] == "agg-0-worker"]
    target = clique["status"]["updateProgress"]["podTemplateHash"]
    workers = [p for p in _raw_items(step, "", "v1", "pods") if p["metadata"]["labels"].get("grove.io/podclique") == "agg-0-worker"]
    assert len(workers) == 2 and all(p["metadata"]["labels"]["grove.io/pod-template-hash"] != target for p in workers)
    data = rollout.status_once(RecordedCluster(str(step), namespace="llm"), "agg").data
    (worker,) = [c for c in data["components"] if c["name"] == "worker"]
    assert (worker["oldPods"], worker["pods"]) == (2, 0)


def test_history_of_a_grove_rollout_halfway():
    """grove-kai0152-rollout-multinode/02: Grove has replaced decode replica 0 (2 pods of the new worker hash the
    operator stored, a8e07795) and not yet replica 1 (2 pods of eb3e787c); both generations are listed, the old
    first. Once the rollout is over (03) Grove has left nothing of the old one."""
    steps = _steps("grove-kai0152-rollout-multinode")
    data = rollout.history(RecordedCluster(str(steps[1]), namespace="llm"), "roll-mn").data
    assert [(g["revision"], g["hash"], g["current"], g["pods"], g["podsReady"]) for g in data["generations"]] == [
        (1, "eb3e787c", False, 2, 2), (2, "a8e07795", True, 2, 2)]
    result = rollout.history(RecordedCluster(str(steps[1]), namespace="llm"), "roll-mn", 2)
    assert result.data["changes"] == []  # no DCDs on the Grove path: nothing holds the old spec
    assert "no DynamoComponentDeployment holds" in result.table(result.data, False, False, None)
    data = rollout.history(RecordedCluster(str(steps[-1]), namespace="llm"), "roll-mn").data
    assert [(g["hash"], g["current"], g["pods"]) for g in data["generations"]] == [("a8e07795", True, 4)]


@pytest.mark.parametrize("sequence, step, kind, name", [
    # Grove writes a PodCliqueSet's observedGeneration only after its rolling update (reconcilespec.go)
    ("grove-kai0152-rollout-multinode", 1, "PodCliqueSet", "roll-mn"),
    # a PodClique being deleted: the deletion bumped its generation
    ("grove-kai0152-rollout-reverted", 0, "PodClique", "roll-mn-0-decode-0-decode-wkr"),
    # the PodCliqueScalingGroup scaled down while its PodCliqueSet rolls, not yet observed
    ("grove-kai0152-rollout-scaled", 0, "PodCliqueScalingGroup", "roll-mn-0-decode"),
])
def test_doctor_does_not_call_grove_hung_while_it_rolls(sequence, step, kind, name):
    at = _steps(sequence)[step]
    (obj,) = [o for o in _raw_items(at, "grove.io", "v1alpha1", kind.lower() + "s") if o["metadata"]["name"] == name]
    assert obj["status"]["observedGeneration"] < obj["metadata"]["generation"]  # what the recording shows
    _not_called_hung(at, name)


def _not_called_hung(at: Path, name: str) -> None:
    from kubectl_dynamo.checks.diagnosis import diagnose
    from kubectl_dynamo.model.views import read_views

    snap, views = read_views(RecordedCluster(str(at)), None)
    assert not [f for f in diagnose(snap, views)["findings"]
                if f["code"] == "controller-not-reconciling" and (f["object"] or {}).get("name") == name]


def test_doctor_does_not_call_grove_hung_for_a_count_its_pods_overtook_mid_rollout():
    """grove-kai0152-rollout-single-node/02: PodClique agg-0-worker says readyReplicas 2 while, in the pods
    listed a moment before it, one of them was still gated: Grove's PodCliqueSet is still rolling."""
    at = _steps("grove-kai0152-rollout-single-node")[1]
    (clique,) = [c for c in _raw_items(at, "grove.io", "v1alpha1", "podcliques") if c["metadata"]["name"] == "agg-0-worker"]
    ready = [p for p in _raw_items(at, "", "v1", "pods") if p["metadata"]["labels"].get("grove.io/podclique") == "agg-0-worker"
             and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or [])]
    assert clique["status"]["readyReplicas"] > len(ready)
    _not_called_hung(at, "agg-0-worker")


@pytest.mark.parametrize("sequence, step, kind, name", [
    # a scale-down during the rollout: the PodCliqueScalingGroup reports 1 of 1 replicas updated and its update
    # ended while both pods of the old replica 1 still run, one not even terminating (ai-dynamo/grove #565)
    ("grove-kai0152-rollout-scaled", 0, "podcliquescalinggroups", "roll-mn-0-decode"),
    # the worker PodClique's update ended with readyReplicas 2 while one new pod is still Pending
    ("grove-kai0152-rollout-single-node", 1, "podcliques", "agg-0-worker"),
])
def test_not_done_while_grove_reports_its_part_done_early(sequence, step, kind, name):
    at = _steps(sequence)[step]
    (obj,) = [o for o in _raw_items(at, "grove.io", "v1alpha1", kind) if o["metadata"]["name"] == name]
    assert obj["status"]["updateProgress"].get("updateEndedAt") and obj["status"]["updatedReplicas"] >= obj["spec"]["replicas"]
    dgd = _sequence_dgd(at)
    pods = [p for p in _raw_items(at, "", "v1", "pods")
            if p["metadata"]["labels"].get("nvidia.com/dynamo-graph-deployment-name") == dgd]
    assert _old_pods_or_rolling(at, dgd) or not all(
        any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or []) for p in pods)
    result = rollout.status_once(RecordedCluster(str(at), namespace="llm"), dgd)
    assert not result.data["done"] and result.exit_code == 1


def test_doctor_names_a_held_grove_rollout_with_nothing_of_the_old_generation_left(tmp_path):
    """grove-kai0152-rollout-stalled/03 without the old replica's pods (as when Grove has replaced every
    replica, or the DGD has one): no old pod runs beside the new ones, the new ones are held; doctor still
    says rollout-stalled, with KAI's word. The recording is copied, only the old pods are left out."""
    import shutil

    from kubectl_dynamo.checks.diagnosis import diagnose
    from kubectl_dynamo.model.views import read_views

    src = _steps("grove-kai0152-rollout-stalled")[-1]
    dst = tmp_path / "03"
    shutil.copytree(src, dst)
    pods = dst / "resources" / "core" / "v1" / "pods.json"
    doc = json.loads(pods.read_text())
    doc["items"] = [p for p in doc["items"] if p["metadata"]["labels"].get("nvidia.com/dynamo-worker-hash") != "eb3e787c"]
    pods.write_text(json.dumps(doc))
    manifest = json.loads((dst / "manifest.json").read_text())
    for r in manifest["resources"]:
        if r["resource"] == "pods" and r["group"] == "":
            r["count"] = len(doc["items"])
    (dst / "manifest.json").write_text(json.dumps(manifest))
    snap, views = read_views(RecordedCluster(str(dst)), None)
    (stall,) = [f for f in diagnose(snap, views)["findings"]
                if f["code"] == "rollout-stalled" and (f["object"] or {}).get("name") == "roll-mn"]
    assert "cannot complete" in stall["message"] and "cannot be scheduled" in stall["message"]
    assert "didn't match Pod's node affinity/selector" in stall["message"]


# ai-dynamo/dynamo@2a6da14c deploy/operator/internal/controller/dgd_worker_rollout_reconciler_test.go
# TestResolveRollingUpdateParams: (annotations, desired replicas, maxSurge, maxUnavailable).
SURGE, UNAVAILABLE = "nvidia.com/deployment-rolling-update-max-surge", "nvidia.com/deployment-rolling-update-max-unavailable"


@pytest.mark.parametrize("annotations, desired, surge, unavailable", [
    ({}, 4, 1, 1),
    ({SURGE: "2"}, 4, 2, 1),
    ({UNAVAILABLE: "0"}, 4, 1, 0),
    ({SURGE: "50%"}, 4, 2, 1),
    ({UNAVAILABLE: "50%"}, 4, 1, 2),
    ({SURGE: "50%", UNAVAILABLE: "25%"}, 4, 2, 1),
    ({SURGE: "0", UNAVAILABLE: "0"}, 4, 1, 0),
    ({SURGE: "0", UNAVAILABLE: "1"}, 4, 0, 1),
    ({SURGE: "34%"}, 3, 2, 0),
    ({UNAVAILABLE: "34%"}, 3, 1, 1),
])
def test_generation_budget_is_the_operators(annotations, desired, surge, unavailable):
    from kubectl_dynamo.operator.rollingupdate import generation_budget

    assert generation_budget(annotations, desired) == (surge, unavailable)


def _single_node_rollout(edit=None):
    """lws-rollout-single-node/01: the operator's rolling update of DGD agg (2 worker replicas) is
    InProgress; both old-hash worker pods Ready, the new one not yet created Ready. ``edit(dgd, old_pods)``
    changes it before the checks run."""
    from kubectl_dynamo.model.views import read_views

    _, views = read_views(RecordedCluster(str(RECORDED / "lws-rollout-single-node" / "01")), None)
    (view,) = [v for v in views if v.name == "agg"]
    old = [p.raw for c in view.components for g in c.groups.values() for p in g.pods
           if (p.raw["metadata"].get("labels") or {}).get("nvidia.com/dynamo-worker-hash") == "4c5db9b9"]
    assert len(old) == 2 and view.raw["status"]["rollingUpdate"]["phase"] == "InProgress"
    if edit:
        edit(view.raw, old)
    from kubectl_dynamo.checks.rollout import max_unavailable_exceeded

    return [f.message for f in max_unavailable_exceeded(view)]


def _unready(pods):
    for p in pods:
        for c in p["status"]["conditions"]:
            if c["type"] == "Ready":
                c["status"] = "False"


def _annotate(where: str, annotations: dict):
    def edit(dgd, old):
        _unready(old[:1])
        if where == "dgd":
            dgd["spec"]["annotations"] = annotations
        else:
            worker = next(c for c in dgd["spec"]["components"] if c["name"] == "worker")
            worker["podTemplate"].setdefault("metadata", {})["annotations"] = annotations
    return edit


@pytest.mark.parametrize("edit, allowed", [
    (None, None),  # as recorded: 2 of 2 Ready
    # 25% of 2 rounds down to 0 (resolveRollingUpdateParams): one old pod down is one too many
    (lambda dgd, old: _unready(old[:1]), 0),
    # the DGD's spec annotations and the component's pod template annotations set it
    # (graph.go GetDGDComponentResourceAnnotations), the pod template's last
    (_annotate("dgd", {UNAVAILABLE: "50%"}), None),
    (_annotate("component", {UNAVAILABLE: "1"}), None),
    (lambda dgd, old: (_annotate("dgd", {UNAVAILABLE: "50%"})(dgd, old), _annotate("component", {UNAVAILABLE: "0"})(dgd, old)),
     0),
    # Recreate lets the whole component go (buildRollingUpdateContext: maxUnavailable = desired)
    (lambda dgd, old: (_unready(old), _annotate("dgd", {"nvidia.com/deployment-strategy": "Recreate"})(dgd, old)),
     None),
])
def test_max_unavailable_of_a_single_node_rollout_is_the_operators(edit, allowed):
    messages = _single_node_rollout(edit)
    if allowed is None:
        assert messages == []
    else:
        assert messages == [f"component worker: 1 of 2 groups unavailable while it rolls; maxUnavailable allows {allowed}"]
