"""The ``fct`` table of a workload run and the text table of its summary.

``Result.fct`` is the run's ``fct`` table (one row per workload flow: size, start,
FCT, slowdown, retransmissions, timeouts, dropped SYNs/SYN-ACKs; ``docs/metrics.md``), and
:func:`render` the text table ``linklab run`` prints from the summary's ``workloads`` object. The
figures are in :mod:`linklab.workloads`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from linklab._format import text_table

if TYPE_CHECKING:
    import polars as pl

#: The columns of the ``fct`` table, in order, with their polars dtypes' names.
FCT_COLUMNS: dict[str, str] = {
    "workload": "String",
    "flow": "UInt64",
    "from": "String",
    "to": "String",
    "size_bytes": "UInt64",
    "start_s": "Float64",
    "fct_s": "Float64",
    "ideal_s": "Float64",
    "slowdown": "Float64",
    "retransmits": "UInt64",
    "timeouts": "UInt64",
    "handshake_drops": "UInt64",
}


def fct_frame(traces: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """The ``fct`` table of a run's tables (empty, with its columns, if there is none);
    unfinished flows have ``null`` FCT, ideal and slowdown."""
    import polars as pl

    frame = traces.get("fct")
    if frame is None:
        return pl.DataFrame(schema={k: getattr(pl, v) for k, v in FCT_COLUMNS.items()})
    return frame.with_columns(pl.col(c).fill_nan(None) for c in ("fct_s", "ideal_s", "slowdown"))


def _size(b: float | None) -> str:
    if b is None:
        return "inf"
    for unit, k in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= k:
            return f"{b / k:g}{unit}"
    return f"{b:g}B"


def _q(x: Any, scale: float = 1.0, digits: int = 3) -> str:
    if not isinstance(x, int | float) or isinstance(x, bool) or not math.isfinite(x):
        return "-"
    return f"{x * scale:.{digits}f}"


def render(s: Mapping[str, Any]) -> str | None:
    """The summary's ``workloads`` as a text table: per workload, all flows and each
    size bucket with flows, FCT p50/p90/p99 (ms) and slowdown mean/p50/p90/p99."""
    w = s.get("workloads")
    if not isinstance(w, Mapping):
        return None
    rows: list[list[str]] = []
    for x in w.get("workloads") or []:
        groups = [("all", x)] + [
            (f"{_size(b.get('above_bytes'))}-{_size(b.get('upto_bytes'))}", b)
            for b in x.get("buckets") or []
            if (b.get("fct_s") or {}).get("count")
        ]
        for label, g in groups:
            f, d = g.get("fct_s") or {}, g.get("slowdown") or {}
            rows.append(
                [
                    str(x.get("name", "")),
                    label,
                    str(f.get("count", 0)),
                    _q(f.get("p50"), 1e3, 2),
                    _q(f.get("p90"), 1e3, 2),
                    _q(f.get("p99"), 1e3, 2),
                    _q(d.get("mean"), digits=2),
                    _q(d.get("p50"), digits=2),
                    _q(d.get("p90"), digits=2),
                    _q(d.get("p99"), digits=2),
                ]
            )
    head = (
        f"workloads: {w.get('flows_started', 0)} flows started, "
        f"at most {w.get('peak_alive', 0)} alive at once ({w.get('slots', 0)} flow slots)"
    )
    for x in w.get("workloads") or []:
        t = x.get("transaction_s") or {}
        if x.get("transactions"):
            head += (
                f"; {x.get('name')}: {x.get('transactions')} transactions, "
                f"p50 {_q(t.get('p50'), 1e3, 2)} ms, p99 {_q(t.get('p99'), 1e3, 2)} ms"
            )
        if x.get("unfinished") or x.get("rejected"):
            head += (
                f"; {x.get('name')}: {x.get('unfinished', 0)} unfinished, "
                f"{x.get('rejected', 0)} rejected"
            )
    headers = [
        "workload", "sizes", "flows", "fct p50 ms", "p90 ms", "p99 ms",
        "slowdown mean", "p50", "p90", "p99",
    ]  # fmt: skip
    return head + "\n" + text_table(headers, rows, left=2)
