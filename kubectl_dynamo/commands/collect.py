"""``collect``: a support bundle of the asked scope that ``doctor --from`` reads as it reads the cluster.

The bundle is a ``.tar.gz`` of one directory holding the snapshot tree of docs/snapshot-format.md (read by
``cluster.record``, then narrowed to the scope and redacted by ``model.bundle``: one DGD's lineage and what it
references, one namespace, or the cluster), plus:

- ``manifest.json``: the snapshot's manifest, with the scope, what was redacted, and every other file of the
  bundle with its size and sha256;
- ``collect.json``: what was collected (every file, its size, what it is), what was forbidden, unavailable or left
  out by a cap, which rank each pod is (``views.classify``), the caps;
- ``detect.json``, ``doctor.json``: both commands' JSON computed on the narrowed recording itself, so they are
  exactly what ``doctor --from`` prints on the bundle;
- ``pods/<ns>/<pod>/describe.txt``: status, conditions, containers and events, as ``kubectl describe``;
- ``pods/<ns>/<pod>/<container>.log`` and ``.previous.log``: every pod's logs, bounded, token shapes redacted;
- ``controllers/<ns>/<pod>/<container>.log``: the operator's and the orchestrators' lines about the scope's
  objects (all of them for ``--scope cluster``), bounded;
- ``operator-config.yaml``, ``crd-versions.json``.

Secret values never reach the disk: the snapshot keeps key names only (``record``), the describe files name
Secrets without reading them, and nothing else reads a Secret. Env values, credential-looking annotations and
arguments and token-shaped strings are redacted unless ``--include-env``; ``--anonymize`` replaces names and IPs
and writes the mapping beside the bundle, never in it. Nothing is written until the whole bundle is built in
memory (bounded by ``--max-bytes``).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import timezone
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, cast

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
    from kubectl_dynamo.model.bundle import Redactor, Scope

FORMAT = "kubectl-dynamo/collect"
FORMAT_VERSION = 2  # 2: scoped, redacted, checksummed (1: every namespace, env values in clear)
LOG_WORKERS = 4  # concurrent log downloads: enough to hide latency, few enough for the API server


@dataclass
class Limits:
    log_bytes: int = 4 * 1024 * 1024  # per container instance (the API's limitBytes)
    log_lines: int = 20000  # per container instance (tailLines)
    controller_log_bytes: int = 2 * 1024 * 1024
    controller_log_lines: int = 5000
    max_bytes: int = 256 * 1024 * 1024  # the whole bundle, before compression; logs stop there
    max_pods: int = 100  # the pods whose logs are fetched (fan-out); the rest are listed as left out


@dataclass
class Bundle:
    """The bundle's files, in memory until the archive is written, and the manifest's lists."""

    files: Dict[str, bytes] = field(default_factory=dict)
    about: Dict[str, str] = field(default_factory=dict)  # path -> what it is
    forbidden: List[Problem] = field(default_factory=list)
    unavailable: List[Problem] = field(default_factory=list)
    truncated: List[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(len(b) for b in self.files.values())

    def write(self, rel: str, data: bytes, what: str) -> None:
        self.files[rel] = data
        self.about[rel] = what

    def json(self, rel: str, data, what: str) -> None:
        self.write(rel, (json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode(), what)

    def refuse(self, what: str, error: DynamoError) -> None:
        target = self.forbidden if isinstance(error, Forbidden) else self.unavailable
        target.append({"what": what, "reason": error.message})

    def listing(self, skip=()) -> List[dict]:
        return [{"path": p, "bytes": len(b), "sha256": hashlib.sha256(b).hexdigest(), "what": self.about.get(p, "")}
                for p, b in sorted(self.files.items()) if p not in skip]


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
              tail: int) -> Tuple[List[bytes], bool]:
    """One container's log lines, bounded by bytes and lines (the API's limitBytes and tailLines, and here),
    and whether a bound cut it (the server returned as many lines as asked, or more bytes than allowed)."""
    stream = cluster.stream(log_path(namespace, pod),
                            log_params(container, previous=previous, tail=tail, limit_bytes=limit_bytes),
                            read_timeout=cluster.timeout)
    lines: List[bytes] = []
    size, cut = 0, False
    try:
        for line in stream.lines():
            if size + len(line) + 1 > limit_bytes:
                cut = True
                break
            lines.append(line)
            size += len(line) + 1
    finally:
        stream.close()
    if stream.error is not None:
        raise DynamoError(f"the log stream broke: {stream.error}")
    return lines, cut or len(lines) >= tail


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


def resolve_scope(cluster, name: Optional[str], all_namespaces: bool, scope: Optional[str]) -> Scope:
    """What was asked: a DGD (its name), a namespace (``--scope namespace``) or the cluster (``-A``, ``--scope
    cluster``). Never wider than asked."""
    from kubectl_dynamo.model.bundle import Scope

    if all_namespaces:
        if scope not in (None, "cluster"):
            raise UsageError(f"-A collects every namespace; it contradicts --scope {scope}")
        scope = "cluster"
    if scope is None:
        if not name:
            raise UsageError("name one DGD, or widen the scope with --scope namespace or --scope cluster (-A)")
        scope = "dgd"
    if scope == "dgd" and not name:
        raise UsageError("--scope dgd needs a DGD name")
    return Scope(scope, None if scope == "cluster" else cluster.namespace, name)


def _objects(files: Dict[str, Any]) -> Dict[Tuple[str, str, str], List[dict]]:
    from kubectl_dynamo.cluster.recorded import resource_file

    return {(r["group"], r["version"], r["resource"]): files[resource_file(r["group"], r["version"], r["resource"])]
            ["items"] for r in files["manifest.json"]["resources"]}


def _log_pods(narrowed, scope: Scope) -> Tuple[List[dict], List[dict]]:
    """(the scope's pods, the controllers' pods) whose logs a bundle holds: a DGD's or a namespace's every pod,
    the cluster's DGD pods; the scope's DGD pods first."""
    from kubectl_dynamo.model.platform import controller_deployments

    pods = narrowed.get(("", "v1", "pods"), [])
    controllers = controller_deployments(narrowed.get(("apps", "v1", "deployments"), []))
    theirs = [p for d in controllers for p in pods if selected_by(d, p)]
    ours = [p for p in pods if not any(p is c for c in theirs) and (
        ((p.get("metadata") or {}).get("namespace") == scope.namespace) if scope.kind != "cluster"
        else DGD_LABEL in ((p.get("metadata") or {}).get("labels") or {}))]
    ours.sort(key=lambda p: (DGD_LABEL not in ((p.get("metadata") or {}).get("labels") or {}),
                             (p.get("metadata") or {}).get("namespace") or "", (p.get("metadata") or {}).get("name") or ""))
    return ours, theirs


def run_collect(cluster, env: Environment, *, name: Optional[str], all_namespaces: bool, output: Optional[str],
                force: bool = False, limits: Optional[Limits] = None, scope: Optional[str] = None,
                include_env: bool = False, anonymize: bool = False, mapping: Optional[str] = None,
                dry_run: bool = False) -> Result:
    """Read the cluster, keep the asked scope, redact; then add logs, describes, detect/doctor JSON, the manifest."""
    from kubectl_dynamo.cluster.record import dump, read
    from kubectl_dynamo.cluster.recorded import RecordedCluster, resource_file
    from kubectl_dynamo.commands.detect import detect_report
    from kubectl_dynamo.commands.doctor import run_doctor
    from kubectl_dynamo.model.bundle import Redactor, narrow, scope_of
    from kubectl_dynamo.model.facts import gather
    from kubectl_dynamo.output.tables import format_collect, format_collect_plan

    limits = limits or Limits()
    if not dry_run:
        if not output:
            raise UsageError("-o/--output is required: the .tar.gz file to write (or --dry-run)")
        if not output.endswith((".tar.gz", ".tgz")):
            raise UsageError("-o/--output must name a .tar.gz file")
        if os.path.exists(output) and not force:
            raise InputError(f"{output} exists; use --force to overwrite it")
    if mapping and not anonymize:
        raise UsageError("--mapping names where --anonymize writes its names; it needs --anonymize")
    where = resolve_scope(cluster, name, all_namespaces, scope)
    if name:  # fail before reading anything when the DGD does not exist
        cluster.get(kinds.DGD.path(where.namespace or cluster.namespace, name))
    progress = Progress(env)
    try:
        progress.step("reading the cluster's objects (one LIST per kind)")
        files: Dict[str, Any] = read(cluster, source={"tool": "kubectl dynamo collect", "dgd": name,
                                                      "namespace": where.namespace})
        snapshot = files["manifest.json"]
        narrowed = narrow(_objects(files), where)
        ours, theirs = _log_pods(narrowed, where)
        fetched, left = ours[:limits.max_pods], ours[limits.max_pods:]
        if dry_run:
            plan = {"scope": where.as_json(), "describe": where.describe(), "output": output,
                    "objects": scope_of(narrowed), "pods": [_pod_name(p) for p in fetched],
                    "leftOut": [_pod_name(p) for p in left], "controllers": [_pod_name(p) for p in theirs],
                    "limits": asdict(limits), "includeEnv": include_env, "anonymize": anonymize}
            return Result(plan, format_collect_plan)
        redactor = Redactor(include_env=include_env)
        for items in narrowed.values():
            for o in items:
                redactor.obj(o)
        for r in snapshot["resources"]:
            key = (r["group"], r["version"], r["resource"])
            files[resource_file(*key)] = {"items": narrowed[key]}
            r["count"] = len(narrowed[key])
        namespaces = sorted({n for items in narrowed.values() for o in items
                             if (n := (o.get("metadata") or {}).get("namespace"))})
        snapshot.update(namespace=where.namespace, scope=where.as_json(),
                        namespaces=namespaces if where.kind != "cluster" else None)
        top = os.path.basename(cast(str, output)).removesuffix(".tar.gz").removesuffix(".tgz")
        bundle = Bundle()
        for rel, data in files.items():
            if rel != "manifest.json":
                bundle.write(rel, dump(rel, data), "the snapshot (docs/snapshot-format.md)")
        offline = RecordedCluster(cast(str, output), where.namespace,
                                  files={**bundle.files, "manifest.json": dump("manifest.json", snapshot)})
        progress.step("detect and doctor, on the recording")
        bundle.json("detect.json", detect_report(offline), "kubectl dynamo detect -o json, on the recording")
        doctor = run_doctor(offline, all_namespaces=where.kind == "cluster", name=name).data
        bundle.json("doctor.json", doctor, "kubectl dynamo doctor -o json, on the recording")
        events = offline.list(path_for("", "v1", "events", where.namespace))
        for pod in ours:
            meta = pod.get("metadata") or {}
            bundle.write(f"pods/{meta.get('namespace')}/{meta.get('name')}/describe.txt",
                         describe(pod, events).encode(), "kubectl describe pod, from the recording")
        if left:
            bundle.unavailable.append({"what": f"logs of {len(left)} more pods ({_pod_name(left[0])}, ...)",
                                       "reason": f"not collected: over --max-pods {limits.max_pods}"})
        jobs: List[LogJob] = [("pods", p, c, prev, limits.log_bytes, limits.log_lines)
                              for p in fetched for c in containers(p) for prev in (False, True)]
        jobs += [("controllers", p, c, False, limits.controller_log_bytes, limits.controller_log_lines)
                 for p in theirs for c in containers(p)]
        _logs(cluster, bundle, jobs, progress, redactor, _about(narrowed, where), limits.max_bytes)
        facts = gather(cast(Any, offline))  # the recording answers what the live Cluster does
        if facts.operator_config is not None:
            import yaml

            text = redactor.text(yaml.safe_dump(facts.operator_config, sort_keys=False))
            bundle.write("operator-config.yaml", text.encode(),
                         "the Dynamo operator's configuration (its ConfigMap's config.yaml)")
        crds = narrowed.get(("apiextensions.k8s.io", "v1", "customresourcedefinitions"))
        if crds is not None:
            bundle.json("crd-versions.json", crd_versions(crds), "served and storage versions of every CRD")
        for f in snapshot["forbidden"]:
            bundle.forbidden.append({"what": f"{f['resource']}.{f['group'] or 'core'}/{f['version']}",
                                     "reason": f["reason"]})
        ranks: Any = [rank_of(p) for p in ours if DGD_LABEL in ((p.get("metadata") or {}).get("labels") or {})]
        hide: Callable[[Any], Any] = lambda x: x  # noqa: E731
        if anonymize:
            hide = _anonymize(bundle, narrowed, where, mapping or _mapping_path(cast(str, output)))
            snapshot = hide(snapshot)
            ranks = hide(ranks)
        problems: Any = hide({"forbidden": bundle.forbidden, "unavailable": bundle.unavailable,
                              "truncated": bundle.truncated})
        limits_json = asdict(limits)
        manifest = {"format": FORMAT, "formatVersion": FORMAT_VERSION,
                    "createdAt": env.now().astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "scope": hide(where.as_json()),
                    "snapshot": {"manifest": "manifest.json", "kinds": len(snapshot["resources"]),
                                 "namespace": snapshot["namespace"]},
                    "secrets": "never collected: Secrets keep their key names, every value is empty",
                    "redacted": dict(sorted(redactor.counts.items())), "includeEnv": include_env,
                    "anonymized": anonymize, "limits": limits_json, "ranks": ranks,
                    "files": bundle.listing(), **problems}
        bundle.json("collect.json", manifest, "collect's own manifest: scope, caps, ranks, what was left out")
        from kubectl_dynamo import __version__

        snapshot["bundle"] = {"plugin": __version__, "collectFormatVersion": FORMAT_VERSION,
                              "redacted": manifest["redacted"], "includeEnv": include_env, "anonymized": anonymize,
                              "limits": limits_json}
        snapshot["files"] = bundle.listing()  # every file but manifest.json itself, with its checksum
        bundle.files["manifest.json"] = dump("manifest.json", snapshot)
        progress.step("writing " + cast(str, output))
        _tar(bundle, top, cast(str, output))
    finally:
        progress.done()
    summary: CollectSummary = {
        "output": cast(str, output), "bytes": os.path.getsize(cast(str, output)), "files": len(bundle.files),
        "scope": cast(Any, where.as_json()), "pods": len(ours),
        "logs": sum(1 for f in bundle.files if f.endswith(".log")), "forbidden": bundle.forbidden,
        "unavailable": bundle.unavailable, "truncated": len(bundle.truncated), "redacted": manifest["redacted"],
        "includeEnv": include_env, "mapping": (mapping or _mapping_path(cast(str, output))) if anonymize else None,
        "limits": cast(Any, limits_json), "doctor": doctor["summary"]}
    return Result(summary, format_collect, names=[f"file/{output}"])


def _pod_name(p: dict) -> str:
    meta = p.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"


def _mapping_path(output: str) -> str:
    return output.removesuffix(".tar.gz").removesuffix(".tgz") + ".names.json"


def _about(narrowed, scope: Scope) -> Callable[[str], bool]:
    """Which controller log lines the bundle keeps: those about the scope's objects (model.bundle.about)."""
    from kubectl_dynamo.model.bundle import about

    names = [(o.get("metadata") or {}).get("name") or "" for items in narrowed.values() for o in items
             if (o.get("metadata") or {}).get("namespace") == scope.namespace]
    return about(scope, names + [scope.dgd or ""])


def _anonymize(bundle: Bundle, narrowed, scope: Scope, mapping: str) -> Callable[[Any], Any]:
    """Replace the scope's names and IPs in every file and path; write the mapping beside the bundle (0600)."""
    from kubectl_dynamo.model.bundle import controller_namespaces, pseudonyms_for

    names = pseudonyms_for(narrowed, scope, controller_namespaces(narrowed))
    renamed: Dict[str, bytes] = {}
    about: Dict[str, str] = {}
    for rel, data in bundle.files.items():
        new = names.text(rel)
        if rel.endswith(".json"):
            from kubectl_dynamo.cluster.record import dump

            data = dump(rel, names.obj(json.loads(data)))
        else:
            data = names.text(data.decode("utf-8", "replace")).encode()
        renamed[new] = data
        about[new] = names.text(bundle.about.get(rel, ""))
    bundle.files, bundle.about = renamed, about
    bundle.truncated = [names.text(t) for t in bundle.truncated]
    try:
        fd = os.open(mapping, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump({"pseudonym": {v: k for k, v in sorted(names.mapping.items())}}, f, indent=1, sort_keys=True)
            f.write("\n")
    except OSError as e:
        raise InputError(f"{mapping}: cannot write the names mapping: {e.strerror or e}") from None
    return names.obj


def _logs(cluster, bundle: Bundle, jobs: List[LogJob], progress: Progress, redactor: Redactor,
          about: Callable[[str], bool], max_bytes: int) -> None:
    """Download logs a few at a time; each is bounded, so memory is at most LOG_WORKERS limits. Every line is
    redacted; a controller's keeps only the lines ``about`` the scope; the bundle stops at ``max_bytes``."""

    def one(job: LogJob):
        _, pod, container, previous, limit, lines = job
        meta = pod.get("metadata") or {}
        try:
            return fetch_log(cluster, meta["namespace"], meta["name"], container, previous=previous,
                             limit_bytes=limit, tail=lines), None
        except DynamoError as e:
            return None, e

    with ThreadPoolExecutor(LOG_WORKERS) as pool:
        for done, (job, (got, error)) in enumerate(zip(jobs, pool.map(one, jobs)), 1):
            progress.step(f"logs {done}/{len(jobs)}")
            where, pod, container, previous, limit, tail = job
            meta = pod.get("metadata") or {}
            instance = "previous" if previous else "current"
            what = f"{instance} log of {meta.get('namespace')}/{meta.get('name')} container {container}"
            if error is not None:
                # a container that never restarted has no previous log: nothing missing, nothing to say
                if not (previous and restarts(pod, container) == 0 and not isinstance(error, Forbidden)):
                    bundle.refuse(what, error)
                continue
            lines, truncated = got
            text = [line.decode("utf-8", "replace") for line in lines]
            note = f"{what} (at most {tail} lines and {limit} bytes; token shapes redacted)"
            if where == "controllers":
                text = [t for t in text if about(t)]
                note = f"{what}: only its lines about the collected objects ({len(text)} of {len(lines)})"
            rel = f"{where}/{meta.get('namespace')}/{meta.get('name')}/{container}{'.previous' if previous else ''}.log"
            body = "".join(redactor.text(t) + "\n" for t in text)
            if truncated:  # said in the file itself, where a reader looks first
                body = (f"# kubectl-dynamo collect: truncated: this is the last part of the log, at most {tail} "
                        f"lines and {limit} bytes (--log-lines, --log-bytes)\n") + body
                bundle.truncated.append(rel)
            data = body.encode()
            if bundle.size + len(data) > max_bytes:
                bundle.unavailable.append({"what": what, "reason": f"not collected: the bundle reached --max-bytes "
                                                                   f"{max_bytes}"})
                continue
            bundle.write(rel, data, note)


def _tar(bundle: Bundle, top: str, output: str) -> None:
    """Write the archive beside ``output`` and move it in place: a reader never sees half a bundle."""
    import time

    directory = os.path.dirname(os.path.abspath(output))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(output)}.", suffix=".tmp", dir=directory)
    os.close(fd)
    try:
        os.chmod(tmp, 0o600)  # a bundle describes a cluster: readable by its owner only
        now = time.time()
        with tarfile.open(tmp, "w:gz") as tar:
            for rel in sorted(bundle.files):
                data = bundle.files[rel]
                info = tarfile.TarInfo(f"{top}/{rel}")
                info.size, info.mode, info.mtime = len(data), 0o644, now
                tar.addfile(info, io.BytesIO(data))
        os.replace(tmp, output)
    except OSError as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise InputError(f"{output}: cannot write: {e.strerror or e}") from None
