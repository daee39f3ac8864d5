"""Values for people and for JSON: plain-text tables, parameter values, JSON-safe copies."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["fmt_param", "json_safe", "text_table"]


def text_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    left: int = 1,
    rule: bool = False,
) -> str:
    """Columns padded to their width, two spaces apart, no trailing blanks.

    The first ``left`` columns are left-aligned, the others right-aligned;
    ``rule`` draws a line of dashes under the headers.
    """
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    lines = [line(headers)]
    if rule:
        lines.append("  ".join("-" * w for w in widths))
    lines += [line(r) for r in rows]
    return "\n".join(lines)


def fmt_param(value: object, missing: str = "-") -> str:
    """A parameter value as written in a scenario: ``true``/``false``, ``0.1``, ``2s``."""
    if value is None:
        return missing
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def json_safe(value: Any) -> Any:
    """``value`` with non-finite floats (not valid JSON) replaced by None, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    return value
