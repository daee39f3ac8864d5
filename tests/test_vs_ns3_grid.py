"""The ns-3 grid (`benches/vs_ns3.py --grid`, issue 33 item 5) without ns-3: linklab's side of
nine committed cells, rerun against the committed ns-3 runs (`benches/results/ns3-grid.json`,
3 seeds each), with the verdicts docs/benchmarks.md ("The grid") records.

Six cells agree within the targets (goodput 10 %, mean queueing delay 15 %), one of them
NewReno over CoDel at 10 Mbit/s, which agrees since linklab's CoDel target counts the frame
ns-3's packets wait in the device queue after their CoDel sojourn (`device_wait_ms`; -10 %
queueing delay without it), and one BBR, one flow (family A until 2026-11-28): ns-3's
`TcpRateLinux` reuses the previous ACK's rate sample when an ACK delivers no packet sent after
the last sample's, so its bottleneck-bandwidth estimate runs above the link (10.01 Mbit/s of
payload on a 9.64 Mbit/s path) and a standing queue of about one BDP builds up to the 2-BDP
window. With Linux's per-ACK sample linklab kept the queue near empty (-90.6 % queueing
delay); the grid's BBR cells now take ns-3's rule (`rate_sample = "ns3"`, with ns-3's
one-segment send quantum, `send_quantum = "ns3"`) and linklab holds ns-3's standing queue
(41.9 ms against 40.0 ms). Three are documented misses, each with the
signature of its measured cause:

* CUBIC over 4 BDP of drop-tail (family C): ns-3.44's PRR adds a segment to DeliveredData on
  every ACK with new SACK information (ns-3 issue #1350), so its recoveries keep sending at
  the pre-loss rate into the full queue, lose segments beyond the recovery point and cut
  twice; linklab (RFC 6937) cuts once and keeps a longer queue. With classic recovery on
  both sides the cell agrees (+0.6 % goodput, +0.7 % delay).
* Westwood+, one flow, 200 ms RTT, MSS 536 (family D): after the single slow-start loss,
  ssthresh = filtered bandwidth estimate x minimum RTT; ns-3's `TcpWestwoodPlus` filters
  with Tustin's approximation (alpha 0.9, one stage, sampled every RTT), linklab with
  Linux's two-stage 7/8 EWMA (samples >= max(RTT, 50 ms)): ssthresh 144.5 against 59.1
  segments, and linklab's goodput is well below ns-3's.
* PIE, 16 NewReno flows over 4 ms (family J): ns-3.44's PIE holds its drop probability at 0
  while the 150-ms burst allowance lasts (RFC 8033 and Linux keep updating it), so in the
  first second, while the 16 flows start, ns-3's queue peaks 1.3-2x higher; the 20-s mean
  queueing delay is 15-25 % below ns-3's with the same goodput. With the burst allowance
  off on both sides the cell agrees (-0.8 % goodput, -11.9 % delay).

Time: about 12 s (27 linklab runs, two at a time, on the shared 2-core machine).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import load_bench

REPO = Path(__file__).resolve().parents[1]


vs = load_bench("vs_ns3")

PASS = (
    "bbr/droptail/f1/mss1448/r10/d18/q4bdp/t20",
    "dctcp/dctcp/f1/mss1448/r10/d18/q4bdp/t20",
    "westwood/droptail/f1/mss1448/r10/d18/q4bdp/t20",
    "bbr/droptail/f4/mss536/r10/d0/q4bdp/t20",
    "cubic/droptail/f4/mss536/r10/d0/q4bdp/t20",
    "newreno/codel/f1/mss1448/r10/d18/q1000p/t20",
)
BBR_RATE_SAMPLE = "bbr/droptail/f1/mss1448/r10/d18/q4bdp/t20"
CUBIC_NS3_PRR = "cubic/droptail/f1/mss1448/r10/d18/q4bdp/t20"
WESTWOOD_FILTER = "westwood/droptail/f1/mss536/r10/d98/q1bdp/t30"
PIE_NS3_BURST = "newreno/pie/f16/mss1448/r10/d0/q1000p/t20"


@pytest.fixture(scope="module")
def report() -> dict:
    cells = [*PASS, CUBIC_NS3_PRR, WESTWOOD_FILTER, PIE_NS3_BURST]
    argv = ["--grid", "--saved-only", "--json", "--jobs", "2"]
    for k in cells:
        argv += ["--cell", k]
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = vs.main(argv)
    rep = json.loads(out.getvalue())
    assert rep["errors"] == [] and rep["n_compared"] == len(cells)
    assert code == 1  # misses present: the grid as a whole is below 90 %
    return {r["key"]: r for r in rep["cells"]}


def test_documented_misses_are_grid_cells() -> None:
    """Every documented miss names a cell of the default grid and a family of causes."""
    cells = {c.key for c in vs.grid_cells(list(vs.CCS), list(vs.GRID_QUEUES), vs.GRID_LEVELS,
                                          "covering")}  # fmt: skip
    assert set(vs.GRID_MISSES) <= cells
    assert set(vs.GRID_MISSES.values()) <= set(vs.GRID_MISS_FAMILY)
    keys = (CUBIC_NS3_PRR, WESTWOOD_FILTER, PIE_NS3_BURST)
    assert [vs.GRID_MISSES.get(k) for k in keys] == ["C", "D", "J"]
    assert not any(k in vs.GRID_MISSES for k in PASS)


def test_cells_compare_three_seeds_each(report: dict) -> None:
    for r in report.values():
        assert r["ns3"]["n"] == r["linklab"]["n"] == vs.GRID_SEEDS, r["key"]


@pytest.mark.parametrize("key", PASS)
def test_agreeing_cells(report: dict, key: str) -> None:
    r = report[key]
    assert r["pass"], (key, r["goodput_rel_diff"], r["queue_delay_rel_diff"])
    assert abs(r["goodput_rel_diff"]) <= vs.TARGET_GRID_GOODPUT
    assert abs(r["queue_delay_rel_diff"]) <= vs.TARGET_GRID_QDELAY


def test_bbr_single_flow_holds_ns3s_standing_queue(report: dict) -> None:
    """With ns-3's rate samples (`rate_sample = "ns3"`, the grid's BBR setting, beside ns-3's
    send quantum) linklab's BBR overestimates the bottleneck as ns-3's does and holds about
    one BDP (40 ms) of standing queue; with Linux's per-ACK samples it held 3.8 ms (family A,
    docs/benchmarks.md)."""
    r = report[BBR_RATE_SAMPLE]
    assert (
        r["pass"] and vs.grid_settings(vs.parse_cell_key(BBR_RATE_SAMPLE))["rate_sample"] == "ns3"
    )
    assert r["ns3"]["queue_delay_s_mean"] > 0.030
    assert r["linklab"]["queue_delay_s_mean"] > 0.030


def test_cubic_droptail_miss_is_ns3_prr(report: dict) -> None:
    r = report[CUBIC_NS3_PRR]
    assert not r["pass"] and r["goodput_pass"]
    # One cut per overflow (linklab) keeps a longer queue than ns-3's two.
    assert r["queue_delay_rel_diff"] > vs.TARGET_GRID_QDELAY


def test_westwood_long_rtt_miss_is_the_estimate_filter(report: dict) -> None:
    r = report[WESTWOOD_FILTER]
    assert not r["pass"]
    # A lower ssthresh after the slow-start loss: linklab's goodput well below ns-3's.
    assert r["goodput_rel_diff"] < -vs.TARGET_GRID_GOODPUT


def test_pie_many_flows_miss_is_ns3s_burst_allowance(report: dict) -> None:
    """ns-3.44's PIE holds its drop probability at 0 while the burst allowance lasts (family
    J), so ns-3's start-up queue is higher and linklab's 20-s mean queueing delay lower at
    the same goodput. With the ECN response through PRR and ns-3's CWR rule alone, linklab's
    queue had been +23 % above ns-3's (family P then); with ns-3's whole ECN state machine
    (`cwr_per_echo`: an echo in recovery enters CWR, no recovery from CWR) it is 18 % below
    again, J's signature (docs/benchmarks.md, "The grid")."""
    r = report[PIE_NS3_BURST]
    assert not r["pass"] and r["goodput_pass"]
    assert r["queue_delay_rel_diff"] < -vs.TARGET_GRID_QDELAY
    assert vs.GRID_MISSES[PIE_NS3_BURST] == "J"
