#!/usr/bin/env python3
"""Side-by-side benchmark: linklab vs ns-2.35 on the LT-TCP paper's TCP-SACK dumbbell.

For every (PER, seed) it runs ns-2.35 itself (Debian's ``ns2``: ``ns`` on PATH) on
``python/linklab/reproduce/ns2/lt_tcp.tcl`` — 10 ``Agent/TCP/Sack1`` flows with ECN and the
delayed-ACK sink over a 10 Mbit/s 20 ms RED/ECN bottleneck, packets erased at the PER — and
linklab on the same set-up under ``[tcp] profile = "ns2"`` (the lt-tcp reproduction's
``ns2 DelAck`` scenario), one run at a time, and prints goodput (mean over seeds), the
event loop's wall time of each (ns-2: ``$ns run``; linklab: the core's ``wall_time_s``), the
speed-up, linklab's packet-hops per wall-second of its run phase (``hops_per_s``,
docs/metrics.md), each whole process's wall time (start to exit: interpreter start-up,
set-up, run, output; linklab's is a Python process that imports linklab) with its ratio,
and the peak RSS of each process. See docs/benchmarks.md.

    python3 benches/vs_ns2.py --quick
    python3 benches/vs_ns2.py --per 0,0.1,0.3 --seeds 3 --duration 1000 [--repeat 5] [--json]

Exit status: 0 done, 2 bad flags or no ns-2 (one ``vs_ns2: error:`` line).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from linklab._scenario import to_toml
from linklab.reproduce.lt_tcp import NS2_PAYLOAD, _ns2
from linklab.reproduce.ns2_peer import NS2_INSTALL, SCRIPTS, parse_output

TCL = SCRIPTS / "lt_tcp.tcl"

# The script that runs linklab in a child process (its own peak RSS), printing one JSON line:
# the scenario file SCENARIO writes, as ns-2 runs its script file (the child imports linklab
# alone, not the reproductions that build the scenario).
CHILD = """
import json, sys, linklab
per, seed, dur, path = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
r = linklab.run(path, seed=seed, params={"per": per, "duration": dur})
a = r.summary["aggregate"]
s = r.summary
print(json.dumps({"goodput_mbit": a["goodput_bps"] / 1e6, "run_s": s["wall_time_s"],
                  "events": s["events"], "hops": s["hops"], "hops_per_s": s["hops_per_s"]}))
"""


def run_child(cmd: list[str]) -> tuple[str, float, float]:
    """Run ``cmd`` to completion; its stdout, peak RSS in MiB (from wait4) and wall seconds
    from start to exit (the whole process: start-up, set-up, run, output)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{Path(cmd[0]).name} exited with {code}: {err.strip()[-300:]}")
    return out, usage.ru_maxrss / 1024, wall


def write_scenario(directory: Path) -> Path:
    """The lt-tcp reproduction's ``ns2 DelAck`` scenario (TCP-SACK under ``[tcp] profile =
    "ns2"`` with ns-2's delayed-ACK sink) as a TOML file in ``directory``."""
    path = directory / "vs_ns2.toml"
    path.write_text(to_toml(_ns2("sack", delack=True)))
    return path


def one(per: float, seed: int, duration: int, repeat: int = 1,
        scenario: Path | None = None) -> dict[str, Any]:  # fmt: skip
    """ns-2 and linklab on one (PER, seed), the pair run ``repeat`` times in turn: each time
    field is the median over the repeats (both simulators are deterministic, so the other
    fields are the same every time; runs of 0.1-1 s are as short as the machine's stray
    disturbances, which the median leaves out), with every repeat's value kept in ``*_all``."""
    ns_cmd = ["ns", str(TCL), f"per={per}", f"seed={seed}", f"duration={duration}"]
    if scenario is None:
        with tempfile.TemporaryDirectory() as d:
            return one(per, seed, duration, repeat, write_scenario(Path(d)))
    child = [sys.executable, "-c", CHILD, str(per), str(seed), f"{duration}s", str(scenario)]
    times: dict[str, list[float]] = {
        k: [] for k in ("ns2_run_s", "ns2_process_s", "linklab_run_s", "linklab_process_s")
    }
    for _ in range(repeat):
        out, ns_rss, ns_proc = run_child(ns_cmd)
        ns = parse_output(out)
        times["ns2_run_s"].append(ns["run_us"] / 1e6)
        times["ns2_process_s"].append(ns_proc)
        out, ll_rss, ll_proc = run_child(child)
        ll = json.loads(out.strip().splitlines()[-1])
        times["linklab_run_s"].append(ll["run_s"])
        times["linklab_process_s"].append(ll_proc)
    med = {k: statistics.median(v) for k, v in times.items()}
    row = {
        "per": per,
        "seed": seed,
        "ns2_goodput_mbit": ns["delivered"] * NS2_PAYLOAD * 8 / duration / 1e6,
        "ns2_run_s": med["ns2_run_s"],
        "ns2_rss_mib": ns_rss,
        "ns2_process_s": med["ns2_process_s"],
        "linklab_goodput_mbit": ll["goodput_mbit"],
        "linklab_run_s": med["linklab_run_s"],
        "linklab_events": ll["events"],
        "linklab_hops": ll["hops"],
        # The run phase's hops over its median wall time.
        "linklab_hops_per_s": ll["hops"] / med["linklab_run_s"],
        "linklab_rss_mib": ll_rss,
        "linklab_process_s": med["linklab_process_s"],
    }
    if repeat > 1:
        row.update({f"{k}_all": v for k, v in times.items()})
    return row


def pers(text: str) -> list[float]:
    try:
        out = [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad --per list {text!r}; allowed: e.g. 0,0.1") from None
    if not out or any(not 0 <= p < 1 for p in out):
        raise argparse.ArgumentTypeError(f"bad --per list {text!r}; allowed: values in [0, 1)")
    return out


def positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"{text!r}; allowed: an integer >= 1")
    return v


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="vs_ns2", description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    p.add_argument("--per", type=pers, default=[0.0, 0.1, 0.3], help="PERs (default 0,0.1,0.3)")
    p.add_argument("--seeds", type=positive, default=3, help="seeds 1..N (default 3)")
    p.add_argument("--duration", type=positive, default=1000, help="simulated s (default 1000)")
    p.add_argument(
        "--repeat", type=positive, default=1,
        help="run each (PER, seed) pair N times in turn; times are the medians (default 1)",
    )  # fmt: skip
    p.add_argument("--quick", action="store_true", help="PER 0 and 0.1, 1 seed of 20 s")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    a = p.parse_args(argv)
    if a.quick:
        a.per, a.seeds, a.duration = [0.0, 0.1], 1, 20
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    if shutil.which("ns") is None:
        print(f"vs_ns2: error: ns-2's `ns` is not on PATH; install it ({NS2_INSTALL})",
              file=sys.stderr)  # fmt: skip
        return 2
    with tempfile.TemporaryDirectory() as d:
        path = write_scenario(Path(d))
        rows = [one(per, seed, a.duration, a.repeat, path)
                for per in a.per for seed in range(1, a.seeds + 1)]  # fmt: skip
    summary = []
    for per in a.per:
        rs = [r for r in rows if r["per"] == per]

        def mean(key: str, rs: list[dict[str, Any]] = rs) -> float:
            return statistics.fmean(r[key] for r in rs)

        ns_run, ll_run = mean("ns2_run_s"), mean("linklab_run_s")
        ns_proc, ll_proc = mean("ns2_process_s"), mean("linklab_process_s")
        summary.append({
            "per": per, "seeds": len(rs), "duration_s": a.duration,
            "ns2_goodput_mbit": mean("ns2_goodput_mbit"),
            "linklab_goodput_mbit": mean("linklab_goodput_mbit"),
            "ns2_run_s": ns_run, "linklab_run_s": ll_run,
            "speedup": ns_run / ll_run if ll_run > 0 else float("nan"),
            "ns2_process_s": ns_proc, "linklab_process_s": ll_proc,
            "process_speedup": ns_proc / ll_proc,
            # Packet-hops (docs/metrics.md) over the run phases' wall seconds.
            "linklab_hops_per_s": sum(r["linklab_hops"] for r in rs) / sum(
                r["linklab_hops"] / r["linklab_hops_per_s"] for r in rs
            ),
            "ns2_rss_mib": max(r["ns2_rss_mib"] for r in rs),
            "linklab_rss_mib": max(r["linklab_rss_mib"] for r in rs),
        })  # fmt: skip
    if a.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=1))
        return 0
    print(f"linklab vs ns-2.35, TCP-SACK dumbbell (10 flows, {a.duration} s, seeds 1-{a.seeds})")
    head = ("PER", "goodput ns-2", "linklab", "diff", "run s ns-2", "linklab", "speed-up",
            "ll M hops/s", "proc s ns-2", "linklab", "proc x", "RSS MiB ns-2",
            "linklab")  # fmt: skip
    print("  ".join(f"{h:>12}" for h in head))
    for s in summary:
        diff = (s["linklab_goodput_mbit"] / s["ns2_goodput_mbit"] - 1) * 100
        cells = (f"{s['per']:.0%}", f"{s['ns2_goodput_mbit']:.4g}",
                 f"{s['linklab_goodput_mbit']:.4g}", f"{diff:+.1f} %", f"{s['ns2_run_s']:.3f}",
                 f"{s['linklab_run_s']:.3f}", f"{s['speedup']:.2f}x",
                 f"{s['linklab_hops_per_s'] / 1e6:.2f}", f"{s['ns2_process_s']:.3f}",
                 f"{s['linklab_process_s']:.3f}", f"{s['process_speedup']:.2f}x",
                 f"{s['ns2_rss_mib']:.0f}", f"{s['linklab_rss_mib']:.0f}")  # fmt: skip
        print("  ".join(f"{c:>12}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
