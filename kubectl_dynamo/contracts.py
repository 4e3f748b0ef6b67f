"""The ``-o json|yaml`` contracts: one TypedDict per command's data, and the JSON Schemas they follow.

The schemas (``data/schemas/*.json``, draft 2020-12) are the published contracts, rendered into
docs/contracts.md; the TypedDicts are the same shapes for mypy, so a command that builds its data
with a missing, renamed or mistyped key fails type checking, and its real output fails the schema
in tests (tests/unit/test_contracts.py also keeps each TypedDict's keys equal to its schema's).
Keys are added, never renamed or removed (CONTRIBUTING.md, "Change a JSON contract").

Producers import these types under ``TYPE_CHECKING`` only: at run time nothing here is loaded
unless a schema is asked for (``kubectl dynamo schema``, tests, the docs generator).
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, TypedDict, Union

from kubectl_dynamo.data import DATA_DIR

SCHEMA_DIR = os.path.join(DATA_DIR, "schemas")

# schema name -> what prints it (the docs and `kubectl dynamo schema` list them in this order)
SCHEMAS = {
    "finding": "the finding object of every command (detect, explain, doctor, get)",
    "detect": "kubectl dynamo detect -o json",
    "explain": "kubectl dynamo explain dgd -f FILE | NAME -o json (--objects, --diff add keys)",
    "explain-fields": "kubectl dynamo explain dgd.FIELD.PATH -o json",
    "generate": "kubectl dynamo generate dgd -o json",
    "upgrade": "kubectl dynamo upgrade dgd -o json",
    "install": "kubectl dynamo install -o json (with --dry-run: the plan; otherwise also the result)",
    "doctor": "kubectl dynamo doctor -o json (also doctor.json in a collect bundle)",
    "check": "kubectl dynamo doctor --explain CODE|all -o json",
    "get": "kubectl dynamo get -o json",
    "tree": "kubectl dynamo tree NAME -o json",
    "collect": "kubectl dynamo collect: its summary (the Result behind the printed lines)",
    "collect-manifest": "collect.json inside a collect bundle",
    "bundle-list": "kubectl dynamo doctor --from BUNDLE --list -o json",
    "version": "kubectl dynamo version -o json",
    "rollout-status": "kubectl dynamo rollout status NAME -o json",
    "rollout-history": "kubectl dynamo rollout history NAME -o json",
    "placement": "kubectl dynamo placement -o json",
}


def schema(name: str) -> Dict[str, Any]:
    """The JSON Schema ``name`` (a key of ``SCHEMAS``)."""
    if name not in SCHEMAS:
        raise KeyError(name)
    with open(os.path.join(SCHEMA_DIR, f"{name}.json"), encoding="utf-8") as f:
        loaded: Dict[str, Any] = json.load(f)
    return loaded


def validator(name: str) -> Any:
    """A draft 2020-12 validator of ``name`` that resolves the other schemas' ``urn:kubectl-dynamo:`` ids."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    every = [schema(n) for n in SCHEMAS]
    registry: Any = Registry().with_resources([(s["$id"], Resource.from_contents(s)) for s in every])
    return Draft202012Validator(schema(name), registry=registry)


# -- the shared pieces -------------------------------------------------------------------------
KubeObject = Dict[str, Any]  # a Kubernetes object (its shape is Kubernetes', not ours)


class ObjectRef(TypedDict, total=False):
    kind: str
    namespace: Optional[str]
    name: Optional[str]
    apiVersion: str


class Cause(TypedDict):
    code: str
    object: Optional[Dict[str, Any]]  # an ObjectRef


class DgdRef(TypedDict):
    namespace: str
    name: str


class _FindingCause(TypedDict, total=False):  # doctor only
    id: str  # stable across runs on the same state: code + digest of object, component, group, cause
    cause: Optional[Cause]
    dgd: Optional[DgdRef]  # the DGD it belongs to; None: the cluster's


class FindingJson(_FindingCause):
    code: str
    severity: str
    message: str
    hint: str
    component: Optional[str]
    object: Optional[Dict[str, Any]]


class _SkippedObject(TypedDict, total=False):
    object: Optional[Dict[str, Any]]  # doctor: a finding --skip or the ignore file left out


class Skipped(_SkippedObject):
    check: str
    reason: str


class Severities(TypedDict):
    errors: int
    warnings: int
    infos: int


# -- detect ------------------------------------------------------------------------------------
class Selection(TypedDict):
    provider: Optional[str]
    orchestrator: Optional[str]
    scheduler: Optional[str]
    queue: Optional[str]
    error: Optional[str]
    reason: str


class DetectData(TypedDict):
    kubernetes: Dict[str, Optional[str]]
    orchestrators: Dict[str, Dict[str, Any]]  # grove, kai, lws, volcano (their keys: detect.json)
    dynamoOperator: Dict[str, Any]
    gpuNodes: Dict[str, int]
    selection: Dict[str, Selection]  # default, enableGroveFalse
    problems: List[FindingJson]


# -- version -----------------------------------------------------------------------------------
class _VersionServer(TypedDict, total=False):
    serverVersion: Optional[str]
    dynamoOperator: Optional[Dict[str, Optional[str]]]


class ClientBuild(TypedDict):
    gitCommit: Optional[str]  # null: run from a source checkout, not from a built wheel or archive
    platform: str  # os/arch in Go's names: linux/amd64, darwin/arm64
    python: str


class VersionData(_VersionServer):
    clientVersion: str
    clientBuild: ClientBuild


# -- explain -----------------------------------------------------------------------------------
class _ExplainedExtra(TypedDict, total=False):
    objects: List[KubeObject]  # --objects
    related: Dict[str, List[str]]  # --objects


class ExplainedDgd(_ExplainedExtra):
    name: str
    namespace: Optional[str]
    apiVersion: str
    operatorVersion: str
    originVersion: Optional[str]
    provider: Optional[str]
    orchestrator: Optional[str]
    scheduler: Optional[str]
    queue: Optional[str]
    components: List[Dict[str, Any]]  # explain.json $defs/component
    findings: List[Dict[str, Any]]  # FindingJson, from the operator's webhook checks too


class _SkippedFile(TypedDict, total=False):
    file: str  # with several -f files


class SkippedDocument(_SkippedFile):
    document: int
    kind: Optional[str]
    reason: str


class ExplainList(TypedDict):
    items: List[ExplainedDgd]
    skipped: List[SkippedDocument]


ExplainData = Union[ExplainedDgd, ExplainList]


class FieldRow(TypedDict):
    name: str
    type: str
    required: bool
    depth: int
    description: str


class FieldDocs(TypedDict):
    group: str
    kind: str
    version: str
    field: Optional[str]
    type: str
    description: str
    fields: List[FieldRow]
    multinodeNotes: Optional[str]


# -- generate, upgrade -------------------------------------------------------------------------
class GenerateSummary(TypedDict):  # -o table|wide only; -o json|yaml print the DGD (generate.json)
    name: str
    engines: List[Dict[str, Any]]


GenerateData = Union[KubeObject, GenerateSummary, None]  # None: written to a file, nothing to print
UpgradeData = Optional[KubeObject]  # the upgraded document or a v1 List of them; None: a diff or --write


# -- doctor, get, tree -------------------------------------------------------------------------
class Since(TypedDict):
    file: str
    resolved: List[FindingJson]  # findings of FILE whose id is gone
    unchanged: int  # findings still there (not listed)


class _DoctorSince(TypedDict, total=False):
    since: Since  # doctor --since FILE: findings holds only the new ones


class DoctorData(_DoctorSince):
    summary: Severities
    deployments: List[Dict[str, Any]]  # doctor.json: name, namespace, components with groups and ranks
    findings: List[FindingJson]
    skipped: List[Skipped]


class GetGroup(TypedDict):
    index: int
    ready: bool
    podsReady: int
    pods: int
    ranks: List[int]
    ranksDesired: int
    restarts: int
    topFinding: Optional[FindingJson]


class GetComponent(TypedDict):
    name: str
    multinode: bool
    nodeCount: int
    replicas: int
    groups: List[GetGroup]


class GetDgd(TypedDict):
    name: str
    namespace: str
    orchestrator: Optional[str]
    provider: Optional[str]
    groupsReady: int
    groupsDesired: int
    ranksPresent: int
    ranksDesired: int
    restarts: int
    creationTimestamp: Optional[str]
    age: Optional[str]
    ready: Dict[str, Optional[str]]
    topFinding: Optional[FindingJson]
    components: List[GetComponent]


class GetData(TypedDict):
    deployments: List[GetDgd]
    skipped: List[Skipped]


class _TreePod(TypedDict, total=False):  # pods only
    component: str
    group: int
    rank: Optional[int]
    role: str
    node: Optional[str]
    phase: Optional[str]
    ready: bool
    needs: List[Dict[str, Any]]


class TreeNode(_TreePod):
    kind: str
    name: str
    status: str
    via: Optional[str]
    children: List[TreeNode]


class TreeRoot(TreeNode):
    namespace: str


class TreeData(TreeRoot):
    skipped: List[Skipped]


class CheckEntry(TypedDict):
    code: str
    severity: str
    severities: List[str]
    when: Optional[str]
    scopes: List[str]
    what: str
    why: str
    fix: str
    refs: List[str]


class Catalogue(TypedDict):
    about: str
    checks: List[CheckEntry]


# -- install, collect --------------------------------------------------------------------------
class BlockedEvidence(TypedDict):
    object: Dict[str, Any]  # an ObjectRef: what it was said about
    reason: str
    message: str


class BlockedCause(TypedDict):
    kind: str
    what: str
    fix: str


class InstallBlocked(TypedDict):  # install.json steps[].blocking[]
    object: Dict[str, Any]
    ready: int
    desired: int
    evidence: List[BlockedEvidence]
    causes: List[BlockedCause]


class InstallData(TypedDict):
    orchestrator: str
    mode: str
    dryRun: bool
    preflight: Dict[str, Any]
    steps: List[Dict[str, Any]]
    warnings: List[str]
    blockers: List[str]
    result: Optional[Dict[str, Any]]


class Problem(TypedDict):
    what: str
    reason: str


class CollectScope(TypedDict):
    kind: str  # dgd | namespace | cluster
    namespace: Optional[str]
    dgd: Optional[str]


class CollectLimits(TypedDict):
    log_bytes: int
    log_lines: int
    controller_log_bytes: int
    controller_log_lines: int
    max_bytes: int
    max_pods: int


class CollectSummary(TypedDict):
    output: str
    bytes: int
    files: int
    scope: CollectScope
    pods: int
    logs: int
    forbidden: List[Problem]
    unavailable: List[Problem]
    truncated: int
    redacted: Dict[str, int]
    includeEnv: bool
    mapping: Optional[str]
    limits: CollectLimits
    doctor: Severities


class BundleFile(TypedDict):
    path: str
    bytes: int
    sha256: Optional[str]
    what: str
    check: str  # ok | modified | missing | unchecked (an older bundle has no checksums)


class BundleListing(TypedDict):
    path: str
    collectFormat: Optional[int]
    createdAt: Optional[str]
    scope: CollectScope
    versions: Dict[str, Optional[str]]
    counts: Dict[str, int]
    redacted: Dict[str, int]
    includeEnv: bool
    anonymized: bool
    limits: Dict[str, int]
    truncated: List[str]
    files: List[BundleFile]
    notes: List[str]


# -- rollout status, rollout history, placement ----------------------------------------------------
class WorkerHash(TypedDict):
    stored: List[str]
    target: List[str]


class _RollingUpdateTimes(TypedDict, total=False):  # as the operator set them (status.rollingUpdate)
    startTime: str
    endTime: str
    updatedComponents: List[str]


class RollingUpdate(_RollingUpdateTimes):
    phase: Optional[str]


class ReadyCondition(TypedDict):
    status: Optional[str]
    reason: Optional[str]
    message: Optional[str]


class WorkloadRollout(TypedDict):
    kind: str
    name: str
    desired: int
    updated: int
    ready: int
    available: int
    unit: str
    done: bool
    waiting: Optional[str]


class ComponentRollout(TypedDict):
    name: str
    type: Optional[str]
    worker: bool
    replicas: int
    nodeCount: int
    workloads: List[WorkloadRollout]
    pods: int
    podsReady: int
    podsDesired: int
    oldPods: int
    oldPodsReady: int
    done: bool
    waiting: Optional[str]


class Generation(TypedDict):
    revision: int
    hash: str
    created: Optional[str]
    dcds: List[str]
    workloads: List[str]
    pods: int
    podsReady: int
    current: bool


class _RolloutExtra(TypedDict, total=False):
    rollingUpdateNotSupported: bool
    skipped: List[Skipped]  # --watch=false
    findings: List[FindingJson]  # following: the final state, with doctor's findings when it stalled


class RolloutStatus(_RolloutExtra):
    name: str
    namespace: str
    generation: int
    observedGeneration: int
    workerHash: WorkerHash
    rollingUpdate: RollingUpdate
    ready: ReadyCondition
    components: List[ComponentRollout]
    podCliqueSets: List[WorkloadRollout]
    generations: List[Generation]
    oldWorkerDCDs: List[str]
    done: bool
    waiting: Optional[str]
    cause: Optional[str]


class TemplateChange(TypedDict):
    what: str
    name: str
    detail: str


class ComponentChanges(TypedDict):
    component: str
    changes: List[TemplateChange]
    diff: str


class _HistoryRevision(TypedDict, total=False):  # --revision N
    skipped: List[Skipped]
    revision: int
    changes: List[ComponentChanges]


class RolloutHistory(_HistoryRevision):
    name: str
    namespace: str
    workerHash: WorkerHash
    rollingUpdate: RollingUpdate
    generations: List[Generation]


class _GpuUserRank(TypedDict, total=False):  # a DGD's pod
    group: int
    rank: Optional[int]
    role: str


class GpuUser(_GpuUserRank):
    pod: str
    namespace: str
    gpus: int
    dgd: Optional[str]
    component: Optional[str]


class GpuNode(TypedDict):
    name: str
    allocatable: int
    used: int
    free: int
    schedulable: bool
    users: List[GpuUser]


class GpuTotals(TypedDict):
    nodes: int
    allocatable: int
    used: int
    free: int
    largestFree: int
    stranded: int


class PendingGang(TypedDict):
    namespace: str
    dgd: Optional[str]
    component: Optional[str]
    group: Optional[int]
    pods: List[str]
    gpusPerPod: List[int]
    gpus: int
    fits: bool
    waitsFor: Optional[str]


class PlacementData(TypedDict):
    nodes: List[GpuNode]
    totals: GpuTotals
    pendingGangs: List[PendingGang]


# schema name -> its TypedDict (tests keep their keys equal)
TYPES: Dict[str, Any] = {
    "finding": FindingJson, "detect": DetectData, "version": VersionData, "explain-fields": FieldDocs,
    "doctor": DoctorData, "check": CheckEntry, "get": GetData, "tree": TreeData, "install": InstallData, "collect": CollectSummary, "bundle-list": BundleListing,
    "rollout-status": RolloutStatus, "rollout-history": RolloutHistory, "placement": PlacementData,
}


# -- docs/contracts.md (cog: scripts/gen-docs; CI checks it is current) ------------------------
def _type(node: Dict[str, Any]) -> str:
    if "$ref" in node:
        ref = str(node["$ref"])
        return f"[{ref.rsplit(':', 1)[-1]}](#finding)" if ref.startswith("urn:") else ref.rsplit("/", 1)[-1]
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return " \\| ".join(f"`{v}`" for v in node["enum"])
    if "anyOf" in node:
        return " or ".join(_type(n) for n in node["anyOf"])
    kind = node.get("type", "any")
    kinds = [kind] if isinstance(kind, str) else list(kind)
    if "array" in kinds and isinstance(node.get("items"), dict):
        kinds = [f"array of {_type(node['items'])}" if k == "array" else k for k in kinds]
    if "object" in kinds and isinstance(node.get("additionalProperties"), dict):
        kinds = [f"map of {_type(node['additionalProperties'])}" if k == "object" else k for k in kinds]
    return " or ".join(kinds)


def _rows(node: Dict[str, Any], prefix: str, rows: List[str], seen: frozenset = frozenset()) -> None:
    """One row per key, depth first; arrays and maps of objects add ``[]`` / ``.*`` to the path."""
    for key, child in (node.get("properties") or {}).items():
        path = f"{prefix}{key}"
        required = "yes" if key in node.get("required", []) else "no"
        text = str(child.get("description", "")).replace("|", "\\|").replace("\n", " ")
        rows.append(f"| `{path}` | {_type(child)} | {required} | {text} |")
        _descend(child, path, rows, seen)


def _descend(child: Dict[str, Any], path: str, rows: List[str], seen: frozenset) -> None:
    if "properties" in child:
        _rows(child, path + ".", rows, seen)
    for inner, suffix in ((child.get("items"), "[]."), (child.get("additionalProperties"), ".*.")):
        if not isinstance(inner, dict):
            continue
        ref = str(inner.get("$ref", ""))
        if ref.startswith("#/$defs/"):  # a local definition, shown once per path (the tree's node recurses)
            name = ref.rsplit("/", 1)[-1]
            if name in seen:
                continue
            inner, seen = _DEFS[name], seen | {name}
        _rows(inner, path + suffix, rows, seen)


_DEFS: Dict[str, Dict[str, Any]] = {}


def markdown() -> str:
    """Every schema as a section: what prints it, what it is, one table row per key."""
    out = []
    for name, printed_by in SCHEMAS.items():
        s = schema(name)
        _DEFS.clear()
        _DEFS.update(s.get("$defs") or {})
        out += [f"## {name}", "", f"{printed_by}. {s['description']} Schema: "
                f"`kubectl_dynamo/data/schemas/{name}.json` (`$id` `{s['$id']}`).", ""]
        shapes = []
        if "oneOf" in s:
            shapes = [(n.get("title") or f"form {i + 1}", n) for i, n in enumerate(s["oneOf"])]
        elif "if" in s:
            shapes = [("a v1 List", s["then"]), ("one document", s["else"])]
        else:
            shapes = [("", s)]
        for label, shape in shapes:
            if "$ref" in shape:
                shape = _DEFS[str(shape["$ref"]).rsplit("/", 1)[-1]]
            rows: List[str] = []
            _rows(shape, "", rows)
            if label:
                out += [f"{label[0].upper()}{label[1:]}:", ""]
            out += ["| key | type | required | what |", "|---|---|---|---|", *rows, ""]
    return "\n".join(out)
