"""``placement``: every GPU node, who holds its GPUs (DGD / component / group / rank), what is free, and
which pending gang waits for what (``model/placement.py``). Two LISTs: nodes and unfinished pods."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_dynamo.result import Result

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import PlacementData


def run_placement(cluster) -> Result[PlacementData]:
    from kubectl_dynamo.cluster.client import path_for
    from kubectl_dynamo.model.placement import placement
    from kubectl_dynamo.output.tables import format_placement

    nodes = cluster.list(path_for("", "v1", "nodes"))
    pods = cluster.list(path_for("", "v1", "pods"), field_selector="status.phase!=Succeeded,status.phase!=Failed")
    data = placement(nodes, pods)
    return Result(data, lambda d, wide, color, width: format_placement(d, wide, width), names=[f"node/{n['name']}" for n in data["nodes"]])
