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
    "get": "kubectl dynamo get -o json",
    "tree": "kubectl dynamo tree NAME -o json",
    "collect": "kubectl dynamo collect: its summary (the Result behind the printed lines)",
    "collect-manifest": "collect.json inside a collect bundle",
    "version": "kubectl dynamo version -o json",
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


class _FindingCause(TypedDict, total=False):
    cause: Optional[Cause]  # doctor only


class FindingJson(_FindingCause):
    code: str
    severity: str
    message: str
    hint: str
    component: Optional[str]
    object: Optional[Dict[str, Any]]


class Skipped(TypedDict):
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


class VersionData(_VersionServer):
    clientVersion: str


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


class SkippedDocument(TypedDict):
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
class DoctorData(TypedDict):
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


# -- install, collect --------------------------------------------------------------------------
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


class CollectSummary(TypedDict):
    output: str
    bytes: int
    files: int
    pods: int
    logs: int
    forbidden: List[Problem]
    unavailable: List[Problem]
    doctor: Severities


# schema name -> its TypedDict (tests keep their keys equal)
TYPES: Dict[str, Any] = {
    "finding": FindingJson, "detect": DetectData, "version": VersionData, "explain-fields": FieldDocs,
    "doctor": DoctorData, "get": GetData, "tree": TreeData, "install": InstallData, "collect": CollectSummary,
}
