"""Grove provider: leader/worker addressing, clique and PodCliqueSet names, KAI/Volcano wiring.

ai-dynamo/dynamo@2a6da14c deploy/operator/internal/dynamo/grove.go, graph.go. A multinode component becomes a PodCliqueScalingGroup named
``lower(<comp>)`` with cliques ``<comp>-ldr`` (1 pod) and ``<comp>-wkr`` (nodeCount-1 pods); Grove
injects ``GROVE_PCSG_NAME``, ``GROVE_PCSG_INDEX``, ``GROVE_PCLQ_POD_INDEX``,
``GROVE_PCSG_POD_INDEX`` and ``GROVE_HEADLESS_SERVICE`` into every container.
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Tuple

from kubectl_dynamo.operator import gms
from kubectl_dynamo.operator.components import node_count
from kubectl_dynamo.operator.deployer import MultinodeDeployer

LEADER_SUFFIX = "ldr"
WORKER_SUFFIX = "wkr"
MAX_COMBINED_NAME_LENGTH = 45  # PCS + PCSG + clique must fit Grove's resource-name budget
MIN_PCS_NAME_LENGTH = 8
KAI_SCHEDULER = "kai-scheduler"


def _pcsg_host(service: str, clique: str, index: str) -> str:
    return f"$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-{service.lower()}-{clique}-{index}.$(GROVE_HEADLESS_SERVICE)"


class GroveDeployer(MultinodeDeployer):
    name = "grove"

    def __init__(self, portable: bool = False, gms_rank: Optional[int] = None) -> None:
        super().__init__(portable)
        # Inter-pod GMS engines: one clique per rank (``<comp>-ldr``, ``<comp>-wkr-<rank>``) whose
        # pods are the primary and its shadows, so the rank is static and the peer is pod-indexed.
        self.gms_rank = gms_rank

    def leader_hostname(self, service: str) -> str:
        return _pcsg_host(service, LEADER_SUFFIX, "$(GROVE_PCLQ_POD_INDEX)" if self.gms_rank is not None else "0")

    def node_rank(self) -> Tuple[str, bool]:
        if self.gms_rank is not None:
            return str(self.gms_rank), False
        # Workers are clique pods 0..N-2; the shell turns that into ranks 1..N-1.
        return "$((GROVE_PCLQ_POD_INDEX + 1))", True

    def needs_dns_wait(self) -> bool:
        return False

    def host_names(self, service: str, nodes: int) -> List[str]:
        if self.gms_rank is not None:
            return [self.leader_hostname(service)] + [
                _pcsg_host(service, f"{WORKER_SUFFIX}-{rank}", "$(GROVE_PCLQ_POD_INDEX)") for rank in range(1, nodes)]
        return [self.leader_hostname(service)] + [_pcsg_host(service, WORKER_SUFFIX, str(i)) for i in range(nodes - 1)]

    def rank_source(self) -> str:
        """``GetPodRank`` (tu-kim/dynamo@3f3d3dfa internal/dynamo/grove.go): the PCSG-wide pod index
        (ldr=0, workers 1..N-1); an inter-pod GMS engine clique's static rank."""
        if self.gms_rank is not None:
            return str(self.gms_rank)
        return "$(GROVE_PCSG_POD_INDEX)"


def clique_names(component: str, multinode: bool) -> List[str]:
    lower = component.lower()
    return [f"{lower}-{LEADER_SUFFIX}", f"{lower}-{WORKER_SUFFIX}"] if multinode else [lower]


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def uses_scaling_group(component: dict) -> bool:
    """``UsesPCSG`` (api/v1beta1 dynamocomponentdeployment_types.go): Grove renders the component as a
    PodCliqueScalingGroup when it is multinode, uses inter-pod GMS or forces one
    (``experimental.grove.forceScalingGroup``). Malformed input (which the API server refuses) is read
    as absent, never raised on: the admission webhooks read the user's document."""
    experimental = component.get("experimental")
    grove = experimental.get("grove") if isinstance(experimental, dict) else None
    forced = isinstance(grove, dict) and grove.get("forceScalingGroup") is True
    return node_count(component) > 1 or gms.is_inter_pod(component) or forced


def role_clique_names(component: dict) -> List[str]:
    """graph.go ``expandRolesForComponent``: the PodClique names of a component's roles (case kept)."""
    name, nodes = str(component.get("name", "")), node_count(component)
    inter = gms.is_inter_pod(component)
    if nodes > 1 and inter:
        return ([f"{name}-gms-{r}" for r in range(nodes)] + [f"{name}-{LEADER_SUFFIX}"]
                + [f"{name}-{WORKER_SUFFIX}-{r}" for r in range(1, nodes)])
    if nodes > 1:
        return [f"{name}-{LEADER_SUFFIX}", f"{name}-{WORKER_SUFFIX}"]
    if inter:
        return [f"{name}-gms-0", name]
    return [name]


def longest_clique(component: dict) -> str:
    """graph.go ``LongestPodCliqueNameForDGDComponent``: the component's longest PodClique name, lower-case."""
    lower = str(component.get("name", "")).lower()
    if not uses_scaling_group(component):
        return lower
    return max([lower] + [r.lower() for r in role_clique_names(component)], key=len)


def pcs_name_for_dgd(dgd_name: str, components: Iterable[dict]) -> str:
    """graph.go ``PCSNameForDGD`` (ai-dynamo/dynamo@2a6da14c): the DGD name unless it, a scaling group and
    its longest PodClique exceed Grove's 45-character budget; then ``name[:budget-5] + "-" + 4 hex digits
    of fnv32a(name)`` (budget floor 8). A scaling-group component costs len(component) + len(its longest
    clique), a plain one len(component). The 1.6 form (tu-kim/dynamo@3f3d3dfa graph.go PCSNameForDGD,
    grove.go ComponentNameBudget: the first and last role names bound the cliques) gives the same budget;
    it also skips components delegated to another provider, which this simulation does not model."""
    worst = 0
    for c in components:
        lower = str(c.get("name", "")).lower()
        worst = max(worst, len(lower) + len(longest_clique(c)) if uses_scaling_group(c) else len(lower))
    budget = max(MAX_COMBINED_NAME_LENGTH - worst, MIN_PCS_NAME_LENGTH)
    if len(dgd_name) <= budget:
        return dgd_name
    return f"{dgd_name[:budget - 5]}-{fnv32a(dgd_name.encode()) & 0xFFFF:04x}"


def apply_scheduler(pod_spec: dict, scheduler: Optional[str]) -> None:
    """Clique pods get ``schedulerName`` (kai-scheduler / volcano) unless the user chose one.

    The KAI queue goes on the clique as label ``kai.scheduler/queue``; it is not part of the pod spec.
    """
    if scheduler in (KAI_SCHEDULER, "volcano") and not pod_spec.get("schedulerName"):
        pod_spec["schedulerName"] = scheduler
