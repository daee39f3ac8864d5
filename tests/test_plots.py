"""linklab plot / plot-trace: figures from synthetic sweep dirs and a real trace."""

from __future__ import annotations

import itertools
import json
import math
import random
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from conftest import TINY, CliRunner, assert_bad_input, cli_env

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "dumbbell-red-ecn.toml"

METRICS = [
    "goodput_bps", "delay_mean_s", "delay_p50_s", "delay_p95_s", "delay_max_s", "timeouts",
    "fast_retransmits", "retransmits", "delivered_bytes", "events", "sim_time_s", "wall_time_s",
    "flow[f1].goodput_bps", "flow[f1].delay_mean_s", "flow[f1].timeouts", "flow[f1].retransmits",
    "queue[L->R].ecn_marks", "queue[L->R].drops_overflow", "queue[L->R].drops_aqm_early",
    "queue[L->R].drops_aqm_forced", "queue[L->R].mean_packets", "link[L->R].throughput_bps",
]  # fmt: skip

# Student-t 97.5 % quantiles by degrees of freedom (95 % two-sided CI).
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306}

SCENARIO_TEXT = 'name = "synthetic <b>&amp; test</b>"\nduration = "5s"\n[params]\nper = 0.0\n'


def _fake_metrics(point: Mapping[str, Any], rng: random.Random) -> dict[str, float]:
    per = float(point.get("per", 0.0))
    flows = float(point.get("flows", 10))
    rto = 0.2 if point.get("min_rto") == "200ms" else 1.0
    good = 9.5e6 * (1 - per) ** (3 + flows / 5) * (1 + 0.02 * rng.gauss(0, 1)) * (1.05 - 0.05 * rto)
    delay = 0.03 + 0.004 * flows * (1 - per) + 0.002 * rng.gauss(0, 1)
    out = {m: float(rng.randint(0, 50)) for m in METRICS}
    out.update(
        goodput_bps=good,
        delay_mean_s=delay,
        delay_p50_s=delay * 0.9,
        delay_p95_s=delay * 1.8,
        delay_max_s=delay * 3,
        timeouts=float(round(per * 400 * rto + rng.random() * 3)),
        retransmits=float(round(per * 4000 + rng.random() * 20)),
        delivered_bytes=good * 5 / 8,
        sim_time_s=5.0,
        wall_time_s=0.05,
    )
    out["flow[f1].goodput_bps"] = good / flows
    out["link[L->R].throughput_bps"] = good * 1.05
    return out


def make_sweep(
    directory: Path,
    params: Mapping[str, Sequence[Any]],
    reps: int = 3,
    fail: Sequence[tuple[int, int]] = (),
    seed: int = 1,
) -> Path:
    """A sweep dir in the format of ``linklab sweep`` (runs, summary, scenario, meta).

    ``fail``: (point, rep) pairs whose run failed.
    """
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    names = list(params)
    points = list(itertools.product(*(params[n] for n in names)))
    runs: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    for p, values in enumerate(points):
        point = dict(zip(names, values, strict=True))
        got: list[dict[str, float]] = []
        for r in range(reps):
            failed = (p, r) in fail
            m = _fake_metrics(point, rng)
            if not failed:
                got.append(m)
            runs.append(
                {
                    "point": p,
                    "rep": r,
                    "seed": 1000 + p * reps + r,
                    **point,
                    "key": f"p{p}r{r}",
                    "status": "failed" if failed else "ok",
                    "error": 'links[1].ab.loss: <oops> & "boom"' if failed else None,
                    **{k: (None if failed else v) for k, v in m.items()},
                }
            )
        row: dict[str, Any] = {"point": p, **point, "n": len(got), "failed": reps - len(got)}
        for metric in METRICS:
            xs = [g[metric] for g in got]
            n = len(xs)
            mean = sum(xs) / n if n else None
            std = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n >= 2 else None
            ci = _T975.get(n - 1, 2.0) * std / math.sqrt(n) if std is not None else None
            row |= {f"{metric}_mean": mean, f"{metric}_std": std, f"{metric}_ci": ci}
        summary.append(row)
    float_cols = {m: pl.Float64 for m in METRICS}
    pl.DataFrame(runs, schema_overrides={"seed": pl.UInt64, **float_cols}).write_parquet(
        directory / "runs.parquet"
    )
    stats = {f"{m}_{s}": pl.Float64 for m in METRICS for s in ("mean", "std", "ci")}
    pl.DataFrame(summary, schema_overrides=stats).write_parquet(directory / "summary.parquet")
    (directory / "scenario.toml").write_text(SCENARIO_TEXT)
    meta = {
        "linklab_version": "0.1.0",
        "scenario": "synthetic <b>&amp; test</b>",
        "params": {n: list(v) for n, v in params.items()},
        "reps": reps,
        "confidence": 0.95,
        "base_seed": 1,
        "backend": "process",
    }
    (directory / "meta.json").write_text(json.dumps(meta))
    return directory


@pytest.fixture
def sweep2(tmp_path: Path) -> Path:
    """per × flows, 3 reps, one failed run at point 3."""
    return make_sweep(
        tmp_path / "sweep2", {"per": [0.0, 0.01, 0.05, 0.1], "flows": [2, 10]}, fail=[(3, 0)]
    )


@pytest.fixture(scope="module")
def trace_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real trace: 4 flows, 3 s, 5 % erasures (so there are drops)."""
    out = tmp_path_factory.mktemp("trace") / "tr"
    proc = subprocess.run(
        [sys.executable, "-m", "linklab", "run", str(SCENARIO), "--set", "duration=3s",
         "--set", "flows=4", "--set", "per=0.05", "--trace", str(out)],
        env=cli_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out


def _series(fig: Any) -> dict[str, Any]:
    """Artists tagged by the plots module (gid 'series:…', 'queue:…', …) by gid."""
    found = {}
    for ax in fig.axes:
        for artist in [*ax.lines, *ax.collections]:
            gid = artist.get_gid()
            if gid:
                found.setdefault(gid, []).append(artist)
    return found


def _is_png(path: Path) -> bool:
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _is_svg(path: Path) -> bool:
    import xml.etree.ElementTree as ET

    root = ET.parse(path).getroot()
    return root.tag.endswith("svg")


# --- plot_metric --------------------------------------------------------------


def test_metric_lines_per_hue(sweep2: Path, tmp_path: Path) -> None:
    from linklab.plots import plot_metric

    out = tmp_path / "g.png"
    fig = plot_metric(sweep2, "per", "goodput_bps", hue="flows", out=out)
    assert _is_png(out)
    (ax,) = [a for a in fig.axes if a.get_visible()]
    assert len(ax.containers) == 2  # one errorbar per hue value
    series = _series(fig)
    assert set(series) == {"series:2", "series:10"}
    for (line,) in series.values():
        xs, ys = line.get_data()
        assert list(xs) == [0.0, 0.01, 0.05, 0.1]
        assert all(0 < y < 12 for y in ys)  # Mbit/s, not bit/s
    assert ax.get_ylabel() == "goodput (Mbit/s)"
    assert ax.get_xlabel() == "per"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["2", "10"]
    # error bars: one vertical segment per point
    bars = ax.containers[0].lines[2][0]
    assert len(bars.get_segments()) == 4


def test_metric_delay_in_ms_svg(sweep2: Path, tmp_path: Path) -> None:
    from linklab.plots import plot_metric

    out = tmp_path / "d.SVG"
    fig = plot_metric(sweep2, "flows", "delay_mean_s", hue="per", out=out)
    assert _is_svg(out)
    ax = fig.axes[0]
    assert ax.get_ylabel() == "mean delay (ms)"
    assert len(ax.containers) == 4
    _, ys = ax.containers[0].lines[0].get_data()
    assert all(10 < y < 200 for y in ys)


def test_metric_facets_for_other_params(tmp_path: Path) -> None:
    from linklab.plots import plot_metric

    d = make_sweep(
        tmp_path / "s3",
        {"per": [0.0, 0.1], "flows": [2, 10], "min_rto": ["200ms", "1s"]},
        reps=2,
    )
    fig = plot_metric(d, "per", "timeouts", hue="flows")
    panels = [a for a in fig.axes if a.get_visible()]
    assert [a.get_title() for a in panels] == ["min_rto=200ms", "min_rto=1s"]
    assert all(len(a.containers) == 2 for a in panels)
    # a filter instead of panels
    fig = plot_metric(d, "per", "timeouts", hue="flows", where={"min_rto": "1s"})
    assert len([a for a in fig.axes if a.get_visible()]) == 1
    # string x: categories in the grid's order
    fig = plot_metric(d, "min_rto", "goodput_bps", hue="per", where={"flows": "2"})
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["200ms", "1s"]
    assert len(ax.containers) == 2


def test_metric_too_many_panels(tmp_path: Path) -> None:
    from linklab.plots import PlotError, plot_metric

    d = make_sweep(
        tmp_path / "big", {"per": [0.0, 0.1], "a": [1, 2, 3, 4], "b": [1, 2, 3, 4]}, reps=1
    )
    with pytest.raises(PlotError, match=r"16 combinations .*--where NAME=VALUE.*--hue"):
        plot_metric(d, "per", "goodput_bps")
    fig = plot_metric(d, "per", "goodput_bps", hue="a", where={"b": 2})
    assert len(fig.axes[0].containers) == 4


def test_metric_without_ci_and_all_failed_point(tmp_path: Path) -> None:
    from linklab.plots import plot_metric

    # 2 reps; point 0 lost one rep (no CI), point 1 lost both (no mean)
    d = make_sweep(tmp_path / "f", {"per": [0.0, 0.05, 0.1]}, reps=2, fail=[(0, 0), (1, 0), (1, 1)])
    fig = plot_metric(d, "per", "goodput_bps")
    (line,) = _series(fig)["series:None"]
    assert list(line.get_xdata()) == [0.0, 0.1]


# --- plot_scatter ---------------------------------------------------------------


def test_scatter_points_and_whiskers(sweep2: Path, tmp_path: Path) -> None:
    from linklab.plots import plot_scatter

    out = tmp_path / "s.svg"
    fig = plot_scatter(sweep2, out=out)
    assert _is_svg(out)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "mean delay (ms)"
    assert ax.get_ylabel() == "goodput (Mbit/s)"
    # label defaults to the first swept parameter: 4 groups of 2 points
    assert len(ax.containers) == 4
    for c in ax.containers:
        assert len(c.lines[0].get_xdata()) == 2
        assert len(c.lines[2]) == 2  # x and y whiskers
    assert [t.get_text() for t in ax.get_legend().get_texts()][0] == "per=0"
    assert len(ax.texts) == 8  # each point annotated with flows=…
    fig = plot_scatter(sweep2, label="flows", x="timeouts", y="retransmits")
    assert len(fig.axes[0].containers) == 2


# --- plot_trace -----------------------------------------------------------------


def test_trace_panels(trace_dir: Path, tmp_path: Path) -> None:
    from linklab.plots import plot_trace

    out = tmp_path / "t.png"
    fig = plot_trace(trace_dir, out=out)
    assert _is_png(out)
    ax_q, ax_c, ax_s = fig.axes
    assert ax_q.get_shared_x_axes().joined(ax_q, ax_s)
    series = _series(fig)
    queues = {g for g in series if g.startswith("queue:")}
    assert "queue:L->R" in queues
    peak = (
        pl.read_parquet(trace_dir / "queue.parquet").group_by("link").agg(pl.col("packets").max())
    )
    busy = {f"queue:{lk}" for lk, p in peak.iter_rows() if p > 1}
    assert queues == busy
    assert {g for g in series if g.startswith("cwnd:")} == {f"cwnd:{f}" for f in range(4)}
    seq = pl.read_parquet(trace_dir / "seq.parquet")
    for event in ("sent", "received", "dropped"):
        n = sum(
            len(c.get_offsets())
            for g, cs in series.items()
            if g.startswith(f"seq:{event}:")
            for c in cs
        )
        assert n == seq.filter(pl.col("event") == event).height > 0, event
    assert ax_s.get_xlabel() == "time (s)"
    assert ax_c.get_ylabel() == "cwnd (kB)"
    # chosen links and flows
    fig = plot_trace(trace_dir, links=["S1->L"], flows=[2])
    series = _series(fig)
    assert {g for g in series if g.startswith("queue:")} == {"queue:S1->L"}
    assert {g for g in series if g.startswith("cwnd:")} == {"cwnd:2"}


def test_trace_svg_cli(cli: CliRunner, trace_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "trace.svg"
    proc = cli("plot-trace", trace_dir, "-o", out, "--flow", "0", "--flow", "1")
    assert proc.returncode == 0, proc.stderr
    assert _is_svg(out)
    assert out.stat().st_size < 3_000_000  # scatter is rasterised


# --- CLI ---------------------------------------------------------------------------


def test_cli_plot_png_and_scatter(cli: CliRunner, sweep2: Path, tmp_path: Path) -> None:
    out = tmp_path / "m.png"
    proc = cli("plot", sweep2, "--x", "per", "--y", "goodput_bps", "--hue", "flows", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert _is_png(out)
    out = tmp_path / "sc.svg"
    proc = cli("plot", sweep2, "--scatter", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert _is_svg(out)
    proc = cli("plot", sweep2, "--x", "flows", "--y", "retransmits", "--where", "per=0.1",
               "-o", tmp_path / "w.png")  # fmt: skip
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--x", "per", "--y", "goodput"], ["unknown y metric 'goodput'", "goodput_bps"]),
        (["--x", "nope", "--y", "goodput_bps"], ["unknown x parameter 'nope'", "per, flows"]),
        (["--x", "per", "--y", "goodput_bps", "--hue", "zz"], ["'zz'", "per, flows"]),
        (["--x", "per"], ["--y"]),
        (["--x", "per", "--y", "goodput_bps", "--where", "flows=3"], ["flows", "2, 10"]),
        (["--x", "per", "--y", "goodput_bps", "--where", "flows"], ["NAME=VALUE"]),
        (["--scatter", "--x", "per"], ["unknown x metric 'per'", "delay_mean_s"]),
    ],
)
def test_cli_plot_bad_names(
    cli: CliRunner, sweep2: Path, tmp_path: Path, args: list[str], needles: list[str]
) -> None:
    out = tmp_path / "x.png"
    assert_bad_input(cli("plot", sweep2, *args, "-o", out), *needles)
    assert not out.exists()


def test_cli_plot_bad_dirs_and_outputs(cli: CliRunner, sweep2: Path, tmp_path: Path) -> None:
    xy = ["--x", "per", "--y", "goodput_bps"]
    assert_bad_input(cli("plot", tmp_path / "none", *xy, "-o", "a.png"), "does not exist")
    (tmp_path / "empty").mkdir()
    assert_bad_input(cli("plot", tmp_path / "empty", *xy, "-o", "a.png"), "no summary.parquet")
    assert_bad_input(cli("plot", sweep2, *xy, "-o", "a.jpg"), "'.jpg'", ".png, .svg, .pdf")
    assert_bad_input(cli("plot", sweep2, *xy, "-o", tmp_path / "no/dir/a.png"), "a.png")
    (tmp_path / "d.png").mkdir()
    assert_bad_input(cli("plot", sweep2, *xy, "-o", tmp_path / "d.png"), "is a directory")
    assert_bad_input(cli("plot", sweep2, *xy), "-o")
    # an existing file is untouched by a failing command
    keep = tmp_path / "keep.png"
    keep.write_bytes(b"old")
    assert_bad_input(cli("plot", sweep2, "--x", "per", "--y", "bad", "-o", keep), "bad")
    assert keep.read_bytes() == b"old"


def test_cli_plot_trace_bad_input(cli: CliRunner, trace_dir: Path, tmp_path: Path) -> None:
    assert_bad_input(cli("plot-trace", tmp_path / "nope", "-o", "t.png"), "does not exist")
    (tmp_path / "half").mkdir()
    assert_bad_input(cli("plot-trace", tmp_path / "half", "-o", "t.png"), "cwnd.parquet")
    assert_bad_input(cli("plot-trace", trace_dir, "-o", "t.jpg"), ".png, .svg")
    assert_bad_input(cli("plot-trace", trace_dir, "--link", "X->Y", "-o", "t.png"), "X->Y", "L->R")
    assert_bad_input(
        cli("plot-trace", trace_dir, "--flow", "9", "-o", "t.png"), "'9'", "0, 1, 2, 3"
    )


def test_run_does_not_import_plotting() -> None:
    code = (
        "import sys, linklab.cli as c; c.build_parser();"
        "print(sorted(m for m in ('matplotlib', 'polars', 'linklab.plots', 'linklab.report')"
        " if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=cli_env(), capture_output=True, text=True, check=True
    )
    assert proc.stdout.strip() == "[]"


def test_plots_and_reports_take_what_sweep_returned(tmp_path: Path) -> None:
    """plot_metric and write_report with a SweepResult raised a TypeError (issue 16)."""
    import linklab
    from linklab.plots import PlotError, plot_metric
    from linklab.report import write_report

    scenario = TINY
    on_disk = linklab.sweep(scenario, params={"per": [0.0, 0.02]}, out=tmp_path / "sw")
    in_memory = linklab.sweep(scenario, params={"per": [0.0, 0.02]})
    for res in (on_disk, in_memory):
        png = tmp_path / f"{id(res)}.png"
        plot_metric(res, "per", "goodput_bps", out=png)
        assert png.stat().st_size > 0
    assert write_report(on_disk, tmp_path / "r.html").stat().st_size > 0
    with pytest.raises(PlotError, match="in memory"):
        write_report(in_memory, tmp_path / "r2.html")


# --- figures for papers (issue 35, item 13) -------------------------------------


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_pdf_and_300_dpi_png(sweep2: Path, tmp_path: Path) -> None:
    from linklab.plots import plot_metric

    fig = plot_metric(sweep2, x="per", y="goodput_bps", out=tmp_path / "g.png")
    w, h = fig.get_size_inches()
    assert _png_size(tmp_path / "g.png") == (round(w * 300), round(h * 300))
    for name in ("a.pdf", "b.pdf"):
        plot_metric(sweep2, x="per", y="goodput_bps", out=tmp_path / name)
    pdf = (tmp_path / "a.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-") and b"CreationDate" not in pdf
    assert pdf == (tmp_path / "b.pdf").read_bytes(), "same figure, same bytes"


def test_confidence_bars_stop_at_zero(tmp_path: Path) -> None:
    """Two runs with 2 and 3 timeouts: 2.5 ± 6.35 at 95 % (t = 12.7 with one degree of
    freedom) would reach -3.85 timeouts; the bar stops at 0 and the title says how the
    bars are formed."""
    from linklab.plots import bounded_errors, metric_bounds, plot_metric

    assert bounded_errors([2.5], [6.35], (0.0, math.inf)) == [[2.5], [6.35]]
    assert bounded_errors([0.9], [0.3], metric_bounds("rwnd_limited_fraction")) == [
        [0.3],
        [pytest.approx(0.1)],
    ]
    assert metric_bounds("flow[f1].goodput_bps") == (0.0, math.inf)
    d = make_sweep(tmp_path / "s", {"per": [0.0, 0.1, 0.2]}, reps=2)
    fig = plot_metric(d, x="per", y="timeouts")
    lows = [
        seg[:, 1].min()
        for container in fig.axes[0].containers
        for coll in container.lines[2]
        for seg in coll.get_segments()
    ]
    assert lows and min(lows) >= 0.0, lows
    summary = pl.read_parquet(d / "summary.parquet")
    crossing = summary.filter(pl.col("timeouts_mean") - pl.col("timeouts_ci") < 0).height
    assert crossing > 0, "the synthetic sweep has a t-interval below 0 to cut"
    title = fig._suptitle.get_text()
    assert "95 % Student-t CI, n = 2 runs, cut at 0" in title, title


def test_trace_is_titled_by_its_scenario(trace_dir: Path) -> None:
    from linklab.plots import plot_trace

    fig = plot_trace(trace_dir)
    title = fig._suptitle.get_text()
    assert title.startswith("dumbbell-red-ecn, seed 1"), title
    legend = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert legend[0] == "0 S1->D1", legend
