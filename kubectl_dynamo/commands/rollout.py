"""``rollout status`` and ``rollout history``: one DGD over time.

``status`` lists, then follows with one WATCH per kind (``cluster/streams.Watched``: resumed when
the server ends it, re-listed on 410 Gone) the DGD, its DynamoComponentDeployments, pods,
LeaderWorkerSets, Deployments, PodCliqueSets, PodCliques and events (each by the DGD's label), and judges the
rollout after every change (``model/rollout.assess``). Like ``kubectl rollout status`` it prints a
"Waiting for ..." line whenever what it waits for changes and ends with "successfully rolled out"
(exit 0). ``--timeout`` is a progress deadline: when nothing moved for that long it reads the DGD as
doctor does and exits 1 with doctor's findings for it, the first of them ``rollout-stalled``.

``history`` lists the worker generations (one per worker hash on the DCDs, workloads and pods,
oldest first) and with ``--revision N`` what changed between generation N-1 and N.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from kubectl_dynamo.cluster.kinds import by_kind
from kubectl_dynamo.cluster.live import dgd_not_found
from kubectl_dynamo.environment import Environment
from kubectl_dynamo.errors import DynamoError, ExitCode, Forbidden, NotFound, UsageError
from kubectl_dynamo.model.labels import COMPONENT_LABEL
from kubectl_dynamo.model.rollout import WORKLOAD_KINDS, RolloutInputs, assess, progress_key, selector
from kubectl_dynamo.result import Result

# What rollout status watches, by its name here -> the kind in the one table (cluster/kinds.py). Workload
# kinds whose API is not served (no LWS, no Grove) are left out.
WATCHED = {"dgd": "DynamoGraphDeployment", "dcd": "DynamoComponentDeployment", "pod": "Pod",
           "LeaderWorkerSet": "LeaderWorkerSet", "Deployment": "Deployment", "PodCliqueSet": "PodCliqueSet",
           "PodClique": "PodClique",
           "event": "Event"}
OPTIONAL = ("LeaderWorkerSet", "PodCliqueSet", "PodClique")
NAME = 'dynamographdeployment "{}"'


if TYPE_CHECKING:
    from kubectl_dynamo.contracts import ComponentChanges, FindingJson, Generation, RolloutHistory, RolloutStatus


def _kinds(namespace: str, name: str) -> Dict[str, tuple]:
    out: Dict[str, tuple] = {}
    for kind, table_kind in WATCHED.items():
        path = by_kind(table_kind).path(namespace)
        if kind == "dgd":
            out[kind] = (path, None, f"metadata.name={name}")
        elif kind == "event":  # the operator's events on the DGD itself (RollingUpdateStarted, ...NotSupported)
            out[kind] = (path, None, f"involvedObject.kind=DynamoGraphDeployment,involvedObject.name={name}")
        else:
            out[kind] = (path, selector(name), None)
    return out


def _listed(cluster, kinds: Dict[str, tuple]) -> Tuple[Dict[str, tuple], Dict[str, tuple], List[dict]]:
    """(kinds that are served, their first LIST, what was skipped): a workload API that is not
    served (404) or may not be read is left out, the DGD must be readable."""
    from kubectl_dynamo.cluster.streams import list_with_version

    served, listed, skipped = {}, {}, []
    for kind, (path, labels, fields) in kinds.items():
        try:
            listed[kind] = list_with_version(cluster, path, label_selector=labels, field_selector=fields)
        except (NotFound, Forbidden) as e:
            if kind not in OPTIONAL and not (kind == "event" and isinstance(e, Forbidden)):
                raise
            if isinstance(e, Forbidden):
                skipped.append({"check": kind, "reason": e.message})
            continue
        served[kind] = kinds[kind]
    return served, listed, skipped


def _inputs(items) -> Optional[RolloutInputs]:
    dgds = items("dgd")
    if not dgds:
        return None
    return RolloutInputs(dgd=dgds[0], dcds=items("dcd"), pods=items("pod"), events=items("event"),
                         workloads={k: items(k) for k in WORKLOAD_KINDS})


def _namespace(cluster, name: str) -> str:
    if not name:
        raise UsageError("rollout needs a DGD name")
    return cluster.namespace


def read(cluster, name: str) -> Tuple[RolloutStatus, list, RolloutInputs]:
    """One look: (assessment, skipped, what it was judged from)."""
    namespace = _namespace(cluster, name)
    kinds = _kinds(namespace, name)
    served, listed, skipped = _listed(cluster, kinds)
    inputs = _inputs(lambda k: listed[k][0] if k in listed else [])
    if inputs is None:
        raise dgd_not_found(name, namespace)
    return assess(inputs), skipped, inputs


def waiting_line(a: RolloutStatus) -> str:
    line = f"Waiting for {NAME.format(a['name'])} rollout to finish: {a['waiting']}..."
    return line + (f"\n  cause: {a['cause']}" if a.get("cause") else "")


def done_line(a: RolloutStatus) -> str:
    return f"{NAME.format(a['name'])} successfully rolled out"


def status_once(cluster, name: str) -> Result[RolloutStatus]:
    """``--watch=false``: where the rollout stands; exit 0 when complete, 1 while not."""
    a, skipped, _ = read(cluster, name)
    return Result({**a, "skipped": skipped}, lambda d, wide, color, width: done_line(d) if d["done"] else waiting_line(d),
                  exit_code=ExitCode.OK if a["done"] else ExitCode.FINDINGS,
                  names=[f"dynamographdeployment.nvidia.com/{name}"])


def follow(cluster, env: Environment, name: str, *, timeout: Optional[float], json_out: bool = False) -> int:
    """Follow the rollout until it completes (0) or makes no progress for ``timeout`` seconds (1)."""
    from kubectl_dynamo.cluster.streams import Watched

    namespace = _namespace(cluster, name)
    served, listed, _ = _listed(cluster, _kinds(namespace, name))
    watched = Watched(cluster, served, listed)
    last_line, last_key = None, None
    progressed = env.monotonic()
    watched.start()
    try:
        while True:
            inputs = _inputs(lambda k: watched.items(k) if k in served else [])
            if inputs is None:
                raise dgd_not_found(name, namespace)
            a = assess(inputs)
            key = progress_key(a)
            if key != last_key:
                last_key, progressed = key, env.monotonic()
            if a["done"]:
                if not json_out:
                    env.out(done_line(a))
                break
            line = waiting_line(a)
            if line != last_line and not json_out:
                env.out(line)
                env.stdout.flush()
            last_line = line
            while True:  # wait for a change, or for the progress deadline
                if timeout and env.monotonic() - progressed >= timeout:
                    return _stalled(cluster, env, name, namespace, a, timeout, json_out)
                if watched.wait() is not None:
                    break
    finally:
        watched.close()
    if json_out:
        from kubectl_dynamo.output.render import to_json

        env.out(to_json({**a, "findings": []}))
    return ExitCode.OK


def stalled_finding(a: RolloutStatus, seconds: Optional[float]) -> FindingJson:
    """The ``rollout-stalled`` finding of an assessment that is not done."""
    from kubectl_dynamo.findings.finding import finding

    how = f"no progress for {seconds:g}s" if seconds else "not complete"
    message = f"rollout of DGD {a['name']} stalled ({how}): {a['waiting']}"
    if a.get("cause"):
        message += f"; {a['cause']}"
    # not the catalogue's fix: it sends the user to `rollout status`, the command that printed this
    hint = (f"the findings below say why it waits; for a multinode DGD delete the old worker DCD (kubectl dynamo "
            f"rollout history {a['name']} -n {a['namespace']}) once the new generation is Ready")
    return finding("rollout-stalled", message, hint,
                   obj={"kind": "DynamoGraphDeployment", "namespace": a["namespace"], "name": a["name"]}).as_json()


def _stalled(cluster, env: Environment, name: str, namespace: str, a: RolloutStatus, timeout: float,
             json_out: bool) -> int:
    """Exit 1 with doctor's findings on this DGD, the stall first."""
    from kubectl_dynamo.checks.diagnosis import diagnose
    from kubectl_dynamo.model.views import read_views

    findings = [stalled_finding(a, timeout)]
    try:  # doctor's diagnosis of this DGD (and of the cluster it runs on)
        snap, views = read_views(cluster, namespace, name)
        findings += [f for f in diagnose(snap, views)["findings"] if f["code"] != "rollout-stalled"]
    except DynamoError as e:  # the stall is the answer; doctor's reading is extra
        env.err(f"warning: could not read the DGD as doctor does: {e.message}")
    if json_out:
        from kubectl_dynamo.output.render import to_json

        env.out(to_json({**a, "findings": findings}))
    else:
        from kubectl_dynamo.output.tables import format_findings_lines

        env.out(format_findings_lines(findings, env.table_width))
    env.stdout.flush()
    return ExitCode.FINDINGS


# -- history ---------------------------------------------------------------------------------------

def history(cluster, name: str, revision: Optional[int] = None) -> Result[RolloutHistory]:
    from kubectl_dynamo.output.tables import format_history

    a, skipped, inputs = read(cluster, name)
    gens = a["generations"]
    data: RolloutHistory = {"name": a["name"], "namespace": a["namespace"], "workerHash": a["workerHash"],
            "rollingUpdate": a["rollingUpdate"], "generations": gens, "skipped": skipped}
    if revision is not None:
        if not 1 <= revision <= len(gens):
            raise UsageError(f"revision {revision} not found: {a['name']} has {len(gens)} worker generation(s)")
        data["revision"] = revision
        data["changes"] = _changes(inputs.dcds, gens[revision - 2] if revision > 1 else None, gens[revision - 1])
    return Result(data, lambda d, wide, color, width: format_history(d, wide, width),
                  names=[f"dynamographdeployment.nvidia.com/{name}"])


def _specs(dcds: List[dict], gen: Optional[Generation]) -> Dict[str, dict]:
    """component -> the spec of that generation's worker DCD (the operator renders the workloads from it),
    from the DCDs the assessment was made of."""
    if gen is None:
        return {}
    out: Dict[str, dict] = {}
    for dcd in dcds:
        meta = dcd.get("metadata") or {}
        if meta.get("name") in gen["dcds"]:
            out[(meta.get("labels") or {}).get(COMPONENT_LABEL) or meta.get("name") or ""] = dcd.get("spec") or {}
    return out


def _changes(dcds: List[dict], before: Optional[Generation], after: Generation) -> List[ComponentChanges]:
    """Per component: explain --diff's entries between the two generations' main pod templates, and
    the unified diff of the DCD specs."""
    import yaml

    from kubectl_dynamo.commands.upgrade import unified_diff
    from kubectl_dynamo.operator.changes import role_changes

    old, new = _specs(dcds, before), _specs(dcds, after)
    out: List[ComponentChanges] = []
    for comp in sorted(set(old) | set(new)):
        a, b = old.get(comp) or {}, new.get(comp) or {}
        tpl_a = a.get("podTemplate") or {}
        entries = role_changes(tpl_a, (b.get("podTemplate") or {}).get("spec") or {}) if a and b else []
        text = unified_diff(yaml.safe_dump(a, sort_keys=True) if a else "", yaml.safe_dump(b, sort_keys=True) if b else "",
                            f"{comp}.spec")
        out.append({"component": comp, "changes": entries, "diff": text})
    return out
