"""Everything ``doctor`` reads, in one LIST per resource kind (never one call per DGD).

Lists are raw JSON (model objects are slow on 10,000 pods), without ``managedFields`` and, for
pods, without the container fields no check reads (``slim_pod``; see benchmarks/doctor_scale.py).
Scope is one namespace or all. A forbidden list becomes a ``skipped`` entry with its reason; the
run goes on without that kind (its field stays None: the checks that need it say nothing).

Besides the DGDs' pods, doctor reads what the controllers and schedulers themselves say about them:
the operator's DynamoComponentDeployments and the DGD status, LeaderWorkerSets and their
StatefulSets, Grove's PodCliqueSets, PodCliqueScalingGroups, PodCliques and PodGangs, Volcano's and
KAI's PodGroups (always by their fully qualified group: both define ``podgroups``), every Warning
event in scope, and (from ``facts``) Nodes and controller Deployments. Secrets are never listed: the MPI SSH secret is read by name, once
per namespace that needs it, and only its key names are kept.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ..detection import Facts
from ..errors import ClusterUnreachable, DynamoError, Forbidden, NotFound, Unauthorized
from ..operator.api import LABEL_DGD as DGD_LABEL
from .client import Cluster, path_for
from .facts import gather

LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"  # on the StatefulSets LWS creates (lws@v0.9.0)
KAI_PODGROUP_VERSION = "v2alpha2"  # KAI serves PodGroups as scheduling.run.ai/v2alpha2 (queues are v2)
UNKNOWN = "unknown"


@dataclass
class Snapshot:
    facts: Facts
    namespace: Optional[str]  # None = all namespaces
    dgds: List[dict] = field(default_factory=list)
    pods: List[dict] = field(default_factory=list)
    configmaps: List[dict] = field(default_factory=list)  # DGD-labelled only
    podgangs: Optional[List[dict]] = None
    leaderworkersets: Optional[List[dict]] = None
    statefulsets: Optional[List[dict]] = None  # LWS-owned only
    componentdeployments: Optional[List[dict]] = None  # DynamoComponentDeployments (DGD-labelled)
    podcliquesets: Optional[List[dict]] = None
    podcliquescalinggroups: Optional[List[dict]] = None
    podcliques: Optional[List[dict]] = None
    volcano_podgroups: Optional[List[dict]] = None  # podgroups.scheduling.volcano.sh
    kai_podgroups: Optional[List[dict]] = None  # podgroups.scheduling.run.ai
    events: List[dict] = field(default_factory=list)
    services: Optional[List[dict]] = None
    # (ns, name) -> sorted key names, None when absent, UNKNOWN when it may not be read
    secrets: Dict[tuple, object] = field(default_factory=dict)
    skipped: List[dict] = field(default_factory=list)  # {"check": what, "reason": why}
    requests: int = 0
    taken_at: Optional[str] = None  # RFC 3339: when the state was read (a recording's createdAt)


# Container fields no check reads and that are most of a rendered pod's objects (env alone is
# ~20 small dicts per container): dropped as each page arrives, so 10,000 pods stay well under
# 300 MB. A check that needs one of them must remove it from here.
UNREAD_CONTAINER_FIELDS = ("env", "envFrom", "command", "args", "ports", "resources")


def slim_pod(pod: dict) -> dict:
    spec = pod.get("spec") or {}
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            for field_name in UNREAD_CONTAINER_FIELDS:
                c.pop(field_name, None)
    return pod


def _list(cluster: Cluster, snap: Snapshot, what: str, group: str, version: str, plural: str,
          label_selector: Optional[str] = None, field_selector: Optional[str] = None, slim=None):
    try:
        items = cluster.iter_list(path_for(group, version, plural, snap.namespace), label_selector=label_selector,
                                  field_selector=field_selector)
        return [slim(x) for x in items] if slim else list(items)
    except (ClusterUnreachable, Unauthorized):
        raise
    except Forbidden as e:
        snap.skipped.append({"check": what, "reason": f"forbidden: {e.message}"})
    except NotFound as e:
        snap.skipped.append({"check": what, "reason": f"not served: {e.message}"})
    except DynamoError as e:
        snap.skipped.append({"check": what, "reason": e.message})
    return None


def take(cluster: Cluster, namespace: Optional[str], *, dgd_name: Optional[str] = None) -> Snapshot:
    snap = Snapshot(facts=gather(cluster), namespace=namespace, taken_at=_taken_at(cluster))
    for what, why in snap.facts.unknown.items():
        snap.skipped.append({"check": what, "reason": why})
    groups = snap.facts.groups or {}
    if "nvidia.com" not in groups:
        snap.skipped.append({"check": "dynamographdeployments", "reason": "the nvidia.com API group is not served"})
    else:
        field_selector = f"metadata.name={dgd_name}" if dgd_name else None
        snap.dgds = _list(cluster, snap, "dynamographdeployments", "nvidia.com", "v1beta1",
                          "dynamographdeployments", field_selector=field_selector) or []
    if not snap.dgds:
        snap.requests = cluster.requests
        return snap
    selector = f"{DGD_LABEL}={dgd_name}" if dgd_name else DGD_LABEL
    snap.pods = _list(cluster, snap, "pods", "", "v1", "pods", label_selector=selector, slim=slim_pod) or []
    snap.configmaps = _list(cluster, snap, "configmaps", "", "v1", "configmaps", label_selector=selector) or []
    snap.componentdeployments = _list(cluster, snap, "dynamocomponentdeployments", "nvidia.com", "v1beta1",
                                      "dynamocomponentdeployments", label_selector=selector)
    if "grove.io" in groups:
        for plural in ("podcliquesets", "podcliquescalinggroups", "podcliques"):
            setattr(snap, plural, _list(cluster, snap, plural, "grove.io", "v1alpha1", plural))
    if "scheduler.grove.io" in groups:
        snap.podgangs = _list(cluster, snap, "podgangs", "scheduler.grove.io", "v1alpha1", "podgangs")
    if "leaderworkerset.x-k8s.io" in groups:
        snap.leaderworkersets = _list(cluster, snap, "leaderworkersets", "leaderworkerset.x-k8s.io", "v1",
                                      "leaderworkersets", label_selector=selector)
        snap.statefulsets = _list(cluster, snap, "statefulsets", "apps", "v1", "statefulsets",
                                  label_selector=LWS_NAME_LABEL)
    if "scheduling.volcano.sh" in groups:
        snap.volcano_podgroups = _list(cluster, snap, "podgroups.scheduling.volcano.sh", "scheduling.volcano.sh",
                                       "v1beta1", "podgroups")
    if KAI_PODGROUP_VERSION in groups.get("scheduling.run.ai", []):
        snap.kai_podgroups = _list(cluster, snap, "podgroups.scheduling.run.ai", "scheduling.run.ai",
                                   KAI_PODGROUP_VERSION, "podgroups")
    snap.events = _list(cluster, snap, "events", "", "v1", "events", field_selector="type=Warning") or []
    snap.services = _list(cluster, snap, "services", "", "v1", "services")
    snap.requests = cluster.requests
    return snap


def _taken_at(cluster: Cluster) -> str:
    """A recording answers for its own time (``RecordedCluster.manifest``); a live cluster for now."""
    recorded = (getattr(cluster, "manifest", None) or {}).get("createdAt")
    if recorded:
        return recorded
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_secret_keys(cluster: Cluster, snap: Snapshot, namespace: str, name: str):
    """Key names of one secret (never its values): a sorted list, None when absent, UNKNOWN when
    forbidden. Cached per (namespace, name)."""
    key = (namespace, name)
    if key not in snap.secrets:
        try:
            secret = cluster.get(path_for("", "v1", "secrets", namespace, name))
            snap.secrets[key] = sorted((secret.get("data") or {}).keys())
            del secret  # the values go at once
        except NotFound:
            snap.secrets[key] = None
        except Forbidden as e:
            snap.skipped.append({"check": "ssh-secret-missing", "reason": f"forbidden: {e.message}"})
            snap.secrets[key] = UNKNOWN
        snap.requests = cluster.requests
    return snap.secrets[key]
