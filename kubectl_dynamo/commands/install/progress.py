"""What a helm step waits for, while it waits, and what blocks it when it gives up.

While ``helm upgrade --install --wait`` runs, the release's workloads in its namespace (model/release.py) are
listed once and followed by one WATCH per kind (cluster/streams.Watched), with the namespace's ReplicaSets,
pods and Warning events. A line goes to stderr when what is waited for changes (at most one a second) and
as a heartbeat every ``HEARTBEAT_S`` seconds, as ``kubectl rollout status`` does: plain lines, no colour,
nothing rewritten in place (CI logs read them as they are). When helm fails, the namespace is read once
more and checks/release.py says which workloads are not ready and why, with doctor's causes and fixes.
Following is best effort: a namespace that may not be watched costs the progress, never the install.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Tuple

from kubectl_dynamo.checks.release import Blocked, blocking, first_cause
from kubectl_dynamo.cluster.kinds import by_kind
from kubectl_dynamo.cluster.live import node_reader
from kubectl_dynamo.errors import DynamoError, Forbidden, NotFound
from kubectl_dynamo.model.release import WORKLOAD_KINDS, Workload, summary, workloads

if TYPE_CHECKING:
    from kubectl_dynamo.cluster.streams import Watched

FOLLOWED = (*WORKLOAD_KINDS, "ReplicaSet", "Pod", "Event")
HEARTBEAT_S = 30.0
MIN_GAP_S = 1.0  # a rollout changes several times a second: one line a second at most


def kinds(namespace: str) -> Dict[str, tuple]:
    """kind -> (path, label selector, field selector) of what is followed in the release's namespace."""
    return {k: (by_kind(k).path(namespace), None, "type=Warning" if k == "Event" else None) for k in FOLLOWED}


def read(cluster, namespace: str) -> Tuple[Dict[str, tuple], Dict[str, tuple]]:
    """(the kinds that may be read, their LIST as (items, resourceVersion)); kinds refused are left out."""
    from kubectl_dynamo.cluster.streams import list_with_version

    served, listed = {}, {}
    for kind, (path, labels, fields) in kinds(namespace).items():
        try:
            listed[kind] = list_with_version(cluster, path, label_selector=labels, field_selector=fields)
        except (Forbidden, NotFound):
            continue
        served[kind] = (path, labels, fields)
    return served, listed


def diagnose(objects: Dict[str, List[dict]], release: str, namespace: str,
             nodes: Callable[[], List[dict]]) -> Tuple[List[Workload], List[Blocked]]:
    items = workloads(objects, release, namespace)
    return items, blocking(items, objects, nodes)


class Progress:
    """Follows one release while its helm step runs: ``start()``, ``tick(wait)`` between helm's lines,
    ``blocked()`` when helm failed, ``close()``."""

    def __init__(self, connect: Callable, release: str, namespace: str, say: Callable[[str], None],
                 clock: Callable[[], float], timeout_s: Optional[float]):
        self.connect, self.release, self.namespace, self.say, self.clock = connect, release, namespace, say, clock
        self.timeout_s = timeout_s
        self.cluster = None
        self.watched: Optional[Watched] = None
        self.started = clock()  # again when start() is called: the step's own start
        self.last_state: Optional[str] = None
        self.last_line_at: Optional[float] = None
        self.changed = True
        self._nodes: Optional[Callable[[], list]] = None

    def nodes(self) -> List[dict]:
        """The cluster's nodes, listed once ([] when they may not be read: the scheduler's words remain)."""
        if self.cluster is None:
            return []
        if self._nodes is None:
            self._nodes = node_reader(self.cluster)
        return self._nodes()

    def start(self) -> None:
        from kubectl_dynamo.cluster.streams import Watched

        self.started = self.clock()
        try:
            self.cluster = self.connect()
            served, listed = read(self.cluster, self.namespace)
            if not all(k in served for k in WORKLOAD_KINDS):
                raise Forbidden(f"the workloads in namespace {self.namespace} may not be listed")
            self.watched = Watched(self.cluster, served, listed)
            self.watched.start()
        except DynamoError as e:
            self.say(f"    (no progress for this step: {e.message})")
            self.close()

    def _objects(self) -> Dict[str, List[dict]]:
        w = self.watched
        return {k: w.items(k) for k in FOLLOWED if k in w.state} if w is not None else {}

    def state(self) -> Optional[str]:
        """What is waited for and the first known cause, or None before the release has workloads."""
        items, blocked = diagnose(self._objects(), self.release, self.namespace, self.nodes)
        if not items:
            return None
        why = first_cause(blocked)
        return summary(items) + (f"\n      blocked: {why}" if why else "")

    def tick(self, wait: float) -> bool:
        """Apply the watch events that arrive within ``wait`` seconds and print a line when one is due;
        False when there is nothing (more) to follow."""
        if self.watched is None:
            return False
        try:
            if self.watched.wait(wait) is not None:
                self.changed = True
        except (DynamoError, ValueError) as e:  # a watch that cannot be resumed ends the progress only
            self.say(f"    (no more progress for this step: {getattr(e, 'message', e)})")
            self.close()
            return False
        now = self.clock()
        since = None if self.last_line_at is None else now - self.last_line_at
        if self.changed and (since is None or since >= MIN_GAP_S):
            self.changed = False
            state = self.state()
            if state is not None and state != self.last_state:
                self._line(state, now)
                return True
        if (since if since is not None else now - self.started) >= HEARTBEAT_S:
            self._line(self.state() or "no workloads of the release yet", now)
        return True

    def _line(self, state: str, now: float) -> None:
        elapsed = f"{now - self.started:.0f}s" + (f" of {self.timeout_s:.0f}s" if self.timeout_s else "")
        self.say(f"    waiting ({elapsed}) for release {self.release}: {state}")
        self.last_state, self.last_line_at = state, now

    def blocked(self) -> List[Blocked]:
        """After helm failed: the release's workloads that are not ready and why, from a fresh read (the
        followed state when that fails)."""
        objects = self._objects()
        try:
            self.cluster = self.cluster or self.connect()
            _, listed = read(self.cluster, self.namespace)
            if all(k in listed for k in WORKLOAD_KINDS):
                objects = {k: items for k, (items, _) in listed.items()}
        except DynamoError:
            pass
        return diagnose(objects, self.release, self.namespace, self.nodes)[1]

    def close(self) -> None:
        if self.watched is not None:
            self.watched.close()
            self.watched = None
