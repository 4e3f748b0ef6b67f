"""Grove provider: leader/worker addressing, clique and PodCliqueSet names, KAI/Volcano wiring.

ai-dynamo/dynamo@2a6da14c deploy/operator/internal/dynamo/grove.go, graph.go. A multinode component becomes a PodCliqueScalingGroup named
``lower(<comp>)`` with cliques ``<comp>-ldr`` (1 pod) and ``<comp>-wkr`` (nodeCount-1 pods); Grove
injects ``GROVE_PCSG_NAME``, ``GROVE_PCSG_INDEX``, ``GROVE_PCLQ_POD_INDEX``,
``GROVE_PCSG_POD_INDEX`` and ``GROVE_HEADLESS_SERVICE`` into every container.
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Tuple

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
        # The PCSG-wide pod index flattens cliqueNames order: ldr=0, workers 1..N-1. [UNVERIFIED] form.
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


def pcs_name_for_dgd(dgd_name: str, components: Iterable[Tuple[str, bool]]) -> str:
    """PodCliqueSet name for a DGD: the DGD name unless PCS+PCSG+longest clique exceeds 45 chars.

    ``components``: (component name, uses a scaling group) pairs. A scaling-group component costs
    len(pcsg) + len(longest clique) = len(c) + len(c) + 4; a plain one costs len(c).
    When too long: ``name[:budget-5] + "-" + 4 hex digits of fnv32a(name)`` (budget floor 8).
    """
    worst = 0
    for name, uses_pcsg in components:
        lower = name.lower()
        cost = len(lower) + len(f"{lower}-{LEADER_SUFFIX}") if uses_pcsg else len(lower)
        worst = max(worst, cost)
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
