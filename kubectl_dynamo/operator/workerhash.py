"""The worker hash: suffix of worker DCD / LeaderWorkerSet names and value of DYN_NAMESPACE_WORKER_SUFFIX.

ai-dynamo/dynamo@2a6da14c deploy/operator/internal/dynamo/hash.go, worker-hash.md. The operator
computes it as the first 8 hex digits of SHA-256 over the Go JSON encoding of every worker DCD it
generates (labels, annotations, resolved runtime version, spec minus replicas/minAvailable/
scalingAdapter). That encoding follows Go struct field order and Kubernetes quantity
canonicalisation of the whole pod template, so it is not reproduced offline: a new DGD renders
``PLACEHOLDER``. A live DGD carries the value the operator stored, and that value is used.
"""

from __future__ import annotations

from typing import Mapping, Optional

from . import api

PLACEHOLDER = "<worker-hash>"
ANN_V1 = "nvidia.com/current-worker-hash"


def stored(annotations: Optional[Mapping[str, str]]) -> Optional[str]:
    """The active generation suffix the operator stored on a DGD (v1 while a legacy generation is
    still active, else v2), or None for a DGD the operator has not reconciled yet."""
    annotations = annotations or {}
    return annotations.get(ANN_V1) or annotations.get(api.ANN_WORKER_HASH_V2) or None


def for_dgd(annotations: Optional[Mapping[str, str]]) -> str:
    """What explain renders: the stored suffix, else the placeholder."""
    return stored(annotations) or PLACEHOLDER


def is_placeholder(value: Optional[str]) -> bool:
    return value == PLACEHOLDER
