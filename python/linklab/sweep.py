"""Parameter sweeps: a grid of scenario parameters × replications, stored and summarised.

:func:`sweep` runs every grid point ``reps`` times. Replication ``r`` of every
point uses seed ``base_seed + r`` (common random numbers across points), so a
point's runs are independent of each other while points differ only in their
parameters. Each run is keyed by the sha256 of a canonical JSON of (scenario
text, swept parameter values, seed, linklab version) and stored as soon as it
finishes (see :mod:`linklab.store`): running the same sweep again does only what
is missing, and a larger grid or more replications reuse what matches.

The tables (``runs.parquet``, ``summary.parquet``), ``scenario.toml`` and
``meta.json`` are rebuilt from the store at the end of every sweep, each file
written atomically. See ``docs/sweeps.md``.

numpy, polars and scipy are imported only when a sweep builds its tables.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import re
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linklab import _checks, _core
from linklab._format import fmt_param, text_table
from linklab._inputs import MAX_SEED, SEED_RANGE, check_seed, typed_like
from linklab._scenario import load_source, params_table, scenario_name, source_file, to_toml
from linklab.backends import BackendError, Task, make_backend
from linklab.errors import (
    ScenarioError,
    ScenarioFileError,
    did_you_mean,
    error_text,
    short_repr,
)
from linklab.store import MemoryStore, Store, StoreError

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "MAX_RUNS",
    "METRICS",
    "Progress",
    "SweepError",
    "SweepInterrupted",
    "SweepResult",
    "build_grid",
    "flatten_summary",
    "parse_param_spec",
    "parse_value",
    "run_key",
    "summarize",
    "sweep",
]

#: The most runs (grid points × replications) one sweep may have.
MAX_RUNS = 100_000

#: The run-level metrics, in table order (per-object metrics follow them).
METRICS: tuple[str, ...] = (
    "goodput_bps",
    "delay_mean_s",
    "delay_p50_s",
    "delay_p95_s",
    "delay_max_s",
    "timeouts",
    "timeout_episodes",
    "fast_retransmits",
    "retransmits",
    "delivered_bytes",
    "throughput_bps",
    "events",
    "sim_time_s",
    "wall_time_s",
    "rwnd_limited_fraction",
)
_AGGREGATE = METRICS[:11]
_TOP = METRICS[11:14]
_FLOW = ("goodput_bps", "delay_mean_s", "timeouts", "retransmits")
_QUEUE = ("ecn_marks", "drops_overflow", "drops_aqm_early", "drops_aqm_forced", "mean_packets")
_LINK = ("throughput_bps",)
#: Per media stream (``[[media]]``): ``media[NAME].M``, and ``r``/``mos`` for voice.
_MEDIA = ("delay_mean_s", "delay_p99_s", "jitter_s", "loss_pct", "late_pct")


class SweepError(ValueError):
    """Bad sweep input: unknown parameter, malformed value list, bad settings."""


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep: ``finished`` runs of ``total`` are kept in the store."""

    def __init__(self, finished: int, total: int, store: Path | None) -> None:
        super().__init__(f"{finished} of {total} runs finished")
        self.finished = finished
        self.total = total
        self.store = store


@dataclass(frozen=True)
class SweepResult:
    """What a sweep produced.

    ``runs``: one row per run (point, rep, seed, parameters, key, status, error,
    metrics); ``summary``: one row per grid point (parameters, n, failed, and
    ``M_mean``/``M_std``/``M_ci`` per metric); ``meta``: the settings written to
    ``meta.json``; ``out``: the output directory (None for an in-memory sweep);
    ``executed``/``reused``: runs computed now / taken from the store;
    ``failed``: runs that failed. ``flows``, ``queues``, ``links``: the same runs
    tidy, one row per run and flow (queue, link direction) with its parameters
    and that object's metrics (``runs`` has them as ``flow[NAME].M`` columns).
    """

    runs: pl.DataFrame
    summary: pl.DataFrame
    meta: dict[str, Any]
    out: Path | None = None
    executed: int = 0
    reused: int = 0
    failed: int = 0
    files: list[Path] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        """What the tables alone would hide, one line each (``linklab sweep``
        prints them on stderr): the runs in which the receive window, not the
        congestion control, limited every flow for most of the time it had data
        to send (``rwnd_limited_fraction`` above ``RWND_LIMITED``;
        ``docs/metrics.md``, "Warnings")."""
        line = _rwnd_sweep_warning(self.runs, [str(p) for p in self.meta.get("params") or {}])
        return [] if line is None else [line]

    @property
    def flows(self) -> pl.DataFrame:
        """One row per run and flow: ``point``, ``rep``, ``seed``, the parameters,
        ``status``, ``flow`` (its name), then the flow's metrics (``goodput_bps``,
        ``delay_mean_s``, ``timeouts``, ``retransmits``: the ``flow[NAME].*`` columns
        of ``runs``, as kept by ``metrics=``)."""
        return _long(self.runs, "flow", self._param_names())

    @property
    def media(self) -> pl.DataFrame:
        """One row per run and media stream (column ``media``: its name), with the
        ``media[NAME].*`` metrics of ``runs`` (delay, jitter, loss, late loss; ``r``
        and ``mos`` for voice)."""
        return _long(self.runs, "media", self._param_names())

    @property
    def queues(self) -> pl.DataFrame:
        """One row per run and queue (column ``queue``: its link direction), with the
        ``queue[LINK].*`` metrics of ``runs``."""
        return _long(self.runs, "queue", self._param_names())

    @property
    def links(self) -> pl.DataFrame:
        """One row per run and link direction (column ``link``), with the
        ``link[NAME].*`` metrics of ``runs``."""
        return _long(self.runs, "link", self._param_names())

    def _param_names(self) -> list[str]:
        return [str(p) for p in self.meta.get("params") or {}]

    def __repr__(self) -> str:
        m = self.meta
        scenario = os.path.basename(str(m.get("scenario") or "scenario"))
        where = f" in {str(self.out)!r}" if self.out is not None else " (in memory)"
        return (
            f"<linklab.SweepResult {scenario}: {self.summary.height} points × "
            f"{m.get('reps', '?')} reps, {self.runs.height} runs ({self.executed} run now, "
            f"{self.reused} reused, {self.failed} failed){where}>"
        )

    def _repr_html_(self) -> str:
        """A notebook cell's view: the header and, per grid point, the headline
        metrics as mean ± CI half-width (at the sweep's confidence)."""
        from linklab._html import escape

        params = self._param_names()
        shown = [
            m
            for m in ("goodput_bps", "delay_mean_s", "timeouts")
            if f"{m}_mean" in self.summary.columns
        ]
        conf = self.meta.get("confidence", 0.95)
        head = "".join(
            f"<th>{escape(c)}</th>"
            for c in (
                *params,
                "n",
                "failed",
                *(f"{m} (± {100 * float(conf):g} % CI)" for m in shown),
            )
        )
        body = []
        for row in self.summary.head(_HTML_ROWS).iter_rows(named=True):
            cells = [fmt_param(row.get(p)) for p in params]
            cells += [str(row.get("n")), str(row.get("failed"))]
            for m in shown:
                mean, ci = row.get(f"{m}_mean"), row.get(f"{m}_ci")
                cells.append(
                    "" if mean is None else f"{mean:.6g}" + ("" if ci is None else f" ± {ci:.3g}")
                )
            body.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
        more = self.summary.height - _HTML_ROWS
        note = f"<p>… {more} more points (sw.summary)</p>" if more > 0 else ""
        tables = (
            "<p>Tables: sw.summary (per point), sw.runs (per run), sw.flows (per run and flow)</p>"
        )
        return (
            f"<p>{escape(repr(self))}</p><table><tr>{head}</tr>{''.join(body)}</table>"
            f"{note}{tables}"
        )


#: Grid points a notebook shows of a sweep.
_HTML_ROWS = 50

_OBJECT_COLUMN = re.compile(r"^(flow|queue|link|media)\[(.*)\]\.(.+)$")


def _long(runs: pl.DataFrame, kind: str, params: Sequence[str]) -> pl.DataFrame:
    """``runs``' ``kind[NAME].M`` columns as rows: one per run and NAME."""
    import polars as pl

    ids = [c for c in ("point", "rep", "seed", *params, "status") if c in runs.columns]
    by_name: dict[str, dict[str, str]] = {}
    for col in runs.columns:
        m = _OBJECT_COLUMN.match(col)
        if m and m.group(1) == kind:
            by_name.setdefault(m.group(2), {})[col] = m.group(3)
    order = {name: i for i, name in enumerate(by_name)}
    parts = [
        runs.select(
            *ids,
            pl.lit(name, dtype=pl.String).alias(kind),
            pl.lit(order[name], dtype=pl.UInt32).alias("_order"),
            *(pl.col(c).alias(m) for c, m in cols.items()),
        )
        for name, cols in by_name.items()
    ]
    if not parts:
        return runs.select(*ids, pl.lit(None, dtype=pl.String).alias(kind)).clear()
    sort = [c for c in ("point", "rep") if c in ids]
    out = pl.concat(parts, how="diagonal_relaxed").sort([*sort, "_order"], maintain_order=True)
    return out.drop("_order")


def _rwnd_sweep_warning(runs: pl.DataFrame, names: Sequence[str]) -> str | None:
    import polars as pl

    if "rwnd_limited_fraction" not in runs.columns:
        return None
    ok = runs.filter(pl.col("status") == "ok")
    hit = ok.filter(pl.col("rwnd_limited_fraction") > _checks.RWND_LIMITED)
    if hit.height == 0:
        return None
    first = hit.row(0, named=True)
    where = " ".join(f"{n}={fmt_param(first.get(n))}" for n in names)
    pct = [100 * float(x) for x in hit["rwnd_limited_fraction"]]
    lo, hi = f"{min(pct):.0f}", f"{max(pct):.0f}"
    return (
        f"in {hit.height} of {ok.height} runs (e.g. {where} seed {first['seed']}) the receive "
        "window, not the congestion control, limited every flow for most of the time it had "
        f"data to send ({lo if lo == hi else f'{lo}-{hi}'} %; column rwnd_limited_fraction): "
        "there the choice of cc changes little; raise [tcp] rwnd above the path's "
        "bandwidth-delay product and its buffer ('linklab run' on one of them gives the numbers)"
    )


# ---------------------------------------------------------------------------
# Parameter values and grids
# ---------------------------------------------------------------------------


def parse_value(text: str) -> bool | int | float | str:
    """A value typed as TOML would read it: integer, float, boolean, else the text itself.

    ``'0.1'`` → 0.1, ``'10'`` → 10, ``'true'`` → True, ``'2s'`` → ``'2s'``,
    ``'"10"'`` → ``'10'`` (a quoted TOML string).
    """
    stripped = text.strip()
    if not stripped:
        raise SweepError("empty value")
    try:
        value = tomllib.loads(f"v = {stripped}")["v"]
    except tomllib.TOMLDecodeError:
        return stripped
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SweepError(f"value {short_repr(stripped)} is not a finite number")
        return value
    return stripped  # dates, arrays, tables: keep the text


def _range_values(text: str) -> list[int | float] | None:
    """``START:STOP:STEP`` as its values (STOP included when on the grid), or None."""
    parts = text.split(":")
    if len(parts) != 3:
        return None
    try:
        nums = [parse_value(p) for p in parts]
    except SweepError:
        return None
    if not all(isinstance(n, int | float) and not isinstance(n, bool) for n in nums):
        return None
    start, stop, step = nums
    if step == 0:
        raise SweepError(
            f"range {short_repr(text)} has step 0; give START:STOP:STEP with STEP != 0"
        )
    # Decimal arithmetic on the numbers as written: 1.2:2295.6:47.8 ends exactly at 2295.6
    # (an integer is taken by its value: TOML also writes 0x10, 0o7, 1_000).
    try:
        d_start, d_stop, d_step = (
            Decimal(n) if isinstance(n, int) else Decimal(p.strip())
            for n, p in zip(nums, parts, strict=True)
        )
    except InvalidOperation:
        return None
    count = math.floor((d_stop - d_start) / d_step) + 1
    if count < 1:
        raise SweepError(
            f"range {short_repr(text)} is empty; STEP must go from START towards STOP "
            "(e.g. 0:0.5:0.1 or 10:1:-1)"
        )
    if count > MAX_RUNS:
        raise SweepError(
            f"range {short_repr(text)} has {count} values; allowed: at most {MAX_RUNS}"
        )
    if all(isinstance(n, int) for n in nums):
        return [start + i * step for i in range(count)]  # type: ignore[operator]
    values = [float(d_start + i * d_step) for i in range(count)]
    return [0.0 if v == 0 else v for v in values]


def parse_param_spec(spec: str) -> tuple[str, list[Any]]:
    """``NAME=V1,V2,...`` or ``NAME=START:STOP:STEP`` as (name, values)."""
    name, sep, rest = spec.partition("=")
    name = name.strip()
    if not sep or not name:
        raise SweepError(
            f"malformed --param {short_repr(spec)}; expected NAME=V1,V2,... or "
            f"NAME=START:STOP:STEP, "
            "e.g. --param per=0,0.01,0.1 or --param per=0:0.5:0.1"
        )
    return name, parse_values(rest, name)


def parse_values(text: str, name: str = "?") -> list[Any]:
    """A value list ``V1,V2,...`` or a range ``START:STOP:STEP``."""
    text = text.strip()
    if "," not in text:
        rng = _range_values(text)
        if rng is not None:
            return rng
    values: list[Any] = []
    for item in text.split(","):
        if not item.strip():
            raise SweepError(
                f"malformed values for parameter {short_repr(name)}: {short_repr(text)} has "
                f"an empty value; "
                "give NAME=V1,V2,... or NAME=START:STOP:STEP"
            )
        parts = item.split(":")
        if len(parts) > 1 and all(_is_number(p) for p in parts):
            raise SweepError(
                f"malformed values for parameter {short_repr(name)}: {short_repr(item.strip())} "
                f"is not a range; allowed: {SPEC_SYNTAX} (three numbers, e.g. 0:0.1:0.02)"
            )
        values.append(parse_value(item))
    return values


#: The syntax of a swept parameter's values, for messages.
SPEC_SYNTAX = "NAME=V1,V2,... or NAME=START:STOP:STEP"


def _is_number(text: str) -> bool:
    try:
        value = parse_value(text)
    except SweepError:
        return False
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_syntax(
    text: str,
    values: Mapping[str, Sequence[Any]],
    defaults: Mapping[str, Any],
    base_dir: str | None,
) -> None:
    """Refuse, before any run, a swept value the core cannot read as its parameter's type
    (``per=abc`` for a number, ``flows=2.5`` for an integer, ``ecn=1`` for a boolean).

    The core alone parses a parameter's value (``_inputs``): it is asked, one value at
    a time, and a refusal of the value itself (its error path ``--set NAME``) is bad
    input; any other refusal (``per=1.5``, not a probability) is left to the run,
    which fails and says why.
    """
    from linklab._inputs import to_text

    kinds = {bool: "true or false", int: "an integer", float: "a number"}
    for name, vs in values.items():
        for v in vs:
            try:
                _core.input_files(text, params={name: to_text(v)}, base_dir=base_dir)
            except ScenarioError as e:
                if getattr(e, "path", "") != f"--set {name}":
                    continue
                kind = kinds.get(type(defaults[name]), "text")
                raise SweepError(
                    f"parameter {short_repr(name)}: value {short_repr(to_text(v))} is not "
                    f"{kind} (the default is {to_text(defaults[name])}); allowed: "
                    f"{SPEC_SYNTAX} with each value {kind}"
                ) from None
            except Exception:
                continue


def _column_values(values: list[Any]) -> list[Any]:
    """Values of one parameter made one dtype: Boolean, Int64, Float64 or String."""
    if all(isinstance(v, bool) for v in values):
        return values
    if any(isinstance(v, bool) for v in values) or any(isinstance(v, str) for v in values):
        return [("true" if v else "false") if isinstance(v, bool) else str(v) for v in values]
    if all(isinstance(v, int) for v in values):
        return values
    return [float(v) for v in values]


#: The integers a scenario parameter can hold (TOML's: 64-bit signed).
INT_RANGE = (-(2**63), 2**63 - 1)


def _check_value(name: str, v: Any) -> None:
    """Refuse a swept value no scenario parameter can hold, before any run."""
    if isinstance(v, int) and not isinstance(v, bool) and not INT_RANGE[0] <= v <= INT_RANGE[1]:
        raise SweepError(
            f"parameter {short_repr(name)}: value {short_repr(v)} is out of range; allowed: "
            f"integers "
            f"from {INT_RANGE[0]} to {INT_RANGE[1]} (a scenario's 64-bit integers)"
        )
    if isinstance(v, float) and not math.isfinite(v):
        raise SweepError(
            f"parameter {short_repr(name)}: value {short_repr(v)} is not a finite number; "
            "allowed: finite numbers"
        )


def normalize_params(
    params: Mapping[str, Any], defaults: Mapping[str, Any], where: str = "scenario"
) -> dict[str, list[Any]]:
    """Check the swept parameters against ``[params]`` and type their values.

    ``params`` maps a name to a list of values, one value, or a spec string
    (``"0,0.1"``, ``"0:0.5:0.1"``).
    """
    if not isinstance(params, Mapping):
        raise SweepError(
            "params must be a dict of parameter name to values, e.g. {'per': [0, 0.1]}, "
            f"not a {type(params).__name__}"
        )
    if not params:
        raise SweepError("no parameter to sweep; give at least one --param NAME=V1,V2,...")
    out: dict[str, list[Any]] = {}
    for name, spec in params.items():
        if not isinstance(name, str) or name not in defaults:
            have = ", ".join(defaults) or "none"
            hint = did_you_mean(name, defaults) if isinstance(name, str) else ""
            raise SweepError(
                f"unknown parameter {short_repr(name)} for {where}; allowed: its [params] ({have})"
                + (f"; {hint}" if hint else "")
            )
        if isinstance(spec, str):
            values = parse_values(spec, name)
        elif isinstance(spec, Iterable) and not isinstance(spec, bytes | Mapping):
            values = list(spec)
        else:
            values = [spec]
        if not values:
            raise SweepError(f"parameter {short_repr(name)} has no values; give at least one")
        checked: list[Any] = []
        for v in values:
            if hasattr(v, "item") and not isinstance(v, bool | int | float | str):
                v = v.item()  # numpy scalars
            if not isinstance(v, bool | int | float | str):
                raise SweepError(
                    f"parameter {short_repr(name)}: value {short_repr(v)} is a {type(v).__name__}; "
                    "allowed: int, float, bool or str"
                )
            _check_value(name, v)
            v = typed_like(v, defaults[name])
            _check_value(name, v)
            checked.append(v)
        checked = _column_values(checked)
        seen: set[str] = set()
        for v in checked:
            token = json.dumps(v)
            if token in seen:
                raise SweepError(
                    f"parameter {short_repr(name)}: value {short_repr(v)} is given twice; "
                    f"give each value once"
                )
            seen.add(token)
        out[name] = checked
    return out


def build_grid(params: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """The Cartesian grid of ``params`` in the given order (the first varies slowest)."""
    names = list(params)
    total = math.prod(len(v) for v in params.values())
    if total > MAX_RUNS:
        raise SweepError(f"the grid has {total} points; allowed: at most {MAX_RUNS}")
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*params.values())]


def run_key(
    scenario_text: str,
    params: Mapping[str, Any],
    seed: int,
    version: str,
    inputs: Sequence[tuple[str, str]] = (),
) -> str:
    """sha256 hex of the canonical JSON of (scenario text, sorted typed params, seed, version),
    and of the ``(path, sha256)`` of every file the run reads (trace files), when it reads any.
    """
    doc: dict[str, Any] = {
        "linklab_version": version,
        "params": [[k, params[k]] for k in sorted(params)],
        "scenario": scenario_text,
        "seed": seed,
    }
    if inputs:
        doc["inputs"] = [list(i) for i in inputs]
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)  # fmt: skip
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _inputs(
    text: str, point: Mapping[str, Any], base_dir: str | None, digests: dict[str, str]
) -> list[tuple[str, str]]:
    """The files a run of ``point`` reads and their sha256 (``digests`` caches them):
    a changed trace file makes new keys, so stored results are not reused for it.
    A scenario that cannot be loaded reads nothing here (its runs fail and say why).
    """
    from linklab import _core
    from linklab.api import params_to_strings

    try:
        files = _core.input_files(text, params=params_to_strings(point), base_dir=base_dir)
    except Exception:
        return []
    out = []
    for f in files:
        if f not in digests:
            try:
                digests[f] = hashlib.sha256(Path(f).read_bytes()).hexdigest()
            except OSError:
                digests[f] = "unreadable"
        out.append((f, digests[f]))
    return out


# ---------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------


# Fields of a summary's `links[].rlc` not worth a sweep column: the last
# values of quantities that vary during the run (their means are kept).
_RLC_SKIP = frozenset({"max_dat", "p_ll", "p_tcp", "target"})


def _num(value: Any) -> float | None:
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    v = float(value)
    return v if math.isfinite(v) else None


def flatten_summary(summary: Mapping[str, Any]) -> dict[str, float | None]:
    """A run summary as flat metric columns (see ``docs/sweeps.md``)."""
    out: dict[str, float | None] = {}
    agg = summary.get("aggregate") or {}
    for m in _AGGREGATE:
        out[m] = _num(agg.get(m))
    for m in _TOP:
        out[m] = _num(summary.get(m))
    # How far every flow was limited by its receive window (docs/metrics.md).
    out["rwnd_limited_fraction"] = _num(_checks.rwnd_limited_fraction(summary))
    lt = agg.get("lt")
    if isinstance(lt, Mapping):  # LT-TCP totals (proactive/reactive FEC overhead, ...)
        for k, v in lt.items():
            out[f"lt.{k}"] = _num(v)
    mon = summary.get("monitor")
    if isinstance(mon, Mapping):  # [monitor]: dead periods of the watched buffers
        for k, v in mon.items():
            if not isinstance(v, list):
                out[f"monitor.{k}"] = _num(v)
    work = summary.get("workloads")
    if isinstance(work, Mapping):  # [[workloads]]: completion times and slowdowns
        for w in work.get("workloads") or []:
            name = w.get("name", "?")
            fct, slow = w.get("fct_s") or {}, w.get("slowdown") or {}
            for q in ("mean", "p50", "p99"):
                out[f"workload[{name}].fct_{q}_s"] = _num(fct.get(q))
                out[f"workload[{name}].slowdown_{q}"] = _num(slow.get(q))
            for k in ("completed", "unfinished", "transactions"):
                out[f"workload[{name}].{k}"] = _num(w.get(k))
            txn = w.get("transaction_s") or {}
            for q in ("mean", "p50", "p99"):
                out[f"workload[{name}].transaction_{q}_s"] = _num(txn.get(q))
    flows = summary.get("flows") or []
    names = [str(f.get("name", f.get("id", ""))) for f in flows]
    for f, name in zip(flows, names, strict=True):
        if names.count(name) > 1:
            name = f"{name}#{f.get('id')}"
        for m in _FLOW:
            out[f"flow[{name}].{m}"] = _num(f.get(m))
    for x in summary.get("media") or []:  # [[media]] streams (names are unique)
        name = x.get("name", "?")
        for m in _MEDIA:
            out[f"media[{name}].{m}"] = _num(x.get(m))
        e = x.get("emodel")
        if isinstance(e, Mapping):  # voice: the E-model's rating
            out[f"media[{name}].r"] = _num(e.get("r"))
            out[f"media[{name}].mos"] = _num(e.get("mos"))
    for q in summary.get("queues") or []:
        link = q.get("link", "?")
        drops = q.get("drops") or {}
        out[f"queue[{link}].ecn_marks"] = _num(q.get("ecn_marks"))
        out[f"queue[{link}].drops_overflow"] = _num(drops.get("overflow"))
        out[f"queue[{link}].drops_aqm_early"] = _num(drops.get("aqm_early"))
        out[f"queue[{link}].drops_aqm_forced"] = _num(drops.get("aqm_forced"))
        out[f"queue[{link}].mean_packets"] = _num(q.get("mean_packets"))
    for x in summary.get("links") or []:
        name = x.get("name", "?")
        out[f"link[{name}].throughput_bps"] = _num(x.get("throughput_bps"))
        out[f"link[{name}].rx_packets"] = _num(x.get("rx_packets"))
        out[f"link[{name}].lost"] = _num(x.get("lost"))
        rlc = x.get("rlc")
        if isinstance(rlc, Mapping):  # link-layer ARQ counters and measures
            for k, v in rlc.items():
                if k not in _RLC_SKIP:
                    out[f"link[{name}].rlc.{k}"] = _num(v)
        fec = x.get("fec")
        if isinstance(fec, Mapping):  # link-level FEC / hybrid ARQ counters
            for k, v in fec.items():
                out[f"link[{name}].fec.{k}"] = _num(v)
    return out


def _metric_order(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Metric columns: run-level ones, then lt.*, monitor.*, workload[..], flow[..],
    queue[..], link[..] in first-seen order."""
    groups: dict[str, dict[str, None]] = {
        "lt": {}, "monitor": {}, "workload": {}, "flow": {}, "media": {}, "queue": {}, "link": {}
    }  # fmt: skip
    for row in rows:
        for name in row:
            dotted = name.split(".", 1)[0]
            kind = dotted if dotted in ("lt", "monitor") else name.split("[", 1)[0]
            if kind in groups and name not in groups[kind]:
                groups[kind][name] = None
    return [*METRICS, *(m for g in groups.values() for m in g)]


def summarize(runs: pl.DataFrame, param_names: Sequence[str], confidence: float) -> pl.DataFrame:
    """Per grid point: the parameters, ``n`` ok runs, ``failed`` runs, and mean/std/CI per metric.

    ``M_std`` is the sample standard deviation (ddof 1) and ``M_ci`` the
    Student-t half-width ``t_{(1+confidence)/2, k-1} · std / sqrt(k)`` over the
    ``k`` runs where M is known; both are null when k < 2.
    """
    import numpy as np
    import polars as pl

    from linklab._stats import t_half_width

    fixed = {"point", "rep", "seed", "key", "status", "error", *param_names}
    metrics = [c for c in runs.columns if c not in fixed]
    aggs: list[pl.Expr] = [
        *(pl.col(p).first() for p in param_names),
        (pl.col("status") == "ok").sum().cast(pl.Int64).alias("n"),
        (pl.col("status") == "failed").sum().cast(pl.Int64).alias("failed"),
    ]
    for m in metrics:
        aggs += [
            pl.col(m).mean().alias(f"{m}_mean"),
            pl.col(m).std(ddof=1).alias(f"{m}_std"),
            pl.col(m).count().cast(pl.Int64).alias(f"{m}__k"),
        ]
    grouped = runs.group_by("point", maintain_order=True).agg(aggs).sort("point")
    columns: list[pl.Series] = [grouped["point"], *(grouped[p] for p in param_names)]
    columns += [grouped["n"], grouped["failed"]]
    for m in metrics:
        k = grouped[f"{m}__k"].to_numpy().astype(np.float64)
        std = grouped[f"{m}_std"].cast(pl.Float64).to_numpy().astype(np.float64)
        enough = k >= 2
        with np.errstate(invalid="ignore", divide="ignore"):
            ci = t_half_width(std, np.where(enough, k, 2.0), confidence)
        std_s = pl.Series(f"{m}_std", np.where(enough, std, np.nan), dtype=pl.Float64)
        ci_s = pl.Series(f"{m}_ci", np.where(enough, ci, np.nan), dtype=pl.Float64)
        columns += [
            grouped[f"{m}_mean"].cast(pl.Float64),
            std_s.fill_nan(None),
            ci_s.fill_nan(None),
        ]
    return pl.DataFrame(columns)


# ---------------------------------------------------------------------------
# Progress
# ---------------------------------------------------------------------------


#: Seconds between two progress lines when stderr is not a terminal.
PROGRESS_INTERVAL = 5.0


class Progress:
    """Progress over the runs of one sweep, or of several (a reproduction's), or
    over the seconds of a live run (``unit="s"``, driven by :meth:`clock`): a
    tqdm bar on a terminal, a plain line every :data:`PROGRESS_INTERVAL` seconds
    otherwise, or nothing (``mode`` ``"bar"``, ``"lines"``, ``"off"``). A bar
    handed to :func:`sweep` as ``progress`` is shared: each sweep adds its runs to
    the total when it starts, and the caller closes it."""

    def __init__(
        self, mode: str, total: float = 0, reused: int = 0, *, desc: str = "sweep",
        interval: float | None = None, unit: str = "run",
    ) -> None:  # fmt: skip
        self.mode = mode
        self.desc = desc
        self.unit = unit
        self.total = total
        self.done: float = reused
        self.reused = reused
        self.failed = 0
        self.interval = PROGRESS_INTERVAL if interval is None else interval
        self.start = time.monotonic()
        self.last = self.start
        self.bar: Any = None
        if mode == "bar":
            # tqdm.auto: a widget in a notebook, a text bar on a terminal.
            from tqdm.auto import tqdm

            self.bar = tqdm(
                total=total or None, initial=reused, unit=unit, file=sys.stderr,
                dynamic_ncols=True, desc=desc, smoothing=0.1,
            )  # fmt: skip

    @classmethod
    def auto(cls, progress: bool | None, desc: str = "sweep") -> Progress:
        """A bar on a terminal or in a notebook; elsewhere plain lines if
        ``progress`` is True, nothing if it is None or False."""
        return cls(_progress_mode(progress), desc=desc)

    @classmethod
    @contextlib.contextmanager
    def clock(cls, mode: str, total_s: float | None, desc: str) -> Iterator[Progress]:
        """Progress over the wall-clock seconds of a block that runs ``total_s``
        seconds (None: not known), told by a thread while the block runs."""
        progress = cls(mode, total_s or 0, desc=desc, unit="s")
        stop = threading.Event()

        def tick() -> None:
            step = 0.5 if mode == "bar" else min(progress.interval, 0.5)
            while not stop.wait(step):
                elapsed = time.monotonic() - progress.start
                progress.advance(min(elapsed, total_s) if total_s else elapsed)

        thread = threading.Thread(target=tick, name="linklab-progress", daemon=True)
        if mode != "off":
            thread.start()
        try:
            yield progress
        finally:
            stop.set()
            if thread.is_alive():
                thread.join()
            progress.close()

    def set_description(self, desc: str) -> None:
        """What the lines (or the bar) say is going on."""
        self.desc = desc
        if self.bar is not None:
            self.bar.set_description(desc)

    def extend(self, total: int, reused: int) -> None:
        """Another sweep starts: ``total`` more runs, ``reused`` of them done already."""
        self.total += total
        self.done += reused
        self.reused += reused
        if self.bar is not None:
            self.bar.total = self.total
            self.bar.update(reused)
            self.bar.refresh()

    def write(self, line: str) -> None:
        """A stage line on stderr, above the bar when there is one."""
        if self.bar is not None:
            self.bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr, flush=True)

    def update(self, failed: bool) -> None:
        """One more run done."""
        self.failed += int(failed)
        if self.bar is not None and failed:
            self.bar.set_postfix(failed=self.failed, refresh=False)
        self.advance(self.done + 1)

    def advance(self, done: float) -> None:
        """``done`` units done in all (a line when the interval has passed)."""
        if self.bar is not None:
            self.bar.update(done - self.done)
        self.done = done
        if self.mode == "lines":
            now = time.monotonic()
            if now - self.last >= self.interval:
                self.last = now
                self._line(now)

    def _line(self, now: float) -> None:
        elapsed = now - self.start
        failed = f", {self.failed} failed" if self.failed else ""
        if self.unit == "run":
            new = self.done - self.reused
            left = self.total - self.done
            eta = f"{elapsed / new * left:.0f} s" if new else "?"
            what = f"{self.done:.0f}/{self.total:.0f} runs done{failed}, {elapsed:.0f} s elapsed"
        else:
            eta = f"{max(self.total - self.done, 0):.0f} s" if self.total else "?"
            of = f" of {self.total:.0f}" if self.total else ""
            what = f"{self.done:.0f}{of} {self.unit} elapsed"
        print(f"linklab: {self.desc}: {what}, ETA {eta}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _progress_mode(progress: bool | None) -> str:
    # A notebook (Jupyter's kernel) shows tqdm.auto's widget although its
    # stderr is not a terminal.
    tty = sys.stderr.isatty() or "ipykernel" in sys.modules
    if progress is None:
        return "bar" if tty else "off"
    if not progress:
        return "off"
    return "bar" if tty else "lines"


# ---------------------------------------------------------------------------
# The sweep
# ---------------------------------------------------------------------------


def _load(scenario: Any) -> tuple[str, str, dict[str, Any]]:
    """(TOML text, a name for messages, the ``[params]`` defaults) of ``scenario``."""
    where = source_file(scenario) or "scenario"
    try:
        source = load_source(scenario)
        return to_toml(source), where, params_table(source, where)
    except ScenarioFileError as e:
        raise SweepError(str(e)) from None
    except ScenarioError as e:
        raise SweepError(error_text(e)) from None


def _check_settings(reps: Any, confidence: Any, seed: Any, jobs: Any) -> None:
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
        raise SweepError(f"invalid reps {short_repr(reps)}; allowed: an integer >= 1")
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not 0 < confidence < 1
    ):
        raise SweepError(
            f"invalid confidence {short_repr(confidence)}; allowed: a number strictly "
            f"between 0 and 1, "
            "e.g. 0.95"
        )
    try:
        check_seed(seed)
    except (TypeError, ValueError):
        raise SweepError(f"invalid seed {short_repr(seed)}; allowed: {SEED_RANGE}") from None
    if seed + reps - 1 > MAX_SEED:
        raise SweepError(
            f"seed {seed} + {reps} replications passes 2**64-1; allowed: base seed <= 2**64-{reps}"
        )
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise SweepError(f"invalid jobs {short_repr(jobs)}; allowed: an integer >= 1")


def sweep(
    scenario: str | os.PathLike[str] | Mapping[str, Any],
    params: Mapping[str, Any],
    reps: int = 1,
    *,
    confidence: float = 0.95,
    seed: int = 1,
    jobs: int | None = None,
    backend: str = "local",
    scheduler: str | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: bool | None | Progress = None,
    metrics: Sequence[str] | None = None,
) -> SweepResult:
    """Run a parameter sweep and return its tables.

    ``scenario``: a TOML file path, TOML text or a dict, as for
    :func:`linklab.run` (a dict is stored as TOML text). ``params``: name → values (a
    list, one value, or a spec string ``"0,0.01,0.1"`` / ``"0:0.5:0.1"``); every
    name must be in the scenario's ``[params]``; the grid is their Cartesian
    product in the given order. ``reps`` replications per point, replication
    ``r`` with seed ``seed + r``. ``confidence``: level of the Student-t CI.
    ``jobs``: local worker processes (default: every core). ``backend``:
    ``"local"`` or ``"dask"`` (with ``scheduler``, a scheduler address). A sweep
    has at most :data:`MAX_RUNS` runs (grid points × ``reps``).
    ``out``: the output directory (store and tables); None keeps everything
    in memory. ``progress``: True shows a bar on a terminal (plain lines
    otherwise), None a bar only on a terminal, False nothing; a
    :class:`Progress` is shared with other sweeps (its runs are added to it).
    ``metrics``: shell-style patterns of the per-object metric columns to keep
    (``"flow[*].goodput_bps"``, ``"monitor.*"``; the run-level :data:`METRICS`
    are always kept); None keeps every column, ``[]`` only the run-level ones. A
    big network flattens to thousands of columns per run; the store keeps whole
    summaries either way, so another selection later recomputes nothing.

    Raises :class:`SweepError` (a ``ValueError``) for bad input,
    :class:`SweepInterrupted` (a ``KeyboardInterrupt``) on Ctrl-C; failed runs
    do not raise: they are rows with status ``failed`` and their error.
    """
    text, where, defaults = _load(scenario)
    file = source_file(scenario)
    base_dir = None if file is None else os.path.dirname(os.path.abspath(file))
    _check_settings(reps, confidence, seed, jobs)
    patterns = _check_metrics(metrics)
    values = normalize_params(params, defaults, where)
    check_syntax(text, values, defaults, base_dir)
    points = math.prod(len(v) for v in values.values())
    if points * reps > MAX_RUNS:
        raise SweepError(
            f"{points} grid points × {reps} replications = {points * reps} runs; allowed: at "
            f"most {MAX_RUNS} runs per sweep (fewer points or replications, or several sweeps)"
        )
    grid = build_grid(values)
    version = _core.version()

    out_dir = Path(out) if out is not None else None
    if out_dir is not None:
        from linklab._files import check_writable_dir

        try:
            check_writable_dir(out_dir)
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise SweepError(
                f"cannot write output directory {str(out_dir)!r}: {e}; give a writable directory"
            ) from None

    tasks_by_run: list[tuple[int, int, Task]] = []
    digests: dict[str, str] = {}
    for i, point in enumerate(grid):
        inputs = _inputs(text, point, base_dir, digests)
        for r in range(reps):
            s = seed + r
            key = run_key(text, point, s, version, inputs)
            tasks_by_run.append((i, r, Task(key, point, s)))

    store = Store(out_dir) if out_dir is not None else MemoryStore()
    try:
        store.open()
    except StoreError as e:
        raise SweepError(str(e)) from None
    try:
        # Reading each stored record checks it: a damaged one is set aside and redone now.
        todo: list[Task] = []
        queued: set[str] = set()
        for _, _, task in tasks_by_run:
            if task.key not in queued:
                queued.add(task.key)
                if store.get(task.key) is None:
                    todo.append(task)
        total = len(tasks_by_run)
        reused = total - len(todo)

        meta = {
            "linklab_version": version,
            "scenario": where if where != "scenario" else scenario_name(text),
            "params": values,
            "reps": reps,
            "confidence": float(confidence),
            "base_seed": seed,
            "backend": backend,
        }
        if patterns is not None:
            meta["metrics"] = list(patterns)
        executed = 0
        prefetch: threading.Thread | None = None
        if todo:
            try:
                runner = make_backend(backend, jobs=jobs, scheduler=scheduler)
            except BackendError as e:
                raise SweepError(str(e)) from None
            shared = isinstance(progress, Progress)
            if isinstance(progress, Progress):
                bar = progress
                bar.extend(total, reused)
            else:
                bar = Progress(_progress_mode(progress), total, reused)
            prefetch = _prefetch_table_modules()
            try:
                gen = runner.execute(text, todo, base_dir)
                try:
                    for task, outcome in gen:
                        store.put(
                            task.key,
                            {
                                "key": task.key,
                                "linklab_version": version,
                                "params": task.params,
                                "seed": task.seed,
                                "status": outcome.status,
                                "error": outcome.error,
                                "summary": outcome.summary,
                            },
                        )
                        executed += 1
                        bar.update(outcome.status != "ok")
                finally:
                    gen.close()
            except KeyboardInterrupt:
                if not shared:
                    bar.close()
                with contextlib.suppress(OSError):
                    store.remove_strays()
                raise SweepInterrupted(reused + executed, total, store.root) from None
            except BackendError as e:
                raise SweepError(str(e)) from None
            finally:
                if not shared:
                    bar.close()
                runner.close()
        elif backend not in ("local", "dask"):
            raise SweepError(f"unknown backend {short_repr(backend)}; allowed: local, dask")
        elif isinstance(progress, Progress):
            progress.extend(total, reused)

        if prefetch is not None:  # never import the same modules from two threads at once
            prefetch.join()
        runs, summary = _tables(store, tasks_by_run, list(values), float(confidence), patterns)
        failed = int((runs["status"] == "failed").sum())
        files: list[Path] = []
        if out_dir is not None:
            files = _write_outputs(out_dir, text, meta, runs, summary)
    except StoreError as e:  # a damaged store file that cannot even be set aside
        raise SweepError(str(e)) from None
    finally:
        store.close()
    _release_memory()
    return SweepResult(
        runs=runs,
        summary=summary,
        meta=meta,
        out=out_dir,
        executed=executed,
        reused=reused,
        failed=failed,
        files=files,
    )


def _release_memory() -> None:
    """Hand the heap pages freed by a sweep back to the system (glibc keeps them).

    A sweep of a big network parses thousands of large summaries one after the
    other; Python frees them, but glibc's arenas keep the pages, so a program
    running several sweeps (a reproduction) grew by each one's high-water mark.
    """
    from linklab._heap import release_heap

    release_heap()


def _prefetch_table_modules() -> threading.Thread:
    """Import polars and scipy in the background while the workers run.

    The parent mostly waits during a sweep; loading the table modules then
    takes their import time (~0.5 s) off the end of the sweep.
    """

    def load() -> None:
        try:
            import polars  # noqa: F401
            import scipy.special  # noqa: F401
        except Exception:  # the real import reports any problem later
            pass

    thread = threading.Thread(target=load, name="linklab-prefetch", daemon=True)
    thread.start()
    return thread


def _check_metrics(metrics: Sequence[str] | None) -> tuple[str, ...] | None:
    """The ``metrics`` patterns of :func:`sweep`, checked."""
    if metrics is None:
        return None
    if isinstance(metrics, str) or not all(isinstance(m, str) and m for m in metrics):
        raise SweepError(
            f"metrics {short_repr(metrics)} is not a list of patterns; allowed: a list of "
            f"non-empty "
            "shell-style patterns such as 'flow[*].goodput_bps' or 'monitor.*' (or None for "
            "every column)"
        )
    return tuple(metrics)


def _metric_filter(patterns: tuple[str, ...] | None) -> Callable[[str], bool] | None:
    """Whether a metric column is kept (None: every one is)."""
    if patterns is None:
        return None
    import fnmatch

    always = set(METRICS)
    # fnmatch reads "[...]" as a character class: escape the brackets of
    # flow[NAME] so that only * and ? are wildcards.
    regex = [re.compile(fnmatch.translate(p.replace("[", "[[]"))) for p in patterns]
    decided: dict[str, bool] = {}  # every run of a sweep has the same names

    def keep(m: str) -> bool:
        k = decided.get(m)
        if k is None:
            k = decided[m] = m in always or any(r.match(m) for r in regex)
        return k

    return keep


def _tables(
    store: Store | MemoryStore,
    tasks_by_run: Sequence[tuple[int, int, Task]],
    param_names: list[str],
    confidence: float,
    patterns: tuple[str, ...] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """runs and summary DataFrames, rebuilt from the store; per-object metric
    columns only those matching ``patterns`` (see :func:`sweep`)."""
    import polars as pl

    keep = _metric_filter(patterns)
    seen: set[str] = set()  # every metric name met, kept or not (to check the patterns)
    rows: list[dict[str, Any]] = []
    # Metric columns built as the records are read, one at a time: a run of a
    # big network flattens to thousands of metrics, and a dict per run for
    # every run at once took more memory than the records themselves.
    values: dict[str, list[float | None]] = {}
    for point, rep, task in tasks_by_run:
        record = store.get(task.key)
        if record is None:  # lost between writing and reading: a bug or a foreign hand
            raise RuntimeError(f"run {task.key} is missing from the store")
        ok = record.get("status") == "ok" and record.get("summary") is not None
        error = None if ok else str(record.get("error") or "unknown error")
        flat: dict[str, float | None] = {}
        if ok:
            # Whatever a record holds, it cannot break the tables: a summary that
            # does not read as metrics makes a failed row.
            try:
                flat = flatten_summary(record["summary"])
            except (TypeError, AttributeError, ValueError, KeyError, RecursionError) as e:
                ok, error = False, f"its stored summary does not read as metrics ({e!r:.200})"
        rows.append(
            {
                "point": point,
                "rep": rep,
                "seed": task.seed,
                "params": task.params,
                "key": task.key,
                "status": "ok" if ok else "failed",
                "error": error,
            }
        )
        n = len(rows) - 1  # runs before this one
        for m, v in flat.items():
            if keep is not None and not keep(m):
                seen.add(m)
                continue
            column = values.get(m)
            if column is None:
                column = values[m] = [None] * n
            column.append(v)
        for column in values.values():  # metrics this run does not have
            if len(column) == n:
                column.append(None)
    metrics = _metric_order([values])
    if patterns and (seen or values):
        names = (seen | set(values)) - set(METRICS)
        unmatched = []
        for p in patterns:
            match = _metric_filter((p,))
            if match is not None and not any(match(m) for m in names):
                unmatched.append(p)
        if unmatched:
            examples = ", ".join(sorted(names)[:4]) or "none"
            raise SweepError(
                f"metrics pattern {unmatched[0]!r} matches no column of this sweep; allowed: "
                f"patterns of its per-object columns (e.g. {examples}; 'flow[*].goodput_bps', "
                "'link[*].lost', 'queue[*].mean_packets', 'monitor.*')"
            )

    def param_dtype(name: str) -> Any:
        v = rows[0]["params"][name] if rows else 0.0
        if isinstance(v, bool):
            return pl.Boolean
        if isinstance(v, int):
            return pl.Int64
        if isinstance(v, float):
            return pl.Float64
        return pl.String

    columns: list[pl.Series] = [
        pl.Series("point", [r["point"] for r in rows], dtype=pl.Int64),
        pl.Series("rep", [r["rep"] for r in rows], dtype=pl.Int64),
        pl.Series("seed", [r["seed"] for r in rows], dtype=pl.UInt64),
    ]
    for name in param_names:
        columns.append(pl.Series(name, [r["params"][name] for r in rows], dtype=param_dtype(name)))
    columns += [
        pl.Series("key", [r["key"] for r in rows], dtype=pl.String),
        pl.Series("status", [r["status"] for r in rows], dtype=pl.String),
        pl.Series("error", [r["error"] for r in rows], dtype=pl.String),
    ]
    for m in metrics:
        columns.append(pl.Series(m, values.get(m, [None] * len(rows)), dtype=pl.Float64))
    runs = pl.DataFrame(columns).sort(["point", "rep"])
    return runs, summarize(runs, param_names, confidence)


def _write_outputs(
    out_dir: Path,
    text: str,
    meta: dict[str, Any],
    runs: pl.DataFrame,
    summary: pl.DataFrame,
) -> list[Path]:
    from linklab._files import Staging

    meta_text = json.dumps(meta, indent=2, ensure_ascii=False) + "\n"
    with Staging() as staged:
        staged.add(out_dir / "runs.parquet", runs.write_parquet)
        staged.add(out_dir / "summary.parquet", summary.write_parquet)
        staged.add_bytes(out_dir / "scenario.toml", text.encode("utf-8"))
        staged.add_bytes(out_dir / "meta.json", meta_text.encode("utf-8"))
        return staged.commit()


# ---------------------------------------------------------------------------
# Terminal table
# ---------------------------------------------------------------------------

_SHOWN = (
    ("goodput_bps", "goodput Mbit/s", 1e-6, 3),
    ("delay_mean_s", "delay mean ms", 1e3, 2),
    ("delay_p95_s", "delay p95 ms", 1e3, 2),
    ("timeouts", "timeouts", 1.0, 1),
    ("retransmits", "retransmits", 1.0, 1),
)


def render_summary_table(
    summary: pl.DataFrame, param_names: Sequence[str], confidence: float
) -> str:
    """The summary as a readable table: parameters, n, failed, main metrics as mean ± CI."""
    headers = [*param_names, "n", "failed"]
    shown = [m for m in _SHOWN if f"{m[0]}_mean" in summary.columns]
    headers += [label for _, label, _, _ in shown]
    rows: list[list[str]] = []
    for rec in summary.iter_rows(named=True):
        row = [fmt_param(rec[p]) for p in param_names] + [str(rec["n"]), str(rec["failed"])]
        for metric, _, scale, digits in shown:
            mean, ci = rec[f"{metric}_mean"], rec[f"{metric}_ci"]
            cell = "-" if mean is None else f"{mean * scale:,.{digits}f}"
            if mean is not None and ci is not None:
                cell += f" ± {ci * scale:,.{digits}f}"
            row.append(cell)
        rows.append(row)
    note = f"mean ± {confidence * 100:g}% confidence half-width (Student t) over n ok runs"
    return text_table(headers, rows, left=len(param_names)) + "\n" + note
