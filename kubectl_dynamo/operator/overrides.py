"""Grove provider overrides (``providerOverride``): the defaulting webhook persists the target
(ai-dynamo/dynamo@2a6da14c deploy/operator/internal/provideroverride/registry.go ``DefaultTarget``,
internal/webhook/defaulting/dynamographdeployment_handler.go). The target is part of the worker
DCDs the worker hash covers. At that commit no controller applies an override's value to the
PodCliqueSet (``provideroverride``'s apply functions have no caller outside tests), so rendering
does not change; the 1.6 oracle maps a role's override onto the multinode leader / worker scope.

Only the Grove provider resolves targets; off Grove the webhook leaves them empty.
"""

from __future__ import annotations

from typing import Iterator, Optional, Tuple

from kubectl_dynamo.operator import gms
from kubectl_dynamo.operator.components import node_count
from kubectl_dynamo.operator.grove import uses_scaling_group

GROVE_API_VERSION = "grove.io/v1alpha1"
PCS, CLIQUE, SCALING_GROUP = "PodCliqueSet", "PodCliqueTemplateSpec", "PodCliqueScalingGroupConfig"


def expected_target(scope: str, component: Optional[dict]) -> Optional[str]:
    """``ExpectedTarget`` for the Grove provider (None where the context has none)."""
    if scope == "root":
        return PCS
    if component is None:
        return None
    if scope == "component":
        return SCALING_GROUP if uses_scaling_group(component) else CLIQUE
    if node_count(component) <= 1 or gms.is_inter_pod(component):
        return None
    return CLIQUE


def _scoped(spec: dict, v16: bool) -> Iterator[Tuple[dict, str, Optional[dict]]]:
    """(override, scope, component) for every override the webhook defaults: 1.5 reads the
    multinode leader / worker ones, 1.6 the roles' instead (tu-kim/dynamo@3f3d3dfa
    internal/webhook/defaulting/dynamographdeployment_handler.go)."""
    if isinstance(spec.get("providerOverride"), dict):
        yield spec["providerOverride"], "root", None
    for c in spec.get("components") or []:
        if not isinstance(c, dict):
            continue
        if isinstance(c.get("providerOverride"), dict):
            yield c["providerOverride"], "component", c
        for role in ("leader", "worker") if not v16 else ():
            o = ((c.get("multinode") or {}).get(role) or {}).get("providerOverride")
            if isinstance(o, dict):
                yield o, role, c
        for r in c.get("roles") or [] if v16 else ():
            if isinstance(r, dict) and isinstance(r.get("providerOverride"), dict) and r.get("name") in ("leader", "worker"):
                yield r["providerOverride"], r["name"], c


def default_targets(spec: dict, operator_version: str) -> None:
    """``DefaultTarget`` on a Grove DGD (mutates ``spec``): an empty target becomes the expected one."""
    from kubectl_dynamo.operator import api, versions

    for override, scope, component in _scoped(spec, versions.at_least(operator_version, api.ROLE_TEMPLATES_SINCE)):
        if override.get("target") or override.get("apiVersion") != GROVE_API_VERSION:
            continue
        target = expected_target(scope, component)
        if target:
            override["target"] = target
