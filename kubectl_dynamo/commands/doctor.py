"""``doctor``: the expected shape of every DGD (from the simulation) against the live objects."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from kubectl_dynamo.checks.diagnosis import diagnose
from kubectl_dynamo.findings import catalogue
from kubectl_dynamo.model.views import read_views, scope_namespace
from kubectl_dynamo.result import Result

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import DoctorData


def run_doctor(cluster, *, all_namespaces: bool, name: Optional[str] = None, only: Optional[List[str]] = None,
               exec_checks: bool = False, exec_timeout: float = 20.0, min_severity: str = "error") -> Result[DoctorData]:
    """Read the cluster (one LIST per kind), diagnose it, and return doctor's Result.

    Exit 1 when a finding is at or above ``min_severity``; the table shows only those."""
    import functools

    from kubectl_dynamo.errors import ExitCode, UsageError
    from kubectl_dynamo.findings.finding import at_least
    from kubectl_dynamo.output.tables import format_doctor

    namespace = scope_namespace(cluster, all_namespaces, name)
    if only:
        unknown = sorted(set(only) - catalogue.codes())
        if unknown:
            raise UsageError(f"unknown check code(s): {', '.join(unknown)} (see docs/checks.md)")
    snap, views = read_views(cluster, namespace, name, compact=True)
    exec_results = None
    if exec_checks:
        from kubectl_dynamo.checks.execs import run_exec_checks

        exec_results = run_exec_checks(cluster, views, timeout=exec_timeout, only=only)
    data = diagnose(snap, views, only=only, exec_results=exec_results)
    failing = any(at_least(f["severity"], min_severity) for f in data["findings"])
    return Result(data, functools.partial(format_doctor, min_severity=min_severity),
                  exit_code=ExitCode.FINDINGS if failing else ExitCode.OK,
                  names=[f"dynamographdeployment.nvidia.com/{v.name}" for v in views])

