"""``logs``: a DGD's pods' logs interleaved, each line prefixed ``component/group/rank(role)``.

Which pod is which rank is ``doctor.classify`` (the one place that decides it). Streams are read
concurrently by ``cluster.streams.Readers`` (a thread per stream, bounded queues). Without ``-f``
the streams are merged by their timestamps (the API's ``timestamps=true``), a lazy k-way merge
that holds at most one queue of lines per stream; with ``-f`` lines are printed as they arrive and
one WATCH on the DGD's pods opens the stream of every container that (re)starts and closes the
streams of deleted pods, so a restarted rank keeps appearing (stern's behaviour).
"""

from __future__ import annotations

import heapq
import queue
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Dict, Iterator, List, Optional, Tuple, cast

from kubectl_dynamo.cluster import kinds
from kubectl_dynamo.cluster.client import path_for
from kubectl_dynamo.cluster.live import node_reader
from kubectl_dynamo.cluster.streams import Item, Readers, Watched, drain, list_with_version
from kubectl_dynamo.environment import Environment
from kubectl_dynamo.errors import DynamoError, ExitCode, NotFound, UsageError
from kubectl_dynamo.model.labels import COMPONENT_LABEL, DGD_LABEL
from kubectl_dynamo.model.views import PodInfo, classify

PALETTE = ("cyan", "green", "yellow", "magenta", "blue", "red", "bright_cyan", "bright_green",
           "bright_yellow", "bright_magenta", "bright_blue", "bright_red")
ROLES = ("leader", "worker", "main")


@dataclass(frozen=True)
class Filters:
    component: Optional[str] = None
    group: Optional[int] = None
    role: Optional[str] = None
    rank: Optional[int] = None
    container: Optional[str] = None
    init_containers: bool = False


@dataclass(frozen=True)
class Source:
    """One container of one pod, with the pod's place in its DGD."""

    namespace: str
    pod: str
    uid: str
    component: str
    group: int
    rank: Optional[int]
    role: str
    container: str
    init: bool = False
    main: bool = True  # the pod's main container (the prefix names any other one)

    @property
    def prefix(self) -> str:
        rank = "-" if self.rank is None else str(self.rank)
        text = f"{self.component}/{self.group}/{rank}({self.role})"
        if self.init:
            return f"{text}[init:{self.container}]"
        return text if self.main else f"{text}[{self.container}]"

    @property
    def order(self) -> tuple:
        """Component, group, then rank (leader first, unknown ranks last), init containers first."""
        return (self.component, self.group, self.rank is None, self.rank or 0, self.pod, not self.init,
                not self.main, self.container)

    def color(self) -> str:
        return PALETTE[(self.rank or 0) % len(PALETTE)]


def component_of(info: PodInfo) -> str:
    return ((info.raw.get("metadata") or {}).get("labels") or {}).get(COMPONENT_LABEL) or "?"


def sources(pods: List[dict], flt: Filters) -> List[Source]:
    """The containers to read, in rank order."""
    out = []
    for pod in pods:
        info = classify(pod)
        comp = component_of(info)
        if flt.component and comp.lower() != flt.component.lower():
            continue
        if flt.group is not None and info.group != flt.group:
            continue
        if flt.role and info.role != flt.role:
            continue
        if flt.rank is not None and info.rank != flt.rank:
            continue
        uid = (pod.get("metadata") or {}).get("uid", "")
        main = info.main.get("name")
        place = dict(namespace=info.namespace, pod=info.name, uid=uid, component=comp, group=info.group,
                     rank=info.rank, role=info.role)
        if flt.init_containers:
            out += [Source(**place, container=c["name"], init=True, main=False)
                    for c in info.spec.get("initContainers") or []]
        names = [c.get("name") for c in info.spec.get("containers") or []]
        if flt.container:
            if flt.container in names:
                out.append(Source(**place, container=flt.container, main=flt.container == main))
        elif main:
            out.append(Source(**place, container=main))
    return sorted(out, key=lambda s: s.order)


def container_status(pod: dict, src: Source) -> Tuple[Optional[str], int]:
    """(running | waiting | terminated | None, restartCount) of the source's container."""
    status = pod.get("status") or {}
    key = "initContainerStatuses" if src.init else "containerStatuses"
    cs = next((c for c in status.get(key) or [] if c.get("name") == src.container), None)
    if cs is None:
        return None, 0
    state = next(iter(cs.get("state") or {}), None)
    return state, int(cs.get("restartCount") or 0)


def not_running(nodes: Callable[[], list], pod: dict, src: Source, previous: bool) -> Optional[str]:
    """Why the source's container has no log to read (doctor's reason for the pod: the scheduler's words
    diagnosed against the ``nodes``, or the container's waiting reason); None when it has one."""
    state, restarts = container_status(pod, src)
    if previous and restarts:
        return None
    if previous and state in ("running", "terminated"):  # the kubelet keeps only the instance before a restart
        return (f"no previous instance: container {src.container} has not restarted (restartCount 0); "
                "drop -p for its current log")
    if state in ("running", "terminated"):
        return None
    info = classify(pod)
    words = info.scheduler_words()
    if not info.scheduled:
        from kubectl_dynamo.checks.causes import unschedulable

        found = unschedulable(words, info.spec, nodes() if words else [], info.namespace)
        said = "; ".join(f"{c.what} (fix: {c.fix})" for c in found)
        return f"Pending, not scheduled: {said or words or 'no scheduler has placed it yet'}"
    status = pod.get("status") or {}
    key = "initContainerStatuses" if src.init else "containerStatuses"
    cs: dict = next((c for c in status.get(key) or [] if c.get("name") == src.container), {})
    waiting = (cs.get("state") or {}).get("waiting") or {}
    return (f"container {src.container} is waiting ({waiting.get('reason') or 'not started'}"
            f"{': ' + waiting['message'] if waiting.get('message') else ''})")


def log_params(container: str, *, follow: bool = False, previous: bool = False, since: Optional[float] = None,
               tail: Optional[int] = None, limit_bytes: Optional[int] = None) -> dict:
    """The query of GET pods/log (``collect`` reads bounded logs with it too)."""
    return {"container": container, "follow": "true" if follow else None,
            "previous": "true" if previous else None, "timestamps": "true",
            "sinceSeconds": None if since is None else max(1, int(since)),
            "tailLines": None if tail is None or tail < 0 else tail, "limitBytes": limit_bytes}


def log_path(namespace: str, pod: str) -> str:
    return path_for("", "v1", "pods", namespace, pod) + "/log"


# -- timestamps --------------------------------------------------------------------------------------

def split_timestamp(line: bytes) -> Tuple[str, bytes]:
    """``timestamps=true`` puts an RFC 3339 time and a space before each line: (sort key, the rest).

    The key is the time in UTC with nanoseconds padded (RFC3339Nano trims trailing zeros, so the text
    alone does not sort); a line without one sorts as the empty key (first)."""
    head, sep, rest = line.partition(b" ")
    if not sep:
        return "", line
    try:
        return timestamp_key(head.decode("ascii")), rest
    except (UnicodeDecodeError, ValueError):
        return "", line


def timestamp_key(text: str) -> str:
    if len(text) >= 20 and text[-1] == "Z" and text[10] == "T" and (len(text) == 20 or text[19] == "."):
        frac = text[20:-1]  # the kubelet's form (UTC): no parsing on the hot path
        if frac.isdigit() or not frac:
            return text[:19] + "." + frac.ljust(9, "0")[:9]
    base, frac = text, ""
    zone = "Z" if text.endswith("Z") else text[-6:]
    body = text[:-1] if zone == "Z" else text[:-6]
    if "." in body:
        base, frac = body.split(".", 1)
    else:
        base = body
    if not frac.isdigit() and frac:
        raise ValueError(text)
    when = datetime.fromisoformat(base + ("+00:00" if zone == "Z" else zone)).astimezone(timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + frac.ljust(9, "0")[:9]


# -- printing -----------------------------------------------------------------------------------------

class Printer:
    """Writes prefixed lines; prefixes padded to one width, coloured per rank on a terminal."""

    def __init__(self, env: Environment, srcs: List[Source], *, timestamps: bool = False, prefix: bool = True):
        self.env = env
        self.color = env.colors
        self.timestamps = timestamps
        self.prefix = prefix
        self.width = max((len(s.prefix) for s in srcs), default=0)

    def line(self, src: Source, raw: bytes) -> None:
        # lines are asked for with timestamps=true: the API puts one and a space before each (not
        # before the second piece of a line cut at max_line, which is printed whole)
        head, sep, rest = raw.partition(b" ")
        if not self.timestamps and sep and _looks_like_time(head):
            raw = rest
        text = raw.decode("utf-8", errors="replace")
        if self.prefix:
            self.width = max(self.width, len(src.prefix))
            label = src.prefix.ljust(self.width)
            if self.color:
                import click

                label = click.style(label, fg=src.color())
            text = f"{label} {text}"
        self.env.stdout.write(text + "\n")


def _looks_like_time(head: bytes) -> bool:
    return len(head) >= 20 and head[4:5] == b"-" and head[10:11] == b"T"


def merged(queues: List[Tuple[Source, queue.Queue[Item]]], failed: List[str]) -> Iterator[Tuple[Source, bytes]]:
    """Lines of every stream in timestamp order (each stream is already in order; a line without a
    time, the rest of a cut line, keeps the time of the line before it)."""

    def one(src: Source, q: queue.Queue[Item]):
        key = ""
        for item in drain(q):
            if item.end:
                if item.error is not None:
                    failed.append(f"{src.prefix}: the stream broke: {item.error}")
                return
            for line in item.lines:
                key = split_timestamp(line)[0] or key
                yield key, src.order, src, line

    for _, _, src, line in heapq.merge(*(one(s, q) for s, q in queues), key=lambda t: (t[0], t[1])):
        yield src, line


# -- the command ----------------------------------------------------------------------------------------

@dataclass
class LogOptions:
    follow: bool = False
    previous: bool = False
    since: Optional[float] = None  # seconds
    tail: Optional[int] = None
    timestamps: bool = False
    prefix: bool = True
    max_line: int = 16 * 1024


def pods_of(cluster, namespace: str, name: str) -> Tuple[List[dict], Optional[str]]:
    """The DGD's pods (one LIST by its label) and the list's resourceVersion; NotFound for no DGD."""
    cluster.get(kinds.DGD.path(namespace, name))
    return list_with_version(cluster, path_for("", "v1", "pods", namespace), label_selector=f"{DGD_LABEL}={name}")


def describe_filters(flt: Filters) -> str:
    parts = [f"--{k.replace('_', '-')} {v}" for k, v in
             (("component", flt.component), ("group", flt.group), ("role", flt.role), ("rank", flt.rank),
              ("container", flt.container)) if v is not None]
    return " ".join(parts)


def run_logs(cluster, env: Environment, name: str, flt: Filters, opts: LogOptions) -> int:
    if flt.role and flt.role not in ROLES:
        raise UsageError(f"--role must be one of {', '.join(ROLES)}")
    if opts.previous and opts.follow:
        raise UsageError("--previous cannot be followed: drop -f")
    namespace = cluster.namespace
    pods, version = pods_of(cluster, namespace, name)
    srcs = sources(pods, flt)
    if not srcs and not opts.follow:
        if not pods:
            raise NotFound(f"dynamographdeployment {namespace}/{name} has no pods")
        ranks = sorted({Source(namespace, p.name, "", component_of(p), p.group, p.rank, p.role, "").prefix
                        for p in map(classify, pods)})
        raise NotFound(f"no pod of dynamographdeployment {namespace}/{name} matches {describe_filters(flt)} "
                       f"(pods: {', '.join(ranks)})")
    printer = Printer(env, srcs, timestamps=opts.timestamps, prefix=opts.prefix)
    readers = Readers(max_line=opts.max_line)
    failed: List[str] = []
    try:
        if opts.follow:
            _follow(cluster, env, name, namespace, flt, opts, pods, version, readers, printer, failed)
        else:
            queues = []
            by_name = {(p.get("metadata") or {}).get("name"): p for p in pods}
            nodes = node_reader(cluster)
            for src in srcs:
                why = not_running(nodes, by_name.get(src.pod) or {}, src, opts.previous)
                # no previous instance by the pod's status: the kubelet's answer decides (it may still keep one),
                # and when it refuses, that is said instead of its error
                gone = why is not None and why.startswith("no previous instance")
                if why is not None and not gone:  # nothing to read in this container: say why, not nothing
                    failed.append(f"{src.prefix}: {src.pod} has no log yet: {why}")
                    continue
                try:
                    # a read timeout between chunks (not in total): a log that ends must not hang
                    stream = cluster.stream(log_path(src.namespace, src.pod),
                                            log_params(src.container, previous=opts.previous, since=opts.since,
                                                       tail=opts.tail), read_timeout=cluster.timeout)
                except DynamoError as e:
                    failed.append(f"{src.prefix}: {src.pod}: {why}" if gone else f"{src.prefix}: {e.message}")
                    continue
                queues.append((src, readers.add(src, stream, own_queue=True)))
            for src, line in merged(queues, failed):
                printer.line(src, line)
    finally:
        readers.close()
        env.stdout.flush()
    for message in failed:
        env.err(f"warning: {message}")
    return ExitCode.FINDINGS if failed else ExitCode.OK


def _follow(cluster, env, name, namespace, flt, opts, pods, version, readers: Readers, printer: Printer,
            failed: List[str]) -> None:
    """Print lines as they arrive; the pods' WATCH (cluster/streams.Watched, on the same readers: resumed
    when the server ends it, re-listed on 410 Gone) opens restarted containers and drops gone pods."""
    active: Dict[tuple, Source] = {}  # stream key (uid, container, init, restarts) -> source
    seen: Dict[tuple, int] = {}  # (uid, container, init) -> restartCount streamed (first instance: tail)

    def drop_gone(live: Dict[str, dict]) -> None:
        for key in [k for k in active if k[0] not in live]:
            readers.stop(key)
            active.pop(key)

    def reconcile(pod: dict) -> None:
        uid = (pod.get("metadata") or {}).get("uid", "")
        for src in sources([pod], flt):
            state, restarts = container_status(pod, src)
            ident = (uid, src.container, src.init)
            key = ident + (restarts,)
            if key in active or state not in ("running", "terminated") or seen.get(ident) == restarts:
                continue
            first = ident not in seen
            for old in [k for k in active if k[:3] == ident]:
                readers.stop(old)
                active.pop(old)
            seen[ident] = restarts
            try:
                stream = cluster.stream(log_path(src.namespace, src.pod), log_params(
                    src.container, follow=True, since=opts.since, tail=opts.tail if first else None))
            except DynamoError as e:
                failed.append(f"{src.prefix}: {e.message}")
                continue
            active[key] = src
            readers.add(key, stream)

    for pod in pods:
        reconcile(pod)
    watched = Watched(cluster, {"pod": (path_for("", "v1", "pods", namespace), f"{DGD_LABEL}={name}", None)},
                      {"pod": (pods, version)}, readers=readers)
    watched.start()
    while True:
        try:
            item = readers.shared.get(timeout=0.5)  # the timeout only keeps Ctrl-C responsive
        except queue.Empty:
            continue
        if watched.owns(item):
            if watched.apply(item):  # the pods changed: every pod is reconciled (idempotent), gone ones dropped
                live = watched.state["pod"]
                drop_gone(live)
                for pod in live.values():
                    reconcile(pod)
        elif item.end:
            src = active.pop(cast(tuple, item.key), None)
            if src is not None and item.error is not None:
                failed.append(f"{src.prefix}: the stream broke: {item.error}")
        elif item.key in active:
            src = active[cast(tuple, item.key)]
            for line in item.lines:
                printer.line(src, line)
            if readers.shared.empty():
                env.stdout.flush()
