"""Evidence about the objects that exist now, not about earlier objects of the same name.

Events outlive what they are about (the API server keeps them an hour, kube-apiserver
``--event-ttl``), and controllers reuse names: a StatefulSet deleted and created again by LWS, a pod
recreated by its StatefulSet, a whole DGD re-applied. An event names its object by kind, namespace,
name *and* UID (k8s.io/api core/v1 ``ObjectReference``); only the UID tells the objects apart. So an
event counts for a live object only when

- its ``involvedObject.uid`` is the object's ``metadata.uid`` (when both are known), and
- its last occurrence is not older than the object's ``creationTimestamp``;

and a failure the controller reported is over once the controller's own status says it has made
what it should (``superseded``). An event about an object the snapshot does not hold is kept: there
is nothing to judge it against (no check looks it up through the lineage anyway).
"""

from __future__ import annotations

import datetime
from typing import Callable, Dict, Iterable, List, Optional, Tuple

EventKey = Tuple[Optional[str], Optional[str], Optional[str]]  # (kind, namespace, name) as the event names it


def parse_time(value: Optional[str]) -> Optional[datetime.datetime]:
    """An RFC 3339 time (seconds or MicroTime), None when missing or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def event_time(event: dict) -> Optional[datetime.datetime]:
    """When the event last happened: ``series.lastObservedTime``, ``lastTimestamp``, ``eventTime`` (events.k8s.io
    writers set only that), ``firstTimestamp``, else when the Event object was written."""
    for value in ((event.get("series") or {}).get("lastObservedTime"), event.get("lastTimestamp"),
                  event.get("eventTime"), event.get("firstTimestamp"),
                  (event.get("metadata") or {}).get("creationTimestamp")):
        t = parse_time(value)
        if t is not None:
            return t
    return None


def about(event: dict, obj: Optional[dict]) -> bool:
    """Whether ``event`` is about ``obj`` as it exists now (see the module docstring); True when ``obj`` is
    unknown (None)."""
    if obj is None:
        return True
    meta = obj.get("metadata") or {}
    uid, said = meta.get("uid"), (event.get("involvedObject") or {}).get("uid")
    if uid and said and uid != said:
        return False
    created, last = parse_time(meta.get("creationTimestamp")), event_time(event)
    return not (created and last and last < created)


def live_events(events: Iterable[dict], lookup: Callable[[EventKey], Optional[dict]]) -> Dict[EventKey, List[dict]]:
    """Events by the object they name, keeping only those about the live object of that name."""
    out: Dict[EventKey, List[dict]] = {}
    for e in events:
        io = e.get("involvedObject") or {}
        key = (io.get("kind"), io.get("namespace"), io.get("name"))
        if about(e, lookup(key)):
            out.setdefault(key, []).append(e)
    return out


def condition(obj: dict, kind: str) -> Optional[dict]:
    """The object's ``status.conditions`` entry of type ``kind``, None when it has none."""
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == kind), None)


def ready(obj: dict) -> bool:
    """The object (a pod, a node) has a condition Ready with status True."""
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


def current(obj: dict) -> bool:
    """The object's status describes its latest spec: ``status.observedGeneration`` is not behind
    ``metadata.generation`` (true when either is absent: nothing says otherwise)."""
    gen = (obj.get("metadata") or {}).get("generation")
    seen = (obj.get("status") or {}).get("observedGeneration")
    return not (isinstance(gen, int) and isinstance(seen, int) and seen < gen)


def superseded(kind: str, obj: Optional[dict]) -> bool:
    """A create failure its controller has since overcome: the controller's status of the current
    generation counts every replica the spec asks for. A StatefulSet's ``status.replicas`` is the
    number of pods it has created (k8s.io/api apps/v1 ``StatefulSetStatus``); the statefulset
    controller writes it after every sync, failed or not."""
    if obj is None or kind != "StatefulSet" or not current(obj):
        return False
    want = (obj.get("spec") or {}).get("replicas")
    have = (obj.get("status") or {}).get("replicas")
    return isinstance(want, int) and isinstance(have, int) and have >= want
