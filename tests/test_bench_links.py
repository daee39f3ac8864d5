"""`benches/links.py --quick`: every link kind runs over the same bottleneck and is reported
beside the wired link (the speed ratios themselves are benchmark figures, not timed tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cli_env

REPO = Path(__file__).resolve().parents[1]
BENCH = str(REPO / "benches" / "links.py")
KINDS = ["wired", "wired-loss", "ll-fec", "hybrid", "netem", "trace", "rlc_am", "frame_arq"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, BENCH, *args], capture_output=True, text=True, env=cli_env(), timeout=300
    )


def test_links_quick_reports_every_kind() -> None:
    done = _run("--quick", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    rows = {r["kind"]: r for r in report["rows"]}
    assert list(rows) == KINDS
    rate, duration = report["config"]["rate_bps"], report["config"]["duration_s"]
    assert (rate, duration) == (2e6, 5.0)
    for kind, r in rows.items():
        # Each kind carries the four flows: at least half the bottleneck, never more
        # than it (the trace link's constant trace is the same 2 Mbit/s).
        assert 0.5 * rate < r["goodput_bps"] <= rate, (kind, r)
        # Hops: both directions of both links; at least a data packet and its ACK
        # over each link for every 1500-byte packet the goodput needs.
        assert r["hops"] > 2 * r["goodput_bps"] * duration / 8 / 1500, (kind, r)
        assert r["run_s"] > 0 and r["hops_per_s"] > 0, (kind, r)
        assert r["deterministic"], (kind, r)
    assert rows["wired"]["vs_wired"] == 1.0
    # The frame link sends 5 000 frames/s of 50 bytes at 16-QAM (about 8 per hop), but
    # the frames of a packet in one pass (issue 38): a wake-up for a packet's dequeue
    # and one for the frame that finishes it, not one per frame (9.7 events per hop).
    assert 1.1 < rows["frame_arq"]["events_per_hop"] < 2 < 5
    assert rows["wired"]["events_per_hop"] < 1.1


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--only", "foo"], "unknown kind 'foo'"),
        (["--flows", "0"], "allowed: a number > 0"),
        (["--rate", "fast"], "allowed: a positive number with bit"),
        (["--rate", "7Mbit", "--quick"], "whole-millisecond trace gap"),
        (["--repeat", "-1"], "allowed: a number > 0"),
    ],
)
def test_links_bad_flags_exit_2(args: list[str], needle: str) -> None:
    done = _run(*args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert needle in done.stderr and "Traceback" not in done.stderr
