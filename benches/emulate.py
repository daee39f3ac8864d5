#!/usr/bin/env python3
"""The live emulator measured (see docs/benchmarks.md, "Live emulator").

Needs root and /dev/net/tun. Three parts:

* **ceiling**: kernel CUBIC (1 and 4 flows) through a null link (100 Gbit/s, no
  delay) and wired links of 1, 2.5 and 10 Gbit/s (1 ms one way, a drop-tail queue of
  one bandwidth-delay product or more): goodput, packets per second, the loop's timing
  error (p50/p99/p99.9/max), the loop thread's CPU use and TUN drops.
* **compare** — kernel TCP against linklab's TCP over a grid of the same links: Linux
  CUBIC, BBR and Reno against linklab's ``cubic``, ``bbr`` (paced) and ``newreno``;
  the bottleneck's queue drop-tail (1 BDP), CoDel, FQ-CoDel, PIE or RED (the AQM runs
  in linklab's link model on both sides); 1 and 4 flows; 20 and 100 ms round trip
  over 10 Mbit/s. Both sides run linklab's ``profile = "linux"`` (SACK, timestamps,
  initial window 10, minimum RTO 200 ms, MSS 1448, delayed ACKs with a 40 ms timer,
  PRR, RACK-TLP; the emulator applies what Linux has knobs for to the kernels).
  Each cell ``--reps`` times per side (seeds 1..N: the flows' start jitter and the
  AQMs' random draws, the same on both sides): goodput, mean queueing delay at the
  bottleneck (Little's law on the link model's own queue), retransmissions
  (kernel: ``tcpi_total_retrans``), mean ± standard deviation and kernel / linklab
  ratios. The emulator runs at SCHED_FIFO priority 10 (``--priority``); a live run
  whose loop's p99 lateness exceeds 1 ms (or with TUN drops) is run again after the
  grid, and flagged if it stays out. ``--kernel KEY=VALUE`` and ``--tcp KEY=VALUE``
  change one setting on one side (experiments; ``--part causes`` runs the ones
  docs/benchmarks.md reports).
* **cellular** — issue 33's trust question: one CUBIC flow over the synthetic
  cellular trace (``scenarios/cellular-trace.toml``: 24, 12, 6, 1 Mbit/s steps and a
  300-ms outage per 10-s cycle) behind drop-tail, CoDel and FQ-CoDel, with the
  scenario's own ``[tcp]`` (linklab's defaults: NewReno recovery without SACK,
  minimum RTO 1 s, initial window 1; the kernels get those knobs) and with
  ``profile = "linux"``; goodput, timeouts (kernel: ``tcpi_total_rto``),
  retransmissions and the AQM's drops, ``--reps`` live runs per cell.
* **links** — the earlier point comparison: kernel Reno and CUBIC against linklab's
  NewReno + SACK and CUBIC over a 10 Mbit/s drop-tail link (50 ms, 1 BDP), the same
  with RED, seed 000's RLC bearer and a Mahimahi trace (when the folder
  ``$LINKLAB_TRACES`` names holds it; skipped otherwise, with a line saying so).

    python3 benches/emulate.py --part compare --json --out grid.json  # ~100 min
    python3 benches/emulate.py --part compare --only cc=cubic,queue=droptail
    python3 benches/emulate.py --part ceiling
    python3 benches/emulate.py --part cellular --out benches/results/emulate-cellular.json
    python3 benches/emulate.py --quick --json  # what a test runs (about a minute)
    python3 benches/emulate.py --from benches/results/emulate-compare.json \
        benches/results/emulate-causes.json   # the tables of saved results

A cell agrees when goodput is within 10 % and the queueing delay within 15 % (or
1.2 ms) -- :data:`GOODPUT_TOLERANCE`, :data:`QDELAY_TOLERANCE`, fixed before the grid
was first run; the results and each difference's cause are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import time
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

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
abc = true
"""

#: Our congestion control for each kernel one, as close to Linux's as our model goes.
CC = {"reno": '"newreno"', "cubic": '{ kind = "cubic", hystart = "classic" }'}

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
        from linklab._files import TRACES_HOW, mahimahi_traces

        folder = mahimahi_traces()
        down = folder / "TMobile-LTE-short.down" if folder else None
        up = folder / "TMobile-LTE-short.up" if folder else None
        if down and up and down.exists() and up.exists():
            out["trace TMobile-LTE-short"] = (
                REPO / "scenarios" / "cellular-trace.toml",
                {"duration": f"{duration}s", "down": str(down), "up": str(up)},
            )
        else:
            print(
                "[emulate] skip: the trace cell needs the TMobile-LTE-short pair of "
                f"Mahimahi's traces: {TRACES_HOW}",
                file=sys.stderr,
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


def links(duration: float, seeds: int, quick: bool) -> list[dict[str, Any]]:
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


#: Kernel congestion control -> linklab's of the same name.
GRID_CC = {"cubic": "cubic", "bbr": "bbr", "reno": "newreno"}
GRID_QUEUES = ("droptail", "codel", "fq_codel", "pie", "red")
GRID_FLOWS = (1, 4)
GRID_RTTS_MS = (20, 100)
#: The bottleneck (bit/s) and the packet size on it (MSS 1448 + 52 bytes of headers).
RATE_BPS = 10_000_000
PACKET_BYTES = 1500
#: A live run whose loop wrote packets later than this at its 99th percentile, or
#: whose kernels dropped packets at a TUN device, is rejected and run again (fixed
#: before the grid was first run: 1 ms is 5 % of the shorter RTT and a fifth of
#: CoDel's target; the loop's p99 on an idle core is tens of microseconds).
TIMING_P99_BOUND_S = 1e-3
#: A cell agrees when the kernel's mean goodput is within 10 % of linklab's and its
#: mean queueing delay within 15 % -- the targets of the ns-3 grid (issue 33, item 5),
#: fixed before this grid was first run (2026-11-27). A queueing delay below one
#: packet's service time at the bottleneck (1.2 ms) is not told apart by a ratio: two
#: delays within that of each other also agree (the delay's "floor"; the strict pass
#: rate without it is reported beside).
GOODPUT_TOLERANCE = 0.10
QDELAY_TOLERANCE = 0.15
QDELAY_FLOOR_MS = PACKET_BYTES * 8 / RATE_BPS * 1e3
#: The quick form: two cells (what tests/test_bench_emulate.py runs).
QUICK_CELLS = (("cubic", "droptail", 1, 20), ("bbr", "codel", 4, 20))

GRID = """
name = "grid {kernel} {queue} {flows} flow(s) {rtt} ms"
duration = "{duration}s"
[tcp]
profile = "linux"
[[links]]
a = "S"
b = "D"
rate = "10Mbit"
delay = "{one_way}ms"
[[flows]]
from = "S"
to = "D"
count = {flows}
"""


def bdp_packets(rtt_ms: float) -> int:
    """The bottleneck's bandwidth-delay product in 1500-byte packets, rounded up."""
    return math.ceil(RATE_BPS * rtt_ms / 1000 / 8 / PACKET_BYTES)


def grid_queue(kind: str, rtt_ms: float) -> dict[str, Any]:
    """The bottleneck queue of a grid cell (the S->D direction only)."""
    bdp = bdp_packets(rtt_ms)
    if kind == "droptail":
        return {"kind": "droptail", "limit": f"{bdp}p"}
    if kind == "red":
        # ns-3's RED defaults (min_th 5, max_th 15; max_p 0.02, w_q 0.002, gentle)
        # with room for the gentle region (2 max_th = 30) and bursts: 2 BDP, >= 40.
        return {"kind": "red", "limit": f"{max(2 * bdp, 40)}p", "minth": 5, "maxth": 15}
    # CoDel (5 ms / 100 ms), FQ-CoDel (1024 queues, 10240 packets), PIE (15 ms, 1000
    # packets): their defaults, which are Linux's.
    return {"kind": kind}


def grid_doc(
    kernel: str,
    queue: str,
    flows: int,
    rtt_ms: float,
    duration: float,
    tcp: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A grid cell as a scenario dict: one 10 Mbit/s link S-D of ``rtt_ms`` round
    trip, ``queue`` on S->D, ``flows`` bulk flows S->D; linklab's Linux profile with
    the congestion control of the kernel's name (BBR paced); ``tcp`` overrides keys
    of ``[tcp]`` (``cc.KEY`` a key of the congestion control's table)."""
    doc = tomllib.loads(
        GRID.format(
            kernel=kernel,
            queue=queue,
            flows=flows,
            rtt=rtt_ms,
            duration=duration,
            one_way=rtt_ms / 2,
        )
    )
    cc: dict[str, Any] = {"kind": GRID_CC[kernel]}
    doc["tcp"]["cc"] = cc
    if kernel == "bbr":
        doc["tcp"]["pacing"] = True
    for key, value in (tcp or {}).items():
        if key.startswith("cc."):
            cc[key[3:]] = value
        else:
            doc["tcp"][key] = value
    doc["links"][0]["ab"] = {"queue": grid_queue(queue, rtt_ms)}
    if flows > 1:
        # Starts spread over one RTT (drawn from the seed, the same on both sides).
        doc["flows"][0]["start_jitter"] = f"{rtt_ms}ms"
    return doc


def run_metrics(s: Mapping[str, Any], live: bool) -> dict[str, Any]:
    """What a grid cell reports of one run (simulated or live)."""
    link = next(x for x in s["links"] if x["name"] == "S->D")
    queue = next(x for x in s["queues"] if x["link"] == "S->D")
    secs = s["sim_time_s"]
    # Little's law over the packets that left the queue for the wire: mean time a
    # packet waited in the bottleneck's queue (transmission and propagation excluded).
    qdelay = queue["mean_packets"] * secs / link["tx_packets"] if link["tx_packets"] else 0.0
    goodputs = [f["goodput_bps"] for f in s["flows"]]
    jain = sum(goodputs) ** 2 / (len(goodputs) * sum(g * g for g in goodputs) or 1.0)
    agg = s["aggregate"]
    out: dict[str, Any] = {
        "goodput_mbit": agg["goodput_bps"] / 1e6,
        "qdelay_ms": qdelay * 1e3,
        "retransmits": agg["retransmits"],
        "timeouts": agg["timeouts"],
        "queue_drops": sum(queue["drops"].values()),
        "jain": jain,
    }
    if live:
        e = s["emulation"]
        out["timing_p99_ms"] = e["timing_error_s"]["p99"] * 1e3
        out["timing_max_ms"] = e["timing_error_s"]["max"] * 1e3
        out["tun_drops"] = e["tun_drops"]
        out["scheduler"] = e.get("scheduler")
        out["rwnd_limited"] = _fraction(s, "rwnd_s")
    else:
        out["rwnd_limited"] = _fraction(s, "rwnd_s")
    return out


def _fraction(s: Mapping[str, Any], key: str) -> float | None:
    busy = sum((f.get("send_limits") or {}).get("busy_s") or 0.0 for f in s["flows"])
    part = sum((f.get("send_limits") or {}).get(key) or 0.0 for f in s["flows"])
    return part / busy if busy > 0 else None


def rejected(m: Mapping[str, Any]) -> bool:
    """A live run outside the timing bound (or with TUN drops)."""
    return m["timing_p99_ms"] > TIMING_P99_BOUND_S * 1e3 or m["tun_drops"] > 0


@contextlib.contextmanager
def priority(how: str) -> Iterator[str]:
    """Run the body (the emulator's threads inherit it) at a raised priority:
    ``fifo`` (SCHED_FIFO 10, above every ordinary process), ``nice`` (nice -15) or
    ``none``; yields what was set."""
    if how == "fifo":
        old = os.sched_getscheduler(0), os.sched_getparam(0)
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        try:
            yield "SCHED_FIFO 10"
        finally:
            os.sched_setscheduler(0, old[0], old[1])
    elif how == "nice":
        before = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, 0, -15)
        try:
            yield "nice -15"
        finally:
            os.setpriority(os.PRIO_PROCESS, 0, before)
    else:
        yield "none"


def _stats(values: Sequence[float | None]) -> tuple[float | None, float]:
    xs = [v for v in values if v is not None]
    if not xs:
        return None, 0.0
    return statistics.mean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    if b == 0:
        return None if a != 0 else 1.0
    return a / b


def cell_row(
    key: tuple[str, str, int, int],
    sims: Sequence[Mapping[str, Any]],
    lives: Sequence[Mapping[str, Any]],
    **extra: Any,
) -> dict[str, Any]:
    """A grid cell: every run of each side, mean and standard deviation of each
    measure, kernel / linklab ratios, and whether any live run stayed outside the
    timing bound after its reruns."""
    kernel, queue, flows, rtt = key
    row: dict[str, Any] = {
        "kernel": kernel,
        "ours": GRID_CC[kernel],
        "queue": queue,
        "flows": flows,
        "rtt_ms": rtt,
        "bdp_packets": bdp_packets(rtt),
        "reps": len(sims),
        "linklab_runs": list(sims),
        "kernel_runs": list(lives),
        "flagged": any(rejected(m) for m in lives),
        **extra,
    }
    for name in ("goodput_mbit", "qdelay_ms", "retransmits", "timeouts", "queue_drops", "jain"):
        k_mean, k_sd = _stats([m[name] for m in lives])
        s_mean, s_sd = _stats([m[name] for m in sims])
        row[name] = {
            "kernel": k_mean,
            "kernel_sd": k_sd,
            "linklab": s_mean,
            "linklab_sd": s_sd,
            "ratio": _ratio(k_mean, s_mean),
        }
    row["timing_p99_ms_max"] = max(m["timing_p99_ms"] for m in lives)
    row.update(verdict(row))
    return row


def _within(a: float | None, b: float | None, tolerance: float, floor: float = 0.0) -> bool:
    if a is None or b is None:
        return False
    return abs(a - b) <= floor or (b > 0 and abs(a / b - 1) <= tolerance)


def verdict(row: Mapping[str, Any]) -> dict[str, bool]:
    """Whether a cell agrees (:data:`GOODPUT_TOLERANCE`, :data:`QDELAY_TOLERANCE`):
    ``goodput_ok``, ``qdelay_ok`` (with the floor), ``qdelay_ok_strict`` (without),
    ``agrees`` (both, with the floor) and ``agrees_strict``."""
    g, q = row["goodput_mbit"], row["qdelay_ms"]
    goodput_ok = _within(g["kernel"], g["linklab"], GOODPUT_TOLERANCE)
    qdelay_ok = _within(q["kernel"], q["linklab"], QDELAY_TOLERANCE, QDELAY_FLOOR_MS)
    strict = _within(q["kernel"], q["linklab"], QDELAY_TOLERANCE)
    return {
        "goodput_ok": goodput_ok,
        "qdelay_ok": qdelay_ok,
        "qdelay_ok_strict": strict,
        "agrees": goodput_ok and qdelay_ok,
        "agrees_strict": goodput_ok and strict,
    }


def pass_rate(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """How many cells agree, with and without the delay's floor, and on each measure."""
    n = len(rows)
    count = {
        k: sum(1 for r in rows if r[k])
        for k in ("agrees", "agrees_strict", "goodput_ok", "qdelay_ok", "qdelay_ok_strict")
    }
    return {"cells": n, **count, "fraction": count["agrees"] / n if n else None}


def grid_cells(
    quick: bool,
    only: Mapping[str, set[str]],
) -> list[tuple[str, str, int, int]]:
    cells = (
        list(QUICK_CELLS)
        if quick
        else [
            (cc, q, f, r)
            for r in GRID_RTTS_MS
            for f in GRID_FLOWS
            for q in GRID_QUEUES
            for cc in GRID_CC
        ]
    )
    names = ("cc", "queue", "flows", "rtt")

    def wanted(c: tuple[str, str, int, int]) -> bool:
        return all(str(v) in only.get(n, {str(v)}) for n, v in zip(names, c, strict=True))

    return [c for c in cells if wanted(c)]


def grid(
    duration: float,
    reps: int,
    quick: bool,
    how: str,
    only: Mapping[str, set[str]],
    kernel_knobs: Mapping[str, str] | None = None,
    tcp: Mapping[str, Any] | None = None,
    retries: int = 2,
) -> list[dict[str, Any]]:
    """The grid: each cell ``reps`` times on each side (seeds 1..reps); live runs
    outside the timing bound are run again after the whole grid, up to ``retries``
    more rounds."""
    cells = grid_cells(quick, only)
    sims: dict[Any, list[dict[str, Any]]] = {}
    lives: dict[Any, list[dict[str, Any]]] = {}

    for i, cell in enumerate(cells):
        print(f"[emulate] cell {i + 1}/{len(cells)} {cell} ...", file=sys.stderr)
        sims[cell] = [simulated(cell, seed, duration, tcp) for seed in range(1, reps + 1)]
        lives[cell] = [live(cell, seed, duration, how, kernel_knobs) for seed in range(1, reps + 1)]
    reruns = rerun_rejected(lives, duration, how, kernel_knobs, retries)
    return [
        cell_row(c, sims[c], lives[c], duration_s=duration, timing_reruns=reruns) for c in cells
    ]


def simulated(
    cell: tuple[str, str, int, int], seed: int, duration: float, tcp: Mapping[str, Any] | None
) -> dict[str, Any]:
    """One simulated run of a grid cell (``tcp``: changes to linklab's side only)."""
    import linklab

    doc = grid_doc(*cell, duration=duration, tcp=tcp)
    return {**run_metrics(linklab.run(doc, seed=seed).summary, live=False), "seed": seed}


def live(
    cell: tuple[str, str, int, int],
    seed: int,
    duration: float,
    how: str,
    kernel_knobs: Mapping[str, str] | None,
) -> dict[str, Any]:
    """One live run of a grid cell (``kernel_knobs``: changes to the kernels only)."""
    from linklab.emulate import emulate

    doc = grid_doc(*cell, duration=duration)
    with priority(how):
        s = emulate(doc, seed=seed, kernel=kernel_knobs).summary
    return {**run_metrics(s, live=True), "seed": seed}


def rerun_rejected(
    lives: dict[Any, list[dict[str, Any]]],
    duration: float,
    how: str,
    kernel_knobs: Mapping[str, str] | None,
    retries: int,
) -> int:
    """Run again, up to ``retries`` rounds, the live runs outside the timing bound
    (``lives``: cell -> runs, replaced in place); how many reruns that took."""
    reruns = 0
    for _ in range(retries):
        bad = [(c, j) for c, runs in lives.items() for j, m in enumerate(runs) if rejected(m)]
        if not bad:
            break
        print(f"[emulate] {len(bad)} live run(s) outside the timing bound: again", file=sys.stderr)
        for c, j in bad:
            reruns += 1
            lives[c][j] = live(c, lives[c][j]["seed"], duration, how, kernel_knobs)
    return reruns


#: One setting changed on one side of a grid cell, to find what makes the two sides
#: differ (docs/benchmarks.md, "Causes"): (what changes, cell, side, setting). Kernel
#: settings go through ``linklab emulate --kernel``; linklab's are ``[tcp]`` keys.
CAUSES: tuple[tuple[str, tuple[str, str, int, int], str, dict[str, Any]], ...] = (
    # BBR holds a longer queue in the kernel: bursts (GSO) or ACKs (delayed)?
    ("no GSO", ("bbr", "droptail", 1, 20), "kernel", {"gso_max_segs": "1"}),
    ("an ACK per segment", ("bbr", "droptail", 1, 20), "kernel", {"quickack": "1"}),
    ("an ACK per segment", ("bbr", "droptail", 1, 20), "linklab", {"delayed_ack": False}),
    # Reno: Linux grows the window by the segments an ACK covers (tcp_cong_avoid_ai,
    # tcp_slow_start); linklab's RFC 5681 rule by one increment per ACK, so with
    # delayed ACKs half as fast. One ACK per segment on linklab's side removes the
    # difference if that is the cause; on the kernel's side it should change little.
    ("an ACK per segment", ("reno", "codel", 1, 20), "linklab", {"delayed_ack": False}),
    ("an ACK per segment", ("reno", "codel", 1, 20), "kernel", {"quickack": "1"}),
    ("an ACK per segment", ("reno", "codel", 4, 20), "linklab", {"delayed_ack": False}),
    ("an ACK per segment", ("reno", "codel", 4, 20), "kernel", {"quickack": "1"}),
    ("an ACK per segment", ("reno", "codel", 1, 100), "linklab", {"delayed_ack": False}),
    ("an ACK per segment", ("reno", "droptail", 1, 100), "linklab", {"delayed_ack": False}),
    ("an ACK per segment", ("reno", "pie", 1, 20), "linklab", {"delayed_ack": False}),
    # CUBIC: the end of the first slow start (Linux's HyStart, linklab's HyStart++).
    ("no HyStart++", ("cubic", "droptail", 1, 100), "linklab", {"cc.hystart": False}),
    ("no HyStart++", ("cubic", "droptail", 1, 20), "linklab", {"cc.hystart": False}),
    ("no HyStart++", ("cubic", "pie", 1, 100), "linklab", {"cc.hystart": False}),
)


def causes(duration: float, reps: int, how: str, quick: bool) -> list[dict[str, Any]]:
    """Each of :data:`CAUSES`: the cell's baseline on both sides and the changed
    side with its one setting changed, ``reps`` runs each."""
    todo = CAUSES[:2] if quick else CAUSES
    seeds = range(1, reps + 1)
    base_sim: dict[Any, list[dict[str, Any]]] = {}
    base_live: dict[Any, list[dict[str, Any]]] = {}
    changed: dict[Any, list[dict[str, Any]]] = {}
    for i, (what, cell, side, setting) in enumerate(todo):
        print(f"[emulate] cause {i + 1}/{len(todo)}: {what} {side} {cell} ...", file=sys.stderr)
        if cell not in base_sim:
            base_sim[cell] = [simulated(cell, seed, duration, None) for seed in seeds]
            base_live[cell] = [live(cell, seed, duration, how, None) for seed in seeds]
        if side == "kernel":
            changed[i] = [live(cell, seed, duration, how, setting) for seed in seeds]
        else:
            changed[i] = [simulated(cell, seed, duration, setting) for seed in seeds]
    reruns = rerun_rejected(base_live, duration, how, None, 2)
    for i, (_, cell, side, setting) in enumerate(todo):
        if side == "kernel":
            rerun_lives = {cell: changed[i]}
            reruns += rerun_rejected(rerun_lives, duration, how, setting, 2)
    rows = []
    for i, (what, cell, side, setting) in enumerate(todo):
        row: dict[str, Any] = {
            "what": what,
            "kernel": cell[0],
            "queue": cell[1],
            "flows": cell[2],
            "rtt_ms": cell[3],
            "side": side,
            "setting": setting,
            "reps": reps,
            "duration_s": duration,
            "flagged": any(rejected(m) for m in base_live[cell])
            or (side == "kernel" and any(rejected(m) for m in changed[i])),
            "timing_reruns": reruns,
        }
        for name in ("goodput_mbit", "qdelay_ms", "retransmits", "timeouts"):
            row[name] = {
                label: _stats([m[name] for m in runs])
                for label, runs in (
                    ("kernel", base_live[cell]),
                    ("linklab", base_sim[cell]),
                    ("changed", changed[i]),
                )
            }
        rows.append(row)
    return rows


def causes_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The cause experiments as a Markdown table: the cell's two sides, then the
    changed side with one setting changed."""

    def cell(v: tuple[float | None, float], fmt: str) -> str:
        mean, sd = v
        return "–" if mean is None else f"{format(mean, fmt)} ± {format(sd, fmt)}"

    lines = [
        "| cell | change (side) | goodput Mbit/s kernel / linklab → changed "
        "| queueing delay ms | retransmits | timeouts |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        parts = []
        for name, fmt in (
            ("goodput_mbit", ".2f"),
            ("qdelay_ms", ".1f"),
            ("retransmits", ".0f"),
            ("timeouts", ".1f"),
        ):
            v = r[name]
            parts.append(
                f"{cell(v['kernel'], fmt)} / {cell(v['linklab'], fmt)} → "
                f"**{cell(v['changed'], fmt)}**"
            )
        setting = ", ".join(f"{k} = {v}" for k, v in r["setting"].items())
        flag = " ⚑" if r["flagged"] else ""
        lines.append(
            f"| {r['kernel']} {r['queue']} {r['flows']} × {r['rtt_ms']} ms "
            f"| {r['what']}: `{setting}` ({r['side']}){flag} | " + " | ".join(parts) + " |"
        )
    return "\n".join(lines)


def grid_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The grid as a Markdown table, kernel vs linklab side by side."""

    def pair(r: Mapping[str, Any], name: str, fmt: str) -> str:
        v = r[name]
        k = "–" if v["kernel"] is None else format(v["kernel"], fmt)
        s = "–" if v["linklab"] is None else format(v["linklab"], fmt)
        return f"{k} ± {format(v['kernel_sd'], fmt)} / {s} ± {format(v['linklab_sd'], fmt)}"

    def ratio(v: float | None) -> str:
        return "–" if v is None else f"{v:.2f}"

    lines = [
        "| cc | queue | flows | RTT | goodput Mbit/s kernel / linklab | ratio "
        "| queueing delay ms kernel / linklab | ratio | retransmits kernel / linklab "
        "| ratio | timing p99 | agrees |",
        "|---|---|---:|---:|---|---:|---|---:|---|---:|---:|---|",
    ]
    for r in rows:
        flag = " ⚑" if r["flagged"] else ""
        lines.append(
            f"| {r['kernel']} | {r['queue']} | {r['flows']} | {r['rtt_ms']} ms "
            f"| {pair(r, 'goodput_mbit', '.2f')} | {ratio(r['goodput_mbit']['ratio'])} "
            f"| {pair(r, 'qdelay_ms', '.1f')} | {ratio(r['qdelay_ms']['ratio'])} "
            f"| {pair(r, 'retransmits', '.0f')} | {ratio(r['retransmits']['ratio'])} "
            f"| {r['timing_p99_ms_max']:.2f} ms{flag} | {_agrees(r)} |"
        )
    return "\n".join(lines)


def _agrees(r: Mapping[str, Any]) -> str:
    if r["agrees_strict"]:
        return "yes"
    if r["agrees"]:
        return "yes (floor)"
    return "no: " + " and ".join(
        name for name, ok in (("goodput", r["goodput_ok"]), ("delay", r["qdelay_ok"])) if not ok
    )


def _pairs(items: Sequence[str], flag: str) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise SystemExit(f"emulate bench: {flag} {item!r}: give KEY=VALUE")
        out[key] = value
    return out


def _toml_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _only(text: str | None) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for part in (text or "").split(";"):
        if not part.strip():
            continue
        key, sep, values = part.partition("=")
        if key not in ("cc", "queue", "flows", "rtt") or not sep:
            raise SystemExit(
                f"emulate bench: --only {part!r}: give NAME=V1,V2 with NAME cc, queue, flows "
                "or rtt; separate names with ';'"
            )
        out[key] = set(values.split(","))
    return out


def _pass_line(p: Mapping[str, Any]) -> str:
    return (
        f"{p['agrees']} of {p['cells']} cells agree (goodput within "
        f"{GOODPUT_TOLERANCE:.0%}, queueing delay within {QDELAY_TOLERANCE:.0%} or "
        f"{QDELAY_FLOOR_MS:.1f} ms); without the floor {p['agrees_strict']}; goodput "
        f"{p['goodput_ok']}, delay {p['qdelay_ok']} ({p['qdelay_ok_strict']} strict)"
    )


#: The cellular part: queues, and [tcp] tables (None: the scenario's own).
CELLULAR_QUEUES = ("droptail", "codel", "fq_codel")
CELLULAR_TCP: dict[str, dict[str, Any] | None] = {
    "scenario": None,
    "linux": {"profile": "linux", "cc": "cubic"},
}
CELLULAR_SCENARIO = REPO / "scenarios" / "cellular-trace.toml"


def cellular_doc(tcp: str) -> dict[str, Any]:
    """The cellular-trace scenario with the [tcp] of :data:`CELLULAR_TCP` ``tcp``."""
    doc = tomllib.loads(CELLULAR_SCENARIO.read_text())
    table = CELLULAR_TCP[tcp]
    if table is not None:
        doc["tcp"] = dict(table)
    return doc


def cellular_metrics(s: Mapping[str, Any], live: bool) -> dict[str, Any]:
    """What the cellular part reports of one run."""
    flow = s["flows"][0]
    queue = next(x for x in s["queues"] if x["link"] == "server->phone")
    out: dict[str, Any] = {
        "goodput_mbit": s["aggregate"]["goodput_bps"] / 1e6,
        "timeouts": flow["timeouts"],
        "retransmits": flow["retransmits"],
        "queue_drops": sum(queue["drops"].values()),
        "delay_mean_ms": (s["aggregate"].get("delay_mean_s") or 0.0) * 1e3,
    }
    if live:
        e = s["emulation"]
        out["timing_p99_ms"] = e["timing_error_s"]["p99"] * 1e3
        out["tun_drops"] = e["tun_drops"]
    return out


def cellular(duration: float, reps: int, how: str) -> list[dict[str, Any]]:
    """Each queue x [tcp] cell: linklab's run and ``reps`` kernel runs (seeds 1..reps;
    a live run outside the timing bound is run once more)."""
    import linklab
    from linklab.emulate import emulate

    base_dir = str(CELLULAR_SCENARIO.parent)
    rows = []
    for queue in CELLULAR_QUEUES:
        for tcp in CELLULAR_TCP:
            doc = cellular_doc(tcp)
            params = {"queue": queue, "duration": f"{duration}s"}
            sim = cellular_metrics(
                linklab.run(doc, seed=1, params=params, base_dir=base_dir).summary, live=False
            )
            lives = []
            for seed in range(1, reps + 1):
                for _ in range(2):
                    print(f"[emulate] cellular {queue} {tcp} seed {seed} ...", file=sys.stderr)
                    with priority(how):
                        s = emulate(doc, seed=seed, params=params, base_dir=base_dir).summary
                    m = {**cellular_metrics(s, live=True), "seed": seed}
                    if not rejected(m):
                        break
                lives.append(m)
            k_mean, k_sd = _stats([m["goodput_mbit"] for m in lives])
            rows.append(
                {
                    "queue": queue,
                    "tcp": tcp,
                    "duration_s": duration,
                    "linklab": sim,
                    "kernel": lives,
                    "kernel_goodput_mbit": k_mean,
                    "kernel_goodput_sd_mbit": k_sd,
                    "ratio": _ratio(k_mean, sim["goodput_mbit"]),
                }
            )
    return rows


def cellular_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The cellular part as a Markdown table."""
    lines = [
        "| queue | [tcp] | goodput Mbit/s kernel / linklab | ratio | timeouts kernel / linklab "
        "| retransmits kernel / linklab | queue drops kernel / linklab |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        k, sim = r["kernel"], r["linklab"]

        def each(key: str, k: Sequence[Mapping[str, Any]] = k) -> str:
            return ", ".join(str(m[key]) for m in k)

        lines.append(
            f"| {r['queue']} | {r['tcp']} | {r['kernel_goodput_mbit']:.2f} ± "
            f"{r['kernel_goodput_sd_mbit']:.2f} / {sim['goodput_mbit']:.2f} | "
            f"{r['ratio']:.2f} | {each('timeouts')} / {sim['timeouts']} | "
            f"{each('retransmits')} / {sim['retransmits']} | "
            f"{each('queue_drops')} / {sim['queue_drops']} |"
        )
    return "\n".join(lines)


def show(files: Sequence[Path], as_json: bool) -> int:
    """Print the tables of saved results: their grids merged (each cell's verdict
    computed again under this file's tolerances) and their cause experiments."""
    rows: list[dict[str, Any]] = []
    found: list[dict[str, Any]] = []
    for f in files:
        try:
            saved = json.loads(f.read_text())
        except (OSError, ValueError) as e:
            print(f"emulate bench: --from {f}: {e}", file=sys.stderr)
            return 2
        rows += [{**r, **verdict(r)} for r in saved.get("compare", [])]
        found += saved.get("causes", [])
    order = {c: i for i, c in enumerate(grid_cells(False, {}))}
    rows.sort(key=lambda r: order.get((r["kernel"], r["queue"], r["flows"], r["rtt_ms"]), -1))
    if as_json:
        print(json.dumps({"compare": rows, "pass_rate": pass_rate(rows), "causes": found}))
        return 0
    if rows:
        print(grid_table(rows))
        print(_pass_line(pass_rate(rows)))
    if found:
        print(causes_table(found))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="a short form (what a test runs)")
    ap.add_argument(
        "--part",
        choices=["ceiling", "compare", "causes", "cellular", "links", "all"],
        default="all",
    )
    ap.add_argument(
        "--duration",
        type=float,
        help="seconds per run (default 5 ceiling, 30 compare, 20 links; --quick 2, 5, 3)",
    )
    ap.add_argument("--reps", type=int, default=3, help="runs per side per grid cell (default 3)")
    ap.add_argument("--seeds", type=int, default=10, help="seeds per links row (default 10)")
    ap.add_argument(
        "--only", help="grid cells to run, e.g. 'cc=cubic,bbr;queue=droptail;flows=1;rtt=20'"
    )
    ap.add_argument(
        "--priority",
        choices=["fifo", "nice", "none"],
        default="fifo",
        help="the emulator's priority: SCHED_FIFO 10 (default), nice -15, or unchanged",
    )
    ap.add_argument(
        "--kernel",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a kernel setting of the live side (linklab emulate --kernel)",
    )
    ap.add_argument(
        "--tcp",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a [tcp] key of the linklab side (TOML value; cc.KEY: the cc's table)",
    )
    ap.add_argument(
        "--from",
        dest="saved",
        nargs="+",
        type=Path,
        metavar="JSON",
        help="print the tables of saved results (--out files; their grids merged) and run nothing",
    )
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--out", type=Path, help="also write the JSON object to this file")
    a = ap.parse_args()
    if a.saved:
        return show(a.saved, a.json)
    if os.geteuid() != 0 or not os.path.exists("/dev/net/tun"):
        print("emulate bench: needs root and /dev/net/tun", file=sys.stderr)
        return 2
    knobs = _pairs(a.kernel, "--kernel")
    tcp = {k: _toml_value(v) for k, v in _pairs(a.tcp, "--tcp").items()}
    started = time.monotonic()
    out: dict[str, Any] = {
        "load_before": os.getloadavg(),
        "priority": a.priority,
        "timing_p99_bound_ms": TIMING_P99_BOUND_S * 1e3,
    }
    if a.part in ("ceiling", "all"):
        out["ceiling"] = ceiling(a.duration or (2.0 if a.quick else 5.0), a.quick)
    if a.part in ("compare", "all"):
        out["compare"] = grid(
            a.duration or (5.0 if a.quick else 30.0),
            1 if a.quick else a.reps,
            a.quick,
            a.priority,
            _only(a.only),
            kernel_knobs=knobs or None,
            tcp=tcp or None,
        )
        out["kernel_knobs"], out["tcp"] = knobs, tcp
        out["pass_rate"] = pass_rate(out["compare"])
    if a.part == "causes":
        out["causes"] = causes(
            a.duration or (5.0 if a.quick else 30.0), 1 if a.quick else a.reps, a.priority, a.quick
        )
    if a.part == "cellular":
        out["cellular"] = cellular(
            a.duration or (5.0 if a.quick else 30.0), 1 if a.quick else a.reps, a.priority
        )
    if a.part == "links" or (a.part == "all" and not a.quick):
        out["links"] = links(a.duration or (3.0 if a.quick else 20.0), a.seeds, a.quick)
    out["wall_time_s"] = time.monotonic() - started
    out["load_after"] = os.getloadavg()
    if a.out:
        a.out.write_text(json.dumps(out, indent=1) + "\n")
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
    if out.get("compare"):
        print(grid_table(out["compare"]))
        print(_pass_line(out["pass_rate"]))
    if out.get("causes"):
        print(causes_table(out["causes"]))
    if out.get("cellular"):
        print(cellular_table(out["cellular"]))
    for r in out.get("links", []):
        verdict = "PASS" if abs(r["ratio"] - 1) <= 0.10 else "MISS"
        print(
            f"{r['link']:>26} kernel {r['kernel']:>5} "
            f"{r['kernel_mbit']:7.3f} ± {r['kernel_sd_mbit']:.3f}"
            f"  linklab {r['ours']:>7} {r['sim_mbit']:7.3f} ± {r['sim_sd_mbit']:.3f} Mbit/s"
            f"  ratio {r['ratio']:.3f}  {verdict}"
        )
    print(f"wall time {out['wall_time_s']:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
