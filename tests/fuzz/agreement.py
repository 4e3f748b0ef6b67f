"""explain's validation held against the operator's own admission verdicts (tests/data/admission/).

A recorded verdict is per DGD document and per provider (``grove``: the Grove gate on; ``lws``: off).
explain validates a document offline for the provider it would render with (Grove unless the DGD
opts out with ``nvidia.com/enable-grove: "false"``, or ``--orchestrator``). It *refuses* a document
when reading the file fails (exit 2: every DGD of the file is refused) or a validation finding of
severity error names it.
"""

from __future__ import annotations

import json
import lzma
import os
from pathlib import Path
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

from kubectl_dynamo.errors import InputError

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
ADMISSION = Path(os.environ.get("KD_ADMISSION_DATA") or DATA / "admission")  # another recorded set (held out)


class Replay(NamedTuple):
    case: str
    dgd: int
    provider: str
    admitted: bool  # the operator's verdict
    refused_by_explain: bool
    oracle_errors: List[str]
    findings: List[dict]  # explain's validation errors


def _rows(name: str) -> List[dict]:
    with lzma.open(ADMISSION / name, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


# The recorded sets, by the oracle's operator version: 1.5 (ai-dynamo/dynamo @2a6da14c) and the 1.6
# hybrid (tests/data/admission/PROVENANCE-1.6.md).
# ``targeted``: one input per webhook rule (tests/fuzz/admission.py targeted), recorded apart.
def suffix(version: str = "1.5.0", targeted: bool = False) -> str:
    return ("-targeted" if targeted else "") + ("" if version.startswith("1.5") else "-1.6")


def verdicts(version: str = "1.5.0", targeted: bool = False) -> List[dict]:
    return _rows(f"verdicts{suffix(version, targeted)}.jsonl.xz")


def generated(version: str = "1.5.0", targeted: bool = False) -> Dict[str, str]:
    return {c["id"]: c["text"] for c in _rows(f"generated{suffix(version, targeted)}.jsonl.xz")}


def case_text(case: str, texts: Dict[str, str]) -> Tuple[str, bytes]:
    """(source label, bytes) of a recorded case: a generated text or a file under tests/data."""
    if case in texts:
        return case, texts[case].encode("utf-8")
    return case, (DATA / case).read_bytes()


# The admission oracle's operator: its defaulting webhook stamps origin version 1.5.0.
OPERATOR_VERSION = "1.5.0"


def explain_validation(data: bytes, source: str, orchestrator: Optional[str] = None,
                       operator_version: str = OPERATOR_VERSION) -> Optional[List[Tuple[str, List[dict]]]]:
    """Per DGD document (provider, validation errors), or None when the input cannot be read (exit 2)."""
    from kubectl_dynamo.inputs.manifests import decode, parse
    from kubectl_dynamo.operator import selection
    from kubectl_dynamo.validation.admission import validation

    try:
        docs = parse(decode(data, source), source)
    except InputError:
        return None
    out = []
    for d in docs:
        dgd = d.dgd
        if dgd is None:
            continue
        meta = dgd.get("metadata") if isinstance(dgd.get("metadata"), dict) else {}
        annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
        provider = orchestrator or ("grove" if selection.wants_grove(annotations) else "lws")
        _, findings, _ = validation(dgd, provider=provider, operator_version=operator_version)
        out.append((provider, [f for f in findings if f["severity"] == "error"]))
    return out


def replay(orchestrator: Optional[str] = None, version: str = OPERATOR_VERSION,
           targeted: bool = False) -> Iterator[Replay]:
    plain = version == OPERATOR_VERSION and not targeted  # (the one set a test may stand in for)
    texts = generated() if plain else generated(version, targeted)
    by_case: Dict[str, List[dict]] = {}
    for row in (verdicts() if plain else verdicts(version, targeted)):
        by_case.setdefault(row["case"], []).append(row)
    for case, rows in by_case.items():
        source, data = case_text(case, texts)
        results = explain_validation(data, source, orchestrator, version)
        for row in rows:
            if not results:  # unreadable, or no DGD explain would read: exit 2
                provider, findings, refused = orchestrator or "grove", [{"code": "input-error"}], True
            elif row["dgd"] < len(results):
                provider, findings = results[row["dgd"]]
                refused = bool(findings)
            else:  # explain saw fewer DGDs than the operator: count it as a disagreement
                provider, findings = orchestrator or "grove", [{"code": "missing-document"}]
                refused = row[provider]["ok"]  # the opposite of the verdict below, of this provider
            verdict = row[provider]
            yield Replay(case, row["dgd"], provider, verdict["ok"], refused, verdict.get("errors") or [], findings)


def matrix(replays: List[Replay]) -> Dict[str, int]:
    """The confusion matrix: operator admitted/refused x explain passed/refused."""
    out = {"admitted-passed": 0, "admitted-refused": 0, "refused-refused": 0, "refused-passed": 0}
    for r in replays:
        key = ("admitted-" if r.admitted else "refused-") + ("refused" if r.refused_by_explain else "passed")
        out[key] += 1
    return out


def webhook_rules(replay: Replay) -> Tuple[List[str], List[str]]:
    """(the operator's webhook refusals, explain's) as ``path: reason`` with quotes unified: rule
    by rule, not only the verdict. The oracle words a webhook error ``webhook: PATH: REASON``."""
    def norm(text: str) -> str:
        return text.replace("'", '"')

    # a ClusterTopologyBinding the webhook reads from the cluster: explain cannot see it offline and
    # says so in a warning (admission-needs-cluster), not an error
    oracle = sorted(norm(e[len("webhook: "):]) for e in replay.oracle_errors
                    if e.startswith("webhook: ") and "ClusterTopologyBinding resource that was not found" not in e)
    mine = sorted(norm(f["message"]) for f in replay.findings
                  if f.get("code") in ("admission-refused", "template-source-mode"))
    return oracle, mine
