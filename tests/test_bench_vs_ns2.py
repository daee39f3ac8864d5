"""`benches/vs_ns2.py`: linklab beside ns-2.35 itself (Debian's ns2, installed by scripts/test)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from linklab.reproduce.lt_tcp import NS2_PAYLOAD

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benches" / "vs_ns2.py"


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=300, env=env
    )


def test_quick_runs_both_simulators_side_by_side() -> None:
    p = _run("--quick", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert [s["per"] for s in out["summary"]] == [0.0, 0.1]
    assert len(out["rows"]) == 2
    for s in out["summary"]:
        assert s["ns2_run_s"] > 0 and s["linklab_run_s"] > 0 and s["speedup"] > 0
        assert s["ns2_rss_mib"] > 1 and s["linklab_rss_mib"] > 1
        assert s["linklab_hops_per_s"] > 0
        # A whole process includes its event loop.
        assert s["ns2_process_s"] > s["ns2_run_s"] and s["linklab_process_s"] > s["linklab_run_s"]
        assert s["process_speedup"] == pytest.approx(s["ns2_process_s"] / s["linklab_process_s"])
    # Every delivered data packet crossed the dumbbell's three links (ACKs and lost
    # packets add more): the hop count is at least three per delivered payload.
    for r in out["rows"]:
        delivered = r["linklab_goodput_mbit"] * 1e6 * 20 / 8 / NS2_PAYLOAD
        assert r["linklab_hops"] >= 3 * delivered > 0
    # Error-free, both fill the 10 Mbit/s link alike (20 s).
    s0 = out["summary"][0]
    assert s0["linklab_goodput_mbit"] == pytest.approx(s0["ns2_goodput_mbit"], rel=0.02)


def test_repeat_takes_the_median_of_each_side() -> None:
    p = _run("--per", "0", "--seeds", "1", "--duration", "5", "--repeat", "3", "--json")
    assert p.returncode == 0, p.stderr
    (r,) = json.loads(p.stdout)["rows"]
    for k in ("ns2_run_s", "ns2_process_s", "linklab_run_s", "linklab_process_s"):
        assert len(r[f"{k}_all"]) == 3 and all(x > 0 for x in r[f"{k}_all"])
        assert r[k] == statistics.median(r[f"{k}_all"])
    assert r["linklab_hops_per_s"] == pytest.approx(r["linklab_hops"] / r["linklab_run_s"])


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--per", "0.1,x"), "--per"),
        (("--per", "1.5"), "[0, 1)"),
        (("--seeds", "0"), "--seeds"),
        (("--repeat", "0"), "--repeat"),
    ],
)
def test_bad_flags_exit_2(args: tuple[str, ...], needle: str) -> None:
    p = _run(*args)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "error:" in p.stderr and needle in p.stderr and p.stdout == ""


def test_without_ns2_exit_2_saying_how_to_install_it(tmp_path: Path) -> None:
    # Only PATH changes: PYTHONPATH (a worktree's linklab) stays.
    p = _run("--quick", env={**os.environ, "PATH": str(tmp_path)})
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip() == (
        "vs_ns2: error: ns-2's `ns` is not on PATH; install it "
        "(Debian/Ubuntu: apt-get install ns2, which is ns-2.35)"
    )
