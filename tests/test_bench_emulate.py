"""`benches/emulate.py --quick`: the emulator's ceiling and kernel-vs-linklab rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import cli_env

REPO = Path(__file__).resolve().parents[1]


def test_emulate_bench_quick() -> None:
    if os.geteuid() != 0 or not os.path.exists("/dev/net/tun"):
        print("SKIP: the emulator bench needs root and /dev/net/tun")
        return
    done = subprocess.run(
        [sys.executable, str(REPO / "benches" / "emulate.py"), "--quick", "--json"],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    ceiling = {r["link"]: r for r in out["ceiling"]}
    assert set(ceiling) == {"null", "1 Gbit/s"}
    # Loose: a shared 2-core CI machine; docs/benchmarks.md has the measured values.
    assert ceiling["1 Gbit/s"]["goodput_mbit"] > 200, ceiling
    for r in ceiling.values():
        t = r["timing_error_us"]
        assert 0 <= t["p50"] <= t["p99"] <= t["max"], r
        assert 0 < r["loop_cpu"] <= 1.05, r
    # The grid's quick form: two cells, one run a side, 5 s.
    rows = {(r["kernel"], r["queue"], r["flows"], r["rtt_ms"]): r for r in out["compare"]}
    assert set(rows) == {("cubic", "droptail", 1, 20), ("bbr", "codel", 4, 20)}
    assert out["priority"] == "fifo" and out["timing_p99_bound_ms"] == 1.0
    for r in rows.values():
        assert r["ours"] == {"cubic": "cubic", "bbr": "bbr"}[r["kernel"]]
        (k,) = r["kernel_runs"]
        (s,) = r["linklab_runs"]
        assert k["scheduler"]["policy"] == "fifo", k
        # Both sides fill most of the 10 Mbit/s link in 5 s (slow start included) ...
        assert k["goodput_mbit"] > 6 and s["goodput_mbit"] > 6, r
        assert k["goodput_mbit"] <= 10 and s["goodput_mbit"] <= 10, r
        # ... through the same queue, whose delay each side measures alike (Little's
        # law on the link model's own counters): a drop-tail queue of 1 BDP (17
        # packets, 20.4 ms) holds at most that; CoDel's and the kernel's are > 0.
        for m in (k, s):
            assert 0 < m["qdelay_ms"] < 1000, m
            assert m["retransmits"] >= 0 and m["queue_drops"] >= 0, m
        assert r["goodput_mbit"]["ratio"] == k["goodput_mbit"] / s["goodput_mbit"]
        assert r["flagged"] == (k["timing_p99_ms"] > 1.0 or k["tun_drops"] > 0)
        # The verdict: goodput within 10 %, queueing delay within 15 % (or 1.2 ms).
        assert r["goodput_ok"] == (abs(r["goodput_mbit"]["ratio"] - 1) <= 0.10), r
        dk, ds = k["qdelay_ms"], s["qdelay_ms"]
        assert r["qdelay_ok_strict"] == (abs(dk / ds - 1) <= 0.15), r
        assert r["qdelay_ok"] == (r["qdelay_ok_strict"] or abs(dk - ds) <= 1.2), r
        assert r["agrees"] == (r["goodput_ok"] and r["qdelay_ok"]), r
    assert out["pass_rate"]["cells"] == 2
    assert out["pass_rate"]["agrees"] == sum(r["agrees"] for r in rows.values())
    for m in (
        rows["cubic", "droptail", 1, 20]["kernel_runs"]
        + rows["cubic", "droptail", 1, 20]["linklab_runs"]
    ):
        assert m["qdelay_ms"] <= 17 * 1.2 + 0.1, m
