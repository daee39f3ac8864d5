#!/usr/bin/env python3
"""Benchmark of the reproductions' footprint: wall time and peak memory of each.

Runs ``linklab reproduce NAME`` (the command, as a user would, into a fresh
directory) for every reproduction, or those named with ``--only``, and reports
its wall time and the peak resident set size of the largest process it ran (the
command or one of its workers: what the machine must hold at once). Target:
every full reproduction under 400 MiB (issue 15, item 6) and, with ``--jobs 2`` on
a 2-core machine, 15 minutes of wall time (issue 36; the quick forms have no time
target).

    python3 benches/repro_memory.py --quick          # every --quick reproduction
    python3 benches/repro_memory.py --only lt-tcp    # one full reproduction
    python3 benches/repro_memory.py --json           # all five, full (about 40 min)
    python3 benches/repro_memory.py --only wipemu --keep DIR   # outputs kept in DIR/wipemu

The machine may be shared: each row also gives the 1-minute load average at the
start and at the end of the run (``os.getloadavg``), to read the wall time by, and
the CPU seconds of the command and its workers, which the load does not inflate
(half of them is the wall time on an idle 2-core machine when both workers stay busy).

Exit status 0 when every target holds, 1 when one is missed, 2 on bad flags.
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

TARGET_MIB = 400.0
#: Wall time of a full reproduction on a 2-core machine (issue 36: 15 minutes).
TARGET_S = 900.0

# Runs CMD and prints the largest peak RSS (KiB on Linux) among the processes
# it waited for (the command itself and, through it, its worker processes) and
# their CPU seconds (user + system), which a shared machine's load does not inflate.
PROBE = (
    "import resource, subprocess, sys\n"
    "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(rc, u.ru_maxrss, u.ru_utime + u.ru_stime)\n"
)


def names() -> list[str]:
    """The reproductions, in the CLI's order."""
    from linklab.reproduce import REPRODUCTIONS

    return list(REPRODUCTIONS)


def measure(name: str, quick: bool, jobs: int, out: Path) -> dict[str, object]:
    cmd = [sys.executable, "-m", "linklab", "reproduce", name, "--out", str(out),
           "--jobs", str(jobs)] + (["--quick"] if quick else [])  # fmt: skip
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    load0 = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PROBE, *cmd], env=env, capture_output=True,
                          text=True)  # fmt: skip
    wall = time.perf_counter() - start
    load1 = os.getloadavg()[0]
    if done.returncode != 0:
        raise SystemExit(f"{name}: the probe failed: {done.stderr.strip()}")
    rc_s, kib_s, cpu_s = done.stdout.split()
    rc, kib, cpu = int(rc_s), int(kib_s), float(cpu_s)
    results = json.loads((out / "results.json").read_text()) if rc == 0 else {}
    peak = kib / 1024
    return {
        "reproduction": name,
        "quick": quick,
        "exit_status": rc,
        "runs": results.get("runs"),
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_rss_mib": peak,
        "load_start": load0,
        "load_end": load1,
        "target_mib": TARGET_MIB,
        "target_s": None if quick else TARGET_S,
        "status": "PASS"
        if rc == 0 and peak < TARGET_MIB and (quick or wall < TARGET_S)
        else "FAIL",
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The flags, checked: ``only`` becomes the list of reproductions to run."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the --quick reproductions")
    ap.add_argument("--only", help="comma-separated reproductions (default: all)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (2)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--keep", type=Path, help="keep the outputs in KEEP/NAME (default: a "
                    "temporary directory, removed)")  # fmt: skip
    args = ap.parse_args(argv)
    known = names()
    chosen = known if not args.only else [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in chosen if n not in known]
    if unknown or not chosen:
        ap.error(f"--only {args.only!r}: unknown {', '.join(unknown) or 'empty list'}; "
                 f"allowed: {', '.join(known)}")  # fmt: skip
    taken = [n for n in chosen if args.keep and (args.keep / n).exists()]
    if taken:
        ap.error(f"--keep {args.keep}: {', '.join(taken)} exist there; allowed: a directory "
                 "without these reproductions' outputs")  # fmt: skip
    if args.jobs < 1:
        ap.error(f"--jobs {args.jobs}: allowed: 1 or more")
    args.only = chosen
    return args


def main() -> int:
    args = parse_args(None)
    rows = []
    with tempfile.TemporaryDirectory(prefix="linklab-repro-bench-") as tmp:
        for name in args.only:
            out = (args.keep or Path(tmp)) / name
            rows.append(measure(name, args.quick, args.jobs, out))
            if not args.json:
                r = rows[-1]
                print(f"{name:16} {r['runs']!s:>6} runs  {r['wall_s']:7.1f} s  "
                      f"cpu {r['cpu_s']:7.1f} s  "
                      f"peak {r['peak_rss_mib']:6.0f} MiB (target < {TARGET_MIB:.0f})  "
                      f"load {r['load_start']:.1f}->{r['load_end']:.1f}  {r['status']}",
                      flush=True)  # fmt: skip
    if args.json:
        print(json.dumps({"cpus": os.cpu_count(), "jobs": args.jobs, "rows": rows}, indent=2))
    return 0 if all(r["status"] == "PASS" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
