"""``doctor``: the expected shape of every DGD (from the simulation) against the live objects."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Tuple, Union

from kubectl_dynamo.checks.diagnosis import diagnose
from kubectl_dynamo.findings import catalogue
from kubectl_dynamo.model.views import read_views, scope_namespace
from kubectl_dynamo.result import Result

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import Catalogue, CheckEntry, DoctorData, FindingJson


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
               exec_checks: bool = False, exec_timeout: float = 20.0, min_severity: str = "error", ignore=(),
               since: Optional[Tuple[str, List[FindingJson]]] = None) -> Result[DoctorData]:
    """Read the cluster (one LIST per kind), diagnose it, and return doctor's Result.

    Exit 1 when a finding is at or above ``min_severity``; the table shows only those. ``ignore``:
    ``inputs.ignore.Rule``s (--skip, the ignore file) whose findings are listed as skipped instead.
    ``since``: (FILE, its findings) of a previous ``doctor -o json``: only what changed is reported."""
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
    if since is not None:
        data = changed_since(data, *since)
    failing = any(at_least(f["severity"], min_severity) for f in data["findings"])
    return Result(data, functools.partial(format_doctor, min_severity=min_severity),
                  exit_code=ExitCode.FINDINGS if failing else ExitCode.OK,
                  names=[f"dynamographdeployment.nvidia.com/{v.name}" for v in views],
                  junit=functools.partial(doctor_junit, min_severity=min_severity, only=only))



def previous_findings(path: str, stdin: Any = None) -> List[FindingJson]:
    """The findings of a previous ``doctor -o json`` (``-``: stdin), each with its id; InputError (exit 2)
    for anything else."""
    import json

    from kubectl_dynamo.errors import InputError
    from kubectl_dynamo.inputs.manifests import read_bytes

    raw = read_bytes(path, stdin, "--since")
    label = f"--since {'<stdin>' if path == '-' else path}"
    try:
        doc = json.loads(raw)
    except ValueError as e:
        raise InputError(f"{label}: not JSON ({e}); give the output of kubectl dynamo doctor -o json") from None
    findings = doc.get("findings") if isinstance(doc, dict) else None
    if not isinstance(findings, list) or not all(isinstance(f, dict) for f in findings):
        raise InputError(f"{label}: not the output of kubectl dynamo doctor -o json (no findings list)")
    if not all(isinstance(f.get("id"), str) for f in findings):
        raise InputError(f"{label}: its findings have no id (written before kubectl-dynamo had finding ids?); "
                         "run kubectl dynamo doctor -o json again to get a file to compare with")
    return findings


def changed_since(data: DoctorData, path: str, previous: List[FindingJson]) -> DoctorData:
    """Only what changed since ``previous``: the new findings in ``findings`` (and ``summary``), the ones
    gone under ``since.resolved``; a finding is the same when its id is (``findings.finding.identity``)."""
    before = {f["id"] for f in previous}
    now = {f["id"] for f in data["findings"]}
    new = [f for f in data["findings"] if f["id"] not in before]
    return {**data,
            "summary": {"errors": sum(f["severity"] == "error" for f in new),
                        "warnings": sum(f["severity"] == "warning" for f in new),
                        "infos": sum(f["severity"] == "info" for f in new)},
            "findings": new,
            "since": {"file": path, "resolved": [f for f in previous if f["id"] not in now],
                      "unchanged": len(data["findings"]) - len(new)}}


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
