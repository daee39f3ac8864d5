"""Values for people and for JSON: plain-text tables, parameter values, JSON-safe copies."""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Sequence
from typing import Any

__all__ = ["dumps_json", "fmt_param", "json_safe", "text_table"]

NBSP = "\u00a0"


def text_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    left: int = 1,
    rule: bool = False,
    width: int | None = None,
) -> str:
    """Columns padded to their width, two spaces apart, no trailing blanks.

    The first ``left`` columns are left-aligned, the others right-aligned;
    ``rule`` draws a line of dashes under the headers. With ``width``, the
    widest columns are narrowed (never below their longest word) until a line
    fits, and their cells wrap onto more lines; a table still too wide is cut
    into blocks of columns, one under the other, each repeating the first.
    """
    if width is not None:
        # "mean ± ci" stays on one line.
        headers = [h.replace(" ± ", NBSP + "±" + NBSP) for h in headers]
        rows = [[c.replace(" ± ", NBSP + "±" + NBSP) for c in r] for r in rows]
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    if width is not None:
        floors = [
            max([8, *(len(word) for c in [h, *(r[i] for r in rows)] for word in c.split(" "))])
            for i, h in enumerate(headers)
        ]
        while sum(widths) + 2 * (len(widths) - 1) > width:
            shrinkable = [i for i, w in enumerate(widths) if w > floors[i]]
            if not shrinkable:
                break
            widest = max(shrinkable, key=lambda i: widths[i])
            widths[widest] -= 1

    blocks = [list(range(len(widths)))]
    if width is not None and sum(widths) + 2 * (len(widths) - 1) > width and len(widths) > 1:
        blocks = []
        block = [0]
        for i in range(1, len(widths)):
            if len(block) > 1 and sum(widths[j] + 2 for j in block) + widths[i] > width:
                blocks.append(block)
                block = [0]
            block.append(i)
        blocks.append(block)

    def lines(cells: Sequence[str], cols: list[int]) -> list[str]:
        wrapped = [
            textwrap.wrap(c, widths[i], break_on_hyphens=False) or [""]
            if len(c) > widths[i]
            else [c]
            for i, c in ((i, cells[i]) for i in cols)
        ]
        out = []
        for k in range(max(len(x) for x in wrapped)):
            parts = [x[k] if k < len(x) else "" for x in wrapped]
            out.append(
                "  ".join(
                    p.ljust(widths[i]) if i < left else p.rjust(widths[i])
                    for i, p in zip(cols, parts, strict=True)
                ).rstrip()
            )
        return out

    out: list[str] = []
    for b, cols in enumerate(blocks):
        if b:
            out.append("")
        out += lines(headers, cols)
        if rule:
            out.append("  ".join("-" * widths[i] for i in cols))
        for r in rows:
            out += lines(r, cols)
    return "\n".join(out).replace(NBSP, " ")


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


def dumps_json(value: Any) -> str:
    """``value`` as JSON text, non-finite floats as ``null``. Serialised directly when it
    holds none (a million-link summary: no copy of the tree), else through
    :func:`json_safe`."""
    try:
        return json.dumps(value, allow_nan=False)
    except ValueError:
        return json.dumps(json_safe(value))
