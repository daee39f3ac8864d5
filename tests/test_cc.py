"""Congestion controls end to end: `[tcp] cc` chooses CUBIC or Westwood+ (string or table),
each changes the dynamics its specification says it should, and bad `cc` values are
one-line errors with exit status 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import linklab
from conftest import cli_env

REPO = Path(__file__).resolve().parents[1]
SCENARIO = REPO / "scenarios" / "dumbbell-cc-aqm.toml"
SHORT = {"flows": 2, "duration": "20s"}


def _agg(cc_toml: str | None = None, **params: object) -> dict[str, float]:
    """The aggregate of a short run; `cc_toml` replaces the `cc` line when given."""
    text = SCENARIO.read_text()
    if cc_toml is not None:
        text = text.replace('cc = "${cc}"', f"cc = {cc_toml}")
    return linklab.run(text, params=SHORT | params, seed=3).summary["aggregate"]


def test_cubic_keeps_a_longer_standing_queue_than_newreno_over_one_bdp() -> None:
    # β = 0.7 instead of 0.5 and the cubic regrowth towards W_max keep the bottleneck
    # fuller (RFC 9438 §1, §4.6): a longer mean one-way delay, at any flow count.
    for flows in (2, 10):
        cubic = _agg(None, cc="cubic", flows=flows)
        reno = _agg(None, cc="newreno", flows=flows)
        assert cubic["delay_mean_s"] > reno["delay_mean_s"] + 0.002, flows
        assert cubic["fast_retransmits"] > 0


def test_string_and_table_forms_are_the_same_model() -> None:
    assert _agg('"cubic"') == _agg('{ kind = "cubic" }')
    assert _agg('{ kind = "cubic", beta = 0.5, c = 0.1 }') != _agg('"cubic"')


def test_westwood_keeps_its_window_through_random_loss() -> None:
    # Westwood+'s purpose (Mascolo et al.): a random loss sets ssthresh to BWE·RTT_min,
    # about one BDP when the pipe is full, where Reno halves on every loss. With 1 %
    # random loss on the bottleneck it keeps several times Reno's goodput.
    bottleneck = 'queue = { kind = "${queue}", limit = "${limit}" }'
    text = SCENARIO.read_text().replace(bottleneck, bottleneck + "\nab = { loss = 0.01 }")

    def goodput(cc: str) -> float:
        run = linklab.run(text.replace('cc = "${cc}"', f"cc = {cc}"), params=SHORT, seed=3)
        return float(run.summary["aggregate"]["goodput_bps"])

    west, reno = goodput('"westwood"'), goodput('"newreno"')
    assert west > 2 * reno, (west, reno)
    assert goodput('{ kind = "westwood", min_interval = "50ms" }') == west


def test_dctcp_fills_the_pipe_with_a_queue_near_k() -> None:
    # RFC 8257: with a step marker at K = 20 packets (RED, w_q = 1, marking everything
    # above K) DCTCP's α/2 cuts keep the link busy with a standing queue near K, where
    # NewReno's halving on every mark leaves the link idle at times.
    marker = (
        'queue = { kind = "red", limit = "${limit}", minth = 20, maxth = 21, maxp = 1.0,'
        " wq = 1.0, gentle = false, ecn = true, hard_drop = false, mean_pkt_size = 500 }"
    )
    text = SCENARIO.read_text().replace('queue = { kind = "${queue}", limit = "${limit}" }', marker)

    def run(cc: str) -> dict[str, object]:
        params = SHORT | {"cc": cc, "ecn": True, "limit": "1000p", "flows": 4}
        return linklab.run(text, params=params, seed=2).summary

    dctcp, reno = run("dctcp"), run("newreno")
    assert dctcp["aggregate"]["goodput_bps"] > 1.1 * reno["aggregate"]["goodput_bps"]
    (q,) = [q for q in dctcp["queues"] if q["link"] == "L->R"]
    assert 10 < q["mean_packets"] < 30 and q["ecn_marks"] > 0 and q["drops"]["overflow"] == 0


def test_runs_are_deterministic() -> None:
    a = linklab.run(SCENARIO, params=SHORT, seed=9).summary
    b = linklab.run(SCENARIO, params=SHORT, seed=9).summary
    for k in ("wall_time_s", "hops_per_s"):
        a.pop(k)
        b.pop(k)
    assert a == b


BBR_PATH = """
name = "bbr"
duration = "20s"
[tcp]
cc = "{cc}"
variant = "sack"
rwnd = "4MiB"
{extra}
[[links]]
a = "S"
b = "D"
rate = "10Mbit"
delay = "20ms"
queue = {{ limit = "{limit}" }}
[[flows]]
from = "S"
to = "D"
count = {flows}
"""


def _bbr_path(cc: str = "bbr", flows: int = 1, limit: str = "40p", extra: str = "") -> dict:
    text = BBR_PATH.format(cc=cc, flows=flows, limit=limit, extra=extra)
    return linklab.run(text, seed=1).summary["aggregate"]


def test_bbr_fills_the_pipe_with_a_small_queue() -> None:
    # One flow, 10 Mbit/s, 40 ms RTT, a deep buffer: BBR keeps about one BDP
    # in the queue at most (cwnd 2 BDP) where CUBIC fills the buffer.
    bbr = _bbr_path(limit="400p")
    cubic = _bbr_path(cc="cubic", limit="400p")
    assert bbr["goodput_bps"] > 0.9 * 10e6 * 1460 / 1500
    assert bbr["delay_mean_s"] < 0.045, bbr  # base one-way delay 20 ms + < 1 BDP
    assert cubic["delay_mean_s"] > 2 * bbr["delay_mean_s"], (cubic, bbr)
    assert bbr["timeouts"] == 0


def test_pacing_spreads_the_start_up_burst() -> None:
    # The first window (below the BDP): unpaced, it leaves
    # as one burst and queues at the bottleneck; paced at 2 x cwnd / srtt, its
    # packets arrive spaced and the queue stays near empty.
    def max_queue(extra: str) -> int:
        text = BBR_PATH.format(cc="cubic", flows=1, limit="400p", extra=extra)
        text = text.replace('duration = "20s"', 'duration = "75ms"')
        queues = linklab.run(text, seed=1).summary["queues"]
        return next(q for q in queues if q["link"] == "S->D")["max_packets"]

    burst = max_queue("initial_window = 10")
    paced = max_queue("initial_window = 10\npacing = true")
    assert burst >= 9 and paced <= 2, (burst, paced)


def test_rto_keeps_sack_resends_less() -> None:
    base = _bbr_path(flows=10)
    keep = _bbr_path(flows=10, extra="rto_keeps_sack = true")
    assert base["timeouts"] > 0
    assert keep["retransmits"] < base["retransmits"], (keep, base)


@pytest.mark.parametrize(
    ("cc", "path", "words"),
    [
        ('"vegas"', "tcp.cc", '"vegas" is not a congestion control kind'),
        ('{ kind = "cubic", beta = 1.2 }', "tcp.cc.beta", "0 < beta < 1"),
        ('{ kind = "cubic", c = -1 }', "tcp.cc.c", "need C > 0"),
        ('{ kind = "newreno", hystart = false }', "tcp.cc.hystart", "unknown key"),
        ("7", "tcp.cc", "neither a congestion control kind nor a table"),
        ('{ kind = "westwood", min_interval = "0s" }', "tcp.cc.min_interval", "positive"),
        ('"dctcp"', "tcp.cc", "needs ECN"),
        ('{ kind = "dctcp", g = 0 }', "tcp.cc.g", "0 < g"),
        ('{ kind = "bbr", high_gain = 0.5 }', "tcp.cc.high_gain", "above 1"),
        ('{ kind = "bbr", bw_rounds = 0 }', "tcp.cc.bw_rounds", "1 to 1000"),
        ('{ kind = "bbr", probe_rtt = "1s" }', "tcp.cc.probe_rtt", "unknown key"),
    ],
)
def test_bad_cc_is_one_line_exit_2(tmp_path: Path, cc: str, path: str, words: str) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(SCENARIO.read_text().replace('cc = "${cc}"', f"cc = {cc}"))
    done = subprocess.run(
        [sys.executable, "-m", "linklab", "run", str(bad)],
        capture_output=True,
        text=True,
        env=cli_env(),
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{path}:" in lines[0] and words in lines[0], lines[0]
