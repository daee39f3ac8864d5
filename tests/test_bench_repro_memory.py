"""`benches/repro_memory.py`: runs a reproduction and reports its wall time and peak
memory (the 400 MiB target is the benchmark's, not a timed test's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import cli_env

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benches" / "repro_memory.py"


def test_repro_memory_bench_reports_a_quick_reproduction() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--only", "arq-persistence", "--json"],
        capture_output=True, text=True, env=cli_env(), timeout=600,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr  # 1: the target missed
    report = json.loads(done.stdout)
    [row] = report["rows"]
    assert row["reproduction"] == "arq-persistence" and row["quick"] is True
    assert row["exit_status"] == 0 and row["runs"] > 0 and row["wall_s"] > 0
    # The probe sees the reproduction's own process: Python with polars loaded.
    assert 30 < row["peak_rss_mib"] < 1024
    assert row["status"] == ("PASS" if row["peak_rss_mib"] < 400 else "FAIL")
    # the CPU seconds of the command and its workers, and the load it ran under
    assert 0 < row["cpu_s"] and row["load_start"] >= 0 and row["load_end"] >= 0
    assert row["target_s"] is None  # a quick form has no time target


def test_repro_memory_bench_refuses_an_unknown_reproduction() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--only", "rlc-aqm,nope"],
        capture_output=True, text=True, env=cli_env(), timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--only 'rlc-aqm,nope': unknown nope; allowed: rlc-aqm" in done.stderr
    assert "Traceback" not in done.stderr


def test_repro_memory_bench_refuses_to_keep_over_earlier_outputs(tmp_path: Path) -> None:
    (tmp_path / "wipemu").mkdir()
    done = subprocess.run(
        [sys.executable, str(BENCH), "--only", "wipemu", "--keep", str(tmp_path)],
        capture_output=True, text=True, env=cli_env(), timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert f"--keep {tmp_path}: wipemu exist there; allowed: a directory" in done.stderr
    assert "Traceback" not in done.stderr
