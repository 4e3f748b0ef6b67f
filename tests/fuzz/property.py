"""The property every run on bad input must have."""

from __future__ import annotations

from typing import List, Optional

ALLOWED_CODES = {0, 1, 2}


def violation(code: int, stderr: str, seconds: float = 0.0, rss_mb: float = 0.0, *, time_limit: float = 20.0,
              memory_mb: float = 500.0) -> Optional[str]:
    """Why this outcome breaks the property, or None: exit code in {0, 1, 2}; when non-zero, exactly
    one ``error: ...`` line on stderr; no internal error, no traceback; within time and memory."""
    errors: List[str] = [line for line in stderr.splitlines() if line.startswith("error:")]
    if code not in ALLOWED_CODES:
        return f"exit code {code}"
    if "Traceback (most recent call last)" in stderr:
        return "traceback"
    if "internal error" in stderr:
        return "internal error"
    if code != 0 and len(errors) != 1 and not (code == 1 and not errors):
        return f"{len(errors)} error lines"
    if seconds > time_limit:
        return f"{seconds:.1f} s"
    if rss_mb > memory_mb:
        return f"{rss_mb:.0f} MB"
    return None
