"""``collect``: a support bundle that ``doctor --from`` reads as it reads the cluster.

The bundle is a ``.tar.gz`` of one directory holding the snapshot tree of docs/snapshot-format.md
(written by ``cluster.record``: every kind doctor reads, cluster-wide, so the offline run asks
nothing the recording cannot answer), plus:

- ``collect.json``: what was collected (every file, its size, what it is), what was forbidden or
  unavailable, and which rank each pod is (``doctor.classify``);
- ``detect.json``, ``doctor.json``: both commands' JSON computed on the recording itself, so they are
  exactly what ``doctor --from`` prints on the bundle;
- ``pods/<ns>/<pod>/describe.txt``: status, conditions, containers and events, as ``kubectl describe``;
- ``pods/<ns>/<pod>/<container>.log`` and ``.previous.log``: every rank's logs, bounded per container;
- ``controllers/<ns>/<pod>/<container>.log``: the Dynamo operator's and the orchestrators' logs, bounded;
- ``operator-config.yaml``, ``crd-versions.json``.

Secret values never reach the disk: the snapshot keeps key names only (``record``), the describe
files name Secrets without reading them, and nothing else reads a Secret.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import timezone
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, cast

from kubectl_dynamo.cluster import kinds
from kubectl_dynamo.cluster.client import path_for
from kubectl_dynamo.commands.logs import log_params, log_path
from kubectl_dynamo.environment import Environment
from kubectl_dynamo.errors import DynamoError, Forbidden, InputError, UsageError
from kubectl_dynamo.model.labels import COMPONENT_LABEL, DGD_LABEL
from kubectl_dynamo.model.views import classify
from kubectl_dynamo.result import Result

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import CollectSummary, Problem

FORMAT = "kubectl-dynamo/collect"
FORMAT_VERSION = 1
LOG_WORKERS = 4  # concurrent log downloads: enough to hide latency, few enough for the API server


@dataclass
class Limits:
    log_bytes: int = 4 * 1024 * 1024  # per container instance (the API's limitBytes)
    log_lines: int = 20000  # per container instance (tailLines)
    controller_log_bytes: int = 2 * 1024 * 1024
    controller_log_lines: int = 5000


@dataclass
class Bundle:
    """The staging directory and the manifest's lists."""

    root: str
    files: List[dict] = field(default_factory=list)
    forbidden: List[Problem] = field(default_factory=list)
    unavailable: List[Problem] = field(default_factory=list)

    def write(self, rel: str, data: bytes, what: str) -> None:
        full = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
        self.files.append({"path": rel, "bytes": len(data), "what": what})

    def json(self, rel: str, data, what: str) -> None:
        self.write(rel, (json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode(), what)

    def refuse(self, what: str, error: DynamoError) -> None:
        target = self.forbidden if isinstance(error, Forbidden) else self.unavailable
        target.append({"what": what, "reason": error.message})


class Progress:
    """One line on stderr, rewritten in place; only on a terminal that takes escape sequences."""

    def __init__(self, env: Environment):
        self.env = env
        self.on = env.stderr_isatty and env.environ.get("TERM") != "dumb"

    def step(self, text: str) -> None:
        if self.on:
            self.env.stderr.write("\r\033[Kcollect: " + text)
            self.env.stderr.flush()

    def done(self) -> None:
        if self.on:
            self.env.stderr.write("\r\033[K")
            self.env.stderr.flush()


# -- pieces ----------------------------------------------------------------------------------------

def _events_of(pod: dict, events: List[dict]) -> List[dict]:
    meta = pod.get("metadata") or {}
    out = []
    for e in events:
        io_ = e.get("involvedObject") or {}
        if io_.get("uid") == meta.get("uid") or (io_.get("kind") == "Pod" and io_.get("name") == meta.get("name")
                                                 and io_.get("namespace") == meta.get("namespace")):
            out.append(e)
    return sorted(out, key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")


def _volume(v: dict) -> str:
    if v.get("secret"):
        return f"Secret {v['secret'].get('secretName')}"
    if v.get("configMap"):
        return f"ConfigMap {v['configMap'].get('name')}"
    return next((k for k in v if k != "name"), "?")


def describe(pod: dict, events: List[dict]) -> str:
    """``kubectl describe pod``'s substance: placement, status, conditions, containers, volumes, events."""
    meta, spec, st = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    info = classify(pod)
    labels = meta.get("labels") or {}
    owners = ", ".join(f"{r.get('kind')}/{r.get('name')}" for r in meta.get("ownerReferences") or []) or "<none>"
    rank = "-" if info.rank is None else info.rank
    out = [f"Name:         {meta.get('name')}", f"Namespace:    {meta.get('namespace')}",
           f"Rank:         {labels.get(COMPONENT_LABEL)}/{info.group}/{rank}({info.role})",
           f"Node:         {spec.get('nodeName') or '<none>'}", f"Scheduler:    {spec.get('schedulerName')}",
           f"Start Time:   {st.get('startTime') or '<none>'}", f"Phase:        {st.get('phase')}",
           f"Pod IP:       {st.get('podIP') or '<none>'}", f"Owners:       {owners}",
           f"Labels:       {', '.join(f'{k}={v}' for k, v in sorted(labels.items()))}"]
    gates = [g.get("name") for g in spec.get("schedulingGates") or []]
    if gates:
        out.append(f"Scheduling gates: {', '.join(gates)}")
    out.append("Conditions:")
    for c in st.get("conditions") or []:
        reason = f" ({c.get('reason')}: {c.get('message')})" if c.get("reason") else ""
        out.append(f"  {c.get('type')}={c.get('status')}{reason}")
    for key, title in (("initContainerStatuses", "Init Containers"), ("containerStatuses", "Containers")):
        statuses = st.get(key) or []
        if statuses:
            out.append(f"{title}:")
        for cs in statuses:
            state = cs.get("state") or {}
            now = next(iter(state), "unknown")
            why = (state.get(now) or {}).get("reason")
            out.append(f"  {cs.get('name')}: image {cs.get('image')}, {now}" + (f" ({why})" if why else "")
                       + f", ready {cs.get('ready')}, restarts {cs.get('restartCount', 0)}")
            last = (cs.get("lastState") or {}).get("terminated")
            if last:
                out.append(f"    last terminated: {last.get('reason')} exit {last.get('exitCode')} "
                           f"at {last.get('finishedAt')}")
    if spec.get("volumes"):
        out.append("Volumes:")
        out += [f"  {v.get('name')}: {_volume(v)}" for v in spec["volumes"]]
    out.append("Events:")
    mine = _events_of(pod, events)
    out += [f"  {e.get('type')}  {e.get('reason')}  x{e.get('count') or 1}  "
            f"{e.get('lastTimestamp') or e.get('eventTime') or ''}  {(e.get('message') or '').strip()}"
            for e in mine] or ["  <none>"]
    return "\n".join(out) + "\n"


def fetch_log(cluster, namespace: str, pod: str, container: str, *, previous: bool, limit_bytes: int,
              tail: int) -> bytes:
    """One container's log, bounded by bytes and lines (the API's limitBytes and tailLines, and here)."""
    stream = cluster.stream(log_path(namespace, pod),
                            log_params(container, previous=previous, tail=tail, limit_bytes=limit_bytes),
                            read_timeout=cluster.timeout)
    buf = io.BytesIO()
    try:
        for line in stream.lines():
            if buf.tell() + len(line) + 1 > limit_bytes:
                break
            buf.write(line + b"\n")
    finally:
        stream.close()
    if stream.error is not None:
        raise DynamoError(f"the log stream broke: {stream.error}")
    return buf.getvalue()


def containers(pod: dict) -> List[str]:
    spec = pod.get("spec") or {}
    return [c["name"] for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])]


def crd_versions(crds: List[dict]) -> Dict[str, dict]:
    out: Dict[str, dict] = {}
    for crd in crds:
        versions = (crd.get("spec") or {}).get("versions") or []
        out[(crd.get("metadata") or {}).get("name") or ""] = {
            "served": [v["name"] for v in versions if v.get("served")],
            "storage": next((v["name"] for v in versions if v.get("storage")), None)}
    return out


def selected_by(deployment: dict, pod: dict) -> bool:
    """Whether a pod belongs to a Deployment: same namespace, and its selector's matchLabels."""
    dmeta, pmeta = deployment.get("metadata") or {}, pod.get("metadata") or {}
    if dmeta.get("namespace") != pmeta.get("namespace"):
        return False
    match = ((deployment.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    labels = pmeta.get("labels") or {}
    return bool(match) and all(labels.get(k) == v for k, v in match.items())


def rank_of(pod: dict) -> dict:
    info = classify(pod)
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return {"namespace": info.namespace, "pod": info.name, "dgd": labels.get(DGD_LABEL),
            "component": labels.get(COMPONENT_LABEL), "group": info.group, "rank": info.rank, "role": info.role}


def restarts(pod: dict, container: str) -> int:
    st = pod.get("status") or {}
    for cs in (st.get("containerStatuses") or []) + (st.get("initContainerStatuses") or []):
        if cs.get("name") == container:
            return int(cs.get("restartCount") or 0)
    return 0


# -- the command -------------------------------------------------------------------------------------

LogJob = Tuple[str, dict, str, bool, int, int]  # (where, pod, container, previous, bytes, lines)


def run_collect(cluster, env: Environment, *, name: Optional[str], all_namespaces: bool, output: str,
                force: bool = False, limits: Optional[Limits] = None) -> Result[CollectSummary]:
    """Record the cluster, then add what a recording has not: logs, describes, detect/doctor JSON."""
    from kubectl_dynamo.cluster.record import record
    from kubectl_dynamo.cluster.recorded import RecordedCluster
    from kubectl_dynamo.commands.detect import detect_report
    from kubectl_dynamo.commands.doctor import run_doctor
    from kubectl_dynamo.model.facts import gather
    from kubectl_dynamo.model.platform import controller_deployments
    from kubectl_dynamo.output.tables import format_collect

    limits = limits or Limits()
    if not output.endswith((".tar.gz", ".tgz")):
        raise UsageError("-o/--output must name a .tar.gz file")
    if os.path.exists(output) and not force:
        raise InputError(f"{output} exists; use --force to overwrite it")
    if bool(name) == bool(all_namespaces):
        raise UsageError("name one DGD, or use -A for every DGD")
    namespace = None if all_namespaces else cluster.namespace
    if name:  # fail before recording anything when the DGD does not exist
        cluster.get(kinds.DGD.path(namespace, name))
    progress = Progress(env)
    top = os.path.basename(output).removesuffix(".tar.gz").removesuffix(".tgz")
    staging = tempfile.mkdtemp(prefix="kubectl-dynamo-collect-")
    try:
        bundle = Bundle(os.path.join(staging, top))
        os.makedirs(bundle.root)
        progress.step("recording the cluster's objects (one LIST per kind)")
        snapshot = record(cluster, bundle.root, namespace=None,
                          source={"tool": "kubectl dynamo collect", "dgd": name, "namespace": namespace})
        offline = RecordedCluster(bundle.root, namespace)
        progress.step("detect and doctor, on the recording")
        bundle.json("detect.json", detect_report(offline), "kubectl dynamo detect -o json, on the recording")
        doctor = run_doctor(offline, all_namespaces=all_namespaces, name=name).data
        bundle.json("doctor.json", doctor, "kubectl dynamo doctor -o json, on the recording")

        pods = offline.list(path_for("", "v1", "pods", namespace),
                            label_selector=f"{DGD_LABEL}={name}" if name else DGD_LABEL)
        events = offline.list(path_for("", "v1", "events", namespace))
        for pod in pods:
            meta = pod.get("metadata") or {}
            bundle.write(f"pods/{meta.get('namespace')}/{meta.get('name')}/describe.txt",
                         describe(pod, events).encode(), "kubectl describe pod, from the recording")
        controllers = controller_deployments(offline.list(path_for("apps", "v1", "deployments")))
        every_pod = offline.list(path_for("", "v1", "pods"))
        controller_pods = [p for d in controllers for p in every_pod if selected_by(d, p)]
        jobs: List[LogJob] = [("pods", p, c, prev, limits.log_bytes, limits.log_lines)
                              for p in pods for c in containers(p) for prev in (False, True)]
        jobs += [("controllers", p, c, False, limits.controller_log_bytes, limits.controller_log_lines)
                 for p in controller_pods for c in containers(p)]
        _logs(cluster, bundle, jobs, progress)

        facts = gather(cast(Any, offline))  # the recording answers what the live Cluster does
        if facts.operator_config is not None:
            import yaml

            bundle.write("operator-config.yaml", yaml.safe_dump(facts.operator_config, sort_keys=False).encode(),
                         "the Dynamo operator's configuration (its ConfigMap's config.yaml)")
        if any(r["resource"] == "customresourcedefinitions" for r in snapshot["resources"]):
            crds = offline.list(path_for("apiextensions.k8s.io", "v1", "customresourcedefinitions"))
            bundle.json("crd-versions.json", crd_versions(crds), "served and storage versions of every CRD")
        for f in snapshot["forbidden"]:
            bundle.forbidden.append({"what": f"{f['resource']}.{f['group'] or 'core'}/{f['version']}",
                                     "reason": f["reason"]})
        manifest = {"format": FORMAT, "formatVersion": FORMAT_VERSION,
                    "createdAt": env.now().astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "scope": {"dgd": name, "namespace": namespace},
                    "snapshot": {"manifest": "manifest.json", "kinds": len(snapshot["resources"]),
                                 "namespace": snapshot["namespace"]},
                    "secrets": "never collected: Secrets keep their key names, every value is empty",
                    "limits": asdict(limits), "ranks": [rank_of(p) for p in pods],
                    "files": sorted(bundle.files, key=lambda f: f["path"]),
                    "forbidden": bundle.forbidden, "unavailable": bundle.unavailable}
        bundle.json("collect.json", manifest, "this manifest")
        progress.step("writing " + output)
        _tar(staging, top, output)
    finally:
        progress.done()
        shutil.rmtree(staging, ignore_errors=True)
    summary: CollectSummary = {"output": output, "bytes": os.path.getsize(output), "files": len(bundle.files) + 1,
               "pods": len(pods), "logs": sum(1 for f in bundle.files if f["path"].endswith(".log")),
               "forbidden": bundle.forbidden, "unavailable": bundle.unavailable, "doctor": doctor["summary"]}
    return Result(summary, format_collect, names=[f"file/{output}"])


def _logs(cluster, bundle: Bundle, jobs: List[LogJob], progress: Progress) -> None:
    """Download logs a few at a time; each is bounded, so memory is at most LOG_WORKERS limits."""

    def one(job: LogJob):
        _, pod, container, previous, limit, lines = job
        meta = pod.get("metadata") or {}
        try:
            return fetch_log(cluster, meta["namespace"], meta["name"], container, previous=previous,
                             limit_bytes=limit, tail=lines), None
        except DynamoError as e:
            return None, e

    with ThreadPoolExecutor(LOG_WORKERS) as pool:
        for done, (job, (data, error)) in enumerate(zip(jobs, pool.map(one, jobs)), 1):
            progress.step(f"logs {done}/{len(jobs)}")
            where, pod, container, previous, limit, _ = job
            meta = pod.get("metadata") or {}
            instance = "previous" if previous else "current"
            what = f"{instance} log of {meta.get('namespace')}/{meta.get('name')} container {container}"
            if error is not None:
                # a container that never restarted has no previous log: nothing missing, nothing to say
                if not (previous and restarts(pod, container) == 0 and not isinstance(error, Forbidden)):
                    bundle.refuse(what, error)
                continue
            suffix = ".previous" if previous else ""
            bundle.write(f"{where}/{meta.get('namespace')}/{meta.get('name')}/{container}{suffix}.log", data,
                         f"{what} (at most {limit} bytes)")


def _tar(staging: str, top: str, output: str) -> None:
    """Write the archive beside ``output`` and move it in place: a reader never sees half a bundle."""
    directory = os.path.dirname(os.path.abspath(output))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(output)}.", suffix=".tmp", dir=directory)
    os.close(fd)
    try:
        with tarfile.open(tmp, "w:gz") as tar:
            tar.add(os.path.join(staging, top), arcname=top)
        os.chmod(tmp, 0o600)  # a bundle describes a cluster: readable by its owner only
        os.replace(tmp, output)
    except OSError as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise InputError(f"{output}: cannot write: {e.strerror or e}") from None
