#!/usr/bin/env python3
"""Trace-driven links over real cellular traces (see docs/benchmarks.md, "Cellular traces").

Every Mahimahi trace in ``--traces`` (default: the folder ``$LINKLAB_TRACES`` names, e.g. the
``traces/`` folder of a Mahimahi clone with the Cellsim/Sprout traces; without it, the
repository's synthetic traces in ``scenarios/traces``) carries the data of 1 and of 4 CUBIC
flows, as
``mm-delay 20 mm-link DOWN UP`` would: one link S—D whose data direction plays the trace, whose
ACK direction plays its pair (``X.down`` with ``X.up``; a trace without a pair gets a constant
100 Mbit/s return path), 20 ms propagation each way, a drop-tail queue of 1000 packets
(mm-link's default queue is unbounded; 1000 packets is deeper than any window here), receive
window 8 MiB. Reported per trace and flow count: the trace's capacity over the run (its
opportunities up to the duration, wrapping as mm-link does, × 1500 B), the link's utilisation
(IP bytes delivered at the far end / capacity), goodput, the mean and 95th-percentile one-way
data delay, retransmissions, and the simulation's wall time and events/s.

    python3 benches/traces.py                       # every trace, 60 s, 1 and 4 flows
    LINKLAB_TRACES=~/mahimahi/traces python3 benches/traces.py   # the real cellular traces
    python3 benches/traces.py --quick --json        # 10 s (what a test runs, on its own traces)
    python3 benches/traces.py --traces DIR --flows 1,2,8 --duration 120
"""

from __future__ import annotations

import argparse
import bisect
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SYNTHETIC_TRACES = REPO / "scenarios" / "traces"
OPPORTUNITY = 1500
SUFFIXES = (".down", ".up")

SCENARIO = """
name = "trace {name}, {flows} CUBIC flow(s)"
duration = "{duration}s"
[tcp]
cc = "cubic"
rwnd = "8MiB"
[[links]]
a = "S"
b = "D"
delay = "20ms"
queue = {{ kind = "droptail", limit = "1000p" }}
ab = {{ trace = "{data}" }}
ba = {back}
[[flows]]
from = "S"
to = "D"
count = {flows}
"""


def find_traces(folder: Path) -> list[tuple[Path, Path | None]]:
    """(data trace, its pair or None) for every ``*.down`` / ``*.up`` file in ``folder``."""
    files = sorted(p for p in folder.iterdir() if p.suffix in SUFFIXES and p.is_file())
    out = []
    for f in files:
        other = f.with_suffix(".up" if f.suffix == ".down" else ".down")
        out.append((f, other if other.is_file() else None))
    return out


def capacity_bytes(trace: Path, duration_s: float) -> int:
    """Bytes the trace can carry in ``duration_s`` seconds, wrapping with its last timestamp."""
    ms = [int(line) for line in trace.read_text().split()]
    period = ms[-1]
    end = duration_s * 1000.0
    cycles = int(end // period)
    rest = bisect.bisect_right(ms, end - cycles * period)
    return (cycles * len(ms) + rest) * OPPORTUNITY


def run_one(data: Path, back: Path | None, flows: int, duration: float) -> dict[str, Any]:
    import linklab

    ret = f'{{ trace = "{back}" }}' if back else '{ rate = "100Mbit" }'
    text = SCENARIO.format(name=data.name, flows=flows, duration=duration, data=data, back=ret)
    t0 = time.perf_counter()
    s = linklab.run(text).summary
    wall = time.perf_counter() - t0
    link = next(x for x in s["links"] if x["name"] == "S->D")
    cap = capacity_bytes(data, duration)
    flows_ = s["flows"]
    delays = [f["delay_mean_s"] for f in flows_ if f["delay_mean_s"] is not None]
    return {
        "trace": data.name,
        "return": back.name if back else "100Mbit",
        "flows": flows,
        "duration_s": duration,
        "capacity_mbps": cap * 8 / duration / 1e6,
        "utilisation": link["rx_bytes"] / cap
        if "rx_bytes" in link
        else link["throughput_bps"] * duration / 8 / cap,
        "goodput_mbps": s["aggregate"]["goodput_bps"] / 1e6,
        "delay_mean_ms": 1e3 * sum(delays) / len(delays) if delays else None,
        "delay_p95_ms": 1e3 * max(f["delay_p95_s"] or 0.0 for f in flows_),
        "retransmits": s["aggregate"]["retransmits"],
        "events": s["events"],
        "wall_s": wall,
        "events_per_s": s["events"] / s["wall_time_s"],
    }


def fmt(rows: list[dict[str, Any]]) -> str:
    head = (
        "| trace | return path | flows | capacity Mbit/s | utilisation | goodput Mbit/s "
        "| delay mean ms | delay p95 ms | retransmits | wall s |"
    )
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        lines.append(
            f"| {r['trace']} | {r['return']} | {r['flows']} | {r['capacity_mbps']:.2f} "
            f"| {100 * r['utilisation']:.1f} % | {r['goodput_mbps']:.2f} "
            f"| {r['delay_mean_ms']:.0f} | {r['delay_p95_ms']:.0f} | {r['retransmits']} "
            f"| {r['wall_s']:.2f} |"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, list[int]]:
    """The command line, checked (exit 2 with a message when it is wrong): the
    options and the flow counts."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--traces",
        type=Path,
        help="folder of Mahimahi traces (default: $LINKLAB_TRACES, else scenarios/traces)",
    )
    ap.add_argument("--flows", default="1,4", help="flow counts, comma-separated (1,4)")
    ap.add_argument("--duration", type=float, default=60.0, help="seconds per run (60)")
    ap.add_argument("--quick", action="store_true", help="10 s runs")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--out", type=Path, help="also write the JSON report to this file")
    a = ap.parse_args(argv)
    if a.traces is None:
        from linklab._files import TRACES_ENV, TRACES_HOW, mahimahi_traces

        a.traces = mahimahi_traces()
        if a.traces is not None and not a.traces.is_dir():
            ap.error(f"${TRACES_ENV} {str(a.traces)!r} is not a folder of Mahimahi traces")
        if a.traces is None:
            print(
                "[traces] using the synthetic traces of scenarios/traces; for real cellular "
                f"traces, {TRACES_HOW}, or give --traces DIR",
                file=sys.stderr,
            )
            a.traces = SYNTHETIC_TRACES
    try:
        counts = [int(x) for x in a.flows.split(",")]
        if not counts or min(counts) < 1:
            raise ValueError
    except ValueError:
        ap.error(f"--flows {a.flows!r}: give flow counts >= 1, e.g. 1,4")
    if not a.duration > 0:
        ap.error(f"--duration {a.duration}: give a positive number of seconds")
    if not a.traces.is_dir():
        ap.error(f"--traces {str(a.traces)!r} is not a folder of Mahimahi traces")
    return a, counts


def main(argv: list[str] | None = None) -> int:
    a, counts = parse_args(argv)
    traces = find_traces(a.traces)
    if not traces:
        print(
            f"traces.py: error: --traces {str(a.traces)!r} holds no *.down or *.up file",
            file=sys.stderr,
        )
        return 2
    duration = 10.0 if a.quick else a.duration
    rows = []
    for data, back in traces:
        for n in counts:
            print(f"[traces] {data.name} x {n} flow(s), {duration:g} s ...", file=sys.stderr)
            rows.append(run_one(data.resolve(), back and back.resolve(), n, duration))
    report = {"duration_s": duration, "rows": rows}
    if a.out:
        a.out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report) if a.json else fmt(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
