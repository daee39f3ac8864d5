"""Run one draw and check every property on it.

:func:`check_draw` runs a :class:`~linklab.check._generate.Draw` twice (once with
traces, streamed in slices as ``linklab.run`` does, once bare), a third time when
the run was long enough to be sliced (traces kept whole), and checks:

``exception``   the run ends normally, or with a clean ``ScenarioError`` (a refusal,
                counted, not a failure); any other exception fails (an
                ``AccountingError`` is reported as ``accounting``).
``causality``   every segment received was sent before, and no earlier than the
                sum of its path's propagation delays (plus the least serialisation
                of a 41-byte packet on plain wired hops) after its first sending;
                no segment is sent before its flow's start; no link direction
                delivers more packets than it sent (netem's duplicates aside).
``capacity``    on every link direction, the bytes delivered to the receivers of the
                flows that cross it, with 40 header bytes (and the direction's framing
                overhead) per full segment, fit in what the direction can carry in the
                run (:meth:`Direction.cap_bytes`) plus one packet; and so do the bytes
                its transmitter started (every packet: data, ACKs, retransmissions).
``progress``    a bulk flow whose data and ACK paths have no random loss and bounded
                queues delivers a new segment in every window of ``W`` seconds (see
                :func:`progress_window`), unless one of its segments was dropped (a
                counted cause, in the ``seq`` trace) and not yet delivered when the
                stall began, or anything was dropped or lost on its ACK path.
``workloads``   every ``[[workloads]]`` flow is one row of the ``fct`` table (rows =
                arrivals = completed + unfinished; the sizes sum to the offered bytes;
                completed rows have an FCT), and every finished flow's FCT is at least
                its path's least one-way time plus its size over the slowest plain
                wired direction's fastest rate, plus the least round trip of its
                handshake on a new connection with ``handshake`` on; slowdowns are
                positive; completed flows count in ``capacity``.
``media``       every ``[[media]]`` stream's account closes (sent + netem copies =
                delivered + dropped + in flight); the sink's counts agree with it
                (received + corrupted + duplicates = delivered, received + lost + in
                flight = sent, its in flight — distinct packets not received — at most
                the account's and equal without copies, lost = dropped + corrupted
                without copies); received ≤
                sent, late ≤ received, frames played ≤ complete ≤ sent; the median
                and mean one-way delays are at least the path's least one-way time;
                a CBR source sends no more than its schedule allows; the
                ``media_packets`` trace has the account's sent, delivered and
                dropped rows per stream.
``determinism`` the two runs give identical summaries (``wall_time_s``, ``hops_per_s``
                aside), and
                the sliced traces equal the whole ones.
``events``      the engine popped at most :func:`event_bound` events.
``hang``        the draw finished within the timeout (checked by the pool).
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linklab import _core
from linklab.check._generate import Draw
from linklab.check._model import HEADER, Flow, Model, seconds

if TYPE_CHECKING:
    import polars as pl

#: Every property a draw can fail, in report order.
PROPERTIES = (
    "exception",
    "accounting",
    "hang",
    "causality",
    "capacity",
    "progress",
    "workloads",
    "media",
    "determinism",
    "events",
    "injected",
)

#: Events per packet-sized unit of capacity (a 40-byte packet crossing one direction)
#: and per timer tick, per flow, and in all, that a run may pop (docs/checking.md).
EVENTS_PER_UNIT = 16
EVENTS_PER_FLOW = 1000
EVENTS_FIXED = 10_000

#: Progress windows are this many worst-case round trips.
PROGRESS_ROUND_TRIPS = 3

#: Slack on time comparisons: the traces hold float seconds of integer nanoseconds.
TIME_EPS = 1e-9

#: Events per slice of the binding's run loop (crates/py: SLICE_EVENTS).
SLICE_EVENTS = 1 << 16

#: Test-only: ``LINKLAB_CHECK_INJECT=always`` makes every successful run fail the
#: ``injected`` property; ``two-links`` fails those with two or more ``[[links]]``.
INJECT_ENV = "LINKLAB_CHECK_INJECT"


@dataclass
class Outcome:
    """What checking one draw found."""

    status: str  # "ok", "refused", "failed"
    failures: list[tuple[str, str]] = field(default_factory=list)
    refusal: str = ""
    events: int = 0
    event_bound: float = 0.0
    wall_s: float = 0.0
    progress_flows: int = 0
    sliced: bool = False
    workload_flows: int = 0  # finished workload flows whose FCT was checked
    media_streams: int = 0

    def failed(self, prop: str) -> bool:
        return any(p == prop for p, _ in self.failures)


def refusal_reason(message: str) -> str:
    """A refusal's reason without its numbers and indices (for counting)."""
    text = re.sub(r"\[\d+\]", "[]", message)
    text = re.sub(r"\"[^\"]*\"", '"…"', text)
    text = re.sub(r"\d+(\.\d+)?(e-?\d+)?", "N", text)
    return text[:140]


# ---------------------------------------------------------------------------
# Bounds
# ---------------------------------------------------------------------------


def event_bound(model: Model, summary: dict[str, Any] | None = None) -> float:
    """Most engine events a run of ``model`` may pop.

    Every packet crossing a link direction costs a few events (its arrival at the
    far end, the transmitter's wake-up, the endpoints' timers re-armed and the
    superseded wake-ups popped later); a direction carries at most
    ``cap_bytes / 40`` packets (40 bytes: a bare TCP/IP header), times the
    fragments of link FEC and two for netem duplicates. Timers tick without packets
    (TTIs, frames, trace opportunities, PIE updates, channel slots, rate steps).
    Bound: ``16 x (packets + ticks) + 1000 x flows + 10000``, where ``flows`` also
    counts every workload arrival and ``packets`` every media packet sent times its
    path's hops (a source's own ticks; its packets may be dropped at the first queue,
    beyond what the capacity bounds), both from ``summary``.
    """
    t = model.duration
    units = 0.0
    for d in model.directions.values():
        packets = d.cap_bytes(t, model.max_packet) / HEADER * d.fec_fragments()
        if d.netem and d.netem.get("duplicate"):
            packets *= 2
        units += packets + d.ticks(t)
    flows = len(model.flows)
    if summary is not None:
        for w in (summary.get("workloads") or {}).get("workloads", []):
            flows += int(w["arrivals"]) + int(w["rejected"])
        for m in summary.get("media") or []:
            hops = len(model.route(str(m["from"]), str(m["to"])))
            units += 2 * int(m["sent"]) * hops
    return EVENTS_PER_UNIT * units + EVENTS_PER_FLOW * flows + EVENTS_FIXED


def min_one_way(model: Model, flow: Flow) -> float:
    """Least one-way time of a data segment: propagation + least serialisation."""
    return sum(
        model.directions[d].prop_lb + model.directions[d].ser_lb(HEADER + 1) for d in flow.path
    )


def progress_window(model: Model, flow: Flow) -> float:
    """``W``: three worst-case round trips of the flow when nothing is lost.

    A round trip is the worst one-way time of every direction of the data path and
    of the ACK path (:meth:`Direction.worst_s`: propagation, the largest netem
    delay, a full queue drained at the slowest rate, the longest wait for a trace's
    opportunities) plus the delayed-ACK timeout. Without a loss a bulk sender
    always has a segment in flight or about to leave on the next ACK, so a new
    segment reaches the receiver within one such round trip; three leave room for
    a spurious timeout's go-back-N. ``inf`` where a direction has no bound.
    """
    mp = model.max_packet
    rtt = sum(model.directions[d].worst_s(mp) for d in [*flow.path, *flow.ack_path])
    if flow.tcp.get("delayed_ack"):
        rtt += float(flow.tcp["delack_timeout"])
    return PROGRESS_ROUND_TRIPS * rtt


# ---------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------


def _diff(a: Any, b: Any, path: str = "") -> str | None:
    """The first key path where two summaries differ, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in ("wall_time_s", "hops_per_s") and not path:
                continue
            if k not in a or k not in b:
                return f"{path}.{k} (present in one run only)"
            d = _diff(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} (lengths {len(a)} and {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            d = _diff(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if a != b and not (isinstance(a, float) and isinstance(b, float) and a != a and b != b):
        return f"{path}: {a!r} vs {b!r}"
    return None


def _seq_tables(seq: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """First sending and first receipt of every (flow, seq), and the drops."""
    import polars as pl

    first = (
        seq.filter(pl.col("event") != "dropped")
        .group_by("flow", "seq", "event")
        .agg(pl.col("time_s").min())
    )
    sent = first.filter(pl.col("event") == "sent").drop("event").rename({"time_s": "sent"})
    recv = first.filter(pl.col("event") == "received").drop("event").rename({"time_s": "recv"})
    dropped = seq.filter(pl.col("event") == "dropped").select("flow", "seq", "time_s")
    return sent, recv, dropped


def check_causality(model: Model, seq: pl.DataFrame) -> list[str]:
    import polars as pl

    problems: list[str] = []
    sent, recv, _ = _seq_tables(seq)
    joined = recv.join(sent, on=["flow", "seq"], how="left")
    orphan = joined.filter(pl.col("sent").is_null())
    if orphan.height:
        r = orphan.sort("recv").row(0, named=True)
        problems.append(
            f"flow {r['flow']} received seq {r['seq']} at {r['recv']:.9f} s, never sent "
            f"({orphan.height} such segments)"
        )
    delays = (
        joined.filter(pl.col("sent").is_not_null())
        .with_columns((pl.col("recv") - pl.col("sent")).alias("delay"))
        .group_by("flow")
        .agg(pl.col("delay").min(), pl.col("seq").sort_by("delay").first().alias("at_seq"))
    )
    for row in delays.iter_rows(named=True):
        flow = model.flows[int(row["flow"])]
        bound = min_one_way(model, flow)
        if row["delay"] < bound - TIME_EPS:
            problems.append(
                f"flow {flow.index} ({flow.src}->{flow.dst}) seq {row['at_seq']} arrived "
                f"{row['delay']:.9f} s after its first sending, below the path's least one-way "
                f"time {bound:.9f} s ({' '.join(flow.path)})"
            )
    early = sent.group_by("flow").agg(pl.col("sent").min())
    for row in early.iter_rows(named=True):
        flow = model.flows[int(row["flow"])]
        if row["sent"] < flow.start_earliest - TIME_EPS:
            problems.append(
                f"flow {flow.index} sent data at {row['sent']:.9f} s, before its start "
                f"{flow.start_earliest:.9f} s"
            )
    return problems


def check_links(model: Model, summary: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Per link direction: what its transmitter started fits its capacity (plus the
    packet in transmission at the end: ``capacity``), and no more packets arrived at
    its far end than were sent, netem's duplicates included (``causality``)."""
    over: list[str] = []
    more: list[str] = []
    t = model.duration
    for link in summary.get("links", []):
        d = model.directions.get(link["name"])
        if d is None:
            continue
        sent = float(link["tx_bytes"]) + float(link["tx_packets"]) * d.overhead
        cap = d.cap_bytes(t, model.max_packet, netem=False) + model.max_packet + d.overhead
        if d.kind == "rlc":
            # An SDU counts as started with its first PDU; one the RLC discards
            # (`max_dat`) never sends the rest, so the next starts sooner (finding C2).
            cap += float(link.get("lost", 0)) * (model.max_packet + d.overhead)
        if sent > cap * (1 + 1e-9):
            over.append(
                f"{d.name}: its transmitter started {sent:.0f} bytes ({link['tx_packets']} "
                f"packets) in {t:g} s; the direction can carry at most {cap:.0f} "
                f"({d.kind}, {_describe_rate(d)})"
            )
        dup = int((link.get("netem") or {}).get("duplicated", 0))
        if int(link["rx_packets"]) > int(link["tx_packets"]) + dup:
            more.append(
                f"{d.name}: {link['rx_packets']} packets arrived at the far end, "
                f"{link['tx_packets']} were sent ({dup} duplicated by netem)"
            )
    return over, more


def check_capacity(
    model: Model, summary: dict[str, Any], extra: dict[str, float] | None = None
) -> list[str]:
    """``extra``: wire bytes carried by other traffic per direction (workload flows)."""
    problems: list[str] = []
    delivered = {int(f["id"]): float(f["delivered_bytes"]) for f in summary["flows"]}
    load: dict[str, float] = dict(extra or {})
    for flow in model.flows:
        got = delivered.get(flow.index, 0.0)
        if got <= 0:
            continue
        for name in flow.path:
            d = model.directions[name]
            per_segment = flow.mss + HEADER + d.overhead
            load[name] = load.get(name, 0.0) + got * per_segment / flow.mss
    t = model.duration
    for name, carried in load.items():
        d = model.directions[name]
        cap = d.cap_bytes(t, model.max_packet)
        if carried > cap * (1 + 1e-9):
            crossing = [f.index for f in model.flows if name in f.path]
            problems.append(
                f"{name}: the flows crossing it ({_short(crossing)}) delivered {carried:.0f} wire "
                f"bytes in {t:g} s; the direction can carry at most {cap:.0f} "
                f"({d.kind}, {_describe_rate(d)})"
            )
    return problems


def _workload_entries(model: Model) -> dict[str, dict[str, Any]]:
    """The ``[[workloads]]`` entries by the name the ``fct`` table gives them."""
    return {
        str(w.get("name", f"workloads[{i}]")): w
        for i, w in enumerate(model.scenario.get("workloads", []))
    }


def workload_load(model: Model, fct: pl.DataFrame | None) -> dict[str, float]:
    """Wire bytes the completed workload flows carried, per direction of their paths
    (a lower bound: full segments of the flow's MSS, 40 header bytes each)."""
    load: dict[str, float] = {}
    if fct is None or not fct.height:
        return load
    entries = _workload_entries(model)
    done = fct.filter(fct["fct_s"].is_not_nan() & fct["fct_s"].is_not_null())
    for row in done.iter_rows(named=True):
        mss = int(model.workload_tcp(entries[row["workload"]])["mss"])
        for name in model.route(str(row["from"]), str(row["to"])):
            per = (mss + HEADER + model.directions[name].overhead) / mss
            load[name] = load.get(name, 0.0) + float(row["size_bytes"]) * per
    return load


def check_workloads(
    model: Model, summary: dict[str, Any], fct: pl.DataFrame | None
) -> tuple[list[str], int]:
    """The ``workloads`` property (see the module's docstring); returns the problems
    and how many finished flows' FCTs it checked."""
    import polars as pl

    problems: list[str] = []
    checked = 0
    entries = _workload_entries(model)
    got = (summary.get("workloads") or {}).get("workloads", [])
    if not entries:
        return problems, checked
    if len(got) != len(entries):
        return [f"{len(entries)} [[workloads]] entries, {len(got)} in the summary"], checked
    if fct is None:
        fct = pl.DataFrame(
            schema={"workload": pl.String, "fct_s": pl.Float64, "size_bytes": pl.UInt64}
        )
    for w in got:
        name = str(w["name"])
        rows = fct.filter(pl.col("workload") == name)
        done = rows.filter(pl.col("fct_s").is_not_null() & pl.col("fct_s").is_not_nan())
        arrivals, completed = int(w["arrivals"]), int(w["completed"])
        if not (rows.height == arrivals == completed + int(w["unfinished"])):
            problems.append(
                f"workload {name}: {rows.height} fct rows, {arrivals} arrivals, "
                f"{completed} completed + {w['unfinished']} unfinished"
            )
        if done.height != completed:
            problems.append(
                f"workload {name}: {done.height} rows with an FCT, {completed} completed"
            )
        if rows.height and int(rows["size_bytes"].sum()) != int(w["offered_bytes"]):
            problems.append(
                f"workload {name}: sizes sum to {int(rows['size_bytes'].sum())}, "
                f"offered_bytes {w['offered_bytes']}"
            )
        entry = entries[name]
        tcp = model.workload_tcp(entry)
        # On a persistent connection only the first flow pays a handshake: none assumed.
        handshake = tcp["handshake"] and entry.get("connection") != "persistent"
        for row in done.iter_rows(named=True):
            src, dst = str(row["from"]), str(row["to"])
            path, back = model.route(src, dst), model.route(dst, src)
            # one_way_lb carries a packet with one payload byte: the rest of the size on top.
            rest = max(float(row["size_bytes"]) - 1.0, 0.0)
            lb = model.one_way_lb(path) + model.transfer_lb(path, rest)
            checked += 1
            if handshake:
                lb += model.one_way_lb(path) + model.one_way_lb(back)
            if row["fct_s"] < lb - TIME_EPS:
                problems.append(
                    f"workload {name} flow {row['flow']} ({src}->{dst}, {row['size_bytes']} B) "
                    f"finished in {row['fct_s']:.9f} s, below the least possible {lb:.9f} s"
                )
                break
            sd = row.get("slowdown")
            if sd is not None and sd == sd and not sd > 0:
                problems.append(f"workload {name} flow {row['flow']}: slowdown {sd}")
                break
    return problems, checked


def check_media(
    model: Model, summary: dict[str, Any], packets: pl.DataFrame | None = None
) -> list[str]:
    """The ``media`` property (see the module's docstring); ``packets``: the
    ``media_packets`` trace, whose rows per stream must be its account's counts."""
    problems: list[str] = []
    rows: dict[tuple[int, str], int] = {}
    if packets is not None:
        for stream, event, n in packets.group_by("stream", "event").len().iter_rows():
            rows[(int(stream), str(event))] = int(n)
    for m in summary.get("media") or []:
        who = f"media {m['name']}"
        acc = m.get("account") or {}
        dropped = sum(int(d["packets"]) for d in acc.get("dropped", []))
        sent, copies = int(acc.get("sent", 0)), int(acc.get("copies", 0))
        delivered, flight = int(acc.get("delivered", 0)), int(acc.get("in_flight", 0))
        if packets is not None:
            got = tuple(rows.get((int(m["id"]), e), 0) for e in ("sent", "received", "dropped"))
            if got != (sent, delivered, dropped):
                problems.append(
                    f"{who}: media_packets rows sent/received/dropped {got}, the account's "
                    f"{(sent, delivered, dropped)}"
                )
        if sent + copies != delivered + dropped + flight:
            problems.append(
                f"{who}: account sent {sent} + copies {copies} != delivered {delivered} + "
                f"dropped {dropped} + in flight {flight}"
            )
        rx, lost, late = int(m["received"]), int(m["lost"]), int(m["late"])
        bad, dup = int(m["corrupted"]), int(m["duplicates"])
        # The stream's in flight counts distinct packets not received (an original and
        # its netem copy once, a copy of a packet received not at all); the account's,
        # packet instances: equal without copies, never more (docs/checking.md, M1).
        sink_flight = int(m["in_flight"])
        if (
            int(m["sent"]) != sent
            or sink_flight > flight
            or (copies == 0 and sink_flight != flight)
        ):
            problems.append(
                f"{who}: the sink's sent {m['sent']} / in flight {m['in_flight']}, the "
                f"account's {sent} / {flight} (copies {copies})"
            )
        if rx + bad + dup != delivered:
            problems.append(
                f"{who}: received {rx} + corrupted {bad} + duplicates {dup} != "
                f"delivered {delivered}"
            )
        if rx + lost + sink_flight != sent:
            problems.append(
                f"{who}: received {rx} + lost {lost} + in flight {sink_flight} != sent {sent}"
            )
        if copies == 0 and lost != dropped + bad:
            problems.append(f"{who}: lost {lost} != dropped {dropped} + corrupted {bad}")
        if late > rx:
            problems.append(f"{who}: {late} late of {rx} received")
        video = m.get("video") or {}
        if video and not (
            int(video["frames_played"]) <= int(video["frames_complete"]) <= int(video["frames"])
        ):
            problems.append(f"{who}: frames {video}")
        path = model.route(str(m["from"]), str(m["to"]))
        lb = sum(
            model.directions[d].prop_lb + model.directions[d].ser_lb(HEADER - 12) for d in path
        )
        for key in ("delay_p50_s", "delay_mean_s"):
            v = m.get(key)
            # The p50 comes from a histogram of 0.4 % resolution, rounding down.
            if v is not None and v < lb * (1 - 0.005) - TIME_EPS:
                problems.append(f"{who}: {key} {v:.9f} s below the path's least {lb:.9f} s")
        entry = _media_entry(model, str(m["name"]))
        if entry is not None and entry.get("kind") == "cbr" and "interval" in entry:
            start = seconds(entry.get("start", "0s"))
            stop = min(model.duration, seconds(entry.get("stop", f"{model.duration}s")))
            most = math.floor((stop - start) / seconds(entry["interval"]) + 1e-9) + 1
            if sent > most:
                problems.append(f"{who}: {sent} packets sent, its schedule allows {most}")
    return problems


def _media_entry(model: Model, name: str) -> dict[str, Any] | None:
    for m in model.scenario.get("media", []):
        if m.get("name", f"{m['kind']}:{m['from']}->{m['to']}") == name:
            return m
    return None


def _short(items: list[int]) -> str:
    text = ", ".join(str(i) for i in items[:8])
    return text + (f", … ({len(items)} flows)" if len(items) > 8 else "")


def _describe_rate(d: Any) -> str:
    if d.kind == "trace":
        return f"trace of {len(d.trace)} opportunities per {d.trace[-1]} ms x {d.opportunity} B"
    if d.allocated:
        return f"allocated up to {d.allocated[1]:g} bit/s"
    if d.steps:
        return "schedule " + ", ".join(f"{r:g} bit/s at {a:g} s" for a, r in d.steps)
    if d.kind == "radio":
        return f"{d.frame_bits:g} bit/s at 256-QAM"
    return f"{d.rate:g} bit/s"


def _losses(summary: dict[str, Any], names: list[str]) -> int:
    """Packets dropped or lost on the named directions, by any counted cause."""
    want = set(names)
    total = 0
    for q in summary.get("queues", []):
        if q["link"] in want:
            total += sum(int(v) for v in q["drops"].values())
    for link in summary.get("links", []):
        if link["name"] in want:
            total += int(link.get("lost", 0))
            n = link.get("netem") or {}
            total += sum(int(n.get(k, 0)) for k in ("lost", "overflow", "corrupted"))
            fec = link.get("fec") or {}
            total += int(fec.get("lost_after_persistence", 0))
    return total


def check_progress(
    model: Model, summary: dict[str, Any], seq: pl.DataFrame
) -> tuple[list[str], int]:
    """The progress property; returns the problems and how many flows it checked."""
    import polars as pl

    problems: list[str] = []
    checked = 0
    t_end = model.duration
    sent, recv, dropped = _seq_tables(seq)
    for flow in model.flows:
        if not flow.bulk:
            continue
        dirs = [model.directions[d] for d in [*flow.path, *flow.ack_path]]
        if not all(d.lossless for d in dirs):
            continue
        window = progress_window(model, flow)
        start = flow.start_latest
        if not math.isfinite(window) or start + window >= t_end:
            continue
        if _losses(summary, flow.ack_path):
            continue  # an ACK or SYN-ACK lost by a counted cause: excused throughout
        checked += 1
        mine = recv.filter(pl.col("flow") == flow.index).sort("recv")
        firsts = dict(zip(mine["seq"].to_list(), mine["recv"].to_list(), strict=True))
        times = [start, *mine["recv"].to_list(), t_end]
        drops = dropped.filter(pl.col("flow") == flow.index)
        drop_rows = list(zip(drops["seq"].to_list(), drops["time_s"].to_list(), strict=True))
        data_losses = _losses(summary, flow.path)
        for i in range(len(times) - 1):
            a, b = times[i], times[i + 1]
            if b - a <= window or a >= t_end:
                continue
            if i == 0 and data_losses:
                continue  # the SYN may have been dropped (not a data segment)
            excused = any(
                t <= b + TIME_EPS and (s not in firsts or firsts[s] >= a - TIME_EPS)
                for s, t in drop_rows
            )
            if not excused:
                what = "start" if i == 0 else "the previous new segment"
                problems.append(
                    f"flow {flow.index} ({flow.src}->{flow.dst}) delivered nothing new from "
                    f"{a:.6f} s ({what}) to {b:.6f} s: {b - a:.6f} s > W = {window:.6f} s, "
                    f"with none of its segments dropped and not yet delivered and nothing "
                    f"lost on its ACK path"
                )
                break
    return problems, checked


def _injected(draw: Draw) -> str | None:
    how = os.environ.get(INJECT_ENV, "")
    if how == "always":
        return "injected failure (LINKLAB_CHECK_INJECT=always)"
    if how == "two-links" and len(draw.scenario.get("links", [])) >= 2:
        return "injected failure: two or more [[links]] (LINKLAB_CHECK_INJECT=two-links)"
    return None


def _exception_property(exc: BaseException) -> str:
    return "accounting" if type(exc).__name__ == "AccountingError" else "exception"


def write_files(files: dict[str, str], directory: Path) -> None:
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def check_draw(draw: Draw) -> Outcome:
    """Run ``draw`` and check every property (the ``hang`` one is the pool's)."""
    from linklab._tables import trace_frame as _frame
    from linklab.api import run_source
    from linklab.errors import ScenarioError

    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="linklab-check-") as tmp:
        write_files(draw.files, Path(tmp))
        try:
            traced = run_source(draw.scenario, seed=draw.seed, trace=True, base_dir=tmp)
        except ScenarioError as e:
            message = f"{getattr(e, 'path', '')}: {getattr(e, 'message', str(e))}"
            return Outcome("refused", refusal=message, wall_s=time.monotonic() - t0)
        except Exception as e:  # noqa: BLE001 - any other exception is the finding
            return Outcome(
                "failed",
                [(_exception_property(e), f"{type(e).__name__}: {e}")],
                wall_s=time.monotonic() - t0,
            )
        out = Outcome("ok", events=int(traced.summary["events"]))
        try:
            bare, _, _ = _core.run(draw.scenario, seed=draw.seed, base_dir=tmp)
            where = _diff(traced.summary, bare)
            if where:
                out.failures.append(
                    ("determinism", f"a traced and a bare run of the same seed differ at {where}")
                )
            if out.events > SLICE_EVENTS:
                out.sliced = True
                _, whole, _ = _core.run(draw.scenario, seed=draw.seed, trace=True, base_dir=tmp)
                for name, columns in whole.items():
                    piece = traced.traces.get(name)
                    if piece is None or not piece.equals(_frame(columns)):
                        out.failures.append(
                            (
                                "determinism",
                                f"trace {name!r} streamed in slices differs from the whole run's",
                            )
                        )
                        break
        except Exception as e:  # noqa: BLE001
            out.failures.append((_exception_property(e), f"second run: {type(e).__name__}: {e}"))
    model = Model(draw.scenario, draw.files)
    if len(model.flows) != len(traced.summary["flows"]):
        raise RuntimeError(
            f"check: the scenario reads as {len(model.flows)} flows, the run has "
            f"{len(traced.summary['flows'])}"
        )
    for flow, got in zip(model.flows, traced.summary["flows"], strict=True):
        if (flow.src, flow.dst) != (got["from"], got["to"]):
            raise RuntimeError(
                f"check: flow {flow.index} reads as {flow.src}->{flow.dst}, "
                f"the run has {got['from']}->{got['to']}"
            )
    seq = traced.traces.get("seq")
    if seq is None:
        import polars as pl

        seq = pl.DataFrame(
            schema={"flow": pl.UInt64, "time_s": pl.Float64, "event": pl.String, "seq": pl.UInt64}
        )
    for problem in check_causality(model, seq):
        out.failures.append(("causality", problem))
    fct = traced.traces.get("fct")
    for problem in check_capacity(model, traced.summary, workload_load(model, fct)):
        out.failures.append(("capacity", problem))
    problems, out.workload_flows = check_workloads(model, traced.summary, fct)
    out.failures.extend(("workloads", problem) for problem in problems)
    out.media_streams = len(traced.summary.get("media") or [])
    for problem in check_media(model, traced.summary, traced.traces.get("media_packets")):
        out.failures.append(("media", problem))
    over, more = check_links(model, traced.summary)
    out.failures.extend(("capacity", problem) for problem in over)
    out.failures.extend(("causality", problem) for problem in more)
    problems, out.progress_flows = check_progress(model, traced.summary, seq)
    for problem in problems:
        out.failures.append(("progress", problem))
    out.event_bound = event_bound(model, traced.summary)
    if out.events > out.event_bound:
        out.failures.append(
            ("events", f"{out.events} events, above the bound {out.event_bound:.0f}")
        )
    injected = _injected(draw)
    if injected:
        out.failures.append(("injected", injected))
    if out.failures:
        out.status = "failed"
    out.wall_s = time.monotonic() - t0
    return out
