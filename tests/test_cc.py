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
    a.pop("wall_time_s")
    b.pop("wall_time_s")
    assert a == b


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
