"""Workloads (``[[workloads]]``): figures of a run's flow completion times.

:func:`plot_fct` draws the CDF of the FCTs and the slowdown by flow size from a
:class:`~linklab.Result`, a trace directory (``fct.parquet``) or the ``fct`` table
(``linklab plot-fct``; docs/models/workloads.md). The table itself:
``Result.fct`` (:func:`linklab._fct.fct_frame`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from linklab._fct import FCT_COLUMNS, fct_frame, render

if TYPE_CHECKING:
    import polars as pl
    from matplotlib.figure import Figure

__all__ = ["FCT_COLUMNS", "fct_frame", "plot_fct", "read_fct", "render"]


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
