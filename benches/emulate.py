#!/usr/bin/env python3
"""The live emulator measured (see docs/benchmarks.md, "Live emulator").

Needs root and /dev/net/tun. Two parts:

* **ceiling**: kernel CUBIC (1 and 4 flows) through a null link (100 Gbit/s, no
  delay) and wired links of 1, 2.5 and 10 Gbit/s (1 ms one way, a drop-tail queue of
  one bandwidth-delay product or more): goodput, packets per second, the loop's timing
  error (p50/p99/p99.9/max), the loop thread's CPU use and TUN drops.
* **kernel vs simulated TCP** over the same links, ``--seeds`` seeds each: kernel
  Reno against linklab's NewReno + SACK, kernel CUBIC against linklab's CUBIC, over
  a 10 Mbit/s drop-tail link of 50 ms round trip and a 1-BDP queue, the same link with
  RED, seed 000's RLC bearer (384 kbit/s, 10 % frame errors, Rayleigh fading) and a
  Mahimahi trace. Both sides get the same ``[tcp]`` (SACK, timestamps, initial window
  10, minimum RTO 200 ms, MSS 1448 — Linux's defaults, which the emulator also applies
  to the kernels); linklab's side also runs delayed ACKs, limited transmit, PRR, RACK
  and (CUBIC) HyStart, as Linux does. Reported: mean goodput of each with its spread,
  and their ratio (goal: within 10 %).

    sudo python3 benches/emulate.py                 # everything (about 30 minutes)
    sudo python3 benches/emulate.py --part ceiling
    sudo python3 benches/emulate.py --quick --json  # what a test runs (about a minute)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tomllib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO.parent / "shared" / "traces" / "mahimahi"

CEILING = """
name = "ceiling {label}"
duration = "{duration}s"
[tcp]
cc = "cubic"
variant = "sack"
timestamps = true
initial_window = 10
min_rto = "200ms"
rwnd = "64MiB"
[[links]]
a = "S"
b = "D"
rate = "{rate}"
delay = "{delay}"
queue = {{ limit = "{limit}p" }}
[[flows]]
from = "S"
to = "D"
count = {flows}
"""

TCP = """
[tcp]
variant = "sack"
cc = {cc}
timestamps = true
initial_window = 10
min_rto = "200ms"
mss = 1448
rwnd = "8MiB"
delayed_ack = true
limited_transmit = true
prr = true
rack = true
"""

#: Our congestion control for each kernel one, as close to Linux's as our model goes.
CC = {"reno": '"newreno"', "cubic": '{ kind = "cubic", hystart = true }'}

LINK = """
name = "{name}"
duration = "{duration}s"
[[links]]
a = "S"
b = "D"
rate = "10Mbit"
delay = "25ms"
queue = {queue}
[[flows]]
from = "S"
to = "D"
"""

DROPTAIL = '{ limit = "42p" }'  # 10 Mbit/s x 50 ms = 62.5 kB = 42 packets of 1500 B
RED = '{ kind = "red", limit = "84p", minth = 10, maxth = 30 }'


def _scenarios(duration: float, quick: bool) -> dict[str, tuple[str | Path, dict[str, str]]]:
    """name -> (scenario TOML text, or a Path to a scenario file; params)."""
    out: dict[str, tuple[str | Path, dict[str, str]]] = {
        "droptail 10 Mbit/s 1 BDP": (
            LINK.format(name="droptail", duration=duration, queue=DROPTAIL),
            {},
        ),
        "RED 10 Mbit/s": (LINK.format(name="red", duration=duration, queue=RED), {}),
    }
    if not quick:
        out["RLC 384 kbit/s 10 % FER"] = (
            REPO / "scenarios" / "umts-rlc-droptail.toml",
            {"duration": f"{duration}s", "fer": "0.1", "rate": "384kbit", "buffer": "40p"},
        )
        down, up = TRACES / "TMobile-LTE-short.down", TRACES / "TMobile-LTE-short.up"
        if down.exists() and up.exists():
            out["trace TMobile-LTE-short"] = (
                REPO / "scenarios" / "cellular-trace.toml",
                {"duration": f"{duration}s", "down": str(down), "up": str(up)},
            )
    return out


def _with_tcp(source: str | Path, cc: str) -> dict[str, Any]:
    """The scenario as a dict with the comparison's [tcp] in place of its own."""
    doc = tomllib.loads(source.read_text() if isinstance(source, Path) else source)
    doc["tcp"] = tomllib.loads(TCP.format(cc=cc))["tcp"]
    return doc


def ceiling(duration: float, quick: bool) -> list[dict[str, Any]]:
    from linklab.emulate import emulate

    rows = []
    links = [("null", "100Gbit", "0ms", 20000), ("1 Gbit/s", "1Gbit", "1ms", 2000)]
    if not quick:
        links += [("2.5 Gbit/s", "2500Mbit", "1ms", 4000), ("10 Gbit/s", "10Gbit", "1ms", 16000)]
    for label, rate, delay, limit in links:
        for flows in (1,) if quick else (1, 4):
            text = CEILING.format(
                label=label, duration=duration, rate=rate, delay=delay, limit=limit, flows=flows
            )
            print(f"[emulate] ceiling {label}, {flows} flow(s) ...", file=sys.stderr)
            s = emulate(text).summary
            e = s["emulation"]
            secs = s["sim_time_s"]
            rows.append(
                {
                    "link": label,
                    "flows": flows,
                    "goodput_mbit": s["aggregate"]["goodput_bps"] / 1e6,
                    "packets_per_s": e["packets_read"] / secs,
                    "timing_error_us": {k: v * 1e6 for k, v in e["timing_error_s"].items()},
                    "loop_cpu": e["loop_cpu_s"] / secs,
                    "tun_drops": e["tun_drops"],
                    "link_drops": e["link_drops"],
                }
            )
    return rows


def compare(duration: float, seeds: int, quick: bool) -> list[dict[str, Any]]:
    import linklab
    from linklab.emulate import emulate

    rows = []
    for name, (source, params) in _scenarios(duration, quick).items():
        base_dir = str(source.parent) if isinstance(source, Path) else None
        for ours, kernel in (("newreno", "reno"), ("cubic", "cubic")):
            doc = _with_tcp(source, CC[kernel])
            sim, live = [], []
            for seed in range(1, seeds + 1):
                print(f"[emulate] {name}, {ours}, seed {seed} ...", file=sys.stderr)
                r = linklab.run(doc, seed=seed, params=params, base_dir=base_dir)
                sim.append(r.summary["aggregate"]["goodput_bps"])
                e = emulate(doc, seed=seed, params=params, base_dir=base_dir).summary
                live.append(e["aggregate"]["goodput_bps"])
            rows.append(
                {
                    "link": name,
                    "ours": ours,
                    "kernel": kernel,
                    "seeds": seeds,
                    "sim_mbit": statistics.mean(sim) / 1e6,
                    "sim_sd_mbit": (statistics.stdev(sim) if seeds > 1 else 0.0) / 1e6,
                    "kernel_mbit": statistics.mean(live) / 1e6,
                    "kernel_sd_mbit": (statistics.stdev(live) if seeds > 1 else 0.0) / 1e6,
                    "ratio": statistics.mean(live) / max(statistics.mean(sim), 1.0),
                }
            )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="2 links, 1 seed, 3 s (what a test runs)")
    ap.add_argument("--part", choices=["ceiling", "compare", "all"], default="all")
    ap.add_argument(
        "--duration", type=float, help="seconds per run (default 5 ceiling, 20 compare)"
    )
    ap.add_argument("--seeds", type=int, default=10, help="seeds per comparison (default 10)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args()
    if os.geteuid() != 0 or not os.path.exists("/dev/net/tun"):
        print("emulate bench: needs root and /dev/net/tun", file=sys.stderr)
        return 2
    out: dict[str, Any] = {}
    if a.part in ("ceiling", "all"):
        out["ceiling"] = ceiling(a.duration or (2.0 if a.quick else 5.0), a.quick)
    if a.part in ("compare", "all"):
        out["compare"] = compare(
            a.duration or (3.0 if a.quick else 20.0), 1 if a.quick else a.seeds, a.quick
        )
    if a.json:
        print(json.dumps(out))
        return 0
    for r in out.get("ceiling", []):
        t = r["timing_error_us"]
        print(
            f"{r['link']:>10} {r['flows']} flow(s): {r['goodput_mbit']:8.1f} Mbit/s  "
            f"{r['packets_per_s'] / 1e3:6.1f} kpkt/s  lateness p50 {t['p50']:.0f} "
            f"p99 {t['p99']:.0f} p99.9 {t['p999']:.0f} max {t['max']:.0f} us  "
            f"loop CPU {100 * r['loop_cpu']:.0f} %  TUN drops {r['tun_drops']}"
        )
    for r in out.get("compare", []):
        verdict = "PASS" if abs(r["ratio"] - 1) <= 0.10 else "MISS"
        print(
            f"{r['link']:>26} kernel {r['kernel']:>5} "
            f"{r['kernel_mbit']:7.3f} ± {r['kernel_sd_mbit']:.3f}"
            f"  linklab {r['ours']:>7} {r['sim_mbit']:7.3f} ± {r['sim_sd_mbit']:.3f} Mbit/s"
            f"  ratio {r['ratio']:.3f}  {verdict}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
