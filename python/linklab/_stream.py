"""A run's traces and captures, piece by piece: to files in bounded memory, or into memory.

The core runs in slices and hands over, after each, the trace rows and pcap bytes
recorded since the previous piece (``_core.run(..., sink=...)``); the pieces of a
table joined in order are the table of the whole run, those of a capture its file.

* Files: trace pieces are gathered into Parquet part files of about
  :data:`PART_BYTES` in a hidden directory inside the trace directory and merged
  into ``<table>.parquet`` by a streaming polars query at the end; pcap pieces are
  appended to a temporary file beside the target. Everything is renamed into place
  only when the run succeeded, so a failed or interrupted run leaves no half file.
* Memory: pieces are kept, up to :data:`TRACE_MEMORY_BUDGET` bytes of traces and
  captures; beyond it the run stops with :class:`TraceBudgetError`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import struct
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from linklab import _core
from linklab._files import Staging
from linklab._tables import file_stem, trace_frame

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "PART_BYTES",
    "TRACE_MEMORY_BUDGET",
    "OutputError",
    "TraceBudgetError",
    "run",
]

#: Most bytes of trace tables and captures a run keeps in memory (``linklab.run``
#: without ``trace_dir``).
TRACE_MEMORY_BUDGET = 1 << 30

#: Trace bytes gathered before they are written out as Parquet part files.
PART_BYTES = 8 << 20


Pieces = dict[str, dict[str, tuple[str, Any]]]


class TraceBudgetError(RuntimeError):
    """The traces and captures of an in-memory run outgrew :data:`TRACE_MEMORY_BUDGET`."""


class OutputError(OSError):
    """A trace or capture file could not be written; ``what`` and ``path`` say which."""

    def __init__(self, what: str, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(f"cannot write {what} {str(path)!r}: {reason}")
        self.what = what
        self.path = str(path)
        self.reason = reason


#: The run's summary in a trace directory (``linklab run --json``'s object).
SUMMARY_FILE = "summary.json"


def run(
    source: str | dict[str, Any],
    *,
    seed: int | None,
    params: dict[str, str] | None,
    trace: bool = False,
    trace_dir: str | os.PathLike[str] | None = None,
    pcap: Sequence[str] = (),
    pcap_files: Mapping[str, str | os.PathLike[str]] | None = None,
    pcap_format: str = "pcap",
    base_dir: str | os.PathLike[str] | None = None,
    histograms: bool = False,
) -> tuple[dict[str, Any], dict[str, pl.DataFrame], dict[str, bytes]]:
    """Run ``source``; returns ``(summary, traces, pcaps)``.

    Traces go to Parquet files in ``trace_dir`` when it is given (``traces`` is
    then empty), else into memory: every table when ``trace`` is set, and the
    ``histograms`` table when ``histograms`` is set or the scenario has a
    ``[histograms]`` table (the core hands over nothing else). ``pcap`` lists link
    specs captured into memory in ``pcap_format`` (``"pcap"`` or ``"pcapng"``;
    ``pcaps`` maps each spec to its file bytes), ``pcap_files`` maps link
    specs (``"A->B"``, ``"A-B"`` for both directions in time order, either
    with ``"@rx"``: where packets leave the link) to files, pcapng for a
    ``.pcapng`` suffix, else classic pcap.
    ``base_dir`` is where relative file names in the scenario (trace files)
    start: the scenario file's directory (default: the current one). Raises
    what ``_core.run`` raises, :class:`TraceBudgetError` when what is kept in
    memory outgrows :data:`TRACE_MEMORY_BUDGET`, and :class:`OutputError` when
    a file cannot be written.
    """
    files = {spec: Path(p) for spec, p in (pcap_files or {}).items()}
    out_dir = Path(trace_dir) if trace_dir is not None else None
    # Without ``trace`` the core hands over only the histograms, when they are on.
    sink = _Sink(out_dir, files, keep_traces=True, keep_pcaps=pcap)
    specs = list(dict.fromkeys([*pcap, *files]))
    ng = {spec for spec, path in files.items() if path.suffix.lower() == ".pcapng"}
    if pcap_format == "pcapng":
        ng.update(pcap)
    elif pcap_format != "pcap":
        raise ValueError(f"pcap_format must be 'pcap' or 'pcapng', not {pcap_format!r}")
    try:
        summary, _, _ = _core.run(
            source,
            seed=seed,
            params=params,
            trace=trace or trace_dir is not None,
            pcap=[s for s in specs if s not in ng],
            pcapng=[s for s in specs if s in ng],
            sink=sink,
            base_dir=None if base_dir is None else os.fspath(base_dir),
            histograms=histograms,
        )
        sink.commit(summary)
    finally:
        sink.discard()
    return summary, sink.memory_traces(), sink.memory_pcaps()


def _last_packet_s(pieces: Sequence[bytes]) -> float | None:
    """The timestamp (s) of the last packet in a capture's pieces (classic pcap with
    nanosecond timestamps or pcapng with nanosecond resolution, as the core writes
    them; each piece holds whole records, the first one the file's header)."""
    if not pieces:
        return None
    ng = pieces[0][:4] == b"\x0a\x0d\x0d\x0a"
    for i in range(len(pieces) - 1, -1, -1):
        piece, last = pieces[i], None
        pos = 0 if ng or i else 24  # the classic global header
        try:
            while pos + 16 <= len(piece):
                if ng:
                    kind, length = struct.unpack_from("<II", piece, pos)
                    if kind == 6:  # an enhanced packet block
                        high, low = struct.unpack_from("<II", piece, pos + 12)
                        last = ((high << 32) | low) / 1e9
                    if length < 12:
                        break
                    pos += length
                else:
                    sec, ns, size = struct.unpack_from("<III", piece, pos)
                    last = sec + ns / 1e9
                    pos += 16 + size
        except struct.error:
            pass
        if last is not None:
            return last
    return None


class _Sink:
    """Receives the pieces of one run (``_core.run``'s ``sink``)."""

    def __init__(
        self,
        trace_dir: Path | None,
        pcap_files: dict[str, Path],
        keep_traces: bool,
        keep_pcaps: Sequence[str],
    ):
        self.trace_dir = trace_dir
        self.keep_traces = keep_traces and trace_dir is None
        self.keep_pcaps = set(keep_pcaps)
        self.pcap_files = pcap_files
        self.kept: dict[str, list[pl.DataFrame]] = {}
        self.kept_pcaps: dict[str, list[bytes]] = {}
        self.kept_bytes = 0
        self.last_time = 0.0
        # Files.
        self.parts_dir: Path | None = None
        self.made_trace_dir = False
        self.pending: dict[str, list[pl.DataFrame]] = {}
        self.pending_bytes = 0
        self.parts: dict[str, list[Path]] = {}
        self.pcap_out: dict[str, tuple[Path, IO[bytes]]] = {}

    def __call__(self, traces: Pieces, pcaps: dict[str, bytes]) -> None:
        for name, columns in traces.items():
            frame = trace_frame(columns)
            if frame.height and "time_s" in frame.columns:
                self.last_time = max(self.last_time, float(frame.get_column("time_s")[-1]))
            if self.trace_dir is not None:
                self.pending.setdefault(name, []).append(frame)
                self.pending_bytes += frame.estimated_size()
            elif self.keep_traces or name == "fct":
                # A workload run's flow-completion table is kept traced or not.
                self.kept.setdefault(name, []).append(frame)
                self.kept_bytes += frame.estimated_size()
        if self.pending_bytes >= PART_BYTES:
            self._write_parts()
        for spec, data in pcaps.items():
            if spec in self.keep_pcaps:
                self.kept_pcaps.setdefault(spec, []).append(data)
                self.kept_bytes += len(data)
        for spec, path in self.pcap_files.items():
            self._append_pcap(spec, path, pcaps)
        if self.kept_bytes > TRACE_MEMORY_BUDGET:
            # The simulated time reached: the traces' last row, or the last packet
            # of a capture (a run that keeps only captures has no trace rows).
            times = [self.last_time] if self.kept else []
            captured = (_last_packet_s(parts) for parts in self.kept_pcaps.values())
            times += [t for t in captured if t is not None]
            when = f" by simulated time {max(times):.6g} s" if times else ""
            raise TraceBudgetError(
                f"the traces and captures kept in memory reached {_size(self.kept_bytes)}{when}, "
                f"over the {_size(TRACE_MEMORY_BUDGET)} "
                "budget of an in-memory run (linklab._stream.TRACE_MEMORY_BUDGET); stream them "
                "to disk instead with linklab.run(..., trace_dir='DIR') or 'linklab run --trace "
                "DIR --pcap LINK:FILE', or shorten the run"
            )

    # -- memory -------------------------------------------------------------

    def memory_traces(self) -> dict[str, pl.DataFrame]:
        if not self.kept:
            return {}  # without importing polars (~50 MiB)
        import polars as pl

        return {name: pl.concat(frames) for name, frames in self.kept.items()}

    def memory_pcaps(self) -> dict[str, bytes]:
        return {link: b"".join(parts) for link, parts in self.kept_pcaps.items()}

    # -- files --------------------------------------------------------------

    def _write_parts(self) -> None:
        if not self.pending:
            return
        assert self.trace_dir is not None
        try:
            if self.parts_dir is None:
                self.made_trace_dir = not self.trace_dir.exists()
                self.trace_dir.mkdir(parents=True, exist_ok=True)
                self.parts_dir = Path(tempfile.mkdtemp(dir=self.trace_dir, prefix=".linklab-"))
            import polars as pl

            for name, frames in self.pending.items():
                paths = self.parts.setdefault(name, [])
                path = self.parts_dir / f"{file_stem(name)}-{len(paths):06d}.parquet"
                pl.concat(frames, rechunk=False).write_parquet(path)
                paths.append(path)
        except OSError as e:
            raise OutputError("trace directory", self.trace_dir, e.strerror or str(e)) from None
        self.pending.clear()
        self.pending_bytes = 0

    def _append_pcap(self, spec: str, path: Path, pcaps: dict[str, bytes]) -> None:
        data = pcaps.get(spec)
        if data is None:
            raise _core.InternalError(f"the core returned no capture of {spec}")
        try:
            if spec not in self.pcap_out:
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
                self.pcap_out[spec] = (Path(tmp), os.fdopen(fd, "wb"))
            self.pcap_out[spec][1].write(data)
        except OSError as e:
            raise OutputError("pcap file", path, e.strerror or str(e)) from None

    def commit(self, summary: dict[str, Any] | None = None) -> None:
        """Publish every file (called once the run succeeded); a trace directory also
        gets the run's ``summary`` as :data:`SUMMARY_FILE` (what ``plot-trace`` titles
        and labels its figure with)."""
        target = ("trace directory", self.trace_dir)
        try:
            if self.trace_dir is not None:
                self._write_parts()
                self.trace_dir.mkdir(parents=True, exist_ok=True)
            with Staging() as staged:
                for name, parts in self.parts.items() if self.trace_dir is not None else ():
                    staged.add(
                        self.trace_dir / f"{file_stem(name)}.parquet",
                        lambda tmp, parts=parts: _merge_parts(parts, tmp),
                    )
                if self.trace_dir is not None and summary is not None:
                    text = json.dumps(summary, sort_keys=True)
                    staged.add_bytes(self.trace_dir / SUMMARY_FILE, text.encode())
                for spec, (tmp, out) in self.pcap_out.items():
                    target = ("pcap file", self.pcap_files[spec])
                    out.flush()
                    os.fsync(out.fileno())
                    out.close()
                    staged.add(self.pcap_files[spec], lambda t, tmp=tmp: os.replace(tmp, t))
                staged.commit()
        except OSError as e:
            raise OutputError(target[0], target[1], e.strerror or str(e)) from None

    def discard(self) -> None:
        """Remove every temporary file (after a commit, or a failure)."""
        for tmp, out in self.pcap_out.values():
            out.close()
            with contextlib.suppress(OSError):
                tmp.unlink()
        self.pcap_out.clear()
        if self.parts_dir is not None:
            shutil.rmtree(self.parts_dir, ignore_errors=True)
            self.parts_dir = None
            if self.made_trace_dir and self.trace_dir is not None:
                with contextlib.suppress(OSError):
                    self.trace_dir.rmdir()  # only if the run left it empty


def _merge_parts(parts: list[Path], out: Path) -> None:
    """Join Parquet part files into ``out`` without loading them all."""
    import polars as pl

    if len(parts) == 1:
        os.replace(parts[0], out)
    else:
        pl.scan_parquet(parts, glob=False).sink_parquet(out)


def _size(n: int) -> str:
    return f"{n / (1 << 30):.2f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.1f} MiB"
