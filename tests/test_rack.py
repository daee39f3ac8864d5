"""RACK-TLP (RFC 8985, `[tcp] rack = true`), end to end: lost retransmissions and tail
losses repaired without waiting for the retransmission timer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import linklab
from conftest import cli_env

PATH = """
name = "rack"
duration = "30s"
[tcp]
variant = "sack"
rwnd = "1MiB"
{extra}
[[links]]
a = "S"
b = "D"
rate = "10Mbit"
delay = "20ms"
queue = {{ limit = "50p" }}
ab = {{ netem = {{ loss = {{ kind = "random", p = {loss} }} }} }}
[[flows]]
from = "S"
to = "D"
count = {flows}
{flow}
"""


def _agg(extra: str = "", loss: float = 0.02, flows: int = 1, flow: str = "") -> dict:
    text = PATH.format(extra=extra, loss=loss, flows=flows, flow=flow)
    return linklab.run(text, seed=2).summary["aggregate"]


def test_random_loss_without_timeouts() -> None:
    # 10 % random loss: lost retransmissions end in timeouts with RFC 6675
    # alone; RACK finds them lost again and the probe covers tail losses.
    plain = _agg(loss=0.1)
    rack = _agg("rack = true", loss=0.1)
    assert plain["timeouts"] >= 8, plain
    assert rack["timeouts"] <= plain["timeouts"] // 4, (rack, plain)
    assert rack["goodput_bps"] > 1.5 * plain["goodput_bps"], (rack, plain)


def test_ten_bbr_flows_over_a_shallow_buffer() -> None:
    # The ns-3 comparison's failure mode (docs/models/bbr.md): ten BBR flows
    # keep the buffer overflowing; without RACK each lost retransmission
    # costs a timeout.
    plain = _agg('cc = "bbr"', loss=0.0, flows=10)
    rack = _agg('cc = "bbr"\nrack = true', loss=0.0, flows=10)
    assert plain["timeouts"] > 20, plain
    assert rack["timeouts"] < plain["timeouts"] / 5, (rack, plain)
    assert rack["goodput_bps"] > 1.05 * plain["goodput_bps"], (rack, plain)


def test_tail_loss_probe_finishes_short_transfers_sooner() -> None:
    # Many 30-segment transfers over 5 % loss: tail losses wait for the RTO
    # (1 s) without TLP; with it a probe after 2 SRTT repairs them.
    flow = 'bytes = "43800B"\nstart_jitter = "10s"'
    plain = linklab.run(PATH.format(extra="", loss=0.05, flows=40, flow=flow), seed=3).summary
    rack = linklab.run(
        PATH.format(extra="rack = true", loss=0.05, flows=40, flow=flow), seed=3
    ).summary

    def mean_completion(s: dict) -> float:
        done = [f["completed_s"] for f in s["flows"] if f["completed_s"] is not None]
        assert len(done) == 40
        return sum(done) / len(done)

    assert rack["aggregate"]["timeouts"] < plain["aggregate"]["timeouts"]
    assert mean_completion(rack) < mean_completion(plain)


def test_rack_needs_sack(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(
        PATH.format(extra="rack = true", loss=0.0, flows=1, flow="").replace(
            'variant = "sack"', 'variant = "newreno"'
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "linklab", "run", str(bad)],
        capture_output=True,
        text=True,
        env=cli_env(),
    )
    assert done.returncode == 2
    line = done.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "tcp.rack" in line and "needs SACK" in line, line
