"""``tree``: a DGD's lineage down to each rank's pod, with what its pods need."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional

from kubectl_dynamo.cluster import kinds
from kubectl_dynamo.model.labels import DGD_LABEL
from kubectl_dynamo.model.lineage import build_tree, meta
from kubectl_dynamo.model.references import needs
from kubectl_dynamo.result import Result

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import TreeData


# The kinds a group's pods refer to (model/references.needs), whose existence tree shows; Secrets are read by name.
NEEDED = ("Service", "ConfigMap", "ServiceAccount", "PersistentVolumeClaim", "PriorityClass")


def run_tree(cluster, name: str) -> Result[TreeData]:
    """One GET for the DGD, one LIST per served kind in its namespace, a GET per needed Secret (never
    listed: only whether it exists is kept)."""
    from kubectl_dynamo.model.platform import Facts
    from kubectl_dynamo.model.snapshot import UNKNOWN, Snapshot, list_kind, read_secret_keys
    from kubectl_dynamo.output.tables import format_tree

    namespace = cluster.namespace
    dgd = cluster.get(kinds.DGD.path(namespace, name))
    groups = cluster.groups()
    snap = Snapshot(facts=Facts(), namespace=namespace)
    objects: List[dict] = []
    for k in kinds.LINEAGE:
        if k.group and k.version not in groups.get(k.group, []):
            continue
        for o in list_kind(cluster, snap, k.plural, k.group, k.version, k.plural) or []:
            o.setdefault("kind", k.kind)
            objects.append(o)
    pods = list_kind(cluster, snap, "pods", "", "v1", "pods", label_selector=f"{DGD_LABEL}={name}") or []

    def listed(kind: str) -> Optional[set]:
        """The names of a kind the pods may need (None: it may not be read), in the namespace unless the
        kind is cluster-scoped (PriorityClasses)."""
        k = kinds.by_kind(kind)
        where = snap if k.namespaced else whole
        found = list_kind(cluster, where, k.plural, k.group, k.version, k.plural)
        return None if found is None else {meta(o).get("name") for o in found}

    whole = Snapshot(facts=Facts(), namespace=None)
    names = {kind: listed(kind) for kind in NEEDED}
    snap.skipped += whole.skipped
    secrets: Dict[str, Optional[bool]] = {}
    for pod in pods:
        for kind, secret, _ in needs(pod):
            if kind == "Secret" and secret not in secrets:  # a GET by name; only the key names are kept
                keys = read_secret_keys(cluster, snap, namespace, secret, check=f"secret {secret}")
                secrets[secret] = None if keys == UNKNOWN else keys is not None

    def exists(kind: str, what: str) -> Optional[bool]:
        if kind == "Secret":
            return secrets.get(what)
        known = names.get(kind)
        return None if known is None else what in known  # None: that kind may not be read

    data: TreeData = {**build_tree(dgd, objects, pods, exists), "skipped": snap.skipped}
    return Result(data, format_tree, names=[f"dynamographdeployment.nvidia.com/{name}"])
