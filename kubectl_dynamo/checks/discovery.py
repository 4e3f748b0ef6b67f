"""Per-DGD checks of "Ready but not serving": Ready pods the frontend cannot discover.

Kubernetes discovery as the operator and the runtime do it at dynamo@2a6da14c (the operator's default
backend, ``deploy/operator/api/config/v1alpha1/defaults.go``; a DGD's annotation
``nvidia.com/dynamo-discovery-backend`` overrides it, ``internal/controller_common/predicate.go``):

- per DGD, ServiceAccount ``<dgd>-k8s-service-discovery``, Role ``<sa>-role`` and RoleBinding ``<sa>-binding``
  (``internal/discovery/resource.go``); every pod runs as that ServiceAccount unless its podTemplate names one
  (``internal/dynamo/graph.go``);
- per component, a Service labelled ``nvidia.com/dynamo-discovery-backend=kubernetes`` and
  ``nvidia.com/dynamo-discovery-enabled=true`` that selects ``nvidia.com/dynamo-component-type``,
  ``nvidia.com/dynamo-namespace`` and ``nvidia.com/dynamo-component`` (and ``role=leader`` for a multinode DCD)
  (``internal/dynamo/graph.go`` GenerateComponentService, ``internal/controller/dynamocomponentdeployment_renderer.go``);
  the EndpointSlice controller lists the Ready pods a Service selects in slices that carry the Service's labels;
- each frontend's runtime watches, in its own namespace, the EndpointSlices with those two labels and the
  DynamoWorkerMetadata named after each pod, which that pod's runtime writes with an ownerReference to its pod
  (``lib/runtime/src/discovery/kube/daemon.rs``, ``crd.rs``): an instance needs both.

A kind doctor could not read (forbidden, CRD absent) leaves its list None: these checks then say nothing and
doctor's ``skipped`` names the kind.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from kubectl_dynamo.checks.registry import Finding, check
from kubectl_dynamo.findings.catalogue import entry
from kubectl_dynamo.model.labels import COMPONENT_LABEL
from kubectl_dynamo.model.views import DgdView, PodInfo, seconds_between
from kubectl_dynamo.operator import api
from kubectl_dynamo.operator.objects import LABEL_DISCOVERY_BACKEND, LABEL_DISCOVERY_ENABLED
from kubectl_dynamo.operator.podspec import discovery_service_account

KUBERNETES = "kubernetes"
# The labels the frontend's EndpointSlice watch selects (lib/runtime/src/discovery/kube/daemon.rs).
DISCOVERY_LABELS = {LABEL_DISCOVERY_BACKEND: KUBERNETES, LABEL_DISCOVERY_ENABLED: "true"}
# The rules of the operator's discovery Role (internal/discovery/resource.go GetK8sDiscoveryRole): (group, resource, verbs).
DISCOVERY_RULES: Tuple[Tuple[str, str, Tuple[str, ...]], ...] = (
    ("", "endpoints", ("get", "list", "watch")),
    ("", "pods", ("get", "list", "watch")),
    ("discovery.k8s.io", "endpointslices", ("get", "list", "watch")),
    ("nvidia.com", "dynamoworkermetadatas", ("create", "get", "list", "watch", "update", "patch", "delete")),
)
# A pod's runtime rewrites its DynamoWorkerMetadata as it starts: a pod younger than this may still be at it.
REGISTRATION_GRACE = 120


def backend(view: DgdView) -> str:
    """The DGD's discovery backend: its annotation if present, else the operator's configured one, else the
    default (internal/controller_common/predicate.go GetDiscoveryBackend; api/config/v1alpha1/defaults.go)."""
    annotations = (view.raw.get("metadata") or {}).get("annotations") or {}
    if api.ANN_DISCOVERY_BACKEND in annotations:
        return annotations[api.ANN_DISCOVERY_BACKEND]
    configured = ((_snap(view).facts.operator_config or {}).get("discovery") or {}).get("backend")
    return configured or api.DISCOVERY_BACKEND_DEFAULT


def _snap(view: DgdView) -> Any:
    return view.snapshot  # a model.snapshot.Snapshot: its lists are attributes per cluster/kinds.py


def _pods(view: DgdView) -> List[PodInfo]:
    return [p for c in view.components for g in c.groups.values() for p in g.pods]


def _finding(code: str, view: DgdView, message: str, obj: dict, *, severity: Optional[str] = None,
             component: Optional[str] = None) -> Finding:
    e = entry(code)
    return Finding(code, severity or e.severity, message, e.fix, component=component, object=obj,
                   where=view.where(component))


def _in(view: DgdView, attr: str) -> Dict[str, dict]:
    """The objects of the snapshot's list ``attr`` in the DGD's namespace, by name; the list is grouped by
    namespace once per run (on the shared Index), not filtered whole per DGD."""
    cache = getattr(view.index, "_discovery_by_namespace", None) if view.index is not None else None
    if cache is None:
        cache = {}
        if view.index is not None:
            view.index._discovery_by_namespace = cache  # type: ignore[attr-defined]
    if attr not in cache:
        grouped: Dict[Optional[str], Dict[str, dict]] = {}
        for o in getattr(_snap(view), attr) or []:
            meta = o.get("metadata") or {}
            grouped.setdefault(meta.get("namespace"), {})[meta.get("name", "")] = o
        cache[attr] = grouped
    return cache[attr].get(view.namespace, {})


def _grants(role: dict) -> bool:
    """The Role allows every verb of the operator's discovery rules ("*" counts)."""
    def allows(group: str, resource: str, verb: str) -> bool:
        return any(all(want in have or "*" in have for want, have in (
            (group, r.get("apiGroups") or []), (resource, r.get("resources") or []), (verb, r.get("verbs") or [])))
            for r in role.get("rules") or [])
    return all(allows(g, res, v) for g, res, verbs in DISCOVERY_RULES for v in verbs)


def _names(binding: dict, namespace: str, account: str) -> bool:
    return any(s.get("kind") == "ServiceAccount" and s.get("name") == account
               and (s.get("namespace") or namespace) == namespace for s in binding.get("subjects") or [])


def _why_unbound(namespace: str, account: str, operator_account: str, roles: Dict[str, dict],
                 bindings: Dict[str, dict]) -> str:
    """What is missing between ServiceAccount ``account`` and a Role with the discovery rules."""
    role_name, binding_name = f"{operator_account}-role", f"{operator_account}-binding"
    if account != operator_account:
        return f"no RoleBinding in the namespace binds it to a Role with the discovery rules (the operator binds only " \
               f"{operator_account}; ClusterRoleBindings are not read)"
    binding = bindings.get(binding_name)
    if binding is None:
        return f"RoleBinding {binding_name} is missing"
    if not _names(binding, namespace, account):
        return f"RoleBinding {binding_name} does not name ServiceAccount {account}"
    ref = binding.get("roleRef") or {}
    role = roles.get(ref.get("name", "")) if ref.get("kind") == "Role" else None
    if ref.get("kind") == "Role" and role is None:
        return f"Role {ref.get('name')}, which RoleBinding {binding_name} refers to, is missing"
    if role is not None and not _grants(role):
        return f"Role {role['metadata']['name']} lacks rules of the operator's discovery Role (EndpointSlices, " \
               "DynamoWorkerMetadata)"
    return f"Role {role_name} or RoleBinding {binding_name} does not grant it"


@check("discovery-rbac-missing", scope="dgd")
def discovery_rbac_missing(view: DgdView):
    snap = _snap(view)
    if backend(view) != KUBERNETES or None in (snap.serviceaccounts, snap.roles, snap.rolebindings):
        return
    roles, bindings, accounts = _in(view, "roles"), _in(view, "rolebindings"), _in(view, "serviceaccounts")
    operator_account = discovery_service_account(view.name)
    by_account: Dict[str, List[str]] = {}
    for p in _pods(view):
        by_account.setdefault(p.spec.get("serviceAccountName") or "default", []).append(p.name)
    for account, pods in sorted(by_account.items()):
        granted = any(_names(b, view.namespace, account) and (
            (b.get("roleRef") or {}).get("kind") == "ClusterRole"  # its rules are not read: taken as granting
            or _grants(roles.get((b.get("roleRef") or {}).get("name", ""), {}))) for b in bindings.values())
        if granted and account in accounts:
            continue
        theirs = account != operator_account
        why = f"ServiceAccount {account} does not exist" if account not in accounts else \
            _why_unbound(view.namespace, account, operator_account, roles, bindings)
        shown = ", ".join(sorted(pods)[:3]) + (f" and {len(pods) - 3} more" if len(pods) > 3 else "")
        obj = {"kind": "ServiceAccount", "namespace": view.namespace, "name": account} if theirs or \
            account not in accounts else {"kind": "RoleBinding", "namespace": view.namespace,
                                           "name": f"{operator_account}-binding"}
        yield _finding("discovery-rbac-missing", view,
                       f"pods {shown} of DGD {view.name} run as ServiceAccount {account}: {why}; their runtime "
                       "cannot watch EndpointSlices or write their DynamoWorkerMetadata, so the frontend does not "
                       "see them", obj, severity="warning" if theirs and account in accounts else None)


def _labels(obj: dict) -> dict:
    return (obj.get("metadata") or {}).get("labels") or {}


def _component_services(view: DgdView, component: str) -> List[dict]:
    """The operator's Services of one component (GenerateComponentService): selecting by its component name,
    owned by the DGD (Grove path) or by one of its DCDs (component path), in the DGD's namespace."""
    index = view.index
    if index is None or index.services is None:
        return []
    by_namespace = getattr(index, "_services_by_namespace", None)
    if by_namespace is None:  # grouped once per run, not filtered whole per DGD
        by_namespace = {}
        for (namespace, _), svc in sorted(index.services.items()):
            by_namespace.setdefault(namespace, []).append(svc)
        index._services_by_namespace = by_namespace  # type: ignore[attr-defined]
    owners = {("DynamoGraphDeployment", view.name)} | {
        ("DynamoComponentDeployment", (d.get("metadata") or {}).get("name"))
        for d in index.of_dgd(view.snapshot, "componentdeployments", view.namespace, view.name)}
    return [svc for svc in by_namespace.get(view.namespace, [])
            if (((svc.get("spec") or {}).get("selector") or {}).get(COMPONENT_LABEL) or "").lower() == component.lower()
            and any((r.get("kind"), r.get("name")) in owners for r in (svc.get("metadata") or {}).get("ownerReferences") or [])]


@check("discovery-unselected", scope="dgd")
def discovery_unselected(view: DgdView):
    if backend(view) != KUBERNETES or view.index is None or view.index.services is None:
        return
    for c in view.components:
        # the pods a component serves from: single-node pods and each group's leader (rank 0); the operator's
        # Service selects exactly these (role=leader on LWS; Grove's selector covers workers too, not required)
        serving = [p for g in c.groups.values() for p in g.pods if p.ready and p.rank in (None, 0)]
        if not serving:
            continue
        # none at all: the operator owns its Services and re-creates a deleted one at once
        # (internal/controller/dynamographdeployment_controller.go Owns Service), so this reports their labels
        services = _component_services(view, c.name)
        discoverable = [s for s in services if all(_labels(s).get(k) == v for k, v in DISCOVERY_LABELS.items())]
        for svc in services:
            if svc not in discoverable:
                missing = ", ".join(f"{k}={v}" for k, v in DISCOVERY_LABELS.items() if _labels(svc).get(k) != v)
                yield _finding("discovery-unselected", view,
                               f"component {c.name}: Service {svc['metadata']['name']} lacks label {missing}: its "
                               "EndpointSlices carry none, and the frontend's watch selects by them", component=c.name,
                               obj={"kind": "Service", "namespace": view.namespace, "name": svc["metadata"]["name"]})
        for p in serving:
            if any(_selects(s, p) for s in discoverable) or not discoverable:
                continue
            svc = discoverable[0]
            selector = (svc.get("spec") or {}).get("selector") or {}
            off = ", ".join(f"{k}={v} (the pod has {p.labels.get(k, 'no such label')})"
                            for k, v in sorted(selector.items()) if p.labels.get(k) != v)
            yield _finding("discovery-unselected", view,
                           f"component {c.name}: Ready pod {p.name} is not selected by its discovery Service "
                           f"{svc['metadata']['name']}, which selects {off}: no EndpointSlice lists it, the frontend "
                           "never routes to it", component=c.name, obj=p.obj())


def _selects(svc: dict, pod: PodInfo) -> bool:
    selector = (svc.get("spec") or {}).get("selector") or {}
    return bool(selector) and all(pod.labels.get(k) == v for k, v in selector.items())


@check("worker-registration-stale", scope="dgd")
def worker_registration_stale(view: DgdView):
    if _snap(view).workermetadatas is None or backend(view) != KUBERNETES:
        return
    by_pod: Dict[str, List[Tuple[dict, dict]]] = {}
    for reg in _in(view, "workermetadatas").values():  # the DGD's namespace, grouped once per run
        meta = reg.get("metadata") or {}
        for ref in meta.get("ownerReferences") or []:
            if ref.get("kind") == "Pod":
                by_pod.setdefault(ref.get("name", ""), []).append((reg, ref))
    for p in _pods(view):
        uid = (p.raw.get("metadata") or {}).get("uid")
        age = seconds_between(p.created, _snap(view).taken_at)
        if not p.ready or not uid or age is None or age < REGISTRATION_GRACE:
            continue
        for reg, ref in by_pod.get(p.name, []):
            if ref.get("uid") and ref["uid"] != uid:
                name = reg["metadata"]["name"]
                yield _finding("worker-registration-stale", view,
                               f"DynamoWorkerMetadata {name} (created {reg['metadata'].get('creationTimestamp')}) "
                               f"registers pod {p.name} of UID {ref['uid']}, not the live pod (UID {uid}, created "
                               f"{p.created}): the frontend routes {p.name}'s traffic to the earlier pod's address",
                               obj={"kind": "DynamoWorkerMetadata", "namespace": view.namespace, "name": name})
