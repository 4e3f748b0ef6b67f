"""What the scheduler's and the controllers' sentences mean, and the fix: pure functions on their words,
the pod that waits and the nodes there are.

The sentences, as the real components write them (recorded in tests/data/recorded/lws-direct-*):

- kube-scheduler (kubernetes@v1.33 pkg/scheduler/framework/types.go ``FitError.Error``): "0/N nodes are
  available: [PreFilter message. ]<count> <reason>, <count> <reason>. preemption: ..."; the reasons of
  the plugins tainttoleration ("node(s) had untolerated taint {key: value}"), nodeaffinity ("node(s)
  didn't match Pod's node affinity/selector"), volumebinding ('persistentvolumeclaim "x" not found',
  "pod has unbound immediate PersistentVolumeClaims"), noderesources ("Insufficient <resource>"),
  nodeunschedulable ("node(s) were unschedulable"), nodeports ("node(s) didn't have free ports for the requested
  pod ports"), interpodaffinity ("node(s) didn't match pod anti-affinity rules", "... pod affinity rules",
  "node(s) didn't satisfy existing pods anti-affinity rules"), podtopologyspread ("node(s) didn't match pod
  topology spread constraints"), noderesources' pod count ("Too many pods").
- The statefulset controller's ``FailedCreate`` event: "create Pod P in StatefulSet S failed error: <the
  API server's refusal>", where the admission plugins say: ResourceQuota (plugin/pkg/admission/
  resourcequota: "exceeded quota: Q, requested: r=v, used: r=v, limited: r=v"), PodSecurity
  (staging/src/k8s.io/pod-security-admission: 'violates PodSecurity "level:version": violation (detail),
  ...'), Priority (plugin/pkg/admission/priority: "no PriorityClass with name X was found"),
  ServiceAccount (plugin/pkg/admission/serviceaccount: 'error looking up service account NS/SA:
  serviceaccount "SA" not found'), webhooks (staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook:
  'failed calling webhook "W": failed to call webhook: Post "URL": error', 'admission webhook "W" denied
  the request: reason').

What the sentences name is then looked up in the objects: an unbound claim's StorageClass (storage.k8s.io/v1;
the PV controller never provisions for ``kubernetes.io/no-provisioner``), the Validating/MutatingWebhookConfiguration
that holds a webhook, its Service or URL and failurePolicy, and the Service's EndpointSlices (recorded:
lws-direct-pvc-*, lws-direct-webhook-*).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace
from typing import Dict, Iterable, List, Optional, Tuple

GPU = "nvidia.com/gpu"


@dataclass(frozen=True)
class Cause:
    """One diagnosis: what is wrong, in the objects' terms, and the concrete fix."""

    what: str
    fix: str
    kind: str  # a short name of the class (taint, selector, pvc-missing, ...), for tests and callers


# Where a fix is made for a DGD's pods; ``for_chart`` says it for a Helm chart's pods (install).
COMPONENT_TEMPLATE = "the component's podTemplate"
OPERATOR_COPIES = " (the operator copies it to every pod)"


def for_chart(cause: Cause) -> Cause:
    """The same cause for the pods of a Helm chart (``install``): they come from the chart's values."""
    fix = cause.fix.replace(OPERATOR_COPIES, "").replace(COMPONENT_TEMPLATE, "the chart's pod template (its values)")
    return replace(cause, fix=fix.replace("the component's resources (podTemplate containers' limits)",
                                          "the chart's container resources (its values)"))


# -- quantities -----------------------------------------------------------------------------------
_SUFFIX = {"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
           "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")


def quantity(value) -> Optional[float]:
    """A Kubernetes resource quantity (k8s.io/apimachinery pkg/api/resource) as a number; None if unreadable."""
    m = _QUANTITY.match(str(value).strip()) if value is not None else None
    if not m or m.group(2) not in _SUFFIX:
        return None
    try:
        return float(m.group(1)) * _SUFFIX[m.group(2)]
    except ValueError:
        return None


def _show(n: float) -> str:
    return str(int(n)) if float(n).is_integer() else f"{n:g}"


def pod_request(spec: dict, resource: str) -> Optional[float]:
    """What a pod asks of ``resource``: the sum over its containers (requests, else limits, as the API server
    defaults them), or the largest init container's if that is more (kubernetes pkg/api/v1/resource)."""
    def one(c: dict) -> float:
        r = c.get("resources") or {}
        return quantity((r.get("requests") or {}).get(resource, (r.get("limits") or {}).get(resource))) or 0.0

    total = sum(one(c) for c in spec.get("containers") or [])
    init = max((one(c) for c in spec.get("initContainers") or []), default=0.0)
    value = max(total, init)
    return value or None


# -- nodes ----------------------------------------------------------------------------------------
def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _names(nodes: Iterable[dict], limit: int = 4) -> str:
    names = sorted(_meta(n).get("name", "?") for n in nodes)
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _allocatable(node: dict) -> dict:
    return (node.get("status") or {}).get("allocatable") or {}


# -- the scheduler --------------------------------------------------------------------------------
_TAINT = re.compile(r"untolerated taint \{([^:{}]+): ?([^{}]*)\}")
_INSUFFICIENT = re.compile(r"Insufficient ([A-Za-z0-9][A-Za-z0-9._/-]*[A-Za-z0-9])")
_PVC_MISSING = re.compile(r'persistentvolumeclaim "([^"]+)" not found')
AFFINITY = "didn't match Pod's node affinity/selector"
UNBOUND = "unbound immediate PersistentVolumeClaims"
NO_VOLUME = "didn't find available persistent volumes to bind"  # volumebinding ErrReasonBindConflict (WaitForFirstConsumer)
CORDONED = "node(s) were unschedulable"
PORTS = "didn't have free ports for the requested pod ports"
ANTI_AFFINITY = "didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "didn't satisfy existing pods anti-affinity rules"
POD_AFFINITY = "didn't match pod affinity rules"
SPREAD = "didn't match pod topology spread constraints"
TOO_MANY_PODS = "Too many pods"


def _toleration(key: str, value: str, effect: Optional[str]) -> str:
    parts = [f"key: {key}", f"operator: {'Equal' if value else 'Exists'}"]
    if value:
        parts.append(f"value: {value}")
    if effect:
        parts.append(f"effect: {effect}")
    return "{" + ", ".join(parts) + "}"


def _taint_cause(key: str, value: str, nodes: List[dict]) -> Cause:
    tainted = [(n, t) for n in nodes for t in (n.get("spec") or {}).get("taints") or []
               if t.get("key") == key and (t.get("value") or "") == value]
    effects = sorted({t.get("effect") for _, t in tainted if t.get("effect")})
    taint = f"{key}={value}" if value else key
    where = f"nodes {_names(n for n, _ in tainted)}" if tainted else "the nodes"
    tolerations = "; ".join(_toleration(key, value, e) for e in effects) or _toleration(key, value, None)
    return Cause(f"{where} carry taint {taint}{':' + '/'.join(effects) if effects else ''}, which the pods do not "
                 "tolerate",
                 f"add the toleration {tolerations} to spec.tolerations in the component's podTemplate (the operator "
                 f"copies it to every pod), or remove the taint (kubectl taint node NODE {taint}"
                 f"{':' + effects[0] if effects else ''}-)", "taint")


def _selector_terms(spec: dict) -> List[Tuple[str, str, List[str]]]:
    """(key, operator, values) the pod requires of a node: nodeSelector, then required node affinity."""
    out = [(k, "In", [str(v)]) for k, v in (spec.get("nodeSelector") or {}).items()]
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in required.get("nodeSelectorTerms") or []:
        for e in term.get("matchExpressions") or []:
            out.append((e.get("key", ""), e.get("operator", "In"), [str(v) for v in e.get("values") or []]))
    return out


def _matches(labels: dict, key: str, op: str, values: List[str]) -> bool:
    has = key in labels
    return {"In": has and labels.get(key) in values, "NotIn": not has or labels.get(key) not in values,
            "Exists": has, "DoesNotExist": not has}.get(op, True)


def _selector_cause(spec: dict, nodes: List[dict]) -> Optional[Cause]:
    terms = _selector_terms(spec)
    if not terms or not nodes:
        return None
    labels = [_meta(n).get("labels") or {} for n in nodes]
    if any(all(_matches(lb, k, op, vs) for k, op, vs in terms) for lb in labels):
        return None  # some node fits them all: the scheduler's reason is about something else too
    unmet = [(k, op, vs) for k, op, vs in terms if not any(_matches(lb, k, op, vs) for lb in labels)]

    def want(k: str, op: str, vs: List[str]) -> str:
        return f"{k}={','.join(vs)}" if op == "In" else f"{k} {op} {','.join(vs)}".rstrip()

    if unmet:
        said = []
        for k, op, vs in unmet:
            have = sorted({lb[k] for lb in labels if k in lb})
            said.append(f"{want(k, op, vs)} (nodes have {k}: {', '.join(have)})" if have else
                        f"{want(k, op, vs)} (no node has label {k})")
        first = unmet[0]
    else:  # each term is met somewhere, never all on one node
        said = [f"no node has all of {', '.join(want(*t) for t in terms)} ("
                + "; ".join(f"{want(*t)}: {_names(n for n, lb in zip(nodes, labels) if _matches(lb, *t))}"
                            for t in terms) + ")"]
        first = terms[-1]
    return Cause(f"no node matches the pods' node selector/affinity: {'; '.join(said)}",
                 "change spec.nodeSelector/affinity in the component's podTemplate to a label the nodes have, or label "
                 f"the nodes meant for it (kubectl label node NODE {first[0]}={(first[2] or [''])[0]})", "selector")


def insufficient_cause(resource: str, spec: dict, nodes: List[dict]) -> Optional[Cause]:
    """Why no node can take a pod short of ``resource``: no node offers it at all (``unknown-resource``), or
    the pod requests more than the largest node has (``too-big``); None when some node could fit it."""
    have = {r for n in nodes for r in _allocatable(n)}
    if nodes and "/" in resource and not any(quantity(_allocatable(n).get(resource)) for n in nodes) and (
            resource in have or resource == GPU):
        # an extended resource no node advertises (0 or absent) is a device plugin's: it is not running or
        # reports no healthy device (kubelet keeps a resource it knew at 0) -- not a request to change
        return Cause(f"no node advertises allocatable {resource} ({'0' if resource in have else 'absent'} on all "
                     f"{len(nodes)} nodes: {_names(nodes, 2)}): the device plugin for {resource} is not running or "
                     "reports no healthy device",
                     f"check the device plugin on the GPU nodes (for nvidia.com/gpu: the NVIDIA GPU Operator's "
                     f"nvidia-device-plugin pods, kubectl get pods -A -o wide | grep -i device-plugin) and what the "
                     f"node reports (kubectl describe node {_meta(nodes[0]).get('name')} | grep {resource})",
                     "not-advertised")
    if have and resource not in have:
        close = difflib.get_close_matches(resource, sorted(have), n=1, cutoff=0.6)
        meant = f"; it probably means {close[0]}" if close else ""
        return Cause(f"no node has resource {resource} at all (nodes offer {', '.join(sorted(have))}){meant}",
                     f"request {close[0] if close else 'a resource the nodes offer'} instead of {resource} in the "
                     "component's resources (podTemplate containers' limits)", "unknown-resource")
    want = pod_request(spec, resource)
    sizes = [(quantity(_allocatable(n).get(resource)) or 0.0, n) for n in nodes if resource in _allocatable(n)]
    if want is None or not sizes:
        return None
    largest, node = max(sizes, key=lambda s: s[0])
    if want > largest:
        return Cause(f"each pod requests {_show(want)} {resource}, more than any node has (the largest, "
                     f"{_meta(node).get('name')}, has {_show(largest)} allocatable): no node can ever fit it",
                     f"request at most {_show(largest)} {resource} per pod (more nodes per group instead: nodeCount "
                     f"× {resource} per pod is the group's total), or add nodes with more {resource}", "too-big")
    return None


def host_ports(spec: dict) -> List[str]:
    """The host ports a pod takes on its node: every containerPort under hostNetwork, else its hostPorts."""
    host = bool(spec.get("hostNetwork"))
    return list(dict.fromkeys(f"{p.get('hostPort') or p.get('containerPort')}/{p.get('protocol') or 'TCP'}"
                              for c in spec.get("containers") or [] for p in c.get("ports") or []
                              if p.get("hostPort") or (host and p.get("containerPort"))))


def _terms(spec: dict, kind: str) -> List[str]:
    """A pod's required (anti-)affinity terms as "labels per topologyKey"."""
    out = []
    for t in ((spec.get("affinity") or {}).get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []:
        sel = t.get("labelSelector") or {}
        labels = [f"{k}={v}" for k, v in (sel.get("matchLabels") or {}).items()]
        labels += [f"{e.get('key')} {e.get('operator', '').lower()} {','.join(e.get('values') or [])}".strip()
                   for e in sel.get("matchExpressions") or []]
        out.append(f"pods with {', '.join(labels) or 'any labels'} per {t.get('topologyKey')}")
    return out


def _placement_causes(words: str, spec: dict, nodes: List[dict]) -> List[Cause]:
    """What the pod itself asks that the nodes cannot give it at the same time as the pods already there."""
    out = []
    n = len(nodes) or "the"
    if PORTS in words:
        ports = host_ports(spec)
        how = "hostNetwork: every containerPort" if spec.get("hostNetwork") else "hostPort"
        out.append(Cause(f"the pod takes host port(s) {', '.join(ports) or '?'} ({how}), already taken on every node "
                         "that could run it: one such pod per node",
                         f"drop the hostPort (or hostNetwork) from the component's podTemplate, or add nodes: {n} nodes "
                         "run at most that many such pods", "ports"))
    if ANTI_AFFINITY in words:
        terms = _terms(spec, "podAntiAffinity")
        out.append(Cause(f"the pod's required podAntiAffinity ({'; '.join(terms) or 'see its spec'}) excludes every "
                         "node that could run it", "relax it to preferredDuringSchedulingIgnoredDuringExecution in the "
                         f"component's podTemplate, or add nodes ({n} nodes hold at most that many such pods)",
                         "anti-affinity"))
    if EXISTING_ANTI_AFFINITY in words:
        out.append(Cause("pods already running there have a required podAntiAffinity against this pod's labels",
                         "find them (kubectl get pods -A -o json | jq '.items[] | select(.spec.affinity.podAntiAffinity)')"
                         " and relax their rule, or add nodes", "existing-anti-affinity"))
    if POD_AFFINITY in words:
        terms = _terms(spec, "podAffinity")
        out.append(Cause(f"the pod's required podAffinity ({'; '.join(terms) or 'see its spec'}) matches no running "
                         "pod on a node that fits", "start the pods it must join first, fix the labelSelector, or relax "
                         "it to preferredDuringSchedulingIgnoredDuringExecution", "affinity"))
    if SPREAD in words:
        hard = [f"maxSkew {t.get('maxSkew')} per {t.get('topologyKey')}" for t in spec.get("topologySpreadConstraints")
                or [] if t.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"]
        out.append(Cause(f"the pod's topologySpreadConstraints ({'; '.join(hard) or 'see its spec'}) cannot be met",
                         "set whenUnsatisfiable: ScheduleAnyway, raise maxSkew, or label more nodes with the "
                         "topologyKey", "spread"))
    if TOO_MANY_PODS in words:
        out.append(Cause("the nodes run as many pods as their allocatable pods allows",
                         "raise the kubelet's maxPods on the GPU nodes or move other pods off them", "too-many-pods"))
    return out


def unschedulable(words: Optional[str], spec: dict, nodes: Optional[List[dict]], namespace: str, *,
                  claims: Optional[List[dict]] = None, classes: Optional[List[dict]] = None) -> List[Cause]:
    """The causes in a scheduler's sentence for one waiting pod (its spec) on these nodes (and the
    namespace's PersistentVolumeClaims and the StorageClasses, None when not read); [] when none is
    understood (the sentence is then quoted as it is)."""
    if not words:
        return []
    nodes = nodes or []
    out: List[Cause] = []
    for key, value in dict.fromkeys(_TAINT.findall(words)):
        out.append(_taint_cause(key, value.strip(), nodes))
    if AFFINITY in words:
        cause = _selector_cause(spec, nodes)
        if cause:
            out.append(cause)
    for claim in dict.fromkeys(_PVC_MISSING.findall(words)):
        out.append(Cause(f"PersistentVolumeClaim {namespace}/{claim} does not exist",
                         f"create PersistentVolumeClaim {claim} in namespace {namespace}, or fix the claimName in the "
                         "component's podTemplate volumes", "pvc-missing"))
    if UNBOUND in words or NO_VOLUME in words:
        mounted = [v["persistentVolumeClaim"]["claimName"] for v in spec.get("volumes") or []
                   if (v.get("persistentVolumeClaim") or {}).get("claimName")]
        found = [c for c in (unbound_claim(name, namespace, claims, classes) for name in mounted) if c]
        if found or claims is None or classes is None:
            out += found or [Cause(
                f"PersistentVolumeClaim {', '.join(f'{namespace}/{c}' for c in mounted) or 'of the pods'} is not "
                "bound to a volume",
                f"kubectl describe pvc -n {namespace} {' '.join(mounted)}: give it a StorageClass that exists and "
                "provisions, or create a PersistentVolume that matches it", "pvc-unbound")]
    if CORDONED in words:
        cordoned = [n for n in nodes if (n.get("spec") or {}).get("unschedulable")]
        if cordoned:
            out.append(Cause(f"{len(cordoned)} of {len(nodes)} nodes are cordoned ({_names(cordoned)})",
                             f"kubectl uncordon {' '.join(sorted(_meta(n).get('name', '') for n in cordoned)[:4])}"
                             f"{' …' if len(cordoned) > 4 else ''} once their maintenance is over, or add nodes",
                             "cordoned"))
    for resource in dict.fromkeys(_INSUFFICIENT.findall(words)):
        cause = insufficient_cause(resource, spec, nodes)
        if cause:
            out.append(cause)
    return out + _placement_causes(words, spec, nodes)


def insufficient(words: Optional[str]) -> List[str]:
    """The resources a scheduler's sentence says are insufficient."""
    return list(dict.fromkeys(_INSUFFICIENT.findall(words or "")))


# -- claims and their StorageClass -----------------------------------------------------------------
# k8s.io/api@v0.33 storage/v1: the default class's annotation; "kubernetes.io/no-provisioner" marks a class
# whose volumes are made by hand (kubernetes pkg/controller/volume/persistentvolume: it never provisions).
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
NO_PROVISIONER = "kubernetes.io/no-provisioner"


def _is_default(sc: dict) -> bool:
    ann = _meta(sc).get("annotations") or {}
    return ann.get(DEFAULT_CLASS) == "true" or ann.get("storageclass.beta.kubernetes.io/is-default-class") == "true"


def _volume_wanted(claim: dict, storage_class: str) -> str:
    spec = claim.get("spec") or {}
    size = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    modes = ",".join(spec.get("accessModes") or [])
    return ", ".join(x for x in (f"storageClassName {storage_class!r}" if storage_class else "no storageClassName",
                                 f"capacity >= {size}" if size else "", f"accessModes {modes}" if modes else "") if x)


def unbound_claim(name: str, namespace: str, claims: Optional[List[dict]],
                  classes: Optional[List[dict]]) -> Optional[Cause]:
    """Why PersistentVolumeClaim ``name`` is not bound, by its StorageClass: none set and no default, the class
    missing, a class without a provisioner (only volumes made by hand bind), or a provisioner that has not
    made the volume. None when it is bound, absent (the scheduler says so: pvc-missing) or either list unread."""
    if claims is None or classes is None:
        return None
    claim = next((c for c in claims if _meta(c).get("name") == name and _meta(c).get("namespace") in (None, namespace)),
                 None)
    if claim is None or (claim.get("status") or {}).get("phase") == "Bound":
        return None
    wanted = (claim.get("spec") or {}).get("storageClassName")
    pvc = f"PersistentVolumeClaim {namespace}/{name}"
    have = sorted(_meta(c).get("name", "?") for c in classes)
    listed = f"the cluster's StorageClasses: {', '.join(have)}" if have else "the cluster has no StorageClass"
    by_hand = f"create a PersistentVolume that matches it ({_volume_wanted(claim, wanted or '')})"
    if not wanted:
        default = [_meta(c).get("name") for c in classes if _is_default(c)]
        if wanted is None and default:
            return None  # the PV controller gives it the default class (Kubernetes >= 1.28): not this
        what = "sets no storageClassName and no StorageClass is the default" if wanted is None else             'sets storageClassName "" (no class)'
        return Cause(f"{pvc} {what}, so nothing provisions it: only a PersistentVolume made beforehand without a "
                     f"class could bind it, and none does ({listed})",
                     ("mark a StorageClass the default (kubectl annotate storageclass NAME "
                      f"{DEFAULT_CLASS}=true; the claim then gets it), " if wanted is None else "")
                     + f"recreate the claim with storageClassName set to a class that provisions, or {by_hand}",
                     "pvc-no-class")
    sc = next((c for c in classes if _meta(c).get("name") == wanted), None)
    if sc is None:
        return Cause(f"{pvc} asks for StorageClass {wanted}, which does not exist ({listed}), so nothing "
                     "provisions it",
                     f"create StorageClass {wanted}, or recreate the claim with an existing class (a claim's class "
                     f"cannot be changed in place: kubectl get pvc -n {namespace} {name} -o yaml)", "pvc-class-missing")
    provisioner = sc.get("provisioner") or "?"
    mode = sc.get("volumeBindingMode") or "Immediate"
    if provisioner == NO_PROVISIONER:
        return Cause(f"{pvc} asks for StorageClass {wanted}, which has no provisioner ({NO_PROVISIONER}, "
                     f"volumeBindingMode {mode}): only PersistentVolumes made beforehand bind, and none fits it",
                     f"{by_hand}, or use a StorageClass that provisions", "pvc-no-provisioner")
    return Cause(f"{pvc} of StorageClass {wanted} is still Pending: its provisioner {provisioner} has not made a "
                 "volume for it",
                 f"check that the provisioner {provisioner} runs and is registered (kubectl get csidrivers; its "
                 f"controller's pods and logs; kubectl describe pvc -n {namespace} {name}), or use a StorageClass "
                 "whose provisioner runs", "pvc-provisioner")


# -- the controllers' create failures --------------------------------------------------------------
_QUOTA = re.compile(r"exceeded quota: (?P<name>[^,]+), requested: (?P<req>.*?), used: (?P<used>.*?), "
                    r"limited: (?P<hard>[^\s\"]*)")
_PSA = re.compile(r'violates PodSecurity "(?P<level>[^"]+)": (?P<violations>.+)$')
_PRIORITY = re.compile(r"no PriorityClass with name (?P<name>\S+) was found")
# The LimitRanger admission plugin, one sentence per violated bound (k8s.io/kubernetes@v1.33.13
# plugin/pkg/admission/limitranger/admission.go minConstraint, maxRequestConstraint, maxConstraint,
# limitRequestRatioConstraint): "maximum R usage per T is X, but limit is Y", "... is X.  No limit is
# specified", "R max limit to request ratio per T is X, but provided ratio is Y" (or "but no request is ...").
_LIMIT_RANGE = re.compile(
    r"(?:(?P<bound>minimum|maximum) (?P<resource>\S+) usage per (?P<type>Container|Pod|PersistentVolumeClaim) is "
    r"(?P<limit>\S+?)(?:, but (?P<field>limit|request) is (?P<value>[^,;\]\s]+)|\.  No (?P<unset>limit|request) is "
    r"specified)|(?P<rresource>\S+) max limit to request ratio per (?P<rtype>\w+) is (?P<ratio>\S+), but "
    r"(?:provided ratio is (?P<observed>[0-9.]+)|no (?P<runset>request|limit) is specified or \S+ is 0))")


def _limit_range_says(m: re.Match) -> Tuple[str, str]:
    """(what is wrong, what to set) for one LimitRanger sentence."""
    if m["rresource"]:
        resource = m["rresource"]
        have = f"ratio {float(m['observed']):g}" if m["observed"] else f"no {m['runset']}"
        return (f"{resource} limit/request {have} against the maximum ratio {m['ratio']} per {m['rtype']}",
                f"{resource} limit at most {m['ratio']} × its request")
    resource, bound, limit = m["resource"], m["bound"], m["limit"]
    field = m["field"] or m["unset"]
    have = f"{field} {m['value']}" if m["value"] else f"no {field}"
    return (f"{resource} {have} against the {bound} {limit} per {m['type']}",
            f"{resource} {field} {'at most' if bound == 'maximum' else 'at least'} {limit}")


# The ResourceQuota admission plugin when a quota tracks limits.* / requests.* the pod does not set
# (plugin/pkg/admission/resourcequota/controller.go: "failed quota: NAME: must specify R for: C; ...").
_QUOTA_UNSET = re.compile(r"failed quota: (?P<name>[^:]+): must specify (?P<what>.+?)$")
_RUNTIME_CLASS = re.compile(r'RuntimeClass "(?P<name>[^"]+)" not found')
_SA = re.compile(r'error looking up service account (?P<ns>[^/\s]+)/(?P<name>[^:\s]+): serviceaccount "[^"]+" not found')
_WEBHOOK_CALL = re.compile(r'failed calling webhook "(?P<name>[^"]+)": failed to call webhook: '
                           r'(?:(?:\w+ )?"?(?P<url>[a-z]+://[^\s"]+)"?: )?(?P<error>.+)$')
_WEBHOOK_DENIED = re.compile(r'admission webhook "(?P<name>[^"]+)" denied the request: (?P<reason>.+)$')


def _pairs(text: str) -> Dict[str, str]:
    return dict(p.split("=", 1) for p in text.split(",") if "=" in p)


def _top_level(text: str) -> List[str]:
    """Split "a (x, y), b (z)" at the commas outside parentheses."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return [x for x in out if x]


def create_failed(message: str, namespace: str, webhooks: Optional[Webhooks] = None) -> Optional[Cause]:
    """What refused a controller's create (a FailedCreate event's message), and the fix; ``webhooks``: the
    webhook configurations, to name the one that holds a failing webhook and its endpoint."""
    m = _QUOTA.search(message)
    if m:
        req, used, hard = _pairs(m["req"]), _pairs(m["used"]), _pairs(m["hard"])
        parts = []
        for r in req:
            need = (quantity(req[r]) or 0) + (quantity(used.get(r, "0")) or 0)
            parts.append(f"{r}: used {used.get(r, '0')} of hard {hard.get(r, '?')}, the pod asks {req[r]} more "
                         f"(needs {_show(need)})")
        return Cause(f"ResourceQuota {namespace}/{m['name']} is exhausted: {'; '.join(parts)}",
                     f"raise ResourceQuota {m['name']}'s hard limit (kubectl edit resourcequota -n {namespace} "
                     f"{m['name']}) or free what counts against it", "quota")
    m = _QUOTA_UNSET.search(message)
    if m:
        unset = [w.strip() for w in m["what"].split(";") if w.strip()]
        resources = [w.split(" for:")[0] for w in unset]
        return Cause(f"ResourceQuota {namespace}/{m['name']} tracks {', '.join(resources)}, so every container must "
                     f"set them, and the pod does not ({'; '.join(unset)})",
                     f"set {' and '.join(r.replace('limits.', 'resources.limits.').replace('requests.', 'resources.requests.') for r in resources)} "
                     f"on those containers in the component's podTemplate, or give namespace {namespace} a LimitRange "
                     "with defaults for them", "quota-unset")
    said = [_limit_range_says(v) for v in _LIMIT_RANGE.finditer(message)]
    if said:
        return Cause(f"a LimitRange of namespace {namespace} refuses the pod: {'; '.join(w for w, _ in said)}",
                     f"set {', '.join(dict.fromkeys(f for _, f in said))} in the component's podTemplate resources, "
                     f"or change the LimitRange (kubectl get limitrange -n {namespace} -o yaml)", "limit-range")
    m = _RUNTIME_CLASS.search(message)
    if m:
        return Cause(f"RuntimeClass {m['name']} does not exist (the pods set runtimeClassName: {m['name']})",
                     f"install what provides RuntimeClass {m['name']} (for nvidia: the NVIDIA GPU Operator or container "
                     f"toolkit), create it (kubectl get runtimeclass lists those there are), or remove runtimeClassName "
                     "from the component's podTemplate", "runtime-class")
    m = _PSA.search(message)
    if m:
        level = m["level"].split(":")[0]
        violations = _top_level(m["violations"])
        return Cause(f"namespace {namespace} enforces Pod Security level {m['level']} and the pod violates it: "
                     f"{'; '.join(violations)}",
                     f"set what each violation names in the component's podTemplate securityContext, or enforce a "
                     f"level the workload meets (kubectl label namespace {namespace} "
                     f"pod-security.kubernetes.io/enforce={'baseline' if level == 'restricted' else 'privileged'} "
                     "--overwrite)", "pod-security")
    m = _PRIORITY.search(message)
    if m:
        return Cause(f"PriorityClass {m['name']} does not exist",
                     f"create PriorityClass {m['name']} (kubectl create priorityclass {m['name']} --value=N) or fix "
                     "priorityClassName in the component's podTemplate", "priorityclass")
    m = _SA.search(message)
    if m:
        return Cause(f"ServiceAccount {m['ns']}/{m['name']} does not exist",
                     f"create it (kubectl create serviceaccount -n {m['ns']} {m['name']}) or fix serviceAccountName; "
                     "the Dynamo operator creates <dgd>-k8s-service-discovery itself: if that one is missing, check the "
                     "operator", "serviceaccount")
    m = _WEBHOOK_CALL.search(message)
    if m:
        url = (m["url"] or "").split("?")[0]
        hook = webhook(m["name"], webhooks)
        if hook is None:
            return Cause(f"admission webhook {m['name']}{' at ' + url if url else ''} does not answer "
                         f"({m['error'].strip()}), and its failurePolicy refuses the object meanwhile",
                         f"bring back the server{' at ' + url if url else ''}, or delete webhook {m['name']} from "
                         f"the webhook configuration that declares it ({FIND_WEBHOOK})", "webhook-down")
        if hook.controller:  # the controller's own process serves it: it is down or hung, not the webhook alone
            return Cause(f"admission webhook {m['name']} of {hook.holder} (failurePolicy {hook.policy}) is served by "
                         f"{hook.controller}'s own process at {hook.endpoint}{hook.state}; it does not answer "
                         f"({m['error'].strip()}): {hook.controller} is down or hung, and failurePolicy {hook.policy} "
                         "refuses the object meanwhile",
                         f"bring {hook.controller} back (its manager process serves {hook.holder}): restart it and "
                         f"read its log; do not delete {hook.holder}, it comes back with the controller",
                         "controller-down")
        return Cause(f"admission webhook {m['name']} of {hook.holder} (failurePolicy {hook.policy}) calls "
                     f"{hook.endpoint}{hook.state}; it does not answer ({m['error'].strip()}), and failurePolicy "
                     f"{hook.policy} refuses the object meanwhile",
                     f"bring back the server behind {hook.endpoint}{hook.look}: usually the controller that "
                     f"installed {hook.holder}, restarted; only if that server is gone for good (its controller "
                     f"uninstalled), delete {hook.holder} (kubectl delete {hook.kind.lower()} {hook.config}) or set "
                     f"webhook {m['name']}'s failurePolicy to Ignore", "webhook-down")
    m = _WEBHOOK_DENIED.search(message)
    if m:
        hook = webhook(m["name"], webhooks)
        return Cause(f"admission webhook {m['name']}{' of ' + hook.holder if hook else ''} denies it: "
                     f"{m['reason'].strip()}",
                     f"change the object as webhook {m['name']} asks, or change "
                     f"{hook.holder + ' (its rules and selectors)' if hook else 'that webhook policy'}",
                     "webhook-denied")
    return None


# -- admission webhooks ------------------------------------------------------------------------------
FIND_WEBHOOK = ("kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations "
                "-o custom-columns=NAME:.metadata.name,WEBHOOKS:.webhooks[*].name")


@dataclass(frozen=True)
class Webhooks:
    """The webhook configurations read (each with its ``kind``; None when they could not be read) and what
    backs the Services they call ((namespace, name) -> {"service", "endpoints", "ready"}, or "unknown")."""

    configs: Optional[List[dict]]
    backends: Dict[tuple, object]


@dataclass(frozen=True)
class Hook:
    """One webhook as its configuration declares it (admissionregistration.k8s.io/v1 ``clientConfig``:
    a Service reference or a URL; ``failurePolicy`` defaults to Fail)."""

    kind: str
    config: str
    policy: str
    endpoint: str
    state: str = ""  # what backs a Service endpoint, as ", which ..."
    look: str = ""  # where to look, as " (kubectl ...)"

    @property
    def holder(self) -> str:
        return f"{self.kind} {self.config}"

    @property
    def controller(self) -> Optional[str]:
        """The controller whose own process serves this webhook (model/platform.CONTROLLER_WEBHOOKS)."""
        from kubectl_dynamo.model.platform import webhook_controller

        return webhook_controller(self.config, self.endpoint)


def webhook(name: str, webhooks: Optional[Webhooks]) -> Optional[Hook]:
    """The configuration that holds webhook ``name`` and its endpoint; None when the configurations were not
    read or none holds it now."""
    if webhooks is None or webhooks.configs is None:
        return None
    for c in webhooks.configs:
        w = next((w for w in c.get("webhooks") or [] if w.get("name") == name), None)
        if w is None:
            continue
        cc = w.get("clientConfig") or {}
        svc = cc.get("service")
        policy = w.get("failurePolicy") or "Fail"
        kind, config = c.get("kind") or "WebhookConfiguration", _meta(c).get("name", "?")
        if not svc:
            return Hook(kind, config, policy, f"URL {cc.get('url', '?')}")
        ns, sname = svc.get("namespace"), svc.get("name")
        endpoint = f"Service {ns}/{sname} (port {svc.get('port', 443)}, path {svc.get('path') or '/'})"
        backend = webhooks.backends.get((ns, sname))
        if not isinstance(backend, dict):
            state = ", whose endpoints could not be read" if backend else ""
        elif not backend.get("service"):
            state = ", which does not exist"
        elif not backend.get("ready"):
            state = (f", which has no ready endpoints ({backend.get('endpoints')} endpoints, none ready)"
                     if backend.get("endpoints") else ", which has no endpoints (no pod backs it)")
        else:
            state = f", which has {backend.get('ready')} ready endpoints"
        look = f" (kubectl get pods,endpointslices -n {ns}; the Service's selector must match running pods)"
        return Hook(kind, config, policy, endpoint, state, look)
    return None


# -- the gang schedulers' queues -----------------------------------------------------------------
def volcano_queue(podgroup: dict, queues: Optional[List[dict]], pods: Iterable[dict] = ()) -> Optional[Cause]:
    """Whether the Volcano queue of a held PodGroup is what holds it: missing, not Open, or without the room
    its gang needs under the queue's ``spec.capability`` (volcano-sh/apis@v1.10.0 pkg/apis/scheduling/v1beta1
    types.go: Queue spec.capability, status.allocated, status.state; PodGroup spec.queue, spec.minResources,
    which LWS fills with the templates' requests: lws@v0.9.0 pkg/utils CalculatePGMinResources — empty when
    they set only limits, as the Dynamo operator renders them; then the group's ``pods`` specs say it)."""
    if queues is None:
        return None
    spec = podgroup.get("spec") or {}
    name = spec.get("queue") or "default"
    queue = next((q for q in queues if _meta(q).get("name") == name), None)
    if queue is None:
        return Cause(f"Volcano queue {name} does not exist",
                     f"create Volcano queue {name} (kind Queue, scheduling.volcano.sh/v1beta1) or name an existing "
                     "one (the LeaderWorkerSet's scheduling.volcano.sh/queue-name annotation)", "queue-missing")
    state = (queue.get("status") or {}).get("state")
    if state and state != "Open":
        return Cause(f"Volcano queue {name} is {state}", f"open queue {name} again (its spec.state / vcctl queue "
                                                         "operate --action open)", "queue-closed")
    capability = (queue.get("spec") or {}).get("capability") or {}
    allocated = (queue.get("status") or {}).get("allocated") or {}
    need = spec.get("minResources") or {}
    specs = [p.get("spec") or {} for p in pods]
    short = []
    for r, cap in sorted(capability.items()):
        want = quantity(need.get(r, need.get(f"requests.{r}"))) or sum(pod_request(x, r) or 0 for x in specs)
        if not want:
            continue
        room = (quantity(cap) or 0) - (quantity(allocated.get(r, "0")) or 0)
        if want > room:
            short.append(f"{r}: the gang needs {_show(want)}, the queue's capability is {cap} with "
                         f"{allocated.get(r, '0')} allocated")
    if not short:
        return None
    return Cause(f"Volcano queue {name} has no room for the gang: {'; '.join(short)}",
                 f"raise queue {name}'s spec.capability (kubectl edit queues.scheduling.volcano.sh {name}), free what "
                 "runs in it, or use another queue", "queue-full")
