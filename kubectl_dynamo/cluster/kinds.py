"""The one table of the Kubernetes kinds kubectl-dynamo reads.

Everything that reads kinds derives from ``KINDS``: the recorder and the recorded cluster
(``RECORDED``: every kind, so a recording answers every read), doctor's snapshot (``SNAPSHOT``:
the kinds with a ``field``, read in table order, each kept as ``compact`` says), the owner tree
that ties workloads to their DGD (``OWNERS``) and ``tree``'s lineage (``LINEAGE``). A new kind is one
entry here plus its test (tests/unit/test_kinds.py).

``scope`` says which objects of a kind doctor reads in the namespace (or all namespaces):
``all``; ``dgd``: the ones labelled with their DGD (``nvidia.com/dynamo-graph-deployment-name``);
``lws``: the StatefulSets LWS made (labelled ``leaderworkerset.sigs.k8s.io/name``); ``warnings``: Warning
events only; ``name``: the DGD named on the command line, else all. The labels themselves are
``model.labels``: this table only names the scope.
"""

from __future__ import annotations

from typing import Dict, NamedTuple, Optional, Tuple


class Kind(NamedTuple):
    group: str  # "" = core
    version: str
    plural: str
    kind: str = ""
    namespaced: bool = True
    field: Optional[str] = None  # the Snapshot list doctor fills; None = doctor does not list it
    scope: str = "all"  # all | dgd | lws | warnings | name (see the module docstring)
    compact: Optional[str] = None  # how doctor keeps each object: None whole, "pod", "owned", "name", "meta" (model/snapshot.py)
    required: bool = False  # a Snapshot list that is [] (not None) when it cannot be read
    owner: bool = False  # may own a DGD's workloads: part of the owner tree (model/views.py)
    lineage: bool = False  # ``tree`` lists it (model/lineage.py)
    when: Optional[str] = None  # doctor reads it only when this API group is served (its controller is installed)
    need: Optional[str] = None  # doctor reads it only when what it read before needs it (model/snapshot.NEEDS)

    def path(self, namespace: Optional[str] = None, name: Optional[str] = None, *, version: Optional[str] = None) -> str:
        """The API path of the kind (in a namespace, of one object), at its version or ``version``."""
        from kubectl_dynamo.cluster.client import path_for

        return path_for(self.group, version or self.version, self.plural, namespace if self.namespaced else None, name)


KINDS: Tuple[Kind, ...] = (
    Kind("", "v1", "namespaces", "Namespace", namespaced=False),
    Kind("", "v1", "nodes", "Node", namespaced=False),  # read with the facts (model/facts.py)
    Kind("nvidia.com", "v1beta1", "dynamographdeployments", "DynamoGraphDeployment", field="dgds", scope="name",
         required=True),
    Kind("", "v1", "pods", "Pod", field="pods", scope="dgd", compact="pod", required=True),
    # every ConfigMap of the scope, by name, as the pods reference them (not by the DGD label: `tree` and the
    # kubelet find one that lacks it); only the names are kept
    Kind("", "v1", "configmaps", "ConfigMap", field="configmaps", compact="name", required=True),
    Kind("nvidia.com", "v1beta1", "dynamocomponentdeployments", "DynamoComponentDeployment",
         field="componentdeployments", scope="dgd", compact="owned", owner=True, lineage=True),
    Kind("grove.io", "v1alpha1", "podcliquesets", "PodCliqueSet", field="podcliquesets", compact="owned", owner=True,
         lineage=True),
    Kind("grove.io", "v1alpha1", "podcliquescalinggroups", "PodCliqueScalingGroup", field="podcliquescalinggroups",
         compact="owned", owner=True, lineage=True),
    Kind("grove.io", "v1alpha1", "podcliques", "PodClique", field="podcliques", compact="owned", owner=True,
         lineage=True),
    Kind("scheduler.grove.io", "v1alpha1", "podgangs", "PodGang", field="podgangs", compact="owned", owner=True,
         lineage=True),
    Kind("leaderworkerset.x-k8s.io", "v1", "leaderworkersets", "LeaderWorkerSet", field="leaderworkersets",
         scope="dgd", compact="owned", owner=True, lineage=True),
    Kind("apps", "v1", "statefulsets", "StatefulSet", field="statefulsets", scope="lws", compact="owned", owner=True,
         lineage=True, when="leaderworkerset.x-k8s.io"),
    Kind("apps", "v1", "deployments", "Deployment", lineage=True),  # single-node components; controllers: facts
    Kind("apps", "v1", "replicasets", "ReplicaSet", lineage=True),
    # what `helm --wait` and hooks wait for besides Deployments and StatefulSets (install's progress)
    Kind("apps", "v1", "daemonsets", "DaemonSet"),
    Kind("batch", "v1", "jobs", "Job"),
    # KAI and Volcano both define podgroups and queues: always read by their fully qualified group.
    Kind("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup", field="volcano_podgroups"),
    # KAI serves PodGroups as scheduling.run.ai/v2alpha2 (its queues as v2): read only where that version is served.
    Kind("scheduling.run.ai", "v2alpha2", "podgroups", "PodGroup", field="kai_podgroups"),
    Kind("", "v1", "events", "Event", field="events", scope="warnings", required=True),
    # the configuration that holds a webhook a Warning event says refused an object (checks/causes.py), read
    # only when one does; the endpoint's EndpointSlices are then read by its Service's name (model/snapshot.py)
    Kind("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration",
         namespaced=False, field="validatingwebhookconfigurations", compact="webhooks", need="webhooks"),
    Kind("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration",
         namespaced=False, field="mutatingwebhookconfigurations", compact="webhooks", need="webhooks"),
    Kind("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice"),
    Kind("", "v1", "services", "Service", field="services"),
    Kind("", "v1", "secrets", "Secret"),  # never listed by doctor: the MPI secret is read by name, keys only
    Kind("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", namespaced=False),
    Kind("scheduling.volcano.sh", "v1beta1", "queues", "Queue", namespaced=False),
    Kind("scheduling.run.ai", "v2", "queues", "Queue", namespaced=False),
    # what a pod cannot be created or placed without (model/references.needs; the recordings of checks/causes.py)
    # The operator's Kubernetes discovery, per DGD (dynamo@2a6da14c deploy/operator/internal/discovery/resource.go):
    # the pods' ServiceAccount, the Role that lets the runtime watch EndpointSlices and write its
    # DynamoWorkerMetadata, the RoleBinding between them; the registrations the runtime writes
    # (lib/runtime/src/discovery/kube/crd.rs), kept without their data (checks/discovery.py)
    Kind("", "v1", "serviceaccounts", "ServiceAccount", field="serviceaccounts", compact="name"),
    Kind("rbac.authorization.k8s.io", "v1", "roles", "Role", field="roles"),
    Kind("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", field="rolebindings"),
    Kind("nvidia.com", "v1alpha1", "dynamoworkermetadatas", "DynamoWorkerMetadata", field="workermetadatas",
         compact="meta"),
    # a pod's claims and the StorageClasses they ask for (why a claim stays unbound: checks/causes.py), read
    # only when a pod of the scope mounts a claim
    Kind("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", field="persistentvolumeclaims", need="claims"),
    Kind("storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False, field="storageclasses",
         need="claims"),
    # the volumes bound to those claims (collect keeps them beside the claims; no check reads them yet)
    Kind("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False),
    Kind("", "v1", "resourcequotas", "ResourceQuota"),
    Kind("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", namespaced=False),
)


def _qualified() -> Dict[Kind, str]:
    """A kind's name in messages: its plural, qualified with its group where two groups share the plural."""
    count: Dict[str, int] = {}
    for k in KINDS:
        count[k.plural] = count.get(k.plural, 0) + 1
    return {k: k.plural if count[k.plural] == 1 else f"{k.plural}.{k.group}" for k in KINDS}


NAMES: Dict[Kind, str] = _qualified()
RECORDED: Tuple[Kind, ...] = KINDS  # a recording holds every kind any command reads
SNAPSHOT: Tuple[Kind, ...] = tuple(k for k in KINDS if k.field)
OWNERS: Tuple[Kind, ...] = tuple(k for k in KINDS if k.owner)
LINEAGE: Tuple[Kind, ...] = tuple(k for k in KINDS if k.lineage)


def by_field(field: str) -> Kind:
    return next(k for k in SNAPSHOT if k.field == field)


def by_kind(kind: str) -> Kind:
    """The table's entry of a kind name (the first: PodGroup and Queue have one per scheduler)."""
    return next(k for k in KINDS if k.kind == kind)


DGD: Kind = by_field("dgds")  # DynamoGraphDeployments, read at the storage version v1beta1
