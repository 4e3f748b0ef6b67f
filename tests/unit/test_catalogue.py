"""The one catalogue: every code the package can report is catalogued, every catalogued code is
reported somewhere, severities agree, and docs/checks.md is generated from it."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from kubectl_dynamo.findings import catalogue
from kubectl_dynamo.findings.finding import Finding, finding
from tests.conftest import REPO

# Where the package names a code: finding("x", …), Finding("x", …), @check("x"), _f("x", …),
# validate.finding("x", …), check(_code…) for the forwarded ones (FROM_SIMULATION keys).
CODE_USE = re.compile(r'(?:(?:\bfinding|\bFinding|@check|\b_f)\(\s*|\bcode = |\belse )"([a-z0-9]+(?:-[a-z0-9]+)+)"')


def _source_codes() -> set:
    codes = set()
    for path in (REPO / "kubectl_dynamo").rglob("*.py"):
        codes |= set(CODE_USE.findall(path.read_text()))
    import kubectl_dynamo.model.views  # noqa: F401  (registers every check)
    from kubectl_dynamo.checks.dgd import FROM_SIMULATION
    from kubectl_dynamo.checks.registry import codes as registered

    return codes | set(FROM_SIMULATION) | registered()


def test_every_reported_code_is_catalogued():
    missing = sorted(_source_codes() - set(catalogue.CATALOGUE))
    assert not missing, f"codes reported but not in checks/catalogue.py: {missing}"


def test_every_catalogued_code_is_reported_somewhere():
    orphans = sorted(set(catalogue.CATALOGUE) - _source_codes())
    assert not orphans, f"catalogued codes nothing reports: {orphans}"


def test_registered_checks_run_where_catalogued():
    import kubectl_dynamo.model.views  # noqa: F401
    from kubectl_dynamo.checks.registry import REGISTRY

    for (scope, code) in REGISTRY:
        assert scope in catalogue.entry(code).scopes, (scope, code)


def test_entries_are_complete():
    for e in catalogue.ENTRIES:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", e.code), e.code
        assert e.what, e.code
        assert bool(e.also) == bool(e.when), f"{e.code}: other severities need a `when`"


def test_finding_takes_severity_and_fix_from_the_catalogue():
    f = finding("lws-without-volcano", "LWS without Volcano")
    assert f.severity == "error" and f.hint == catalogue.entry("lws-without-volcano").fix
    assert finding("parallelism-mismatch", "m", severity="warning").severity == "warning"
    with pytest.raises(ValueError, match="catalogue allows"):
        Finding("lws-without-volcano", "info", "m")
    with pytest.raises(KeyError):
        Finding("no-such-code", "error", "m")


def test_finding_json_has_the_six_keys():
    j = finding("crash-loop", "m", "h", component="decode", obj={"kind": "Pod", "namespace": "n", "name": "p"}).as_json()
    assert list(j) == ["code", "severity", "message", "hint", "component", "object"]


def test_docs_checks_md_is_generated_and_current():
    text = (REPO / "docs" / "checks.md").read_text()
    for e in catalogue.ENTRIES:
        assert f"`{e.code}`" in text, e.code
    proc = subprocess.run([sys.executable, "-m", "cogapp", "--check", "-c", "docs/checks.md"], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, f"docs/checks.md is stale: run scripts/gen-docs\n{proc.stdout}{proc.stderr}"
