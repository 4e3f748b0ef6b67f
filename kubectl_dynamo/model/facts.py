"""Gather the raw facts ``detect`` needs: one request per resource kind, never one per object."""

from __future__ import annotations

from typing import Callable, Optional

import yaml

from kubectl_dynamo.cluster.client import Cluster, path_for
from kubectl_dynamo.errors import ApiError, ClusterUnreachable, DynamoError, Forbidden, NotFound, Unauthorized
from kubectl_dynamo.model.platform import Facts, find_dynamo_operator, operator_config_map


def failed_read(what: str, e: DynamoError) -> ClusterUnreachable:
    """A read the answer depends on failed for another reason than 403 or 404: exit 3 naming what."""
    return ClusterUnreachable(f"cannot read {what}: {e.message}", detail=e.detail)


def _try(facts: Facts, what: str, fn: Callable):
    """Run one lookup; a denied lookup (403), or one of what the cluster does not have (404, or content
    that is not what the operator reads), makes that field unknown instead of failing. A failed read
    (throttled, 5xx, a broken connection, any other API error) ends the command: exit 3."""
    try:
        return fn()
    except Unauthorized:
        raise
    except Forbidden as e:
        facts.unknown[what] = f"forbidden ({e.message})"
    except NotFound as e:
        facts.unknown[what] = f"not found ({e.message})"
    except (ClusterUnreachable, ApiError) as e:
        raise failed_read(what, e) from e
    except DynamoError as e:  # read_operator_config: a ConfigMap that is not what the operator reads
        facts.unknown[what] = e.message
    return None


def gather(cluster: Cluster, *, nodes: bool = True) -> Facts:
    facts = Facts()
    facts.server_version = cluster.server_version()  # raises Unreachable/Unauthorized: exit 3
    facts.groups = _try(facts, "API groups", cluster.groups)
    groups = facts.groups or {}
    facts.dgd_crd_served = "nvidia.com" in groups
    facts.deployments = _try(facts, "controller deployments", lambda: cluster.list(path_for("apps", "v1", "deployments")))
    if nodes:
        facts.nodes = _try(facts, "nodes", lambda: cluster.list(path_for("", "v1", "nodes")))
    if "scheduling.run.ai" in groups:
        facts.kai_queues = _try(facts, "KAI queues",
                                lambda: cluster.list(path_for("scheduling.run.ai", "v2", "queues")))
    if "scheduling.volcano.sh" in groups:
        facts.volcano_queues = _try(facts, "Volcano queues",
                                    lambda: cluster.list(path_for("scheduling.volcano.sh", "v1beta1", "queues")))
    op = find_dynamo_operator(facts.deployments)
    if op is not None:
        facts.operator_config = _try(facts, "dynamoOperator.config", lambda: read_operator_config(cluster, op))
    return facts


def read_operator_config(cluster: Cluster, operator_deployment: dict) -> Optional[dict]:
    name = operator_config_map(operator_deployment)
    if not name:
        raise NotFound("the operator Deployment mounts no config ConfigMap")
    ns = operator_deployment["metadata"]["namespace"]
    cm = cluster.get(path_for("", "v1", "configmaps", ns, name))
    text = (cm.get("data") or {}).get("config.yaml")
    if text is None:
        raise NotFound(f"ConfigMap {ns}/{name} has no config.yaml")
    try:
        return yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise DynamoError(f"ConfigMap {ns}/{name} config.yaml is not valid YAML: {e}") from e
