"""``docs/checks.md`` from the catalogue (run by cog: ``scripts/gen-docs``; CI checks it is current)."""

from __future__ import annotations

from kubectl_dynamo.findings.catalogue import ENTRIES, Entry

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
