"""Per-flow delay and jitter as ns-3's FlowMonitor users read them (issue 35, item 16):
the summary's quantiles p50/p90/p95/p99/p99.9 and the jitter (|delay − the previous
arriving data packet's delay|), checked against the packets of a trace; the drops, RTT
and RTO trace tables against the summary's counts; the optional fixed-width histograms
against the delay samples.

Time: about 5 s.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import linklab
from conftest import TINY

# Two flows through a 10-packet buffer with 3 % random loss on the way: overflow,
# link loss, fast retransmits and timeouts in 8 s.
LOSSY = (
    TINY.replace('limit = "100p"', 'limit = "10p"')
    .replace('duration = "2s"', 'duration = "8s"')
    .replace('to = "B"', 'to = "B"\ncount = 2')
)

KEYS = [
    "delay_mean_s", "delay_p50_s", "delay_p90_s", "delay_p95_s", "delay_p99_s",
    "delay_p999_s", "delay_max_s", "jitter_mean_s", "jitter_p50_s", "jitter_p90_s",
    "jitter_p99_s", "jitter_p999_s",
]  # fmt: skip


def test_delay_and_jitter_match_the_packets() -> None:
    """Without loss each segment is sent once, so the trace gives every data packet's
    delay (received − sent); the mean delay and the mean jitter are exact in the
    summary, the quantiles within the histogram's 1 % (docs/metrics.md)."""
    # A queue that fills and drains: the delays vary, so the jitter is not 0.
    r = linklab.run(TINY.replace('duration = "2s"', 'duration = "5s"'), trace=True)
    flow = r.summary["flows"][0]
    assert set(KEYS) <= set(flow) and set(KEYS) <= set(r.summary["aggregate"])
    seq = r.traces["seq"]
    sent = seq.filter(pl.col("event") == "sent").group_by("seq").agg(pl.col("time_s").min())
    got = (
        seq.filter(pl.col("event") == "received")
        .join(sent, on="seq", suffix="_sent")
        .sort("time_s", maintain_order=True)
    )
    assert got.height == seq.filter(pl.col("event") == "received").height > 1000
    delays = (got["time_s"] - got["time_s_sent"]).to_list()
    jitter = [abs(b - a) for a, b in zip(delays, delays[1:], strict=False)]
    assert flow["delay_mean_s"] == pytest.approx(sum(delays) / len(delays), rel=1e-6)
    assert flow["jitter_mean_s"] == pytest.approx(sum(jitter) / len(jitter), rel=1e-6)
    assert flow["jitter_mean_s"] > 0
    ordered = sorted(delays)
    for q, key in ((0.5, "delay_p50_s"), (0.9, "delay_p90_s"), (0.99, "delay_p99_s")):
        exact = ordered[min(len(ordered) - 1, int(q * len(ordered)))]
        assert flow[key] == pytest.approx(exact, rel=0.01, abs=2e-6), key
    chain = [flow[k] for k in ("delay_p50_s", "delay_p90_s", "delay_p95_s", "delay_p99_s",
                               "delay_p999_s", "delay_max_s")]  # fmt: skip
    assert chain == sorted(chain)
    jchain = [flow[k] for k in ("jitter_p50_s", "jitter_p90_s", "jitter_p99_s", "jitter_p999_s")]
    assert jchain == sorted(jchain)
    # One flow: the aggregate is that flow.
    for k in KEYS:
        assert r.summary["aggregate"][k] == flow[k], k


def test_the_drops_table_matches_the_packet_account() -> None:
    """Every lost packet is a row of the ``drops`` trace with its flow, kind, sequence
    number, link direction and cause; grouped, the rows are the packet account's
    ``dropped`` entries exactly (a queue's overflow and a link's random loss here)."""
    lossy = TINY.replace(
        'queue = { kind = "droptail", limit = "100p" }',
        'queue = { kind = "droptail", limit = "10p" }',
    )
    r = linklab.run(lossy, params={"per": 0.02}, trace=True)
    drops = r.traces["drops"]
    assert drops.columns == ["flow", "time_s", "kind", "seq", "link", "cause"]
    assert drops["time_s"].is_sorted()
    got = {
        (row["kind"], row["link"], row["cause"]): row["len"]
        for row in drops.group_by("kind", "link", "cause").len().iter_rows(named=True)
    }
    want = {
        (leg, d["link"], d["cause"]): d["packets"]
        for f in r.summary["flows"]
        for leg, key in (("data", "data"), ("ack", "acks"))
        for d in f["account"][key]["dropped"]
    }
    assert got == want
    assert {c for _, _, c in got} == {"link_loss", "overflow"}, got
    # The data rows are the seq trace's "dropped" events.
    seq = r.traces["seq"].filter(pl.col("event") == "dropped")
    data = drops.filter(pl.col("kind") == "data")
    assert data["seq"].to_list() == seq["seq"].to_list()


def test_rto_rows_are_the_timeouts_and_rtt_rows_the_samples() -> None:
    """The ``rto`` table has one row per retransmission-timer expiry, so per flow its
    rows are the summary's ``timeouts`` and those with no back-off yet its
    ``timeout_episodes``; each data row's ``seq`` is resent at that instant. The ``rtt``
    table has one row per RTT sample: per flow the summary's ``rtt.samples``, ending at
    its ``rtt.srtt_s`` and ``rtt.rttvar_s``, its smallest sample ``min_rtt_s``."""
    r = linklab.run(LOSSY, params={"per": 0.03}, trace=True)
    rto, rtt, seq = r.traces["rto"], r.traces["rtt"], r.traces["seq"]
    assert rto.columns == [
        "flow", "time_s", "kind", "rto_s", "backoff", "next_rto_s", "seq", "cwnd_bytes",
        "ssthresh_bytes",
    ]  # fmt: skip
    assert rtt.columns == ["flow", "time_s", "sample_s", "srtt_s", "rttvar_s", "rto_s"]
    assert rto["time_s"].is_sorted() and rtt["time_s"].is_sorted()
    flows = r.summary["flows"]
    assert len(flows) == 2
    assert sum(f["timeouts"] for f in flows) >= 2, [f["timeouts"] for f in flows]
    for f in flows:
        mine = rto.filter(pl.col("flow") == f["id"])
        assert mine.height == f["timeouts"], f["name"]
        assert mine.filter(pl.col("backoff") == 0).height == f["timeout_episodes"]
        # Each expiry doubles the timer (RFC 6298 5.5) up to the 60 s cap.
        doubled = mine["next_rto_s"] / mine["rto_s"]
        assert ((doubled - 2).abs() < 1e-9).all(), mine
        samples = rtt.filter(pl.col("flow") == f["id"])
        assert samples.height == f["rtt"]["samples"] > 100
        assert samples["srtt_s"][-1] == f["rtt"]["srtt_s"]
        assert samples["rttvar_s"][-1] == f["rtt"]["rttvar_s"]
        assert samples["sample_s"].min() == f["send_limits"]["min_rtt_s"]
        # The one-way delay is 10 ms: every round trip takes more than 20 ms.
        assert samples["sample_s"].min() > 0.020
    # What was retransmitted: a data expiry's seq leaves at that instant.
    sent = seq.filter(pl.col("event") == "sent").select("flow", "time_s", "seq")
    data = rto.filter(pl.col("kind") == "data").select("flow", "time_s", "seq")
    assert data.height > 0
    assert data.join(sent, on=["flow", "time_s", "seq"], how="semi").height == data.height


def test_histograms_sum_to_the_delay_samples(tmp_path: Path) -> None:
    """``histograms=True`` gives every flow's delay and jitter histograms in bins of
    1 ms (ns-3 FlowMonitor's ``DelayBinWidth``/``JitterBinWidth`` default): a flow's
    delay counts add up to its data packets that arrived (one delay sample each), its
    jitter counts to one fewer, and the bin where the counts pass half holds the
    summary's median delay."""
    r = linklab.run(LOSSY, params={"per": 0.03}, trace=True, histograms=True)
    h = r.histograms
    assert h.columns == ["flow", "metric", "bin", "start_s", "width_s", "count"]
    assert (h["width_s"] == 0.001).all() and (h["count"] > 0).all()
    received = r.traces["seq"].filter(pl.col("event") == "received")
    for f in r.summary["flows"]:
        n = received.filter(pl.col("flow") == f["id"]).height
        mine = h.filter(pl.col("flow") == f["id"])
        delay = mine.filter(pl.col("metric") == "delay")
        assert delay["count"].sum() == n > 500
        assert mine.filter(pl.col("metric") == "jitter")["count"].sum() == n - 1
        assert delay["bin"].is_sorted() and delay["bin"].n_unique() == delay.height
        # Bin starts as the decimal numbers they are (0.013, not 0.013000000000000001).
        assert delay["start_s"].to_list() == [b / 1000 for b in delay["bin"]]
        # The median's bin, with the summary's quantile error (< 1 %) around it.
        half = delay.filter(delay["count"].cum_sum() >= n / 2).row(0, named=True)
        p50 = f["delay_p50_s"]
        assert half["start_s"] * 0.99 <= p50 < (half["start_s"] + 0.001) * 1.01, (half, p50)
    # Without trace, the histograms alone; without either, none.
    only = linklab.run(LOSSY, params={"per": 0.03}, histograms=True)
    assert list(only.traces) == ["histograms"]
    assert_frame_equal(only.histograms, h)
    with pytest.raises(KeyError, match="histograms=True"):
        _ = linklab.run(LOSSY, params={"per": 0.03}).histograms
    # A [histograms] table sets the widths (and switches them on by itself).
    wide = LOSSY + '[histograms]\ndelay_bin_width = "5ms"\n'
    h5 = linklab.run(wide, params={"per": 0.03}).histograms
    widths = dict(h5.group_by("metric").agg(pl.col("width_s").unique()).iter_rows())
    assert widths == {"delay": [0.005], "jitter": [0.001]}
    assert h5["count"].sum() == h["count"].sum()
    with pytest.raises(linklab.ScenarioError) as e:
        linklab.run(wide.replace('"5ms"', '"0s"'))
    assert e.value.path == "histograms.delay_bin_width"


def test_cli_histograms_go_beside_the_traces(tmp_path: Path) -> None:
    """``linklab run --histograms --trace DIR`` writes histograms.parquet, the same
    table as the API's; without ``--trace`` it is refused (exit 2, one line)."""
    scenario = tmp_path / "lossy.toml"
    scenario.write_text(LOSSY)
    cmd = [sys.executable, "-m", "linklab", "run", str(scenario), "--set", "per=0.03", "-q"]
    bad = subprocess.run([*cmd, "--histograms"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--trace" in bad.stderr, bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    out = tmp_path / "t"
    done = subprocess.run([*cmd, "--histograms", "--trace", str(out)], capture_output=True)
    assert done.returncode == 0, done.stderr
    api = linklab.run(LOSSY, params={"per": 0.03}, histograms=True).histograms
    assert_frame_equal(pl.read_parquet(out / "histograms.parquet"), api)
    assert (out / "rtt.parquet").is_file() and (out / "rto.parquet").is_file()
