#!/usr/bin/env python3
"""Open-loop flows, linklab vs ns-3 3.44 side by side (issue 37; docs/benchmarks.md,
"Flow completion times against ns-3").

Poisson arrivals of TCP flows with the web-search sizes (docs/models/workloads.md) from 4
senders to 4 receivers over the dumbbell of ``benches/vs_ns3.py --grid`` at 10 Mbit/s, 40 ms
base RTT, a drop-tail buffer of 1 BDP, NewReno with SACK, MSS 1448 and ns-3's TCP defaults
(the grid's `grid_settings`, so both simulators are given the same numbers). The arrival
list (start, size, pair) is drawn here from a seed and written to a file that both
simulators read: ns-3's ``benches/ns3/fct_dumbbell.cc`` starts one ``BulkSend`` connection
(``MaxBytes`` = the size) per line, linklab one ``[[workloads]]`` flow per line
(``arrivals = { kind = "trace" }``, one workload per sender/receiver pair). A flow's FCT is,
on both sides, the time its receiver delivered its last byte in order minus its start.

Per load and size bucket (linklab's default edges 10 kB, 100 kB, 1 MB, 10 MB): the median FCT
of each simulator over the flows of all seeds pooled and its p99 as the median over the seeds
of each seed's p99 (Harrell-Davis estimates; `p99_per_seed`), their ratio, and PASS when both
are within TARGET_REL of ns-3's. The speed ratio: ns-3's
``Simulator::Run()`` wall time over linklab's run (the same arrivals, one process after the
other on this machine).

    python3 benches/vs_ns3_fct.py                    # loads 0.3,0.5,0.7 x seeds 1-50, both
    python3 benches/vs_ns3_fct.py --quick            # load 0.5, linklab only, vs the JSON
    python3 benches/vs_ns3_fct.py --linklab-only     # every load, vs the committed ns-3 runs

The ns-3 runs are kept in ``benches/results/ns3-fct.json`` (the arrival lists are drawn
again from the seeds and checked against the sizes kept there), so only linklab's side
reruns without ns-3.
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import json
import math
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from scipy.special import betainc

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "benches"))

import vs_ns3  # noqa: E402

from linklab import _core  # noqa: E402

RESULTS = REPO / "benches" / "results" / "ns3-fct.json"
NATIVE_SRC = REPO / "benches" / "ns3" / "fct_dumbbell.cc"

#: Targets (issue 37), fixed before any run: median and p99 FCT per size bucket within 15 %
#: of ns-3's, over the flows of >= 3 seeds pooled (since 2026-11-28: seeds 1-30, the
#: Harrell-Davis estimate of each quantile, `quantile`).
TARGET_REL = 0.15
#: The buckets whose p99 misses the target (seeds 1-30 pooled, Harrell-Davis; `--quick` checks
#: load 0.5's): none. Over seeds 1-20 load 0.5's (10 kB, 100 kB] missed (0.734 on the model of
#: the fifth session's start), its p99 on the ~3 s mode of flows whose handshake was lost; the
#: rate of lost handshakes does not differ between the simulators (p = 0.43, `--handshakes`),
#: and over seeds 1-30 the bucket passed (0.871). Then the grid took ns-3.44's pipe, which keeps
#: a SACKed retransmission in flight (`sacked_rtx_in_pipe`, issue 33, g33f; `grid_settings`
#: sets it here too): with everything else equal it moves load 0.5's (0, 10 kB] p99 0.887 ->
#: 0.801 and (10 kB, 100 kB] 0.871 -> 0.847 (`--tcp sacked_rtx_in_pipe=false` gives the old
#: figures), at the noise level of 30 seeds (linklab against itself, odd against even seeds,
#: is outside the band in 9 of the 15 p99s). docs/benchmarks.md, "Flow completion times
#: against ns-3". Then the grid took ns-3.44's partial-ACK resend in SACK recovery
#: (`partial_ack_resend`, issue 33, g33v; `grid_settings` sets it here too): with everything
#: else equal (`--tcp partial_ack_resend=false` gives the figures above) load 0.5's
#: (0, 10 kB] p99 0.801 -> 1.100 (in), (10 kB, 100 kB] 0.847 -> 0.635, and load 0.7's
#: (0, 10 kB] 0.878 -> 0.819 (out): still 13 of 15, medians 15 of 15, at the same noise level.
#: Seventh session (g37p's rule, committed before its runs: the median over 50 seeds of the
#: per-seed Harrell-Davis p99): p99 14 of 15, medians 15 of 15; the miss left is load 0.5's
#: (10 kB, 100 kB] at 0.716 (ns-3 2.62 s, linklab 1.87 s): with ~88 flows a seed in the bucket
#: a seed's p99 is its slowest flow or two, i.e. whether a handshake was lost (3 s), so the
#: median over seeds sits between the two modes. Traced in the eighth session (g37r,
#: `benches/fct_tails.py`): 29 of ns-3's 50 seeds have a flow of >= 2.9 s in the bucket
#: against linklab's 21: lost handshakes (41 flows against 30; over all flows of load 0.5
#: 97 against 101 handshake drops, p = 0.83: chance) and timeout flows whose retransmission
#: at the timeout was dropped too, so a 2 s back-off followed (ns-3 7 of 144, linklab 0 of
#: 140, p = 0.015 in this bucket but 22/740 against 11/687, p = 0.11, over the loads and short
#: buckets; a capture shows ns-3's FIFO dropping one; the FIFO is full 0.853 % of the time
#: in ns-3, 0.872 % in linklab). Given linklab's FCT for both classes ns-3's p99 gives a
#: ratio of 1.030; no model difference found: chance at the boundary of two modes.
KNOWN_P99_MISSES: set[tuple[float, str]] = {
    (0.5, "(10kB, 100kB]"),
}
LOADS = (0.3, 0.5, 0.7)
#: Seeds 1-30 pooled (3 until 2026-11-28, then 10, then 20: a p99 over 60-400 flows is the
#: FCT of their 1-4 slowest; the remedy, fixed before the new runs, is more seeds and the
#: Harrell-Davis estimator. 30 in the fifth session of 2026-11-28, as the fourth's plan
#: wished; docs/benchmarks.md).
SEEDS = tuple(range(1, 51))
PAIRS = 4
ARRIVAL_S = 600.0  # arrivals in [0, ARRIVAL_S)
DRAIN_S = 200.0  # the run goes on this long after the last arrival
BUCKETS = (10e3, 100e3, 1e6, 10e6)  # linklab's default size buckets (bytes)
#: The web-search CDF of `size = "web_search"` (points: packets, P(X <= x)) and the bytes of
#: one packet, from linklab's core (crates/core/src/workload/dist.rs).
_CDFS, CDF_PACKET = _core.size_cdfs()
WEB_SEARCH = tuple(dict(_CDFS)["web_search"])


def cell() -> vs_ns3.Cell:
    """The dumbbell both simulators run (benches/vs_ns3.py's grid conventions)."""
    return vs_ns3.Cell(
        cc="newreno",
        queue="droptail",
        flows=PAIRS,
        mss=1448,
        rate_mbps=10.0,
        delay_ms=18.0,
        qlimit_bdp=1.0,
        simtime=ARRIVAL_S + DRAIN_S,
    )


def settings() -> dict[str, Any]:
    return vs_ns3.grid_settings(cell(), ecn=False)


def cdf_mean_bytes() -> float:
    """Mean of the piecewise-linear CDF (point masses at steps)."""
    m = 0.0
    for (x0, p0), (x1, p1) in zip(WEB_SEARCH, WEB_SEARCH[1:], strict=False):
        m += (p1 - p0) * (x0 + x1) / 2
    return m * CDF_PACKET


def draw_size(u: float) -> int:
    """Inverse of the web-search CDF at u (bytes, at least 1)."""
    ps = [p for _, p in WEB_SEARCH]
    i = max(1, bisect.bisect_left(ps, u))
    (x0, p0), (x1, p1) = WEB_SEARCH[i - 1], WEB_SEARCH[i]
    x = x1 if p1 == p0 else x0 + (x1 - x0) * (u - p0) / (p1 - p0)
    return max(1, round(x * CDF_PACKET))


def arrivals(load: float, seed: int) -> list[tuple[float, int, int]]:
    """(start s, size bytes, pair) of every flow: Poisson arrivals at the payload `load` of
    the bottleneck, web-search sizes, pairs uniform; from Python's Mersenne Twister seeded
    by (load, seed), so that both simulators read the same list."""
    rng = random.Random(f"vs-ns3-fct:{load:g}:{seed}")
    lam = load * settings()["rate_mbps"] * 1e6 / (8 * cdf_mean_bytes())
    out, t = [], 0.0
    while True:
        t += rng.expovariate(lam)
        if t >= ARRIVAL_S:
            return out
        out.append((round(t, 9), draw_size(rng.random()), rng.randrange(PAIRS)))


def arrivals_digest(arr: list[tuple[float, int, int]]) -> str:
    text = "".join(f"{t:.9f} {s} {p}\n" for t, s, p in arr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def bucket_of(size: int) -> int:
    return bisect.bisect_left(BUCKETS, size)


def bucket_label(i: int) -> str:
    def fmt(b: float) -> str:
        return f"{b / 1e6:g}MB" if b >= 1e6 else f"{b / 1e3:g}kB"

    lo = "0" if i == 0 else fmt(BUCKETS[i - 1])
    hi = "inf" if i == len(BUCKETS) else fmt(BUCKETS[i])
    return f"({lo}, {hi}]"


def quantile_linear(xs: list[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default, Hyndman-Fan type 7) of a non-empty
    list: reported beside the judged estimate, not judged."""
    s = sorted(xs)
    h = (len(s) - 1) * q
    lo = math.floor(h)
    return s[lo] + (s[min(lo + 1, len(s) - 1)] - s[lo]) * (h - lo)


def quantile(xs: list[float], q: float) -> float:
    """The Harrell-Davis estimate of the q-quantile of a non-empty list (Harrell & Davis,
    Biometrika 69 (1982) 635-640): the mean of all order statistics weighted by the
    Beta((n+1)q, (n+1)(1-q)) probability of each rank's interval, w_i = I((i)/n) -
    I((i-1)/n) with I the regularized incomplete beta function. A p99 over n flows taken
    from one or two order statistics (type 7) jumps with whichever flow is slowest; HD
    spreads the weight over the few slowest (95 % of it on the 3 slowest of 100, the 7 of 300,
    the 16 of 1000), which
    cuts that variance without a bias at the median or in the tail of a smooth law. The
    estimator of the targets since 2026-11-28 (issue 37), chosen before the new runs."""
    s = sorted(xs)
    n = len(s)
    if n == 1:
        return s[0]
    a, b = (n + 1) * q, (n + 1) * (1 - q)
    cdf = betainc(a, b, [i / n for i in range(n + 1)])
    return float(sum((cdf[i + 1] - cdf[i]) * x for i, x in enumerate(s)))


# ---- ns-3 ------------------------------------------------------------------------------------


def ensure_native(pkg: Path) -> Path:
    """Build fct_dumbbell.cc against the wheel's libraries (as vs_ns3.ensure_native)."""
    d = vs_ns3.NATIVE_DIR
    d.mkdir(parents=True, exist_ok=True)
    binary, stamp = d / "fct_dumbbell", d / "fct_dumbbell.stamp"
    want = f"{pkg}\n{hashlib.sha256(NATIVE_SRC.read_bytes()).hexdigest()}\n"
    if binary.exists() and stamp.exists() and stamp.read_text() == want:
        return binary
    tmp = d / "fct_dumbbell.new"
    cxx = shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise vs_ns3.BenchError("no C++ compiler (g++) found to build the ns-3 FCT twin")
    cmd = [cxx, "-std=c++20", "-O3", "-DNS3_BUILD_PROFILE_RELEASE", "-DNS3_LOG_ENABLE",
           "-DNS3_ASSERT_ENABLE", f"-I{pkg / 'include'}", str(NATIVE_SRC), "-o", str(tmp),
           f"-L{pkg / 'lib64'}", f"-Wl,-rpath,{pkg / 'lib64'}",
           *[f"-lns3.44-{m}" for m in vs_ns3.NS3_LIBS]]  # fmt: skip
    vs_ns3.log(f"[ns-3] building {binary} ...")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise vs_ns3.BenchError(f"building the ns-3 FCT twin failed:\n{r.stderr[-3000:]}")
    tmp.replace(binary)  # a rename: runs of the old binary go on undisturbed
    stamp.write_text(want)
    return binary


def ns3_run(
    binary: Path,
    arr: list[tuple[float, int, int]],
    seed: int,
    tmp: Path,
    extra: list[str] | None = None,
) -> dict[str, Any]:
    st = settings()
    f = tmp / "arrivals.txt"
    f.write_text("".join(f"{t:.9f} {s} {p}\n" for t, s, p in arr))
    cmd = [
        str(binary),
        f"--arrivals={f}",
        f"--pairs={PAIRS}",
        f"--simtime={vs_ns3.fmt_float(st['simtime_s'])}",
        f"--seed={seed}",
        f"--segsize={st['mss']}",
        f"--cc={st['cc']}",
        f"--qlimit={st['qdisc_limit_p']}",
        f"--rate={vs_ns3.fmt_float(st['rate_mbps'])}",
        f"--delay={vs_ns3.fmt_float(st['delay_ms'])}",
        f"--accessrate={vs_ns3.fmt_float(st['access_rate_mbps'])}",
        f"--accessdelay={vs_ns3.fmt_float(st['access_delay_ms'])}",
        f"--bufsize={st['buffer_bytes']}",
        *(extra or []),
    ]
    res = vs_ns3.run_child(["nice", "-n", "10", *cmd], cwd=REPO)
    if res.returncode != 0:
        raise vs_ns3.BenchError(f"ns-3 run failed ({' '.join(cmd)}):\n{res.stderr[-3000:]}")
    raw = vs_ns3.last_json_line(res.stdout)
    fct = [None if x < 0 else x for x in raw["fct"]]
    return {
        "seed": seed,
        "flows": len(arr),
        "arrivals_sha256_16": arrivals_digest(arr),
        "fct_s": fct,
        "flow_retransmits": raw.get("flow_retransmits"),
        "flow_timeouts": raw.get("flow_timeouts"),
        # The forward bottleneck's drops by kind and each flow's dropped SYNs (since the fifth
        # session of 2026-11-28; the earlier runs have neither).
        "drop_kinds": raw.get("drop_kinds"),
        "flow_syn_drops": raw.get("flow_syn_drops"),
        "retransmits": raw["retransmits"],
        "timeouts": raw["timeouts"],
        "ns3_args": extra or [],
        "drops": raw["drops"],
        "events": raw["events"],
        "run_wall_s": raw["wall_s"],
        "process_wall_s": round(res.process_wall_s, 4),
        "cpu_s": round(res.cpu_s, 4),
        "peak_rss_kib": res.peak_rss_kib,
        "load1": res.load1,
        "settings": raw["settings"],
    }


def ns3_mismatches(st: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """What ns-3 read back from its objects (`settings` of a run) against `st`."""
    want = {
        "rate_mbps": st["rate_mbps"],
        "delay_ms": st["delay_ms"],
        "access_rate_mbps": st["access_rate_mbps"],
        "access_delay_ms": st["access_delay_ms"],
        "bottleneck_mtu": vs_ns3.MTU_B,
        "device_queue_p": st["device_queue_p"],
        "qdisc": "ns3::FifoQueueDisc",
        "qdisc_limit_p": st["qdisc_limit_p"],
        "segment_size": st["mss"],
        "initial_cwnd": st["initial_window"],
        "del_ack_count": st["delayed_ack"]["count"],
        "del_ack_timeout_ms": st["delayed_ack"]["timeout_ms"],
        "min_rto_ms": st["min_rto_ms"],
        "snd_buf": st["buffer_bytes"],
        "rcv_buf": st["buffer_bytes"],
        "sack": st["sack"],
        "timestamps": st["timestamps"],
        "cc": vs_ns3.NS3_CC[st["cc"]],
        "recovery": "ns3::TcpPrrRecovery" if st["prr"] else "ns3::TcpClassicRecovery",
    }
    return [f"{k}: ns-3 {got.get(k)!r}, asked {v!r}" for k, v in want.items() if got.get(k) != v]


# ---- linklab ---------------------------------------------------------------------------------


def linklab_doc(tmp: Path, arr: list[tuple[float, int, int]]) -> dict[str, Any]:
    """The grid's dumbbell with one trace-driven workload per pair instead of [[flows]]."""
    st = settings()
    doc = vs_ns3.linklab_grid_doc(vs_ns3.tomllib_load(REPO / vs_ns3.SCENARIO), st)
    doc["name"] = "vs-ns3-fct"
    del doc["flows"]
    # ns-3 times a SYN by TcpSocket::ConnTimeout (3 s, doubling), not by its RTO
    # estimator: linklab's `syn_rto`, as `profile = "ns3"` sets it.
    doc["tcp"]["syn_rto"] = "3s"
    # ns-3.44 has no restart after idle (`CA_EVENT_CWND_RESTART` is never raised); a
    # connection per flow never idles, so this changes nothing here but says what ns-3 does.
    doc["tcp"]["idle_restart"] = "off"
    doc["workloads"] = []
    for p in range(PAIRS):
        f = tmp / f"pair{p + 1}.txt"
        f.write_text("".join(f"{t:.9f} {s}\n" for t, s, q in arr if q == p) or "")
        doc["workloads"].append(
            {
                "name": f"p{p + 1}",
                "from": f"S{p + 1}",
                "to": f"D{p + 1}",
                "arrivals": {"kind": "trace", "file": f.name},
            }
        )
    return doc


def parse_tcp(items: list[str]) -> dict[str, Any]:
    """`--tcp KEY=VALUE` experiments: linklab [tcp] keys (TOML values: 3s, true, 2)."""
    out: dict[str, Any] = {}
    for item in items:
        k, sep, val = item.partition("=")
        if not sep or not k:
            raise SystemExit(f"--tcp: {item!r} is not KEY=VALUE (e.g. initial_rto=3s)")
        out[k] = {"true": True, "false": False}.get(val, int(val) if val.isdigit() else val)
    return out


def linklab_run(
    arr: list[tuple[float, int, int]], seed: int, tcp: dict[str, Any] | None = None
) -> dict[str, Any]:
    import linklab

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        doc = linklab_doc(tmp, arr)
        doc["tcp"].update(tcp or {})
        t0, c0 = time.perf_counter(), time.process_time()
        r = linklab.run(doc, seed=seed, base_dir=tmp)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    fct = r.fct.sort(["start_s", "workload"])
    # Flows in the order of the arrival list: by start time (pair breaks ties as drawn).
    key = {(round(t, 9), s, f"p{p + 1}"): i for i, (t, s, p) in enumerate(arr)}
    out: list[float | None] = [None] * len(arr)
    seen = 0
    for row in fct.iter_rows(named=True):
        i = key.get((round(row["start_s"], 9), row["size_bytes"], row["workload"]))
        if i is None:
            raise vs_ns3.BenchError(f"linklab flow not in the arrival list: {row}")
        out[i] = row["fct_s"]
        seen += 1
    if seen != len(arr):
        raise vs_ns3.BenchError(f"linklab ran {seen} flows, the arrival list has {len(arr)}")
    agg = r.summary.get("aggregate", {})
    flow_rtx: list[int] = [0] * len(arr)
    flow_hs: list[int] = [0] * len(arr)
    for row in fct.iter_rows(named=True):
        i = key[(round(row["start_s"], 9), row["size_bytes"], row["workload"])]
        flow_rtx[i] = int(row["retransmits"])
        flow_hs[i] = int(row["handshake_drops"])
    (bneck,) = [q for q in r.queues.iter_rows(named=True) if q["link"] == "L->R"]
    return {
        "seed": seed,
        "fct_s": out,
        "flow_retransmits": flow_rtx,
        # Each flow's dropped SYNs / SYN-ACKs (the fct table's `handshake_drops`; ns-3's
        # twin counts the SYNs its forward bottleneck drops, `flow_syn_drops`).
        "flow_handshake_drops": flow_hs,
        "bottleneck_drops": int(bneck["drops_overflow"]),
        "retransmits": int(fct["retransmits"].sum()),
        "timeouts": int(fct["timeouts"].sum()),
        "events": r.summary.get("events"),
        "run_wall_s": float(r.summary["wall_time_s"]),
        "call_wall_s": round(wall, 4),
        "cpu_s": round(cpu, 4),
        "goodput_bps": agg.get("goodput_bps"),
    }


# ---- comparison ------------------------------------------------------------------------------


def median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def p99_per_seed(per_seed: list[list[float]]) -> float:
    """The judged p99 (issue 37's rule of 2026-11-28, seventh session, fixed before its runs):
    the median over the seeds of each seed's Harrell-Davis p99 of the bucket (a seed with no
    flow in the bucket left out). Its split-half self-noise on linklab is the smallest of
    the estimators measured (docs/benchmarks.md, "The p99 rule"): a pooled p99 is the FCT of
    the few slowest flows of the pool, which in the heavy buckets come from one or two
    extreme runs; this takes one value per run and the middle of them."""
    return median([quantile(xs, 0.99) for xs in per_seed if xs])


def compare(
    per_seed: list[tuple[list[tuple[float, int, int]], list[Any], list[Any]]],
) -> list[dict[str, Any]]:
    """Per bucket, every seed's flows: the median FCT of each side over the flows of all seeds
    pooled, and the p99 by `p99_per_seed` (the pooled p99 beside it, not judged)."""
    rows = []
    for b in range(len(BUCKETS) + 1):
        ns, ll, unfinished = [], [], [0, 0]
        ns_seed: list[list[float]] = []
        ll_seed: list[list[float]] = []
        for arr, f3, fl in per_seed:
            ns_seed.append([])
            ll_seed.append([])
            for (_, size, _), x3, xl in zip(arr, f3, fl, strict=True):
                if bucket_of(size) != b:
                    continue
                if x3 is None or xl is None:
                    unfinished[0] += x3 is None
                    unfinished[1] += xl is None
                    continue
                ns.append(x3)
                ll.append(xl)
                ns_seed[-1].append(x3)
                ll_seed[-1].append(xl)
        row: dict[str, Any] = {
            "bucket": bucket_label(b),
            "flows": len(ns),
            "unfinished_ns3": unfinished[0],
            "unfinished_linklab": unfinished[1],
        }
        if ns:
            for q, name in ((0.5, "p50"), (0.99, "p99")):
                if name == "p99":
                    a, c = p99_per_seed(ns_seed), p99_per_seed(ll_seed)
                    # The pooled Harrell-Davis p99 (judged until the seventh session).
                    row["p99_pooled_ratio"] = quantile(ll, q) / quantile(ns, q)
                else:
                    a, c = quantile(ns, q), quantile(ll, q)
                row[f"ns3_{name}_s"] = a
                row[f"linklab_{name}_s"] = c
                row[f"{name}_ratio"] = c / a
                row[f"{name}_pass"] = abs(c / a - 1) <= TARGET_REL
                # The type-7 estimate (one or two order statistics), for comparison only.
                a7, c7 = quantile_linear(ns, q), quantile_linear(ll, q)
                row[f"{name}_linear_ratio"] = c7 / a7
        rows.append(row)
    return rows


def bucket_quantiles(runs: list[tuple[list[tuple[float, int, int]], list[Any]]]) -> list[Any]:
    """Per bucket (p50, p99, flows) of one simulator's finished flows: the p50 over the seeds'
    flows pooled, the p99 by `p99_per_seed` (the judged estimators)."""
    out = []
    for b in range(len(BUCKETS) + 1):
        per = [[x for (_, s, _), x in zip(arr, f, strict=True)
                if bucket_of(s) == b and x is not None] for arr, f in runs]  # fmt: skip
        xs = [x for p in per for x in p]
        out.append((quantile(xs, 0.5), p99_per_seed(per), len(xs)) if xs else None)
    return out


def noise(loads: list[float], seeds_a: list[int], seeds_b: list[int]) -> None:
    """The chance part of a bucket's p50/p99 at this sample size: linklab over the arrival
    lists of `seeds_a` against linklab over those of `seeds_b` (other flows, same law)."""
    print("load  bucket           p50 A/B   p99 A/B   flows A, B")
    for load in loads:
        qa = bucket_quantiles([(arr, linklab_run(arr, s)["fct_s"])
                               for s in seeds_a for arr in [arrivals(load, s)]])  # fmt: skip
        qb = bucket_quantiles([(arr, linklab_run(arr, s)["fct_s"])
                               for s in seeds_b for arr in [arrivals(load, s)]])  # fmt: skip
        for b, (x, y) in enumerate(zip(qa, qb, strict=True)):
            if x and y:
                print(f"{load:<5g} {bucket_label(b):<15}  {x[0] / y[0]:.3f}     {x[1] / y[1]:.3f}"
                      f"     {x[2]}, {y[2]}")  # fmt: skip


def perturbed(loads: list[float], seeds: list[int], shift_s: float) -> list[dict[str, Any]]:
    """Linklab against itself over the same arrival lists, each start moved by its own
    uniform draw in [0, `shift_s`) (below one packet's transmission time: nothing a flow's
    FCT should notice): how far apart two simulators that agree on every rule can be,
    bucket by bucket, once their trajectories part (which packet of a burst a full
    drop-tail queue drops decides a flow's tail)."""
    out = []
    for load in loads:
        runs = []
        for seed in seeds:
            arr = arrivals(load, seed)
            rng = random.Random(f"perturb:{load:g}:{seed}")
            moved = [(round(t + rng.uniform(0, shift_s), 9), s, p) for t, s, p in arr]
            moved.sort()
            runs.append((arr, linklab_run(arr, seed)["fct_s"], linklab_run(moved, seed)["fct_s"]))
        out.append({"load": load, "buckets": compare(runs)})
    return out


#: A flow "lost its handshake and nothing else": no data segment retransmitted and an FCT of
#: at least this (the 3 s SYN timer on both sides; no data retransmission, no data timeout).
HANDSHAKE_FCT_S = 2.9


def handshake_losses(fct_s: list[Any], flow_rtx: list[int]) -> tuple[int, int]:
    """(flows that lost their handshake and nothing else, flows with no data retransmission)
    of one run: the same rule on both sides (`HANDSHAKE_FCT_S`)."""
    clean = [x for x, r in zip(fct_s, flow_rtx, strict=True) if r == 0]
    return sum(x is not None and x >= HANDSHAKE_FCT_S for x in clean), len(clean)


def rate_test(k_a: int, n_a: int, k_b: int, n_b: int) -> float:
    """Two-sided p-value of H0 "the same rate on both sides" for k_a events in n_a trials
    against k_b in n_b (the comparison of two Poisson rates): given k_a + k_b, k_a is
    binomial with p = n_a / (n_a + n_b). 1.0 when there is no event."""
    from scipy.stats import binomtest

    if k_a + k_b == 0:
        return 1.0
    return float(binomtest(k_a, k_a + k_b, n_a / (n_a + n_b)).pvalue)


def handshakes(loads: list[float], seeds: list[int], saved: dict[str, Any]) -> dict[str, Any]:
    """Issue 37, the handshake losses: per load (and pooled) the flows of each side that lost
    their handshake and nothing else among those with no data retransmission (ns-3 from the
    saved runs that have its per-flow counters, linklab rerun), `rate_test`'s p-value, and the
    packets dropped at the bottleneck per data segment sent (every saved run)."""
    out: dict[str, Any] = {"loads": []}
    pooled = [0, 0, 0, 0]
    print("load  runs  handshake-only ns-3       linklab            p      "
          "drops/segment ns-3  linklab   drops-rtx ns-3 / linklab")  # fmt: skip
    for load in loads:
        c = [0, 0, 0, 0]
        seg, drops, rtx, runs = [0, 0], [0, 0], [0, 0], 0
        # Flows by handshake segments dropped (0, 1, 2, 3+), ns-3 and linklab, over the runs
        # with ns-3's per-flow SYN drops.
        syn, syn_runs = [[0] * 4, [0] * 4], 0
        for seed in seeds:
            arr = arrivals(load, seed)
            n3 = saved["runs"][f"load{load:g}/seed{seed}"]
            ll = linklab_run(arr, seed)
            segs = sum(math.ceil(s / settings()["mss"]) for _, s, _ in arr)
            for i, (d, r) in enumerate(((n3["drops"], n3["retransmits"]),
                                        (ll["bottleneck_drops"], ll["retransmits"]))):  # fmt: skip
                seg[i] += segs + r
                drops[i] += d
                rtx[i] += r
            if n3.get("flow_syn_drops") is not None:
                syn_runs += 1
                for i, f in enumerate((n3["flow_syn_drops"], ll["flow_handshake_drops"])):
                    for k in f:
                        syn[i][min(k, 3)] += 1
            if n3.get("flow_retransmits") is None:
                continue
            runs += 1
            for i, (f, r) in enumerate(((n3["fct_s"], n3["flow_retransmits"]),
                                        (ll["fct_s"], ll["flow_retransmits"]))):  # fmt: skip
                k, n = handshake_losses(f, r)
                c[2 * i] += k
                c[2 * i + 1] += n
        pooled = [a + b for a, b in zip(pooled, c, strict=True)]
        p = rate_test(*c)
        row = {"load": load, "runs_per_flow": runs, "ns3": c[:2], "linklab": c[2:], "p": p,
               "drops": drops, "segments": seg, "retransmits": rtx}  # fmt: skip
        if syn_runs:
            d3, dl = (sum(k * n for k, n in enumerate(h)) for h in syn)
            n3f, nlf = sum(syn[0]), sum(syn[1])
            row["syn_drops"] = {"runs": syn_runs, "ns3_flows_by_drops": syn[0],
                                "linklab_flows_by_drops": syn[1], "ns3": d3, "linklab": dl,
                                "p": rate_test(d3, n3f, dl, nlf)}  # fmt: skip
        out["loads"].append(row)
        print(f"{load:<5g} {runs:>4}  {c[0]:>3}/{c[1]:<5} {c[0] / c[1]:.3%}   "
              f"{c[2]:>3}/{c[3]:<5} {c[2] / c[3]:.3%}   {p:.3f}  "
              f"{drops[0] / seg[0]:.3%}           {drops[1] / seg[1]:.3%}    "
              f"{drops[0] - rtx[0]} / {drops[1] - rtx[1]}")  # fmt: skip
    out["pooled"] = {"ns3": pooled[:2], "linklab": pooled[2:], "p": rate_test(*pooled)}
    with_syn = [x["syn_drops"] for x in out["loads"] if "syn_drops" in x]
    if with_syn:
        print("handshake segments dropped per flow (0, 1, 2, 3+ drops), runs with ns-3's counts:")
        for x in out["loads"]:
            if "syn_drops" in x:
                y = x["syn_drops"]
                print(f"{x['load']:<5g} {y['runs']:>4}  ns-3 {y['ns3_flows_by_drops']} = "
                      f"{y['ns3']}  linklab {y['linklab_flows_by_drops']} = {y['linklab']}  "
                      f"p {y['p']:.3f}")  # fmt: skip
        d3, dl = sum(y["ns3"] for y in with_syn), sum(y["linklab"] for y in with_syn)
        n = sum(sum(y["ns3_flows_by_drops"]) for y in with_syn)
        out["pooled"]["syn_drops"] = {"ns3": d3, "linklab": dl, "flows": n,
                                      "p": rate_test(d3, n, dl, n)}  # fmt: skip
        p = out["pooled"]["syn_drops"]["p"]
        print(f"pooled: ns-3 {d3}, linklab {dl} of {n} flows, p {p:.3f}")
    print(
        f"pooled      {pooled[0]}/{pooled[1]} {pooled[0] / pooled[1]:.3%}   "
        f"{pooled[2]}/{pooled[3]} {pooled[2] / pooled[3]:.3%}   {out['pooled']['p']:.3f}"
    )
    return out


def load_results(path: Path = RESULTS) -> dict[str, Any]:
    if not path.exists():
        return {"runs": {}}
    return json.loads(path.read_text())


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (the docs-commands test parses documented commands with it)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--loads", default=",".join(f"{x:g}" for x in LOADS))
    p.add_argument("--seeds", default=",".join(str(s) for s in SEEDS))
    p.add_argument("--linklab-only", action="store_true", help="ns-3 from " + str(RESULTS))
    p.add_argument("--quick", action="store_true", help="load 0.5, linklab only")
    p.add_argument("--ns3-venv", type=Path, default=vs_ns3.DEFAULT_VENV)
    p.add_argument("--save", action="store_true", help="write the ns-3 runs to " + str(RESULTS))
    p.add_argument("--json", type=Path, help="write the report here")
    p.add_argument(
        "--noise",
        metavar="SEEDS",
        help="linklab only: the seeds' buckets against those of SEEDS (chance at this size)",
    )
    p.add_argument(
        "--perturb",
        type=float,
        metavar="SECONDS",
        help="linklab only: against itself, each start moved by up to SECONDS (e.g. 1e-3)",
    )
    p.add_argument("--ns3-only", action="store_true", help="run ns-3 only (with --save)")
    p.add_argument("--results", type=Path, default=RESULTS, help="the ns-3 results file")
    p.add_argument(
        "--ns3-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="experiment: an ns-3 argument, e.g. --ns3-arg=--ns3::TcpSocket::ConnTimeout=1s",
    )
    p.add_argument(
        "--experiment",
        metavar="NAME",
        help="with --linklab-only: the saved ns-3 runs of experiment NAME (conn_timeout_1s)",
    )
    p.add_argument(
        "--tcp",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="experiment: a linklab [tcp] key on top of the matched settings",
    )
    p.add_argument(
        "--handshakes",
        action="store_true",
        help="linklab only: flows that lost their handshake, each side, and the test",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    loads = [0.5] if a.quick else [float(x) for x in a.loads.split(",")]
    seeds = [int(x) for x in a.seeds.split(",")]
    if a.perturb is not None:
        rep = {"loads": perturbed(loads, seeds, a.perturb)}
        print("linklab (ns-3 columns) against linklab with each start moved by up to "
              f"{a.perturb * 1e6:g} us (linklab columns):")  # fmt: skip
        print_report(rep)
        return 0
    if a.noise:
        noise(loads, seeds, [int(x) for x in a.noise.split(",")])
        return 0
    if a.handshakes:
        rep = handshakes(loads, seeds, load_results(a.results))
        if a.json:
            a.json.write_text(json.dumps(rep, indent=1) + "\n")
        return 0
    ns3_only_saved = a.quick or a.linklab_only
    saved = load_results(a.results)
    binary = None if ns3_only_saved else ensure_native(vs_ns3.ensure_ns3_venv(a.ns3_venv))
    report: dict[str, Any] = {
        "settings": settings(),
        "ns3_experiment": a.experiment,
        "target_rel": TARGET_REL,
        "linklab_tcp_experiment": parse_tcp(a.tcp),
        "loads": [],
    }
    for load in loads:
        per_seed, walls = [], []
        for seed in seeds:
            arr = arrivals(load, seed)
            k = f"load{load:g}/seed{seed}"
            if ns3_only_saved:
                pool = saved["experiments"][a.experiment]["runs"] if a.experiment else saved["runs"]
                n3 = pool.get(k)
                if n3 is None:
                    raise vs_ns3.BenchError(f"{a.results} has no ns-3 run {k}; run without --quick")
                if n3["arrivals_sha256_16"] != arrivals_digest(arr):
                    raise vs_ns3.BenchError(f"{k}: the arrival list differs from the saved run's")
            else:
                assert binary is not None
                with tempfile.TemporaryDirectory() as d:
                    n3 = ns3_run(binary, arr, seed, Path(d), a.ns3_arg)
                saved["runs"][k] = n3
                vs_ns3.log(f"[ns-3] {k}: {len(arr)} flows, Run() {n3['run_wall_s']:.2f} s")
                if a.save:  # after every run: a long batch keeps what it ran
                    saved["settings"] = settings()
                    saved["host"] = vs_ns3.host_info()
                    a.results.write_text(json.dumps(saved, indent=1) + "\n")
            if a.ns3_only:
                continue
            ll = linklab_run(arr, seed, parse_tcp(a.tcp))
            vs_ns3.log(f"[linklab] {k}: run {ll['run_wall_s']:.2f} s")
            per_seed.append((arr, n3["fct_s"], ll["fct_s"]))
            walls.append(
                {
                    "seed": seed,
                    "flows": len(arr),
                    "ns3_run_wall_s": n3["run_wall_s"],
                    "linklab_run_wall_s": ll["run_wall_s"],
                    "ns3_cpu_s": n3["cpu_s"],
                    "linklab_cpu_s": ll["cpu_s"],
                    "ns3_events": n3["events"],
                    "linklab_events": ll["events"],
                    "ns3_retransmits": n3["retransmits"],
                    "linklab_retransmits": ll["retransmits"],
                    "ns3_timeouts": n3["timeouts"],
                    "linklab_timeouts": ll["timeouts"],
                }
            )
        if a.ns3_only:
            continue
        rows = compare(per_seed)
        ns3_w = sum(w["ns3_run_wall_s"] for w in walls)
        ll_w = sum(w["linklab_run_wall_s"] for w in walls)
        ns3_c = sum(w["ns3_cpu_s"] for w in walls)
        ll_c = sum(w["linklab_cpu_s"] for w in walls)
        report["loads"].append(
            {
                "load": load,
                "buckets": rows,
                "runs": walls,
                # CPU seconds of the whole process (ns-3) and of the whole linklab.run call
                # (slowdown baselines and the fct table included): robust on a shared machine.
                "speed_ratio_cpu": ns3_c / ll_c,
                # ns-3's Simulator::Run() over linklab's core run, wall clock.
                "speed_ratio_run_wall": ns3_w / ll_w,
            }
        )
    if a.save and not ns3_only_saved:
        saved["settings"] = settings()
        saved["host"] = vs_ns3.host_info()
        a.results.write_text(json.dumps(saved, indent=1) + "\n")
        vs_ns3.log(f"saved {a.results}")
    if a.ns3_only:
        return 0
    print_report(report)
    if a.json:
        a.json.write_text(json.dumps(report, indent=1) + "\n")
    cells = [(x["load"], r) for x in report["loads"] for r in x["buckets"] if r["flows"]]
    passed = sum(r["p50_pass"] + r["p99_pass"] for _, r in cells)
    new = [
        f"{load:g} {r['bucket']} {q}"
        for load, r in cells
        for q in ("p50", "p99")
        if not r[f"{q}_pass"] and (q == "p50" or (load, r["bucket"]) not in KNOWN_P99_MISSES)
    ]
    print(f"{passed}/{2 * len(cells)} within {TARGET_REL:.0%}; misses without a known cause: "
          f"{', '.join(new) or 'none'}")  # fmt: skip
    # Exit 1 on a miss that is not a known one (a regression, or a new cause to find).
    return 1 if new and not (a.tcp or a.experiment) else 0


def print_report(rep: dict[str, Any]) -> None:
    def ms(x: float | None) -> str:
        return "-" if x is None else f"{x * 1e3:.0f}"

    print("load  bucket          flows  p50 ns-3  linklab  ratio      p99 ns-3  linklab  ratio")
    for x in rep["loads"]:
        for r in x["buckets"]:
            if not r["flows"]:
                continue
            v50 = "PASS" if r["p50_pass"] else "FAIL"
            v99 = "PASS" if r["p99_pass"] else "FAIL"
            if not r["p99_pass"] and (x["load"], r["bucket"]) in KNOWN_P99_MISSES:
                v99 = "miss"
            print(
                f"{x['load']:<5g} {r['bucket']:<15} {r['flows']:>5}  {ms(r['ns3_p50_s']):>8}"
                f"  {ms(r['linklab_p50_s']):>7}  {r['p50_ratio']:.3f} {v50}  "
                f"{ms(r['ns3_p99_s']):>8}  {ms(r['linklab_p99_s']):>7}  {r['p99_ratio']:.3f} {v99}"
            )
        if "speed_ratio_cpu" not in x:
            continue
        print(
            f"      speed: CPU s ns-3 / linklab = {x['speed_ratio_cpu']:.0f}x; "
            f"Run() / core run wall = {x['speed_ratio_run_wall']:.0f}x"
        )


if __name__ == "__main__":
    sys.exit(main())
