"""``docs/checks.md`` from the catalogue (run by cog: ``scripts/gen-docs``; CI checks it is current),
and the same catalogue for ``doctor --explain`` (the installed package carries all of it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_dynamo.findings.catalogue import CATALOGUE, ENTRIES, Entry

if TYPE_CHECKING:
    from kubectl_dynamo.contracts import CheckEntry

TITLE = "# Check catalogue"
INTRO = """Every diagnosis `kubectl dynamo` reports has a stable kebab-case **code** and a **severity**
(`error`, `warning`, `info`). Codes never change meaning; new ones are added, old ones are not
renamed. This page is generated from `kubectl_dynamo/findings/catalogue.py` (`scripts/gen-docs`);
CI fails when it is out of date. In JSON every finding has the keys `code`, `severity`, `message`,
`hint`, `component` and `object` (see the README).

`doctor` renders every DGD with the simulation (the live operator's version, gates, queues and MPI
secret name) and compares that expectation with the live objects. Pods are tied to their DGD,
component, group and rank by labels (`nvidia.com/dynamo-graph-deployment-name`,
`nvidia.com/dynamo-component`; Grove `grove.io/podclique` `-ldr`/`-wkr`,
`grove.io/podcliquescalinggroup-replica-index`, `grove.io/podclique-pod-index`; LWS
`leaderworkerset.sigs.k8s.io/group-index` and `worker-index`). Checks that cannot run are listed
under `skipped` with the reason (a forbidden lookup, `--exec` not given), never as a crash."""

SECTIONS = (
    ("cluster", "Cluster level (`detect` problems, `doctor`)"),
    ("manifest", "Manifest (`explain`, repeated by `doctor` for live DGDs)"),
    ("dgd", "Per DGD and per multinode group (`doctor`)"),
    ("exec", "In the pods (`doctor --exec`)"),
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ") or "—"


def _severity(e: Entry) -> str:
    return f"{e.severity} ({e.when})" if e.also else e.severity


def table(scope: str) -> str:
    rows = ["| code | severity | what it detects | why it matters | fix |", "|---|---|---|---|---|"]
    for e in ENTRIES:
        if scope in e.scopes:
            rows.append(f"| `{e.code}` | {_severity(e)} | {_cell(e.what)} | {_cell(e.why)} | {_cell(e.fix)} |")
    return "\n".join(rows)


def markdown() -> str:
    out = []
    for scope, title in SECTIONS:
        out += [f"## {title}", "", table(scope), ""]
    return "\n".join(out)


def page() -> str:
    """All of docs/checks.md: what ``doctor --explain all`` prints without the repository."""
    return f"{TITLE}\n\n{INTRO}\n\n{markdown()}"


def as_dict(e: Entry) -> CheckEntry:
    """One entry as ``doctor --explain CODE -o json`` prints it."""
    return {"code": e.code, "severity": e.severity, "severities": list(e.severities), "when": e.when or None,
            "scopes": list(e.scopes), "what": e.what, "why": e.why, "fix": e.fix, "refs": list(e.refs)}


def closest(code: str, n: int = 3) -> list:
    """The known codes nearest to a mistyped one (``--explain``, ``--skip``, ``--only``)."""
    import difflib

    near = difflib.get_close_matches(code, list(CATALOGUE), n=n, cutoff=0.5)
    return near or sorted(c for c in CATALOGUE if code and (code in c or c in code))[:n]
