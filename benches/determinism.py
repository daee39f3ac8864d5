#!/usr/bin/env python3
"""Same results before and after a speed change: every shipped scenario's summary, bit for bit.

Runs every ``scenarios/*.toml`` (and the two benchmark set-ups of issue 38: the ns-2
LT-TCP dumbbell of ``benches/vs_ns2.py`` at PER 0.1 and the ns-3 dumbbell of
``benches/vs_ns3.py``) with the linklab importable here, one after the other, with the
scenario's ``duration`` cut to ``--duration`` (default 20 s), and writes each summary — the
``linklab run --json`` object without its measured fields ``wall_time_s`` and
``hops_per_s`` — to ``OUT/<name>.json`` (sorted keys, floats as Python prints them); with
``--trace`` the runs record traces too and the JSON adds, per trace table, its row count and
the SHA-256 of its CSV text (key ``traces``). With
``--against DIR`` it compares them with a directory an earlier build wrote and names every
case whose summary differs, with the first differing key path.

    PYTHONPATH=/tmp/before/python python3 benches/determinism.py --out /tmp/det-before
    PYTHONPATH=python python3 benches/determinism.py --out /tmp/det-after --against /tmp/det-before

Exit status: 0 all identical (or nothing to compare), 1 some summary differs, 2 bad flags.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"

#: Measured, not simulated: they differ between any two executions.
TIMING_KEYS = ("wall_time_s", "hops_per_s")


def cases(duration: str, trace: bool) -> Iterator[tuple[str, Callable[[], dict[str, Any]]]]:
    """(name, run) for every shipped scenario and the two benchmark set-ups."""
    import linklab

    def out(r: linklab.Result) -> dict[str, Any]:
        summary = strip(r.summary)
        if trace:
            summary["traces"] = {
                name: [frame.height, hashlib.sha256(frame.write_csv().encode()).hexdigest()]
                for name, frame in sorted(r.traces.items())
            }
        return summary

    for path in sorted(SCENARIOS.glob("*.toml")):
        doc = tomllib.loads(path.read_text())
        doc["duration"] = duration

        def run(doc: dict[str, Any] = doc, path: Path = path) -> dict[str, Any]:
            return out(linklab.run(doc, base_dir=path.parent, trace=trace))

        yield path.stem, run

    def ns2() -> dict[str, Any]:
        from linklab.reproduce.lt_tcp import _ns2

        params = {"per": 0.1, "duration": duration}
        return out(linklab.run(_ns2("sack", delack=True), seed=1, params=params, trace=trace))

    yield "bench-vs-ns2-per0.1", ns2

    def ns3() -> dict[str, Any]:
        params = {"duration": duration, "iw": 10, "delack": "true", "min_rto": "1s", "mss": 448}
        params["framing"] = "2B"
        scenario = SCENARIOS / "dumbbell-red-ecn.toml"
        return out(linklab.run(scenario, seed=1, params=params, trace=trace))

    yield "bench-vs-ns3", ns3


def strip(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary without its measured fields."""
    return {k: v for k, v in summary.items() if k not in TIMING_KEYS}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="determinism", description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    p.add_argument("--out", type=Path, required=True, help="directory for <name>.json")
    p.add_argument("--against", type=Path, help="compare with the summaries in this directory")
    p.add_argument("--duration", default="20s", help="simulated time of every case (default 20s)")
    p.add_argument("--only", default="", help="comma-separated case names (default: all)")
    p.add_argument("--trace", action="store_true", help="also compare the trace tables")
    a = p.parse_args(argv)
    if a.against is not None and not a.against.is_dir():
        p.error(f"--against {a.against}: not a directory; allowed: a directory --out wrote")
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    only = {n for n in a.only.split(",") if n}
    differ = 0
    for name, run in cases(a.duration, a.trace):
        if only and name not in only:
            continue
        started = time.perf_counter()
        summary = run()
        text = json.dumps(summary, sort_keys=True, indent=1) + "\n"
        (a.out / f"{name}.json").write_text(text)
        note = f"{time.perf_counter() - started:6.2f} s  events {summary.get('events')}"
        if a.against is not None:
            old = a.against / f"{name}.json"
            if not old.exists():
                note += "  (nothing to compare)"
            elif old.read_text() != text:
                from linklab.check._properties import _diff as summary_difference

                differ += 1
                d = summary_difference(json.loads(old.read_text()), summary)
                note += f"  DIFFERS at {d}"
            else:
                note += "  identical"
        print(f"{name:32} {note}", flush=True)
    if a.against is not None:
        print("all identical" if differ == 0 else f"{differ} case(s) differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
