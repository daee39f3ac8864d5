"""What a scenario's configuration allows: per link direction and per flow bounds.

The properties of :mod:`linklab.check._properties` compare a run's results with
bounds computed here from the scenario dict alone (never from the run):

- ``Direction.prop_lb``: the least time a packet spends crossing the direction
  (propagation, a netem delay without jitter) and ``Direction.ser_lb(size)`` its
  least serialisation time (plain wired directions: at the fastest rate);
- ``Direction.cap_bytes(T)``: the most bytes the direction can carry in ``[0, T]``
  (rate x time, a schedule's integral, a trace's opportunities, a radio's top
  modulation, netem's own rate) and ``Direction.wire_per_byte``'s per-packet
  framing;
- ``Direction.worst_s``: an upper bound on one packet's time across the direction
  when nothing is lost (propagation, the largest netem delay, a full queue drained
  at the slowest rate, the longest wait for a trace's opportunities), or ``inf``
  where no bound is known (radio links, allocations, matched FEC, unbounded queues);
- ``Direction.lossless``: no random loss configured (loss, channel, netem loss or
  corruption, a trace played once that ends before the run);
- ``Direction.ticks(T)``: timer ticks a direction may cost without packets (TTIs,
  frames, trace opportunities, PIE updates, channel slots, rate steps).

The scenario is read the way the core reads it for the subset of shapes the
generator draws (and any scenario written in the same shapes): node ranges and
fan-out by groups, link-level settings with ``ab`` / ``ba`` overrides (``rate``,
``rate_schedule`` and ``trace`` as one setting), flow entries expanded pair by pair
and ``count`` by ``count``, minimum-hop routes over a tree.
"""

from __future__ import annotations

import math
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: IP + TCP header bytes of every segment (options add more: ignored, so bounds stay loose).
HEADER = 40

#: Bytes a data packet may have beyond its payload (IP, TCP, timestamps, SACK).
MAX_OVERHEAD = 100

_TIME = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ns|us|ms|s)\s*$")
_RATE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(bit|kbit|Mbit|Gbit)\s*$")
_BYTES = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(B|kB|KiB|MB|MiB|GB|GiB)\s*$")
_TIME_UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_RATE_UNIT = {"bit": 1.0, "kbit": 1e3, "Mbit": 1e6, "Gbit": 1e9}
_BYTE_UNIT = {
    "B": 1,
    "kB": 1000,
    "KiB": 1024,
    "MB": 10**6,
    "MiB": 1 << 20,
    "GB": 10**9,
    "GiB": 1 << 30,
}


def seconds(value: Any) -> float:
    """A time as written (``"20ms"``) in seconds."""
    m = _TIME.match(str(value))
    if not m:
        raise ValueError(f"not a time: {value!r}")
    return float(m.group(1)) * _TIME_UNIT[m.group(2)]


def bits_per_s(value: Any) -> float:
    """A rate as written (``"10Mbit"``) in bit/s."""
    m = _RATE.match(str(value))
    if not m:
        raise ValueError(f"not a rate: {value!r}")
    return float(m.group(1)) * _RATE_UNIT[m.group(2)]


def byte_count(value: Any) -> float:
    """A size as written (``"64KiB"``, ``1500``) in bytes."""
    if isinstance(value, int | float):
        return float(value)
    m = _BYTES.match(str(value))
    if not m:
        raise ValueError(f"not a size: {value!r}")
    return float(m.group(1)) * _BYTE_UNIT[m.group(2)]


# ---------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------

_RANGE = re.compile(r"^(.*)\{(\d+)\.\.(\d+)\}(.*)$")


def names(pattern: str) -> list[str]:
    """``"S{1..3}"`` -> S1, S2, S3; a plain name -> itself."""
    m = _RANGE.match(pattern)
    if not m:
        return [pattern]
    pre, a, b, post = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
    return [f"{pre}{i}{post}" for i in range(a, b + 1)]


def pairs(a: str, b: str) -> list[tuple[str, str]]:
    """The pairs of two ranges: zipped, or fanned out by groups (as the core)."""
    xa, xb = names(a), names(b)
    n = max(len(xa), len(xb))
    return [(xa[i // (n // len(xa))], xb[i // (n // len(xb))]) for i in range(n)]


# ---------------------------------------------------------------------------
# TCP of a flow
# ---------------------------------------------------------------------------

_TCP_DEFAULTS: dict[str | None, dict[str, Any]] = {
    None: {
        "mss": 1460,
        "timestamps": False,
        "delayed_ack": False,
        "delack_timeout": 0.2,
        "min_rto": 1.0,
        "max_rto": 60.0,
        "initial_rto": 1.0,
        "handshake": True,
    },
    "ns2": {
        "mss": 1000,
        "timestamps": False,
        "delayed_ack": False,
        "delack_timeout": 0.2,
        "min_rto": 0.2,
        "max_rto": 60.0,
        "initial_rto": 3.0,
        "handshake": True,
    },
    "ns3": {
        "mss": 536,
        "timestamps": True,
        "delayed_ack": True,
        "delack_timeout": 0.2,
        "min_rto": 1.0,
        "max_rto": 60.0,
        "initial_rto": 1.0,
        "handshake": True,
    },
    "linux": {
        "mss": 1448,
        "timestamps": True,
        "delayed_ack": True,
        "delack_timeout": 0.04,
        "min_rto": 0.2,
        "max_rto": 120.0,
        "initial_rto": 1.0,
        "handshake": True,
    },
}

_TIME_KEYS = ("delack_timeout", "min_rto", "max_rto", "initial_rto")


def _apply_tcp(base: dict[str, Any], table: dict[str, Any]) -> dict[str, Any]:
    out = dict(_TCP_DEFAULTS[table["profile"]]) if "profile" in table else dict(base)
    for key in ("mss", "timestamps", "delayed_ack", "handshake"):
        if key in table:
            out[key] = table[key]
    for key in _TIME_KEYS:
        if key in table:
            out[key] = seconds(table[key])
    return out


# ---------------------------------------------------------------------------
# Directions
# ---------------------------------------------------------------------------


@dataclass
class Direction:
    """One link direction ``A->B`` and what its configuration allows."""

    name: str
    kind: str  # "wired", "trace", "rlc", "radio" (frame_arq a->b), "uplink" (frame_arq b->a)
    settings: dict[str, Any]
    delay: float = 0.0
    rate: float | None = None  # constant rate, bit/s
    steps: list[tuple[float, float]] = field(default_factory=list)  # (at, rate) of a schedule
    trace: list[int] | None = None  # opportunity times, ms, one period
    opportunity: int = 1500
    once: bool = False
    frame_bits: float = 0.0  # radio: most bits per second (256-QAM in every frame)
    tti: float = 0.0
    allocated: tuple[float, float] | None = None  # (fch, fch + sch)
    regulated: float | None = None  # ack_regulation's lowest rate
    queue: dict[str, Any] | None = None
    default_limit: str = "100p"
    extra_ticks_per_s: float = 0.0

    # -- what the configuration says ----------------------------------------

    @property
    def netem(self) -> dict[str, Any] | None:
        return self.settings.get("netem")

    @property
    def fec(self) -> dict[str, Any] | None:
        return self.settings.get("fec")

    @property
    def overhead(self) -> float:
        ov = self.settings.get("overhead")
        return byte_count(ov) if ov is not None and self.kind == "wired" else 0.0

    @property
    def lossless(self) -> bool:
        s = self.settings
        if s.get("loss") or s.get("channel"):
            return False
        n = self.netem or {}
        if n.get("loss") or n.get("corrupt"):
            return False
        return self.kind in ("wired", "trace", "uplink")

    def max_rate(self) -> float:
        """The fastest rate the direction ever serialises at, bit/s."""
        if self.allocated is not None:
            return self.allocated[1]
        if self.steps:
            return max(r for _, r in self.steps)
        if self.rate is not None:
            return self.rate
        return math.inf

    def min_rate(self) -> float:
        if self.allocated is not None:
            return self.allocated[0]
        if self.steps:
            return min(r for _, r in self.steps)
        if self.regulated is not None:
            return min(self.regulated, self.rate or math.inf)
        return self.rate if self.rate is not None else 0.0

    # -- lower bounds -------------------------------------------------------

    @property
    def prop_lb(self) -> float:
        """Least propagation time (plus a netem delay that has no jitter or reordering)."""
        lb = self.delay
        n = self.netem
        if n and not n.get("reorder") and seconds(n.get("jitter", "0s")) == 0:
            lb += seconds(n.get("delay", "0s"))
        return lb

    def ser_lb(self, size: float) -> float:
        """Least serialisation time of a ``size``-byte packet (plain wired directions)."""
        if self.kind not in ("wired", "uplink") or self.fec or self.allocated:
            return 0.0
        rate = self.max_rate()
        if not math.isfinite(rate) or rate <= 0:
            return 0.0
        return (size + self.overhead) * 8 / rate

    # -- capacity -----------------------------------------------------------

    def _integral(self, t_end: float) -> float:
        """Bits the rate schedule allows in [0, t_end]."""
        total = 0.0
        steps = sorted(self.steps)
        for i, (at, rate) in enumerate(steps):
            nxt = steps[i + 1][0] if i + 1 < len(steps) else math.inf
            lo, hi = at, min(nxt, t_end)
            if hi > lo:
                total += rate * (hi - lo)
        return total

    def opportunities(self, t_end: float) -> int:
        """Opportunities of the trace at times in (0, t_end]."""
        assert self.trace is not None
        period = self.trace[-1]
        limit_ms = t_end * 1000.0
        if self.once:
            return sum(1 for t in self.trace if 0 < t <= limit_ms)
        full = int(limit_ms // period)
        count = full * len(self.trace)
        rest = limit_ms - full * period
        count += sum(1 for t in self.trace if t <= rest)
        # Cycle k's opportunity at t = 0 is (k - 1)'s period end; both count: loose.
        return count

    def cap_bytes(self, t_end: float, max_packet: float, netem: bool = True) -> float:
        """Most bytes (IP bytes plus ``overhead`` per packet) carried in [0, t_end].

        With ``netem``, also no more than netem's own rate lets through (the stage
        is after the wire: what the wire sends may wait there), unless it reorders
        (a reordered packet skips the rate). Slack: one packet
        (``max_packet`` and the framing ``overhead``).
        """
        max_packet += self.overhead
        if self.kind == "trace":
            cap = self.opportunities(t_end) * self.opportunity
        elif self.kind == "radio":
            cap = self.frame_bits * t_end / 8 + self.frame_bits / 8 / 1000
        elif self.allocated is not None:
            cap = self.allocated[1] * t_end / 8
        elif self.steps:
            # `next_packet`: a packet begun before a step down keeps the old rate.
            cap = self._integral(t_end) / 8 + len(self.steps) * max_packet
        elif self.rate is not None:
            cap = self.rate * t_end / 8
            if self.kind == "rlc":
                cap += self.rate * self.tti / 8
        else:
            return math.inf
        n = self.netem
        # A packet netem reorders leaves at once, past its rate's queue (Linux's
        # `netem_enqueue`, docs/models/netem.md): with `reorder` only the wire bounds.
        if netem and n and n.get("rate") and not n.get("reorder"):
            cap = min(cap, bits_per_s(n["rate"]) * t_end / 8 + max_packet)
        return cap + max_packet

    # -- upper bounds -------------------------------------------------------

    def queue_bytes(self, max_packet: float) -> float:
        """Most bytes the queue in front of the transmitter holds (inf: unbounded)."""
        q = self.queue or {}
        limit = q.get("limit")
        if limit is None:
            limit = {"codel": "1000p", "pie": "1000p", "fq_codel": "10240p"}.get(
                str(q.get("kind", "")), self.default_limit
            )
        text = str(limit)
        if text == "inf":
            return math.inf
        if text.endswith("p"):
            return float(text[:-1]) * max_packet
        return byte_count(text)

    def netem_worst(self, max_packet: float) -> float:
        n = self.netem
        if not n:
            return 0.0
        delay = seconds(n.get("delay", "0s"))
        jitter = seconds(n.get("jitter", "0s"))
        spread = 4.0 if n.get("distribution", "uniform") != "uniform" else 1.0
        worst = delay + spread * jitter
        if n.get("rate"):
            held = float(n.get("limit", 1000))
            worst += held * max_packet * 8 / bits_per_s(n["rate"])
        return worst

    def trace_wait(self, nbytes: float) -> float:
        """Longest time, from any instant, until the trace has offered ``nbytes``."""
        assert self.trace is not None
        if self.once:
            return math.inf
        period = self.trace[-1]
        need = math.ceil(nbytes / self.opportunity) + 1
        cycles = need // len(self.trace) + 2
        times = [k * period + t for k in range(cycles + 1) for t in self.trace]
        worst = 0
        for i in range(len(self.trace) + 1):
            if i + need < len(times) and i >= 1:
                worst = max(worst, times[i + need - 1] - times[i - 1])
        return worst / 1000.0

    def worst_s(self, max_packet: float) -> float:
        """Most time one packet spends crossing the direction when nothing is lost."""
        if self.kind not in ("wired", "trace", "uplink") or self.allocated is not None:
            return math.inf
        fec = self.fec
        factor = 1.0
        per_packet = self.overhead
        if fec:
            if "matched_per" in fec:
                return math.inf
            n = int(fec.get("n", 10))
            k = int(fec.get("k", n - 1))
            factor = n / k
            per_packet += n * byte_count(fec.get("fragment_header", 0))
        backlog = self.queue_bytes(max_packet)
        if not math.isfinite(backlog):
            return math.inf
        nbytes = backlog + max_packet
        packets = backlog / (HEADER + 1) + 1
        if self.kind == "trace":
            drain = self.trace_wait(nbytes)
        else:
            rate = self.min_rate()
            if rate <= 0:
                return math.inf
            drain = (nbytes * factor + packets * per_packet) * 8 / rate
        return self.delay + self.netem_worst(max_packet) + drain

    def ticks(self, t_end: float) -> float:
        """Timer ticks the direction may cost in [0, t_end] beyond its packets."""
        ticks = float(len(self.steps)) + self.extra_ticks_per_s * t_end
        if self.kind == "trace":
            ticks += self.opportunities(t_end)
        if self.kind == "rlc" and self.tti > 0:
            ticks += 4 * t_end / self.tti
        ch = self.settings.get("channel")
        if ch:
            slot = seconds(ch["slot"]) if "slot" in ch else (self.tti or 1e-3)
            ticks += t_end / max(slot, 1e-9)
        q = self.queue or {}
        if q.get("kind") == "pie":
            ticks += t_end / seconds(q.get("tupdate", "15ms"))
        return ticks

    def fec_fragments(self) -> float:
        """Fragments per packet (1 without link FEC): the events a packet may cost."""
        fec = self.fec
        if not fec:
            return 1.0
        return float(fec.get("n", 255))


@dataclass
class Flow:
    """One flow of the run (in the summary's order) and its configured shape."""

    index: int
    entry: dict[str, Any]
    src: str
    dst: str
    tcp: dict[str, Any]
    path: list[str]  # direction names of the data path
    ack_path: list[str]

    @property
    def bulk(self) -> bool:
        """Greedy to the end of the run (no finite transfer, no stop)."""
        return "bytes" not in self.entry and "stop" not in self.entry

    @property
    def start_latest(self) -> float:
        start = seconds(self.entry.get("start", "0s"))
        return start + seconds(self.entry.get("start_jitter", "0s"))

    @property
    def start_earliest(self) -> float:
        return seconds(self.entry.get("start", "0s"))

    @property
    def mss(self) -> int:
        return int(self.tcp["mss"])


class Model:
    """A scenario dict read into directions, flows and routes."""

    def __init__(self, scenario: dict[str, Any], files: dict[str, str]) -> None:
        self.scenario = scenario
        self.duration = seconds(scenario["duration"])
        self.directions: dict[str, Direction] = {}
        self.adjacency: dict[str, list[tuple[str, str]]] = {}
        for link in scenario.get("links", []):
            self._add_link(link, files)
        for alloc in scenario.get("allocations", []):
            self._allocate(alloc)
        self.flows = self._flows()
        self.base_tcp = _apply_tcp(dict(_TCP_DEFAULTS[None]), scenario.get("tcp") or {})
        # The largest packet: any flow's or workload's segment (a workload's own
        # `tcp.mss` included, finding C1 of docs/checking.md), or a media packet.
        segments = [f.mss for f in self.flows] + [
            int(self.workload_tcp(w)["mss"]) for w in scenario.get("workloads", [])
        ]
        self.max_packet = max(
            max(segments, default=1460) + MAX_OVERHEAD,
            max((_media_packet_max(m) for m in scenario.get("media", [])), default=0.0),
        )

    # -- links ----------------------------------------------------------------

    def _add_link(self, link: dict[str, Any], files: dict[str, str]) -> None:
        kind = link.get("kind", "wired")
        for a, b in pairs(str(link["a"]), str(link["b"])):
            self.adjacency.setdefault(a, []).append((b, f"{a}->{b}"))
            self.adjacency.setdefault(b, []).append((a, f"{b}->{a}"))
            if kind == "wired":
                for side, src, dst in (("ab", a, b), ("ba", b, a)):
                    self._wired(f"{src}->{dst}", link, link.get(side) or {}, files)
            elif kind == "rlc_am":
                for side, src, dst in (("ab", a, b), ("ba", b, a)):
                    self._rlc(f"{src}->{dst}", link, link.get(side) or {})
            elif kind == "frame_arq":
                self._radio(f"{a}->{b}", link)
                up = link.get("uplink") or {}
                d = Direction(
                    f"{b}->{a}",
                    "uplink",
                    {},
                    delay=seconds(up.get("delay", "2ms")),
                    rate=bits_per_s(up.get("rate", "20kbit")),
                    queue=up.get("queue"),
                    default_limit="1000p",
                )
                self.directions[d.name] = d
            else:
                raise ValueError(f"unknown link kind {kind!r}")

    def _wired(
        self, name: str, link: dict[str, Any], own: dict[str, Any], files: dict[str, str]
    ) -> None:
        group = ("rate", "rate_schedule", "trace", "opportunity", "once", "rate_change")
        settings = {k: v for k, v in link.items() if k not in ("a", "b", "ab", "ba", "kind")}
        if any(k in own for k in ("rate", "rate_schedule", "trace")):
            for k in group:
                settings.pop(k, None)
        settings.update(own)
        d = Direction(
            name,
            "wired",
            settings,
            delay=seconds(settings.get("delay", "0s")),
            queue=settings.get("queue"),
        )
        if "trace" in settings:
            d.kind = "trace"
            d.trace = [int(x) for x in files[str(settings["trace"])].split()]
            d.opportunity = int(byte_count(settings.get("opportunity", "1500B")))
            d.once = bool(settings.get("once", False))
        elif "rate_schedule" in settings:
            d.steps = [(seconds(s["at"]), bits_per_s(s["rate"])) for s in settings["rate_schedule"]]
        else:
            d.rate = bits_per_s(settings["rate"])
        self.directions[name] = d

    def _rlc(self, name: str, link: dict[str, Any], own: dict[str, Any]) -> None:
        settings = {k: v for k, v in link.items() if k not in ("a", "b", "ab", "ba")}
        if "rate" in own or "rate_schedule" in own:
            settings.pop("rate", None)
            settings.pop("rate_schedule", None)
        settings.update(own)
        d = Direction(
            name,
            "rlc",
            settings,
            delay=seconds(settings.get("delay", "25ms")),
            tti=seconds(settings.get("tti", "10ms")),
            queue=settings.get("queue"),
        )
        buffer = str(settings.get("buffer", "40p"))
        d.queue = dict(d.queue or {}, limit=buffer)
        if "rate_schedule" in settings:
            d.steps = [(seconds(s["at"]), bits_per_s(s["rate"])) for s in settings["rate_schedule"]]
        else:
            d.rate = bits_per_s(settings.get("rate", "384kbit"))
        self.directions[name] = d

    def _radio(self, name: str, link: dict[str, Any]) -> None:
        settings = {k: v for k, v in link.items() if k not in ("a", "b")}
        frame_rate = float(settings.get("frame_rate", 1500))
        symbols = float(settings.get("symbols", 108))
        d = Direction(
            name,
            "radio",
            settings,
            delay=seconds(settings.get("delay", "0s")),
            frame_bits=frame_rate * symbols * 8,
            queue=settings.get("queue"),
            default_limit="50p",
            extra_ticks_per_s=2 * frame_rate,
        )
        self.directions[name] = d

    def _allocate(self, alloc: dict[str, Any]) -> None:
        fch = bits_per_s(alloc.get("fch", "9.6kbit"))
        sch = bits_per_s(alloc.get("sch", "153.6kbit"))
        # Every mobile's downlink follows the schedule (the FCH); only the first
        # `mobiles` of them get SCH grants on top.
        mobiles = pairs(str(alloc["from"]), str(alloc["to"]))
        granted = int(alloc.get("mobiles", len(mobiles)))
        shortest = min(
            (seconds(alloc[k]) for k in ("burst", "gap", "rise") if k in alloc), default=0.0
        )
        for k, (a, b) in enumerate(mobiles):
            d = self.directions[f"{a}->{b}"]
            d.allocated = (fch, fch + sch if k < granted else fch)
            d.steps = []
            d.rate = None
            if shortest > 0:
                d.extra_ticks_per_s += 2 / shortest
            d.extra_ticks_per_s += 2
        reg = alloc.get("ack_regulation")
        if reg:
            d = self.directions[str(reg["link"])]
            d.regulated = bits_per_s(reg["rate"])
            d.extra_ticks_per_s += 100.0

    # -- flows ----------------------------------------------------------------

    def route(self, src: str, dst: str) -> list[str]:
        """The direction names of the minimum-hop path src -> dst (BFS in link order)."""
        prev: dict[str, tuple[str, str] | None] = {src: None}
        todo = deque([src])
        while todo:
            node = todo.popleft()
            if node == dst:
                break
            for nxt, dname in self.adjacency.get(node, []):
                if nxt not in prev:
                    prev[nxt] = (node, dname)
                    todo.append(nxt)
        if dst not in prev:
            raise ValueError(f"no route {src} -> {dst}")
        path: list[str] = []
        node = dst
        while prev[node] is not None:
            back = prev[node]
            assert back is not None
            path.append(back[1])
            node = back[0]
        return path[::-1]

    def workload_tcp(self, entry: dict[str, Any]) -> dict[str, Any]:
        """The effective TCP of a ``[[workloads]]`` entry (its ``tcp`` over ``[tcp]``)."""
        return _apply_tcp(self.base_tcp, entry.get("tcp") or {})

    def one_way_lb(self, path: list[str]) -> float:
        """Least one-way time over ``path`` of a 41-byte packet (propagation plus the
        least serialisation on plain wired hops)."""
        return sum(self.directions[d].prop_lb + self.directions[d].ser_lb(HEADER + 1) for d in path)

    def transfer_lb(self, path: list[str], size: float) -> float:
        """Least time to push ``size`` payload bytes through the slowest plain wired
        direction of ``path`` at its fastest rate (0 when no direction has a bound)."""
        best = 0.0
        for name in path:
            d = self.directions[name]
            if d.kind not in ("wired", "uplink") or d.fec or d.allocated:
                continue
            rate = d.max_rate()
            if math.isfinite(rate) and rate > 0:
                best = max(best, size * 8 / rate)
        return best

    def _flows(self) -> list[Flow]:
        base = _apply_tcp(dict(_TCP_DEFAULTS[None]), self.scenario.get("tcp") or {})
        flows: list[Flow] = []
        for entry in self.scenario.get("flows", []):
            own = entry.get("tcp") or {}
            tcp = _apply_tcp(base, own)
            for src, dst in pairs(str(entry["from"]), str(entry["to"])):
                path = self.route(src, dst)
                ack = self.route(dst, src)
                for _ in range(int(entry.get("count", 1))):
                    flows.append(Flow(len(flows), entry, src, dst, tcp, path, ack))
        return flows


def _media_packet_max(entry: dict[str, Any]) -> float:
    """An upper bound of a ``[[media]]`` stream's packets on the wire (docs/models/media.md):
    CBR's ``size`` above UDP, a video packet's ``packet`` frame bytes with RTP, a voice packet
    of at most 200 ms of G.711 (1 600 bytes) with RTP; plus headers and framing."""
    kind = entry.get("kind")
    if kind == "cbr":
        payload = byte_count(entry.get("size", "160B"))
    elif kind == "video":
        payload = byte_count(entry.get("packet", "1200B")) + 12
    else:
        payload = 1600 + 12
    return payload + MAX_OVERHEAD


def load_files(toml_path: Path, scenario: dict[str, Any]) -> dict[str, str]:
    """The files a scenario file names (link traces, workload arrival traces and size
    CDFs), read relative to it."""
    files: dict[str, str] = {}
    for link in scenario.get("links", []):
        for table in (link, link.get("ab") or {}, link.get("ba") or {}):
            if "trace" in table:
                name = str(table["trace"])
                files[name] = (toml_path.parent / name).read_text()
    for w in scenario.get("workloads", []):
        for table in (w.get("arrivals"), w.get("size"), w.get("response")):
            if isinstance(table, dict) and "file" in table:
                name = str(table["file"])
                files[name] = (toml_path.parent / name).read_text()
    return files
