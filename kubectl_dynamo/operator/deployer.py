"""The MultinodeDeployer contract shared by the Grove and LWS providers (ai-dynamo/dynamo@2a6da14c deploy/operator/internal/dynamo/graph.go).

A deployer answers four questions for the backends: the leader's host name, the node rank of a
worker (and whether that rank needs a shell to evaluate), whether the leader must wait for worker
DNS, and the host list for ``mpirun -H``.

1.6 portable topology (documented for 1.6 only, not in the 1.5-era source): for DGDs created by operator >= 1.6.0 the operator also
injects ``DYNAMO_RANK`` / ``DYNAMO_LEADER_ADDRESS`` into the main container and its *own* vLLM-mp
and SGLang flags use the aliases. ``portable`` switches that on; the provider-specific answers
stay available for the other paths (Ray, data-parallel, TRT-LLM, init containers), which the docs
do not say were changed.
"""

from __future__ import annotations

from typing import List, Tuple

DYNAMO_RANK = "DYNAMO_RANK"
DYNAMO_LEADER_ADDRESS = "DYNAMO_LEADER_ADDRESS"
RANK_REF = f"$({DYNAMO_RANK})"  # what an authored 1.6 role template writes
LEADER_REF = f"$({DYNAMO_LEADER_ADDRESS})"


class MultinodeDeployer:
    # Plain classes, not dataclasses: creating the three dataclasses cost every explain -f ~2 ms.
    name = "abstract"

    def __init__(self, portable: bool = False) -> None:
        self.portable = portable  # 1.6 DYNAMO_RANK / DYNAMO_LEADER_ADDRESS aliases in effect

    # --- provider contract ------------------------------------------------------------------
    def leader_hostname(self, service: str) -> str:
        raise NotImplementedError

    def node_rank(self) -> Tuple[str, bool]:
        """(rank expression for a worker, needs a shell to evaluate it)."""
        raise NotImplementedError

    def needs_dns_wait(self) -> bool:
        raise NotImplementedError

    def host_names(self, service: str, nodes: int) -> List[str]:
        raise NotImplementedError

    # --- 1.6 portable topology ---------------------------------------------------------------
    def rank_source(self) -> str:
        """Value of DYNAMO_RANK. [UNVERIFIED] the exact value form (docs name only the source variable)."""
        raise NotImplementedError

    def topology_env(self, service: str) -> List[dict]:
        """DYNAMO_LEADER_ADDRESS / DYNAMO_RANK for the main container (sorted by name).

        [UNVERIFIED] value forms and placement: modelled as plain ``$(VAR)`` references merged into
        the sorted operator env, operator values replacing same-named user values (the docs say the
        operator owns these names).
        """
        return [
            {"name": DYNAMO_LEADER_ADDRESS, "value": self.leader_hostname(service)},
            {"name": DYNAMO_RANK, "value": self.rank_source()},
        ]

    def engine_leader(self, service: str) -> str:
        """Leader address used in the operator's own vLLM-mp / SGLang flags."""
        return f"$({DYNAMO_LEADER_ADDRESS})" if self.portable else self.leader_hostname(service)

    def engine_rank(self) -> Tuple[str, bool]:
        """Worker rank used in the operator's own vLLM-mp / SGLang flags (aliases need no shell)."""
        return (f"$({DYNAMO_RANK})", False) if self.portable else self.node_rank()

    def engine_leader_rank(self) -> str:
        """The leader's own rank in those flags: ``0``, or with the aliases ``$(DYNAMO_RANK)`` like
        every pod (tu-kim/dynamo@3f3d3dfa internal/dynamo/backend_vllm.go and backend_sglang.go,
        ``useTopologyAliases``)."""
        return f"$({DYNAMO_RANK})" if self.portable else "0"
