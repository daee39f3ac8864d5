"""Checks of linklab's models over random scenarios (``python -m linklab.check``).

:func:`check_random` draws random valid scenarios over the whole model space
(:mod:`linklab.check._generate`), runs each in a worker process under a timeout
and checks properties every run must have (:mod:`linklab.check._properties`):
a clean run or a clean refusal, causality, capacity, progress, determinism, a
bounded number of events, no hang. Each failure is shrunk by hypothesis to a
minimal scenario and written out as a TOML file that ``linklab run FILE --seed N``
runs and ``python -m linklab.check --replay FILE`` checks again. See
``docs/checking.md``.

Draw ``i`` of a batch with seed ``S`` is the hypothesis test case read from the
bytes ``random.Random(f"{S}:{i}").randbytes(16384)`` (through the public
``fuzz_one_input``), so a batch is the same for a given seed on any machine and
at any ``--jobs``; a failing draw's bytes are what hypothesis starts shrinking
from.
"""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from linklab.check._generate import KNOWN_BUGS, Draw, draws
from linklab.check._pool import Pool
from linklab.check._properties import PROPERTIES, Outcome, refusal_reason

__all__ = [
    "KNOWN_BUGS",
    "PROPERTIES",
    "Draw",
    "Failure",
    "Outcome",
    "Report",
    "check_random",
    "draw_at",
    "load_failure",
    "write_failure",
]

#: Bytes behind each draw (a draw reads a few hundred).
DRAW_BYTES = 16384

#: With ``only``, a batch of N draws looks at no more than this many times N
#: draws (the rarest coverage names, e.g. one frame modulation, are in about 1
#: draw of 300).
ONLY_SEARCH = 1000


@dataclass
class Failure:
    """One draw that failed a property, and its shrunk form."""

    index: int
    prop: str
    message: str
    draw: Draw
    shrunk: bool = False
    file: Path | None = None


@dataclass
class Report:
    """What a batch found."""

    draws: int = 0
    seed: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    by_property: Counter[str] = field(default_factory=Counter)
    labels: Counter[str] = field(default_factory=Counter)
    features: Counter[str] = field(default_factory=Counter)
    progress_flows: int = 0
    sliced: int = 0
    workload_flows: int = 0
    media_streams: int = 0
    events: int = 0
    max_event_ratio: float = 0.0
    wall_s: float = 0.0
    run_s: float = 0.0
    slowest: list[tuple[float, int]] = field(default_factory=list)
    #: The coverage names every checked draw has (``check_random``'s ``only``).
    only: tuple[str, ...] = ()
    #: With ``only``: the draws of the batch passed over (they lack a name).
    skipped: int = 0
    #: With ``only``: the last draw index looked at (``first`` … ``last``).
    last_index: int = -1

    @property
    def failed(self) -> bool:
        return bool(self.failures)


# ---------------------------------------------------------------------------
# Draws
# ---------------------------------------------------------------------------


def _capture_test(avoid: frozenset[str] = frozenset()) -> Any:
    """A hypothesis test that only records the draw it is given."""
    from hypothesis import HealthCheck, given, settings

    box: list[Draw] = []

    @settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(draws(avoid=avoid))
    def capture(d: Draw) -> None:
        box.append(d)

    return capture, box


def draw_bytes(seed: int, index: int) -> bytes:
    """The bytes behind draw ``index`` of a batch with ``seed``."""
    return random.Random(f"{seed}:{index}").randbytes(DRAW_BYTES)


def draw_at(seed: int, index: int, avoid: frozenset[str] = frozenset()) -> Draw:
    """Draw ``index`` of a batch with ``seed``."""
    capture, box = _capture_test(avoid)
    capture.hypothesis.fuzz_one_input(draw_bytes(seed, index))
    if not box:
        raise RuntimeError(f"draw {index} of seed {seed} did not produce a scenario")
    return box[-1]


def features(draw: Draw) -> set[str]:
    """The model families and options a draw uses (the coverage table)."""
    sc = draw.scenario
    found: set[str] = {f"topology:{draw.label}"}

    def tcp(table: dict[str, Any]) -> None:
        cc = table.get("cc")
        if cc is not None:
            found.add(f"cc:{cc if isinstance(cc, str) else cc['kind']}")
            if isinstance(cc, dict):
                for key, value in cc.items():
                    if key != "kind" and isinstance(value, str) and not value[0].isdigit():
                        found.add(f"cc:{cc['kind']}:{key}={value}")
        for key in (
            "variant",
            "profile",
            "sack_rules",
            "window_cuts",
            "idle_restart",
            "rate_sample",
            "prr_variant",
        ):
            if key in table:
                found.add(f"tcp:{key}={table[key]}")
        for key in (
            "ecn",
            "rack",
            "prr",
            "pacing",
            "delayed_ack",
            "timestamps",
            "tcp_l",
            "rto_keeps_sack",
            "reno_rto_guard",
            "ecn_cut_covers_loss",
            "rto_tick",
            "lt",
            "cwr_per_echo",
            "quick_ack_first",
            "rto_resend_lost",
            "sacked_rtx_in_pipe",
            "partial_ack_resend",
            "ts_rtt_ms",
            "send_buffer",
        ):
            if table.get(key):
                found.add(f"tcp:{key}")
        if table.get("handshake") is False:
            found.add("tcp:no-handshake")
        for key, on in (table.get("lt") or {}).items():
            if on is True:
                found.add(f"lt:{key}")

    def queue(q: Any) -> None:
        if isinstance(q, dict):
            found.add(f"queue:{q.get('kind', 'droptail')}")
            if "variant" in q:
                found.add(f"queue:{q.get('kind')}:variant={q['variant']}")
            if q.get("ns2") and q.get("count_reset") == "ns3":
                found.add("queue:red:count_reset=ns3")
            limit = str(q.get("limit", ""))
            found.add(
                "limit:"
                + (
                    "default"
                    if not limit
                    else "inf"
                    if limit == "inf"
                    else "packets"
                    if limit.endswith("p")
                    else "bytes"
                )
            )

    def direction(d: dict[str, Any]) -> None:
        for key in ("rate", "rate_schedule", "trace"):
            if key in d:
                found.add(f"rate:{key}")
        if d.get("loss"):
            found.add("loss:random")
        if "channel" in d:
            found.add(f"channel:{d['channel'].get('kind', 'fading')}")
        if "netem" in d:
            found.add("netem")
            for key in ("jitter", "reorder", "duplicate", "corrupt", "rate", "loss"):
                if key in d["netem"]:
                    found.add(f"netem:{key}")
        if "fec" in d:
            found.add(f"fec:{d['fec']['scheme']}")
        if "overhead" in d:
            found.add("overhead")
        queue(d.get("queue"))

    tcp(sc.get("tcp") or {})
    for link in sc.get("links", []):
        kind = link.get("kind", "wired")
        found.add(f"link:{kind}")
        direction(link)
        for side in ("ab", "ba"):
            if side in link:
                direction(link[side])
        if kind == "rlc_am":
            if link.get("max_dat") == "adaptive":
                found.add("rlc:adaptive")
            if link.get("feedback") == "ideal":
                found.add("rlc:ideal")
        if kind == "frame_arq":
            found.add(f"frame:{link.get('modulation', 'adaptive')}")
            if "uplink" in link:
                queue(link["uplink"].get("queue"))
    flows = sc.get("flows", [])
    for f in flows:
        for key in ("count", "start", "start_jitter", "bytes", "stop", "name"):
            if key in f:
                found.add(f"flow:{key}")
        if "tcp" in f:
            found.add("flow:tcp")
            tcp(f["tcp"])
    for alloc in sc.get("allocations", []):
        found.add(f"allocation:{alloc['pattern']}")
        for key in ("admission", "ack_regulation"):
            if key in alloc:
                found.add(f"allocation:{key}")
    if "monitor" in sc:
        found.add("monitor")
    for w in sc.get("workloads", []):
        found.add(f"workload:{w['arrivals']['kind']}")
        for key in ("size", "response"):
            size = w.get(key)
            if size is not None:
                found.add(f"size:{size if isinstance(size, str) else size['kind']}")
        if w.get("connection") == "persistent":
            found.add("workload:persistent")
        if "rate_cap" in w or "on" in w:
            found.add("workload:paced")
    for m in sc.get("media", []):
        found.add(f"media:{m['kind']}")
        if m.get("direction") == "two-way":
            found.add("media:two-way")
    return found


# ---------------------------------------------------------------------------
# Shrinking
# ---------------------------------------------------------------------------


class _Target(Exception):
    """The property being shrunk failed."""


def shrink(
    buffer: bytes, prop: str, pool: Pool, budget_s: float, avoid: frozenset[str] = frozenset()
) -> tuple[Draw, Outcome] | None:
    """The smallest draw hypothesis finds, from ``buffer``'s, that fails ``prop``.

    The failing bytes go through the public ``fuzz_one_input`` (which stores the
    failing test case in an in-memory example database); running the test then
    replays it and shrinks it (phases reuse and shrink). Every candidate runs in
    the pool. After ``budget_s`` seconds only the best draw so far still counts as
    failing, so hypothesis ends with it. None if the failure did not recur.
    """
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis.database import InMemoryExampleDatabase

    found: list[tuple[Draw, Outcome]] = []
    deadline = time.monotonic() + budget_s

    @settings(
        database=InMemoryExampleDatabase(),
        phases=[Phase.reuse, Phase.shrink],
        deadline=None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
        max_examples=100,
    )
    @given(draws(avoid=avoid))
    def target(d: Draw) -> None:
        if found and time.monotonic() > deadline:
            best = found[-1][0]
            if (d.scenario, d.seed, d.files) == (best.scenario, best.seed, best.files):
                raise _Target(prop)
            return
        outcome = pool.check(d)
        if outcome.failed(prop):
            found.append((d, outcome))
            raise _Target(prop)

    try:
        target.hypothesis.fuzz_one_input(buffer)
    except _Target:
        pass
    if not found:
        return None
    try:
        target()
    except Exception:  # noqa: BLE001 - _Target (expected), or hypothesis's Flaky
        pass
    return found[-1]


# ---------------------------------------------------------------------------
# Failure files
# ---------------------------------------------------------------------------

_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def write_failure(failure: Failure, directory: Path) -> Path:
    """Write ``failure`` as ``DIR/<property>-<draw>.toml`` (and its trace files)."""
    import tomli_w

    from linklab._files import Staging

    directory.mkdir(parents=True, exist_ok=True)
    stem = _SAFE.sub("_", f"{failure.prop}-{failure.index:06d}")
    scenario = dict(failure.draw.scenario)
    scenario["seed"] = failure.draw.seed
    renames: dict[str, str] = {}
    for name in failure.draw.files:
        renames[name] = f"{stem}.traces/{Path(name).name}"
    scenario = _rename_traces(scenario, renames)
    message = " ".join(failure.message.split())
    header = [
        f"# linklab.check: draw {failure.index} fails the property `{failure.prop}`"
        + (" (shrunk by hypothesis)" if failure.shrunk else " (as drawn, not shrunk)"),
        *_wrap(f"# {message}"),
        f"# Reproduce: python3 -m linklab run {stem}.toml --seed {failure.draw.seed}",
        f"# Check again: python3 -m linklab.check --replay {stem}.toml",
        "",
    ]
    text = "\n".join(header) + tomli_w.dumps(scenario)
    path = directory / f"{stem}.toml"
    with Staging() as staged:
        for name, new in renames.items():
            (directory / new).parent.mkdir(parents=True, exist_ok=True)
            staged.add_bytes(directory / new, failure.draw.files[name].encode())
        staged.add_bytes(path, text.encode())
        staged.commit()
    return path


def _wrap(text: str, width: int = 98) -> list[str]:
    lines: list[str] = []
    while len(text) > width:
        cut = text.rfind(" ", 0, width)
        cut = cut if cut > 2 else width
        lines.append(text[:cut])
        text = "#   " + text[cut:].lstrip()
    lines.append(text)
    return lines


def _rename_traces(value: Any, renames: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {
            k: (
                renames.get(v, v)
                if k in ("trace", "file") and isinstance(v, str)
                else _rename_traces(v, renames)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_rename_traces(v, renames) for v in value]
    return value


def load_failure(path: Path, seed: int | None = None) -> Draw:
    """A scenario file (a written failure, or any in the generator's shapes) as a Draw."""
    import tomllib

    from linklab.check._model import load_files

    scenario = tomllib.loads(path.read_text())
    if "params" in scenario:
        raise ValueError(f"{path}: [params] is not supported by --replay")
    run_seed = seed if seed is not None else int(scenario.pop("seed", 1))
    scenario.pop("seed", None)
    return Draw(scenario=scenario, seed=run_seed, files=load_files(path, scenario), label=path.stem)


# ---------------------------------------------------------------------------
# The batch
# ---------------------------------------------------------------------------


def check_random(
    draws_n: int,
    *,
    seed: int = 1,
    out: Path | None = None,
    jobs: int = 2,
    timeout: float = 60.0,
    shrink_per_property: int = 3,
    shrink_budget_s: float = 120.0,
    first: int = 0,
    avoid: frozenset[str] = frozenset(),
    only: frozenset[str] = frozenset(),
    progress: Callable[[str], None] | None = None,
) -> Report:
    """Check ``draws_n`` draws (``first`` … ``first + draws_n - 1``) of batch ``seed``.

    ``only``: coverage names (``features``, e.g. ``"topology:frame"``,
    ``"queue:pie"``); then the batch checks the first ``draws_n`` draws from
    ``first`` on that have every one of them, passing over the others (at most
    ``ONLY_SEARCH`` times ``draws_n`` draws are looked at; ``Report.skipped``,
    ``Report.last_index``).

    ``jobs`` worker processes, ``timeout`` seconds per draw. The first
    ``shrink_per_property`` failures of each property are shrunk (at most
    ``shrink_budget_s`` seconds each); every failure is written into ``out``.
    ``avoid``: names of known core bugs (``KNOWN_BUGS``) whose combinations are
    not drawn. ``progress`` receives a line now and then.
    """
    report = Report(draws=draws_n, seed=seed, only=tuple(sorted(only)))
    t0 = time.monotonic()
    capture, box = _capture_test(avoid)
    drawn: dict[int, Draw] = {}

    def tasks() -> Any:
        taken = 0
        stop = first + draws_n * (ONLY_SEARCH if only else 1)
        for i in range(first, stop):
            if taken == draws_n:
                break
            report.last_index = i
            box.clear()
            capture.hypothesis.fuzz_one_input(draw_bytes(seed, i))
            if not box:
                report.outcomes["unusable"] += 1
                continue
            d = box[-1]
            if only and not only <= features(d):
                report.skipped += 1
                continue
            taken += 1
            drawn[i] = d
            report.labels[d.label] += 1
            for f in features(d):
                report.features[f] += 1
            yield i, d

    results: dict[int, Outcome] = {}
    done = [0]
    last = [time.monotonic()]

    def collect(index: int, outcome: Outcome) -> None:
        results[index] = outcome
        done[0] += 1
        if progress and time.monotonic() - last[0] > 10:
            last[0] = time.monotonic()
            bad = sum(1 for o in results.values() if o.status == "failed")
            progress(
                f"{done[0]}/{draws_n} draws checked, {bad} failed ({time.monotonic() - t0:.0f} s)"
            )

    with Pool(jobs, timeout) as pool:
        pool.map(tasks(), collect)
        if only:
            report.draws = len(drawn)
        report.run_s = time.monotonic() - t0
        for index in sorted(results):
            outcome = results[index]
            report.outcomes[outcome.status] += 1
            report.events += outcome.events
            report.progress_flows += outcome.progress_flows
            report.sliced += int(outcome.sliced)
            report.workload_flows += outcome.workload_flows
            report.media_streams += outcome.media_streams
            if outcome.event_bound:
                report.max_event_ratio = max(
                    report.max_event_ratio, outcome.events / outcome.event_bound
                )
            report.slowest.append((outcome.wall_s, index))
            if outcome.status == "refused":
                report.refusals[refusal_reason(outcome.refusal)] += 1
            seen: set[str] = set()
            for prop, message in outcome.failures:
                if prop in seen:
                    continue
                seen.add(prop)
                report.by_property[prop] += 1
                report.failures.append(Failure(index, prop, message, drawn[index]))
        report.slowest = sorted(report.slowest, reverse=True)[:5]
        shrunk_count: Counter[str] = Counter()
        for failure in report.failures:
            if shrunk_count[failure.prop] < shrink_per_property and failure.prop != "checker":
                shrunk_count[failure.prop] += 1
                if progress:
                    progress(f"shrinking draw {failure.index} ({failure.prop}) …")
                best = shrink(
                    draw_bytes(seed, failure.index), failure.prop, pool, shrink_budget_s, avoid
                )
                if best is not None:
                    failure.draw = best[0]
                    failure.message = next(m for p, m in best[1].failures if p == failure.prop)
                    failure.shrunk = True
            if out is not None:
                failure.file = write_failure(failure, out)
    report.wall_s = time.monotonic() - t0
    return report


def replay(path: Path, seed: int | None, timeout: float) -> tuple[Draw, Outcome]:
    """Check one scenario file again (in a worker, under the timeout)."""
    d = load_failure(path, seed)
    with Pool(1, timeout) as pool:
        return d, pool.check(d)


def render(report: Report) -> str:
    """The batch's summary, as printed by ``python -m linklab.check``."""
    lines = [
        f"linklab.check: {report.draws} draws of seed {report.seed} in {report.wall_s:.1f} s "
        f"(runs {report.run_s:.1f} s)",
        "  outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(report.outcomes.items())),
        f"  events: {report.events:,} in all, at most {report.max_event_ratio:.3f} of the "
        "bound; progress checked on "
        f"{report.progress_flows} flows; {report.sliced} runs long enough to compare slices",
        f"  workloads: {report.workload_flows} finished flows' FCTs checked; media: "
        f"{report.media_streams} streams' accounts checked",
        "  draws by topology: " + ", ".join(f"{k} {v}" for k, v in sorted(report.labels.items())),
    ]
    if report.only:
        lines.insert(
            1,
            f"  only draws with {' and '.join(report.only)}: {report.draws} checked, "
            f"{report.skipped} passed over (draws up to {report.last_index})",
        )
    if report.refusals:
        lines.append(f"  refusals by reason ({sum(report.refusals.values())}):")
        for reason, n in report.refusals.most_common():
            lines.append(f"    {n:5d}  {reason}")
    else:
        lines.append("  refusals: none")
    if report.failures:
        lines.append(
            "  failures by property: "
            + ", ".join(
                f"{p} {report.by_property[p]}"
                for p in (*PROPERTIES, "checker")
                if report.by_property[p]
            )
        )
        for f in report.failures:
            where = f" -> {f.file}" if f.file else ""
            state = "shrunk" if f.shrunk else "as drawn"
            lines.append(f"    draw {f.index} {f.prop} ({state}){where}")
            lines.append(f"      {' '.join(f.message.split())[:300]}")
    else:
        lines.append("  failures: none")
    return "\n".join(lines)


def coverage(report: Report) -> str:
    """The model families the batch's draws used, and how often."""
    items = sorted(report.features.items())
    return "  coverage: " + ", ".join(f"{k} {v}" for k, v in items)
