#!/usr/bin/env python3
"""Link models side by side: packet-hops per second of every link kind against a wired
link of the same rate (issue 38: "the radio links keep up"; docs/benchmarks.md).

One scenario, one bottleneck kind at a time: ``--flows`` NewReno/SACK bulk flows (MSS 1448)
from S over a 100 Mbit/s, 10 ms access link to G, then the bottleneck G–D at ``--rate``
(2 Mbit/s by default; the ACKs return over the same link kind). The kinds:

* ``wired``: a plain wired direction, drop-tail 100 packets (the reference);
* ``wired-loss``: the same with 1 % Bernoulli loss;
* ``ll-fec`` / ``hybrid``: the wired link with 1 % loss under link-level FEC (RS(255, 254)
  per packet) and hybrid FEC/ARQ (RS(10, 9), 3 link retransmissions);
* ``netem``: the wired link with netem delay, jitter, gemodel loss and reordering;
* ``trace``: a Mahimahi trace link whose constant trace (one 1500-byte opportunity every
  6 ms, both ways) gives the same 2 Mbit/s;
* ``rlc_am``: a UMTS RLC AM bearer (40-byte PDUs, 10 ms TTI) at the rate, Rayleigh fading
  with 1 % frame errors;
* ``frame_arq``: WIPEMU's frame link with link ARQ, 16-QAM at 5 000 frames/s × 100 symbols
  (2 Mbit/s), fading at 25 dB mean SNR.

After a warm-up round (one-time costs such as netem's tables stay out), every kind is
run ``--repeat`` times, the kinds in rotation (the machine is shared: a
slow minute hits every kind alike). Reported per kind: events, hops (packets handed over
at the far end of a link direction), the median run-phase wall time (``timings``), hops
per wall-second, events per hop and the ratio of its hops/s to the wired link's. A kind
below ``--floor`` (default 0.25) of the wired rate is flagged SLOW: a model whose cost per
hop is more than 4× a wired hop's is worth a profile.

    python3 benches/links.py                  # 200 s simulated, 3 rounds
    python3 benches/links.py --quick --json   # 5 s, 1 round (what the test runs)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from linklab import _core
from linklab.api import load_source

KINDS = ("wired", "wired-loss", "ll-fec", "hybrid", "netem", "trace", "rlc_am", "frame_arq")
SLOW_FLOOR = 0.25


def bottleneck(kind: str, rate_bps: float, trace: str) -> dict[str, Any]:
    """The G–D link of ``kind`` at ``rate_bps``."""
    rate = f"{rate_bps:g}bit"
    base: dict[str, Any] = {"a": "G", "b": "D", "rate": rate, "delay": "10ms"}
    queue = {"limit": "100p"}
    if kind == "wired":
        return base | {"queue": queue}
    if kind == "wired-loss":
        return base | {"queue": queue, "loss": 0.01}
    if kind == "ll-fec":
        fec = {"scheme": "ll-fec", "n": 255, "k": 254}
        return base | {"queue": queue, "ab": {"loss": 0.01, "fec": fec}}
    if kind == "hybrid":
        fec = {"scheme": "hybrid", "n": 10, "k": 9, "persistence": 3}
        return base | {"queue": queue, "ab": {"loss": 0.01, "fec": fec}}
    if kind == "netem":
        netem = {
            "delay": "20ms",
            "jitter": "5ms",
            "correlation": 0.25,
            "distribution": "normal",
            "loss": {"kind": "gemodel", "p": 0.01, "r": 0.3, "loss_bad": 0.5, "loss_good": 0.0},
            "reorder": 0.01,
            "gap": 5,
        }
        return base | {"queue": queue, "ab": {"netem": netem}}
    if kind == "trace":
        return {
            "a": "G",
            "b": "D",
            "delay": "10ms",
            "queue": queue,
            "ab": {"trace": trace},
            "ba": {"trace": trace},
        }
    if kind == "rlc_am":
        return {
            "a": "G",
            "b": "D",
            "kind": "rlc_am",
            "rate": rate,
            "buffer": "100p",
            "channel": {"kind": "rayleigh", "fd_t": 0.01, "fer": 0.01},
        }
    if kind == "frame_arq":
        return {
            "a": "G",
            "b": "D",
            "kind": "frame_arq",
            "modulation": "16qam",
            "frame_rate": round(rate_bps / (100 * 4)),
            "symbols": 100,
            "channel": {"snr": "25dB"},
            "queue": {"limit": "100p"},
            "uplink": {"rate": rate, "delay": "2ms"},
        }
    raise ValueError(f"unknown link kind {kind!r}; allowed: {', '.join(KINDS)}")


def scenario(kind: str, rate_bps: float, flows: int, duration: float, trace: str) -> dict:
    """The whole scenario for one kind."""
    senders = f"S{{1..{flows}}}"
    return {
        "name": f"links-{kind}",
        "duration": f"{duration:g}s",
        "seed": 1,
        "tcp": {"variant": "sack", "cc": "newreno", "mss": 1448, "rwnd": 1 << 20},
        "links": [
            {"a": senders, "b": "G", "rate": "100Mbit", "delay": "10ms"},
            bottleneck(kind, rate_bps, trace),
        ],
        "flows": [{"from": senders, "to": "D", "count": 1}],
    }


def trace_gap_ms(rate_bps: float) -> int | None:
    """The gap of a constant 1500-byte trace at ``rate_bps``, whole ms, or None."""
    gap_ms = 1500 * 8 / rate_bps * 1000
    if abs(gap_ms - round(gap_ms)) > 1e-9 or gap_ms < 1:
        return None
    return round(gap_ms)


def write_trace(path: Path, rate_bps: float) -> None:
    """A constant Mahimahi trace: one 1500-byte opportunity every 12000/rate s (in ms)."""
    gap = trace_gap_ms(rate_bps)
    assert gap is not None, "checked by main"
    period = 1000 // gap * gap or gap
    path.write_text("".join(f"{t}\n" for t in range(gap, period + 1, gap)))


def run_once(kind: str, args: argparse.Namespace, trace: str) -> dict[str, Any]:
    timings: dict[str, float] = {}
    sc = scenario(kind, args.rate, args.flows, args.duration, trace)
    s, _, _ = _core.run(load_source(sc), timings=timings)
    delivered = sum(f.get("delivered_bytes", 0) for f in s["flows"])
    return {
        "events": s["events"],
        "hops": s["hops"],
        "run_s": timings["run_s"],
        "goodput_bps": delivered * 8 / args.duration,
    }


def parse_rate(text: str) -> float:
    units = {"bit": 1, "kbit": 1e3, "Mbit": 1e6, "Gbit": 1e9}
    for unit, scale in sorted(units.items(), key=lambda u: -len(u[0])):
        if text.endswith(unit):
            try:
                value = float(text[: -len(unit)]) * scale
            except ValueError:
                break
            if value > 0:
                return value
    raise argparse.ArgumentTypeError(
        f"invalid rate {text!r}; allowed: a positive number with bit, kbit, Mbit or Gbit"
    )


def positive(kind: type) -> Any:
    def conv(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"invalid value {text!r}; allowed: a number > 0"
            ) from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"invalid value {text!r}; allowed: a number > 0")
        return value

    return conv


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="links", description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=parse_rate, default=2e6, help="bottleneck rate (2Mbit)")
    ap.add_argument("--flows", type=positive(int), default=4, help="bulk flows (4)")
    ap.add_argument("--duration", type=positive(float), default=200.0, help="simulated s (200)")
    ap.add_argument("--repeat", type=positive(int), default=3, help="rounds (3)")
    ap.add_argument("--floor", type=positive(float), default=SLOW_FLOOR, help="SLOW below this")
    ap.add_argument("--only", help="comma-separated kinds (default: all)")
    ap.add_argument("--quick", action="store_true", help="5 s, 1 round")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args(argv)
    if args.quick:
        args.duration, args.repeat = 5.0, 1
    if trace_gap_ms(args.rate) is None:
        ap.error(
            f"--rate: {args.rate:g} bit/s does not give a whole-millisecond trace gap "
            "(1500 B every N ms); allowed: 12 Mbit/s divided by a whole number, e.g. 2Mbit, "
            "1.2Mbit, 12Mbit"
        )
    kinds = list(KINDS)
    if args.only:
        kinds = [k.strip() for k in args.only.split(",")]
        bad = [k for k in kinds if k not in KINDS]
        if bad:
            ap.error(f"--only: unknown kind {bad[0]!r}; allowed: {', '.join(KINDS)}")
        if "wired" not in kinds:
            kinds.insert(0, "wired")
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "constant.trace"
        write_trace(trace, args.rate)
        # A warm-up round (0.5 s each): one-time costs such as netem's distribution
        # tables, built once per process, stay out of the timed runs.
        warm = argparse.Namespace(**{**vars(args), "duration": 0.5})
        for kind in kinds:
            run_once(kind, warm, str(trace))
        runs: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
        for _ in range(args.repeat):
            for kind in kinds:
                runs[kind].append(run_once(kind, args, str(trace)))
    rows = []
    for kind in kinds:
        rs = runs[kind]
        run_s = statistics.median(r["run_s"] for r in rs)
        first = rs[0]
        rows.append(
            {
                "kind": kind,
                "events": first["events"],
                "hops": first["hops"],
                "run_s": run_s,
                "hops_per_s": first["hops"] / run_s,
                "events_per_hop": first["events"] / max(first["hops"], 1),
                "goodput_bps": first["goodput_bps"],
                "deterministic": all(r["events"] == first["events"] for r in rs),
            }
        )
    wired = rows[0]["hops_per_s"]
    for r in rows:
        r["vs_wired"] = r["hops_per_s"] / wired
        r["slow"] = r["vs_wired"] < args.floor
    result = {
        "benchmark": "links",
        "config": {
            "rate_bps": args.rate,
            "flows": args.flows,
            "duration_s": args.duration,
            "repeat": args.repeat,
            "floor": args.floor,
        },
        "rows": rows,
    }
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(
        f"links: {args.flows} flows over a {args.rate / 1e6:g} Mbit/s bottleneck of each kind, "
        f"{args.duration:g} s simulated, median of {args.repeat}"
    )
    print(
        f"{'kind':<11} {'goodput Mbit/s':>14} {'events':>10} {'hops':>10} {'ev/hop':>7} "
        f"{'run s':>8} {'M hops/s':>9} {'vs wired':>9}"
    )
    for r in rows:
        flag = "  SLOW" if r["slow"] else ""
        print(
            f"{r['kind']:<11} {r['goodput_bps'] / 1e6:>14.3f} {r['events']:>10,} "
            f"{r['hops']:>10,} {r['events_per_hop']:>7.2f} {r['run_s']:>8.3f} "
            f"{r['hops_per_s'] / 1e6:>9.2f} {r['vs_wired']:>9.2f}{flag}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
