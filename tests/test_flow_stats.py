"""Per-flow delay and jitter as ns-3's FlowMonitor users read them (issue 35, item 16):
the summary's quantiles p50/p90/p95/p99/p99.9 and the jitter (|delay − the previous
arriving data packet's delay|), checked against the packets of a trace.

Time: about 2 s.
"""

from __future__ import annotations

import polars as pl
import pytest

import linklab
from conftest import TINY

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
