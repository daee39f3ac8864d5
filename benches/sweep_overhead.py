#!/usr/bin/env python3
"""Benchmark of the sweep runner: its overhead, and the speed-up of 2 local workers.

Runs ``linklab sweep`` (the command, as a user would: interpreter start, imports,
worker start-up, store writes and the final tables all count) on the RED/ECN
dumbbell with ``duration`` calibrated so that one run takes about RUN_S seconds
of core time, once with ``--jobs 1`` and once with ``--jobs 2``, each into a
fresh directory. Reports

- runner overhead = (sweep wall time − Σ core run time / jobs) / sweep wall time,
  where the core run times are the runs' ``wall_time_s`` (target: < 5 %);
- speed-up = wall(jobs 1) / wall(jobs 2) (target: ≥ 1.8×);
- a small sweep (4 runs of ~0.05 s): wall(jobs 2) / wall(jobs 1), target ≤ 1.05
  (two workers are never slower than one: this process runs tasks from the start
  while the worker process starts).

    python3 benches/sweep_overhead.py --quick      # 12 runs of ~1 s
    python3 benches/sweep_overhead.py              # 40 runs of ~1 s
    python3 benches/sweep_overhead.py --runs 40 --run-seconds 2 --json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCENARIO = REPO / "scenarios" / "dumbbell-red-ecn.toml"
TARGET_OVERHEAD = 0.05
TARGET_SPEEDUP = 1.8
TARGET_SMALL = 1.05


def calibrate(run_s: float) -> str:
    """A ``duration`` for which one dumbbell run takes about ``run_s`` s of core time."""
    import linklab

    probe = 20.0
    best = min(
        linklab.run(SCENARIO, seed=1, params={"duration": f"{probe:g}s"}).summary["wall_time_s"]
        for _ in range(3)
    )
    return f"{max(1.0, round(probe * run_s / best)):g}s"


def timed_sweep(duration: str, runs: int, jobs: int, out: Path) -> dict[str, float]:
    import polars as pl

    cmd = [
        sys.executable, "-m", "linklab", "sweep", str(SCENARIO),
        "--param", f"duration={duration}", "--param", "per=0,0.01",
        "--reps", str(runs // 2), "--jobs", str(jobs), "--out", str(out), "--json",
    ]  # fmt: skip
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    busy0, mine0 = _busy_cpu_s(), _children_cpu_s()
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    foreign = max(0.0, (_busy_cpu_s() - busy0) - (_children_cpu_s() - mine0))
    if proc.returncode != 0:
        raise SystemExit(f"sweep failed ({proc.returncode}): {proc.stderr.strip()}")
    table = pl.read_parquet(out / "runs.parquet")
    core = float(table["wall_time_s"].sum())
    return {
        "jobs": jobs,
        "runs": table.height,
        "wall_s": wall,
        "core_sum_s": core,
        "core_mean_s": core / table.height,
        "overhead": (wall - core / jobs) / wall,
        "other_cpu_s": foreign,
    }


def _busy_cpu_s() -> float:
    """CPU-seconds the whole machine spent busy since boot (Linux /proc/stat; else 0)."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return 0.0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _children_cpu_s() -> float:
    t = os.times()
    return t.children_user + t.children_system


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="12 runs instead of 40")
    ap.add_argument("--runs", type=int, help="runs per sweep (even; default 40, quick 12)")
    ap.add_argument("--run-seconds", type=float, default=1.0, help="core time per run (1)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args()
    runs = args.runs or (12 if args.quick else 40)
    runs += runs % 2

    duration = calibrate(args.run_seconds)
    small = calibrate(0.05)
    with tempfile.TemporaryDirectory(prefix="linklab-sweep-bench-") as tmp:
        one = timed_sweep(duration, runs, 1, Path(tmp) / "j1")
        two = timed_sweep(duration, runs, 2, Path(tmp) / "j2")
        # The small sweep: the best of 3 each, alternating.
        small_walls: dict[int, list[float]] = {1: [], 2: []}
        for i in range(3):
            for jobs in (1, 2):
                r = timed_sweep(small, 4, jobs, Path(tmp) / f"s{jobs}-{i}")
                small_walls[jobs].append(r["wall_s"])
    speedup = one["wall_s"] / two["wall_s"]
    small_ratio = min(small_walls[2]) / min(small_walls[1])
    result = {
        "scenario": SCENARIO.name,
        "duration": duration,
        "cpus": os.cpu_count(),
        "jobs1": one,
        "jobs2": two,
        "speedup_2_vs_1": speedup,
        "pass_overhead": max(one["overhead"], two["overhead"]) < TARGET_OVERHEAD,
        "pass_speedup": speedup >= TARGET_SPEEDUP,
        "small_sweep": {"duration": small, "wall_s": small_walls, "ratio_2_vs_1": small_ratio},
        "pass_small": small_ratio <= TARGET_SMALL,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"dumbbell, duration {duration}, {runs} runs per sweep, {os.cpu_count()} CPUs")
    for r in (one, two):
        print(
            f"  --jobs {r['jobs']}: wall {r['wall_s']:.2f} s, core {r['core_sum_s']:.2f} s "
            f"({r['core_mean_s']:.2f} s/run), runner overhead {r['overhead'] * 100:.1f} %, "
            f"other processes used {r['other_cpu_s']:.1f} CPU-s meanwhile"
        )
        if r["other_cpu_s"] > 0.05 * r["wall_s"]:
            print("    (the machine was busy with other work: these figures are not clean)")
    ok = "PASS" if result["pass_overhead"] else "FAIL"
    worst = max(one["overhead"], two["overhead"])
    print(f"runner overhead (worst) {worst * 100:.1f} % (target < 5 %): {ok}")
    ok = "PASS" if result["pass_speedup"] else "FAIL"
    print(f"speed-up jobs 2 vs 1: {speedup:.2f}x (target >= 1.8x): {ok}")
    ok = "PASS" if result["pass_small"] else "FAIL"
    print(
        f"small sweep (4 runs, duration {small}): jobs 2 {min(small_walls[2]):.2f} s, jobs 1 "
        f"{min(small_walls[1]):.2f} s, ratio {small_ratio:.2f} (target <= {TARGET_SMALL}): {ok}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
