"""`benches/scale.py --quick` runs and reports every size (the targets are not timed tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cli_env

REPO = Path(__file__).resolve().parents[1]


def test_scale_bench_quick_reports_every_size() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "benches" / "scale.py"), "--quick", "--json"],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=600,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: a target missed on a busy machine
    report = json.loads(done.stdout)
    assert [r["flows"] for r in report["rows"]] == [10, 100, 1000]
    for r in report["rows"]:
        assert r["completed"], r
        assert r["sim_time_s"] == 5.0 and r["events"] > 0
        assert r["events_per_s"] >= r["whole_events_per_s"] > 0
        # Packet-hops per wall-second of the run phase (docs/metrics.md).
        assert r["hops"] > 0 and r["hops_per_s"] == pytest.approx(r["hops"] / r["run_s"])
        assert min(r["build_s"], r["run_s"], r["summary_s"]) > 0
        assert r["wall_time_s"] == pytest.approx(r["build_s"] + r["run_s"] + r["summary_s"])
        assert 10 < r["peak_rss_mib"] < 1024
    statuses = {t["target"]: t["status"] for t in report["targets"]}
    assert len(statuses) == 5
    # The 10 000- and 100 000-flow targets need the full run.
    assert sum(s == "SKIP" for s in statuses.values()) >= 4
