"""``-o junit``: doctor's and explain's verdicts as the JUnit XML CI systems read.

The shape of Jenkins' and GitLab's JUnit readers (the de-facto schema, e.g. the ``junit-10.xsd``
Jenkins' JUnit plugin validates against): ``<testsuites>`` of ``<testsuite name tests failures
errors skipped>``, each ``<testcase classname name>`` with at most one ``<failure message type>``
or ``<skipped message>``. One suite per DGD (and one for the cluster), one testcase per check;
a check fails when it found something at or above the threshold.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple
from xml.sax.saxutils import quoteattr

from kubectl_dynamo.findings import catalogue
from kubectl_dynamo.findings.finding import at_least

Case = Tuple[str, List[dict], Optional[str]]  # (code, failing findings, skipped reason)


def doctor_junit(data: Mapping[str, Any], min_severity: str, only: Optional[Iterable[str]] = None) -> str:  # DoctorData
    wanted = set(only) if only else None

    def codes(*scopes: str) -> List[str]:
        return [e.code for e in catalogue.ENTRIES if set(e.scopes) & set(scopes) and (wanted is None or e.code in wanted)]

    failing = [f for f in data["findings"] if at_least(f["severity"], min_severity)]
    suites = [("cluster", _cases(codes("cluster"), [f for f in failing if not f.get("dgd")], data["skipped"], None))]
    for d in data["deployments"]:
        key = (d["namespace"], d["name"])
        mine = [f for f in failing if f.get("dgd") and (f["dgd"]["namespace"], f["dgd"]["name"]) == key]
        suites.append((f"{d['namespace']}/{d['name']}", _cases(codes("dgd", "manifest", "exec"), mine,
                                                             data["skipped"], d["namespace"])))
    return _xml("kubectl dynamo doctor", "doctor", suites)


def explain_junit(result: Mapping[str, Any]) -> str:  # contracts.ExplainList
    """explain fails a DGD's check on an error finding (explain's own exit rule)."""
    manifest = [e.code for e in catalogue.ENTRIES if "manifest" in e.scopes]
    suites = []
    for r in result["items"]:
        errors = [f for f in r["findings"] if f["severity"] == "error"]
        ns = r.get("namespace") or "-"
        suites.append((f"{ns}/{r['name']}", _cases(manifest, errors, [], None)))
    return _xml("kubectl dynamo explain", "explain", suites)


def _cases(codes: List[str], failing: List[dict], skipped: List[dict], namespace: Optional[str]) -> List[Case]:
    by_code: Dict[str, List[dict]] = {}
    for f in failing:
        by_code.setdefault(f["code"], []).append(f)
    out: List[Case] = []
    for code in codes + sorted(set(by_code) - set(codes)):  # a finding never goes unreported
        reason = next((s["reason"] for s in skipped if s.get("check") == code and
                       (namespace is None or not s.get("object") or (s["object"] or {}).get("namespace") == namespace)),
                      None)
        out.append((code, by_code.get(code, []), reason))
    return out


def _xml(title: str, kind: str, suites: List[Tuple[str, List[Case]]]) -> str:
    def counts(cases: List[Case]) -> Tuple[int, int, int]:
        fails = sum(bool(f) for _, f, _ in cases)
        skips = sum(not f and s is not None for _, f, s in cases)
        return len(cases), fails, skips

    total = [sum(x) for x in zip(*(counts(c) for _, c in suites))] if suites else [0, 0, 0]
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuites name={quoteattr(title)} tests="{total[0]}" failures="{total[1]}" errors="0" '
           f'skipped="{total[2]}">']
    for name, cases in suites:
        tests, fails, skips = counts(cases)
        out.append(f'  <testsuite name={quoteattr(name)} tests="{tests}" failures="{fails}" errors="0" '
                   f'skipped="{skips}">')
        for code, found, skip in cases:
            head = f'    <testcase classname={quoteattr(f"{kind}.{name}")} name={quoteattr(code)}'
            if found:
                worst = found[0]
                body = "\n".join(f"{f['severity']}: {f['message']}" + (f"\nfix: {f['hint']}" if f.get("hint") else "")
                                 for f in found)
                out += [head + ">",
                        f"      <failure message={quoteattr(worst['message'])} type={quoteattr(worst['severity'])}>"
                        f"{_text(body)}</failure>", "    </testcase>"]
            elif skip is not None:
                out += [head + ">", f"      <skipped message={quoteattr(skip)}/>", "    </testcase>"]
            else:
                out.append(head + "/>")
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out)


def _text(text: str) -> str:
    from xml.sax.saxutils import escape

    return escape(text)
