"""Figures from sweep directories and trace directories (see ``docs/plots.md``).

- :func:`plot_metric`: a metric's mean with confidence-interval error bars against a
  swept parameter, one line per value of a second parameter (``hue``), one panel per
  combination of any other parameters that vary.
- :func:`plot_scatter`: one point per configuration (sweep point), e.g. goodput
  against mean delay, with confidence-interval whiskers in both directions.
- :func:`plot_trace`: the time series of ``linklab run --trace``: queue occupancy
  per link, congestion window per flow, sequence numbers sent / received / dropped
  per flow, on a shared time axis.

Every function returns a :class:`matplotlib.figure.Figure` and, given ``out``,
writes it atomically as PNG or SVG (chosen by the suffix). Figures are drawn with
the Agg renderer without touching pyplot's global state. matplotlib and polars are
imported lazily so that ``linklab run`` never loads them.

Bad input raises :class:`PlotError` (a ``ValueError``) with a one-line message
``<what was wrong>; <what is allowed>``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linklab._files import Staging, check_writable_file
from linklab._format import fmt_param

if TYPE_CHECKING:  # matplotlib and polars are heavy: imported only when drawing
    import polars as pl
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from linklab.api import Result
    from linklab.sweep import SweepResult

__all__ = [
    "FORMATS",
    "PlotError",
    "Sweep",
    "check_output",
    "load_sweep",
    "metric_label",
    "plot_metric",
    "plot_scatter",
    "plot_trace",
    "save_figure",
]

FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
SWEEP_HINT = "give a directory written by 'linklab sweep' (with summary.parquet and meta.json)"
TRACE_HINT = (
    "give a directory written by 'linklab run --trace DIR' "
    "(with cwnd.parquet, queue.parquet, seq.parquet)"
)
MAX_PANELS = 12  # plot_metric: panels for combinations of the other swept parameters
MAX_QUEUE_LINKS = 12  # plot_trace: links drawn by default
#: Resolution of PNG files (and of the rasterised data inside SVG and PDF files):
#: 300 dpi, what journals ask of line art with data.
_DPI = 300
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p"]
_RESERVED = {"point", "n", "failed"}


class PlotError(ValueError):
    """Bad input to a plot or report: one line, ``<what was wrong>; <what is allowed>``."""


# ---------------------------------------------------------------------------
# Units and labels
# ---------------------------------------------------------------------------

_NAMES = {
    "goodput_bps": "goodput",
    "throughput_bps": "throughput",
    "delay_mean_s": "mean delay",
    "delay_p50_s": "median delay",
    "delay_p95_s": "p95 delay",
    "delay_max_s": "max delay",
    "timeouts": "timeouts",
    "fast_retransmits": "fast retransmits",
    "retransmits": "retransmits",
    "delivered_bytes": "delivered",
    "events": "events",
    "sim_time_s": "simulated time",
    "wall_time_s": "wall time",
    "ecn_marks": "ECN marks",
    "drops_overflow": "overflow drops",
    "drops_aqm_early": "AQM early drops",
    "drops_aqm_forced": "AQM forced drops",
    "mean_packets": "mean queue",
}


def metric_unit(name: str) -> tuple[str, float]:
    """The display unit of a metric and the factor from its stored (SI) value."""
    base = name.rsplit(".", 1)[-1]
    if base.endswith("_bps"):
        return "Mbit/s", 1e-6
    if base.startswith("delay_") and base.endswith("_s"):
        return "ms", 1e3
    if base.endswith("_s"):
        return "s", 1.0
    if base.endswith("_bytes"):
        return "MB", 1e-6
    if base == "mean_packets":
        return "packets", 1.0
    return "", 1.0


def metric_label(name: str, with_unit: bool = True) -> str:
    """A readable axis label, e.g. ``goodput (Mbit/s)``, ``flow[f1] mean delay (ms)``."""
    prefix, _, base = name.rpartition(".")
    text = _NAMES.get(base, base)
    if prefix:
        text = f"{prefix} {text}"
    unit, _ = metric_unit(name)
    return f"{text} ({unit})" if unit and with_unit else text


# ---------------------------------------------------------------------------
# Sweep directories
# ---------------------------------------------------------------------------


@dataclass
class Sweep:
    """A sweep directory: its summary table, meta.json, parameter and metric names."""

    dir: Path
    summary: pl.DataFrame
    meta: dict[str, Any]
    params: list[str]  # swept parameters, in meta.json order
    metrics: list[str]  # metrics M with M_mean in the summary

    def values(self, name: str, frame: pl.DataFrame | None = None) -> list[Any]:
        """The distinct values of parameter ``name`` in ``frame`` (default: the summary).

        Numbers and booleans sorted; strings in the order of meta.json's grid.
        """
        frame = self.summary if frame is None else frame
        present = [v for v in frame.get_column(name).unique().to_list() if v is not None]
        if all(isinstance(v, bool | int | float) for v in present):
            return sorted(present)
        grid = [str(v) for v in (self.meta.get("params") or {}).get(name) or []]
        order = {v: i for i, v in enumerate(grid)}
        return sorted(present, key=lambda v: (order.get(str(v), len(order)), str(v)))

    def varying(self, frame: pl.DataFrame | None = None) -> list[str]:
        """The parameters with more than one value in ``frame`` (meta.json order)."""
        return [p for p in self.params if len(self.values(p, frame)) > 1]

    def check_param(self, name: str, flag: str = "parameter") -> None:
        if name not in self.params:
            have = ", ".join(self.params) or "none (nothing was swept)"
            raise PlotError(f"unknown {flag} {name!r}; swept parameters: {have}")

    def check_metric(self, name: str, flag: str = "metric") -> str:
        """The metric name for ``name`` (``goodput_bps``, also ``goodput_bps_mean``)."""
        if name in self.metrics:
            return name
        if name.endswith("_mean") and name[: -len("_mean")] in self.metrics:
            return name[: -len("_mean")]
        raise PlotError(f"unknown {flag} {name!r}; metrics: {self.metric_list()}")

    def metric_list(self) -> str:
        """The metric names for a message: the run-wide ones, then an example of the rest."""
        plain = [m for m in self.metrics if "[" not in m]
        scoped = [m for m in self.metrics if "[" in m]
        text = ", ".join(plain)
        if scoped:
            text += f" and {len(scoped)} per-flow/queue/link metrics such as {scoped[0]}"
        return text


def _pl() -> Any:
    import polars

    return polars


def load_sweep(directory: str | os.PathLike[str]) -> Sweep:
    """Read a sweep directory (``summary.parquet`` and ``meta.json``)."""
    pl = _pl()
    d = Path(directory)
    if not d.exists():
        raise PlotError(f"sweep directory {str(d)!r} does not exist; {SWEEP_HINT}")
    if not d.is_dir():
        raise PlotError(f"{str(d)!r} is not a directory; {SWEEP_HINT}")
    path = d / "summary.parquet"
    if not path.is_file():
        raise PlotError(f"{str(d)!r} has no summary.parquet; {SWEEP_HINT}")
    try:
        summary = pl.read_parquet(path)
    except Exception as e:  # polars raises several kinds for a damaged file
        raise PlotError(f"cannot read {str(path)!r}: {_first_line(e)}; {SWEEP_HINT}") from None
    meta: dict[str, Any] = {}
    meta_path = d / "meta.json"
    if meta_path.is_file():
        try:
            loaded = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise PlotError(f"cannot read {str(meta_path)!r}: {e}; {SWEEP_HINT}") from None
        if not isinstance(loaded, dict):
            raise PlotError(f"{str(meta_path)!r} is not a JSON object; {SWEEP_HINT}")
        _check_meta(loaded, str(meta_path))
        meta = loaded
    return _sweep_from(d, summary, meta, str(path))


def as_sweep(source: object) -> Sweep:
    """A :class:`Sweep` from a sweep directory, a :class:`Sweep`, or the
    ``SweepResult`` that :func:`linklab.sweep` returned (in memory or with
    its ``out`` directory)."""
    from linklab.sweep import SweepResult

    if isinstance(source, Sweep):
        return source
    if isinstance(source, SweepResult):
        if source.out is not None:
            return load_sweep(source.out)
        return _sweep_from(Path("."), source.summary, dict(source.meta), "the sweep result")
    if isinstance(source, (str, os.PathLike)):
        return load_sweep(source)
    raise TypeError(
        "expected a sweep directory, a Sweep or what linklab.sweep returned, not "
        + type(source).__name__
    )


def _sweep_from(d: Path, summary: Any, meta: dict[str, Any], where: str) -> Sweep:
    """The :class:`Sweep` of a summary table and its settings."""
    path = where
    columns = summary.columns
    metrics = [
        c[: -len("_mean")]
        for c in columns
        if c.endswith("_mean") and c[: -len("_mean")] + "_ci" in columns
    ]
    if not metrics:
        raise PlotError(f"{path!r} has no metric columns (M_mean, M_ci); {SWEEP_HINT}")
    derived = {f"{m}_{s}" for m in metrics for s in ("mean", "std", "ci")}
    grid = meta.get("params")
    if isinstance(grid, dict):
        params = [str(p) for p in grid if str(p) in columns]
    else:
        params = [c for c in columns if c not in _RESERVED and c not in derived]
    return Sweep(dir=d, summary=summary, meta=meta, params=params, metrics=metrics)


def _check_meta(meta: dict[str, Any], where: str) -> None:
    """Raise :class:`PlotError` unless the keys of ``meta.json`` that are read have their types."""

    def bad(key: str, allowed: str) -> PlotError:
        value = json.dumps(meta[key])
        shown = value if len(value) <= 60 else value[:57] + "..."
        return PlotError(f"{where!r}: {key} is {shown}; allowed: {allowed}; {SWEEP_HINT}")

    params = meta.get("params")
    if "params" in meta and not (
        isinstance(params, dict)
        and all(
            isinstance(v, list) and all(isinstance(x, str | int | float | bool) for x in v)
            for v in params.values()
        )
    ):
        raise bad("params", "an object of parameter name to a list of values")
    conf = meta.get("confidence")
    if "confidence" in meta and not (
        isinstance(conf, int | float) and not isinstance(conf, bool) and 0 < conf < 1
    ):
        raise bad("confidence", "a number between 0 and 1")
    reps = meta.get("reps")
    if "reps" in meta and not (isinstance(reps, int) and not isinstance(reps, bool) and reps >= 1):
        raise bad("reps", "an integer >= 1")


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def _coerce(sweep: Sweep, name: str, value: object) -> object:
    """``value`` (often a string from the command line) as a value of column ``name``."""
    present = sweep.values(name)
    for v in present:
        if v == value and type(v) is type(value):
            return v
    text = str(value).strip()
    for v in present:
        if isinstance(v, bool):
            if text.lower() == str(v).lower():
                return v
        elif isinstance(v, int | float):
            try:
                if float(text) == float(v):
                    return v
            except ValueError:
                pass
        elif text == str(v):
            return v
    shown = ", ".join(fmt_param(v) for v in present)
    raise PlotError(f"parameter {name!r} has no value {text!r} in this sweep; values: {shown}")


def _filter(sweep: Sweep, where: Mapping[str, object] | None) -> pl.DataFrame:
    pl = _pl()
    frame = sweep.summary
    for name, value in (where or {}).items():
        sweep.check_param(name, "--where parameter")
        frame = frame.filter(pl.col(name) == _coerce(sweep, name, value))
    return frame


def _combo_text(names: Sequence[str], values: Sequence[object]) -> str:
    return ", ".join(f"{n}={fmt_param(v)}" for n, v in zip(names, values, strict=True))


def _valid(column: str) -> Any:
    """A polars expression: ``column`` holds a number (not null, not NaN)."""
    pl = _pl()
    return pl.col(column).is_not_null() & pl.col(column).is_not_nan()


def _err(ci: float | None) -> float:
    """An error-bar half-width: 0 (no bar) when there is no CI (null or NaN)."""
    return ci if ci is not None and math.isfinite(ci) else 0.0


def metric_bounds(name: str) -> tuple[float, float]:
    """The values metric ``name`` can take: every linklab metric is a rate, a time, a
    count, a size or a share, so at least 0; a ``*_fraction`` is at most 1."""
    return (0.0, 1.0 if name.rsplit(".", 1)[-1].endswith("fraction") else math.inf)


def bounded_errors(
    means: Sequence[float], cis: Sequence[float | None], bounds: tuple[float, float]
) -> list[list[float]]:
    """Error bars ``[below, above]`` of ``mean ± ci`` cut at the metric's bounds: a
    Student-t interval of a few runs can reach below 0 (two runs with 2 and 3
    timeouts: 2.5 ± 6.4 at 95 %), a value no run can have; the bar then ends at
    the bound and is asymmetric."""
    lo, hi = bounds
    below = [min(_err(c), max(m - lo, 0.0)) for m, c in zip(means, cis, strict=True)]
    above = [min(_err(c), max(hi - m, 0.0)) for m, c in zip(means, cis, strict=True)]
    return [below, above]


def natural_key(text: object) -> list[Any]:
    """Sort key putting ``S2->L`` before ``S10->L``."""
    import re

    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", str(text))]


def _is_numeric(values: Iterable[object]) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------


def check_output(out: str | os.PathLike[str]) -> str:
    """The format (``png``/``svg``/``pdf``) for output path ``out``; raises if it cannot be
    written."""
    suffix = Path(out).suffix.lower()
    fmt = FORMATS.get(suffix)
    if fmt is None:
        raise PlotError(
            f"cannot tell the figure format of output file {str(out)!r} "
            f"(suffix {suffix or 'none'!r}); allowed suffixes: .png, .svg, .pdf"
        )
    ensure_writable(out)
    return fmt


def ensure_writable(out: str | os.PathLike[str]) -> None:
    """Raise :class:`PlotError` unless output file ``out`` can be written."""
    try:
        check_writable_file(out)
    except OSError as e:
        raise PlotError(
            f"cannot write output file {str(out)!r}: {e}; "
            "give a path in an existing, writable directory"
        ) from None


def _metadata(fmt: str) -> dict[str, Any]:
    """File metadata without a date, so that the same figure gives the same bytes."""
    if fmt == "svg":
        return {"Date": None}
    if fmt == "pdf":
        return {"CreationDate": None, "ModDate": None, "Creator": "linklab (matplotlib)"}
    return {"Software": "linklab (matplotlib)"}


def save_figure(fig: Figure, out: str | os.PathLike[str]) -> Path:
    """Write ``fig`` to ``out`` (PNG, SVG or PDF by suffix) atomically."""
    fmt = check_output(out)
    metadata = _metadata(fmt)
    return write_staged(out, lambda tmp: fig.savefig(tmp, format=fmt, dpi=_DPI, metadata=metadata))


def write_staged(out: str | os.PathLike[str], write: Callable[[Path], object]) -> Path:
    """Write ``out`` atomically with ``write(tmp_path)``; raise :class:`PlotError` on failure."""
    try:
        with Staging() as staged:
            staged.add(out, write)
            return staged.commit()[0]
    except OSError as e:
        raise PlotError(
            f"cannot write output file {str(out)!r}: {e.strerror or e}; "
            "give a path in an existing, writable directory"
        ) from None


def figure_bytes(fig: Figure, fmt: str = "png", dpi: int = 100) -> bytes:
    """``fig`` rendered to PNG, SVG or PDF bytes."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi, metadata=_metadata(fmt))
    return buf.getvalue()


def _new_figure(width: float, height: float) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from linklab._figure import LinklabFigure

    fig = LinklabFigure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _colors(n: int) -> list[Any]:
    import matplotlib

    cmap = matplotlib.colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


# ---------------------------------------------------------------------------
# plot_metric
# ---------------------------------------------------------------------------


def plot_metric(
    directory: str | os.PathLike[str] | Sweep | SweepResult,
    x: str,
    y: str,
    hue: str | None = None,
    out: str | os.PathLike[str] | None = None,
    where: Mapping[str, object] | None = None,
) -> Figure:
    """Metric ``y`` (mean ± CI half-width) against swept parameter ``x``.

    One line per value of parameter ``hue``; one panel per combination of the
    other parameters that still vary after ``where`` (``{name: value}``) fixed
    some. More than :data:`MAX_PANELS` combinations is an error naming the
    parameters to fix with ``where`` or to use as ``hue``. A string-valued ``x``
    (e.g. ``"1s"``) is drawn as categories in the order of the sweep's grid.
    Points without a CI (fewer than 2 successful repetitions) have no error bar;
    points where every run failed are left out.
    """
    if out is not None:
        check_output(out)
    sweep = as_sweep(directory)
    sweep.check_param(x, "x parameter")
    metric = sweep.check_metric(y, "y metric")
    if hue is not None:
        sweep.check_param(hue, "hue parameter")
        if hue == x:
            raise PlotError(f"hue {hue!r} is also x; give a different --hue or none")
    frame = _filter(sweep, where)
    if frame.height == 0:
        raise PlotError("no sweep point matches the --where filter; relax the filter")
    others = [p for p in sweep.varying(frame) if p not in (x, hue)]
    combos = _combinations(sweep, frame, others)
    if len(combos) > MAX_PANELS:
        choices = "; ".join(
            f"{p}: {', '.join(fmt_param(v) for v in sweep.values(p, frame))}" for p in others
        )
        raise PlotError(
            f"{len(combos)} combinations of other swept parameters ({', '.join(others)}) "
            f"would need {len(combos)} panels (at most {MAX_PANELS}); fix some with "
            f"--where NAME=VALUE or use one as --hue ({choices})"
        )

    pl = _pl()
    _, scale = metric_unit(metric)
    x_values = sweep.values(x, frame)
    numeric_x = _is_numeric(x_values)
    hue_values: list[Any] = sweep.values(hue, frame) if hue is not None else [None]
    colors = _colors(len(hue_values))

    n = len(combos)
    ncols = min(n, 3)
    nrows = math.ceil(n / ncols)
    fig = _new_figure(4.2 * ncols + 1.6 if n > 1 else 7.0, 3.4 * nrows + 0.4 if n > 1 else 4.6)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    for ax in axes.flat[n:]:
        ax.set_visible(False)

    for ax, combo in zip(axes.flat, combos, strict=False):
        part = frame
        for name, value in zip(others, combo, strict=True):
            part = part.filter(pl.col(name) == value)
        for i, hv in enumerate(hue_values):
            rows = part if hue is None else part.filter(pl.col(hue) == hv)
            rows = rows.filter(_valid(f"{metric}_mean"))
            if rows.height == 0:
                continue
            xs_raw = rows.get_column(x).to_list()
            if numeric_x:
                xs = [float(v) for v in xs_raw]
            else:
                xs = [float(x_values.index(v)) for v in xs_raw]
            means = rows.get_column(f"{metric}_mean").to_list()
            cis = rows.get_column(f"{metric}_ci").to_list()
            order = sorted(range(len(xs)), key=lambda k: xs[k])
            xs = [xs[k] for k in order]
            ys = [means[k] * scale for k in order]
            es = bounded_errors(
                [means[k] for k in order], [cis[k] for k in order], metric_bounds(metric)
            )
            es = [[e * scale for e in side] for side in es]
            label = None if hue is None else fmt_param(hv)
            container = ax.errorbar(
                xs,
                ys,
                yerr=es,
                color=colors[i],
                marker=_MARKERS[i % len(_MARKERS)],
                markersize=5,
                capsize=3,
                linewidth=1.5,
                elinewidth=1,
                label=label,
            )
            container.lines[0].set_gid(f"series:{label}")
        if n > 1:
            ax.set_title(_combo_text(others, combo), fontsize=10)
        ax.grid(True, alpha=0.3)
        if not numeric_x:
            ax.set_xticks(range(len(x_values)), [fmt_param(v) for v in x_values])
    for ax in axes[-1, :]:
        ax.set_xlabel(x)
    for ax in axes[:, 0]:
        ax.set_ylabel(metric_label(metric))
    ci_text = _ci_text(sweep, frame)
    title = f"{metric_label(metric, with_unit=False)} vs {x} (mean ± {ci_text})"
    if where:
        title += "  [" + _combo_text(list(where), list(where.values())) + "]"
    fig.suptitle(title, fontsize=11)
    if hue is not None:
        handles, labels = axes.flat[0].get_legend_handles_labels()
        if handles:
            fig.legend(handles, labels, title=hue, loc="outside right upper", fontsize=9)
    if out is not None:
        save_figure(fig, out)
    return fig


def _combinations(sweep: Sweep, frame: pl.DataFrame, names: Sequence[str]) -> list[tuple[Any, ...]]:
    if not names:
        return [()]
    seen = set(frame.select(list(names)).unique().iter_rows())
    combos: list[tuple[Any, ...]] = [()]
    for name in names:
        combos = [c + (v,) for c in combos for v in sweep.values(name, frame)]
    return [c for c in combos if c in seen]


def _ci_text(sweep: Sweep, frame: pl.DataFrame) -> str:
    """How the bars are formed, for a figure's title: the level, Student's t, the
    runs per point (n = 2 gives a t of 12.7 at 95 %; n = 1 no bar), and that the
    bars stop at the metric's bounds."""
    conf = sweep.meta.get("confidence")
    text = f"{_pct(conf)} Student-t CI" if conf is not None else "Student-t CI"
    if "n" in frame.columns and frame.height:
        lo, hi = frame.get_column("n").min(), frame.get_column("n").max()
        text += f", n = {lo} runs" if lo == hi else f", n = {lo}–{hi} runs"
        if lo is not None and lo < 2:
            text += " (n = 1: no bar)"
    return text + ", cut at 0"


def _pct(conf: object) -> str:
    try:
        value = float(conf)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(conf)
    return f"{value * 100:g} %" if value <= 1 else f"{value:g} %"


# ---------------------------------------------------------------------------
# plot_scatter
# ---------------------------------------------------------------------------


def plot_scatter(
    directory: str | os.PathLike[str] | Sweep | SweepResult,
    x: str = "delay_mean_s",
    y: str = "goodput_bps",
    label: str | None = None,
    out: str | os.PathLike[str] | None = None,
    where: Mapping[str, object] | None = None,
    annotate: bool = True,
) -> Figure:
    """One point per configuration: metric ``y`` against metric ``x`` with CI whiskers.

    Points are coloured by the value of parameter ``label`` (default: the first
    swept parameter that varies), one legend entry per value; when other
    parameters vary too, each point is annotated with their values (up to 40
    points). Points where every run failed are left out.
    """
    if out is not None:
        check_output(out)
    sweep = as_sweep(directory)
    xm = sweep.check_metric(x, "x metric")
    ym = sweep.check_metric(y, "y metric")
    frame = _filter(sweep, where)
    varying = sweep.varying(frame)
    if label is not None:
        sweep.check_param(label, "label parameter")
    elif varying:
        label = varying[0]
    others = [p for p in varying if p != label]

    pl = _pl()
    _, xs_scale = metric_unit(xm)
    _, ys_scale = metric_unit(ym)
    groups: list[Any] = sweep.values(label, frame) if label is not None else [None]
    colors = _colors(len(groups))
    fig = _new_figure(7.5, 5.0)
    ax = fig.subplots()
    total = frame.filter(_valid(f"{xm}_mean") & _valid(f"{ym}_mean")).height
    for i, g in enumerate(groups):
        rows = frame if label is None else frame.filter(pl.col(label) == g)
        rows = rows.filter(_valid(f"{xm}_mean") & _valid(f"{ym}_mean"))
        if rows.height == 0:
            continue
        xs = [v * xs_scale for v in rows.get_column(f"{xm}_mean").to_list()]
        ys = [v * ys_scale for v in rows.get_column(f"{ym}_mean").to_list()]
        xe = bounded_errors(
            rows.get_column(f"{xm}_mean").to_list(),
            rows.get_column(f"{xm}_ci").to_list(),
            metric_bounds(xm),
        )
        ye = bounded_errors(
            rows.get_column(f"{ym}_mean").to_list(),
            rows.get_column(f"{ym}_ci").to_list(),
            metric_bounds(ym),
        )
        xe = [[e * xs_scale for e in side] for side in xe]
        ye = [[e * ys_scale for e in side] for side in ye]
        text = None if label is None else f"{label}={fmt_param(g)}"
        container = ax.errorbar(
            xs,
            ys,
            xerr=xe,
            yerr=ye,
            fmt=_MARKERS[i % len(_MARKERS)],
            color=colors[i],
            markersize=7,
            capsize=3,
            elinewidth=1,
            label=text,
        )
        container.lines[0].set_gid(f"series:{text}")
        if annotate and others and total <= 40:
            for row, px, py in zip(rows.select(others).iter_rows(), xs, ys, strict=True):
                ax.annotate(
                    _combo_text(others, row),
                    (px, py),
                    xytext=(5, 4),
                    textcoords="offset points",
                    fontsize=7,
                    color="0.3",
                )
    ax.set_xlabel(metric_label(xm))
    ax.set_ylabel(metric_label(ym))
    ax.grid(True, alpha=0.3)
    title = (
        f"{metric_label(ym, with_unit=False)} vs {metric_label(xm, with_unit=False)} "
        f"per configuration\n(mean ± {_ci_text(sweep, frame)})"
    )
    if where:
        title += "  [" + _combo_text(list(where), list(where.values())) + "]"
    ax.set_title(title, fontsize=11)
    if label is not None and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=9, loc="best")
    if out is not None:
        save_figure(fig, out)
    return fig


# ---------------------------------------------------------------------------
# plot_trace
# ---------------------------------------------------------------------------

_TRACE_FILES = ("queue", "cwnd", "seq")
_SEQ_EVENTS = {
    # event: (marker, size, zorder)
    "sent": (".", 4.0, 2),
    "received": ("1", 12.0, 3),
    "dropped": ("X", 40.0, 4),
}


def _read_trace(directory: str | os.PathLike[str]) -> dict[str, pl.DataFrame]:
    pl = _pl()
    d = Path(directory)
    if not d.exists():
        raise PlotError(f"trace directory {str(d)!r} does not exist; {TRACE_HINT}")
    if not d.is_dir():
        raise PlotError(f"{str(d)!r} is not a directory; {TRACE_HINT}")
    missing = [f"{n}.parquet" for n in _TRACE_FILES if not (d / f"{n}.parquet").is_file()]
    if missing:
        raise PlotError(f"{str(d)!r} has no {', '.join(missing)}; {TRACE_HINT}")
    tables = {}
    for name in _TRACE_FILES:
        path = d / f"{name}.parquet"
        try:
            tables[name] = pl.read_parquet(path)
        except Exception as e:
            raise PlotError(f"cannot read {str(path)!r}: {_first_line(e)}; {TRACE_HINT}") from None
    expected = {
        "queue": {"link", "time_s", "packets"},
        "cwnd": {"flow", "time_s", "cwnd_bytes"},
        "seq": {"flow", "time_s", "event", "seq"},
    }
    for name, cols in expected.items():
        lacking = sorted(cols - set(tables[name].columns))
        if lacking:
            raise PlotError(
                f"{name}.parquet in {str(d)!r} lacks column(s) {', '.join(lacking)}; {TRACE_HINT}"
            )
    return tables


def _trace_summary(directory: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The run summary ``linklab run --trace DIR`` writes beside the tables (None for
    a directory written before it did, or one it cannot read)."""
    from linklab._stream import SUMMARY_FILE

    try:
        found = json.loads((Path(directory) / SUMMARY_FILE).read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _trace_title(source: object, summary: Mapping[str, Any] | None) -> str:
    """The scenario's name, its seed and its parameters that differ from nothing we
    know of (all of them, briefly); the folder's name without a summary."""
    if summary is None or not summary.get("scenario"):
        return f"trace {Path(str(source)).name or str(source)}"
    params = summary.get("params") or {}
    shown = ", ".join(f"{k}={fmt_param(v)}" for k, v in list(params.items())[:6])
    more = ", …" if len(params) > 6 else ""
    tail = f"  ({shown}{more})" if shown else ""
    return f"{summary['scenario']}, seed {summary.get('seed')}{tail}"


def _flow_key(v: object) -> tuple[int, object]:
    return (0, v) if isinstance(v, int) else (1, natural_key(v))


def _result_trace(result: Result) -> dict[str, pl.DataFrame]:
    """The trace tables of a :class:`~linklab.Result` run with ``trace=True``."""
    missing = [n for n in _TRACE_FILES if n not in result.traces]
    if missing:
        raise PlotError(
            f"the Result has no {', '.join(missing)} trace; run it with "
            "linklab.run(..., trace=True) (or give a 'linklab run --trace DIR' directory)"
        )
    return {n: result.traces[n] for n in _TRACE_FILES}


def plot_trace(
    directory: str | os.PathLike[str] | Result,
    out: str | os.PathLike[str] | None = None,
    links: Sequence[str] | None = None,
    flows: Sequence[int | str] | None = None,
) -> Figure:
    """Three stacked panels over a shared time axis from a ``--trace`` directory
    or a :class:`~linklab.Result` run with ``trace=True``.

    Top: queue occupancy (packets) per link direction: ``links`` or, by default,
    the links whose queue ever held more than one packet (the
    :data:`MAX_QUEUE_LINKS` fullest). Middle: cwnd (kB) per flow. Bottom:
    sequence numbers per flow, sent (dots), received (ticks) and dropped (large
    crosses). ``flows`` (flow ids) limits the middle and bottom panels.
    """
    from linklab.api import Result

    if out is not None:
        check_output(out)
    pl = _pl()
    if isinstance(directory, Result):
        t = _result_trace(directory)
        summary: dict[str, Any] | None = directory.summary
    else:
        t = _read_trace(directory)
        summary = _trace_summary(directory)
    title = _trace_title(directory, summary)
    names = {f.get("id"): f.get("name") for f in (summary or {}).get("flows") or []}
    queue, cwnd, seq = t["queue"], t["cwnd"], t["seq"]

    # Links.
    peaks = queue.group_by("link").agg(pl.col("packets").max().alias("peak"))
    peak = dict(
        zip(peaks.get_column("link").to_list(), peaks.get_column("peak").to_list(), strict=True)
    )
    note = ""
    if links:
        unknown = [lk for lk in links if lk not in peak]
        if unknown:
            have = ", ".join(sorted(peak, key=natural_key)) or "none"
            raise PlotError(f"unknown link {unknown[0]!r} in the trace; links: {have}")
        shown_links = list(dict.fromkeys(links))
    else:
        busy = sorted(
            (lk for lk, p in peak.items() if p is not None and p > 1),
            key=lambda lk: (-peak[lk], natural_key(lk)),
        )
        shown_links = busy[:MAX_QUEUE_LINKS]
        if len(busy) > MAX_QUEUE_LINKS:
            note = f" ({MAX_QUEUE_LINKS} fullest of {len(busy)} shown; choose with --link)"

    # Flows.
    all_flows = sorted(
        set(cwnd.get_column("flow").to_list()) | set(seq.get_column("flow").to_list()),
        key=_flow_key,
    )
    if flows:
        by_text = {str(f): f for f in all_flows}
        chosen = []
        for f in flows:
            if str(f) not in by_text:
                have = ", ".join(str(v) for v in all_flows) or "none"
                raise PlotError(f"unknown flow {str(f)!r} in the trace; flows: {have}")
            chosen.append(by_text[str(f)])
        shown_flows = list(dict.fromkeys(chosen))
    else:
        shown_flows = all_flows

    fig = _new_figure(11.0, 9.5)
    ax_q, ax_c, ax_s = fig.subplots(3, 1, sharex=True, height_ratios=[1, 1, 1.3])

    # Queue occupancy.
    link_colors = _colors(len(shown_links))
    for i, lk in enumerate(shown_links):
        rows = queue.filter(pl.col("link") == lk).sort("time_s", maintain_order=True)
        ax_q.plot(
            rows.get_column("time_s").to_numpy(),
            rows.get_column("packets").to_numpy(),
            drawstyle="steps-post",
            color=link_colors[i],
            linewidth=1.0,
            label=lk,
            gid=f"queue:{lk}",
            rasterized=True,
        )
    if not shown_links:
        _empty(ax_q, "no queue ever held more than one packet")
    ax_q.set_ylabel("queue (packets)")
    ax_q.set_title("queue occupancy per link" + note, fontsize=10, loc="left")
    if shown_links:
        ax_q.legend(
            loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title="link", borderaxespad=0
        )

    # cwnd.
    flow_colors = dict(zip(shown_flows, _colors(len(shown_flows)), strict=True))
    for f in shown_flows:
        rows = cwnd.filter(pl.col("flow") == f).sort("time_s", maintain_order=True)
        if rows.height == 0:
            continue
        ax_c.plot(
            rows.get_column("time_s").to_numpy(),
            rows.get_column("cwnd_bytes").to_numpy() / 1e3,
            drawstyle="steps-post",
            color=flow_colors[f],
            linewidth=1.0 if len(shown_flows) <= 4 else 0.7,  # 10 flows stay apart
            label=f"{f} {names[f]}" if names.get(f) else f"flow {f}",
            gid=f"cwnd:{f}",
            rasterized=True,
        )
    if cwnd.height == 0:
        _empty(ax_c, "no cwnd samples")
    ax_c.set_ylabel("cwnd (kB)")
    ax_c.set_title("congestion window per flow", fontsize=10, loc="left")
    if shown_flows:
        ax_c.legend(
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            fontsize=8,
            title="flow",
            ncols=1 if len(shown_flows) <= 12 else 2,
            borderaxespad=0,
        )

    # Sequence numbers.
    seq_shown = seq.filter(pl.col("flow").is_in(shown_flows)) if flows else seq
    top = seq_shown.get_column("seq").max() if seq_shown.height else 0
    seq_scale, seq_unit = (1e-6, "MB") if (top or 0) >= 1e7 else (1e-3, "kB")
    counts = {}
    for event, (marker, size, z) in _SEQ_EVENTS.items():
        ev = seq_shown.filter(pl.col("event") == event)
        counts[event] = ev.height
        for f in shown_flows:
            rows = ev.filter(pl.col("flow") == f)
            if rows.height == 0:
                continue
            extra: dict[str, Any] = {}
            if event == "dropped":
                extra = {"edgecolors": "black", "linewidths": 0.6}
            ax_s.scatter(
                rows.get_column("time_s").to_numpy(),
                rows.get_column("seq").to_numpy() * seq_scale,
                s=size,
                marker=marker,
                color=flow_colors[f],
                zorder=z,
                gid=f"seq:{event}:{f}",
                rasterized=True,
                **extra,
            )
    if seq_shown.height == 0:
        _empty(ax_s, "no sequence-number samples")
    ax_s.set_ylabel(f"sequence number ({seq_unit})")
    ax_s.set_xlabel("time (s)")
    ax_s.set_title("sequence numbers per flow (colour = flow)", fontsize=10, loc="left")
    from matplotlib.lines import Line2D

    proxies = [
        Line2D(
            [],
            [],
            linestyle="none",
            marker=marker,
            color="0.25",
            markeredgecolor="black",
            markersize=8 if event != "sent" else 6,
            label=f"{event} ({counts[event]:,})",
        )
        for event, (marker, _, _) in _SEQ_EVENTS.items()
    ]
    ax_s.legend(
        handles=proxies,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize=8,
        title="event",
        borderaxespad=0,
    )
    for ax in (ax_q, ax_c, ax_s):
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
    ax_s.set_xlim(left=0)
    fig.suptitle(title, fontsize=11)
    if out is not None:
        save_figure(fig, out)
    return fig


def _empty(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="0.4")
