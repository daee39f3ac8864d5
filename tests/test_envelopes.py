"""The envelope grid (issue 33 item 4): what any correct stack does on a clean path.

``test_covering_grid`` runs the covering subset (``envelopes.covering_grid``: every
cc × queue × buffer at each flow count, meeting every MSS and RTT; 264 of the 2 376
cells, at the full durations of ``envelopes.durations``) in two processes and fails on
any cell that misses its envelope without an explanation: neither a known property
(``envelopes.KNOWN``) nor a run showing a model bug's signature (``envelopes.BUGS``,
each pinned below by a cell that shows it). The whole grid is the command
``python3 -m linklab.check envelopes`` (docs/validation.md has its last result).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import cli_env
from linklab.check import envelopes as E


def _cell(label: str) -> E.Cell:
    return E.parse_label(label)


def test_bounds_are_the_literature_s() -> None:
    """The bounds the grid checks, at the points the literature states them."""
    # One NewReno flow over ½ BDP of drop-tail: ≥ 75 % (Appenzeller et al. 2004).
    half = _cell("reno/droptail/b0.5/n1/mss1448/rtt40")
    assert E.utilisation_bound(half, 5)[0] == pytest.approx(0.75, abs=0.01)
    # Over 1 BDP: ≈ 100 % (capped at FULL for the discreteness).
    assert E.utilisation_bound(_cell("reno/droptail/b1/n1/mss1448/rtt40"), 5)[0] == E.FULL
    # CUBIC's β = 0.7 fills the pipe over ½ BDP.
    assert E.utilisation_bound(_cell("cubic/droptail/b0.5/n1/mss1448/rtt40"), 5)[0] == E.FULL
    # CoDel: the window falls to β·(BDP + target·C).
    codel = _cell("reno/codel/b-/n1/mss1448/rtt40")
    assert E.utilisation_bound(codel, 5)[0] == pytest.approx(0.5 * (1 + 5 / 40), rel=0.02)
    # BBR: ProbeRTT's 200 ms + 2 RTTs once in a 30-s window at 300 ms: 0.99·(1 − 3·0.8/30).
    bbr = _cell("bbr/pie/b-/n1/mss1448/rtt300")
    assert E.utilisation_bound(bbr, 30)[0] == pytest.approx(0.99 * (1 - 3 * 0.8 / 30))
    # Near the target: three targets plus a packet.
    d, _ = E.delay_bound(codel)
    assert d == pytest.approx(0.015 + 1500 * 8 / 10e6)


def test_the_grid_is_whole() -> None:
    cells = E.grid()
    # 5 ccs × (3 queues × 3 buffers + 3 AQMs) + DCTCP × (RED × 3 + 3 AQMs), × 36.
    assert len(cells) == (5 * 12 + 6) * 36 == 2376
    assert len(set(cells)) == len(cells)
    assert min(c.bdp_packets for c in cells) >= E.MIN_BDP_PACKETS
    assert {c.rate_bps for c in cells} == {10_000_000, 100_000_000, 1_000_000_000}


def test_the_window_is_the_tail_of_the_longer_run() -> None:
    """The measure's premise: a run to T0 is the first T0 seconds of the run to T."""
    from linklab import api

    cell = _cell("cubic/codel/b-/n4/mss1448/rtt40")
    t0, t1 = E.durations(cell)
    early = api.run(E.scenario(cell, t0), trace=True).traces
    late = api.run(E.scenario(cell, t1), trace=True).traces
    for name in ("seq", "cwnd"):
        a = early[name]
        b = late[name].filter(late[name]["time_s"] < t0)
        a = a.filter(a["time_s"] < t0)
        assert a.height > 500  # non-trivial tables (847 cwnd, ~15 000 seq rows)
        assert a.equals(b), name


def test_a_miss_names_its_expectation_and_source() -> None:
    cell = _cell("reno/droptail/b0.5/n1/mss1448/rtt40")
    m = {
        "t0_s": 3.0,
        "t1_s": 8.0,
        "utilisation": 0.5,
        "queue_delay_s": 0.0,
        "jain": 1.0,
        "timeouts": 1,
    }
    out = E.Outcome(cell, measures=m, checks=E.evaluate(cell, m))
    assert out.verdict == "MISS"
    assert "util: 0.500, expected ≥ 0.755" in out.reason  # B = 17 packets = 0.51 BDP
    assert "Appenzeller" in out.reason
    assert "rto: 1 data timeouts, expected 0 timeouts" in out.reason


@pytest.mark.parametrize(
    ("label", "bug"),
    [
        # One CUBIC flow over CoDel: ssthresh rose 102 804 → 106 181 → … → 301 285 B
        # while the cut took FlightSize with the SACKed data above a hole; fixed by the
        # cut from min(FlightSize, cwnd).
        ("cubic/codel/b-/n1/mss536/rtt40", "cut-raises-window"),
    ],
)
def test_fixed_model_bugs_stay_fixed(label: str, bug: str) -> None:
    """The cell that showed a fixed bug shows its signature no more."""
    found = " ".join(E.diagnose(_cell(label)))
    assert bug not in found, found


@pytest.mark.parametrize(
    ("label", "bug"),
    [
        # One NewReno-AIMD flow, 1 drop: the fast retransmission's ACK returned 6 ms
        # after the RTO (SRTT + 4·RTTVAR ≈ 0.46 s) fired; Linux's estimator (SRTT +
        # rttvar ≥ 200 ms, re-armed at the head's retransmission) waits for it.
        ("reno/droptail/b0.5/n1/mss8948/rtt300", "early-rto"),
        # One NewReno-AIMD flow over RED: after a timeout at 6.8 s a loss RACK saw was
        # left to the next timeout at 11.0 s; RACK now resends it after a timeout.
        ("reno/red/b4/n1/mss8948/rtt300", "rack-loss-left-to-rto"),
    ],
)
def test_timer_and_rack_bugs_stay_fixed(label: str, bug: str) -> None:
    """The cells that showed the last two model bugs the grid found show their
    signature no more (docs/validation.md)."""
    found = E.diagnose(_cell(label))
    assert not any(k.startswith(bug) for k in found), found


def test_the_covering_grid_covers() -> None:
    """Every setting at every flow count, MSS and RTT; every (flows, MSS, RTT) triple."""
    cells = E.covering_grid()
    assert len(cells) == 264 and len(set(cells)) == 264
    assert set(cells) <= set(E.grid())
    settings = {(c.cc, c.queue, c.buffer_bdp) for c in E.grid()}
    for key in settings:
        mine = [c for c in cells if (c.cc, c.queue, c.buffer_bdp) == key]
        assert {c.flows for c in mine} == set(E.FLOWS), key
        assert {c.mss for c in mine} == set(E.MSSES), key
        assert {c.rtt_ms for c in mine} == set(E.RTTS_MS), key
    triples = {(c.flows, c.mss, c.rtt_ms) for c in cells}
    assert len(triples) == len(E.FLOWS) * len(E.MSSES) * len(E.RTTS_MS)


def test_acks_follow_the_receiver_s_rules() -> None:
    """The ACKs rebuilt from the arrivals: one per two segments or after 40 ms, at
    once for out-of-order data (a duplicate) and for data that fills the hole."""
    arrivals = [(0.0, 0), (0.001, 100), (0.002, 200), (0.003, 400), (0.004, 500), (0.005, 300)]
    acks = E._acks(arrivals, 100)
    assert acks == [(0.001, 200), (0.003, 300), (0.004, 300), (0.005, 600)]
    # The first ACK of 300 was new (it covered segment 200, held by the delayed ACK):
    # one duplicate; the held segment's ACK comes 40 ms later when nothing follows.
    assert E._dupacks(acks, 300, 1.0, 0.0) == 1
    assert E._acks([(0.0, 0)], 100) == [(0.04, 100)]


def test_newreno_timeouts_are_named() -> None:
    """Sixteen NewReno flows without SACK, RTT 4 ms, over RED (83 timeouts in the
    window): every timeout found and named from its flow's traces — a lost
    retransmission, NewReno's recover guard, a window of at most 4 segments — and
    none left as ``rto-other`` (the diagnosis before: 21 ``rto-other``, 2 not found)."""
    cell = _cell("newreno/red/b0.5/n16/mss536/rtt4")
    out = E.run_cell(cell)
    d = out.diagnosis or {}
    kinds = {k: v for k, v in d.items() if k in E.RTO_KINDS}
    assert sum(kinds.values()) == out.measures["timeouts"] > 0, d
    assert "rto-other" not in kinds, d
    assert kinds.get("rto-recover-guard", 0) > 0, d
    assert out.verdict == "EXPLAINED", out.reason


def test_quick_command() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "linklab.check.envelopes", "--quick", "--jobs", "2", "--json"],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=300,
    )
    assert r.returncode in (0, 1), r.stderr
    out = json.loads(r.stdout)
    cells = out["cells"]
    assert len(cells) == len(E.quick_grid()) == 34
    verdicts = {c["verdict"] for c in cells}
    assert verdicts <= {"PASS", "EXPLAINED", "BUG", "MISS"}
    assert r.returncode == (1 if "MISS" in verdicts else 0)
    for c in cells:
        assert c["error"] is None, c
        if c["verdict"] != "PASS":
            assert c["reason"], c


def test_scenario_command_prints_the_cell() -> None:
    """``--scenario CELL`` prints TOML that runs to the cell's summary."""
    from linklab import api

    label = "reno/pie/b-/n2/mss1448/rtt40"
    r = subprocess.run(
        [sys.executable, "-m", "linklab.check.envelopes", "--scenario", label],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    cell = _cell(label)
    mine = api.run(r.stdout).summary["aggregate"]
    grid = api.run(E.scenario(cell, E.durations(cell)[1])).summary["aggregate"]
    assert mine == grid


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (["--jobs", "0"], "invalid --jobs '0'; allowed: an integer ≥ 1"),
        (["--cc", "vegas"], "invalid --cc 'vegas'; allowed: a comma list of reno, newreno"),
        (["--queue", "codel,sfq"], "invalid --queue 'codel,sfq'"),
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--scenario", "cubic/codel/b1/n4/mss1448/rtt40"], "no cell 'cubic/codel/b1/n4/"),
    ],
)
def test_bad_flags(flags: list[str], needle: str) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "linklab.check.envelopes", *flags],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=60,
    )
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert needle in lines[0]
    assert "Traceback" not in r.stderr


def test_covering_grid() -> None:
    """The covering subset: no cell misses its envelope unexplained."""
    outcomes = E.run_grid(E.covering_grid(), jobs=2)
    misses = [o for o in outcomes if o.verdict == "MISS"]
    assert not misses, f"{len(misses)} unexplained misses:\n" + "\n".join(
        f"{o.cell.label}: {o.reason}" for o in misses[:40]
    )


def test_red_time_constant_is_over_a_second_only_at_low_packet_rates() -> None:
    """1/(wq·C): 3.6 s for 9000-byte packets at 10 Mbit/s (139 packets/s), under Adaptive
    RED's one second everywhere else in the grid."""
    slow = _cell("cubic/red/b1/n1/mss8948/rtt300")
    assert E.red_time_constant(slow) == pytest.approx(3.6, rel=0.01)
    over = {c.mss for c in E.grid() if c.queue == "red" and E.red_time_constant(c) > 1.0}
    assert over == {8948}
    assert all(
        c.rtt_ms == 300 for c in E.grid() if c.queue == "red" and E.red_time_constant(c) > 1.0
    )
