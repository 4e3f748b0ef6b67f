"""``detect``: what is installed, its health and queues, and what the operator would select."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_dynamo.model.platform import API_GROUPS, detect
from kubectl_dynamo.result import Result

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import DetectData


# -- the commands ------------------------------------------------------------------------------
def detect_report(cluster) -> DetectData:
    """``detect``'s contract (README): the facts, the selection and the cluster-level problems."""
    from kubectl_dynamo.checks import cluster as cluster_checks
    from kubectl_dynamo.checks.registry import run
    from kubectl_dynamo.model.facts import gather

    facts = gather(cluster)
    report = detect(facts)
    report["problems"] = [f.as_json() for f in run("cluster", cluster_checks.ClusterView(facts, report))]
    return report


def run_detect(cluster) -> Result[DetectData]:
    from kubectl_dynamo.output.tables import format_detect

    report = detect_report(cluster)
    # -o name: the orchestrator APIs that are served (the answer to "what is installed").
    names = [f"apigroup/{API_GROUPS[k]}" for k, o in report["orchestrators"].items() if o["installed"]]
    return Result(report, format_detect, names=names)
