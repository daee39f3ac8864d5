"""``linklab report DIR -o report.html``: one self-contained HTML page for a sweep.

The page holds the scenario text, the linklab version, the parameter grid, the
replications and confidence level, a summary table (mean ± CI half-width of the
main metrics per sweep point), the failed runs with their errors, and figures:
each main metric against the first swept parameter (hue: the second one), and
goodput against mean delay per configuration. Figures are embedded as base64
PNG; there is no external CSS or JavaScript, and no script at all. Everything
read from the sweep directory is HTML-escaped. See ``docs/plots.md``.
"""

from __future__ import annotations

import math
import os
import tomllib
from pathlib import Path
from typing import Any

from linklab._format import fmt_param
from linklab._html import escape as _e
from linklab._html import figure, page
from linklab.plots import (
    PlotError,
    Sweep,
    ensure_writable,
    figure_bytes,
    load_sweep,
    metric_label,
    metric_unit,
    plot_metric,
    plot_scatter,
    write_staged,
)

__all__ = ["MAIN_METRICS", "format_mean_ci", "render_report", "write_report"]

MAIN_METRICS = [
    "goodput_bps",
    "delay_mean_s",
    "delay_p95_s",
    "timeouts",
    "fast_retransmits",
    "retransmits",
]
_SUFFIXES = (".html", ".htm")


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def format_mean_ci(mean: float | None, ci: float | None, scale: float = 1.0) -> tuple[str, str]:
    """``(mean, "± ci")`` as text, the mean rounded to the CI's precision.

    The CI keeps two significant digits; without a CI (fewer than two
    successful repetitions) the mean keeps four. No mean (every run failed) is
    ``"–"``.
    """
    if not _finite(mean):
        return "–", ""
    m = float(mean) * scale  # type: ignore[arg-type]
    if _finite(ci) and float(ci) > 0:  # type: ignore[arg-type]
        c = float(ci) * scale  # type: ignore[arg-type]
        decimals = min(6, max(0, 1 - math.floor(math.log10(c))))
        return f"{m:,.{decimals}f}", f"± {c:,.{decimals}f}"
    if _finite(ci):  # a CI of exactly 0 (identical repetitions)
        decimals = _decimals(m)
        return f"{m:,.{decimals}f}", f"± {0:.{decimals}f}"
    return f"{m:,.{_decimals(m)}f}", ""


def _decimals(value: float) -> int:
    if value == 0:
        return 0
    return min(6, max(0, 3 - math.floor(math.log10(abs(value)))))


def _check_out(out: str | os.PathLike[str]) -> None:
    suffix = Path(out).suffix.lower()
    if suffix not in _SUFFIXES:
        raise PlotError(
            f"the report is HTML but output file {str(out)!r} has suffix {suffix or 'none'!r}; "
            "allowed suffixes: .html, .htm"
        )
    ensure_writable(out)


def write_report(directory: str | os.PathLike[str] | Any, out: str | os.PathLike[str]) -> Path:
    """Write the HTML report of sweep ``directory`` (or of what
    :func:`linklab.sweep` returned with an ``out`` directory) to ``out`` atomically."""
    _check_out(out)
    text = render_report(directory)
    return write_staged(out, lambda tmp: Path(tmp).write_bytes(text.encode("utf-8")))


def render_report(directory: str | os.PathLike[str] | Any) -> str:
    """The HTML report of sweep ``directory`` (or a ``SweepResult`` with an
    ``out`` directory) as a string."""
    import linklab
    from linklab.sweep import SweepResult

    if isinstance(directory, SweepResult):
        if directory.out is None:
            raise PlotError(
                "this sweep ran in memory and has no directory to report from; run "
                "linklab.sweep(..., out=DIR) and report that"
            )
        directory = directory.out
    sweep = load_sweep(directory)
    meta = sweep.meta
    scenario_text = _read_text(sweep.dir / "scenario.toml")
    title = _scenario_name(scenario_text) or Path(str(meta.get("scenario") or sweep.dir)).stem
    runs = _read_runs(sweep.dir)
    n_runs = runs.height if runs is not None else None
    failed = _failed_runs(runs)
    n_failed = failed.height if failed is not None else int(_sum(sweep.summary, "failed"))

    parts: list[str] = []
    parts.append(f"<h1>linklab sweep report: {_e(title)}</h1>")
    parts.append(
        f'<p class="sub">{sweep.summary.height} configurations × {_e(meta.get("reps", "?"))} '
        f"repetitions — made by linklab {_e(linklab.__version__)}</p>"
    )
    parts.append(_overview(sweep, n_runs, n_failed))
    parts.append("<h2>Parameter grid</h2>")
    parts.append(_grid_table(sweep))
    parts.append("<h2>Summary</h2>")
    parts.append(_summary_table(sweep))
    parts.append("<h2>Failed runs</h2>")
    parts.append(_failed_table(sweep, failed, n_failed))
    parts.append("<h2>Figures</h2>")
    parts.append(_figures(sweep))
    parts.append("<h2>Scenario</h2>")
    if scenario_text is None:
        parts.append('<p class="note">scenario.toml is missing from the sweep directory.</p>')
    else:
        parts.append(f"<pre>{_e(scenario_text)}</pre>")
    return page(f"linklab report: {title}", "\n".join(parts), f"linklab {linklab.__version__}")


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _scenario_name(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        name = tomllib.loads(text).get("name")
    except tomllib.TOMLDecodeError:
        return None
    return str(name) if name else None


def _read_runs(d: Path) -> Any:
    import polars as pl

    path = d / "runs.parquet"
    if not path.is_file():
        return None
    try:
        return pl.read_parquet(path)
    except Exception:
        return None


def _failed_runs(runs: Any) -> Any:
    import polars as pl

    if runs is None or "status" not in runs.columns:
        return None
    return runs.filter(pl.col("status") != "ok")


def _sum(frame: Any, column: str) -> float:
    if column not in frame.columns:
        return 0
    return float(frame.get_column(column).sum() or 0)


# ---------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------


def _overview(sweep: Sweep, n_runs: int | None, n_failed: int) -> str:
    meta = sweep.meta
    conf = meta.get("confidence")
    conf_text = f"{float(conf) * 100:g} % (Student-t)" if _finite(conf) else fmt_param(conf, "–")
    status = (
        '<span class="ok">all runs succeeded</span>'
        if n_failed == 0
        else f'<span class="bad">{n_failed} failed</span>'
    )
    rows = [
        ("scenario", _e(meta.get("scenario", "?"))),
        ("sweep directory", _e(sweep.dir)),
        ("linklab version (sweep)", _e(meta.get("linklab_version", "?"))),
        ("configurations", _e(sweep.summary.height)),
        ("repetitions per configuration", _e(meta.get("reps", "?"))),
        ("confidence level", _e(conf_text)),
        ("base seed", _e(meta.get("base_seed", "?"))),
        ("backend", _e(meta.get("backend", "?"))),
        ("runs", (_e(n_runs) + " — " if n_runs is not None else "") + status),
    ]
    cells = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="kv">{cells}</table>'


def _grid_table(sweep: Sweep) -> str:
    if not sweep.params:
        return '<p class="note">No parameter was swept (one configuration).</p>'
    grid = sweep.meta.get("params")
    rows = []
    for p in sweep.params:
        values = grid.get(p) if isinstance(grid, dict) and isinstance(grid.get(p), list) else None
        if values is None:
            values = sweep.values(p)
        shown = ", ".join(fmt_param(v, "–") for v in values)
        rows.append(
            f'<tr><td class="l"><code>{_e(p)}</code></td><td>{len(values)}</td>'
            f'<td class="l">{_e(shown)}</td></tr>'
        )
    return (
        '<table><thead><tr><th class="l">parameter</th><th>values</th>'
        f'<th class="l">grid</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def _summary_table(sweep: Sweep) -> str:
    params = sweep.varying() or sweep.params
    metrics = [m for m in MAIN_METRICS if m in sweep.metrics]
    frame = sweep.summary.sort("point") if "point" in sweep.summary.columns else sweep.summary
    conf = sweep.meta.get("confidence")
    ci_text = f"{float(conf) * 100:g} % CI" if _finite(conf) else "CI"
    head = ['<th class="l">point</th>']
    head += [f'<th class="l"><code>{_e(p)}</code></th>' for p in params]
    head += ["<th>runs ok</th>"]
    for m in metrics:
        unit, _ = metric_unit(m)
        label = metric_label(m, with_unit=False)
        head.append(
            f"<th>{_e(label)}" + (f"<br><small>{_e(unit)}</small>" if unit else "") + "</th>"
        )
    rows = []
    for rec in frame.iter_rows(named=True):
        cells = [f'<td class="l">{_e(rec.get("point", ""))}</td>']
        cells += [f'<td class="l">{_e(fmt_param(rec.get(p), "–"))}</td>' for p in params]
        n, bad = rec.get("n"), rec.get("failed")
        total = (n or 0) + (bad or 0)
        runs_cls = ' class="bad"' if bad else ""
        cells.append(f"<td{runs_cls}>{_e(n)}/{_e(total)}</td>")
        for m in metrics:
            _, scale = metric_unit(m)
            mean, ci = format_mean_ci(rec.get(f"{m}_mean"), rec.get(f"{m}_ci"), scale)
            ci_html = f' <span class="ci">{_e(ci)}</span>' if ci else ""
            cells.append(f"<td>{_e(mean)}{ci_html}</td>")
        rows.append(f'<tr class="point">{"".join(cells)}</tr>')
    caption = (
        f'<p class="note">Mean ± half-width of the {_e(ci_text)} over the successful '
        "repetitions; no ± when fewer than two succeeded; – when all failed.</p>"
    )
    return (
        f'<div class="wide"><table id="summary"><thead><tr>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>{caption}"
    )


def _failed_table(sweep: Sweep, failed: Any, n_failed: int) -> str:
    if n_failed == 0:
        return '<p class="ok">None: every run succeeded.</p>'
    if failed is None:
        return (
            f'<p class="bad">{n_failed} runs failed; runs.parquet (with their errors) '
            "could not be read.</p>"
        )
    params = sweep.params
    head = ['<th class="l">point</th>', "<th>rep</th>", "<th>seed</th>"]
    head += [f'<th class="l"><code>{_e(p)}</code></th>' for p in params]
    head += ['<th class="l">error</th>']
    rows = []
    for rec in failed.iter_rows(named=True):
        cells = [
            f'<td class="l">{_e(rec.get("point", ""))}</td>',
            f"<td>{_e(rec.get('rep', ''))}</td>",
            f"<td>{_e(rec.get('seed', ''))}</td>",
        ]
        cells += [f'<td class="l">{_e(fmt_param(rec.get(p), "–"))}</td>' for p in params]
        cells.append(f'<td class="err">{_e(rec.get("error") or "(no message)")}</td>')
        rows.append(f'<tr class="failed">{"".join(cells)}</tr>')
    return (
        f'<div class="wide"><table id="failed"><thead><tr>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _figures(sweep: Sweep) -> str:
    varying = sweep.varying()
    figs: list[str] = []
    notes: list[str] = []
    metrics = [m for m in MAIN_METRICS if m in sweep.metrics]
    if varying:
        x = varying[0]
        hue = varying[1] if len(varying) > 1 else None
        for m in metrics:
            caption = f"{metric_label(m, with_unit=False)} against {x}" + (
                f", one line per {hue}" if hue else ""
            )
            figs.append(_figure(lambda m=m: plot_metric(sweep, x, m, hue=hue), caption, notes))
    else:
        notes.append("No parameter varies, so there are no metric-against-parameter plots.")
    if "delay_mean_s" in sweep.metrics and "goodput_bps" in sweep.metrics:
        figs.append(
            _figure(
                lambda: plot_scatter(sweep),
                "goodput against mean delay, one point per configuration, CI whiskers both ways",
                notes,
            )
        )
    out = [f'<div class="figs">{"".join(f for f in figs if f)}</div>']
    out += [f'<p class="note">{_e(n)}</p>' for n in notes]
    return "\n".join(out)


def _figure(make: Any, caption: str, notes: list[str]) -> str:
    try:
        fig = make()
    except PlotError as e:
        notes.append(f"Not drawn: {caption}: {e}")
        return ""
    width_in, height_in = fig.get_size_inches()
    if width_in <= 7.5:  # one panel: a bit smaller, so its text reads well at page width
        fig.set_size_inches(6.2, 6.2 * height_in / width_in)
    data = figure_bytes(fig, "png", dpi=110)
    return figure(data, caption, _png_size(data))


def _png_size(data: bytes) -> tuple[int, int]:
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
