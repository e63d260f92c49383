"""Figures as reports print them: a fixed number of places, never ``-0.00``.

A kappa of -0.001 printed to two places is ``-0.00``, and rounded to four for
JSON, -0.00004 is ``-0.0``: a sign with no digit behind it, which reads as a
finding where there is none. Every figure that rounds to zero is written as
zero; any other keeps its sign. This module formats; it never computes a figure.
"""

from __future__ import annotations


def rounded(value: float, places: int = 4) -> float:
    """``value`` rounded to ``places``, a negative zero made zero (for JSON)."""
    return round(value, places) + 0.0  # -0.0 + 0.0 is 0.0; every other value is itself


def fixed(value: float, places: int = 2) -> str:
    """``value`` with ``places`` decimals; one that rounds to zero is ``0.00``, unsigned."""
    return f"{rounded(value, places):.{places}f}"
