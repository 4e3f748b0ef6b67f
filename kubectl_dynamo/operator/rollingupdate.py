"""How many replicas a single-node component may lose or add while it rolls.

ai-dynamo/dynamo@2a6da14c deploy/operator/internal/controller: the component's annotations
``nvidia.com/deployment-strategy`` (``Recreate`` or, for anything else, ``RollingUpdate``:
deployment_strategy.go ``deploymentStrategyFromAnnotations``),
``nvidia.com/deployment-rolling-update-max-surge`` and ``...-max-unavailable`` (25% each when
unset) set both the Deployment the DCD controller renders (dynamocomponentdeployment_controller.go
``generateDeployment``) and the DGD's own rolling update from one worker generation to the next
(dgd_worker_rollout_reconciler.go ``buildRollingUpdateContext``, ``resolveRollingUpdateParams``).
"""

from __future__ import annotations

import math
import re
from typing import Dict, Mapping, Tuple, Union

ANN_STRATEGY = "nvidia.com/deployment-strategy"
ANN_MAX_SURGE = "nvidia.com/deployment-rolling-update-max-surge"
ANN_MAX_UNAVAILABLE = "nvidia.com/deployment-rolling-update-max-unavailable"
RECREATE, ROLLING_UPDATE = "Recreate", "RollingUpdate"  # internal/common/schemas.go DeploymentStrategy
DEFAULT = "25%"

IntOrString = Union[int, str]
_INT = re.compile(r"[+-]?[0-9]+")  # what Go's strconv.Atoi accepts


def parse(text: str) -> IntOrString:
    """k8s.io/apimachinery intstr.Parse: a whole number is an int, anything else stays a string."""
    return int(text) if _INT.fullmatch(text) else text


def scaled(value: IntOrString, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent, 0 where it errs (a string that is not a whole percent):
    the operator discards that error."""
    if isinstance(value, int):
        return value
    if not value.endswith("%") or not _INT.fullmatch(value[:-1]):
        return 0
    share = int(value[:-1]) * total / 100
    return math.ceil(share) if round_up else math.floor(share)


def strategy(annotations: Mapping[str, str]) -> str:
    return RECREATE if annotations.get(ANN_STRATEGY) == RECREATE else ROLLING_UPDATE


def surge_and_unavailable(annotations: Mapping[str, str]) -> Tuple[IntOrString, IntOrString]:
    """``getDeploymentRollingUpdateMaxSurgeAndMaxUnavailable``: the annotations, parsed, else 25%."""
    return (parse(annotations.get(ANN_MAX_SURGE) or DEFAULT),
            parse(annotations.get(ANN_MAX_UNAVAILABLE) or DEFAULT))


def deployment_strategy(annotations: Mapping[str, str]) -> Dict:
    """``generateDeployment``'s spec.strategy from the DCD's rendered annotations (the strategy key is
    read from its resource annotations, which hold the same value)."""
    if strategy(annotations) == RECREATE:
        return {"type": RECREATE}
    surge, unavailable = surge_and_unavailable(annotations)
    return {"type": ROLLING_UPDATE, "rollingUpdate": {"maxUnavailable": unavailable, "maxSurge": surge}}


def generation_budget(annotations: Mapping[str, str], desired: int) -> Tuple[int, int]:
    """(maxSurge, maxUnavailable) in replicas of the DGD's rolling update of one worker component:
    Recreate lets the whole component go; else ``resolveRollingUpdateParams`` (surge rounded up,
    unavailable down, a surge of 1 when both come to 0 so the rollout can move)."""
    if strategy(annotations) == RECREATE:
        return 0, desired
    surge_value, unavailable_value = surge_and_unavailable(annotations)
    surge, unavailable = scaled(surge_value, desired, True), scaled(unavailable_value, desired, False)
    if surge == 0 and unavailable == 0:
        surge = 1
    return surge, unavailable
