"""Random valid scenarios over the whole model space, as a hypothesis strategy.

:func:`draws` is a hypothesis strategy of :class:`Draw` (a scenario dict, its run
seed and the synthetic trace files it names). Every random decision goes through a
:class:`Chooser`, whose primitive is one bounded integer; the value 0 of every
choice is the simplest option (no impairment, the default kind, a typical rate), so
hypothesis, which shrinks each choice towards 0, shrinks a failing scenario towards
a plain one.

What is drawn (``docs/checking.md`` has the table): a topology (one link, a
dumbbell, a chain of hops with cross traffic, seed 003's many-mobile fan-out with
SCH allocations, a UMTS RLC bearer, seed 004's frame radio link, a trace-driven
cellular link); on every wired direction a rate, a rate schedule or a Mahimahi
trace, a propagation delay, random loss or a channel (Bernoulli, Gilbert-Elliott,
Rayleigh), netem, link FEC or hybrid FEC/ARQ, framing overhead and a queue of any
kind with a packet or byte limit from one packet to many BDP; TCP with every
variant, congestion control and option, profiles, LT-TCP, per-flow overrides;
1-64 flows with start times, start jitter, finite transfers and stop times; in a
quarter of the draws a ``[[workloads]]`` entry on the first flow's path (every
arrival process and size distribution, new or persistent connections, paced
applications; at most :data:`MAX_WORKLOAD_ARRIVALS` arrivals or clients), in a
fifth a ``[[media]]`` stream (CBR, voice or video, one-way or two-way).

The cost of a draw is bounded: the duration is cut so that the packets the
fastest paths can carry, plus the timer ticks of the links (TTIs, radio frames,
trace opportunities, PIE updates, channel slots), stay below :data:`PACKET_BUDGET`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")

#: Packets (and timer ticks) a draw may carry at most, summed over its paths.
PACKET_BUDGET = 300_000

#: Most flows a draw has.
MAX_FLOWS = 64

#: Shortest and longest duration drawn (before the budget cuts it), seconds.
MIN_DURATION = 0.02
MAX_DURATION = 30.0


#: Core bugs found by these checks and not fixed yet, by name: ``draws(avoid=…)``
#: leaves their combination out (the test suite's fixed batch does, through
#: :data:`KNOWN_BUGS`), the command draws them unless ``--avoid-known``. Each entry
#: names the finding (docs/checking.md, "Findings"); remove it once the bug is fixed.
KNOWN_BUGS: dict[str, str] = {
    # None open. F6 ("pacing-srtt-after-recovery": an RTT sample from an ACK that also
    # covered a retransmission) and F7 ("tick-quantised-pacing": pacing from whole-tick
    # RTTs) were fixed in the core; the generator's hooks for them stay, keyed by name.
}


@dataclass
class Draw:
    """One random scenario: the dict ``linklab.run`` takes, its seed and its files.

    ``files`` maps a file name relative to the scenario (``traces/t0.down``) to its
    text. ``label`` is a short description of the draw's shape.
    """

    scenario: dict[str, Any]
    seed: int
    files: dict[str, str] = field(default_factory=dict)
    label: str = ""


# ---------------------------------------------------------------------------
# Choices
# ---------------------------------------------------------------------------


class Chooser:
    """Every random decision of the generator: bounded integers, 0 = simplest."""

    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any]) -> None:
        self._draw = draw
        #: Names of KNOWN_BUGS whose combinations the generator leaves out.
        self.avoid: frozenset[str] = frozenset()

    def int(self, lo: int, hi: int) -> int:
        """An integer in ``[lo, hi]``, shrinking towards ``lo``."""
        if hi <= lo:
            return lo
        return lo + int(self._draw(st.integers(0, hi - lo)))

    def chance(self, p: float) -> bool:
        """True with probability ``p`` (False shrinks first)."""
        return self.int(0, 999) >= round(1000 * (1 - p))

    def pick(self, options: Sequence[T]) -> T:
        """One of ``options``, the first being the simplest."""
        return options[self.int(0, len(options) - 1)]

    def weighted(self, options: Sequence[tuple[T, int]]) -> T:
        """One of ``options`` by integer weight, the first being the simplest."""
        total = sum(w for _, w in options)
        x = self.int(0, total - 1)
        for value, w in options:
            if x < w:
                return value
            x -= w
        raise AssertionError("unreachable")

    def log(self, lo: float, hi: float, typical: float, steps: int = 48) -> float:
        """A value on a log grid of ``[lo, hi]``; index 0 is ``typical``."""
        i = self.int(0, steps)
        if i == 0:
            return typical
        return lo * (hi / lo) ** ((i - 1) / (steps - 1))

    def frac(self, lo: float, hi: float, typical: float, steps: int = 100) -> float:
        """A value on a linear grid of ``[lo, hi]``; index 0 is ``typical``."""
        i = self.int(0, steps)
        if i == 0:
            return typical
        return lo + (hi - lo) * (i - 1) / (steps - 1)


# ---------------------------------------------------------------------------
# Values as the scenario writes them
# ---------------------------------------------------------------------------


def fmt_time(seconds: float) -> str:
    """``"0s"``, or whole microseconds (``"1500us"``), or nanoseconds below 1 us."""
    ns = round(seconds * 1e9)
    if ns <= 0:
        return "0s"
    if ns % 1000 == 0:
        return f"{ns // 1000}us"
    return f"{ns}ns"


def fmt_rate(bps: float) -> str:
    """Whole bits per second, e.g. ``"384000bit"``."""
    return f"{max(1, round(bps))}bit"


def _prob(x: float) -> float:
    """A probability rounded to 6 digits (TOML round trips it exactly)."""
    return round(min(1.0, max(0.0, x)), 6)


class Later:
    """A time known only as a fraction of the duration, resolved at the end."""

    def __init__(self, fraction: float) -> None:
        self.fraction = fraction


def _resolve(value: Any, duration: float) -> Any:
    if isinstance(value, Later):
        return fmt_time(value.fraction * duration)
    if isinstance(value, dict):
        return {k: _resolve(v, duration) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, duration) for v in value]
    return value


# ---------------------------------------------------------------------------
# The cost model used to bound the duration
# ---------------------------------------------------------------------------


@dataclass
class _Cost:
    """Packets per second the draw's paths can carry, plus timer ticks per second."""

    packets_per_s: float = 0.0
    ticks_per_s: float = 0.0
    fixed_ticks: float = 0.0

    def duration_cap(self) -> float:
        rate = self.packets_per_s + self.ticks_per_s
        budget = max(PACKET_BUDGET - self.fixed_ticks, PACKET_BUDGET / 4)
        return budget / rate if rate > 0 else MAX_DURATION


# ---------------------------------------------------------------------------
# TCP
# ---------------------------------------------------------------------------

#: The profile defaults the generator must know to keep its draws valid.
PROFILE_DEFAULTS: dict[str | None, dict[str, Any]] = {
    None: {
        "variant": "newreno",
        "cc": "newreno",
        "mss": 1460,
        "rwnd": 65535,
        "rack": False,
        "prr": False,
        "sack_rules": "rfc6675",
        "window_cuts": "rfc5681",
        "ecn": False,
    },
    "ns2": {
        "variant": "newreno",
        "cc": "newreno",
        "mss": 1000,
        "rwnd": 20000,
        "rack": False,
        "prr": False,
        "sack_rules": "ns2",
        "window_cuts": "ns2",
        "ecn": False,
    },
    "ns3": {
        "variant": "sack",
        "cc": "newreno",
        "mss": 536,
        "rwnd": 131072,
        "rack": False,
        "prr": True,
        "sack_rules": "rfc6675",
        "window_cuts": "rfc5681",
        "ecn": False,
    },
    "linux": {
        "variant": "sack",
        "cc": "cubic",
        "mss": 1448,
        "rwnd": 6291456,
        "rack": True,
        "prr": True,
        "sack_rules": "rfc6675",
        "window_cuts": "rfc5681",
        "ecn": False,
    },
}


def _cc(c: Chooser, kind: str) -> str | dict[str, Any]:
    """A congestion control: the bare name, or a table with some parameters."""
    if not c.chance(0.4):
        return kind
    t: dict[str, Any] = {"kind": kind}
    if kind == "cubic":
        if c.chance(0.5):
            t["beta"] = round(c.frac(0.05, 0.95, 0.7), 3)
        if c.chance(0.5):
            t["c"] = round(c.log(0.01, 10.0, 0.4), 4)
        for key in (
            "fast_convergence",
            "reno_friendly",
            "alpha_switch",
            "unknown_max_growth",
        ):
            if c.chance(0.3):
                t[key] = c.chance(0.5)
        if c.chance(0.4):
            t["hystart"] = c.pick([True, False, "hystart++", "classic", "classic-ns3", "off"])
        if c.chance(0.5):
            t["timeout_wmax"] = c.pick(["rfc9438", "ns3"])
        if c.chance(0.5):
            t["ssthresh_from"] = c.pick(["flight", "cwnd"])
        if c.chance(0.5):
            t["avoidance"] = c.pick(["rfc9438", "ns3"])
    elif kind == "westwood":
        t["min_interval"] = fmt_time(c.log(0.001, 0.5, 0.05))
        if c.chance(0.5):
            t["filter"] = c.pick(["ns3", "linux"])
    elif kind == "dctcp":
        if c.chance(0.5):
            t["alpha_init"] = round(c.frac(0.0, 1.0, 1.0), 3)
        if c.chance(0.5):
            t["g"] = round(c.frac(0.01, 1.0, 0.0625), 4)
        if c.chance(0.5):
            t["loss"] = c.pick(["halve", "alpha"])
        if c.chance(0.5):
            t["echo"] = c.pick(["rfc8257", "ns3"])
    elif kind == "bbr":
        if c.chance(0.3):
            t["bw_rounds"] = c.pick([10, 1, 2, 5, 100, 1000])
        if c.chance(0.3):
            t["cwnd_gain"] = round(c.frac(1.0, 4.0, 2.0), 3)
        if c.chance(0.3):
            t["high_gain"] = round(c.frac(1.1, 4.0, 2.885), 3)
        if c.chance(0.3):
            t["min_cwnd_segments"] = c.pick([4, 1, 2, 10, 100])
        if c.chance(0.3):
            t["quantization_budget"] = c.chance(0.5)
        if c.chance(0.3):
            t["min_rtt_window"] = fmt_time(c.log(0.05, 20.0, 10.0))
        if c.chance(0.3):
            t["pacing_margin"] = round(c.frac(0.0, 0.5, 0.01), 3)
        if c.chance(0.3):
            t["probe_rtt_duration"] = fmt_time(c.log(0.001, 1.0, 0.2))
        if c.chance(0.5):
            t["send_quantum"] = c.pick(["draft", "ns3"])
        if c.chance(0.5):
            t["ack_aggregation"] = c.pick(["off", "linux", "ns3"])
        if c.chance(0.5):
            t["loss_window"] = c.pick(["linux", "ns3"])
    return t


def _cc_kind(cc: str | dict[str, Any]) -> str:
    return cc if isinstance(cc, str) else str(cc["kind"])


def _bins(c: Chooser) -> list[list[float | int]]:
    """An increasing bin table ``[[upto, packets], …]`` ending at 1."""
    n = c.int(1, 5)
    cuts = sorted({round(c.frac(0.001, 0.9, 0.1), 3) for _ in range(n - 1)})
    bounds = [*cuts, 1.0]
    return [[b, c.int(0, 12)] for b in bounds]


def _lt(c: Chooser, mss: int, ecn: bool) -> tuple[dict[str, Any], bool]:
    """An LT-TCP table; returns it and whether it needs ECN on."""
    t: dict[str, Any] = {}
    needs_ecn = False
    if c.chance(0.5):
        t["ecn_only"] = True
        needs_ecn = True
    for key in ("adaptive_mss", "proactive_fec", "reactive_fec"):
        if c.chance(0.5):
            t[key] = True
    if not t:
        t["proactive_fec"] = True
    if c.chance(0.3):
        t["estimator"] = c.pick(["sender", "receiver"])
    if c.chance(0.3):
        t["g_min_segments"] = c.pick([10, 1, 2, 5, 50, 254])
    if c.chance(0.3) and mss >= 100:
        lo = c.int(100, mss)
        t["mss_min"] = lo
        if c.chance(0.5):
            t["mss_max"] = c.int(lo, mss)
    if c.chance(0.2):
        t["proactive_bins"] = _bins(c)
    if c.chance(0.2):
        t["reactive_bins"] = _bins(c)
    if c.chance(0.2):
        t["block_max"] = c.pick([255, 2, 10, 50])
    if c.chance(0.2):
        t["initial_estimate"] = round(c.frac(0.0, 0.5, 0.0), 3)
    if c.chance(0.2):
        t["reactive_limit"] = c.pick(["inventory", "deficit"])
    if c.chance(0.2):
        t["reactive_in_window"] = c.chance(0.5)
    return t, needs_ecn and not ecn


def _gen_tcp(c: Chooser) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``[tcp]`` table and the effective values the rules depend on."""
    t: dict[str, Any] = {}
    profile = c.weighted([(None, 8), ("ns2", 1), ("ns3", 1), ("linux", 1)])
    eff = dict(PROFILE_DEFAULTS[profile])
    if profile is not None:
        t["profile"] = profile
    variant = c.weighted([(None, 2), ("sack", 3), ("newreno", 1), ("reno", 1)])
    if variant is not None:
        t["variant"] = eff["variant"] = variant
    cc = c.weighted(
        [
            (None, 3),
            ("cubic", 3),
            ("bbr", 2),
            ("newreno", 1),
            ("reno", 1),
            ("westwood", 1),
            ("dctcp", 1),
        ]
    )
    if cc is not None:
        t["cc"] = _cc(c, cc)
        eff["cc"] = cc
    if c.chance(0.6):
        t["mss"] = eff["mss"] = round(c.log(100, 9000, 1460))
    if c.chance(0.4):
        t["initial_window"] = c.int(1, 10)
    if c.chance(0.7) or eff["rwnd"] < eff["mss"]:
        t["rwnd"] = eff["rwnd"] = max(eff["mss"], round(c.log(1000, 64 << 20, 1 << 20)))
    if c.chance(0.3) or eff["cc"] == "dctcp":
        t["ecn"] = eff["ecn"] = eff["cc"] == "dctcp" or c.chance(0.8)
    if eff["ecn"] and c.chance(0.15):
        t["cwr_per_echo"] = c.chance(0.6)
    if c.chance(0.15):
        t["idle_restart"] = c.pick(["rfc5681", "linux", "off"])
    if c.chance(0.15):
        t["rate_sample"] = c.pick(["linux", "ns3"])
    if c.chance(0.15):
        t["quick_ack_first"] = c.chance(0.6)
    if eff["variant"] == "sack" and c.chance(0.15):
        t["rto_resend_lost"] = c.chance(0.6)
    if eff["variant"] == "sack" and c.chance(0.15):
        t["sacked_rtx_in_pipe"] = c.chance(0.6)
    if eff["variant"] == "sack" and c.chance(0.15):
        t["partial_ack_resend"] = c.chance(0.6)
    if c.chance(0.2):
        t["timestamps"] = c.chance(0.6)
    if c.chance(0.15):
        # ns-3's 1 ms timestamp clock (inert without timestamps).
        t["ts_rtt_ms"] = c.chance(0.6)
    if c.chance(0.15):
        # One segment to 64 MiB; shrinks to ns-3's SndBufSize.
        t["send_buffer"] = eff["send_buffer"] = max(
            eff["mss"], round(c.log(eff["mss"], 64 << 20, 131072))
        )
    if c.chance(0.3):
        t["delayed_ack"] = c.chance(0.7)
        if c.chance(0.4):
            t["delack_timeout"] = fmt_time(c.log(0.001, 0.5, 0.2))
    min_rto = {"linux": 0.2, "ns2": 0.2}.get(profile or "", 1.0)
    max_rto = 120.0 if profile == "linux" else 60.0
    if c.chance(0.35):
        min_rto = c.log(0.001, 3.0, 0.2)
        t["min_rto"] = fmt_time(min_rto)
    if c.chance(0.2):
        max_rto = max(min_rto, c.log(0.01, 120.0, 60.0))
        t["max_rto"] = fmt_time(max_rto)
    if max_rto < min_rto:
        t["max_rto"] = fmt_time(min_rto)
    if c.chance(0.2):
        t["initial_rto"] = fmt_time(c.log(0.001, 5.0, 1.0))
    if c.chance(0.1):
        t["rto_tick"] = fmt_time(c.log(0.001, 1.0, 0.01))
        if c.chance(0.5):
            t["min_rto_after_backoff"] = True
    eff["tick"] = "rto_tick" in t or profile == "ns2"
    if c.chance(0.1):
        t["dupack_threshold"] = c.pick([3, 1, 2, 5, 10, 1000])
    if c.chance(0.1):
        t["limited_transmit"] = False
    if c.chance(0.2) and "pacing-srtt-after-recovery" not in c.avoid:
        t["pacing"] = True
    if "tick-quantised-pacing" in c.avoid and eff["tick"]:
        # KNOWN_BUGS "tick-quantised-pacing": no tick beside BBR or pacing.
        t.pop("pacing", None)
        if eff["cc"] == "bbr":
            t["cc"] = eff["cc"] = "cubic"
    eff["pacing"] = bool(t.get("pacing"))
    if c.chance(0.12):
        t["handshake"] = False
    if c.chance(0.2):
        t["rto_keeps_sack"] = c.chance(0.6)
    if c.chance(0.1):
        t["ecn_cut_covers_loss"] = c.chance(0.6)
    if c.chance(0.08):
        t["tcp_l"] = True
    if c.chance(0.15):
        t["abc"] = c.chance(0.6)
    if eff["variant"] == "sack":
        if c.chance(0.15):
            t["sack_rules"] = eff["sack_rules"] = c.pick(["ns2", "rfc6675"])
        if c.chance(0.25):
            t["rack"] = eff["rack"] = c.chance(0.7)
        if c.chance(0.25):
            t["prr"] = eff["prr"] = c.chance(0.7)
        if eff["sack_rules"] == "ns2":
            # ns-2's Sack1 rules go with neither RACK nor PRR (docs/models/tcp.md).
            for key in ("rack", "prr"):
                if eff[key]:
                    t[key] = eff[key] = False
        if eff["prr"] and c.chance(0.3):
            t["prr_variant"] = c.pick(["ns3", "rfc6937", "rfc9937"])
        if c.chance(0.15):
            t["cut_flight"] = c.pick(["pipe", "flightsize"])
    elif eff["rack"]:
        t["rack"] = eff["rack"] = False  # RACK needs SACK (docs/models/rack.md)
    if eff["cc"] in ("newreno", "reno") and c.chance(0.15):
        t["window_cuts"] = eff["window_cuts"] = c.pick(["ns2", "ns2-integer", "rfc5681"])
    elif eff["window_cuts"] != "rfc5681" and eff["cc"] not in ("newreno", "reno") and cc is None:
        pass  # a profile's ns-2 cuts beside its own cc: allowed (docs/models/tcp.md)
    # ns-2's Reno after a timeout (docs/models/tcp.md): it acts with variant reno
    # only, so it is drawn mostly there; elsewhere it must be accepted and inert.
    if c.chance(0.4 if eff["variant"] == "reno" else 0.05):
        t["reno_rto_guard"] = c.chance(0.7)
    if eff["variant"] == "sack" and c.chance(0.12):
        lt, needs_ecn = _lt(c, eff["mss"], eff["ecn"])
        t["lt"] = lt
        eff["lt"] = True
        if needs_ecn:
            t["ecn"] = eff["ecn"] = True
    return t, eff


def _flow_tcp(c: Chooser, eff: dict[str, Any]) -> dict[str, Any] | None:
    """A flow's own ``tcp`` table on top of ``[tcp]`` (or a profile alone), or None."""
    if not c.chance(0.2):
        return None
    if c.chance(0.2):
        return {"profile": c.pick(["ns2", "ns3", "linux"])}
    t: dict[str, Any] = {}
    no_tick_pacing = "tick-quantised-pacing" in c.avoid and eff["tick"]
    if c.chance(0.5):
        kind = c.pick(["cubic", "bbr", "newreno", "westwood", "dctcp"])
        if kind == "bbr" and no_tick_pacing:
            kind = "cubic"  # KNOWN_BUGS "tick-quantised-pacing"
        t["cc"] = _cc(c, kind)
        if kind == "dctcp" and not eff["ecn"]:
            t["ecn"] = True
    if c.chance(0.4) and not eff.get("lt"):
        mss = round(c.log(100, 9000, 536))
        t["mss"] = mss
        if eff["rwnd"] < mss:
            t["rwnd"] = mss
        if eff.get("send_buffer", mss) < mss:
            t["send_buffer"] = mss  # a buffer below one segment is refused
    if c.chance(0.3):
        t["initial_window"] = c.int(1, 10)
    if c.chance(0.3):
        pacing = c.chance(0.5)
        if pacing and ("pacing-srtt-after-recovery" in c.avoid or no_tick_pacing):
            pacing = False  # KNOWN_BUGS
        t["pacing"] = pacing
    if c.chance(0.3):
        t["delayed_ack"] = c.chance(0.5)
    if c.chance(0.2) and not (eff["cc"] == "dctcp" or t.get("ecn")):
        t["ecn"] = True
    return t or None


# ---------------------------------------------------------------------------
# Queues
# ---------------------------------------------------------------------------


def _queue(
    c: Chooser, bdp_packets: float, packet: int, *, rlc: bool = False
) -> dict[str, Any] | None:
    """A queue table of any kind, or None (the default drop-tail of 100 packets).

    The limit is a number of packets or bytes between one packet and 100 BDP
    (``bdp_packets`` at ``packet`` bytes); on a radio bearer the limit is the
    bearer's ``buffer`` and the table has none.
    """
    kind = c.weighted(
        [
            (None, 2),
            ("droptail", 4),
            ("red", 2),
            ("codel", 2),
            ("fq_codel", 2),
            ("pie", 2),
            ("sbd", 1),
        ]
    )
    if kind is None:
        return None
    q: dict[str, Any] = {"kind": kind}
    factor = c.pick([1.0, 0.0, 0.1, 0.25, 0.5, 2.0, 4.0, 10.0, 100.0])
    packets = max(1, math.ceil(factor * bdp_packets)) if factor > 0 else 1
    packets = min(packets, 200_000)
    in_bytes = c.chance(0.3) and not rlc
    limit_units = packets * packet if in_bytes else packets
    if not rlc:
        if c.chance(0.03):
            q["limit"] = "inf"
            limit_units = 0
        elif c.chance(0.02):
            q["limit"] = f"{c.int(1, packet)}B"  # below one packet: legal, nothing fits
            limit_units = 0
        elif kind in ("codel", "pie", "fq_codel") and c.chance(0.3):
            limit_units = 1000 if kind != "fq_codel" else 10240
            in_bytes = False
        else:
            q["limit"] = f"{limit_units}B" if in_bytes else f"{limit_units}p"
    if kind in ("red", "sbd"):
        # Thresholds in the queue's unit, at most its limit (SBD: maxth too).
        if limit_units == 0:
            q["limit"] = f"{packets * packet}B" if in_bytes else f"{packets}p"
            limit_units = packets * packet if in_bytes else packets
        if rlc:
            limit_units = packets  # the bearer's buffer is set in packets by the caller
        top = max(1, limit_units)
        minth = c.int(0, top - 1) if c.chance(0.5) else max(0, (top - 1) // 4)
        maxth = c.int(minth + 1, top)
        q["minth"] = minth
        q["maxth"] = maxth
        if kind == "red":
            for key, p in (
                ("ecn", 0.4),
                ("gentle", 0.2),
                ("byte_mode", 0.15),
                ("instantaneous", 0.1),
                ("ns2", 0.15),
                ("drop_front", 0.1),
                ("hard_drop", 0.1),
            ):
                if c.chance(p):
                    q[key] = c.chance(0.7)
            if c.chance(0.3):
                q["maxp"] = _prob(c.log(0.001, 1.0, 0.02))
            if c.chance(0.3):
                q["wq"] = _prob(c.log(0.0001, 1.0, 0.002))
            if c.chance(0.2):
                q["mean_pkt_size"] = c.pick([500, 40, 1000, 1500, 9000])
            if c.chance(0.15):
                q["idle"] = c.pick(["fractional", "ns2"])
            if q.get("ns2") and c.chance(0.6):
                # What resets count under ns-2's rules: ns-2's red.cc or ns-3.44's
                # (drawn often enough that the fixed batch of tests/test_check_random.py
                # holds both).
                q["count_reset"] = c.pick(["ns2", "ns3"])
        else:
            q["alpha"] = max(1, c.int(1, max(1, minth)))
            q["tr"] = fmt_time(c.log(0.01, 2.0, 0.2))
    elif kind == "codel" or kind == "fq_codel":
        if c.chance(0.4):
            target = c.log(0.0001, 0.05, 0.005)
            q["target"] = fmt_time(target)
            q["interval"] = fmt_time(target * c.log(1.5, 100, 20))
        if c.chance(0.3):
            q["ecn"] = c.chance(0.5)
        if c.chance(0.25):
            q["variant"] = c.pick(["linux", "ns3"])
        if c.chance(0.2):
            q["mtu"] = f"{c.pick([1514, 100, 600, 9014, 65535])}B"
        if kind == "fq_codel":
            if c.chance(0.4):
                q["flows"] = c.pick([1024, 1, 2, 4, 16, 65536])
            if c.chance(0.3):
                q["quantum"] = f"{c.pick([1514, 64, 300, 3000, 9014])}B"
            if c.chance(0.3):
                q["drop_batch"] = c.pick([64, 1, 2, 8, 1000])
            if c.chance(0.2):
                q["perturbation"] = c.int(0, 1 << 16)
    elif kind == "pie":
        if c.chance(0.4):
            q["target"] = fmt_time(c.log(0.001, 0.2, 0.015))
        if c.chance(0.3):
            q["tupdate"] = fmt_time(c.log(0.001, 0.2, 0.015))
        if c.chance(0.3):
            q["alpha"] = round(c.log(0.001, 10.0, 0.125), 4)
        if c.chance(0.3):
            q["beta"] = round(c.log(0.01, 20.0, 1.25), 4)
        if c.chance(0.2):
            q["max_burst"] = fmt_time(c.log(0.001, 1.0, 0.15))
        if c.chance(0.3):
            q["ecn"] = c.chance(0.6)
        if c.chance(0.15):
            q["mark_ecn_threshold"] = _prob(c.frac(0.0, 1.0, 0.1))
        for key in ("derandomize", "cap_drop_adjustment"):
            if c.chance(0.2):
                q[key] = c.chance(0.5)
        if c.chance(0.2):
            q["mean_pkt_size"] = c.pick([1500, 40, 500, 9000])
        if c.chance(0.3):
            q["burst_rule"] = c.pick(["ns3", "rfc8033"])
    return q


# ---------------------------------------------------------------------------
# Wired directions
# ---------------------------------------------------------------------------

#: Typical rates by role, bits per second.
_TYPICAL = {"access": 100e6, "bottleneck": 10e6, "core": 1e9}


@dataclass
class _Ctx:
    """What a link generator needs to know about the draw."""

    c: Chooser
    mss: int
    rtt: float
    files: dict[str, str]
    cost: _Cost
    traces: int = 0


def _rate(c: Chooser, role: str) -> float:
    return c.log(1e4, 1e10, _TYPICAL[role])


def _schedule(c: Chooser, role: str) -> list[dict[str, Any]]:
    steps = [{"at": "0s", "rate": fmt_rate(_rate(c, role))}]
    n = c.int(1, 4)
    fracs = sorted({round(c.frac(0.01, 1.2, 0.5), 3) for _ in range(n)})
    for f in fracs:
        steps.append({"at": Later(f), "rate": fmt_rate(_rate(c, role))})
    return steps


def _mahimahi(c: Chooser) -> tuple[str, float]:
    """A synthetic Mahimahi trace and its mean opportunities per second."""
    shape = c.pick(["steady", "steps", "bursty", "outage", "sparse"])
    per_ms = c.log(0.005, 20.0, 1.0)
    period = c.pick([1000, 1, 10, 100, 500, 2000, 5000])
    rnd = random.Random(c.int(0, 1 << 30))
    lines: list[int] = []
    if shape == "steady":
        step = 1.0 / per_ms
        t = step
        while t <= period + 1e-9:
            lines.append(max(1, round(t)))
            t += step
    elif shape == "sparse":
        for ms in range(1, period + 1):
            if rnd.random() < min(1.0, per_ms):
                lines.append(ms)
    else:
        levels = [per_ms * rnd.choice([0.0, 0.2, 1.0, 3.0]) for _ in range(4)]
        for ms in range(1, period + 1):
            part = min(3, (ms - 1) * 4 // period)
            rate = levels[part] if shape == "steps" else per_ms
            if shape == "outage" and period // 3 < ms <= period // 3 + period // 4:
                rate = 0.0
            if shape == "bursty" and rnd.random() < 0.7:
                rate = 0.0
            elif shape == "bursty":
                rate = rate / 0.3
            k = int(rate) + (1 if rnd.random() < rate - int(rate) else 0)
            lines.extend([ms] * k)
    if not lines or lines[-1] == 0:
        lines.append(period)
    if lines[-1] != period:
        lines.append(period)  # the period is the last timestamp
    text = "".join(f"{t}\n" for t in lines)
    return text, len(lines) / (period / 1000.0)


def _trace_dir(ctx: _Ctx, d: dict[str, Any], suffix: str) -> float:
    """Put a trace on direction ``d``; returns its mean rate in bit/s."""
    c = ctx.c
    text, opps_per_s = _mahimahi(c)
    name = f"traces/t{ctx.traces}.{suffix}"
    ctx.traces += 1
    ctx.files[name] = text
    d["trace"] = name
    opp = 1500
    if c.chance(0.3):
        opp = c.pick([1504, 100, 576, 3000, 9000, 65535])
        d["opportunity"] = f"{opp}B"
    if c.chance(0.1):
        d["once"] = True
    ctx.cost.ticks_per_s += opps_per_s
    return opps_per_s * opp * 8


def _channel(c: Chooser, wired: bool) -> dict[str, Any]:
    kind = c.pick(["bernoulli", "gilbert_elliott", "rayleigh"])
    ch: dict[str, Any] = {"kind": kind}
    slot = c.log(0.0001, 0.1, 0.01)
    if kind == "bernoulli":
        ch["p"] = _prob(c.log(1e-4, 0.5, 0.01))
    elif kind == "gilbert_elliott":
        ch["p_good"] = _prob(c.log(1e-5, 0.1, 0.001)) if c.chance(0.7) else 0.0
        ch["p_bad"] = _prob(c.frac(0.05, 1.0, 0.5))
        ch["g"] = _prob(c.frac(0.5, 0.999, 0.95))
        ch["b"] = _prob(c.frac(0.0, 0.99, 0.5))
    else:
        ch["fd_t"] = round(c.log(0.0005, 1.0, 0.01), 6)
        ch["fer"] = _prob(c.log(0.001, 0.5, 0.05))
        if c.chance(0.3):
            ch["p_good"] = _prob(c.log(1e-5, 0.1, 0.001))
        if c.chance(0.3):
            ch["p_bad"] = _prob(c.frac(0.1, 1.0, 1.0))
    if wired and (kind != "bernoulli" or c.chance(0.3)):
        ch["slot"] = fmt_time(slot)
    return ch


def _netem(c: Chooser, rate: float) -> dict[str, Any]:
    n: dict[str, Any] = {}
    if c.chance(0.6):
        n["delay"] = fmt_time(c.log(0.0001, 0.5, 0.02))
        if c.chance(0.5):
            n["jitter"] = fmt_time(c.log(0.0001, 0.2, 0.005))
            if c.chance(0.3):
                n["distribution"] = c.pick(["uniform", "normal", "pareto", "paretonormal"])
            if c.chance(0.3):
                n["correlation"] = _prob(c.frac(0.0, 1.0, 0.25))
        if c.chance(0.3):
            n["reorder"] = _prob(c.log(0.001, 0.5, 0.01))
            if c.chance(0.3):
                n["reorder_correlation"] = _prob(c.frac(0.0, 1.0, 0.5))
            if c.chance(0.3):
                n["gap"] = c.pick([5, 1, 2, 10])
    if c.chance(0.3):
        kind = c.pick(["random", "state", "gemodel"])
        if kind == "random":
            loss: dict[str, Any] = {"kind": "random", "p": _prob(c.log(1e-4, 0.3, 0.01))}
            if c.chance(0.3):
                loss["correlation"] = _prob(c.frac(0.0, 1.0, 0.25))
        elif kind == "state":
            loss = {"kind": "state", "p13": _prob(c.log(1e-4, 0.2, 0.01))}
            # Each state's exits sum to at most 1 (p13 + p14, p31 + p32).
            if c.chance(0.3):
                loss["p31"] = _prob(c.frac(0.0, 1.0, 0.5))
            if c.chance(0.3):
                loss["p32"] = _prob(c.frac(0.0, 1.0, 0.0) * (1 - loss.get("p31", 1 - loss["p13"])))
            if c.chance(0.3):
                loss["p23"] = _prob(c.frac(0.0, 1.0, 0.5))
            if c.chance(0.3):
                loss["p14"] = _prob(c.frac(0.0, 1.0, 0.0) * (1 - loss["p13"]))
        else:
            loss = {"kind": "gemodel", "p": _prob(c.log(1e-4, 0.3, 0.01))}
            if c.chance(0.5):
                loss["r"] = _prob(c.frac(0.01, 1.0, 0.3))
            if c.chance(0.3):
                loss["loss_bad"] = _prob(c.frac(0.0, 1.0, 0.5))
            if c.chance(0.3):
                loss["loss_good"] = _prob(c.log(1e-4, 0.1, 0.001))
        n["loss"] = loss
        if c.chance(0.2):
            n["ecn"] = True
    if c.chance(0.2):
        n["duplicate"] = _prob(c.log(1e-3, 0.5, 0.01))
        if c.chance(0.3):
            n["duplicate_correlation"] = _prob(c.frac(0.0, 1.0, 0.25))
    if c.chance(0.15):
        n["corrupt"] = _prob(c.log(1e-4, 0.2, 0.01))
        if c.chance(0.3):
            n["corrupt_correlation"] = _prob(c.frac(0.0, 1.0, 0.25))
    if c.chance(0.15):
        n["rate"] = fmt_rate(rate * c.frac(0.1, 2.0, 0.5))
    if c.chance(0.15):
        n["limit"] = c.pick([1000, 1, 3, 10, 100, 10_000_000])
    if c.chance(0.15):
        n["child"] = c.pick(["tfifo", "pfifo"])
    return n


def _fec(c: Chooser, lossy: bool, channel: bool) -> dict[str, Any]:
    scheme = c.pick(["hybrid", "ll-fec"])
    f: dict[str, Any] = {"scheme": scheme}
    matched = lossy and c.chance(0.3)
    if matched:
        f["matched_per"] = "link" if c.chance(0.5) else _prob(c.log(1e-3, 0.5, 0.05))
        if c.chance(0.5):
            f["k"] = c.int(1, 20)
        else:
            f["n"] = c.int(2, 40)
    elif scheme == "ll-fec" or c.chance(0.5):
        n = c.pick([10, 2, 3, 5, 20, 50, 255])
        f["n"] = n
        f["k"] = c.int(1, n - 1) if c.chance(0.5) else max(1, n - 1)
    if c.chance(0.3) and not channel:
        f["loss_unit"] = c.pick(["packet", "fragment"])
    if c.chance(0.2):
        f["per_size"] = f"{c.pick([500, 40, 1500, 9000])}B"
    if c.chance(0.2):
        f["fragment_header"] = f"{c.pick([0, 2, 8, 40])}B"
    if scheme == "hybrid":
        if c.chance(0.4):
            f["persistence"] = c.pick([3, 0, 1, 2, 10, 255])
        if c.chance(0.3):
            f["feedback"] = c.pick(["nack", "ideal"])
        if f.get("feedback") != "ideal" and c.chance(0.2):
            f["feedback_delay"] = fmt_time(c.log(0.0001, 0.2, 0.01))
        if c.chance(0.2):
            f["in_order"] = c.chance(0.5)
    return f


def _wired_settings(
    ctx: _Ctx, role: str, *, allow_trace: bool, suffix: str
) -> tuple[dict[str, Any], float]:
    """Settings of one direction (or both): returns them and the top rate in bit/s."""
    c = ctx.c
    d: dict[str, Any] = {}
    how = c.weighted([("rate", 20), ("schedule", 3), ("trace", 3 if allow_trace else 0)])
    if how == "rate":
        rate = _rate(c, role)
        d["rate"] = fmt_rate(rate)
        top = rate
    elif how == "schedule":
        steps = _schedule(c, role)
        d["rate_schedule"] = steps
        top = max(float(s["rate"][:-3]) for s in steps)
        if c.chance(0.4):
            d["rate_change"] = c.pick(["next_packet", "immediate"])
    else:
        top = _trace_dir(ctx, d, suffix)
    lossy = False
    if role != "access" and c.chance(0.25):
        if c.chance(0.6):
            d["loss"] = _prob(c.log(1e-4, 0.3, 0.01))
        else:
            d["channel"] = _channel(c, wired=True)
        lossy = True
    impair = c.weighted([(None, 8), ("netem", 2), ("fec", 2 if how != "trace" else 0)])
    if impair == "netem":
        d["netem"] = _netem(c, top)
    elif impair == "fec":
        d["fec"] = _fec(c, lossy, "channel" in d)
    if c.chance(0.1):
        d["overhead"] = f"{c.pick([2, 0, 1, 14, 40, 1000])}B"
    return d, top


def _wired_link(
    ctx: _Ctx,
    a: str,
    b: str,
    role: str,
    *,
    allow_trace: bool = False,
    delay: float | None = None,
) -> tuple[dict[str, Any], float, float]:
    """A wired ``[[links]]`` entry; returns it and the top rates a->b and b->a."""
    c = ctx.c
    link: dict[str, Any] = {"a": a, "b": b}
    if delay is None:
        typical = {"access": 0.001, "bottleneck": 0.02, "core": 0.005}[role]
        delay = 0.0 if c.chance(0.1) else c.log(1e-5, 1.0, typical)
    link["delay"] = fmt_time(delay)
    per_direction = c.chance(0.35)
    if per_direction:
        ab, top_ab = _wired_settings(ctx, role, allow_trace=allow_trace, suffix="down")
        if c.chance(0.5):
            ba, top_ba = _wired_settings(ctx, role, allow_trace=allow_trace, suffix="up")
        else:
            ba, top_ba = {"rate": fmt_rate(_rate(c, role))}, 0.0
            top_ba = float(ba["rate"][:-3])
        if c.chance(0.3):
            ab["delay"] = fmt_time(c.log(1e-5, 1.0, delay or 0.01))
        link["ab"] = ab
        link["ba"] = ba
    else:
        settings, top_ab = _wired_settings(ctx, role, allow_trace=allow_trace, suffix="both")
        link.update(settings)
        top_ba = top_ab
    bdp = max(1.0, min(top_ab, top_ba) * max(ctx.rtt, 1e-4) / 8 / (ctx.mss + 40))
    q = _queue(c, bdp, ctx.mss + 40)
    if q is not None:
        if per_direction and c.chance(0.5):
            link["ab"]["queue"] = q
        else:
            link["queue"] = q
    return link, top_ab, top_ba


# ---------------------------------------------------------------------------
# Radio links
# ---------------------------------------------------------------------------


def _rlc_link(ctx: _Ctx, a: str, b: str) -> tuple[dict[str, Any], float]:
    c = ctx.c
    link: dict[str, Any] = {"a": a, "b": b, "kind": "rlc_am"}
    if c.chance(0.3):
        link["preset"] = "seed000"
    payload = 40
    if c.chance(0.3):
        payload = c.pick([40, 10, 20, 80, 160, 1500])
        link["pdu_payload"] = f"{payload * 8}bit" if c.chance(0.5) else payload
    tti = 0.01
    if c.chance(0.3):
        tti = c.pick([0.01, 0.002, 0.02, 0.04, 0.08])
        link["tti"] = fmt_time(tti)
    delay = 0.025
    if c.chance(0.3):
        delay = c.pick([0.025, 0.0, 0.001, 0.01, 0.1])
        link["delay"] = fmt_time(delay)
    min_rate = payload * 8 / tti
    rate = max(min_rate, c.log(8e3, 4e6, 384e3))

    def rate_or_schedule(d: dict[str, Any], schedule: bool | None = None) -> float:
        # A direction's `rate` or `rate_schedule` replaces the bearer's either
        # (finding F2: a mix was refused).
        if schedule if schedule is not None else c.chance(0.2):
            steps = [{"at": "0s", "rate": fmt_rate(rate)}]
            for f in sorted({round(c.frac(0.05, 1.2, 0.5), 3) for _ in range(c.int(1, 3))}):
                steps.append(
                    {"at": Later(f), "rate": fmt_rate(max(min_rate, c.log(8e3, 4e6, 128e3)))}
                )
            d["rate_schedule"] = steps
            return max(float(s["rate"][:-3]) for s in steps)
        d["rate"] = fmt_rate(rate)
        return rate

    top = rate_or_schedule(link)
    if c.chance(0.3):
        link["tx_window"] = c.pick([1024, 1, 8, 64, 2047])
    if c.chance(0.4):
        link["max_dat"] = c.pick([10, 1, 2, 4, 40, "unlimited", "none"])
    if c.chance(0.2):
        link["poll_timer"] = c.pick(["60ms", "off", "10ms", "200ms"])
    if c.chance(0.2):
        link["poll_window"] = c.pick([0.5, "off", 0.1, 1.0])
    for key in ("poll_last_pdu", "poll_last_retx", "missing_pdu_detection", "in_order_delivery"):
        if c.chance(0.1):
            link[key] = c.chance(0.5)
    if c.chance(0.2):
        link["status_prohibit"] = c.pick(["60ms", "off", "10ms", "200ms"])
    if c.chance(0.15):
        link["feedback"] = c.pick(["status", "ideal"])
        if link["feedback"] == "ideal" and delay > tti:
            delay = tti  # seed 001's idealisation needs delay <= tti
            link["delay"] = fmt_time(delay)
    if c.chance(0.15):
        link["epc"] = c.pick(["auto", "off", "20ms", "200ms"])
    if c.chance(0.1):
        link["mrw_timer"] = c.pick(["60ms", "10ms", "500ms"])
    if c.chance(0.1):
        link["pdu_header"] = c.pick([2, 0, 1, 4])
    if c.chance(0.1):
        # 7-bit LIs (1 byte) only up to 126-byte PDUs (TS 25.322 §9.2.2.8).
        header = int(link.get("pdu_header", 2))
        link["li"] = c.pick([1, 2]) if payload + header <= 126 else 2
    buffer = 40  # the bearer's default
    if c.chance(0.6):
        buffer = c.pick([40, 1, 5, 10, 100, 1000, 100_000])
        link["buffer"] = f"{buffer}p"
    if c.chance(0.15):
        link["buffer_counts"] = c.pick(["unacknowledged", "unsent"])
    q = _queue(c, float(buffer), ctx.mss + 40, rlc=True)
    if q is not None:
        q.pop("limit", None)
        if q["kind"] in ("red", "sbd"):
            q["maxth"] = min(q["maxth"], buffer)
            q["minth"] = min(q["minth"], q["maxth"] - 1)
            if q["kind"] == "sbd":
                q["alpha"] = max(1, min(q["alpha"], max(1, q["minth"])))
            if q["minth"] < 0 or buffer < 2:
                q = None
        if q is not None:
            link["queue"] = q
    if c.chance(0.4):
        ch = _channel(c, wired=False)
        if c.chance(0.5):
            link.setdefault("ab", {})["channel"] = ch
        else:
            link["channel"] = ch
    if c.chance(0.15):
        ba: dict[str, Any] = link.setdefault("ba", {})
        rate_or_schedule(ba)
    ctx.cost.ticks_per_s += 4 / tti
    return link, top


def _frame_link(ctx: _Ctx, a: str, b: str) -> tuple[dict[str, Any], float, float]:
    c = ctx.c
    link: dict[str, Any] = {"a": a, "b": b, "kind": "frame_arq"}
    if c.chance(0.5):
        link["modulation"] = c.pick(
            ["adaptive", "bpsk", "4qam", "8qam", "16qam", "32qam", "64qam", "128qam", "256qam"]
        )
    frame_rate = 1500
    if c.chance(0.3):
        frame_rate = c.pick([1500, 100, 500, 5000, 20000])
        link["frame_rate"] = frame_rate
    symbols = 108
    if c.chance(0.3):
        symbols = c.pick([108, 1, 10, 500, 2000])
        link["symbols"] = symbols
    if c.chance(0.2):
        link["qam8"] = c.pick(["cross", "rectangular"])
    ch: dict[str, Any] = {}
    if c.chance(0.5):
        ch["snr"] = f"{c.pick([16, -5, 0, 5, 10, 25, 40])}dB"
    if c.chance(0.3):
        ch["speed"] = c.pick(["100km/h", "3km/h", "30km/h", "300km/h", "1m/s"])
    if c.chance(0.3):
        # A few values: the adaptive levels are tabulated once per process and NMSE
        # (about a second each).
        ch["nmse"] = c.pick([0.1, 0.0, 0.05, 0.3])
    if c.chance(0.2):
        ch["shadow"] = {"sigma": c.pick(["4dB", "0dB", "8dB"]), "pole": 0.74, "distance": "2m"}
    if c.chance(0.1):
        ch["taps"] = [{"delay": "0us", "power": "0dB"}]
    if ch:
        link["channel"] = ch
    if c.chance(0.4):
        link["arq"] = {"limit": c.pick([10, 0, 1, 3, 100]), "delay": c.pick(["2ms", "0s", "10ms"])}
    if c.chance(0.2):
        link["in_order"] = c.chance(0.5)
    if c.chance(0.2):
        link["delay"] = fmt_time(c.log(1e-5, 0.1, 0.001))
    if c.chance(0.1):
        link["levels_nmse"] = c.pick([0.0, 0.1, 0.3])
    q = _queue(c, 50.0, ctx.mss + 40)
    if q is not None:
        link["queue"] = q
    if c.chance(0.4):
        up: dict[str, Any] = {
            "rate": fmt_rate(c.log(1e4, 1e8, 2e4)),
            "delay": fmt_time(c.log(1e-5, 0.1, 0.002)),
        }
        if c.chance(0.3):
            up["queue"] = {"limit": f"{c.pick([1000, 1, 10, 100])}p"}
        link["uplink"] = up
    top = frame_rate * symbols * 8.0
    up_rate = float(link.get("uplink", {}).get("rate", "20000bit")[:-3])
    ctx.cost.ticks_per_s += 2 * frame_rate
    return link, top, up_rate


# ---------------------------------------------------------------------------
# Flows
# ---------------------------------------------------------------------------


def _flow(c: Chooser, src: str, dst: str, eff: dict[str, Any], *, count_cap: int) -> dict[str, Any]:
    f: dict[str, Any] = {"from": src, "to": dst}
    if count_cap > 1 and c.chance(0.3):
        f["count"] = c.int(2, count_cap)
    if c.chance(0.3):
        f["start"] = Later(c.frac(0.0, 0.6, 0.1))
    if c.chance(0.3):
        f["start_jitter"] = Later(c.frac(0.001, 1.0, 0.1))
    if c.chance(0.25):
        f["bytes"] = round(c.log(1, 5e6, 100_000))
    if c.chance(0.1):
        f["stop"] = Later(c.frac(0.7, 1.5, 0.9))
    if c.chance(0.1):
        f["name"] = f"f{c.int(0, 99)}"
    tcp = _flow_tcp(c, eff)
    if tcp is not None:
        f["tcp"] = tcp
    return f


def _fix_stop(f: dict[str, Any]) -> None:
    """`stop` must come after `start` (both fractions of the duration)."""
    if "stop" in f:
        start = f.get("start")
        s = start.fraction if isinstance(start, Later) else 0.0
        if f["stop"].fraction <= s:
            f["stop"] = Later(s + 0.05)


# ---------------------------------------------------------------------------
# Topologies
# ---------------------------------------------------------------------------

#: What a topology returns: links, flows, extra top-level tables, and the loads:
#: (flow entry, hops of its path, the slowest top rate on its path, bit/s).
Built = tuple[
    list[dict[str, Any]],
    list[dict[str, Any]],
    dict[str, Any],
    list[tuple[dict[str, Any], int, float]],
]


def _single(ctx: _Ctx, eff: dict[str, Any]) -> Built:
    c = ctx.c
    link, ab, ba = _wired_link(ctx, "S", "D", "bottleneck", allow_trace=True)
    fwd = _flow(c, "S", "D", eff, count_cap=16)
    loads = [(fwd, 1, ab)]
    flows = [fwd]
    if c.chance(0.2):
        rev = _flow(c, "D", "S", eff, count_cap=8)
        flows.append(rev)
        loads.append((rev, 1, ba))
    return [link], flows, {}, loads


def _dumbbell(ctx: _Ctx, eff: dict[str, Any]) -> Built:
    c = ctx.c
    n = c.pick([2, 1, 3, 4, 8, 16, 32])
    src = f"S{{1..{n}}}" if n > 1 else "S1"
    dst = f"D{{1..{n}}}" if n > 1 else "D1"
    left, l_ab, l_ba = _wired_link(ctx, src, "L", "access")
    mid, m_ab, m_ba = _wired_link(ctx, "L", "R", "bottleneck", allow_trace=True)
    right, r_ab, r_ba = _wired_link(ctx, "R", dst, "access")
    fwd = _flow(c, src, dst, eff, count_cap=max(1, MAX_FLOWS // n // 2))
    flows = [fwd]
    loads = [(fwd, 3, min(n * l_ab, m_ab, n * r_ab))]
    if c.chance(0.25):
        rev = _flow(c, dst, src, eff, count_cap=1)
        flows.append(rev)
        loads.append((rev, 3, min(n * l_ba, m_ba, n * r_ba)))
    return [left, mid, right], flows, {}, loads


def _chain(ctx: _Ctx, eff: dict[str, Any]) -> Built:
    c = ctx.c
    hops = c.int(2, 5)
    links = []
    tops: list[tuple[float, float]] = []
    for i in range(hops):
        role = c.pick(["core", "bottleneck", "access"])
        link, ab, ba = _wired_link(ctx, f"N{i}", f"N{i + 1}", role, allow_trace=True)
        links.append(link)
        tops.append((ab, ba))
    ends = [(0, hops)]
    for _ in range(c.int(0, 3)):
        i = c.int(0, hops - 1)
        j = c.int(i + 1, hops)
        ends.append((j, i) if c.chance(0.3) else (i, j))
    flows = []
    loads = []
    for k, (i, j) in enumerate(ends):
        f = _flow(c, f"N{i}", f"N{j}", eff, count_cap=8 if k == 0 else 4)
        lo, hi = min(i, j), max(i, j)
        slowest = min(tops[h][0 if i < j else 1] for h in range(lo, hi))
        flows.append(f)
        loads.append((f, hi - lo, slowest))
    return links, flows, {}, loads


def _fanout(ctx: _Ctx, eff: dict[str, Any]) -> Built:
    """Seed 003: servers - R - BSC (shared buffer) - BTSs - mobiles, SCH allocations."""
    c = ctx.c
    bts = c.pick([2, 1, 3, 4, 8])
    per = c.pick([2, 1, 3, 4, 8])
    mobiles = bts * per
    srv = f"S{{1..{mobiles}}}" if mobiles > 1 else "S1"
    ms = f"MS{{1..{mobiles}}}" if mobiles > 1 else "MS1"
    bt = f"BTS{{1..{bts}}}" if bts > 1 else "BTS1"
    delay = c.log(1e-4, 0.1, 0.0375)
    shared_rate = mobiles * 38.4e3 * c.log(0.1, 10.0, 1.0)
    shared_q = _queue(c, max(1.0, shared_rate * 8 * delay / 8 / 1000), 1000)
    shared: dict[str, Any] = {
        "a": "R",
        "b": "BSC",
        "rate": fmt_rate(shared_rate),
        "delay": fmt_time(delay),
    }
    if shared_q is not None:
        shared["ab"] = {"queue": shared_q}
    radio_rate = c.log(9.6e3, 2e6, 163.2e3)
    links = [
        {
            "a": srv,
            "b": "R",
            "rate": "100Mbit",
            "delay": fmt_time(delay),
            "queue": {"limit": "inf"} if c.chance(0.5) else {"limit": "1000p"},
        },
        shared,
        {"a": "BSC", "b": bt, "rate": "100Mbit", "delay": fmt_time(delay)},
        {
            "a": bt,
            "b": ms,
            "rate": fmt_rate(radio_rate),
            "delay": fmt_time(delay),
            "queue": {"limit": c.pick(["inf", "100p", "10p"])},
        },
    ]
    flow = _flow(c, srv, ms, eff, count_cap=1)
    extra: dict[str, Any] = {}
    sch = c.log(9.6e3, 2e6, 153.6e3)
    fch = 9.6e3
    down = radio_rate
    if c.chance(0.8):
        pattern = c.pick(["step", "sequential", "burst", "scheduled"])
        alloc: dict[str, Any] = {
            "from": bt,
            "to": ms,
            "pattern": pattern,
            "at": Later(c.frac(0.0, 0.8, 0.3)),
        }
        if c.chance(0.3):
            fch = c.log(1e3, 1e5, 9.6e3)
            alloc["fch"] = fmt_rate(fch)
        alloc["sch"] = fmt_rate(sch)
        if c.chance(0.3) and mobiles > 1:
            alloc["mobiles"] = c.int(1, mobiles)
        if pattern == "sequential":
            alloc["rise"] = Later(c.frac(0.0, 0.5, 0.1))
        if pattern in ("burst", "scheduled"):
            alloc["burst"] = Later(c.frac(0.005, 0.3, 0.05))
            alloc["gap"] = Later(c.frac(0.005, 0.3, 0.05))
            if c.chance(0.3):
                alloc["until"] = Later(c.frac(0.3, 1.2, 0.8))
        if pattern == "burst" and c.chance(0.3):
            alloc["spread"] = round(c.frac(0.0, 1.0, 0.1), 3)
        if c.chance(0.2):
            alloc["admission"] = {
                "max_rise": fmt_rate(sch * c.pick([1, 2, 5])),
                "window": Later(c.frac(0.01, 0.5, 0.1)),
                "retry": Later(c.frac(0.001, 0.1, 0.01)),
            }
        if c.chance(0.2):
            alloc["ack_regulation"] = {
                "link": "BSC->R",
                "rate": fmt_rate(shared_rate * c.frac(0.05, 0.9, 0.5)),
                "hold": Later(c.frac(0.01, 0.5, 0.1)),
            }
        extra["allocations"] = [alloc]
        down = max(radio_rate, fch + sch)
        ctx.cost.fixed_ticks += mobiles * 40
    if c.chance(0.3):
        extra["monitor"] = {
            "shared": "R->BSC",
            "from": bt,
            "to": ms,
            "start": Later(c.frac(0.0, 0.5, 0.0)),
        }
        if c.chance(0.3):
            extra["monitor"]["loose"] = round(c.frac(0.1, 1.0, 0.9), 3)
        if c.chance(0.3):
            extra["monitor"]["min_period"] = Later(c.frac(0.001, 0.2, 0.01))
    return links, [flow], extra, [(flow, 4, min(shared_rate, mobiles * down))]


def _rlc(ctx: _Ctx, eff: dict[str, Any]) -> Built:
    c = ctx.c
    wired, w_ab, w_ba = _wired_link(ctx, "S", "RNC", "core")
    radio, top = _rlc_link(ctx, "RNC", "UE")
    fwd = _flow(c, "S", "UE", eff, count_cap=4)
    flows = [fwd]
    loads = [(fwd, 2, min(w_ab, top))]
    if c.chance(0.2):
        rev = _flow(c, "UE", "S", eff, count_cap=2)
        flows.append(rev)
        loads.append((rev, 2, min(w_ba, top)))
    elif "count" not in fwd and c.chance(0.25) and "ab" not in radio and "channel" not in radio:
        # Seed 001's adaptive MaxDAT: a Gilbert-Elliott downlink and the one flow.
        radio["max_dat"] = "adaptive"
        radio["ab"] = {
            "channel": {
                "kind": "gilbert_elliott",
                "p_good": 0.01,
                "p_bad": 0.9,
                "g": 0.9,
                "b": round(c.frac(0.1, 0.9, 0.9), 3),
            }
        }
        radio["adaptive"] = {"alpha": round(c.frac(0.0, 1.0, 0.1), 3), "estimator": "receiver"}
        if c.chance(0.3):
            radio["adaptive"]["window"] = c.pick([100, 1, 10, 1000])
    return [wired, radio], flows, {}, loads


def _frame(ctx: _Ctx, eff: dict[str, Any]) -> Built:
    c = ctx.c
    wired, w_ab, _ = _wired_link(ctx, "S", "GW", "core")
    radio, top, _up = _frame_link(ctx, "GW", "MS")
    flow = _flow(c, "S", "MS", eff, count_cap=4)
    return [wired, radio], [flow], {}, [(flow, 2, min(w_ab, top))]


def _trace(ctx: _Ctx, eff: dict[str, Any]) -> Built:
    """A phone behind trace-driven directions, as ``mm-delay D mm-link DOWN UP``."""
    c = ctx.c
    link: dict[str, Any] = {"a": "server", "b": "phone", "delay": fmt_time(c.log(1e-4, 0.5, 0.02))}
    ab: dict[str, Any] = {}
    ba: dict[str, Any] = {}
    top = _trace_dir(ctx, ab, "down")
    if c.chance(0.7):
        up = _trace_dir(ctx, ba, "up")
    else:
        up = _rate(c, "bottleneck")
        ba["rate"] = fmt_rate(up)
    if c.chance(0.15):
        ab["loss"] = _prob(c.log(1e-4, 0.1, 0.01))
    link["ab"] = ab
    link["ba"] = ba
    bdp = max(1.0, top * 0.04 / 8 / (ctx.mss + 40))
    q = _queue(c, bdp, ctx.mss + 40)
    if q is not None:
        link["queue"] = q
    fwd = _flow(c, "server", "phone", eff, count_cap=8)
    flows = [fwd]
    loads = [(fwd, 1, top)]
    if c.chance(0.2):
        rev = _flow(c, "phone", "server", eff, count_cap=2)
        flows.append(rev)
        loads.append((rev, 1, up))
    return [link], flows, {}, loads


def _smallest_mss(flow: dict[str, Any], tcp: dict[str, Any], eff: dict[str, Any]) -> int:
    """The smallest segment a flow may send (its MSS, or LT-TCP's ``mss_min``)."""
    own = flow.get("tcp") or {}
    if "profile" in own:
        mss = int(own.get("mss", PROFILE_DEFAULTS[own["profile"]]["mss"]))
    else:
        mss = int(own.get("mss", eff["mss"]))
    lt = tcp.get("lt") or {}
    if lt.get("adaptive_mss") and "profile" not in own:
        mss = min(mss, int(lt.get("mss_min", 100)))
    return max(1, mss)


# ---------------------------------------------------------------------------
# Workloads and media
# ---------------------------------------------------------------------------

#: Most arrivals (or closed-loop clients) a drawn workload has, to keep draws fast.
MAX_WORKLOAD_ARRIVALS = 12


def _duplicates(value: Any) -> bool:
    """Whether any netem table of the links duplicates packets (workloads refuse it)."""
    if isinstance(value, dict):
        n = value.get("netem")
        if isinstance(n, dict) and n.get("duplicate"):
            return True
        return any(_duplicates(v) for v in value.values())
    if isinstance(value, list):
        return any(_duplicates(v) for v in value)
    return False


def _size(ctx: _Ctx, key: str, n: int) -> dict[str, Any] | str:
    """A size distribution (``key`` names its CDF file, ``n`` the workload)."""
    c = ctx.c
    kind = c.weighted(
        [("fixed", 3), ("lognormal", 2), ("pareto", 2), ("cdf", 1), ("web_search", 1),
         ("data_mining", 1)]
    )  # fmt: skip
    if kind in ("web_search", "data_mining"):
        return kind
    if kind == "fixed":
        return {"kind": "fixed", "bytes": round(c.log(1, 2e6, 20_000))}
    if kind == "lognormal":
        t: dict[str, Any] = {
            "kind": "lognormal",
            "median": round(c.log(1, 1e6, 20_000)),
            "sigma": round(c.frac(0.0, 3.0, 1.0), 3),
        }
        if c.chance(0.5):
            t["max"] = round(c.log(1e4, 1e7, 1e6))
        return t
    if kind == "pareto":
        shape = round(c.frac(1.05, 4.0, 1.5), 3)
        mean = round(c.log(100, 1e6, 50_000))
        t = {"kind": "pareto", "mean": mean, "shape": shape}
        if c.chance(0.6):
            t["max"] = max(round(mean * (shape - 1) / shape) + 1, round(c.log(1e3, 1e7, 1e6)))
        return t
    points = sorted({round(c.log(1, 1e6, 1000)) for _ in range(c.int(1, 6))})
    probs = sorted(round(c.frac(0.0, 1.0, 0.5), 3) for _ in points[:-1])
    lines = [f"{x} {p}" for x, p in zip(points, [*probs, 1.0], strict=True)]
    name = f"traces/w{n}-{key}.cdf"
    ctx.files[name] = "# bytes P\n" + "\n".join(lines) + "\n"
    return {"kind": "cdf", "file": name}


def _workload(
    ctx: _Ctx, flow: dict[str, Any], eff: dict[str, Any], duration: float, n: int
) -> dict[str, Any]:
    """A ``[[workloads]]`` entry between the ends of ``flow`` (at most
    :data:`MAX_WORKLOAD_ARRIVALS` arrivals or clients)."""
    c = ctx.c
    w: dict[str, Any] = {"name": f"w{n}", "from": flow["from"], "to": flow["to"]}
    if c.chance(0.5):
        w["pairs"] = "zip"
    kind = c.weighted([("poisson", 3), ("deterministic", 2), ("trace", 1), ("closed", 2)])
    count = c.int(1, MAX_WORKLOAD_ARRIVALS)
    if kind in ("poisson", "deterministic"):
        w["arrivals"] = {"kind": kind, "rate": round(count / duration, 6) or 1e-6}
        w["size"] = _size(ctx, "size", n)
    elif kind == "trace":
        times = sorted(round(c.frac(0.0, 0.95, 0.1) * duration, 6) for _ in range(count))
        sizes = [round(c.log(1, 1e6, 20_000)) for _ in times]
        name = f"traces/w{n}.arrivals"
        ctx.files[name] = "".join(f"{t} {b}\n" for t, b in zip(times, sizes, strict=True))
        w["arrivals"] = {"kind": "trace", "file": name}
    else:
        objects = c.pick([1, 2, 4])
        a: dict[str, Any] = {
            "kind": "closed",
            "clients": c.int(1, 3),
            "think": Later(c.frac(0.0, 0.5, 0.1)),
        }
        if c.chance(0.3):
            a["think_law"] = "fixed"
        if objects > 1:
            a["objects"] = objects
            a["parallel"] = c.int(1, objects)
        w["arrivals"] = a
        w["size"] = _size(ctx, "size", n)
        if c.chance(0.6):
            w["response"] = _size(ctx, "response", n)
    if c.chance(0.3):
        w["start"] = Later(c.frac(0.0, 0.5, 0.1))
    if c.chance(0.2):
        w["stop"] = Later(c.frac(0.55, 1.0, 0.9))
    tcp = _flow_tcp(c, eff)
    if tcp is not None:
        w["tcp"] = tcp
    if c.chance(0.3):
        w["connection"] = "persistent"
        if c.chance(0.5):
            w["pool"] = c.int(1, 4)
    elif c.chance(0.15):
        if c.chance(0.6):
            w["rate_cap"] = fmt_rate(c.log(1e4, 1e8, 1e6))
        if c.chance(0.5) or "rate_cap" not in w:
            w["on"] = Later(c.frac(0.01, 0.3, 0.1))
            w["off"] = Later(c.frac(0.01, 0.3, 0.1))
            if c.chance(0.3):
                w["on_off"] = "fixed"
    if c.chance(0.15):
        w["buckets"] = sorted({round(c.log(100, 1e7, 10_000)) for _ in range(c.int(1, 4))})
    return w


def _media(ctx: _Ctx, flow: dict[str, Any], slowest: float, hops: int) -> dict[str, Any]:
    """A ``[[media]]`` stream between the ends of ``flow``, at most about the path's
    slowest rate; its packets are added to the draw's cost."""
    c = ctx.c
    kind = c.weighted([("cbr", 3), ("voice", 2), ("video", 1)])
    m: dict[str, Any] = {"kind": kind, "from": flow["from"], "to": flow["to"]}
    top = max(8e3, slowest)
    if kind == "cbr":
        size = round(c.log(1, 1400, 160))
        rate = min(top, c.log(1e3, 1e8, 64e3))
        interval = max(1e-6, (size + 28) * 8 / rate)
        m["size"] = size
        if c.chance(0.5):
            m["interval"] = fmt_time(interval)
        else:
            m["rate"] = fmt_rate(max(1.0, size * 8 / interval))
        pps = 1 / interval
    elif kind == "voice":
        codec = c.pick(["g711", "g711-plc", "g729a", "g723.1"])
        m["codec"] = codec
        frame = 0.03 if codec == "g723.1" else 0.01
        if c.chance(0.4):
            m["interval"] = fmt_time(frame * c.int(1, 6))
        if c.chance(0.3):
            m["talk_spurts"] = False
        pps = 1 / frame
    else:
        rate = min(top, c.log(1e4, 2e7, 1e6))
        m["rate"] = fmt_rate(rate)
        fps = c.pick([30, 1, 10, 60])
        m["frame_rate"] = fps
        if c.chance(0.4):
            m["size_cv"] = round(c.frac(0.0, 2.0, 0.3), 3)
        if c.chance(0.3):
            m["gop"] = c.pick([30, 0, 1, 10])
        if c.chance(0.3):
            m["packet"] = c.pick([1200, 100, 500, 1400])
        pps = rate / 8 / 100 + fps
    if c.chance(0.3):
        m["start"] = Later(c.frac(0.0, 0.5, 0.1))
    if c.chance(0.2):
        m["stop"] = Later(c.frac(0.55, 1.0, 0.9))
    if c.chance(0.3):
        m["playout"] = fmt_time(c.log(0.001, 1.0, 0.1))
    if c.chance(0.2):
        m["direction"] = "two-way"
        pps *= 2
    from linklab.check._model import names

    streams = max(len(names(str(m["from"]))), len(names(str(m["to"]))))
    ctx.cost.packets_per_s += streams * hops * pps
    return m


_TOPOLOGIES: list[tuple[Callable[[_Ctx, dict[str, Any]], Built], int]] = [
    (_single, 4),
    (_dumbbell, 4),
    (_chain, 2),
    (_trace, 2),
    (_rlc, 2),
    (_fanout, 1),
    (_frame, 1),
]


@st.composite
def draws(
    draw: Callable[[st.SearchStrategy[Any]], Any], avoid: frozenset[str] = frozenset()
) -> Draw:
    """The strategy of random valid scenarios (see the module's docstring).

    ``avoid``: names of :data:`KNOWN_BUGS` whose combinations are not drawn.
    """
    unknown = avoid - set(KNOWN_BUGS)
    if unknown:
        raise ValueError(f"unknown known-bug names {sorted(unknown)}; known: {sorted(KNOWN_BUGS)}")
    c = Chooser(draw)
    c.avoid = avoid
    topology = c.weighted(_TOPOLOGIES)
    tcp, eff = _gen_tcp(c)
    rtt = c.log(1e-4, 2.0, 0.04)
    files: dict[str, str] = {}
    ctx = _Ctx(c=c, mss=int(eff["mss"]), rtt=rtt, files=files, cost=_Cost())
    links, flows, extra, loads = topology(ctx, eff)
    for f in flows:
        _fix_stop(f)
    # A workload and a media stream beside the flows, on the first flow's path.
    first, first_hops, first_slowest = loads[0]
    want_workload = c.chance(0.25) and not _duplicates(links)
    if want_workload:
        loads.append((first, first_hops, first_slowest))
    media = [_media(ctx, first, first_slowest, first_hops)] if c.chance(0.2) else []
    for flow, hops, slowest in loads:
        # Data one way, ACKs the other: about two packets per data packet per hop.
        ctx.cost.packets_per_s += 2 * hops * slowest / 8 / (_smallest_mss(flow, tcp, eff) + 40)
    target = c.log(MIN_DURATION, MAX_DURATION, 2.0)
    duration = max(MIN_DURATION / 4, min(target, ctx.cost.duration_cap()))
    duration = float(f"{duration:.3g}")
    scenario: dict[str, Any] = {
        "name": f"check {topology.__name__[1:]}",
        "duration": fmt_time(duration),
    }
    if tcp:
        scenario["tcp"] = tcp
    scenario["links"] = links
    scenario["flows"] = flows
    if want_workload:
        scenario["workloads"] = [_workload(ctx, first, eff, duration, 0)]
    if media:
        scenario["media"] = media
    scenario.update(extra)
    scenario = _resolve(scenario, duration)
    seed = c.int(1, 1 << 32)
    return Draw(scenario=scenario, seed=seed, files=files, label=topology.__name__[1:])
