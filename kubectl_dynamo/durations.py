"""kubectl's durations (``--request-timeout``, ``--since``): its own module, so the CLI's option types
parse them without importing the client."""

from __future__ import annotations

import re
from typing import Optional

_NUMBER = re.compile(r"\d+(\.\d+)?")
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_SCALE = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}


def seconds(text: str) -> Optional[float]:
    """A bare number of seconds or 1h2m3s / 500ms-style units, in seconds; None when ``text`` is neither."""
    if _NUMBER.fullmatch(text):
        return float(text)
    parts = _PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _SCALE[u] for n, u in parts)
