"""The framework of every reproduction: experiments, checks, tables, output.

A reproduction is a subclass of :class:`Reproduction` that names itself, its
paper and its settings, and marks each experiment with :func:`experiment`;
defining the subclass registers it (``Reproduction.registry``), and the order
of its experiment methods is the order they run in. :meth:`Reproduction.run`
is the one scaffold: check the arguments and the output directory, run the
chosen experiments, then write ``results.json`` and ``report.html``.

An experiment returns :class:`Table` objects. A table holds text rows
(:class:`Row`: cells and, where the table has a verdict column, the verdict),
JSON records (``rows`` in ``results.json``), notes and figures; a
:class:`Check` is one target, confirmed or not, with our numbers.

Two kinds of check (``Check.kind``, given where each check is made)
--------------------------------------------------------------------
``PAPER_CHECK``: the check compares our result with a number the paper publishes
or a claim it states. Only these make the reproduction's pass count.
``MODEL_CHECK``: the check compares our own code with its input or with another
of our runs — a generator against the parameters it was given (a channel's
NMSE, a shadowing sigma), a simulator against our analytic model, linklab
against another simulator, our remedies and the hypotheses we test to
explain a miss. They are reported on a separate "model checks" line (text)
and under ``"model_checks"`` (JSON), never in the paper's count.

The one tolerance rule (fixed 2026-11-27, issue 36, before the reproductions
were re-run under it; no reproduction has a tolerance of its own)
----------------------------------------------------------------------------
Every comparison of our number with the paper's goes through
:meth:`Check.cell` (:meth:`Check.cells` for several points of one statement,
:meth:`Check.same` for two of our numbers that the paper says are equal),
with the quantity's kind from :data:`TOLERANCE`:

- ``"throughput"`` — throughput, goodput, any delivered rate: within 10 %.
- ``"delay"`` — delays, times, durations, lags after an event, recovery
  times: within 25 %.
- ``"count"`` — counts of events or of what they carry (drops, timeouts,
  retransmissions, packets in a window, bytes lost): within 25 %.
- ``"fraction"`` — probabilities, loss and error rates, shares of time or of
  bytes (dead-period %, overhead %, air-interface success), thresholds given
  in percent (Fig. 11's delta*): within 25 %.
- a ratio of two of these (x-fold, "R") takes the kind of what it relates
  (a ratio of goodputs is a ``"throughput"``).

Each verdict reports our value's difference from the paper's with its sign
("+15.5 %"); outside the tolerance it is a miss. Where the paper prints a
value to a stated precision (``digits`` decimals), half a unit of its last
digit is also accepted when that is wider than the relative band (a printed
"0.3" is anything in [0.25, 0.35]).

Claims that are not a number get these rules:

- a value the paper gives only as an order of magnitude ("approximately
  2e-4"): within a factor :data:`MAGNITUDE_FACTOR` (3, half a decade), by
  :meth:`Check.magnitude`;
- an ordering ("A beats B", "falls as the limit shrinks"): the order of our
  means, exactly as the paper states it, at every point it states it for
  (:meth:`Check.claim`, :meth:`Check.direction`); where the paper says "not
  below", a shortfall inside the two confidence intervals is not a reversal;
- "A is the same as B" / "does not hurt" / "does not change": the two of our
  numbers within the tolerance of their kind (:meth:`Check.same`);
- "much smaller / much larger": by at least a factor :data:`MUCH` (2);
- agreement of a whole table's shape or a tracking claim ("follows",
  "the same ranking"): a correlation of at least :data:`CORRELATION` (0.7);
- a threshold the paper states in its own words ("over five times", "no
  overflow"): that threshold, as stated.

Model checks of a generator's statistic against its input use
:data:`MODEL_TOLERANCE` (10 %, a correlation coefficient 0.05 absolute:
:meth:`Check.generator`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import textwrap
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from linklab import _log
from linklab._files import atomic_write
from linklab._format import text_table
from linklab._html import escape, figure, page
from linklab._stats import t_ci
from linklab.sweep import Progress

__all__ = [
    "CORRELATION",
    "MAGNITUDE_FACTOR",
    "MODEL_CHECK",
    "MODEL_TOLERANCE",
    "MUCH",
    "PAPER_CHECK",
    "TOLERANCE",
    "Check",
    "ReproduceError",
    "Reproduction",
    "Row",
    "Table",
    "experiment",
    "fmt",
    "num",
    "pct",
    "plot_lines",
    "run_summaries",
    "targets_table",
    "rel",
    "stat",
    "verdict",
]


#: Columns of the terminal text of a reproduction.
WIDTH = 120


class ReproduceError(ValueError):
    """Bad input to a reproduction (reported as one line, exit status 2)."""


# ---------------------------------------------------------------------------
# Checks, rows, tables
# ---------------------------------------------------------------------------


#: A check against the paper's published numbers or claims (counted).
PAPER_CHECK = "paper"
#: A check of our own code, remedies or hypotheses (reported apart).
MODEL_CHECK = "model"

#: The one tolerance rule: a cell's kind -> the relative difference (percent)
#: from the paper that still agrees (see the module docstring).
TOLERANCE: dict[str, float] = {
    "throughput": 10.0,
    "delay": 25.0,
    "count": 25.0,
    "fraction": 25.0,
}
#: A value the paper gives only as an order of magnitude: within this factor.
MAGNITUDE_FACTOR = 3.0
#: "Much smaller" / "much larger": at least this factor.
MUCH = 2.0
#: A shape or tracking claim: a correlation coefficient of at least this.
CORRELATION = 0.7
#: A generator's statistic against its input (model checks): relative
#: tolerance in percent, and the absolute one of a correlation coefficient.
MODEL_TOLERANCE = 10.0
MODEL_CORRELATION_ABS = 0.05


def _kind(kind: str) -> str:
    if kind not in (PAPER_CHECK, MODEL_CHECK):
        raise ValueError(f"check kind {kind!r}; allowed: {PAPER_CHECK!r}, {MODEL_CHECK!r}")
    return kind


def _quantity(quantity: str) -> float:
    if quantity not in TOLERANCE:
        raise ValueError(f"quantity {quantity!r}; allowed: {', '.join(TOLERANCE)}")
    return TOLERANCE[quantity]


@dataclass(frozen=True)
class Check:
    """One target or statement: whether it holds, and our numbers (``detail``);
    ``kind`` is :data:`PAPER_CHECK` (counted) or :data:`MODEL_CHECK` (reported apart)."""

    name: str
    passed: bool
    detail: str
    kind: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "passed", bool(self.passed))  # numpy booleans too
        _kind(self.kind)

    def json(self) -> dict[str, Any]:
        return {"check": self.name, "pass": self.passed, "detail": self.detail,
                "kind": self.kind}  # fmt: skip

    @classmethod
    def claim(cls, name: str, holds: bool, detail: str, *, kind: str) -> Check:
        """A statement (ordering, stated threshold) that holds or not."""
        return cls(name, holds, detail, kind)

    @classmethod
    def cell(
        cls,
        metric: str,
        ours: float | None,
        paper: float | None,
        quantity: str,
        *,
        kind: str,
        digits: int | None = None,
        ref: str = "the paper",
    ) -> Check:
        """``ours`` against the paper's ``paper`` under the one rule for
        ``quantity`` (:data:`TOLERANCE`); ``digits``: the decimals the paper
        prints (half a unit of the last is accepted when wider)."""
        limit = _quantity(quantity)
        name = f"{metric} within {limit:g} % of {ref}"
        if ours is None or paper is None or not math.isfinite(ours):
            return cls(name, False, f"{metric}: no value", kind)
        band = abs(paper) * limit / 100
        if digits is not None:
            band = max(band, 0.5 * 10.0**-digits)
        ok = abs(ours - paper) <= band * (1 + 1e-12)
        d = rel(ours, paper)
        diff = f"{d:+.1f} %" if d is not None else f"{ours - paper:+.3g} (paper 0)"
        detail = f"{metric} {diff}"
        if not ok:
            detail += f", outside ±{limit:g} %" + (
                f" and ±{0.5 * 10.0**-digits:g}" if digits is not None else ""
            )
        return cls(name, ok, detail, kind)

    @classmethod
    def cells(
        cls,
        metric: str,
        points: Sequence[tuple[str, float | None, float | None]],
        quantity: str,
        *,
        kind: str,
        digits: int | None = None,
    ) -> Check:
        """Several cells of one kind, ``(label, ours, paper)`` each, as one check
        that holds when every cell does under :meth:`cell`'s rule."""
        each = [cls.cell(label, o, pv, quantity, kind=kind, digits=digits)
                for label, o, pv in points]  # fmt: skip
        limit = _quantity(quantity)
        detail = ", ".join(c.detail.split(", outside")[0] + ("" if c.passed else " (miss)")
                           for c in each)  # fmt: skip
        return cls(f"{metric} within {limit:g} % of the paper at every point",
                   bool(each) and all(c.passed for c in each), detail, kind)  # fmt: skip

    @classmethod
    def same(
        cls, metric: str, ours: float | None, other: float | None, quantity: str, against: str,
        *, kind: str,
    ) -> Check:  # fmt: skip
        """``ours`` equal to our ``other`` (named ``against``) within the tolerance
        of ``quantity``: a claim that the two are the same."""
        limit = _quantity(quantity)
        name = f"{metric} within {limit:g} % of {against}"
        d = rel(ours, other)
        if d is None:
            return cls(name, False, f"{metric}: no value", kind)
        ok = abs(d) <= limit
        return cls(name, ok, f"{metric} {d:+.1f} % vs {against}" + (
            "" if ok else f", outside ±{limit:g} %"), kind)  # fmt: skip

    @classmethod
    def magnitude(cls, metric: str, ours: float | None, paper: float, *, kind: str) -> Check:
        """``ours`` within a factor :data:`MAGNITUDE_FACTOR` of an order-of-magnitude value."""
        f = MAGNITUDE_FACTOR
        name = f"{metric} within {f:g}x of {paper:.1e}"
        if ours is None or ours <= 0 or paper <= 0:
            return cls(name, False, f"{metric}: {ours} (no positive value)", kind)
        ratio = ours / paper
        ok = abs(math.log10(ratio)) <= math.log10(f)
        return cls(name, ok, f"{metric} {ours:.2e}, {ratio:.2f}x the paper's" + (
            "" if ok else f", outside {1 / f:.2f}-{f:g}x"), kind)  # fmt: skip

    @classmethod
    def generator(
        cls, metric: str, ours: float, target: float, *, correlation: bool = False
    ) -> Check:
        """A generator's statistic against its input (a :data:`MODEL_CHECK` check):
        within :data:`MODEL_TOLERANCE` %, or a correlation within
        :data:`MODEL_CORRELATION_ABS` absolute."""
        if correlation:
            ok = abs(ours - target) <= MODEL_CORRELATION_ABS
            return cls(f"{metric} within {MODEL_CORRELATION_ABS:g} of its target", ok,
                       f"{ours:.3f} vs {target:.3f}", MODEL_CHECK)  # fmt: skip
        d = rel(ours, target)
        ok = d is not None and abs(d) <= MODEL_TOLERANCE
        return cls(f"{metric} within {MODEL_TOLERANCE:g} % of its input", ok,
                   f"{metric} {pct(d)}", MODEL_CHECK)  # fmt: skip

    @classmethod
    def direction(
        cls, metric: str, change: float | None, up: bool, against: str, *, kind: str
    ) -> Check:
        """``metric`` changed in the right direction relative to ``against``."""
        name = f"{metric} {'higher' if up else 'lower'} than {against}"
        if change is None:
            return cls(name, False, f"{metric}: no value", kind)
        ok = change > 0 if up else change < 0
        detail = f"{metric} {change:+.1f} % vs {against}"
        if not ok:
            detail += f", misses by {abs(change):.1f} pt (should {'rise' if up else 'fall'})"
        return cls(name, ok, detail, kind)


def paper_and_model(checks: Iterable[Check]) -> tuple[list[Check], list[Check]]:
    """``checks`` split into (paper checks, model checks)."""
    cs = list(checks)
    return [c for c in cs if c.kind == PAPER_CHECK], [c for c in cs if c.kind == MODEL_CHECK]


def verdict(checks: Iterable[Check]) -> str:
    """``ok``, or ``MISS: ...`` with the details of the checks that failed."""
    misses = [c.detail for c in checks if not c.passed]
    return "ok" if not misses else "MISS: " + "; ".join(misses)


@dataclass(frozen=True)
class Row:
    """A text row of a table; ``verdict`` (``ok``/``MISS: ...``) colours its last cell."""

    cells: list[str]
    verdict: str | None = None


@dataclass
class Table:
    """One table or figure of a reproduction: text rows, JSON records, notes, figures."""

    key: str
    title: str
    headers: list[str]
    rows: list[Row] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    def add(
        self,
        cells: Sequence[str],
        *,
        checks: Sequence[Check] | None = None,
        record: Mapping[str, Any] | None = None,
    ) -> None:
        """A text row, and its JSON record if given.

        With ``checks`` the row ends in a verdict cell (``-`` when there are
        none) and the record gets them as ``"checks"``.
        """
        if checks is None:
            self.rows.append(Row(list(cells)))
        else:
            v = verdict(checks) if checks else None
            self.rows.append(Row([*cells, v or "-"], v))
        if record is not None:
            self.record(record, checks)
        elif checks:
            self.checks += checks  # a verdict shown is a verdict counted

    def record(self, record: Mapping[str, Any], checks: Sequence[Check] | None = None) -> None:
        """A JSON record without a text row; ``checks`` are added as ``"checks"``."""
        if checks is None:
            self.records.append(dict(record))
        else:
            self.records.append({**record, "checks": [c.json() for c in checks]})
            self.checks += checks

    def judge(self, config: Mapping[str, Any], checks: Sequence[Check]) -> None:
        """Checks that stand for the whole table: a record of ``config`` with
        them (no measurements, nothing published) and a note per check with
        our numbers and its verdict."""
        self.record({"config": dict(config), "published": None}, checks)
        self.notes += [f"{c.name}: {c.detail} -> {verdict([c])}" for c in checks]

    def json(self) -> dict[str, Any]:
        return {"title": self.title, "notes": self.notes, "figures": self.figures,
                "rows": self.records}  # fmt: skip

    @property
    def model_only(self) -> bool:
        """Whether every check of the table is a model check (its title says so)."""
        return bool(self.checks) and all(c.kind == MODEL_CHECK for c in self.checks)

    @property
    def shown_title(self) -> str:
        """The title, marked when the table's verdicts are model checks only."""
        return self.title + (" [model checks: not in the paper's count]" if self.model_only else "")

    @property
    def judged(self) -> bool:
        """Whether the table gives verdicts."""
        return bool(self.checks) or any(r.verdict is not None for r in self.rows)

    def text(self, width: int = WIDTH, indicative: bool = False) -> str:
        """The table for a terminal, ``width`` columns wide; ``indicative`` marks
        its verdicts as those of a ``--quick`` run."""
        title = self.shown_title + (" [--quick: indicative verdicts]" if indicative else "")
        body = text_table(self.headers, [r.cells for r in self.rows], left=len(self.headers),
                          rule=True, width=width)  # fmt: skip
        notes = [wrap(n, width, "  ") for n in self.notes]
        return "\n".join([wrap(title, width), "=" * min(len(title), width), body, *notes])

    def html(self) -> str:
        e = escape
        out = [f"<h2 id='{e(self.key)}'>{e(self.shown_title)}</h2>"
               "<div class='wide'><table><thead><tr>"]  # fmt: skip
        out += [f"<th>{e(h)}</th>" for h in self.headers]
        out.append("</tr></thead><tbody>")
        for row in self.rows:
            cells = [f"<td>{e(c)}</td>" for c in row.cells]
            if row.verdict is not None:
                kind = "ok" if row.verdict == "ok" else "miss"
                cells[-1] = f"<td class='verdict {kind}'>{e(row.cells[-1])}</td>"
            out.append(f"<tr>{''.join(cells)}</tr>")
        out.append("</tbody></table></div>")
        out += [f"<p class='note'>{e(n)}</p>" for n in self.notes]
        figs = [figure(Path(f).read_bytes(), Path(f).name) for f in self.figures]
        if figs:
            out.append(f"<div class='figs'>{''.join(figs)}</div>")
        return "".join(out)


def wrap(text: str, width: int, indent: str = "") -> str:
    """``text`` wrapped to ``width`` columns, every line indented by ``indent``."""
    return textwrap.fill(
        text, width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
    )


class TraceFiles(Mapping[str, Any]):
    """The trace tables in a directory of ``<table>.parquet`` files, each read
    when asked for (and kept), rows sorted by flow, then time, where the table
    has a flow column (they are written in time order, flows interleaved)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.names = sorted(p.stem for p in directory.glob("*.parquet"))
        self.loaded: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self.names:
            raise KeyError(name)
        if name not in self.loaded:
            import polars as pl

            frame = pl.read_parquet(self.directory / f"{name}.parquet")
            if "flow" in frame.columns:
                frame = frame.sort(["flow", "time_s"], maintain_order=True)
            self.loaded[name] = frame
        return self.loaded[name]

    def scan(self, name: str) -> Any:
        """Table ``name`` as a polars LazyFrame over its file (rows in file order)."""
        import polars as pl

        if name not in self.names:
            raise KeyError(name)
        return pl.scan_parquet(self.directory / f"{name}.parquet")

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


# ---------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------


def num(v: Any) -> float | None:
    """``v`` as a finite float, or None."""
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def stat(row: Mapping[str, Any], metric: str, scale: float = 1.0) -> dict[str, Any]:
    """``{mean, ci, n}`` of ``metric`` from a sweep summary row, times ``scale``."""
    mean, ci = num(row.get(f"{metric}_mean")), num(row.get(f"{metric}_ci"))
    return {
        "mean": None if mean is None else mean * scale,
        "ci": None if ci is None else ci * scale,
        "n": int(row.get("n") or 0),
    }


def fmt(s: Mapping[str, Any] | None, digits: int) -> str:
    """``mean ± ci`` with ``digits`` decimals, or ``-``."""
    if not s or s.get("mean") is None:
        return "-"
    text = f"{s['mean']:.{digits}f}"
    if s.get("ci") is not None:
        text += f" ± {s['ci']:.{digits}f}"
    return text


def rel(ours: float | None, ref: float | None) -> float | None:
    """Relative difference of ``ours`` to ``ref`` in percent."""
    if ours is None or ref in (None, 0):
        return None
    return (ours - ref) / ref * 100.0


def pct(v: float | None, unit: str = " %") -> str:
    """A signed percentage (or percentage points), or ``-``."""
    return "-" if v is None else f"{v:+.1f}{unit}"


# ---------------------------------------------------------------------------
# The reproduction
# ---------------------------------------------------------------------------

Step = TypeVar("Step", bound=Callable[..., list[Table]])


def experiment(name: str) -> Callable[[Step], Step]:
    """Mark a method of a :class:`Reproduction` as experiment ``name`` (runs in class order)."""

    def mark(method: Step) -> Step:
        method.experiment = name  # type: ignore[attr-defined]
        return method

    return mark


class Reproduction:
    """A reproduction of a published experiment (see the module docstring).

    Subclasses set the class attributes below and mark their experiments.
    """

    #: Every reproduction by name, in the order they are defined.
    registry: ClassVar[dict[str, type[Reproduction]]] = {}
    #: Its experiments, in running order (from the :func:`experiment` marks).
    experiments: ClassVar[tuple[str, ...]] = ()

    name: ClassVar[str]
    paper: ClassVar[str]
    seed: ClassVar[str]  # our numbering of the paper ("seed 000"): the order of the list
    short: ClassVar[str]  # authors and topic, for the command's help
    #: The TCP the reproduction simulates: which defaults (linklab's or a
    #: ``[tcp] profile``), what the paper states on top, and the simulator the
    #: paper used (one sentence or two, in the report's opening).
    tcp_profile: ClassVar[str]
    confidence: ClassVar[float]
    base_seed: ClassVar[int] = 1
    #: (replications per point, simulated seconds per run) in a full / a --quick run.
    full: ClassVar[tuple[int, int]]
    quick_settings: ClassVar[tuple[int, int]] = (2, 20)
    #: How the text names the checks: (checks, passed, missed).
    words: ClassVar[tuple[str, str, str]] = ("checks", "passed", "missed")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        steps = [m.experiment for m in cls.__dict__.values() if hasattr(m, "experiment")]
        if steps:
            cls.experiments = tuple(steps)
        if "name" in cls.__dict__:
            Reproduction.registry[cls.name] = cls

    def __init__(
        self,
        out: str | Path,
        *,
        quick: bool = False,
        jobs: int | None = None,
        experiments: Sequence[str] | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        """Check the arguments and make the output directory; :class:`ReproduceError` if bad."""
        chosen = tuple(experiments) if experiments else self.experiments
        unknown = [x for x in chosen if x not in self.experiments]
        if unknown:
            raise ReproduceError(
                f"unknown experiment {unknown[0]!r}; allowed: " + ", ".join(self.experiments)
            )
        if jobs is not None and jobs < 1:
            raise ReproduceError(f"invalid jobs {jobs}; allowed: an integer >= 1")
        self.out = Path(out)
        self.quick = quick
        self.jobs = jobs
        self.chosen = chosen
        self.log = log or self._stage
        #: One bar over the runs of every sweep (on a terminal), made by :meth:`run`.
        self.progress: Progress | None = None
        self.runs = 0
        self.failed = 0
        self.sweeps: list[str] = []
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            probe = self.out / ".write-test"
            probe.write_text("")
            probe.unlink()
        except OSError as e:
            raise ReproduceError(
                f"cannot write output directory {str(out)!r}: "
                f"{e.strerror or e}; give a writable directory"
            ) from None

    @property
    def reps(self) -> int:
        """Replications per point."""
        return (self.quick_settings if self.quick else self.full)[0]

    @property
    def duration_s(self) -> int:
        """Simulated seconds per run."""
        return (self.quick_settings if self.quick else self.full)[1]

    @property
    def dur(self) -> str:
        """:attr:`duration_s` as a scenario duration."""
        return f"{self.duration_s}s"

    # -- running ----------------------------------------------------------------

    def _stage(self, line: str) -> None:
        """A stage line on stderr (above the progress bar), unless ``linklab -q``."""
        if _log.quiet:
            return
        if self.progress is not None:
            self.progress.write(line)
        else:
            _log.info(line)

    def sweep(
        self,
        name: str,
        scenario: Any,
        params: dict[str, list[Any]],
        reps: int | None = None,
        metrics: Sequence[str] | None = None,
    ) -> Any:
        """One :func:`linklab.sweep` stored under ``out/sweeps/name`` (``reps``
        replications, default :attr:`reps`; ``metrics`` as for the sweep: a big
        network's thousands of per-object columns cost memory, so experiments that
        read few of them, or read summaries with :func:`run_summaries`, say so);
        counts its runs."""
        import linklab

        out = self.out / "sweeps" / name
        res = linklab.sweep(
            scenario,
            params=params,
            reps=reps or self.reps,
            confidence=self.confidence,
            seed=self.base_seed,
            jobs=self.jobs,
            out=out,
            progress=self.progress or False,
            metrics=metrics,
        )
        self.failed += res.failed
        self.runs += res.runs.height
        self.sweeps.append(str(out))
        return res

    def rows(
        self, name: str, scenario: Any, params: dict[str, list[Any]], reps: int | None = None
    ) -> list[dict[str, Any]]:
        """The summary rows of :meth:`sweep`."""
        return self.sweep(name, scenario, params, reps).summary.to_dicts()

    def traced(self, name: str, scenario: Any, params: Mapping[str, Any], rep: int = 0) -> Any:
        """One run with traces (seed :attr:`base_seed` + ``rep``), streamed to
        ``out/traces/name`` in bounded memory; the returned result's ``traces``
        reads a table from its file when asked for it, sorted by flow, then time
        (so a long run's big tables — every queue's changes — stay on disk)."""
        import linklab
        from linklab._heap import release_heap

        out = self.out / "traces" / name
        run = linklab.run(scenario, seed=self.base_seed + rep, params=params, trace_dir=out)
        # A traced run's merge of its part files leaves glibc arenas holding
        # freed pages; without this a reproduction's traced runs each raised
        # its high-water mark (5 runs of 200 s: 347 -> 2xx MiB peak).
        release_heap()
        return dataclasses.replace(run, traces=TraceFiles(out))

    def t_ci(self, values: Sequence[float]) -> dict[str, Any]:
        """``{mean, ci, n}`` at the reproduction's confidence."""
        return t_ci(values, self.confidence)

    def figure(self, name: str, make: Callable[[str], Any]) -> str:
        """Call ``make(path)`` for ``out/figures/name.png``; returns the path."""
        path = self.out / "figures" / f"{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        make(str(path))
        return str(path)

    # -- the scaffold -------------------------------------------------------------

    def intro(self) -> list[str]:
        """Paragraphs of the report between the paper and the summary line."""
        return []

    def closing(self) -> list[Table]:
        """Tables after the experiments' (e.g. the statements confirmed or not)."""
        return []

    def counted(self, tables: Sequence[Table]) -> list[Check]:
        """The checks the summary counts (default: every table's), paper and model
        checks together (the summary splits them by kind)."""
        return [c for t in tables for c in t.checks]

    def run(self) -> tuple[dict[str, Any], str]:
        """Run the chosen experiments; write ``results.json`` and ``report.html``.

        Returns (the JSON object, the terminal text).
        """
        from linklab import _core
        from linklab._heap import bound_heap, release_heap, resident

        # Hundreds of runs, each on a thread of its own, in this process: without
        # a bound glibc kept up to 16 arenas of freed pages (rate-swing: 776 MiB,
        # 507 of them in thread arenas; linklab/_heap.py).
        bound_heap()
        started = time.monotonic()
        steps = {m.experiment: m for m in type(self).__dict__.values() if hasattr(m, "experiment")}
        tables: list[Table] = []
        # Where a full run's time goes: wall seconds and runs of each experiment,
        # and this process's memory: its peak so far at the experiment's end (so the
        # experiment that raised it shows) and what it holds after it (MiB; worker
        # processes not included).
        spent: dict[str, dict[str, float]] = {}
        # A bar on a terminal, a line every few seconds elsewhere (a log, CI).
        self.progress = Progress.auto(not _log.quiet, f"reproduce {self.name}")
        try:
            for i, name in enumerate(x for x in self.experiments if x in self.chosen):
                self.progress.set_description(
                    f"reproduce {self.name} {i + 1}/{len(self.chosen)} {name}"
                )
                t0, r0 = time.monotonic(), self.runs
                tables += steps[name](self)
                peak = resident()
                release_heap()  # what the experiment freed, before the next one
                after = resident()
                spent[name] = {"wall_s": round(time.monotonic() - t0, 2), "runs": self.runs - r0}
                if peak is not None and after is not None:
                    spent[name] |= {"peak_rss_so_far_mib": round(peak[1], 1),
                                    "rss_after_mib": round(after[0], 1)}  # fmt: skip
        finally:
            self.progress.close()
            self.progress = None
        tables += self.closing()
        checks, model = paper_and_model(self.counted(tables))
        passed = sum(c.passed for c in checks)
        m_passed = sum(c.passed for c in model)
        result: dict[str, Any] = {
            "reproduction": self.name,
            "paper": self.paper,
            "tcp_profile": self.tcp_profile,
            "linklab_version": _core.version(),
            "quick": self.quick,
            "indicative": self.quick,
            "experiments": list(self.chosen),
            "reps": self.reps,
            "confidence": self.confidence,
            "base_seed": self.base_seed,
            "duration_s": self.duration_s,
            "runs": self.runs,
            "failed_runs": self.failed,
            "wall_time_s": round(time.monotonic() - started, 2),
            "experiment_times": spent,
            "out": str(self.out),
            "checks": {"passed": passed, "missed": len(checks) - passed},
            "model_checks": {"passed": m_passed, "missed": len(model) - m_passed},
            "tables": {t.key: t.json() for t in tables},
            "sweeps": self.sweeps,
        }
        what, ok, bad = self.words
        tally = (
            f"{what} against the paper: {passed} {ok}, {len(checks) - passed} {bad}; "
            f"model checks: {m_passed} passed, {len(model) - m_passed} missed"
        )
        summary = (
            f"{self.reps} replications per point, {round(self.confidence * 100)} % Student-t "
            f"intervals, base seed {self.base_seed}, runs of {self.duration_s} s, "
            f"{'--quick' if self.quick else 'full'}; {self.runs} runs, {self.failed} failed; "
            f"{tally}; linklab {result['linklab_version']}."
        )
        if self.quick:
            summary += (
                f" --quick runs a subset with {self.reps} replications of {self.duration_s} s: "
                "its verdicts are indicative (intervals this wide decide little); run without "
                "--quick to judge the paper's statements."
            )
        results = json.dumps(result, indent=1, allow_nan=False) + "\n"
        atomic_write(self.out / "results.json", results)
        title = f"linklab reproduce {self.name}"
        paragraphs = [self.paper, self.tcp_profile, *self.intro(), summary]
        body = [f"<h1>{escape(title)}</h1>", *(f"<p>{escape(p)}</p>" for p in paragraphs)]
        body += [t.html() for t in tables]
        atomic_write(self.out / "report.html", page(title, "\n".join(body), title))
        head = [f"linklab reproduce {self.name}: {self.paper}", self.tcp_profile, summary]
        text = (
            "\n\n".join(
                [
                    *(wrap(p, WIDTH) for p in head),
                    *(t.text(WIDTH, self.quick and t.judged) for t in tables),
                    wrap(
                        f"{self.runs} runs ({self.failed} failed) in {result['wall_time_s']} s; "
                        f"{tally}{' (indicative, --quick)' if self.quick else ''}; "
                        f"report: {self.out / 'report.html'}",
                        WIDTH,
                    ),
                ]
            )
            + "\n"
        )
        return result, text


def targets_table(key: str, title: str, checks: Sequence[Check]) -> Table:
    """One row per target, with its kind (a paper check or a model check) and verdict."""
    t = Table(key, title, ["target", "kind", "verdict"])
    for c in checks:
        t.add([c.name, c.kind], checks=[c], record={"target": c.name})
    return t


def run_summaries(res: Any) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(runs row, summary) of every successful run of a sweep, from its store; the
    row holds the run's parameters as columns."""
    from linklab.store import Store

    with Store(res.out) as st:
        for row in res.runs.iter_rows(named=True):
            rec = st.get(row["key"])
            if row["status"] == "ok" and rec is not None:
                yield row, rec["summary"]


def plot_lines(
    lines: dict[str, list[tuple[float, dict[str, Any]]]],
    xlabel: str,
    ylabel: str,
    out: str,
    logx: bool,
    logy: bool = False,
    dashed: Callable[[str], bool] | None = None,
    family: Callable[[str], str] | None = None,
) -> None:
    """One line per entry of ``lines`` (label -> points ``(x, {mean, ci})``), with
    error bars; ``dashed(label)`` picks dashed lines (default: labels naming RTT 1 s);
    labels with the same ``family(label)`` share a colour (default: one each)."""
    from linklab.plots import _colors, _new_figure, bounded_errors, save_figure

    if dashed is None:

        def dashed(lab: str) -> bool:
            return "1.0" in lab or "RTT 1" in lab

    kin = family or (lambda lab: lab)
    families = list(dict.fromkeys(kin(lab) for lab in lines))
    colour = dict(zip(families, _colors(len(families)), strict=True))
    fig = _new_figure(7.0, 4.5)
    ax = fig.add_subplot(1, 1, 1)
    for lab, pts in lines.items():
        col = colour[kin(lab)]
        xs = [x for x, _ in pts]
        ys = [st["mean"] if st["mean"] is not None else math.nan for _, st in pts]
        # Every quantity these figures show is >= 0: bars stop there.
        es = bounded_errors(
            [0.0 if math.isnan(y) else y for y in ys], [st["ci"] for _, st in pts], (0.0, math.inf)
        )
        style = "--" if dashed(lab) else "-"
        ax.errorbar(xs, ys, yerr=es, fmt=style + "o", ms=3, color=col, capsize=2, label=lab)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    save_figure(fig, out)
