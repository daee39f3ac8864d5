"""The Python API and the binding."""

from __future__ import annotations

import os
import struct
import threading
import tomllib
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import linklab
from conftest import PCAP_NS_MAGIC, TINY
from linklab import _core
from linklab._scenario import MAX_DEPTH, MAX_FILE_BYTES, is_path, overlay
from linklab.api import Result, _frame, load_source, params_to_strings
from linklab.cli import _assignment, _pcap_spec
from linklab.errors import ScenarioFileError, one_line

# --- no core needed ---------------------------------------------------------


def test_exports() -> None:
    assert issubclass(linklab.ScenarioError, ValueError)
    assert issubclass(linklab.InternalError, RuntimeError)
    assert linklab.ScenarioError is _core.ScenarioError
    assert linklab.__version__ == _core.version()
    assert isinstance(linklab.json_schema(), str)


def test_params_to_strings() -> None:
    got = params_to_strings({"a": True, "b": False, "c": 0.25, "d": 3, "e": "10Mbit"})
    assert got == {"a": "true", "b": "false", "c": "0.25", "d": "3", "e": "10Mbit"}


def test_load_source(tmp_path: Path, tiny: Path) -> None:
    assert load_source(tiny) == TINY
    assert load_source(str(tiny)) == TINY
    assert load_source(TINY) == TINY
    assert load_source({"name": "x"}) == {"name": "x"}
    with pytest.raises(ScenarioFileError, match="missing.toml.*No such file"):
        load_source(str(tmp_path / "missing.toml"))
    with pytest.raises(TypeError):
        load_source(42)  # type: ignore[arg-type]


def test_str_path_or_toml() -> None:
    """How a str is told apart: TOML when multi-line, or with '=' and naming no file."""
    assert is_path("/nonexistent") and is_path("/tmp") and is_path("scenario")
    assert is_path("runs/per=0.1.toml")  # '=' in a name ending in .toml
    assert not is_path('duration = "2s"') and not is_path("name = 'x'\n")
    assert not is_path("") and not is_path("  ")


@pytest.mark.parametrize(
    ("scenario", "needles"),
    [
        ("/nonexistent", ["'/nonexistent'", "No such file"]),
        ("/tmp", ["'/tmp'", "is a directory"]),
        (Path("/tmp"), ["is a directory"]),
        ("/dev/zero", ["not a regular file", "character device"]),
        ("/dev/null", ["not a regular file"]),
    ],
)
def test_unreadable_scenario_files(scenario: str | Path, needles: list[str]) -> None:
    with pytest.raises(ScenarioFileError) as info:
        linklab.run(scenario)
    assert isinstance(info.value, OSError)
    text = str(info.value)
    assert "\n" not in text and text.endswith("; give a TOML scenario file")
    for needle in needles:
        assert needle in text, text


def test_fifo_and_oversized_files_are_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)  # opening it for reading must not wait for a writer
    with pytest.raises(ScenarioFileError, match="FIFO"):
        load_source(fifo)
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk use, never read
    with pytest.raises(ScenarioFileError, match="allowed: at most 64 MiB"):
        load_source(big)


def _self_dict() -> dict[str, Any]:
    d: dict[str, Any] = {"duration": "2s"}
    d["self"] = d
    return d


def _self_list() -> dict[str, Any]:
    x: list[Any] = []
    x.append(x)
    return {"duration": "2s", "links": x}


def _deep(n: int) -> dict[str, Any]:
    d: dict[str, Any] = {}
    cur = d
    for _ in range(n):
        cur["x"] = {}
        cur = cur["x"]
    return d


@pytest.mark.parametrize(
    ("make", "path", "needle"),
    [
        (_self_dict, "self", "contains itself"),
        (_self_list, "links[0]", "contains itself"),
        (lambda: _deep(11_000), "x.x.x", f"more than {MAX_DEPTH} levels"),
        (lambda: {"a": [{1: 2}]}, "a[0]", "keys must be str"),
        (lambda: {"a": None}, "a", "allowed: str, int, float, bool, list"),
        (lambda: {"a": {"b": b"x"}}, "a.b", "not a scenario value"),
        (lambda: {"seed": 2**64}, "seed", "64-bit"),
    ],
)
def test_bad_dict_shape_is_a_scenario_error(make: Any, path: str, needle: str) -> None:
    """Checked in Python before the core sees it (these crashed the binding)."""
    with pytest.raises(linklab.ScenarioError) as info:
        linklab.run(make())
    assert info.value.path.startswith(path), info.value.path
    assert needle in info.value.message
    assert "\n" not in str(info.value) and len(str(info.value)) < 300


def test_shared_subtables_are_fine() -> None:
    """A dict used twice (not inside itself) is a plain tree to the loader."""
    queue = {"kind": "droptail", "limit": "100p"}
    doc = tomllib.loads(TINY)
    doc["links"][0]["queue"] = queue
    doc["links"].append({"a": "B", "b": "C", "rate": "1Mbit", "queue": queue})
    loaded = load_source(doc)
    assert loaded["links"][0]["queue"] == loaded["links"][1]["queue"] == queue


@pytest.mark.parametrize("params", [["per=0.1"], "per=0.1", 5])
def test_params_must_be_a_dict(tiny: Path, params: Any) -> None:
    with pytest.raises(TypeError, match="params must be a dict"):
        linklab.run(tiny, params=params)


def test_param_values_must_be_scalars(tiny: Path) -> None:
    with pytest.raises(TypeError, match=r"params\['per'\] is a NoneType"):
        linklab.run(tiny, params={"per": None})


def test_overlay_sets_and_removes_key_paths() -> None:
    doc = tomllib.loads(TINY)
    out = overlay(doc, {"params.ts": True, "links[0].ab": {"loss": 0.5}, "tcp.variant": None})
    assert out["params"] == {"per": 0.0, "ts": True}
    assert out["links"][0]["ab"] == {"loss": 0.5} and "variant" not in out["tcp"]
    assert doc == tomllib.loads(TINY)  # the original is untouched
    with pytest.raises(ValueError, match="malformed key path"):
        overlay(doc, {"links[x]": 1})


def test_bad_seed() -> None:
    with pytest.raises(ValueError):
        linklab.run(TINY, seed=-1)
    with pytest.raises(ValueError):
        linklab.run(TINY, seed=2**64)
    with pytest.raises(TypeError):
        linklab.run(TINY, seed=1.0)  # type: ignore[arg-type]


def test_scenario_error_carries_path_and_message() -> None:
    with pytest.raises(linklab.ScenarioError) as info:
        linklab.run({"name": "x", "links": [{"a": None}]})
    assert isinstance(info.value.path, str)
    assert info.value.message
    assert isinstance(info.value, ValueError)


def test_binding_rejects_wrong_source_type() -> None:
    with pytest.raises(TypeError):
        _core.run(3)  # type: ignore[arg-type]


def test_frame_from_binding_columns() -> None:
    cols: dict[str, tuple[str, Any]] = {
        "t": ("f64", struct.pack("<3d", 0.0, 0.5, 1.25)),
        "n": ("u64", struct.pack("<3Q", 1, 2, 2**64 - 1)),
        "s": ("str", ["a", "b", "c"]),
    }
    frame = _frame(cols)
    assert frame.schema == pl.Schema({"t": pl.Float64, "n": pl.UInt64, "s": pl.String})
    assert frame["t"].to_list() == [0.0, 0.5, 1.25]
    assert frame["n"].to_list() == [1, 2, 2**64 - 1]
    empty = _frame({"t": ("f64", b""), "s": ("str", [])})
    assert empty.schema == pl.Schema({"t": pl.Float64, "s": pl.String})


@given(st.lists(st.floats(allow_nan=False)), st.lists(st.integers(0, 2**64 - 1)))
def test_frame_roundtrip(floats: list[float], ints: list[int]) -> None:
    f = _frame({"x": ("f64", struct.pack(f"<{len(floats)}d", *floats))})
    assert f["x"].to_list() == floats
    u = _frame({"x": ("u64", struct.pack(f"<{len(ints)}Q", *ints))})
    assert u["x"].to_list() == ints


@given(st.text(min_size=1).filter(lambda s: "=" not in s and s.strip()), st.text())
def test_set_parsing(name: str, value: str) -> None:
    assert _assignment(f"{name}={value}") == (name.strip(), value)


@given(st.text(min_size=1), st.text(min_size=1).filter(lambda s: ":" not in s))
def test_pcap_spec_splits_on_last_colon(link: str, file: str) -> None:
    assert _pcap_spec(f"{link}:{file}") == (link, file)


def test_one_line_folds_toml_excerpts() -> None:
    msg = (
        "TOML parse error at line 2, column 12\n  |\n2 | duration = \n  |            ^\n"
        "string values must be quoted, expected literal string\n"
    )
    assert one_line(msg) == (
        "TOML parse error at line 2, column 12: "
        "string values must be quoted, expected literal string"
    )


def test_pcap_merge() -> None:
    def cap(*stamps: tuple[int, int, bytes]) -> bytes:
        head = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 101)
        recs = b"".join(struct.pack("<IIII", s, ns, len(p), len(p)) + p for s, ns, p in stamps)
        return head + recs

    ab = cap((0, 5, b"a1"), (1, 0, b"a2"))
    ba = cap((0, 5, b"b1"), (0, 7, b"b2"))
    result = Result(summary={}, pcaps={"A->B": ab, "B->A": ba})
    assert result.pcap("A->B") == ab
    assert result.pcap("A-B") == cap((0, 5, b"a1"), (0, 5, b"b1"), (0, 7, b"b2"), (1, 0, b"a2"))
    with pytest.raises(KeyError):
        result.pcap("A-C")


def test_write_traces_atomic(tmp_path: Path) -> None:
    frames = {
        "cwnd": pl.DataFrame({"t": [0.0, 1.0], "cwnd": [10, 20]}),
        "queue": pl.DataFrame({"t": [0.5], "len": [3]}),
    }
    result = Result(summary={}, traces=frames)
    written = result.write_traces(tmp_path / "out")
    assert sorted(p.name for p in written) == ["cwnd.parquet", "queue.parquet"]
    assert pl.read_parquet(tmp_path / "out" / "cwnd.parquet").equals(frames["cwnd"])

    # A failure while writing leaves what was there and no temporaries.
    (tmp_path / "out" / "queue.parquet").unlink()
    (tmp_path / "out" / "queue.parquet").mkdir()  # os.replace onto a directory fails
    before = (tmp_path / "out" / "cwnd.parquet").read_bytes()
    changed = Result(summary={}, traces={k: v.head(1) for k, v in frames.items()})
    with pytest.raises(OSError):
        changed.write_traces(tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "cwnd.parquet",
        "queue.parquet",
    ]
    # cwnd may be replaced whole or not at all; never half-written.
    after = (tmp_path / "out" / "cwnd.parquet").read_bytes()
    assert after == before or pl.read_parquet(tmp_path / "out" / "cwnd.parquet").height == 1


# --- need the working core --------------------------------------------------


def test_run_returns_result(tiny: Path) -> None:
    result = linklab.run(tiny, seed=5)
    assert isinstance(result, Result)
    assert result.summary["scenario"] == "tiny"
    assert result.summary["seed"] == 5
    assert result.summary["wall_time_s"] >= 0
    assert result.traces == {} and result.pcaps == {}


def test_sources_agree(tiny: Path) -> None:
    """A file, its text and its parsed dict give the same run."""

    def strip(r: Result) -> dict[str, Any]:
        return {k: v for k, v in r.summary.items() if k not in ("wall_time_s", "hops_per_s")}

    from_file = strip(linklab.run(tiny, params={"per": 0.01}))
    from_text = strip(linklab.run(TINY, params={"per": 0.01}))
    from_dict = strip(linklab.run(tomllib.loads(TINY), params={"per": 0.01}))
    assert from_file == from_text == from_dict


def test_traces_are_polars(tiny: Path, tmp_path: Path) -> None:
    result = linklab.run(tiny, trace=True)
    assert result.traces
    for name, frame in result.traces.items():
        assert isinstance(frame, pl.DataFrame), name
        # The tiny scenario loses nothing: its drops and rto tables have no rows.
        assert frame.height > 0 or name in ("drops", "rto"), name
    assert result.traces["drops"].height == 0 and result.traces["rto"].height == 0
    assert result.traces["rtt"].height == result.summary["flows"][0]["rtt"]["samples"]
    written = result.write_traces(tmp_path / "t")
    assert len(written) == len(result.traces)
    for path in written:
        frame = pl.read_parquet(path)
        assert frame.height > 0 or path.name in ("drops.parquet", "rto.parquet")


def test_pcap_bytes(tiny: Path) -> None:
    result = linklab.run(tiny, pcap=["A->B"])
    assert list(result.pcaps) == ["A->B"]
    assert result.pcaps["A->B"][:4] in PCAP_NS_MAGIC


def test_gil_released_during_run(tiny: Path) -> None:
    """Another Python thread keeps running while the core simulates."""
    ticks = 0
    done = threading.Event()

    def tick() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1

    thread = threading.Thread(target=tick)
    thread.start()
    try:
        linklab.run(TINY.replace('duration = "2s"', 'duration = "60s"'))
    finally:
        done.set()
        thread.join()
    assert ticks > 1000


def test_ssthresh_is_null_until_set() -> None:
    """The cwnd trace had 9223372036854775807 before the first loss (issue 16)."""
    r = linklab.run(TINY.replace("per = 0.0", "per = 0.02"), trace=True)
    col = r.traces["cwnd"]["ssthresh_bytes"]
    assert col.null_count() > 0
    assert col.drop_nulls().len() > 0 and col.drop_nulls().max() < 1 << 30


def test_results_convert_to_pandas(tmp_path: Path) -> None:
    """The `linklab[pandas]` extra makes `.to_pandas()` work (issue 16)."""
    res = linklab.sweep(TINY, params={"per": [0.0, 0.01]}, out=tmp_path / "sw")
    frame = res.runs.to_pandas()
    assert len(frame) == 2 and "per" in frame.columns


def test_result_repr_is_short_and_tables_are_frames() -> None:
    """repr(Result) with a capture was 8 MB; flows, links and queues only dicts (issue 16)."""
    r = linklab.run(TINY, trace=True, pcap=["A->B"])
    text = repr(r)
    assert len(text) < 400 and "A->B" in text and "goodput" in text, text
    assert isinstance(r.flows, pl.DataFrame) and r.flows.height == 1
    assert r.links["name"].to_list() == ["A->B", "B->A"]
    assert r.queues.height == 2
    html = r._repr_html_()
    assert html.count("<tr>") == 2 and "goodput_bps" in html
