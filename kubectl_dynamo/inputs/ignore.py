"""``doctor``'s ignore file: findings a team has accepted, kept out of the report and the exit code.

One rule a line: ``CODE`` skips every finding with that code, ``CODE namespace/name`` only those
about that object or DGD; ``#`` starts a comment. Read through the input layer (bounded, strict UTF-8).
"""

from __future__ import annotations

import os
from typing import List, NamedTuple, Optional

from kubectl_dynamo.errors import InputError

DEFAULT_IGNORE_FILE = ".kubectl-dynamo-ignore"  # in the current directory, when present


class Rule(NamedTuple):
    code: str
    target: Optional[str]  # "namespace/name", or None for every object
    source: str  # where it came from, for the report: "--skip" or "FILE:LINE"


def parse_rules(text: str, source: str) -> List[Rule]:
    rules = []
    for number, raw in enumerate(text.splitlines(), 1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) > 2 or (len(words) == 2 and words[1].count("/") != 1):
            raise InputError(f"{source}:{number}: expected CODE or CODE namespace/name, got {raw.strip()!r}")
        rules.append(Rule(words[0], words[1] if len(words) == 2 else None, f"{source}:{number}"))
    return rules


def ignore_rules(path: Optional[str]) -> List[Rule]:
    """The rules of ``path``; None: of ``.kubectl-dynamo-ignore`` in the current directory if it exists."""
    from kubectl_dynamo.inputs.manifests import read_text

    if path is None:
        if not os.path.isfile(DEFAULT_IGNORE_FILE):
            return []
        # read without being named: the report says where it came from (--ignore-file /dev/null skips it)
        return [r._replace(source=f"{r.source} (read from the current directory)")
                for r in parse_rules(read_text(DEFAULT_IGNORE_FILE, what="ignore file"), DEFAULT_IGNORE_FILE)]
    return parse_rules(read_text(path, what="ignore file"), path)


def skip_rules(codes) -> List[Rule]:
    """``--skip CODE`` (repeatable, or comma-separated as --only)."""
    return [Rule(c.strip(), None, "--skip") for value in codes for c in value.split(",") if c.strip()]
