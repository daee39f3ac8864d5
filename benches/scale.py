#!/usr/bin/env python3
"""Scale benchmark: the RED/ECN dumbbell at 10 … 100 000 flows (see docs/benchmarks.md).

For every size N, child processes one after the other (the reference machine has 2 shared
cores): ``linklab run scenarios/dumbbell-red-ecn.toml --json --set flows=N`` with
``--set duration=1ms`` (the *build*: load, expand, route, build, summary) and with
``--set duration=20s`` (the run), each ``--repeat`` times (wall times: the minimum; RSS: the
maximum). Reported per size: build time (the 1 ms run's ``wall_time_s``), run wall time and
events, events per wall-second of the whole run and of the simulation alone (the events and
wall time the 20 s run has beyond the 1 ms one), and the peak RSS of the 20 s child
(``os.wait4``), then PASS/FAIL against the targets:

* 10 000 flows: peak RSS <= 250 MiB, and simulation events/s >= 1/3 of the 10-flow figure;
* 100 000 flows run to the end;
* build time linear in flows: log-log slope <= 1.2 from 1 000 flows to the largest size.

    python3 benches/scale.py                 # 10, 100, 1 000, 10 000, 100 000 flows
    python3 benches/scale.py --quick --json  # 10, 100, 1 000 flows, 5 s (what the test runs)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vs_ns3 import (  # noqa: E402  (a sibling script, not a package)
    REPO,
    SCENARIO,
    BenchError,
    find_linklab,
    host_info,
    last_json_line,
    log,
    run_child,
)

SIZES = (10, 100, 1_000, 10_000, 100_000)
QUICK_SIZES = (10, 100, 1_000)
TARGET_RSS_MIB = 250.0  # at 10 000 flows
TARGET_SPEED_RATIO = 1 / 3  # simulation events/s at 10 000 flows vs 10 flows
TARGET_BUILD_SLOPE = 1.2  # d log(build) / d log(flows), from 1 000 flows up
BIG = 10_000
HUGE = 100_000


def measure(
    cmd: list[str], env: dict[str, str] | None, flows: int, duration: str, repeat: int
) -> dict[str, Any]:
    """``repeat`` child runs: the fastest one's figures, and the largest peak RSS."""
    runs = [measure_once(cmd, env, flows, duration) for _ in range(repeat)]
    best = min(runs, key=lambda r: r.get("wall_time_s", math.inf))
    return best | {"peak_rss_mib": max(r["peak_rss_mib"] for r in runs)}


def measure_once(
    cmd: list[str], env: dict[str, str] | None, flows: int, duration: str
) -> dict[str, Any]:
    """One child run: its summary figures, wall time and peak RSS."""
    args = [*cmd, "run", SCENARIO, "--json", "--set", f"flows={flows}", "--set"]
    child = run_child([*args, f"duration={duration}"], cwd=REPO, env=env)
    row: dict[str, Any] = {
        "returncode": child.returncode,
        "process_wall_s": child.process_wall_s,
        "peak_rss_mib": child.peak_rss_kib / 1024,
        "load1": child.load1,
    }
    if child.returncode != 0:
        row["error"] = child.stderr.strip().splitlines()[-1:] or ["(no message)"]
        return row
    s = last_json_line(child.stdout)
    row |= {"events": s["events"], "wall_time_s": s["wall_time_s"], "sim_time_s": s["sim_time_s"]}
    return row


def bench(
    cmd: list[str], env: dict[str, str] | None, sizes: list[int], duration: float, repeat: int
) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        log(f"[scale] {n} flows: build (1 ms) x {repeat} ...")
        build = measure(cmd, env, n, "1ms", repeat)
        log(f"[scale] {n} flows: run ({duration:g} s) x {repeat} ...")
        run = measure(cmd, env, n, f"{duration:g}s", repeat)
        row: dict[str, Any] = {"flows": n, "build": build, "run": run}
        if "events" in run and "events" in build:
            row["build_s"] = build["wall_time_s"]
            row["events_per_s"] = run["events"] / run["wall_time_s"]
            sim_wall = run["wall_time_s"] - build["wall_time_s"]
            sim_events = run["events"] - build["events"]
            row["sim_events_per_s"] = sim_events / sim_wall if sim_wall > 0 else math.nan
            row["completed"] = run["returncode"] == 0 and run["sim_time_s"] == duration
        else:
            row["completed"] = False
        rows.append(row)
        log(f"[scale] {n} flows: {fmt_row(row)}")
    return rows


def targets(rows: list[dict[str, Any]], quick: bool) -> list[dict[str, Any]]:
    """PASS/FAIL (or SKIP when a size was not run) of each target."""
    by = {r["flows"]: r for r in rows}
    out = []

    def add(name: str, ok: bool | None, detail: str) -> None:
        out.append(
            {
                "target": name,
                "status": "SKIP" if ok is None else "PASS" if ok else "FAIL",
                "detail": detail,
            }
        )

    big, small = by.get(BIG), by.get(10)
    if big and big["completed"]:
        rss = big["run"]["peak_rss_mib"]
        add(
            f"peak RSS at {BIG:,} flows <= {TARGET_RSS_MIB:g} MiB",
            rss <= TARGET_RSS_MIB,
            f"{rss:.0f} MiB",
        )
    else:
        add(f"peak RSS at {BIG:,} flows <= {TARGET_RSS_MIB:g} MiB", None if quick else False, "")
    if big and small and big["completed"] and small["completed"]:
        ratio = big["sim_events_per_s"] / small["sim_events_per_s"]
        add(
            f"events/s at {BIG:,} flows >= 1/3 of 10 flows",
            ratio >= TARGET_SPEED_RATIO,
            f"{ratio:.2f} of the 10-flow figure",
        )
    else:
        add(f"events/s at {BIG:,} flows >= 1/3 of 10 flows", None if quick else False, "")
    huge = by.get(HUGE)
    add(
        f"{HUGE:,} flows run to the end",
        None if huge is None else bool(huge["completed"]),
        "" if huge is None else f"{huge['run'].get('sim_time_s', '-')} s simulated",
    )
    built = sorted(
        (r["flows"], r["build_s"]) for r in rows if r["flows"] >= 1_000 and r["completed"]
    )
    if len(built) >= 2:
        (n0, b0), (n1, b1) = built[0], built[-1]
        slope = math.log(b1 / b0) / math.log(n1 / n0)
        add(
            f"build time linear in flows (slope <= {TARGET_BUILD_SLOPE})",
            slope <= TARGET_BUILD_SLOPE,
            f"slope {slope:.2f} from {n0:,} to {n1:,}",
        )
    else:
        add(f"build time linear in flows (slope <= {TARGET_BUILD_SLOPE})", None, "")
    return out


def fmt_row(r: dict[str, Any]) -> str:
    if not r["completed"]:
        return "FAILED: " + " ".join(r["run"].get("error", []) or r["build"].get("error", []))
    run = r["run"]
    return (
        f"build {r['build_s']:.3f} s, run {run['wall_time_s']:.3f} s, {run['events']:,} events, "
        f"{r['events_per_s'] / 1e6:.2f} M ev/s (sim {r['sim_events_per_s'] / 1e6:.2f}), "
        f"{run['peak_rss_mib']:.0f} MiB"
    )


def print_table(report: dict[str, Any]) -> None:
    head = ["flows", "build s", "run s", "events", "M ev/s", "sim M ev/s", "peak MiB", "load"]
    lines = [head]
    for r in report["rows"]:
        run = r["run"]
        if not r["completed"]:
            lines.append(
                [
                    f"{r['flows']:,}",
                    "-",
                    "-",
                    "-",
                    "-",
                    "-",
                    f"{run['peak_rss_mib']:.0f}",
                    f"{run['load1']:.1f}",
                ]
            )
            continue
        lines.append(
            [
                f"{r['flows']:,}",
                f"{r['build_s']:.3f}",
                f"{run['wall_time_s']:.3f}",
                f"{run['events']:,}",
                f"{r['events_per_s'] / 1e6:.2f}",
                f"{r['sim_events_per_s'] / 1e6:.2f}",
                f"{run['peak_rss_mib']:.0f}",
                f"{run['load1']:.1f}",
            ]
        )
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    for row in lines:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))
    print()
    for t in report["targets"]:
        print(f"{t['status']:4}  {t['target']}" + (f": {t['detail']}" if t["detail"] else ""))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="10, 100, 1 000 flows, 5 s simulated")
    p.add_argument("--sizes", help="comma-separated flow counts (default 10,...,100000)")
    p.add_argument("--duration", type=float, help="simulated seconds (default 20, --quick 5)")
    p.add_argument("--repeat", type=int, help="runs per measurement (default 3, --quick 1)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--linklab", help="command that runs the linklab CLI (default: on PATH)")
    a = p.parse_args(argv)
    sizes = (
        [int(x) for x in a.sizes.split(",")] if a.sizes else list(QUICK_SIZES if a.quick else SIZES)
    )
    duration = a.duration or (5.0 if a.quick else 20.0)
    try:
        cmd, env = find_linklab(a.linklab)
    except BenchError as e:
        log(f"scale: {e}")
        return 2
    repeat = a.repeat or (1 if a.quick else 3)
    rows = bench(cmd, env, sizes, duration, repeat)
    report = {
        "config": {"scenario": SCENARIO, "sizes": sizes, "duration_s": duration, "repeat": repeat},
        "host": host_info(),
        "rows": rows,
        "targets": targets(rows, quick=a.quick),
    }
    if a.json:
        print(json.dumps(report))
    else:
        print_table(report)
    return 1 if any(t["status"] == "FAIL" for t in report["targets"]) else 0


if __name__ == "__main__":
    sys.exit(main())
