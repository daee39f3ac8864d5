#!/usr/bin/env python3
"""Before/after speed of two core builds, side by side, with ns-2.35 in the same loop.

On a shared machine wall times drift by tens of percent between minutes, so a speed change is
measured by alternating the two builds run by run: the core's ``examples/run`` binaries (build
them with ``cargo build --profile profiling -p linklab-core --example run`` at each commit and
copy them aside), on the two set-ups of issue 38 — the ns-3 dumbbell of ``benches/vs_ns3.py``
(10 flows x 100 s) and the ns-2 LT-TCP dumbbell of ``benches/vs_ns2.py`` at each ``--per`` —
and, with ``--ns2``, ns-2.35 itself on the same ns-2 set-up in the same rotation. Reported per
set-up: the median run-phase wall seconds of each build over ``--repeat`` runs, events and
packet-hops per run-phase second (docs/metrics.md; hops from a build that prints them), the
after/before ratio, the same for the processes' CPU seconds (``wait4``; less sensitive than
wall time to other jobs on the machine), and the ratios to ns-2 (``$ns run`` wall seconds
and the ``ns`` process's CPU seconds).

    python3 benches/ab_speed.py BEFORE_BIN AFTER_BIN [--repeat 7] [--ns2] [--per 0,0.1,0.3]

Exit status: 0 done, 2 bad flags or a binary that cannot run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NS3_SETS = ["iw=10", "delack=true", "min_rto=1s", "mss=448", "framing=2B", "duration=100s"]
LINE = re.compile(r"events (\d+)\s+(?:hops (\d+)\s+)?.*\(build [\d.]+, run ([\d.]+), summary")


def ns2_toml() -> str:
    """The TOML of vs_ns2.py's linklab scenario (the lt-tcp reproduction's ``ns2`` SACK)."""
    sys.path.insert(0, str(ROOT / "python"))
    from linklab._scenario import to_toml
    from linklab.reproduce.lt_tcp import _ns2

    return to_toml(_ns2("sack", delack=True))


def child(cmd: list[str]) -> tuple[str, float]:
    """Run ``cmd``; its stdout and CPU seconds (user + system, from ``wait4``)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{cmd[0]} failed ({code}): {err.strip()[-300:]}")
    return out, usage.ru_utime + usage.ru_stime


def run_bin(binary: str, scenario: str, sets: list[str]) -> tuple[int, int | None, float, float]:
    """One run of ``examples/run``: events, hops (None if it does not print them), run-phase
    wall seconds, process CPU seconds."""
    out, cpu = child([binary, scenario, "1", *sets])
    m = LINE.search(out)
    if m is None:
        raise RuntimeError(f"{binary} printed no timing line: {out[-300:]}")
    return int(m.group(1)), int(m.group(2)) if m.group(2) else None, float(m.group(3)), cpu


def run_ns2(per: float, duration: int) -> tuple[float, float]:
    """``$ns run`` wall seconds of ns-2.35 on vs_ns2.py's script, and its CPU seconds."""
    sys.path.insert(0, str(ROOT / "python"))
    from linklab.reproduce.ns2_peer import SCRIPTS, parse_output

    tcl = SCRIPTS / "lt_tcp.tcl"
    out, cpu = child(["ns", str(tcl), f"per={per}", "seed=1", f"duration={duration}"])
    return float(parse_output(out)["run_us"]) / 1e6, cpu


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="ab_speed", description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    p.add_argument("before", help="examples/run binary of the build before")
    p.add_argument("after", help="examples/run binary of the build after")
    p.add_argument("--repeat", type=int, default=7, help="runs of each build per set-up")
    p.add_argument("--per", default="0,0.1,0.3", help="PERs of the ns-2 set-up")
    p.add_argument("--duration", type=int, default=1000, help="ns-2 set-up simulated s")
    p.add_argument("--ns2", action="store_true", help="run ns-2.35 in the same rotation")
    a = p.parse_args(argv)
    for b in (a.before, a.after):
        if shutil.which(b) is None:
            p.error(f"{b}: not an executable; allowed: an examples/run binary")
    if a.ns2 and shutil.which("ns") is None:
        p.error("--ns2: ns-2's `ns` is not on PATH (apt-get install ns2)")
    if a.repeat < 1:
        p.error(f"--repeat {a.repeat}; allowed: an integer >= 1")
    try:
        a.per = [float(x) for x in a.per.split(",")]
    except ValueError:
        p.error(f"--per {a.per!r}; allowed: e.g. 0,0.1,0.3")
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ns2_file = Path(tmp) / "ns2.toml"
        ns2_file.write_text(ns2_toml())
        setups: list[tuple[str, str, list[str], float | None]] = [
            ("ns-3 dumbbell 10x100 s", str(ROOT / "scenarios" / "dumbbell-red-ecn.toml"),
             NS3_SETS, None),
        ]  # fmt: skip
        for per in a.per:
            sets = [f"per={per:g}", f"duration={a.duration}s"]
            setups.append((f"ns-2 LT-TCP PER {per:g}", str(ns2_file), sets, per))
        rows: list[dict[str, Any]] = []
        for name, scenario, sets, per in setups:
            wall: dict[str, list[float]] = {"before": [], "after": [], "ns2": []}
            cpu: dict[str, list[float]] = {"before": [], "after": [], "ns2": []}
            events = hops = 0
            for _ in range(a.repeat):
                for which, binary in (("before", a.before), ("after", a.after)):
                    ev, hp, t, c = run_bin(binary, scenario, sets)
                    wall[which].append(t)
                    cpu[which].append(c)
                    events, hops = ev, hp if hp is not None else hops
                if a.ns2 and per is not None:
                    t, c = run_ns2(per, a.duration)
                    wall["ns2"].append(t)
                    cpu["ns2"].append(c)
            w = {k: statistics.median(v) for k, v in wall.items() if v}
            c = {k: statistics.median(v) for k, v in cpu.items() if v}
            row = {"setup": name, "events": events, "hops": hops, "wall_s": w, "cpu_s": c}
            rows.append(row)
            text = (
                f"{name:24} events {events:>9} hops {hops:>9} | run-phase wall median: "
                f"before {w['before']:.3f} s ({hops / w['before'] / 1e6:.2f} M hops/s), "
                f"after {w['after']:.3f} s ({hops / w['after'] / 1e6:.2f} M hops/s, "
                f"{events / w['after'] / 1e6:.2f} M ev/s) x{w['before'] / w['after']:.3f} | "
                f"CPU median: before {c['before']:.3f} s, after {c['after']:.3f} s "
                f"x{c['before'] / c['after']:.3f}"
            )
            if "ns2" in w:
                text += (
                    f" | ns-2 run {w['ns2']:.3f} s / CPU {c['ns2']:.3f} s: linklab before "
                    f"{w['ns2'] / w['before']:.2f}x / {c['ns2'] / c['before']:.2f}x, after "
                    f"{w['ns2'] / w['after']:.2f}x / {c['ns2'] / c['after']:.2f}x"
                )
            print(text, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
