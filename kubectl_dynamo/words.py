"""Counted nouns in messages: "1 error", "2 errors", "1 queue" (never "error(s)")."""

from __future__ import annotations

from typing import Optional


def plural(count: int, noun: str, nouns: Optional[str] = None) -> str:
    """``count`` and ``noun`` in the number it takes (``nouns``: an irregular plural)."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"
