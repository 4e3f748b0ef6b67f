"""``doctor --from BUNDLE``: what a ``collect`` bundle holds (``--list``) and what its scope leaves unjudged.

A bundle says its scope in its ``manifest.json`` (``scope``: dgd, namespace or cluster) and its collect format in
``collect.json``. Format 1 (older plugins) is read: it was collected cluster-wide, with env values in clear and
no checksums, and ``--list`` says so; a format newer than this plugin reads is refused with the reason.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, List, Optional

from kubectl_dynamo.errors import InputError, UsageError
from kubectl_dynamo.model.bundle import scope_words
from kubectl_dynamo.result import Result

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import BundleFile, BundleListing, CollectScope, Skipped

READS = (1, 2)  # collect formats this plugin reads


def collect_format(cluster) -> Optional[int]:
    """The bundle's collect format (None: a plain snapshot); InputError for one this plugin cannot read."""
    doc = cluster.read_json("collect.json")
    if doc is None:
        return None
    version = doc.get("formatVersion") if isinstance(doc, dict) else None
    if version not in READS:
        raise InputError(f"{cluster.path}: collect format {version} is not one this kubectl-dynamo reads "
                         f"({', '.join(map(str, READS))}): it was written by a newer plugin; upgrade kubectl-dynamo")
    return version


def scope_of(cluster) -> CollectScope:
    scope = cluster.manifest.get("scope")
    if isinstance(scope, dict):
        return {"kind": scope.get("kind", "cluster"), "namespace": scope.get("namespace"), "dgd": scope.get("dgd")}
    return {"kind": "namespace" if cluster.scope else "cluster", "namespace": cluster.scope, "dgd": None}


def check_asked(cluster, name: Optional[str], namespace: Optional[str]) -> None:
    """A DGD or namespace outside the bundle's scope is a usage error: it was not collected."""
    scope = scope_of(cluster)
    if scope["kind"] == "cluster":
        return
    outside = (namespace and namespace != scope["namespace"]) or (
        scope["kind"] == "dgd" and name and name != scope["dgd"])
    if outside:
        asked = f"DGD {namespace or scope['namespace']}/{name}" if name else f"namespace {namespace}"
        raise UsageError(f"{cluster.path} holds {scope_words(dict(scope))} only (collect scope {scope['kind']}): {asked} was "
                         "not collected")


def unjudged(cluster) -> List[Skipped]:
    """What the bundle's scope leaves out, as doctor's ``skipped`` entries."""
    scope = scope_of(cluster)
    if scope["kind"] == "cluster":
        return []
    out: List[Skipped] = [{"check": "other DGDs and namespaces",
                           "reason": f"not collected: the bundle holds {scope_words(dict(scope))} only"}]
    try:
        nodes = len(cluster.list("/api/v1/nodes"))
    except Exception:
        nodes = None
    if nodes is not None:
        out.append({"check": "nodes", "reason": f"{nodes} collected: those the scope's pods sit on (every node when one "
                                                "is not placed); capacity and placement elsewhere are not judged"})
    out.append({"check": "controller logs", "reason": "only the controllers' lines about the collected objects "
                                                      "were collected"})
    return out


def run_list(cluster) -> Result[BundleListing]:
    """``doctor --from BUNDLE --list``: scope, versions, counts and the manifest, with each file's checksum checked."""
    from kubectl_dynamo.output.tables import format_bundle

    version = collect_format(cluster)
    manifest = cluster.manifest
    collect = cluster.read_json("collect.json") or {}
    listed = manifest.get("files") or [{"path": f["path"], "bytes": f["bytes"], "sha256": f.get("sha256"),
                                        "what": f.get("what", "")} for f in collect.get("files") or []]
    files: List[BundleFile] = []
    for f in listed:
        raw = cluster.read_bytes(f["path"])
        state = "missing" if raw is None else "unchecked" if not f.get("sha256") else (
            "ok" if hashlib.sha256(raw).hexdigest() == f["sha256"] and len(raw) == f["bytes"] else "modified")
        files.append({"path": f["path"], "bytes": f["bytes"], "sha256": f.get("sha256"), "what": f.get("what", ""),
                      "check": state})
    notes = []
    if version == 1:
        notes.append("collected by an older kubectl-dynamo (collect format 1): every namespace, env values in clear, "
                     "no checksums")
    elif version is None:
        notes.append("a snapshot, not a collect bundle: no logs, no redaction record")
    bundle = manifest.get("bundle") or {}
    versions = {"kubernetes": (cluster.read_json("version.json") or {}).get("gitVersion"),
                "plugin": bundle.get("plugin")}
    detect = cluster.read_json("detect.json") or {}
    versions["dynamo-operator"] = (detect.get("dynamoOperator") or {}).get("version")
    for key, value in (detect.get("orchestrators") or {}).items():
        if isinstance(value, dict) and value.get("version"):
            versions[key] = value["version"]
    data: BundleListing = {
        "path": cluster.path, "collectFormat": version, "createdAt": manifest.get("createdAt"),
        "scope": scope_of(cluster), "versions": versions,
        "counts": {(f"{r['resource']}.{r['group']}" if r["group"] else r["resource"]): r["count"]
                   for r in manifest.get("resources") or []},
        "redacted": bundle.get("redacted", collect.get("redacted")) or {},
        "includeEnv": bool(bundle.get("includeEnv")), "anonymized": bool(bundle.get("anonymized")),
        "limits": bundle.get("limits") or collect.get("limits") or {},
        "truncated": collect.get("truncated") or [], "files": files, "notes": notes}
    bad = [f for f in files if f["check"] in ("missing", "modified")]
    from kubectl_dynamo.errors import ExitCode

    return Result(data, format_bundle, exit_code=ExitCode.FINDINGS if bad else ExitCode.OK)
