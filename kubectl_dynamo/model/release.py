"""A Helm release's workloads as ``helm upgrade --install --wait`` waits for them: which they are, how many
of their pods are ready of how many, and whether Helm would call them ready.

Helm's rules are helm@v3.18.6 pkg/kube/ready.go ``ReadyChecker``: a Deployment when its controller has
observed its generation and ``readyReplicas >= replicas - maxUnavailable`` (the rolling update's
maxUnavailable, rounded down; 0 for Recreate); a StatefulSet when observed, its updated replicas cover
``replicas - partition`` and ``readyReplicas == replicas`` (only RollingUpdate is checked); a DaemonSet when
observed, every desired pod is updated and ``numberReady >= desired - maxUnavailable`` (rounded up; only
RollingUpdate is checked); a Job (what hooks run, and ``--wait-for-jobs``) when ``succeeded`` reaches
``completions``. Which objects are the release's: model/labels.py ``HELM_RELEASE_*``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional

from kubectl_dynamo.model.labels import HELM_RELEASE_NAME, HELM_RELEASE_NAMESPACE, INSTANCE_LABEL

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job")


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def of_release(obj: dict, release: str, namespace: str) -> bool:
    """The object belongs to release ``release`` of ``namespace``: Helm's annotations say so, or (hooks,
    which Helm does not annotate) the chart's ``app.kubernetes.io/instance`` label does."""
    meta = _meta(obj)
    ann = meta.get("annotations") or {}
    if ann.get(HELM_RELEASE_NAME):
        return ann[HELM_RELEASE_NAME] == release and ann.get(HELM_RELEASE_NAMESPACE, namespace) == namespace
    return (meta.get("labels") or {}).get(INSTANCE_LABEL) == release and meta.get("namespace") == namespace


def selects(selector: Optional[dict], labels: dict) -> bool:
    """A workload's ``spec.selector`` (matchLabels and matchExpressions, k8s.io/apimachinery
    pkg/apis/meta/v1 LabelSelector) matches ``labels``; an empty or missing selector matches nothing."""
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return False
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e.get("key"), e.get("operator"), e.get("values") or []
        ok = {"In": key in labels and labels.get(key) in values,
              "NotIn": key not in labels or labels.get(key) not in values,
              "Exists": key in labels, "DoesNotExist": key not in labels}.get(op, False)
        if not ok:
            return False
    return True


def _scaled(value, total: int, round_up: bool) -> int:
    """An int-or-percent of ``total`` (k8s.io/apimachinery intstr.GetScaledValueFromIntOrPercent)."""
    if isinstance(value, int):
        return value
    text = str(value or "0").strip()
    if text.endswith("%") and text[:-1].isdigit():
        exact = int(text[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    return int(text) if text.isdigit() else 0


@dataclass
class Workload:
    """One workload of the release and where it stands."""

    kind: str
    namespace: str
    name: str
    ready: int  # pods ready (a Job: pods that succeeded)
    desired: int
    done: bool  # what Helm's ReadyChecker would say
    raw: dict

    def ref(self) -> Dict[str, str]:
        return {"kind": self.kind, "namespace": self.namespace, "name": self.name}

    def label(self) -> str:
        """As kubectl names it: deployment/lws-controller-manager."""
        return f"{self.kind.lower()}/{self.name}"


def assess(kind: str, obj: dict) -> Workload:
    """Helm's readiness of one workload (see the module docstring)."""
    meta, spec, status = _meta(obj), obj.get("spec") or {}, obj.get("status") or {}
    observed = status.get("observedGeneration") == meta.get("generation") or meta.get("generation") is None
    strategy = spec.get("updateStrategy") or spec.get("strategy") or {}
    rolling = strategy.get("type", "RollingUpdate") == "RollingUpdate"
    if kind == "Deployment":
        want = int(spec.get("replicas", 1))
        ready = int(status.get("readyReplicas") or 0)
        unavailable = _scaled((strategy.get("rollingUpdate") or {}).get("maxUnavailable", "25%"), want, False) \
            if rolling else 0
        done = observed and ready >= want - unavailable
    elif kind == "StatefulSet":
        want = int(spec.get("replicas", 1))
        ready = int(status.get("readyReplicas") or 0)
        partition = int(((strategy.get("rollingUpdate") or {}).get("partition")) or 0)
        done = observed and (not rolling or (int(status.get("updatedReplicas") or 0) >= want - partition
                                             and ready == want))
    elif kind == "DaemonSet":
        want = int(status.get("desiredNumberScheduled") or 0)
        ready = int(status.get("numberReady") or 0)
        unavailable = _scaled((strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1), want, True)
        done = observed and (not rolling or (int(status.get("updatedNumberScheduled") or 0) == want
                                             and ready >= want - unavailable))
    elif kind == "Job":
        completions = spec.get("completions")
        want = int(completions) if completions is not None else 1
        ready = int(status.get("succeeded") or 0)
        done = ready >= want
    else:
        raise ValueError(kind)
    return Workload(kind, meta.get("namespace", ""), meta.get("name", ""), ready, want, done, obj)


def workloads(objects: Dict[str, List[dict]], release: str, namespace: str) -> List[Workload]:
    """The release's workloads among ``objects`` (kind -> items), in kind then name order."""
    out = []
    for kind in WORKLOAD_KINDS:
        for obj in sorted(objects.get(kind) or [], key=lambda o: _meta(o).get("name", "")):
            if of_release(obj, release, namespace) and not _meta(obj).get("deletionTimestamp"):
                out.append(assess(kind, obj))
    return out


def pods_of(workload: Workload, pods: List[dict]) -> List[dict]:
    """The workload's pods: its namespace's pods its selector matches (as Helm and kubectl find them)."""
    selector = (workload.raw.get("spec") or {}).get("selector")
    return [p for p in pods if _meta(p).get("namespace") == workload.namespace
            and selects(selector, _meta(p).get("labels") or {})]


def summary(items: List[Workload]) -> str:
    """One line of what is waited for: every workload as ready/desired, the ready ones last."""
    if not items:
        return "no workloads of the release yet"
    shown = sorted(items, key=lambda w: w.done)
    return ", ".join(f"{w.label()} {w.ready}/{w.desired} {'succeeded' if w.kind == 'Job' else 'ready'}"
                     for w in shown)
