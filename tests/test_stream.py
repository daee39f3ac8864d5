"""Traces and captures in bounded memory: streamed to files, or kept under a budget."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import linklab
from conftest import cli_env
from linklab import _stream

REPO = Path(__file__).resolve().parents[1]
DUMBBELL = (REPO / "scenarios" / "dumbbell-red-ecn.toml").read_text()
LT_TCP = (REPO / "scenarios" / "dumbbell-lt-tcp.toml").read_text()


def _tables(directory: Path) -> dict[str, pl.DataFrame]:
    return {p.stem: pl.read_parquet(p) for p in sorted(directory.glob("*.parquet"))}


def _dumbbell_to_files(duration: str, trace_dir: Path, pcap: Path) -> None:
    """The dumbbell with traces to ``trace_dir`` and the L-R capture to ``pcap``."""
    _stream.run(
        DUMBBELL,
        seed=1,
        params={"duration": duration},
        trace_dir=trace_dir,
        pcap_files={"L-R": pcap},
    )


def test_streamed_files_equal_the_in_memory_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tiny parts: many part files per table, merged at the end.
    monkeypatch.setattr(_stream, "PART_BYTES", 64 << 10)
    params = {"flows": "3", "duration": "8s", "per": "0.05"}
    out = tmp_path / "trace"
    files = {"L-R": tmp_path / "lr.pcap", "R->L": tmp_path / "rl.pcap"}
    summary, traces, pcaps = _stream.run(
        LT_TCP, seed=3, params=params, trace_dir=out, pcap_files=files, histograms=True
    )
    assert traces == {} and pcaps == {}
    assert sorted(p.name for p in out.iterdir()) == [
        "cwnd.parquet",
        "drops.parquet",
        "histograms.parquet",
        "lt_blocks.parquet",
        "lt_erasure.parquet",
        "queue.parquet",
        "rto.parquet",
        "rtt.parquet",
        "seq.parquet",
        "summary.json",  # the run's summary, beside its traces
    ], "no part files or temporaries left"
    assert json.loads((out / "summary.json").read_text()) == summary
    mem = linklab.run(
        LT_TCP, seed=3, params=params, trace=True, pcap=["L-R", "R->L"], histograms=True
    )
    on_disk = _tables(out)
    assert on_disk.keys() == mem.traces.keys()
    for name, frame in mem.traces.items():
        # This LT-TCP run may have no timer expiry: rto may be empty (its rows: below).
        assert frame.height > 0 or name == "rto", name
        assert_frame_equal(on_disk[name], frame)
    assert sum(f["timeouts"] for f in summary["flows"]) == mem.traces["rto"].height
    assert files["L-R"].read_bytes() == mem.pcap("L-R")
    assert files["R->L"].read_bytes() == mem.pcap("R->L")
    for k in ("wall_time_s", "hops_per_s"):
        summary.pop(k)
        mem.summary.pop(k)
    assert summary == mem.summary


def test_a_long_run_streams_the_prefix_of_a_short_one(tmp_path: Path) -> None:
    long_dir = tmp_path / "long"
    pcap = tmp_path / "long.pcap"
    _dumbbell_to_files("40s", long_dir, pcap)
    short = linklab.run(DUMBBELL, params={"duration": "10s"}, trace=True, pcap=["L-R"])
    long = _tables(long_dir)
    for name, frame in short.traces.items():
        # Links record queue changes lazily: compare well before the short run's end.
        cut = pl.col("time_s") < 9.0
        assert_frame_equal(long[name].filter(cut), frame.filter(cut))
    data = short.pcap("L-R")
    assert len(data) > 100_000
    assert pcap.read_bytes()[: len(data)] == data


def test_a_long_traced_run_stays_in_bounded_memory(tmp_path: Path) -> None:
    """Peak RSS of a CLI run with traces and a capture (kept in memory, it needs >1 GiB)."""
    probe = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    args = [
        *[sys.executable, "-c", probe, sys.executable, "-m", "linklab", "run"],
        *[str(REPO / "scenarios" / "dumbbell-red-ecn.toml"), "--set", "duration=200s"],
        *["--trace", str(tmp_path / "t"), "--pcap", f"L-R:{tmp_path / 'lr.pcap'}"],
    ]
    done = subprocess.run(args, capture_output=True, text=True, env=cli_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    peak_mib = int(done.stdout.strip()) / 1024
    assert (tmp_path / "lr.pcap").stat().st_size > 40 << 20
    assert pl.scan_parquet(tmp_path / "t" / "queue.parquet").select(pl.len()).collect().item() > (
        3_000_000
    )
    assert peak_mib < 512, f"peak RSS {peak_mib:.0f} MiB"


def test_an_in_memory_run_over_the_budget_stops_with_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_stream, "TRACE_MEMORY_BUDGET", 8 << 20)
    with pytest.raises(linklab.api.TraceBudgetError) as e:
        linklab.run(DUMBBELL, params={"duration": "100000s"}, trace=True)
    text = str(e.value)
    assert "over the 8.0 MiB budget" in text and "trace_dir=" in text, text
    # Captures count too; a run that keeps only captures says the simulated time
    # its last captured packet reached (it said "by simulated time 0 s": issue 34).
    for fmt in ("pcap", "pcapng"):
        with pytest.raises(linklab.api.TraceBudgetError) as e:
            linklab.run(DUMBBELL, params={"duration": "100000s"}, pcap=["L-R"], pcap_format=fmt)
        found = re.search(r"by simulated time ([0-9.e+]+) s", str(e.value))
        assert found and 1 < float(found.group(1)) < 100_000, (fmt, str(e.value))
    # Within the budget nothing changes.
    r = linklab.run(DUMBBELL, params={"duration": "2s"}, trace=True)
    assert r.traces["seq"].height > 0


def test_linklab_run_accepts_a_trace_directory(tmp_path: Path) -> None:
    r = linklab.run(DUMBBELL, params={"duration": "3s"}, trace_dir=tmp_path / "t")
    assert r.traces == {}
    assert set(_tables(tmp_path / "t")) == {"cwnd", "drops", "queue", "rto", "rtt", "seq"}


def test_a_failed_run_leaves_no_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_stream, "PART_BYTES", 64 << 10)
    out = tmp_path / "trace"
    out.mkdir()
    (out / "seq.parquet").write_bytes(b"old")
    calls = []
    real = pl.DataFrame.write_parquet

    def failing(self: pl.DataFrame, *args: object, **kwargs: object) -> None:
        calls.append(1)
        if len(calls) > 6:
            raise OSError(28, "No space left on device")
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pl.DataFrame, "write_parquet", failing)
    pcap = tmp_path / "lr.pcap"
    with pytest.raises(_stream.OutputError) as e:
        _dumbbell_to_files("20s", out, pcap)
    assert e.value.what == "trace directory" and "No space left" in str(e.value)
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["seq.parquet"]
    assert (out / "seq.parquet").read_bytes() == b"old"


def test_cli_trace_and_pcap_stream_to_files(tmp_path: Path) -> None:
    out = tmp_path / "t"
    args = [sys.executable, "-m", "linklab", "run", str(REPO / "scenarios/dumbbell-red-ecn.toml")]
    done = subprocess.run(
        [*args, "--set", "duration=5s", "--json", "--trace", str(out), "--pcap", "L->R:x.pcap"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=cli_env(),
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["sim_time_s"] == 5.0
    assert (tmp_path / "x.pcap").stat().st_size > 24
    assert {p.name for p in out.iterdir()} == {
        "cwnd.parquet",
        "drops.parquet",
        "queue.parquet",
        "rto.parquet",
        "rtt.parquet",
        "seq.parquet",
        "summary.json",
    }


def test_a_run_without_traces_does_not_import_polars() -> None:
    code = (
        "import sys, linklab\n"
        f"linklab.run({str(REPO / 'scenarios' / 'dumbbell-red-ecn.toml')!r},"
        " params={'duration': '1s'})\n"
        "assert 'polars' not in sys.modules, 'polars imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
