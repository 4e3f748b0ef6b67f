"""``doctor``: the expected shape of every DGD (from the simulation) against the live objects."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Union

from kubectl_dynamo.checks.diagnosis import diagnose
from kubectl_dynamo.findings import catalogue
from kubectl_dynamo.model.views import read_views, scope_namespace
from kubectl_dynamo.result import Result

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import Catalogue, CheckEntry, DoctorData


def unknown_codes(codes, flag: str) -> None:
    """UsageError (exit 2) naming the codes that are not in the catalogue, with the nearest known ones."""
    from kubectl_dynamo.errors import UsageError
    from kubectl_dynamo.findings.docs import closest

    unknown = sorted(set(codes) - catalogue.codes())
    if unknown:
        near = list(dict.fromkeys(c for u in unknown for c in closest(u)))  # nearest first
        raise UsageError(f"{flag}: unknown check {'code' if len(unknown) == 1 else 'codes'} {', '.join(unknown)}"
                         + (f" (did you mean {', '.join(near)}?)" if near else "")
                         + "; kubectl dynamo doctor --explain all lists them")


def run_doctor(cluster, *, all_namespaces: bool, name: Optional[str] = None, only: Optional[List[str]] = None,
               exec_checks: bool = False, exec_timeout: float = 20.0, min_severity: str = "error", ignore=()) -> Result[DoctorData]:
    """Read the cluster (one LIST per kind), diagnose it, and return doctor's Result.

    Exit 1 when a finding is at or above ``min_severity``; the table shows only those. ``ignore``:
    ``inputs.ignore.Rule``s (--skip, the ignore file) whose findings are listed as skipped instead."""
    import functools

    from kubectl_dynamo.errors import ExitCode
    from kubectl_dynamo.findings.finding import at_least
    from kubectl_dynamo.output.junit import doctor_junit
    from kubectl_dynamo.output.tables import format_doctor

    namespace = scope_namespace(cluster, all_namespaces, name)
    if only:
        unknown_codes(only, "--only")
    snap, views = read_views(cluster, namespace, name, compact=True)
    exec_results = None
    if exec_checks:
        from kubectl_dynamo.checks.execs import run_exec_checks

        exec_results = run_exec_checks(cluster, views, timeout=exec_timeout, only=only)
    data = diagnose(snap, views, only=only, exec_results=exec_results, ignore=ignore)
    failing = any(at_least(f["severity"], min_severity) for f in data["findings"])
    return Result(data, functools.partial(format_doctor, min_severity=min_severity),
                  exit_code=ExitCode.FINDINGS if failing else ExitCode.OK,
                  names=[f"dynamographdeployment.nvidia.com/{v.name}" for v in views],
                  junit=functools.partial(doctor_junit, min_severity=min_severity, only=only))



def run_explain_code(code: str) -> Union[Result[CheckEntry], Result[Catalogue]]:
    """``doctor --explain CODE``: one entry of the check catalogue (``all``: every entry), offline."""
    from kubectl_dynamo.errors import UsageError
    from kubectl_dynamo.findings.docs import INTRO, as_dict, closest
    from kubectl_dynamo.output.tables import format_check, format_checks

    if code == "all":
        every: Catalogue = {"about": INTRO, "checks": [as_dict(e) for e in catalogue.ENTRIES]}
        return Result(every, format_checks)
    if code not in catalogue.CATALOGUE:
        near = closest(code)
        raise UsageError(f'unknown check code "{code}"' + (f"; did you mean {', '.join(near)}?" if near else "")
                         + " (doctor --explain all lists every code)")
    return Result(as_dict(catalogue.entry(code)), format_check)
