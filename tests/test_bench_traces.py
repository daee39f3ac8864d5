"""`benches/traces.py --quick` over small synthetic traces: every trace and flow count reported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import cli_env

REPO = Path(__file__).resolve().parents[1]


def test_traces_bench_quick(tmp_path: Path) -> None:
    # 12 Mbit/s down (one opportunity per ms), 6 Mbit/s up; a lone 24 Mbit/s trace.
    (tmp_path / "c.down").write_text("".join(f"{t}\n" for t in range(1, 101)))
    (tmp_path / "c.up").write_text("".join(f"{t}\n" for t in range(2, 101, 2)))
    (tmp_path / "lone.down").write_text("".join(f"{t}\n{t}\n" for t in range(1, 101)))
    (tmp_path / "notes.txt").write_text("not a trace\n")
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "benches" / "traces.py"),
            "--quick",
            "--json",
            "--traces",
            str(tmp_path),
            "--flows",
            "1,4",
        ],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    got = {(r["trace"], r["flows"]): r for r in rows}
    assert set(got) == {(t, n) for t in ("c.down", "c.up", "lone.down") for n in (1, 4)}
    assert got[("c.down", 1)]["return"] == "c.up"
    assert got[("lone.down", 1)]["return"] == "100Mbit"
    for (trace, _), r in got.items():
        want = {"c.down": 12.0, "c.up": 6.0, "lone.down": 24.0}[trace]
        assert abs(r["capacity_mbps"] - want) < 0.01 * want, r
        # TCP fills a constant trace after its start-up, never more than the trace carries.
        assert 0.8 < r["utilisation"] <= 1.0, r
        assert r["goodput_mbps"] < r["capacity_mbps"]
        assert r["delay_mean_ms"] >= 20


def test_traces_bench_bad_flags(tmp_path: Path) -> None:
    for args in (
        ["--flows", "0"],
        ["--flows", "x"],
        ["--traces", str(tmp_path / "nope")],
        ["--traces", str(tmp_path)],
        ["--duration", "-1"],
    ):
        done = subprocess.run(
            [sys.executable, str(REPO / "benches" / "traces.py"), *args],
            capture_output=True,
            text=True,
            env=cli_env(),
            timeout=60,
        )
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr
