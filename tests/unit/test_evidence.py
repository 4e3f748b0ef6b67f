"""Evidence about the object that exists now (kubectl_dynamo/model/evidence.py), on the recorded real state
lws-statefulset-failedcreate (tests/data/recorded/PROVENANCE.md): the statefulset controller's FailedCreate
events about StatefulSet llm/trtllm-mn-worker-7ebd8947-0 (uid 4d3fe139-…, created 2026-12-01T08:47:13Z,
spec.replicas 1, status.replicas 0).

Each case edits one recorded fact the way a later moment would show it (the StatefulSet deleted and created
again under the same name; its pod created after all), and controller-create-failed must then be silent.
The same sequence with the real controllers: tests/integration/test_real_controllers.py
test_doctor_after_fail_repair_recreate.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.commands.doctor import run_doctor
from kubectl_dynamo.model import evidence

RECORDED = Path(__file__).resolve().parent.parent / "data" / "recorded"
STATE = "lws-statefulset-failedcreate"
STS = "trtllm-mn-worker-7ebd8947-0"
EVENTS = Path("resources/core/v1/events.json")
STATEFULSETS = Path("resources/apps/v1/statefulsets.json")


def _copy(tmp_path: Path) -> Path:
    dest = tmp_path / STATE
    shutil.copytree(RECORDED / STATE, dest)
    return dest


def _edit(path: Path, fn) -> None:
    doc = json.loads(path.read_text())
    for item in doc["items"]:
        fn(item)
    path.write_text(json.dumps(doc))


def _create_failed(path: Path) -> list:
    result = run_doctor(RecordedCluster(str(path)), all_namespaces=True)
    return [f for f in result.data["findings"] if f["code"] == "controller-create-failed" and STS + ":" in
            f["message"]]


def test_the_recorded_failure_is_reported(tmp_path):
    (f,) = _create_failed(_copy(tmp_path))
    assert f["object"] == {"kind": "StatefulSet", "namespace": "llm", "name": STS}


def test_events_of_an_earlier_object_of_the_same_name_do_not_count(tmp_path):
    state = _copy(tmp_path)

    def earlier(e):  # the same name, another UID: the StatefulSet was deleted and created again since
        if e["involvedObject"].get("name") == STS:
            e["involvedObject"]["uid"] = "00000000-0000-0000-0000-000000000000"

    _edit(state / EVENTS, earlier)
    assert _create_failed(state) == []


def test_events_older_than_the_object_do_not_count(tmp_path):
    state = _copy(tmp_path)

    def later(s):  # created after the last FailedCreate (2026-12-01T08:55:12Z); the event names no UID
        if s["metadata"]["name"] == STS:
            s["metadata"]["creationTimestamp"] = "2026-12-01T09:00:00Z"

    _edit(state / STATEFULSETS, later)
    _edit(state / EVENTS, lambda e: e["involvedObject"].pop("uid", None))
    assert _create_failed(state) == []


def test_a_failure_the_controller_has_since_overcome_does_not_count(tmp_path):
    state = _copy(tmp_path)

    def created(s):  # status of the current generation: every replica created
        if s["metadata"]["name"] == STS:
            s["status"]["replicas"] = s["spec"]["replicas"]

    _edit(state / STATEFULSETS, created)
    assert _create_failed(state) == []
    # ... but not while the status describes an older generation
    _edit(state / STATEFULSETS, lambda s: s["metadata"].update(generation=2) if s["metadata"]["name"] == STS else None)
    assert len(_create_failed(state)) == 1


def test_about_compares_uid_then_time():
    obj = {"metadata": {"uid": "a", "creationTimestamp": "2026-12-01T08:00:00Z"}}
    event = {"involvedObject": {"uid": "a"}, "lastTimestamp": "2026-12-01T08:00:00Z"}
    assert evidence.about(event, obj)
    assert not evidence.about({**event, "involvedObject": {"uid": "b"}}, obj)
    assert not evidence.about({"involvedObject": {}, "lastTimestamp": "2026-12-01T07:59:59Z"}, obj)
    # events.k8s.io writers set eventTime (MicroTime) and a series instead of lastTimestamp
    assert evidence.about({"involvedObject": {}, "eventTime": "2026-12-01T07:00:00.000001Z",
                           "series": {"lastObservedTime": "2026-12-01T08:30:00.000000Z"}}, obj)
    assert evidence.about(event, None)  # nothing to judge against
