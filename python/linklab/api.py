"""The Python API: run a scenario, get a summary, polars traces and pcaps."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linklab import _checks, _pcap, _stream, _summary_tables
from linklab._files import Staging
from linklab._inputs import check_seed, params_to_strings
from linklab._scenario import Source, load_source, source_file
from linklab._tables import file_stem as _file_stem
from linklab._tables import trace_frame as _frame  # noqa: F401  (tests, linklab.check)
from linklab.errors import ScenarioError, for_api, short_repr

if TYPE_CHECKING:  # numpy and polars cost ~70 MB: imported only when traces exist
    import polars as pl

__all__ = ["Result", "TraceBudgetError", "load_source", "params_to_strings", "run", "run_source"]

#: Raised when an in-memory run's traces and captures outgrow the budget.
TraceBudgetError = _stream.TraceBudgetError


@dataclass(frozen=True)
class Result:
    """What one run produced.

    ``summary``: the run summary (see ``docs/metrics.md``), including
    ``wall_time_s``; ``warnings``: what the summary hides, one line each;
    ``traces``: trace tables by name (empty unless the run
    asked for traces or histograms); ``pcaps``: capture file bytes by link spec (``"A->B"``,
    ``"A-B"``, ``"A->B@rx"``).
    """

    summary: dict[str, Any]
    traces: dict[str, pl.DataFrame] = field(default_factory=dict, repr=False)
    pcaps: dict[str, bytes] = field(default_factory=dict, repr=False)

    @property
    def warnings(self) -> list[str]:
        """What the numbers alone would hide, one line each (``linklab run`` prints
        them on stderr): e.g. that the receive window, not the congestion
        control, limited every flow for most of the run (``docs/metrics.md``,
        "Warnings"). Empty when there is nothing to say."""
        return _checks.warnings(self.summary)

    @property
    def flows(self) -> pl.DataFrame:
        """The summary's flows, one row each: ``name``, ``id``, ``from``, ``to`` first,
        nested objects flattened into columns (``send_limits_busy_s``,
        ``account_data_dropped``; ``docs/metrics.md``), every column a real dtype."""
        return _summary_tables.flat_table(self.summary.get("flows"), _summary_tables.FIRST["flows"])

    @property
    def fct(self) -> pl.DataFrame:
        """The workload flows, one row each (``docs/metrics.md``, "Workloads"):
        ``workload``, ``flow``, ``from``, ``to``, ``size_bytes``, ``start_s``,
        ``fct_s``, ``ideal_s``, ``slowdown`` (null while unfinished),
        ``retransmits``, ``timeouts``. Empty when the scenario has no workloads or
        the run streamed its tables to a trace directory (``fct.parquet`` there)."""
        from linklab import _fct

        return _fct.fct_frame(self.traces)

    @property
    def links(self) -> pl.DataFrame:
        """The summary's link directions, one row each (``name`` first, flattened)."""
        return _summary_tables.flat_table(self.summary.get("links"), _summary_tables.FIRST["links"])

    @property
    def queues(self) -> pl.DataFrame:
        """The summary's queues, one row per link direction (``link``, ``kind`` first;
        ``drops`` as ``drops_overflow``, ``drops_aqm_early``, …)."""
        return _summary_tables.flat_table(
            self.summary.get("queues"), _summary_tables.FIRST["queues"]
        )

    @property
    def histograms(self) -> pl.DataFrame:
        """Every flow's delay and jitter histograms, one row per non-empty bin: ``flow``,
        ``metric`` (``delay``, ``jitter``), ``bin``, ``start_s``, ``width_s``, ``count``
        (ns-3 FlowMonitor's fixed-width bins; ``docs/metrics.md``). The run must have
        asked for them: ``linklab.run(..., histograms=True)`` or a ``[histograms]`` table
        in the scenario; otherwise ``KeyError``."""
        frame = self.traces.get("histograms")
        if frame is None:
            raise KeyError(
                "this run kept no histograms; run with linklab.run(..., histograms=True) "
                "or give the scenario a [histograms] table"
            )
        return frame

    @property
    def media(self) -> pl.DataFrame:
        """The summary's media streams (``[[media]]``), one row each: ``name``, ``id``,
        ``kind``, ``from``, ``to`` first; delay quantiles, RFC 3550 ``jitter_s``,
        ``loss_pct``, ``late_pct``, and for voice the E-model as ``emodel_r``,
        ``emodel_mos``, ``emodel_ta_ms``, … (``docs/metrics.md``). Empty when the
        scenario has no media."""
        return _summary_tables.flat_table(self.summary.get("media"), _summary_tables.FIRST["media"])

    def __repr__(self) -> str:
        s = self.summary
        a = s.get("aggregate") or {}
        goodput = a.get("goodput_bps")
        traces = ", ".join(f"{k} ({v.height} rows)" for k, v in self.traces.items()) or "none"
        pcaps = ", ".join(f"{k} ({len(v):,} B)" for k, v in self.pcaps.items()) or "none"
        return (
            f"<linklab.Result {s.get('scenario') or 'scenario'!r} seed {s.get('seed')}: "
            f"{len(s.get('flows') or [])} flows, {len(s.get('links') or [])} link directions, "
            f"goodput {'-' if goodput is None else f'{goodput / 1e6:.3f} Mbit/s'}, "
            f"simulated {s.get('sim_time_s', 0):g} s; traces: {traces}; pcaps: {pcaps}>"
        )

    def _repr_html_(self) -> str:
        """A notebook cell's view: the header and the flows' table."""
        from linklab._html import escape

        cols = ("name", "goodput_bps", "delay_mean_s", "retransmits", "timeouts")
        head = "".join(f"<th>{escape(c)}</th>" for c in cols)
        rows = "".join(
            "<tr>" + "".join(f"<td>{escape(_cell(f.get(c)))}</td>" for c in cols) + "</tr>"
            for f in (self.summary.get("flows") or [])[:50]
        )
        more = len(self.summary.get("flows") or []) - 50
        note = f"<p>… {more} more flows (r.flows)</p>" if more > 0 else ""
        return f"<p>{escape(repr(self))}</p><table><tr>{head}</tr>{rows}</table>{note}"

    def write_traces(self, directory: str | os.PathLike[str]) -> list[Path]:
        """Write one Parquet file per trace table into ``directory`` (created if missing).

        Files are named ``<table>.parquet``. All files are written to temporaries
        first and renamed into place only when every one was written, so a
        failure leaves existing files untouched. Returns the paths written.
        """
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        with Staging() as staged:
            for name, frame in self.traces.items():
                staged.add(out / f"{_file_stem(name)}.parquet", frame.write_parquet)
            return staged.commit()

    def pcap(self, link: str) -> bytes:
        """The capture of ``link`` as pcap file bytes.

        ``"A-B"`` (both directions) is the time-ordered merge of ``"A->B"`` and
        ``"B->A"`` when the core returned them separately.
        """
        if link in self.pcaps:
            return self.pcaps[link]
        if "->" not in link and "-" in link:
            a, b = link.split("-", 1)
            ab, ba = f"{a}->{b}", f"{b}->{a}"
            if ab in self.pcaps and ba in self.pcaps:
                return _pcap.merge([self.pcaps[ab], self.pcaps[ba]])
        have = ", ".join(sorted(self.pcaps)) or "none"
        raise KeyError(f"no capture for link {short_repr(link)}; captured: {have}")

    def write_pcap(self, link: str, path: str | os.PathLike[str]) -> Path:
        """Write the capture of ``link`` (see :meth:`pcap`) to ``path`` atomically."""
        data = self.pcap(link)
        with Staging() as staged:
            staged.add_bytes(path, data)
            return staged.commit()[0]


def run(
    scenario: str | os.PathLike[str] | Mapping[str, Any],
    seed: int | None = None,
    params: Mapping[str, object] | None = None,
    trace: bool = False,
    pcap: Sequence[str] | None = None,
    trace_dir: str | os.PathLike[str] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    pcap_format: str = "pcap",
    histograms: bool = False,
) -> Result:
    """Run one scenario.

    ``scenario`` is a path to a TOML file, TOML text, or a dict shaped like the
    TOML file. A ``str`` is TOML text when it spans several lines, or contains
    ``=`` while naming no existing file and not ending in ``.toml``; any other
    ``str`` is a path (``pathlib.Path`` always is). ``seed`` overrides the
    scenario's seed; ``params`` override ``[params]`` (a dict of name to str,
    number or bool; booleans are passed as ``true``/``false``); ``trace``
    records trace tables; ``pcap`` lists links to capture (``"A->B"`` one
    direction, ``"A-B"`` both, in one file in time order; packets are captured
    where they enter the link, or with ``"@rx"`` appended, e.g. ``"A->B@rx"``,
    where they leave it), as ``pcap_format`` files: ``"pcap"`` (classic,
    nanosecond timestamps) or ``"pcapng"`` (one interface per link direction,
    named after it, and node names for the addresses). ``histograms`` keeps
    every flow's delay and jitter histograms (``Result.histograms``, the
    ``histograms`` trace table) with the scenario's ``[histograms]`` bin widths
    or 1 ms (a scenario with ``[histograms]`` has them anyway).

    Traces and captures are kept in memory up to
    ``linklab._stream.TRACE_MEMORY_BUDGET`` (1 GiB); a run that records more
    stops with ``TraceBudgetError``. With ``trace_dir`` the traces are
    streamed to ``<table>.parquet`` files in that directory instead, in
    bounded memory (``Result.traces`` is then empty).

    Relative file names in the scenario (``trace = "FILE"`` links) start from
    ``base_dir``; by default the scenario file's directory, or the current
    directory for TOML text and dicts.

    Raises ``ScenarioError`` (a ``ValueError``) for a scenario that cannot be
    run, including a dict of the wrong shape (a value inside itself, nested
    deeper than 32 levels, a non-str key, a value that is not str, int, float,
    bool, list or dict); ``ScenarioFileError`` (an ``OSError``) if the file
    cannot be read (missing, a directory, not a regular file, above 64 MiB, not
    UTF-8) or a trace file cannot be written; ``TypeError``/``ValueError`` for a
    bad ``seed``, ``params`` or ``pcap`` argument.
    """
    overrides = params_to_strings(params)  # argument errors before reading a file
    file = source_file(scenario)
    if base_dir is None and file is not None:
        base_dir = os.path.dirname(os.path.abspath(file))
    return run_source(
        load_source(scenario),
        base_dir=base_dir,
        seed=seed,
        params=overrides,
        trace=trace,
        pcap=pcap,
        pcap_format=pcap_format,
        trace_dir=trace_dir,
        histograms=histograms,
    )


def run_source(
    source: Source,
    *,
    seed: int | None = None,
    params: Mapping[str, object] | None = None,
    trace: bool = False,
    pcap: Sequence[str] | None = None,
    trace_dir: str | os.PathLike[str] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    pcap_format: str = "pcap",
    histograms: bool = False,
) -> Result:
    """Like :func:`run`, for a source already loaded by :func:`load_source`.

    A ``str`` is TOML text here, never a path; a dict is checked again.
    Relative file names in the scenario (trace files) start from
    ``base_dir`` (default: the current directory).
    """
    if not isinstance(source, str):
        source = load_source(source)
    if seed is not None:
        seed = check_seed(seed)
    if pcap_format not in ("pcap", "pcapng"):
        raise ValueError(f"pcap_format must be 'pcap' or 'pcapng', not {short_repr(pcap_format)}")
    try:
        summary, traces, pcaps = _stream.run(
            source,
            seed=seed,
            params=params_to_strings(params) or None,
            trace=bool(trace),
            trace_dir=trace_dir,
            pcap=_check_pcap(pcap) or [],
            pcap_format=pcap_format,
            base_dir=base_dir,
            histograms=bool(histograms),
        )
    except ScenarioError as e:
        raise for_api(e) from None
    return Result(summary=summary, traces=traces, pcaps=pcaps)


def _check_pcap(pcap: Sequence[str] | None) -> list[str] | None:
    if pcap is None:
        return None
    if isinstance(pcap, str):
        raise TypeError("pcap must be a list of link specs such as ['A->B'], not a str")
    return [str(link) for link in pcap]


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "" if value is None else str(value)
