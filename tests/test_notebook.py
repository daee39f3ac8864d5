"""What a notebook user meets (issue 35, item 8): figures that display without
``%matplotlib inline``, ``plot_trace`` of a ``Result``, a sweep's HTML view and tidy
tables, flat result tables with real dtypes, and the ``jupyter`` extra.

Time: about 5 s.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import polars as pl
import pytest

import linklab
from conftest import TINY
from linklab.plots import PlotError, plot_metric, plot_trace

ROOT = Path(__file__).resolve().parents[1]
PNG = b"\x89PNG\r\n\x1a\n"

# Two flows, one lossy direction: drops by cause in the packet account.
TWO_FLOWS = TINY.replace(
    '[[flows]]\nfrom = "A"\nto = "B"\n', '[[flows]]\nfrom = "A"\nto = "B"\ncount = 2\n'
)


@pytest.fixture(scope="module")
def result() -> linklab.Result:
    return linklab.run(TWO_FLOWS, params={"per": 0.02}, trace=True)


@pytest.fixture(scope="module")
def sweep() -> linklab.SweepResult:
    return linklab.sweep(TWO_FLOWS, {"per": [0.0, 0.02]}, reps=2, jobs=1, progress=False)


def test_figures_display_in_a_notebook_without_matplotlib_inline(
    result: linklab.Result, sweep: linklab.SweepResult
) -> None:
    """IPython's rich display (what a notebook cell shows) finds a PNG for every
    figure, with no pyplot and no inline backend set up."""
    figs = [plot_trace(result), plot_metric(sweep, x="per", y="goodput_bps")]
    for fig in figs:
        assert fig._repr_png_().startswith(PNG)
    ipython = pytest.importorskip("IPython.core.formatters", reason="IPython is not installed")
    for fig in figs:
        data, _ = ipython.DisplayFormatter().format(fig)
        assert "image/png" in data and len(data["image/png"]) > 1000, sorted(data)


def test_plot_trace_takes_a_result(result: linklab.Result, tmp_path: Path) -> None:
    fig = plot_trace(result, out=tmp_path / "t.png")
    assert fig._suptitle is not None and fig._suptitle.get_text() == "tiny, seed 1  (per=0.02)"
    assert (tmp_path / "t.png").read_bytes().startswith(PNG)
    # Both flows drawn in the cwnd panel.
    cwnd = [ln.get_gid() for ln in fig.axes[1].get_lines()]
    assert cwnd == ["cwnd:0", "cwnd:1"]
    with pytest.raises(PlotError, match=r"no queue, cwnd, seq trace; run it with .*trace=True"):
        plot_trace(linklab.run(TINY))


def test_result_tables_are_flat_with_real_dtypes(result: linklab.Result) -> None:
    flows = result.flows
    assert flows.columns[:4] == ["name", "id", "from", "to"]
    assert flows.height == 2
    for table in (flows, result.links, result.queues):
        odd = {c: t for c, t in table.schema.items() if t == pl.Null or isinstance(t, pl.Struct)}
        assert not odd, odd
    # completed_s: no flow completes (unbounded transfers), yet a Float64 column.
    assert flows.schema["completed_s"] == pl.Float64
    assert flows["completed_s"].null_count() == 2
    # The packet account flattened: drops by cause add up to the total.
    s = result.summary["flows"][0]["account"]["data"]
    total = sum(d["packets"] for d in s["dropped"])
    assert total > 0
    assert flows["account_data_dropped"][0] == total
    assert flows["account_data_dropped_link_loss"][0] == total
    assert flows["send_limits_busy_s"][0] == result.summary["flows"][0]["send_limits"]["busy_s"]
    q = result.queues
    assert q.columns[:2] == ["link", "kind"]
    assert {"drops_overflow", "drops_aqm_early", "drops_aqm_forced"} <= set(q.columns)
    assert result.links.columns[0] == "name"


def test_sweep_tidy_tables(sweep: linklab.SweepResult) -> None:
    """One row per run and flow, with the run's parameters and the flow's metrics:
    the same numbers as the wide ``runs`` columns."""
    tidy = sweep.flows
    assert tidy.height == sweep.runs.height * 2
    assert tidy.columns[:6] == ["point", "rep", "seed", "per", "status", "flow"]
    assert {"goodput_bps", "delay_mean_s", "timeouts", "retransmits"} <= set(tidy.columns)
    wide = sweep.runs.select("point", "rep", pl.col("flow[A->B#1].goodput_bps").alias("g"))
    mine = tidy.filter(pl.col("flow") == "A->B#1").select(
        "point", "rep", pl.col("goodput_bps").alias("g")
    )
    assert mine.equals(wide)
    assert set(sweep.queues["queue"]) == {"A->B", "B->A"}
    assert "throughput_bps" in sweep.links.columns


def test_sweep_result_has_an_html_view(sweep: linklab.SweepResult) -> None:
    html = sweep._repr_html_()
    assert "<table>" in html and "<th>per</th>" in html and "goodput_bps" in html
    assert html.count("<tr>") == 1 + sweep.summary.height
    assert "2 points × 2 reps" in repr(sweep)


def test_the_jupyter_extra_brings_ipywidgets() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert any(d.startswith("ipywidgets") for d in extras["jupyter"])
