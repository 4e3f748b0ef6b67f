"""Reading manifests: ``-f FILE`` (``-`` = stdin), multi-document YAML, DGDs picked out."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import List, Optional

from .errors import InputError

DGD_KIND = "DynamoGraphDeployment"


@dataclass
class Document:
    index: int  # 0-based position in the stream
    data: object  # the parsed document (dict for Kubernetes objects)

    @property
    def kind(self) -> Optional[str]:
        return self.data.get("kind") if isinstance(self.data, dict) else None

    @property
    def is_dgd(self) -> bool:
        return self.kind == DGD_KIND and str(self.data.get("apiVersion", "")).startswith("nvidia.com/")

    def label(self) -> str:
        if not isinstance(self.data, dict):
            return f"document {self.index + 1}"
        name = (self.data.get("metadata") or {}).get("name") or "?"
        return f"{self.kind or 'unknown kind'}/{name} (document {self.index + 1})"


def read_text(path: str, stdin=None) -> str:
    if path == "-":
        return (stdin or sys.stdin).read()
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}") from None


def parse(text: str, source: str = "<stdin>") -> List[Document]:
    """All non-empty YAML documents; a YAML error is an InputError naming the line."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    if text and not text.endswith("\n"):
        # kubectl's YAML parser ends a final block scalar with a line break even when the file
        # does not; PyYAML would drop it (the operator renders the script with it).
        text += "\n"
    try:
        docs = [d for d in yaml.load_all(text, Loader=loader)]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InputError(f"{source}:{where}: invalid YAML: {problem}") from None
    return [Document(i, d) for i, d in enumerate(docs) if d is not None]


def load(path: str, stdin=None) -> List[Document]:
    return parse(read_text(path, stdin), "<stdin>" if path == "-" else path)
