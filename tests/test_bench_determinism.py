"""`benches/determinism.py`: every shipped scenario's summary, compared across builds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benches" / "determinism.py"
CASES = "netem-path,bench-vs-ns3"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(BENCH), "--duration", "2s", "--only", CASES, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_same_build_is_identical_and_a_change_is_named(tmp_path: Path) -> None:
    first = _run("--out", str(tmp_path / "a"))
    assert first.returncode == 0, first.stderr
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert files == ["bench-vs-ns3.json", "netem-path.json"]
    summary = json.loads((tmp_path / "a" / "bench-vs-ns3.json").read_text())
    assert "wall_time_s" not in summary and "hops_per_s" not in summary
    assert summary["hops"] > 0 and summary["sim_time_s"] == 2.0
    same = _run("--out", str(tmp_path / "b"), "--against", str(tmp_path / "a"))
    assert same.returncode == 0, same.stdout + same.stderr
    assert same.stdout.strip().endswith("all identical")
    # One changed number in the stored summary is found and named.
    summary["events"] += 1
    (tmp_path / "a" / "bench-vs-ns3.json").write_text(json.dumps(summary))
    changed = _run("--out", str(tmp_path / "c"), "--against", str(tmp_path / "a"))
    assert changed.returncode == 1
    assert "bench-vs-ns3" in changed.stdout and "DIFFERS at .events" in changed.stdout
    assert "1 case(s) differ" in changed.stdout


def test_against_a_missing_directory_exits_2(tmp_path: Path) -> None:
    p = _run("--out", str(tmp_path / "a"), "--against", str(tmp_path / "nope"))
    assert p.returncode == 2 and "Traceback" not in p.stderr and "--against" in p.stderr
