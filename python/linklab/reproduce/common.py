"""What every reproduction shares: tables, statistics, checks, sweeps, output.

A reproduction runs :func:`linklab.sweep` per experiment through a
:class:`Runner`, builds :class:`Table` objects (our values beside the paper's,
with the issue's checks), and renders them as text, ``report.html`` and
``results.json`` with :func:`render_text`, :func:`render_html` and
:func:`write_atomic`.
"""

from __future__ import annotations

import base64
import html
import json
import math
import statistics
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar


class ReproduceError(ValueError):
    """Bad input to a reproduction (reported as one line, exit status 2)."""


@dataclass
class Table:
    """One table or figure of a reproduction: text cells, verdicts, JSON rows."""

    key: str
    title: str
    headers: list[str]
    cells: list[list[str]] = field(default_factory=list)
    verdicts: list[str | None] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)  # for JSON
    figures: list[str] = field(default_factory=list)


def num(v: Any) -> float | None:
    """``v`` as a finite float, or None."""
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def stat(row: dict[str, Any], metric: str, scale: float = 1.0) -> dict[str, Any]:
    """``{mean, ci, n}`` of ``metric`` from a sweep summary row, times ``scale``."""
    mean, ci = num(row.get(f"{metric}_mean")), num(row.get(f"{metric}_ci"))
    return {
        "mean": None if mean is None else mean * scale,
        "ci": None if ci is None else ci * scale,
        "n": int(row.get("n") or 0),
    }


def fmt(s: dict[str, Any] | None, digits: int) -> str:
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


def t_ci(values: Sequence[float], confidence: float) -> dict[str, Any]:
    """``{mean, ci, n}`` with a Student-t half-width at ``confidence``."""
    k = len(values)
    mean = statistics.fmean(values) if k else None
    ci = None
    if k >= 2:
        from scipy.special import stdtrit

        ci = float(stdtrit(k - 1, (1 + confidence) / 2) * statistics.stdev(values) / math.sqrt(k))
    return {"mean": mean, "ci": ci, "n": k}


def within(metric: str, rel_pct: float | None, limit: float) -> dict[str, Any]:
    """Check: ``metric`` within ``limit`` percent of the paper."""
    name = f"{metric} within {limit:g} % of the paper"
    if rel_pct is None:
        return {"check": name, "pass": False, "detail": f"{metric}: no value"}
    ok = abs(rel_pct) <= limit
    detail = f"{metric} {rel_pct:+.1f} %" + (
        "" if ok else f", misses by {abs(rel_pct) - limit:.1f} pt"
    )
    return {"check": name, "pass": ok, "detail": detail}


def direction(metric: str, change: float | None, up: bool, against: str) -> dict[str, Any]:
    """Check: ``metric`` changed in the right direction relative to ``against``."""
    name = f"{metric} {'higher' if up else 'lower'} than {against}"
    if change is None:
        return {"check": name, "pass": False, "detail": f"{metric}: no value"}
    ok = change > 0 if up else change < 0
    detail = f"{metric} {change:+.1f} % vs {against}"
    if not ok:
        detail += f", misses by {abs(change):.1f} pt (should {'rise' if up else 'fall'})"
    return {"check": name, "pass": ok, "detail": detail}


def verdict(checks: list[dict[str, Any]]) -> str:
    """``ok`` or ``MISS: ...`` with the details of the failed checks."""
    misses = [c["detail"] for c in checks if not c["pass"]]
    return "ok" if not misses else "MISS: " + "; ".join(misses)


class Runner:
    """Runs the sweeps of a reproduction into ``out/sweeps`` and counts them."""

    def __init__(
        self, out: Path, *, reps: int, jobs: int | None, confidence: float, seed: int
    ) -> None:
        self.out = out
        self.reps = reps
        self.jobs = jobs
        self.confidence = confidence
        self.seed = seed
        self.failed = 0
        self.runs = 0
        self.sweeps: list[str] = []

    def sweep(
        self, name: str, scenario: str, params: dict[str, list[Any]], reps: int | None = None
    ) -> Any:
        """One :func:`linklab.sweep` stored under ``out/sweeps/name`` (``reps``
        replications, default the reproduction's)."""
        import linklab

        out = self.out / "sweeps" / name
        res = linklab.sweep(
            scenario,
            params=params,
            reps=reps or self.reps,
            confidence=self.confidence,
            seed=self.seed,
            jobs=self.jobs,
            out=out,
            progress=False,
        )
        self.failed += res.failed
        self.runs += res.runs.height
        self.sweeps.append(str(out))
        return res

    def rows(
        self, name: str, scenario: str, params: dict[str, list[Any]], reps: int | None = None
    ) -> list[dict[str, Any]]:
        """The summary rows of :meth:`sweep`."""
        return self.sweep(name, scenario, params, reps).summary.to_dicts()

    def figure(self, name: str, make: Callable[[str], Any]) -> str:
        """Call ``make(path)`` for ``out/figures/name.png``; returns the path."""
        path = self.out / "figures" / f"{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        make(str(path))
        return str(path)


def check_out_dir(out: Path, given: str | Path) -> None:
    """Create ``out`` and make sure it is writable, else :class:`ReproduceError`."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise ReproduceError(
            f"cannot write output directory {str(given)!r}: "
            f"{e.strerror or e}; give a writable directory"
        ) from None


def plot_lines(
    lines: dict[str, list[tuple[float, dict[str, Any]]]],
    xlabel: str,
    ylabel: str,
    out: str,
    logx: bool,
    logy: bool = False,
    dashed: Callable[[str], bool] | None = None,
) -> None:
    """One line per entry of ``lines`` (label -> points ``(x, {mean, ci})``), with
    error bars; ``dashed(label)`` picks dashed lines (default: labels naming RTT 1 s)."""
    from linklab.plots import _colors, _new_figure, save_figure

    if dashed is None:

        def dashed(lab: str) -> bool:
            return "1.0" in lab or "RTT 1" in lab

    fig = _new_figure(7.0, 4.5)
    ax = fig.add_subplot(1, 1, 1)
    for (lab, pts), col in zip(lines.items(), _colors(len(lines)), strict=True):
        xs = [x for x, _ in pts]
        ys = [st["mean"] if st["mean"] is not None else math.nan for _, st in pts]
        es = [st["ci"] or 0.0 for _, st in pts]
        style = "--" if dashed(lab) else "-"
        ax.errorbar(xs, ys, yerr=es, fmt=style + "o", ms=3, color=col, capsize=2, label=lab)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    save_figure(fig, out)


def render_text(tables: Sequence[Table]) -> str:
    """The tables as aligned text with their notes."""
    parts = []
    for t in tables:
        rows = [t.headers] + t.cells
        widths = [max(len(r[i]) for r in rows) for i in range(len(t.headers))]
        lines = [t.title, "=" * len(t.title)]
        for i, r in enumerate(rows):
            lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
            if i == 0:
                lines.append("  ".join("-" * w for w in widths))
        lines += [f"  {n}" for n in t.notes]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


_CSS = """
body{font-family:sans-serif;margin:2em;max-width:1200px}
table{border-collapse:collapse;margin:.5em 0 1em}
td,th{border:1px solid #bbb;padding:3px 8px;font-size:90%;text-align:right}
th{background:#eee}
td.ok{background:#dfd}td.miss{background:#fdd;text-align:left}
p.note{color:#444;font-size:90%}
img{max-width:100%;border:1px solid #ddd;margin:4px 0}
"""


def render_html(title: str, intro: Sequence[str], tables: Sequence[Table]) -> str:
    """A self-contained HTML report: ``intro`` paragraphs, then every table with
    its notes and embedded figures; verdict cells coloured."""
    e = html.escape
    out = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>{e(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{e(title)}</h1>",
    ]
    out += [f"<p>{e(p)}</p>" for p in intro]
    for t in tables:
        out.append(f"<h2 id='{e(t.key)}'>{e(t.title)}</h2><table><tr>")
        out += [f"<th>{e(h)}</th>" for h in t.headers]
        out.append("</tr>")
        for cells, v in zip(t.cells, t.verdicts, strict=True):
            out.append("<tr>")
            for i, c in enumerate(cells):
                cls = ""
                if v is not None and i == len(cells) - 1 and t.headers[-1] == "verdict":
                    cls = " class='ok'" if v == "ok" else " class='miss'"
                out.append(f"<td{cls}>{e(c)}</td>")
            out.append("</tr>")
        out.append("</table>")
        out += [f"<p class='note'>{e(n)}</p>" for n in t.notes]
        for f in t.figures:
            data = base64.b64encode(Path(f).read_bytes()).decode("ascii")
            out.append(
                f"<div><img alt='{e(Path(f).name)}' src='data:image/png;base64,{data}'>"
                f"<br><small>{e(Path(f).name)}</small></div>"
            )
    out.append("</body></html>\n")
    return "".join(out)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


@dataclass
class Settings(ABC):
    """How a reproduction runs; each reproduction subclasses it with its
    replications and run lengths (``reps``, ``duration_s``) for full and quick."""

    out: Path
    quick: bool = False
    jobs: int | None = None
    experiments: tuple[str, ...] = ()
    log: Callable[[str], None] = field(default=_stderr)

    @property
    @abstractmethod
    def reps(self) -> int:
        """Replications per point."""

    @property
    @abstractmethod
    def duration_s(self) -> int:
        """Simulated seconds per run."""


S = TypeVar("S", bound=Settings)


def start(
    settings: type[S],
    out: str | Path,
    *,
    quick: bool,
    jobs: int | None,
    experiments: Sequence[str] | None,
    allowed: Sequence[str],
    log: Callable[[str], None] | None,
) -> S:
    """Validate the common arguments (:class:`ReproduceError` if bad), make the
    output directory and return the settings."""
    chosen = tuple(experiments) if experiments else tuple(allowed)
    unknown = [x for x in chosen if x not in allowed]
    if unknown:
        raise ReproduceError(f"unknown experiment {unknown[0]!r}; allowed: " + ", ".join(allowed))
    if jobs is not None and jobs < 1:
        raise ReproduceError(f"invalid jobs {jobs}; allowed: an integer >= 1")
    s = settings(Path(out), quick=quick, jobs=jobs, experiments=chosen)
    if log is not None:
        s.log = log
    check_out_dir(s.out, out)
    return s


def finish(
    name: str,
    s: Settings,
    runner: Runner,
    tables: Sequence[Table],
    *,
    paper: str,
    started: float,
    intro: Sequence[str] = (),
    checks: Sequence[dict[str, Any]] | None = None,
    extra: dict[str, Any] | None = None,
    words: tuple[str, str, str] = ("checks", "passed", "missed"),
) -> tuple[dict[str, Any], str]:
    """The result object of a reproduction, written with the report into
    ``s.out``; returns (result, terminal text). ``checks``: the targets (default:
    every row's ``checks``); ``words``: how the text names them."""
    from linklab import _core

    if checks is None:
        checks = [x for t in tables for row in t.rows for x in row.get("checks", [])]
    passed = sum(bool(x["pass"]) for x in checks)
    result: dict[str, Any] = {
        "reproduction": name,
        "paper": paper,
        "linklab_version": _core.version(),
        "quick": s.quick,
        "experiments": list(s.experiments),
        "reps": s.reps,
        "confidence": runner.confidence,
        "base_seed": runner.seed,
        "duration_s": s.duration_s,
        "runs": runner.runs,
        "failed_runs": runner.failed,
        "wall_time_s": round(time.monotonic() - started, 2),
        "out": str(s.out),
        **(extra or {}),
        "checks": {"passed": passed, "missed": len(checks) - passed},
        "tables": {
            t.key: {"title": t.title, "notes": t.notes, "figures": t.figures, "rows": t.rows}
            for t in tables
        },
        "sweeps": runner.sweeps,
    }
    what, ok, bad = words
    summary = (
        f"{s.reps} replications per point, {round(runner.confidence * 100)} % Student-t "
        f"intervals, base seed {runner.seed}, runs of {s.duration_s} s, "
        f"{'--quick' if s.quick else 'full'}; {runner.runs} runs, {runner.failed} failed; "
        f"{what}: {passed} {ok}, {len(checks) - passed} {bad}; linklab {result['linklab_version']}."
    )
    write_atomic(s.out / "results.json", json.dumps(result, indent=1, allow_nan=False) + "\n")
    write_atomic(
        s.out / "report.html",
        render_html(f"linklab reproduce {name}", [paper, *intro, summary], tables),
    )
    text = render_text(tables) + (
        f"\n{runner.runs} runs ({runner.failed} failed) in {result['wall_time_s']} s; "
        f"{what}: {passed} {ok}, {len(checks) - passed} {bad}; "
        f"report: {s.out / 'report.html'}\n"
    )
    return result, text
