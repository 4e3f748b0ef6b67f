"""Run a command in a pod through the pods/exec API, with one timeout (``doctor --exec``)."""

from __future__ import annotations

import re
from typing import Any, Dict, List


def exec_in_pod(cluster, namespace: str, pod: str, command: List[str], timeout: float, container: str = "main"):
    """Run ``command``; return (exit code, or None on timeout, and the combined output)."""
    from kubernetes import client
    from kubernetes.stream import stream
    from kubernetes.stream.ws_client import ERROR_CHANNEL

    api = client.CoreV1Api(cluster._api)
    cluster.requests += 1
    resp = stream(api.connect_get_namespaced_pod_exec, pod, namespace, command=command, container=container,
                  stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False,
                  _request_timeout=timeout)
    try:
        resp.run_forever(timeout=timeout)
        out = (resp.read_stdout() or "") + (resp.read_stderr() or "")
        if resp.is_open():
            raise ExecFailed(f"no answer within {timeout:g}s")
        code, problem = exit_code(resp.read_channel(ERROR_CHANNEL))
    finally:
        resp.close()
    if code is None:  # the command did not run at all (no such binary, container gone, ...)
        raise ExecFailed(problem)
    return code, out


class ExecFailed(Exception):
    """The command could not be run (as opposed to running and failing)."""


def exit_code(status_text: str):
    """(exit code, None) from the exec error channel, or (None, why) when nothing ran. The kubelet
    puts the code in ``details.causes[reason=ExitCode]``; other kubelet APIs (kwok) only say
    ``... exit status N`` in the message."""
    import json

    status: Dict[str, Any]  # the error channel carries a metav1.Status
    try:
        status = json.loads(status_text) if status_text else {"status": "Success"}
    except ValueError:
        status = {"message": status_text}
    if status.get("status") == "Success":
        return 0, None
    for cause in (status.get("details") or {}).get("causes") or []:
        if cause.get("reason") == "ExitCode":
            return int(cause.get("message", 1)), None
    message = status.get("message") or "exec failed"
    m = re.search(r"exit (?:status|code) (\d+)", message)
    return (int(m.group(1)), None) if m else (None, message.replace("Internal error occurred: ", ""))
