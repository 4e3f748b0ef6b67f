"""Write a cluster's state as a snapshot (docs/snapshot-format.md): one LIST per kind.

Read-only on the cluster. Nothing secret reaches the disk: every Secret ``data`` value becomes
``""`` (key names stay: doctor checks them) and ``kubectl apply``'s last-applied annotation, which
would repeat the values, is dropped. ``managedFields`` never leave the client; CRDs keep only what
names them (their schemas are large and no check reads them).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
from datetime import datetime, timezone
from typing import Callable, Dict, List, Optional, Sequence

from kubectl_dynamo.cluster.client import path_for
from kubectl_dynamo.cluster.kinds import RECORDED, Kind
from kubectl_dynamo.cluster.recorded import FORMAT, FORMAT_VERSION, resource_file
from kubectl_dynamo.errors import Forbidden

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"




def _secret(obj: dict) -> dict:
    obj["data"] = {k: "" for k in obj.get("data") or {}}
    obj.pop("stringData", None)
    ((obj.get("metadata") or {}).get("annotations") or {}).pop(LAST_APPLIED, None)
    return obj


def _crd(obj: dict) -> dict:
    spec = obj.get("spec") or {}
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"),
            "metadata": {"name": (obj.get("metadata") or {}).get("name")},
            "spec": {"group": spec.get("group"), "scope": spec.get("scope"),
                     "names": {k: v for k, v in (spec.get("names") or {}).items() if k in ("kind", "plural")},
                     "versions": [{k: v.get(k) for k in ("name", "served", "storage")}
                                  for v in spec.get("versions") or []]}}


STRIP: Dict[tuple, Callable[[dict], dict]] = {
    ("", "secrets"): _secret,
    ("apiextensions.k8s.io", "customresourcedefinitions"): _crd,
}


def _served_resources(cluster, groups: dict, group: str, version: str) -> Optional[Dict[str, bool]]:
    """{plural: namespaced} of one group/version from discovery; None when it is not served."""
    if group and version not in (groups.get(group) or []):
        return None
    doc = cluster.get("/api/v1" if group == "" else f"/apis/{group}/{version}")
    return {r["name"]: bool(r.get("namespaced")) for r in doc.get("resources") or [] if "/" not in r["name"]}


def record(cluster, dest: str, kinds: Sequence[Kind] = RECORDED, namespace: Optional[str] = None,
           source: Optional[dict] = None) -> dict:
    """LIST each served kind (namespaced kinds in ``namespace``, or all namespaces when None) and
    write the tree to ``dest`` (a directory, or a ``.tar.gz`` when the name ends so). Returns the manifest."""
    files = read(cluster, kinds, namespace, source)
    _write(dest, files)
    return files["manifest.json"]  # type: ignore[return-value]


def read(cluster, kinds: Sequence[Kind] = RECORDED, namespace: Optional[str] = None,
         source: Optional[dict] = None) -> Dict[str, object]:
    """The snapshot's files in memory ({name: JSON}), as ``record`` writes them (``collect`` narrows them first)."""
    groups = cluster.groups()
    files: Dict[str, object] = {"version.json": cluster.get("/version"), "discovery.json": groups}
    resources: List[dict] = []
    forbidden: List[dict] = []
    discovery: Dict[tuple, Optional[Dict[str, bool]]] = {}
    for kind in kinds:
        gv = (kind.group, kind.version)
        if gv not in discovery:
            discovery[gv] = _served_resources(cluster, groups, *gv)
        served = discovery[gv]
        if served is None or kind.plural not in served:
            continue  # not served: a replay answers NotFound, as the server would
        namespaced = served[kind.plural]
        path = path_for(kind.group, kind.version, kind.plural, namespace if namespaced else None)
        strip = STRIP.get((kind.group, kind.plural))
        try:
            items = cluster.list(path, each=strip)
        except Forbidden as e:
            forbidden.append({"group": kind.group, "version": kind.version, "resource": kind.plural,
                              "reason": e.message})
            continue
        files[resource_file(kind.group, kind.version, kind.plural)] = {"items": items}
        resources.append({"group": kind.group, "version": kind.version, "resource": kind.plural,
                          "namespaced": namespaced, "count": len(items)})
    manifest = {"format": FORMAT, "formatVersion": FORMAT_VERSION,
                # a recording read again (collect's unit tests) keeps its own time: ages are relative to it
                "createdAt": (getattr(cluster, "manifest", None) or {}).get("createdAt")
                or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "namespace": namespace, "source": source or {}, "resources": resources, "forbidden": forbidden}
    files["manifest.json"] = manifest
    return files


def dump(name: str, data) -> bytes:
    """Sorted keys; a resource file holds one object per line (compact, yet diffs object by object)."""
    if name.startswith("resources/"):
        lines = [json.dumps(o, sort_keys=True, ensure_ascii=False, separators=(",", ":")) for o in data["items"]]
        return ('{"items": [\n' + ",\n".join(lines) + ("\n" if lines else "") + "]}\n").encode()
    return (json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def _write(dest: str, files: Dict[str, object]) -> None:
    if dest.endswith((".tar.gz", ".tgz")):
        with tarfile.open(dest, "w:gz") as tar:
            for name in sorted(files):
                data = dump(name, files[name])
                info = tarfile.TarInfo(name)
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
        return
    # rewrite a previous snapshot in place (stale kinds must not survive); refuse any other content
    if os.path.isdir(dest) and os.listdir(dest) and not os.path.exists(os.path.join(dest, "manifest.json")):
        raise FileExistsError(f"{dest} is not empty and holds no snapshot")
    shutil.rmtree(os.path.join(dest, "resources"), ignore_errors=True)
    for name in sorted(files):
        full = os.path.join(dest, name)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(dump(name, files[name]))
