"""``doctor --exec``: read-only commands in pods, one timeout each.

- Ray (vLLM ray mode): ``ray status`` on the leader must list nodeCount active nodes.
- MPI (TRT-LLM): sshd must accept connections on port 2222 in every worker.
"""

from __future__ import annotations

import re
from typing import List, Optional

from kubectl_dynamo.checks.registry import Finding
from kubectl_dynamo.cluster.execute import ExecFailed, exec_in_pod

SSHD_PROBE = ["python3", "-c", "import socket; socket.create_connection(('127.0.0.1', 2222), 3).close()"]


RAY_STATUS = ["ray", "status"]


# Ray lists the nodes that joined under "Healthy:" (older releases) or under "Active:" and "Idle:"
# (an idle node has joined but runs nothing yet), one " <count> <node type>" line per type
# (ray-project/ray python/ray/autoscaler/_private/util.py format_info_string).
_RAY_NODE_SECTION = re.compile(r"^(?:Active|Idle|Healthy):[ \t]*\n(.*?)(?=^\S|\Z)", re.S | re.M)


_RAY_NODE_LINE = re.compile(r"^\s+(\d+)\s+\S+\s*$", re.M)


def count_ray_nodes(status_text: str) -> int:
    """Nodes that joined the Ray head, from ``ray status`` output."""
    return sum(int(n) for section in _RAY_NODE_SECTION.findall(status_text) for n in _RAY_NODE_LINE.findall(section))


def run_exec_checks(cluster, views, *, timeout: float, only: Optional[list] = None) -> dict:
    findings: List[Finding] = []
    skipped: List[dict] = []
    want = lambda code: not only or code in only  # noqa: E731
    for view in views:
        for c in view.components:
            if not c.expected["multinode"]:
                continue
            for g in c.groups.values():
                if c.expected["mode"] == "ray" and want("ray-incomplete"):
                    findings += _ray(cluster, view, c, g, timeout, skipped)
                if c.expected["backend"] == "trtllm" and want("sshd-not-listening"):
                    findings += _sshd(cluster, c, g, timeout, skipped)
    return {"findings": findings, "skipped": skipped}


def _run(cluster, pod, command, timeout, skipped, check):
    from kubectl_dynamo.errors import DynamoError

    try:
        return exec_in_pod(cluster, pod.namespace, pod.name, command, timeout)
    except ExecFailed as e:
        skipped.append({"check": check, "reason": f"{pod.namespace}/{pod.name}: exec failed ({e})"})
    except DynamoError as e:
        skipped.append({"check": check, "reason": f"{pod.namespace}/{pod.name}: {e.message}"})
    except Exception as e:  # websocket and API errors: the check is skipped, never the run
        reason = getattr(e, "reason", None) or str(e).splitlines()[0][:200]
        status = getattr(e, "status", None)
        skipped.append({"check": check, "reason": f"{pod.namespace}/{pod.name}: exec failed"
                        + (f" ({status} {reason})" if status else f" ({reason})")})
    return None


def _ray(cluster, view, c, g, timeout, skipped):
    for p in g.role("leader"):
        result = _run(cluster, p, RAY_STATUS, timeout, skipped, "ray-incomplete")
        if result is None:
            continue
        code, out = result
        nodes = count_ray_nodes(out)
        want = c.expected["nodeCount"]
        if code != 0 or nodes < want:
            yield_msg = (f"`ray status` on the leader shows {nodes} of {want} nodes" if code == 0
                         else f"`ray status` failed on the leader (exit {code}): {out.strip()[:200]}")
            return [Finding("ray-incomplete", "error", yield_msg + f" for {c.name} group {g.index}",
                            "delete the worker pods that never joined so they restart after the Ray head "
                            "(dynamo#14108); consider mp mode (nvidia.com/vllm-distributed-executor-backend: mp)",
                            object=p.obj())]
    return []


def _sshd(cluster, c, g, timeout, skipped):
    out = []
    for p in g.role("worker"):
        result = _run(cluster, p, SSHD_PROBE, timeout, skipped, "sshd-not-listening")
        if result is None:
            continue
        code, text = result
        if code != 0:
            out.append(Finding("sshd-not-listening", "error",
                               f"sshd does not accept connections on port 2222 in worker {p.name} of {c.name} "
                               f"(exit {code}); mpirun on the leader cannot reach it",
                               f"kubectl logs -n {p.namespace} {p.name} -c main   (the worker command must start "
                               "sshd on port 2222; role templates must do it themselves)", object=p.obj()))
    return out
