#!/usr/bin/env python3
"""Scale benchmark: the RED/ECN dumbbell at 10 … 100 000 flows (see docs/benchmarks.md).

For every size N, child processes one after the other (the reference machine has 2 shared
cores), each running ``scenarios/dumbbell-red-ecn.toml`` with ``flows=N`` and
``duration=20s`` through ``linklab._core.run`` and writing the summary as JSON, as
``linklab run --json`` does; ``--repeat`` runs per size (times: the fastest run; RSS: the
largest). Reported per size: the core's phases (``timings``: build = load, expand, route and
build; run = the simulation; summary), events, events per wall-second of the simulation and of
the whole core run, and the child's peak RSS (``os.wait4``); then PASS/FAIL against the
targets:

* 10 000 flows: peak RSS <= 250 MiB, and events/s >= 1/3 of the 10-flow figure;
* 10 000 flows: packet-hops per wall-second of the simulation >= 1/2 of the 10-flow
  figure (issue 38; a hop is a packet crossing one link direction, docs/metrics.md);
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
    host_info,
    last_json_line,
    log,
    run_child,
)

SIZES = (10, 100, 1_000, 10_000, 100_000)
QUICK_SIZES = (10, 100, 1_000)
TARGET_RSS_MIB = 250.0  # at 10 000 flows
TARGET_SPEED_RATIO = 1 / 3  # simulation events/s at 10 000 flows vs 10 flows
TARGET_HOP_RATIO = 1 / 2  # simulation packet-hops/s at 10 000 flows vs 10 flows (issue 38)
TARGET_BUILD_SLOPE = 1.2  # d log(build) / d log(flows), from 1 000 flows up
BIG = 10_000
HUGE = 100_000

# The child: one run with the core's phase timings, the summary serialised like `--json`.
CHILD = """
import json, sys
from linklab import _core
from linklab.api import load_source
t = {}
s, _, _ = _core.run(load_source(sys.argv[1]), timings=t,
                    params={"flows": sys.argv[2], "duration": sys.argv[3]})
text = json.dumps(s)
print(json.dumps({k: s[k] for k in ("events", "hops", "sim_time_s", "wall_time_s")} | t))
"""


def measure(python: str, flows: int, duration: float, repeat: int) -> dict[str, Any]:
    """``repeat`` child runs: the fastest one's figures, and the largest peak RSS."""
    runs = [measure_once(python, flows, duration) for _ in range(repeat)]
    best = min(runs, key=lambda r: r.get("wall_time_s", math.inf))
    return best | {"peak_rss_mib": max(r["peak_rss_mib"] for r in runs)}


def measure_once(python: str, flows: int, duration: float) -> dict[str, Any]:
    """One child run: its core timings and events, and its peak RSS."""
    args = [python, "-c", CHILD, SCENARIO, str(flows), f"{duration:g}s"]
    child = run_child(args, cwd=REPO)
    row: dict[str, Any] = {
        "returncode": child.returncode,
        "process_wall_s": child.process_wall_s,
        "peak_rss_mib": child.peak_rss_kib / 1024,
        "load1": child.load1,
    }
    if child.returncode != 0:
        row["error"] = child.stderr.strip().splitlines()[-1:] or ["(no message)"]
    else:
        row |= last_json_line(child.stdout)
    return row


def bench(python: str, sizes: list[int], duration: float, repeat: int) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        log(f"[scale] {n} flows: {duration:g} s x {repeat} ...")
        run = measure(python, n, duration, repeat)
        row: dict[str, Any] = {"flows": n, **run}
        row["completed"] = run["returncode"] == 0 and run.get("sim_time_s") == duration
        if row["completed"]:
            row["events_per_s"] = run["events"] / run["run_s"]
            row["hops_per_s"] = run["hops"] / run["run_s"]
            row["whole_events_per_s"] = run["events"] / run["wall_time_s"]
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
        rss = big["peak_rss_mib"]
        add(
            f"peak RSS at {BIG:,} flows <= {TARGET_RSS_MIB:g} MiB",
            rss <= TARGET_RSS_MIB,
            f"{rss:.0f} MiB",
        )
    else:
        add(f"peak RSS at {BIG:,} flows <= {TARGET_RSS_MIB:g} MiB", None if quick else False, "")
    if big and small and big["completed"] and small["completed"]:
        ratio = big["events_per_s"] / small["events_per_s"]
        add(
            f"events/s at {BIG:,} flows >= 1/3 of 10 flows",
            ratio >= TARGET_SPEED_RATIO,
            f"{ratio:.2f} of the 10-flow figure",
        )
    else:
        add(f"events/s at {BIG:,} flows >= 1/3 of 10 flows", None if quick else False, "")
    hop_target = f"packet-hops/s at {BIG:,} flows >= 1/2 of 10 flows (issue 38)"
    if big and small and big["completed"] and small["completed"]:
        ratio = big["hops_per_s"] / small["hops_per_s"]
        add(hop_target, ratio >= TARGET_HOP_RATIO, f"{ratio:.2f} of the 10-flow figure")
    else:
        add(hop_target, None if quick else False, "")
    huge = by.get(HUGE)
    add(
        f"{HUGE:,} flows run to the end",
        None if huge is None else bool(huge["completed"]),
        "" if huge is None else f"{huge.get('sim_time_s', '-')} s simulated",
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
        return "FAILED: " + " ".join(r.get("error", []))
    return (
        f"build {r['build_s']:.3f} s, run {r['run_s']:.3f} s, summary {r['summary_s']:.3f} s, "
        f"{r['events']:,} events, {r['events_per_s'] / 1e6:.2f} M ev/s, "
        f"{r['peak_rss_mib']:.0f} MiB"
    )


def print_table(report: dict[str, Any]) -> None:
    head = ["flows", "build s", "run s", "summary s", "events", "M ev/s", "whole M ev/s",
            "M hops/s", "MiB"]  # fmt: skip
    lines = [head]
    for r in report["rows"]:
        if not r["completed"]:
            lines.append([f"{r['flows']:,}", *["-"] * 7, f"{r['peak_rss_mib']:.0f}"])
            continue
        lines.append(
            [
                f"{r['flows']:,}",
                f"{r['build_s']:.3f}",
                f"{r['run_s']:.3f}",
                f"{r['summary_s']:.3f}",
                f"{r['events']:,}",
                f"{r['events_per_s'] / 1e6:.2f}",
                f"{r['whole_events_per_s'] / 1e6:.2f}",
                f"{r['hops_per_s'] / 1e6:.2f}",
                f"{r['peak_rss_mib']:.0f}",
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
    p.add_argument("--python", default=sys.executable, help="interpreter with linklab installed")
    a = p.parse_args(argv)
    sizes = (
        [int(x) for x in a.sizes.split(",")] if a.sizes else list(QUICK_SIZES if a.quick else SIZES)
    )
    duration = a.duration or (5.0 if a.quick else 20.0)
    repeat = a.repeat or (1 if a.quick else 3)
    rows = bench(a.python, sizes, duration, repeat)
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
