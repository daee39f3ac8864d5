"""Workloads (``[[workloads]]``): the per-flow completion table and its summary.

``Result.fct`` is the run's ``fct`` table (one row per workload flow: size, start,
FCT, slowdown, retransmissions, timeouts; ``docs/metrics.md``), and
:func:`render` the text table ``linklab run`` prints from the summary's
``workloads`` object.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linklab._format import text_table

if TYPE_CHECKING:
    import polars as pl
    from matplotlib.figure import Figure

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


FCT_HINT = (
    "give a directory written by 'linklab run SCENARIO --trace DIR' of a scenario with "
    "[[workloads]]"
)


def read_fct(source: object) -> pl.DataFrame:
    """The ``fct`` table of a :class:`~linklab.Result`, a trace directory (its
    ``fct.parquet``) or a DataFrame; raises :class:`linklab.plots.PlotError`."""
    import polars as pl

    from linklab.plots import PlotError

    if isinstance(source, pl.DataFrame):
        frame = source
    elif hasattr(source, "fct"):
        frame = source.fct
    else:
        path = Path(str(source)) / "fct.parquet"
        if not path.is_file():
            raise PlotError(f"{str(source)!r} has no fct.parquet; {FCT_HINT}")
        try:
            frame = fct_frame({"fct": pl.read_parquet(path)})
        except Exception as e:
            raise PlotError(f"cannot read {str(path)!r}: {e}; {FCT_HINT}") from None
    missing = sorted({"workload", "size_bytes", "fct_s", "slowdown"} - set(frame.columns))
    if missing:
        raise PlotError(f"the fct table lacks column(s) {', '.join(missing)}; {FCT_HINT}")
    return frame


def plot_fct(
    source: object,
    out: str | os.PathLike[str] | None = None,
    buckets: Sequence[float] = (1e4, 1e5, 1e6, 1e7),
) -> Figure:
    """Two panels of a workload run: the CDF of the flow completion times per workload
    (log time axis), and the slowdown by flow size — mean and 99th percentile per size
    bucket (edges ``buckets``, bytes), the flows themselves as faint dots. ``source``:
    a Result, a trace directory or the ``fct`` DataFrame. Written to ``out`` if given."""
    import numpy as np
    import polars as pl

    from linklab.plots import PlotError, _colors, _new_figure, save_figure

    frame = read_fct(source).drop_nulls("fct_s")
    if frame.height == 0:
        raise PlotError(f"no completed workload flow to plot; {FCT_HINT}")
    names = list(dict.fromkeys(frame["workload"].to_list()))
    colors = _colors(len(names))
    fig = _new_figure(10, 4)
    cdf, slow = fig.subplots(1, 2)
    edges = [0.0, *buckets, math.inf]
    for name, color in zip(names, colors, strict=True):
        w = frame.filter(pl.col("workload") == name)
        x = np.sort(w["fct_s"].to_numpy())
        y = np.arange(1, len(x) + 1) / len(x)
        cdf.step(x * 1e3, y, where="post", color=color, label=f"{name} ({len(x)} flows)")
        sd = w.drop_nulls("slowdown")
        slow.scatter(sd["size_bytes"].to_numpy(), sd["slowdown"].to_numpy(), s=3, alpha=0.15,
                     color=color, linewidths=0)  # fmt: skip
        mids, means, p99 = [], [], []
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            b = sd.filter((pl.col("size_bytes") > lo) & (pl.col("size_bytes") <= hi))
            if b.height:
                mids.append(float(b["size_bytes"].median()))  # type: ignore[arg-type]
                means.append(float(b["slowdown"].mean()))  # type: ignore[arg-type]
                p99.append(float(b["slowdown"].quantile(0.99, "nearest")))  # type: ignore[arg-type]
        slow.plot(mids, means, marker="o", color=color, label=f"{name} mean")
        slow.plot(mids, p99, marker="^", linestyle="--", color=color, label=f"{name} p99")
    cdf.set_xscale("log")
    cdf.set_xlabel("flow completion time (ms)")
    cdf.set_ylabel("fraction of flows")
    cdf.set_title("FCT CDF")
    cdf.legend(fontsize="small")
    slow.set_xscale("log")
    slow.set_yscale("log")
    slow.set_xlabel("flow size (bytes)")
    slow.set_ylabel("slowdown (FCT / FCT alone)")
    slow.set_title("slowdown by size (per bucket: mean, p99)")
    slow.legend(fontsize="small")
    if out is not None:
        save_figure(fig, out)
    return fig
