"""Envelopes: what any correct TCP stack does on a clean (loss-free) dumbbell.

Issue 33, item 4. A grid, not a point: every congestion control × every queue kind ×
flows {1, 2, 4, 16} × MSS {536, 1448, 8948} × buffer {0.5, 1, 4} BDP (drop-tail, RED,
SBD; CoDel, PIE and FQ-CoDel at their usual 1000 packets) × RTT {4, 40, 300} ms, each
cell a dumbbell whose only loss is the bottleneck queue's, with a receive window far
above the BDP. Each cell is checked against an envelope that the literature gives for
that combination; every bound below was fixed, with its source, before the grid was
run, and is never moved after (``docs/validation.md``).

The envelope of a cell, measured over the steady part of its run (after a warm-up,
see :func:`durations`):

* ``util`` — the bottleneck's utilisation is at least :func:`utilisation_bound`.
* ``delay`` — CoDel, FQ-CoDel and PIE hold the mean queueing delay near their
  targets (5, 5, 15 ms): at most :data:`NEAR` targets (:func:`delay_bound`).
* ``fair`` — FQ-CoDel gives equal flows equal shares: Jain's index ≥ 0.99.
* ``rto`` — no retransmission timeout where nothing is lost in bulk
  (:func:`rto_expected`).
* ``run`` — the run itself succeeds (any exception is a miss).

A cell that misses is either a model bug (reported, and left a MISS until fixed) or a
known, explained property of that combination, listed in :data:`KNOWN` with the
measured numbers and the mechanism.

Run ``python3 -m linklab.check.envelopes [--quick] [--jobs N] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, NoReturn

__all__ = [
    "BUGS",
    "CCS",
    "KNOWN",
    "QUEUES",
    "Cell",
    "Check",
    "Known",
    "Outcome",
    "delay_bound",
    "diagnose",
    "durations",
    "evaluate",
    "grid",
    "main",
    "parse_label",
    "quick_grid",
    "rto_expected",
    "run_cell",
    "run_grid",
    "scenario",
    "utilisation_bound",
]

# ---------------------------------------------------------------------------
# The grid
# ---------------------------------------------------------------------------

#: Congestion controls. The schema's ``cc = "reno"`` is Linux's name for NewReno's
#: AIMD (docs/models/tcp.md), so the two names stand for the two loss recoveries a
#: NewReno AIMD runs with: ``reno`` is Linux's stack (SACK, RACK-TLP, PRR:
#: ``profile = "linux"`` with ``cc = "reno"``), ``newreno`` RFC 6582's NewReno
#: recovery without SACK. ``cubic``, ``westwood``, ``bbr`` (paced) and ``dctcp``
#: (ECN) run on Linux's stack.
CCS: tuple[str, ...] = ("reno", "newreno", "cubic", "westwood", "bbr", "dctcp")

#: Queue kinds at the bottleneck.
QUEUES: tuple[str, ...] = ("droptail", "red", "sbd", "codel", "pie", "fq_codel")

#: Queues sized in BDPs; the others (the delay-based AQMs) have 1000 packets.
BUFFER_SIZED: tuple[str, ...] = ("droptail", "red", "sbd")
BUFFERS_BDP: tuple[float, ...] = (0.5, 1.0, 4.0)
AQM_LIMIT_PACKETS = 1000

FLOWS: tuple[int, ...] = (1, 2, 4, 16)
MSSES: tuple[int, ...] = (536, 1448, 8948)
RTTS_MS: tuple[int, ...] = (4, 40, 300)

#: Bottleneck rates to choose from, bit/s (see :func:`bottleneck_rate`).
RATES: tuple[int, ...] = (10_000_000, 100_000_000, 1_000_000_000)

#: The smallest BDP, in packets, that a cell's bottleneck rate must give: 16 flows
#: (the grid's most) × the 2-segment floor of a window after a loss (RFC 5681 §3.1),
#: so that every flow count can share the pipe without a standing queue.
MIN_BDP_PACKETS = 32

#: IP (20) + TCP (20) + timestamps (12): the Linux stack runs with timestamps.
HEADER_BYTES = 52

#: DCTCP needs an ECN-marking queue (RFC 8257 §3.1); drop-tail and SBD do not mark.
DCTCP_QUEUES: tuple[str, ...] = ("red", "codel", "pie", "fq_codel")

#: The seed of every cell (one run per cell: the envelopes are bounds on every run,
#: not on a mean).
SEED = 1


@dataclass(frozen=True, order=True)
class Cell:
    """One point of the grid. ``buffer_bdp`` is ``None`` for the 1000-packet AQMs."""

    cc: str
    queue: str
    buffer_bdp: float | None
    flows: int
    mss: int
    rtt_ms: int

    @property
    def packet_bytes(self) -> int:
        """IP bytes of a full segment."""
        return self.mss + HEADER_BYTES

    @property
    def rate_bps(self) -> int:
        """The bottleneck rate (:func:`bottleneck_rate`)."""
        return bottleneck_rate(self.mss, self.rtt_ms)

    @property
    def bdp_bytes(self) -> float:
        """Bottleneck rate × propagation RTT."""
        return self.rate_bps * self.rtt_ms / 1000 / 8

    @property
    def bdp_packets(self) -> float:
        """The BDP in full packets."""
        return self.bdp_bytes / self.packet_bytes

    @property
    def limit_packets(self) -> int:
        """The bottleneck queue's limit in packets."""
        if self.buffer_bdp is None:
            return AQM_LIMIT_PACKETS
        return max(2, round(self.buffer_bdp * self.bdp_packets))

    @property
    def label(self) -> str:
        """A short name: ``cubic/codel/b-/n4/mss1448/rtt40``."""
        b = "-" if self.buffer_bdp is None else f"{self.buffer_bdp:g}"
        return f"{self.cc}/{self.queue}/b{b}/n{self.flows}/mss{self.mss}/rtt{self.rtt_ms}"


def parse_label(label: str) -> Cell:
    """The cell named ``cc/queue/bB/nN/mssM/rttR`` (``b-`` for the 1000-packet AQMs);
    ValueError naming what is allowed if it is no cell of the grid."""
    allowed = (
        "a cell label cc/queue/bB/nN/mssM/rttR of the grid, e.g. cubic/codel/b-/n4/mss1448/rtt40"
    )
    try:
        cc, q, b, n, mss, rtt = label.split("/")
        cell = Cell(
            cc,
            q,
            None if b == "b-" else float(b.removeprefix("b")),
            int(n.removeprefix("n")),
            int(mss.removeprefix("mss")),
            int(rtt.removeprefix("rtt")),
        )
    except ValueError:
        raise ValueError(f"invalid cell {label!r}; allowed: {allowed}") from None
    if cell not in set(grid()):
        raise ValueError(f"no cell {label!r} in the grid; allowed: {allowed}")
    return cell


def bottleneck_rate(mss: int, rtt_ms: int) -> int:
    """The slowest of :data:`RATES` whose BDP holds :data:`MIN_BDP_PACKETS` packets.

    A fixed rate would make some cells degenerate (MSS 8948 at 4 ms over 10 Mbit/s is
    a BDP of 0.6 packets: no window arithmetic, no sawtooth, no queue to manage). With
    this rule the BDP is 33–638 packets: 100 Mbit/s at 4 ms (1 Gbit/s for MSS 8948),
    10 Mbit/s at 40 ms (100 Mbit/s for MSS 8948) and 10 Mbit/s at 300 ms.
    """
    packet = mss + HEADER_BYTES
    for rate in RATES:
        if rate * rtt_ms / 1000 / 8 / packet >= MIN_BDP_PACKETS:
            return rate
    return RATES[-1]


def grid(
    ccs: Iterable[str] = CCS,
    queues: Iterable[str] = QUEUES,
) -> list[Cell]:
    """Every cell of the grid (in a fixed order), optionally for some ccs or queues."""
    ccs, queues = list(ccs), list(queues)
    cells = []
    for cc in CCS:
        if cc not in ccs:
            continue
        for queue in QUEUES:
            if queue not in queues or (cc == "dctcp" and queue not in DCTCP_QUEUES):
                continue
            buffers: Sequence[float | None] = BUFFERS_BDP if queue in BUFFER_SIZED else (None,)
            for b in buffers:
                for rtt in RTTS_MS:
                    for mss in MSSES:
                        for n in FLOWS:
                            cells.append(Cell(cc, queue, b, n, mss, rtt))
    return cells


def quick_grid(ccs: Iterable[str] = CCS, queues: Iterable[str] = QUEUES) -> list[Cell]:
    """The ``--quick`` subset: every cc × queue at 2 flows, MSS 1448, 40 ms, 1 BDP."""
    return [
        c
        for c in grid(ccs, queues)
        if c.flows == 2 and c.mss == 1448 and c.rtt_ms == 40 and c.buffer_bdp in (None, 1.0)
    ]


def covering_grid(ccs: Iterable[str] = CCS, queues: Iterable[str] = QUEUES) -> list[Cell]:
    """The ``--covering`` subset the test suite runs (264 of the 2 376 cells).

    Every setting (cc × queue × buffer, 66 of them) at each of the 4 flow counts, the
    MSS and RTT rotating so that each setting meets every MSS and every RTT, and every
    (flows, MSS, RTT) triple occurs with some setting: setting ``s`` at flows index
    ``f`` takes MSS index ``(s + f) mod 3`` and RTT index ``(s div 3 + f) mod 3``.
    """
    chosen = set(grid(ccs, queues))
    settings: list[tuple[str, str, float | None]] = []
    for c in grid():
        if (c.cc, c.queue, c.buffer_bdp) not in settings:
            settings.append((c.cc, c.queue, c.buffer_bdp))
    cells = []
    for s, (cc, queue, b) in enumerate(settings):
        for f, n in enumerate(FLOWS):
            cell = Cell(cc, queue, b, n, MSSES[(s + f) % 3], RTTS_MS[(s // 3 + f) % 3])
            if cell in chosen:
                cells.append(cell)
    return cells


# ---------------------------------------------------------------------------
# The scenario of a cell
# ---------------------------------------------------------------------------

#: Flows start at a uniform random time in [0, START_JITTER_S] (desynchronised starts).
START_JITTER_S = 1.0


def durations(cell: Cell) -> tuple[float, float]:
    """(warm-up end T0, run end T), seconds; the envelope is measured over [T0, T].

    Warm-up: the flows' starts (1 s) plus max(2 s, 30 RTTs). Slow start from 10
    segments to the largest window here (BDP + 4 BDP of buffer, 3200 packets) takes
    ≤ 15 RTTs with delayed ACKs (×1.5 per RTT), its overshoot's recovery a few RTTs
    (or an RTO, ≥ 200 ms); BBR's Startup and Drain take log2(BDP) + 4 rounds; 2 s
    covers the AQMs' start (CoDel's 100-ms interval, PIE's 15-ms updates from zero)
    at the short RTTs. Window: max(5 s, 100 RTTs) — 5 s at 4 and 40 ms (1250 and 125
    RTTs; a BBR ProbeRTT at most once per 10 s is accounted in its bound), 30 s at
    300 ms. The utilisation bounds are bounds on every instant after the first
    congestion event (the trough of the sawtooth), so the window need not hold whole
    sawtooth cycles (at 300 ms a NewReno cycle over 4 BDP of buffer is ~10⁴ s).
    """
    rtt = cell.rtt_ms / 1000
    t0 = START_JITTER_S + max(2.0, 30 * rtt)
    return t0, t0 + max(5.0, 100 * rtt)


def _rwnd_bytes(cell: Cell) -> int:
    # Four times what the path and the full queue hold: never the limit.
    total = cell.bdp_bytes + cell.limit_packets * cell.packet_bytes
    return min(1 << 30, max(65535, int(4 * total)))


def _queue(cell: Cell) -> dict[str, Any]:
    limit = cell.limit_packets
    pkt = cell.packet_bytes
    ecn = cell.cc == "dctcp"
    if cell.queue == "droptail":
        return {"kind": "droptail", "limit": f"{limit}p"}
    if cell.queue == "red" and ecn:
        # DCTCP's marking: the instantaneous queue above K (RFC 8257 §3.1: RED with
        # min = max = K, as a step), K = half the buffer (≥ BDP/4 > BDP/7, the
        # threshold for full throughput, Alizadeh et al. 2010 §3.3).
        k = limit / 2
        return {
            "kind": "red",
            "limit": f"{limit}p",
            "minth": k,
            "maxth": k + 1,
            "maxp": 1.0,
            "instantaneous": True,
            "gentle": False,
            "ecn": True,
            "hard_drop": False,
        }
    if cell.queue == "red":
        # Floyd's settings (Floyd 1997, "RED: discussions of setting parameters";
        # gentle, Floyd 2000): maxth = 3·minth, wq = 0.002, maxp = 0.1; maxth = B/2
        # so that the gentle ramp ends (forced drops begin) at the full buffer.
        return {
            "kind": "red",
            "limit": f"{limit}p",
            "minth": limit / 6,
            "maxth": limit / 2,
            "maxp": 0.1,
            "wq": RED_WQ,
            "gentle": True,
            "mean_pkt_size": pkt,
        }
    if cell.queue == "sbd":
        # Alcaraz & Cerdán's proportions (maxth = the buffer, minth = half, α = 1/8),
        # T_r = the sources' reaction time, one RTT.
        return {
            "kind": "sbd",
            "limit": f"{limit}p",
            "minth": limit / 2,
            "maxth": limit,
            "alpha": max(1.0, limit / 8),
            "tr": f"{cell.rtt_ms}ms",
        }
    if cell.queue == "codel":
        # RFC 8289 defaults; maxpacket (`mtu`) the largest packet, as Linux tracks it.
        return {"kind": "codel", "limit": f"{limit}p", "mtu": f"{pkt + 14}B", "ecn": ecn}
    if cell.queue == "pie":
        return {"kind": "pie", "limit": f"{limit}p", "ecn": ecn}
    if cell.queue == "fq_codel":
        # Linux's quantum: the MTU plus the link header.
        return {
            "kind": "fq_codel",
            "limit": f"{limit}p",
            "mtu": f"{pkt + 14}B",
            "quantum": f"{pkt + 14}B",
            "ecn": True,
        }
    raise ValueError(f"unknown queue {cell.queue!r}; allowed: {', '.join(QUEUES)}")


def _tcp(cell: Cell) -> dict[str, Any]:
    tcp: dict[str, Any] = {
        "profile": "linux",
        "mss": cell.mss,
        "rwnd": _rwnd_bytes(cell),
    }
    if cell.cc == "newreno":
        tcp.update(cc="newreno", variant="newreno", rack=False, prr=False)
    elif cell.cc == "bbr":
        tcp.update(cc="bbr", pacing=True)
    elif cell.cc == "dctcp":
        tcp.update(cc="dctcp", ecn=True)
    else:
        tcp.update(cc=cell.cc)
    return tcp


def scenario(cell: Cell, duration_s: float) -> dict[str, Any]:
    """The cell's scenario, as the dict form of a TOML file.

    ``S1..Sn`` reach ``L`` over access links at 10× the bottleneck rate with no delay
    and room for 100 000 packets (they never drop); ``L -> R`` is the bottleneck, its
    one-way delay half the RTT; every flow ends at ``R``. The only losses are the
    bottleneck queue's.
    """
    n = cell.flows
    return {
        "name": f"envelope {cell.label}",
        "duration": f"{duration_s:g}s",
        "seed": SEED,
        "tcp": _tcp(cell),
        "links": [
            {
                "a": f"S{{1..{n}}}",
                "b": "L",
                "rate": f"{cell.rate_bps * 10}bit",
                "delay": "0s",
                "queue": {"limit": "100000p"},
            },
            {
                "a": "L",
                "b": "R",
                "rate": f"{cell.rate_bps}bit",
                "delay": f"{cell.rtt_ms / 2:g}ms",
                "queue": _queue(cell),
            },
        ],
        "flows": [{"from": f"S{{1..{n}}}", "to": "R", "start_jitter": f"{START_JITTER_S:g}s"}],
    }


# ---------------------------------------------------------------------------
# The envelope
# ---------------------------------------------------------------------------

#: "Near the target": a mean queueing delay of at most this many targets. CoDel
#: controls the *minimum* sojourn over each 100-ms interval to its target (RFC 8289
#: §3.2), PIE the estimated delay (RFC 8033 §4.2); the mean lies above by the
#: excursion TCP makes before the next drop takes effect (one interval plus an RTT
#: of window growth, CUBIC's probing, BBR's 5/4 phase), about a target at these
#: rates. Three targets separate "controlled" from a filling buffer (1000 packets
#: is 80 ms–7 s here).
NEAR = 3.0

#: Targets (the defaults the cells run with).
TARGET_S = {"codel": 0.005, "fq_codel": 0.005, "pie": 0.015}

#: Jain's fairness index FQ-CoDel must reach between equal flows.
JAIN_MIN = 0.99

#: "≈ 100 %": full utilisation less 5 % for the discreteness a fluid bound ignores
#: (a one-packet margin at the trough, delayed-ACK bursts, a window's edges).
FULL = 0.95

#: BBR's ProbeRTT: every 10 s, 200 ms at 4 segments (draft-cardwell-iccrg-bbr-
#: congestion-control-00 §4.3.5).
PROBE_RTT_PERIOD_S = 10.0
PROBE_RTT_S = 0.2

#: Multiplicative decrease β of each cc (the window after a loss is β × the window
#: before it).
BETA = {"reno": 0.5, "newreno": 0.5, "westwood": 0.5, "cubic": 0.7, "dctcp": 0.5}


def _drop_queue_bytes(cell: Cell) -> float:
    """The least backlog (bytes) at which the bottleneck queue can drop or mark.

    Drop-tail: the buffer. RED: ``minth`` (no early action below it, and the average
    lags the growing queue, Floyd & Jacobson 1993). SBD: ``minth`` (Alcaraz & Cerdán
    §3). CoDel and FQ-CoDel: target × rate (only a packet that waited ≥ target is
    dropped, RFC 8289 §4.2). PIE: target/2 × rate (no early drop below half the
    target while p < 20 %, RFC 8033 §4.1).
    """
    pkt = cell.packet_bytes
    limit = cell.limit_packets
    rate_bytes = cell.rate_bps / 8
    if cell.queue == "droptail":
        return limit * pkt
    if cell.queue == "red":
        return limit / 6 * pkt
    if cell.queue == "sbd":
        return limit / 2 * pkt
    if cell.queue in ("codel", "fq_codel"):
        return TARGET_S[cell.queue] * rate_bytes
    if cell.queue == "pie":
        return TARGET_S["pie"] / 2 * rate_bytes
    raise ValueError(cell.queue)


def utilisation_bound(cell: Cell, window_s: float) -> tuple[float, str]:
    """The least utilisation of the bottleneck over the window, and its source.

    A loss-based window halves (× β) at a congestion event whose window was at least
    BDP + Q (Q: the least backlog at which the queue drops, :func:`_drop_queue_bytes`),
    so the window never falls below β·(BDP + Q) and the link is busy at least
    min(1, β·(1 + Q/BDP)) of the time (Villamizar & Song 1994; Appenzeller, Keslassy &
    McKeown, "Sizing router buffers", SIGCOMM 2004: one Reno flow over 1 BDP ≈ 100 %,
    over ½ BDP ≥ 75 %). n synchronised flows halve together and act as one; flows
    out of step do better (Appenzeller et al. §3), so the one-flow bound holds for
    every n. Capped at :data:`FULL`.
    """
    cc = cell.cc
    if cc == "bbr":
        # BBR keeps the pipe full (Cardwell et al., "BBR: congestion-based
        # congestion control", ACM Queue 2016) but for ProbeRTT (≤ 200 ms + 2 RTTs to
        # drain and refill, once per 10 s) and its 1 % pacing margin.
        probes = math.ceil(window_s / PROBE_RTT_PERIOD_S)
        idle = probes * (PROBE_RTT_S + 2 * cell.rtt_ms / 1000) / window_s
        bound = 0.99 * (1 - idle)
        return min(FULL, bound), (
            f"BBR v1 fills the pipe but for ProbeRTT ({probes} × (200 ms + 2 RTT) in "
            f"{window_s:g} s) and the 1 % pacing margin (Cardwell et al. 2016)"
        )
    if cc == "dctcp" and cell.queue == "red":
        return FULL, (
            "DCTCP with a step-marking K > BDP/7 keeps the queue from emptying "
            "(Alizadeh et al., SIGCOMM 2010, §3.3)"
        )
    beta = BETA[cc]
    q = _drop_queue_bytes(cell)
    bound = beta * (1 + q / cell.bdp_bytes)
    who = {
        "reno": "NewReno AIMD, β = 0.5",
        "newreno": "NewReno AIMD, β = 0.5",
        "cubic": "CUBIC, β = 0.7 (RFC 9438 §4.6)",
        "westwood": "Westwood+: at least NewReno's (Grieco & Mascolo, CCR 2004), β = 0.5",
        "dctcp": "DCTCP cuts by α/2 ≤ ½ (RFC 8257 §3.3), β = 0.5",
    }[cc]
    return min(FULL, bound), (
        f"{who}: window ≥ β·(BDP + Q), Q = {q / cell.packet_bytes:.1f} packets "
        f"= {q / cell.bdp_bytes:.2f} BDP ({_q_source(cell)}); "
        "Villamizar & Song 1994, Appenzeller et al. 2004"
    )


def _q_source(cell: Cell) -> str:
    return {
        "droptail": "the buffer",
        "red": "RED's minth",
        "sbd": "SBD's minth",
        "codel": "target × rate",
        "fq_codel": "target × rate",
        "pie": "target/2 × rate",
    }[cell.queue]


#: The least window (segments) a cc falls to after a loss: RFC 5681 §3.1's 2·SMSS;
#: BBR's 4 (min_cwnd_segments).
MIN_WINDOW_SEGMENTS = {"bbr": 4}


def delay_bound(cell: Cell) -> tuple[float, str]:
    """The largest mean queueing delay near the AQM's target, seconds, and why.

    :data:`NEAR` × target, plus one packet's transmission (CoDel never drops while at
    most one packet waits, RFC 8289 §4.4; a 9000-byte packet at 10 Mbit/s is 7.2 ms);
    and never below the floor n flows at their least window put in the queue
    (n × w_min − BDP: no AQM can push below it, Morris 1997).
    """
    target = TARGET_S[cell.queue]
    pkt_time = cell.packet_bytes * 8 / cell.rate_bps
    wmin = MIN_WINDOW_SEGMENTS.get(cell.cc, 2)
    floor_bytes = cell.flows * wmin * cell.packet_bytes - cell.bdp_bytes
    floor = max(0.0, floor_bytes * 8 / cell.rate_bps)
    bound = max(NEAR * target + pkt_time, floor)
    return bound, (
        f"{cell.queue} target {target * 1e3:g} ms: mean ≤ {NEAR:g} targets + 1 packet "
        f"({pkt_time * 1e3:.2f} ms)"
        + (f", floor of {cell.flows} × {wmin} segments {floor * 1e3:.1f} ms" if floor else "")
    )


def rto_expected(cell: Cell) -> str | None:
    """Why timeouts may occur in this cell (bulk loss by design), or None if none may.

    BBR v1 keeps up to 2 BDP in flight (cwnd_gain 2) whatever the losses
    (draft-cardwell-iccrg-bbr-congestion-control-00 §4.2.3): over a buffer of at most
    1 BDP it loses in bulk by design (Hock, Bless & Zitterbart, "Experimental
    evaluation of BBR congestion control", ICNP 2017, §IV-B).
    """
    if cell.cc == "bbr" and cell.buffer_bdp is not None and cell.buffer_bdp <= 1:
        return "BBR v1 keeps 2 BDP in flight over BDP + ≤ 1 BDP of buffer: bulk loss by design"
    return None


# ---------------------------------------------------------------------------
# Explained misses
# ---------------------------------------------------------------------------


#: RED's averaging weight per arriving packet (Floyd's setting, see ``_queue``).
RED_WQ = 0.002


def red_time_constant(cell: Cell) -> float:
    """Seconds RED's average takes to follow the queue at the bottleneck's packet rate C,
    1/(wq·C). Adaptive RED sets wq = 1 − exp(−1/C) for one second (Floyd, Gummadi &
    Shenker, 'Adaptive RED', 2001, §5): a fixed wq makes it longer on slow links."""
    return 1.0 / (RED_WQ * cell.rate_bps / 8 / cell.packet_bytes)


@dataclass(frozen=True)
class Known:
    """A miss that is a known property of the combination, not a bug.

    ``check``: the check it explains; ``where``: the cells it covers; ``why``: the
    mechanism, with the numbers measured and the source.
    """

    check: str
    where: Callable[[Cell, Outcome], bool]
    why: str


def _no_congestion_signal(o: Outcome) -> bool:
    """No drop, mark or data timeout at the bottleneck in the whole window."""
    m = o.measures
    return sum(m["drops"].values()) == 0 and m["ecn_marks"] == 0 and m["timeouts"] == 0


def _below_bound_at_t0(cell: Cell, o: Outcome) -> bool:
    """The flows' windows at T0 added up to less than the bound's share of the BDP."""
    span = o.measures["t1_s"] - o.measures["t0_s"]
    have = (o.diagnosis or {}).get("cwnd_t0_bdp")
    return have is not None and have < utilisation_bound(cell, span)[0]


def _slowest_flow_unsignalled(o: Outcome) -> bool:
    """The flow with the least goodput saw no congestion signal in the window."""
    m = o.measures
    slowest = min(range(len(m["flow_goodput_bps"])), key=lambda i: m["flow_goodput_bps"][i])
    return m["flow_events"][slowest] == 0


def _slowest_flow_timed_out(cell: Cell, o: Outcome) -> bool:
    """The flow with the least goodput had a data timeout in the window, and every
    timeout of the window is of a kind explained for the rto check."""
    m = o.measures
    slowest = min(range(len(m["flow_goodput_bps"])), key=lambda i: m["flow_goodput_bps"][i])
    return m["flow_timeouts"][slowest] > 0 and _timeouts_explained(cell, o)


def _timeouts_all_of(kinds: set[str]) -> Callable[[Cell, Outcome], bool]:
    def where(cell: Cell, o: Outcome) -> bool:
        d = o.diagnosis or {}
        found = {k: v for k, v in d.items() if k in RTO_KINDS}
        return bool(found) and set(found) <= kinds and sum(found.values()) >= o.measures["timeouts"]

    return where


_RTO_ANY = {"rto-small-window", "rto-spurious", "rto-tail-dropped", "rto-no-sack-in-time"}
_RTO_NEWRENO = {
    "rto-lost-retransmission",
    "rto-recover-guard",
    "rto-few-dupacks",
    "rto-impatient",
}


def _timeouts_explained(cell: Cell, o: Outcome) -> bool:
    kinds = _RTO_ANY | (_RTO_NEWRENO if cell.cc == "newreno" else set())
    return _timeouts_all_of(kinds)(cell, o)


#: The TCP response function's constant with delayed ACKs: W = √(3/(2b))/√p segments
#: at congestion-signal rate p, b = 2 packets per ACK (Mathis, Semke, Mahdavi & Ott,
#: CCR 1997, eq. 3; the grid's receivers ACK every second full segment).
RESPONSE_C = math.sqrt(3 / (2 * 2))
#: CUBIC's window is at least its Reno-friendly estimate W_est, which grows by α_cubic per
#: segment acknowledged, not per ACK (RFC 9438 §4.3), to Reno's average window without
#: delayed ACKs: √(3/2)/√p whatever the ACK ratio.
RESPONSE_C_CUBIC = math.sqrt(3 / 2)


def _share_below_response(cell: Cell, o: Outcome) -> bool:
    """Whether each flow's share of the pipe and the delay bound's queue, in segments,
    is below the window the response function gives at the congestion-signal rate
    the queue applied in the window (drops and marks per arrival)."""
    m = o.measures
    if not m.get("arrivals"):
        return False
    signals = sum(m["drops"].values()) + m["ecn_marks"]
    if signals == 0:
        return False
    bound, _ = delay_bound(cell)
    share = (cell.bdp_bytes + bound * cell.rate_bps / 8) / cell.packet_bytes / cell.flows
    c = RESPONSE_C_CUBIC if cell.cc == "cubic" else RESPONSE_C
    return c / math.sqrt(signals / m["arrivals"]) > share


#: Explained misses: known properties of the combination, each found by experiment
#: (the numbers quoted were measured in the cells named; docs/validation.md).
KNOWN: tuple[Known, ...] = (
    Known(
        "util",
        lambda c, o: c.cc != "bbr" and _no_congestion_signal(o) and _below_bound_at_t0(c, o),
        "not yet back from slow start: no drop, mark or timeout in the whole window, so "
        "the window is still growing (½ MSS per RTT with delayed ACKs) from below the "
        "sawtooth's trough, where slow start's end left it — Westwood+'s ssthresh is its "
        "bandwidth estimate, which lags slow start's exponential growth (61 337 B = 0.16 "
        "BDP in westwood/droptail/b1/n1/mss1448/rtt300, utilisation 0.28; TCPW-A's "
        "motivation, Wang et al., ICC 2004), DCTCP's α = 1 makes its first marks halve "
        "twice (295 392 B = 0.79 BDP in dctcp/red/b1/n1/mss1448/rtt300), an AQM can cut "
        "several times while slow start's overshoot drains; regaining a BDP of 42–638 "
        "packets at 300 ms takes up to minutes (the bound holds from the first congestion "
        "event of the sawtooth, Appenzeller et al. 2004); the flows' windows at T0 add up "
        "to less than the bound × BDP (diagnosis cwnd_t0_bdp)",
    ),
    Known(
        "util",
        lambda c, o: (
            c.queue == "red" and red_time_constant(c) > 1.0 and o.measures["drops"]["aqm_early"] > 0
        ),
        "RED's average lags the queue by 1/(wq·C), over Adaptive RED's one second when "
        "the link carries few packets per second (Floyd, Gummadi & Shenker 2001, §5): it "
        "keeps dropping after the queue has drained, and each drop in a new RTT is a cut. "
        "In cubic/red/b1/n1/mss8948/rtt300 (139 packets/s, 3.6 s = 12 RTTs) the window "
        "grew to 98 packets (2.3 BDP), then RED dropped 16 packets in 1.8 s while the "
        "queue held at most 6, 2 and 1 packets (minth 7): five cuts in 3.1 s took the "
        "window to 22 packets (0.5 BDP), and 9 s of growth followed",
    ),
    Known(
        "util",
        lambda c, o: o.measures["timeouts"] > 0 and _timeouts_explained(c, o),
        "the window held timeouts of the kinds explained for the rto check (each "
        "restarts its flow's window from one segment)",
    ),
    Known(
        "fair",
        lambda c, o: _slowest_flow_unsignalled(o),
        "the slowest flow saw no congestion signal in the window: its own window, still "
        "growing from a cut at slow start's end, not the queue, limited it, and FQ-CoDel "
        "shares the link equally between backlogged queues only (RFC 8290 §4.2): in "
        "dctcp/fq_codel/b-/n2/mss536/rtt300 flow 2's window grew from 114 268 to 137 562 B "
        "without a mark, below its share BDP/2 = 187 500 B (Jain 0.937)",
    ),
    Known(
        "fair",
        _slowest_flow_timed_out,
        "the slowest flow had a timeout in the window, of a kind explained for the rto "
        "check: it restarts from one segment and regrows over many RTTs, its flow queue "
        "empty meanwhile, and FQ-CoDel shares the link equally between backlogged queues "
        "only (RFC 8290 §4.2), so the others take its share: in newreno/fq_codel/b-/n2/"
        "mss8948/rtt300 flow 1 (one rto-impatient timeout) got 3.66 Mbit/s and flow 2 "
        "4.61 (Jain 0.987)",
    ),
    Known(
        "rto",
        _timeouts_all_of(_RTO_ANY),
        "every timeout is of a kind any stack has: from a window of at most 4 segments "
        "(16 flows sharing 33–85 packets of pipe and queue), too few packets behind a "
        "loss for duplicate ACKs, RACK or a tail-loss probe that is not itself lost — "
        "timeouts dominate when flows have a few packets each (Morris, 'TCP behavior "
        "with many flows', ICNP 1997); or the head's retransmission dropped together "
        "with every segment sent after it, so no SACK can reach RACK and no tail-loss "
        "probe is sent in recovery (Linux tcp_schedule_loss_probe; the 3 timeouts of "
        "bbr/droptail/b4/n16/mss8948/rtt40 that were unnamed, a full drop-tail queue "
        "taking bursts of 16 BBR flows), or more widely no segment sent after the lost "
        "copy delivered in time for its SACK to be back before the timer (28 timeouts "
        "in 20 cells of the full grid: dropped too, none sent without returning ACKs, "
        "or sent late behind the queue); or spurious, the RTT rising faster than the "
        "estimator follows and than Linux's SRTT + 200 ms would have waited (one-way "
        "delay 1.08 → 1.35 s within an RTT behind SBD's 1.2-s queue in "
        "cubic/sbd/b4/n1/mss8948/rtt300; Ludwig & Katz, 'The Eifel algorithm', CCR 2000)",
    ),
    Known(
        "rto",
        lambda c, o: c.cc == "newreno" and _timeouts_all_of(_RTO_ANY | _RTO_NEWRENO)(c, o),
        "NewReno without SACK (RFC 6582) repairs one loss per RTT and re-arms its timer "
        "at the first partial ACK only (§4, 'impatient'), and cannot see a lost "
        "retransmission: a timeout is its only recovery when a retransmission is lost or "
        "a burst of losses takes longer than the RTO to repair (Fall & Floyd, CCR 1996)",
    ),
    Known(
        "delay",
        lambda c, o: c.cc not in ("bbr", "dctcp") and _share_below_response(c, o),
        "too many flows for the queue the bound allows: for the mean queue to meet "
        "the bound each of the n flows must keep at most (BDP + the bound's queue)/n "
        "segments, and the TCP response function (Mathis et al., CCR 1997: W = "
        "√(3/(2b)/p) segments, b = 2 with delayed ACKs) at the drop-and-mark rate p "
        "the queue applied in the window gives a larger window, so the flows hold a "
        "standing queue above the bound; a smaller one needs a higher p, where "
        "timeouts dominate (Morris, ICNP 1997). In cubic/fq_codel/b-/n16/mss8948/"
        "rtt300 (16 flows of 9000-byte packets at 10 Mbit/s, 300 ms) the share is 2.80 "
        "segments, p = 8.5 % gives W = 2.99, mean delay 33.5 ms against 22.2 "
        "(reno 7.1 %, 3.26, 29.4 ms; plain CoDel the same: cubic/codel 9.0 %, 2.90, "
        "33.5 ms). CUBIC's window is at least its Reno-friendly estimate, which grows per "
        "segment acknowledged (RFC 9438 §4.3): W = √(3/(2p)) for it, b = 1 — in "
        "cubic/codel/b-/n16/mss8948/rtt40 the share is 4.84 segments and p = 4.5 % gives "
        "5.77 (4.09 with b = 2), mean delay 18.1 ms against 15.7",
    ),
    Known(
        "delay",
        lambda c, o: c.cc == "dctcp" and c.queue in ("codel", "fq_codel"),
        "DCTCP cuts by α/2 per window, α the EWMA (g = 1/16) of the fraction of its "
        "packets marked, which is built for a step marker that marks every packet above "
        "K (RFC 8257 §3.1); CoDel marks one packet per interval/√count, so α stays small "
        "and the queue stands above the target (17–61 ms with 4–16 flows at 4–40 ms, "
        "1 014–1 845 marks in 5 s): a scalable control behind a classic AQM (RFC 9330 §1)",
    ),
    Known(
        "delay",
        lambda c, o: c.cc == "bbr" and c.queue in ("codel", "fq_codel") and c.flows > 1,
        "BBR v1 takes no drop as a congestion signal (draft-cardwell-iccrg-bbr-"
        "congestion-control-00 §4.2.3): flows sharing a bottleneck over-estimate their "
        "share, keep up to 2·BtlBw·RTprop in flight and hold a standing queue (Hock, Bless "
        "& Zitterbart, ICNP 2017, §V); CoDel's drops (218 per second in "
        "bbr/codel/b-/n4/mss536/rtt40, queue 41 ms) shrink the delivery but not the queue",
    ),
)


# ---------------------------------------------------------------------------
# Diagnosis: signatures of model bugs in a cell's traces
# ---------------------------------------------------------------------------

#: Model bugs the grid found, by the signature :func:`diagnose` detects in a cell's
#: traces (docs/validation.md has each one's minimal scenario).
BUGS: dict[str, str] = {
    "early-rto": (
        "a timeout fired sooner than the flow's RTT + 200 ms after the last transmission "
        "of the segment it resent, which Linux's timer cannot: under profile 'linux' the RTO is "
        "max(min_rto, SRTT + 4·RTTVAR) (RFC 6298's formula with Linux's 200 ms floor), "
        "where Linux has SRTT + max(RTTVAR, 200 ms) (tcp_rtt_estimator: rttvar ≥ "
        "tcp_rto_min) and re-arms the timer when it retransmits the head; with a "
        "standing queue RTTVAR is small and the fast retransmission's ACK (or RACK's "
        "detection of its loss) comes after the timer"
    ),
    "cut-raises-window": (
        "a fast-recovery 'reduction' set ssthresh above the window it cut: ssthresh = "
        "β·FlightSize with FlightSize = snd_nxt − snd_una, which counts the SACKed data "
        "above a hole (Linux cuts cwnd, ns-3 BytesInFlight); under sustained AQM drops the "
        "window grows from one recovery to the next"
    ),
    "rack-loss-left-to-rto": (
        "a timeout resent a segment whose last copy was dropped although data sent after "
        "that copy had arrived an RTT before: RACK (RFC 8985 §6.2) finds such a loss "
        "within an RTT, but after a timeout with rack = true the go-back-N neither resends "
        "what RACK marks lost nor counts the window without the SACKed data "
        "(Sender::rto_sack_recovery excludes RACK), so the sender stalls to the next RTO"
    ),
    "rack-loss-left-to-first-rto": (
        "as rack-loss-left-to-rto, but the flow had had no timeout before: RACK did not "
        "mark the loss, or the sender did not resend what it marked"
    ),
}


#: Kinds of a data timeout in the window that are not bugs (:func:`diagnose`).
RTO_KINDS: dict[str, str] = {
    "rto-spurious": "a copy sent before the timeout arrived (the RTT rose past the RTO)",
    "rto-small-window": "the flow's window was at most 4 segments before the timeout",
    "rto-lost-retransmission": (
        "NewReno without SACK: the segment's last copy was a retransmission, dropped"
    ),
    "rto-recover-guard": (
        "NewReno without SACK: the segment, sent once and dropped, was the first above "
        "`recover` (the highest byte sent at the flow's last cut or timeout), and its "
        "duplicate ACKs, which equal `recover`, do not start a fast retransmit (RFC 6582 "
        "§3.2 step 1; Linux's Reno, ns-2)"
    ),
    "rto-few-dupacks": (
        "without SACK (NewReno): the segment's last copy was dropped and fewer than "
        "three duplicate ACKs of it reached the sender before the timeout (rebuilt from "
        "the arrivals with the receiver's delayed-ACK rules: the segments above it were "
        "dropped too, limited transmit's among them, or the first ACK after the hole "
        "was new, covering data the delayed ACK held): too few for a fast retransmit "
        "(RFC 5681 §3.2, RFC 3042)"
    ),
    "rto-impatient": (
        "NewReno without SACK: the timer, restarted at the first partial ACK only (RFC "
        "6582 §3.2 step 5, 'impatient'), fired in a recovery that had lasted longer "
        "than the RTO while repairing one segment per RTT; the segment it resent had "
        "been retransmitted by a partial ACK after the fast retransmit, not dropped"
    ),
    "rto-tail-dropped": (
        "with SACK and RACK: the segment's last copy was a retransmission and was "
        "dropped, and so was every segment the flow sent after it before the timeout, "
        "so no SACK of later data could reach RACK (RFC 8985 §6.2 needs a delivery "
        "sent after the lost copy), and a tail-loss probe is not sent in recovery "
        "(Linux tcp_schedule_loss_probe: CA_Open or CA_CWR only; RFC 8985 §7.2)"
    ),
    "rto-no-sack-in-time": (
        "with SACK and RACK: the segment's last copy was dropped, and no segment the "
        "flow sent after it reached the receiver by the timeout less the one-way "
        "delay, so no SACK that lets RACK mark the loss (RFC 8985 §6.2) could be back "
        "before the timer: what the flow sent after it was dropped, or it sent nothing "
        "(in recovery the window is ACK-clocked and no ACK came), or sent it too late "
        "behind the queue; Linux sends no tail-loss probe in recovery "
        "(tcp_schedule_loss_probe)"
    ),
    "rto-other": "none of the kinds above",
}


def _tail_dropped(flow: int, last: float, t: float, sent: Any, dropped: Any) -> bool:
    """Whether the flow sent something in (``last``, ``t``) and every segment it
    sent then was dropped before ``t`` (each send matched to a drop of that
    segment at or after it)."""
    import polars as pl

    after = sent.filter(
        (pl.col("flow") == flow) & (pl.col("time_s") > last) & (pl.col("time_s") < t)
    )
    if after.height == 0:
        return False
    drops = dropped.filter(
        (pl.col("flow") == flow) & (pl.col("time_s") > last) & (pl.col("time_s") < t)
    )
    left = sorted(drops.select("seq", "time_s").iter_rows())
    for seq, when in sorted(after.select("seq", "time_s").iter_rows()):
        i = next(
            (k for k, (s2, w2) in enumerate(left) if s2 == seq and w2 >= when),
            None,
        )
        if i is None:
            return False
        left.pop(i)
    return True


def _at_recover(
    flow: int,
    seq: int,
    times: tuple[float, float, float],
    mss: int,
    cuts: Any,
    sent: Any,
    acks: Sequence[tuple[float, int]],
) -> bool:
    """NewReno's guard held the duplicate ACKs back (``rto-recover-guard``).

    ``times`` = (the segment's one transmission, the timeout, the one-way
    propagation delay). True when segment ``seq`` starts at the flow's ``recover``
    — one past the highest byte it had sent at its latest window cut or timeout
    before that transmission — and at least three duplicate ACKs of it reached the
    sender before the timeout (:func:`_dupacks`). Those ACKs equal ``recover`` and
    do not cover more than it, so RFC 6582
    §3.2 step 1 (without the optional heuristics of §4) does not fast-retransmit;
    Linux's Reno holds its state until something above ``high_seq`` is ACKed
    (``tcp_try_undo_recovery``), ns-2 needs ``highest_ack_ > recover_``: the timer
    resends it.
    """
    import polars as pl

    last, t, one_way = times
    before = cuts.filter((pl.col("flow") == flow) & (pl.col("time_s") <= last))
    if before.height == 0:
        return False
    t_cut = float(before["time_s"].max())
    by_cut = sent.filter((pl.col("flow") == flow) & (pl.col("time_s") <= t_cut))
    if by_cut.height == 0 or int(by_cut["seq"].max()) + mss != seq:
        return False
    return _dupacks(acks, seq, t, one_way) >= 3


def _impatient(flow: int, t: float, last: float, fast_cuts: Any, rtos: Any) -> bool:
    """RFC 6582's "impatient" timer fired in a recovery that was progressing
    (``rto-impatient``): the flow's latest cut before the timeout at ``t`` was a
    fast retransmit (``fast_cuts``) with no timeout (``rtos``) since, at least
    :data:`MIN_RTO_S` before ``t``, and the segment's last copy (at ``last``), a
    retransmission that was not dropped (the caller checks), was sent after it — a
    partial ACK's. NewReno restarts the timer at
    the first partial ACK only (RFC 6582 §3.2 step 5, §4): a recovery that repairs
    one segment per RTT and needs longer than the RTO ends in a timeout, however
    it progresses (Linux restarts it at every ACK that advances ``snd_una``).
    """
    import polars as pl

    mine = fast_cuts.filter((pl.col("flow") == flow) & (pl.col("time_s") < t))
    if mine.height == 0:
        return False
    t_cut = float(mine["time_s"].max())
    since = rtos.filter(
        (pl.col("flow") == flow) & (pl.col("time_s") >= t_cut) & (pl.col("time_s") < t)
    )
    return since.height == 0 and t - t_cut >= MIN_RTO_S and last > t_cut


#: Linux's ``TCP_RTO_MIN`` (profile "linux", the grid's): the RTO is at least this.
MIN_RTO_S = 0.2


#: The receiver of profile "linux" (the grid's): an ACK per two full segments or
#: after 40 ms (``TCP_DELACK_MIN``), at once for out-of-order data and for data that
#: fills a hole (RFC 5681 §4.2; ``tcp/receiver.rs``).
DELACK_S = 0.040


def _acks(arrivals: Sequence[tuple[float, int]], mss: int) -> list[tuple[float, int]]:
    """The ACKs (time sent, cumulative ACK) a flow's receiver sent, rebuilt from the
    arrivals (time, seq) of its data segments, all ``mss`` long (bulk flows): the
    receiver's rules (:data:`DELACK_S`), without ECN (no CE state change to ACK)."""
    rcv_nxt, above, unacked = 0, set(), 0
    deadline: float | None = None
    out: list[tuple[float, int]] = []
    for t, seq in arrivals:
        if deadline is not None and deadline <= t:
            out.append((deadline, rcv_nxt))
            unacked, deadline = 0, None
        if seq + mss <= rcv_nxt or seq > rcv_nxt:
            if seq > rcv_nxt:
                above.add(seq)
            out.append((t, rcv_nxt))
            unacked, deadline = 0, None
            continue
        had_hole = bool(above)
        rcv_nxt = seq + mss
        while rcv_nxt in above:
            above.discard(rcv_nxt)
            rcv_nxt += mss
        above = {x for x in above if x > rcv_nxt}
        unacked += mss
        if had_hole or unacked >= 2 * mss:
            out.append((t, rcv_nxt))
            unacked, deadline = 0, None
        elif deadline is None:
            deadline = t + DELACK_S
    if deadline is not None:
        out.append((deadline, rcv_nxt))
    return out


def _dupacks(acks: Sequence[tuple[float, int]], seq: int, t: float, one_way: float) -> int:
    """Duplicate ACKs of ``seq`` that reached the sender before ``t``: the ACKs
    (:func:`_acks`) equal to ``seq`` sent before ``t`` − ``one_way`` (the ACK path
    carries only ACKs and never queues), but the first (it was new)."""
    return max(0, sum(1 for at, a in acks if a == seq and at < t - one_way) - 1)


def diagnose(cell: Cell) -> dict[str, float]:
    """Bug signatures (:data:`BUGS`) in the cell's run to T and the kind of each data
    timeout in its window (:data:`RTO_KINDS`), with counts.

    Reruns the cell with traces (cwnd, seq). A ``cut-raises-window`` is a change of
    ssthresh, other than at a timeout (the window falls to 1 MSS), to more than one
    MSS above the window before it (not for Westwood+, whose ssthresh is its
    bandwidth estimate). The timeouts are the cwnd trace's rows where the flow's count
    of data timeouts rises (one at each, a backed-off one too). Each timeout is judged
    by the segment it resends first: an
    ``early-rto`` if it fired less than the flow's RTT then (the median one-way delay
    of its data arriving in the two RTTs before, plus half the propagation RTT) +
    200 ms after that segment's last transmission, and that copy's ACK, or the SACK
    of data sent after it, was back before then; a ``rack-loss-left-to-rto`` (RACK stacks) if its
    last copy was dropped while a segment sent after that copy arrived more than one
    propagation RTT before the timeout; else, in the window, one of
    :data:`RTO_KINDS`, the first that fits in their order there (``rto-spurious`` if a
    copy sent before it arrived; without SACK, NewReno's, from the dupacks its
    dropped copy's successors gave, :func:`_dupacks`, and its ``recover``,
    :func:`_at_recover`). Also
    ``cwnd_t0_bdp``: the flows' windows at T0 (each the least it had from T0 to two RTTs
    after), summed, in BDPs.
    """
    import polars as pl

    from linklab import api

    t0, t1 = durations(cell)
    r = api.run(scenario(cell, t1), trace=True)
    cw = r.traces["cwnd"].sort(["flow", "time_s"], maintain_order=True)
    seq = r.traces["seq"]
    mss = cell.mss
    cw = cw.with_columns(
        pl.col("cwnd_bytes").shift(1).over("flow").alias("prev_cwnd"),
        pl.col("ssthresh_bytes").shift(1).over("flow").alias("prev_ss"),
        pl.col("timeouts").shift(1).over("flow").fill_null(0).alias("prev_timeouts"),
        pl.col("fast_retransmits")
        .shift(1)
        .over("flow")
        .fill_null(0)
        .alias("prev_fast_retransmits"),
    )
    out: dict[str, float] = {}
    # A flow's window at T0, or the smallest it had in the two RTTs after: a window that
    # falls there without a signal in the window is a recovery begun before T0 ending
    # (NewReno's inflated window deflating to ssthresh, newreno/sbd/b0.5/n2/mss1448/rtt300).
    last = cw.filter(pl.col("time_s") <= t0).group_by("flow").agg(pl.col("cwnd_bytes").last())
    soon = (
        cw.filter((pl.col("time_s") > t0) & (pl.col("time_s") <= t0 + 2 * cell.rtt_ms / 1000))
        .group_by("flow")
        .agg(pl.col("cwnd_bytes").min().alias("soon"))
    )
    at_t0 = last.join(soon, on="flow", how="left").select(
        pl.min_horizontal("cwnd_bytes", pl.col("soon").fill_null(pl.col("cwnd_bytes")))
    )
    out["cwnd_t0_bdp"] = round(float(at_t0.to_series().sum()) / cell.bdp_bytes, 4)

    def add(label: str, info: Any = None) -> None:
        if os.environ.get("ENVDBG") and info is not None:
            print("KIND", label, *info, file=sys.stderr)
        out[label] = out.get(label, 0) + 1

    if cell.cc != "westwood":
        raised = cw.filter(
            (pl.col("ssthresh_bytes") != pl.col("prev_ss"))
            & (pl.col("cwnd_bytes") > mss)
            & (pl.col("ssthresh_bytes") > pl.col("prev_cwnd") + mss)
        )
        if raised.height:
            out["cut-raises-window"] = raised.height
    # The trace has a row at each data timeout, its count of them one higher, even
    # when the window was one segment already (a backed-off timeout).
    timeout = pl.col("timeouts") > pl.col("prev_timeouts")
    rtos = cw.filter(timeout)
    # NewReno's recovery points: every fast retransmit and every timeout sets
    # `recover` to snd_max then (RFC 6582 §3.2 step 2, §4); the trace has a row at
    # each, its count one higher.
    fast = pl.col("fast_retransmits") > pl.col("prev_fast_retransmits")
    cuts = cw.filter(fast | timeout).select("flow", "time_s")
    fast_cuts = cw.filter(fast).select("flow", "time_s")
    sent = seq.filter(pl.col("event") == "sent").sort("time_s", maintain_order=True)
    received = seq.filter(pl.col("event") == "received").sort("time_s", maintain_order=True)
    dropped = seq.filter(pl.col("event") == "dropped")
    rtt = cell.rtt_ms / 1000
    rack = cell.cc != "newreno"
    # Each received copy's send time: the latest send of that segment at least the
    # one-way propagation delay before it arrived.
    arrivals = received.with_columns(
        (pl.col("time_s") - cell.rtt_ms / 2000 + 1e-9).alias("sent_by")
    ).join_asof(
        sent.select("flow", "seq", pl.col("time_s").alias("sent_s")),
        left_on="sent_by",
        right_on="sent_s",
        by=["flow", "seq"],
        strategy="backward",
        check_sortedness=False,  # both sorted by time above
    )
    acks: dict[int, list[tuple[float, int]]] = {}

    def acks_of(flow: int) -> list[tuple[float, int]]:
        if flow not in acks:
            mine = received.filter(pl.col("flow") == flow).select("time_s", "seq")
            acks[flow] = _acks(list(mine.iter_rows()), mss)
        return acks[flow]

    for flow, t, before in rtos.select("flow", "time_s", "prev_cwnd").iter_rows():
        resent = sent.filter((pl.col("flow") == flow) & (pl.col("time_s") >= t)).head(1)
        if resent.height == 0:
            continue
        s = resent["seq"][0]
        mine = (pl.col("flow") == flow) & (pl.col("seq") == s)
        copies = sent.filter(mine & (pl.col("time_s") < t))
        if copies.height == 0:
            continue
        last = copies["time_s"].max()
        # The flow's RTT then, as SRTT would have it: the median one-way delay of its
        # data arriving in the two propagation RTTs before that transmission, plus the
        # ACK's way back.
        recent = arrivals.filter(
            (pl.col("flow") == flow)
            & (pl.col("time_s") <= last)
            & (pl.col("time_s") > last - 2 * rtt)
        )
        owd = (recent["time_s"] - recent["sent_s"]).median() if recent.height else None
        srtt = max(rtt, float(owd) + rtt / 2) if owd is not None else rtt
        # A copy sent before the timeout that arrived (before or after it): nothing
        # of that segment was lost.
        # More arrivals of the segment than copies sent from the timeout on: one came
        # from a copy sent before it (each copy arrives once, in order of sending).
        copies_in = received.filter(mine).sort("time_s")
        spurious = copies_in.height > sent.filter(mine & (pl.col("time_s") >= t)).height
        lost = dropped.filter(mine & (pl.col("time_s") >= last)).height > 0

        def later_by(when: float, flow: int = flow, last: float = last) -> bool:
            # Data sent after that copy arrived by `when` (RACK's evidence of its loss).
            return (
                arrivals.filter(
                    (pl.col("flow") == flow) & (pl.col("sent_s") > last) & (pl.col("time_s") < when)
                ).height
                > 0
            )

        linux_timer = last + srtt + 0.2
        if (
            not rack
            and not lost
            and copies.height > 1
            and _impatient(flow, t, last, fast_cuts, rtos)
        ):
            # RFC 6582's timer, not Linux's: judged below by its own rule.
            if t >= t0:
                add("rto-impatient", (flow, t))
            continue
        acked_in_time = spurious and float(copies_in["time_s"].min()) < linux_timer - rtt / 2
        if t < linux_timer and (
            acked_in_time or (rack and lost and later_by(linux_timer - rtt / 2))
        ):
            # Linux's timer would still have been running when the copy's ACK (or the
            # SACK of later data that lets RACK resend it) came back.
            add("early-rto", (flow, t))
        elif rack and lost and later_by(t - rtt):
            earlier = rtos.filter((pl.col("flow") == flow) & (pl.col("time_s") < t)).height
            add("rack-loss-left-to-rto" if earlier else "rack-loss-left-to-first-rto")
        elif t < t0:
            continue
        elif spurious:
            add("rto-spurious", (flow, t))
        elif before <= 4 * mss:
            add("rto-small-window", (flow, t))
        elif not rack and lost and copies.height > 1:
            add("rto-lost-retransmission", (flow, t))
        elif rack and lost and copies.height > 1 and _tail_dropped(flow, last, t, sent, dropped):
            add("rto-tail-dropped", (flow, t))
        elif rack and lost and not later_by(t - rtt / 2):
            add("rto-no-sack-in-time", (flow, t))
        elif (
            not rack
            and lost
            and _at_recover(flow, s, (last, t, rtt / 2), mss, cuts, sent, acks_of(flow))
        ):
            add("rto-recover-guard", (flow, t))
        elif not rack and lost and _dupacks(acks_of(flow), s, t, rtt / 2) < 3:
            add("rto-few-dupacks", (flow, t))
        else:
            add("rto-other", (flow, t))
    return dict(sorted(out.items()))


# ---------------------------------------------------------------------------
# Running and evaluating
# ---------------------------------------------------------------------------


@dataclass
class Check:
    """One expectation of a cell: met or not, with its bound, measure and source."""

    name: str
    ok: bool
    expected: str
    measured: str
    source: str
    explained: str | None = None


@dataclass
class Outcome:
    """A cell's measures and checks; ``verdict`` is PASS, EXPLAINED or MISS."""

    cell: Cell
    measures: dict[str, Any] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    error: str | None = None
    wall_s: float = 0.0
    #: What :func:`diagnose` found in the traces of a cell that missed (None when
    #: not diagnosed): bug signatures, the kinds of the window's timeouts, and the
    #: flows' windows at T0 (``cwnd_t0_bdp``).
    diagnosis: dict[str, float] | None = None

    @property
    def bugs(self) -> list[str]:
        """The model bugs whose signature the diagnosis found, ``name ×count``."""
        return [f"{k} ×{v:g}" for k, v in (self.diagnosis or {}).items() if k in BUGS]

    @property
    def verdict(self) -> str:
        """PASS; BUG (a miss in a run that shows a model bug's signature,
        :data:`BUGS`: its envelope cannot be judged until the bug is fixed);
        EXPLAINED (every miss a known property, :data:`KNOWN`); else MISS."""
        if self.error is not None:
            return "MISS"
        failed = [c for c in self.checks if not c.ok]
        if not failed:
            return "PASS"
        if self.bugs:
            return "BUG"
        if all(c.explained for c in failed):
            return "EXPLAINED"
        return "MISS"

    @property
    def reason(self) -> str:
        if self.error is not None:
            return f"run: {self.error}"
        failed = [c for c in self.checks if not c.ok]
        text = "; ".join(
            f"{c.name}: {c.measured}, expected {c.expected} ({c.source})"
            + (f" [explained: {c.explained}]" if c.explained else "")
            for c in failed
        )
        if self.bugs:
            text += f" [model bug: {', '.join(self.bugs)}]"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "cell": asdict(self.cell),
            "label": self.cell.label,
            "rate_bps": self.cell.rate_bps,
            "bdp_packets": self.cell.bdp_packets,
            "limit_packets": self.cell.limit_packets,
            "verdict": self.verdict,
            "reason": self.reason,
            "measures": self.measures,
            "checks": [asdict(c) for c in self.checks],
            "error": self.error,
            "diagnosis": self.diagnosis,
            "wall_s": self.wall_s,
        }


def _bottleneck(summary: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    link = next(x for x in summary["links"] if x["name"] == "L->R")
    queue = next(x for x in summary["queues"] if x["link"] == "L->R")
    return link, queue


def measure(cell: Cell, early: dict[str, Any], late: dict[str, Any]) -> dict[str, Any]:
    """The window's measures from the summaries of the runs ending at T0 and T.

    A run to T0 is exactly the first T0 seconds of the run to T (the engine is
    deterministic and nothing before T0 depends on the duration: tests/
    test_envelopes.py checks it), so differences of counters are the window's, and
    differences of time-integrals (mean occupancy × duration) its averages.
    """
    t0, t1 = early["sim_time_s"], late["sim_time_s"]
    span = t1 - t0
    l0, q0 = _bottleneck(early)
    l1, q1 = _bottleneck(late)
    util = (l1["tx_bytes"] - l0["tx_bytes"]) * 8 / (cell.rate_bps * span)
    backlog = (q1["mean_bytes"] * t1 - q0["mean_bytes"] * t0) / span
    per_flow = [
        (f1["delivered_bytes"] - f0["delivered_bytes"]) * 8 / span
        for f0, f1 in zip(early["flows"], late["flows"], strict=True)
    ]
    total = sum(per_flow)
    squares = sum(x * x for x in per_flow)
    jain = total * total / (len(per_flow) * squares) if squares > 0 else 0.0
    agg0, agg1 = early["aggregate"], late["aggregate"]
    drops = {k: q1["drops"][k] - q0["drops"].get(k, 0) for k in q1["drops"]}
    return {
        "t0_s": t0,
        "t1_s": t1,
        "utilisation": util,
        "goodput_bps": total,
        "queue_delay_s": backlog * 8 / cell.rate_bps,
        "jain": jain,
        "flow_goodput_bps": per_flow,
        # Timeouts of the data phase: of flows that had sent data by T0. A flow whose
        # SYN was still being retried at T0 ("late") can only recover a lost SYN by
        # its timer (RFC 9293 §3.8.1); its timeouts are counted apart.
        "timeouts": sum(
            f1["timeouts"] - f0["timeouts"]
            for f0, f1 in zip(early["flows"], late["flows"], strict=True)
            if f0["segments_sent"] > 0
        ),
        "late_flows": sum(f0["segments_sent"] == 0 for f0 in early["flows"]),
        # Congestion events each flow saw in the window (cuts on ECN, fast
        # retransmits, timeouts).
        "flow_events": [
            sum(f1[k] - f0[k] for k in ("ecn_reductions", "fast_retransmits", "timeouts"))
            for f0, f1 in zip(early["flows"], late["flows"], strict=True)
        ],
        "flow_timeouts": [
            f1["timeouts"] - f0["timeouts"]
            for f0, f1 in zip(early["flows"], late["flows"], strict=True)
        ],
        "late_flow_timeouts": sum(
            f1["timeouts"] - f0["timeouts"]
            for f0, f1 in zip(early["flows"], late["flows"], strict=True)
            if f0["segments_sent"] == 0
        ),
        "timeouts_warmup": agg0["timeouts"],
        "retransmits": agg1["retransmits"] - agg0["retransmits"],
        "drops": drops,
        "ecn_marks": q1["ecn_marks"] - q0["ecn_marks"],
        "arrivals": q1["arrivals"] - q0["arrivals"],
    }


def evaluate(cell: Cell, m: dict[str, Any]) -> list[Check]:
    """The cell's checks against the measures ``m`` (:func:`measure`)."""
    span = m["t1_s"] - m["t0_s"]
    checks = []
    u_min, u_src = utilisation_bound(cell, span)
    checks.append(
        Check(
            "util",
            m["utilisation"] >= u_min,
            f"≥ {u_min:.3f}",
            f"{m['utilisation']:.3f}",
            u_src,
        )
    )
    if cell.queue in TARGET_S:
        d_max, d_src = delay_bound(cell)
        checks.append(
            Check(
                "delay",
                m["queue_delay_s"] <= d_max,
                f"≤ {d_max * 1e3:.1f} ms",
                f"{m['queue_delay_s'] * 1e3:.1f} ms",
                d_src,
            )
        )
    if cell.queue == "fq_codel" and cell.flows > 1:
        checks.append(
            Check(
                "fair",
                m["jain"] >= JAIN_MIN,
                f"Jain ≥ {JAIN_MIN}",
                f"Jain {m['jain']:.4f}",
                "FQ-CoDel's DRR gives each flow queue an equal share (RFC 8290 §4)",
            )
        )
    why_rto = rto_expected(cell)
    if why_rto is None:
        checks.append(
            Check(
                "rto",
                m["timeouts"] == 0,
                "0 timeouts",
                f"{m['timeouts']} data timeouts",
                "nothing is lost in bulk: SACK/NewReno recovery repairs the losses "
                "without a timeout (RFC 6675, RFC 8985, RFC 6582)",
            )
        )
    return checks


def explain(out: Outcome) -> None:
    """Mark each failed check of ``out`` that a :data:`KNOWN` property explains."""
    for c in out.checks:
        if not c.ok and c.explained is None:
            for k in KNOWN:
                if k.check == c.name and k.where(out.cell, out):
                    c.explained = k.why
                    break


def run_cell(cell: Cell, diagnose_misses: bool = True) -> Outcome:
    """Run a cell (two runs: to T0 and to T) and evaluate its envelope; a cell with an
    unexplained miss is diagnosed (:func:`diagnose`) unless ``diagnose_misses`` is
    false."""
    from linklab import api

    start = time.perf_counter()
    out = Outcome(cell)
    t0, t1 = durations(cell)
    try:
        early = api.run(scenario(cell, t0)).summary
        late = api.run(scenario(cell, t1)).summary
        out.measures = measure(cell, early, late)
        out.checks = evaluate(cell, out.measures)
        if diagnose_misses and any(not c.ok for c in out.checks):
            out.diagnosis = diagnose(cell)
        explain(out)
    except Exception as e:  # any failure of a run is a miss
        out.error = f"{type(e).__name__}: {e}".splitlines()[0]
    out.wall_s = time.perf_counter() - start
    return out


def run_grid(cells: Sequence[Cell], jobs: int = 1, diagnose_misses: bool = True) -> list[Outcome]:
    """Run ``cells`` in ``jobs`` processes; results in the order of ``cells``."""
    if jobs <= 1 or len(cells) <= 1:
        return [run_cell(c, diagnose_misses) for c in cells]
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    # The longest cells first keeps the pool busy to the end; results keep `cells`' order.
    order = sorted(range(len(cells)), key=lambda i: -_cost(cells[i]))
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        done = list(
            pool.map(
                run_cell,
                [cells[i] for i in order],
                [diagnose_misses] * len(order),
                chunksize=4,
            )
        )
    results: list[Outcome | None] = [None] * len(cells)
    for i, o in zip(order, done, strict=True):
        results[i] = o
    return [o for o in results if o is not None]


def _cost(cell: Cell) -> float:
    # Packets simulated: rate / packet × (T0 + T).
    t0, t1 = durations(cell)
    return cell.rate_bps / 8 / cell.packet_bytes * (t0 + t1)


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------


def table(outcomes: Sequence[Outcome]) -> str:
    """One line per cell, then pass counts per cc × queue."""
    lines = [
        f"{'cell':<40} {'Mbit/s':>6} {'BDP':>5} {'util':>6} {'qdelay':>8} {'jain':>6} "
        f"{'RTO':>4}  verdict"
    ]
    for o in outcomes:
        m = o.measures
        util = f"{m['utilisation']:.3f}" if m else "-"
        qd = f"{m['queue_delay_s'] * 1e3:.1f}ms" if m else "-"
        jain = f"{m['jain']:.3f}" if m else "-"
        rto = str(m["timeouts"]) if m else "-"
        line = (
            f"{o.cell.label:<40} {o.cell.rate_bps / 1e6:>6g} {o.cell.bdp_packets:>5.0f} "
            f"{util:>6} {qd:>8} {jain:>6} {rto:>4}  {o.verdict}"
        )
        if o.verdict != "PASS":
            line += f"  {o.reason}"
        lines.append(line)
    lines.append("")
    lines.append(summary_matrix(outcomes))
    return "\n".join(lines)


def summary_matrix(outcomes: Sequence[Outcome]) -> str:
    """Pass counts per cc × queue: ``passed/cells`` (``+k`` explained)."""
    cols = [q for q in QUEUES if any(o.cell.queue == q for o in outcomes)]
    rows = [c for c in CCS if any(o.cell.cc == c for o in outcomes)]
    out = [f"{'cc':<9}" + "".join(f"{q:>17}" for q in cols)]
    for cc in rows:
        line = f"{cc:<9}"
        for q in cols:
            sel = [o for o in outcomes if o.cell.cc == cc and o.cell.queue == q]
            if not sel:
                line += f"{'n/a':>17}"
                continue
            p = sum(o.verdict == "PASS" for o in sel)
            e = sum(o.verdict == "EXPLAINED" for o in sel)
            b = sum(o.verdict == "BUG" for o in sel)
            cell = f"{p}/{len(sel)}" + (f" +{e}e" if e else "") + (f" {b}b" if b else "")
            line += f"{cell:>17}"
        out.append(line)
    total = len(outcomes)
    counts = {v: sum(o.verdict == v for o in outcomes) for v in ("PASS", "EXPLAINED", "BUG")}
    miss = total - sum(counts.values())
    out.append(
        f"total: {counts['PASS']} pass, {counts['EXPLAINED']} explained (e), "
        f"{counts['BUG']} model bug (b), {miss} unexplained miss of {total} cells"
    )
    if counts["BUG"]:
        seen: dict[str, int] = {}
        for o in outcomes:
            for sig in o.bugs or []:
                name = sig.split(" ×")[0]
                seen[name] = seen.get(name, 0) + 1
        for name, n in sorted(seen.items()):
            out.append(f"  {name} in {n} cells: {BUGS[name]}")
    return "\n".join(out)


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _Usage(f"{message}; see '{self.prog} --help'")


def _list_of(allowed: Sequence[str], what: str) -> Callable[[str], list[str]]:
    def parse(text: str) -> list[str]:
        items = [x.strip() for x in text.split(",") if x.strip()]
        bad = [x for x in items if x not in allowed]
        if not items or bad:
            raise argparse.ArgumentTypeError(
                f"invalid {what} {text!r}; allowed: a comma list of {', '.join(allowed)}"
            )
        return items

    return parse


def _jobs(text: str) -> int:
    try:
        n = int(text, 10)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"invalid --jobs {text!r}; allowed: an integer ≥ 1")
    return n


def _parser() -> _Parser:
    p = _Parser(
        prog="python3 -m linklab.check.envelopes",
        description="Envelope grid: every cc × queue × flows × MSS × buffer × RTT on a "
        "clean dumbbell, checked against the literature's bounds (docs/validation.md).",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="one cell per cc × queue (2 flows, MSS 1448, 40 ms, 1 BDP)",
    )
    p.add_argument(
        "--covering",
        action="store_true",
        help="the test suite's 264 cells: every cc × queue × buffer at each flow count, "
        "meeting every MSS and RTT",
    )
    p.add_argument(
        "--jobs", type=_jobs, default=os.cpu_count() or 1, help="worker processes (all cores)"
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument(
        "--scenario",
        metavar="CELL",
        help="print the TOML scenario of one cell (e.g. cubic/codel/b-/n4/mss1448/rtt40) "
        "for `linklab run`, and exit",
    )
    p.add_argument(
        "--no-diagnose",
        action="store_true",
        help="do not rerun missed cells with traces for model-bug signatures",
    )
    p.add_argument("--cc", type=_list_of(CCS, "--cc"), default=list(CCS), help="ccs to run")
    p.add_argument(
        "--queue", type=_list_of(QUEUES, "--queue"), default=list(QUEUES), help="queues to run"
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """The command: 0 when every cell passes or is explained, 1 on a miss, 2 on bad flags."""
    try:
        args = _parser().parse_args(argv)
    except _Usage as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.scenario is not None:
        try:
            cell = parse_label(args.scenario)
        except ValueError as e:
            print(f"error: --scenario: {e}", file=sys.stderr)
            return 2
        import tomli_w

        print(f"# {cell.label}: warm-up to {durations(cell)[0]:g} s, window to the end")
        print(tomli_w.dumps(scenario(cell, durations(cell)[1])), end="")
        return 0
    pick = quick_grid if args.quick else covering_grid if args.covering else grid
    cells = pick(args.cc, args.queue)
    start = time.perf_counter()
    outcomes = run_grid(cells, args.jobs, diagnose_misses=not args.no_diagnose)
    wall = time.perf_counter() - start
    if args.json:
        json.dump(
            {"wall_s": wall, "cells": [o.to_json() for o in outcomes]},
            sys.stdout,
            ensure_ascii=False,
        )
        print()
    else:
        print(table(outcomes))
        print(f"{len(cells)} cells in {wall:.1f} s with {args.jobs} jobs")
    return 1 if any(o.verdict == "MISS" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
