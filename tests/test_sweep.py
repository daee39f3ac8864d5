"""Sweeps: grids, seeds, CIs, the store (resume, kill -9, Ctrl-C), failures, bad input."""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import linklab
from conftest import TINY, CliRunner, assert_bad_input, cli_env
from linklab.sweep import (
    SweepError,
    build_grid,
    normalize_params,
    parse_param_spec,
    parse_value,
    run_key,
    summarize,
)

# A small scenario whose run length is a parameter (the kill/interrupt tests need
# sweeps that take a few seconds).
SMALL = """\
name = "small"
duration = "${duration}"
[params]
per = 0.0
duration = "1s"
flows = 1
[[links]]
a = "A"
b = "B"
rate = "10Mbit"
delay = "10ms"
queue = { kind = "droptail", limit = "100p" }
ab = { loss = "${per}" }
[[flows]]
from = "A"
to = "B"
count = "${flows}"
[tcp]
variant = "sack"
"""

# wall_time_s is measured, not simulated: it differs between any two executions.
WALL = ("wall_time_s", "wall_time_s_mean", "wall_time_s_std", "wall_time_s_ci")


@pytest.fixture
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL)
    return path


def _deterministic(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.drop([c for c in WALL if c in frame.columns])


def _tables(out: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    return pl.read_parquet(out / "runs.parquet"), pl.read_parquet(out / "summary.parquet")


def _run_cli(tmp_path: Path, *args: object, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "linklab", *map(str, args)],
        cwd=tmp_path,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# --- parameter parsing --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [("0.1", 0.1), ("10", 10), ("true", True), ("false", False), ("2s", "2s"),
     ('"10"', "10"), ("1e-3", 0.001), ("-4", -4), ("sack", "sack")],
)  # fmt: skip
def test_parse_value_types_like_toml(text: str, value: object) -> None:
    got = parse_value(text)
    assert got == value and type(got) is type(value)


def test_parse_lists_and_ranges() -> None:
    assert parse_param_spec("per=0,0.01,0.1") == ("per", [0, 0.01, 0.1])
    assert parse_param_spec("per=0:0.5:0.1") == ("per", [0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
    assert parse_param_spec("flows=1:10:3") == ("flows", [1, 4, 7, 10])
    assert parse_param_spec("flows=1:9:3") == ("flows", [1, 4, 7])
    assert parse_param_spec("flows=5:1:-2") == ("flows", [5, 3, 1])
    assert parse_param_spec("duration=1s,2s") == ("duration", ["1s", "2s"])
    assert parse_param_spec("x=7") == ("x", [7])
    # TOML's other integer forms are integers in ranges too (they raised InvalidOperation)
    assert parse_param_spec("flows=0x1:0x4:1") == ("flows", [1, 2, 3, 4])
    assert parse_param_spec("flows=0b1:1_0:0o3") == ("flows", [1, 4, 7, 10])
    assert parse_param_spec("per=0x0:0.2:0.1") == ("per", [0.0, 0.1, 0.2])


@pytest.mark.parametrize("bad", ["per", "=1", "per=", "per=0,,1", "per=0:1:0", "per=1:0:0.1"])
def test_malformed_specs(bad: str) -> None:
    with pytest.raises(SweepError):
        parse_param_spec(bad)


@settings(max_examples=200, deadline=None)
@given(
    start=st.integers(-1000, 1000),
    count=st.integers(1, 60),
    step=st.integers(1, 500),
    overshoot=st.integers(0, 499),
    scale=st.sampled_from([1, 10, 100, 1000]),
)
def test_decimal_ranges(start: int, count: int, step: int, overshoot: int, scale: int) -> None:
    """START:STOP:STEP with decimals gives exactly the decimal grid, STOP included if on it."""
    overshoot %= step
    stop = start + (count - 1) * step + overshoot
    d = Decimal(scale)
    spec = f"v={Decimal(start) / d}:{Decimal(stop) / d}:{Decimal(step) / d}"
    _, values = parse_param_spec(spec)
    expected = [float((Decimal(start) + i * Decimal(step)) / d) for i in range(count)]
    if scale == 1:
        assert values == [start + i * step for i in range(count)]
        assert all(type(v) is int for v in values)
    else:
        assert values == expected, spec


def test_grid_is_cartesian_in_given_order() -> None:
    grid = build_grid({"a": [1, 2], "b": ["x", "y", "z"]})
    assert grid == [{"a": a, "b": b} for a in (1, 2) for b in ("x", "y", "z")]


def test_run_key_canonical() -> None:
    k = run_key("text", {"b": 1, "a": 0.5}, 3, "0.1.0")
    assert k == run_key("text", {"a": 0.5, "b": 1}, 3, "0.1.0")
    assert len(k) == 64 and int(k, 16) >= 0
    assert k != run_key("text", {"a": 0.5, "b": 1}, 4, "0.1.0")
    assert k != run_key("text ", {"a": 0.5, "b": 1}, 3, "0.1.0")
    assert k != run_key("text", {"a": 0.5, "b": 1}, 3, "0.1.1")
    assert k != run_key("text", {"a": 0.5, "b": 1.0}, 3, "0.1.0")  # typed values


# --- statistics -------------------------------------------------------------


def test_ci_matches_hand_computation() -> None:
    runs = pl.DataFrame(
        {
            "point": [0, 0, 0, 0, 1, 1, 2],
            "rep": [0, 1, 2, 3, 0, 1, 0],
            "seed": pl.Series([1, 2, 3, 4, 1, 2, 1], dtype=pl.UInt64),
            "per": [0.0] * 4 + [0.1] * 2 + [0.2],
            "key": list("abcdefg"),
            "status": ["ok", "ok", "ok", "ok", "ok", "failed", "ok"],
            "error": [None] * 5 + ["bad"] + [None],
            "goodput_bps": [10.0, 12.0, 11.0, 15.0, 3.0, None, 4.0],
        }
    )
    s = summarize(runs, ["per"], 0.90)
    row = s.row(0, named=True)
    xs = [10.0, 12.0, 11.0, 15.0]
    mean = sum(xs) / 4
    std = math.sqrt(sum((x - mean) ** 2 for x in xs) / 3)
    t90_df3 = 2.353363434801823  # Student t, 0.95 quantile, 3 degrees of freedom
    assert row["n"] == 4 and row["failed"] == 0
    assert row["goodput_bps_mean"] == pytest.approx(mean)
    assert row["goodput_bps_std"] == pytest.approx(std)
    assert row["goodput_bps_ci"] == pytest.approx(t90_df3 * std / 2.0)
    one = s.row(1, named=True)  # one ok run, one failed: no spread
    assert (one["n"], one["failed"], one["goodput_bps_mean"]) == (1, 1, 3.0)
    assert one["goodput_bps_std"] is None and one["goodput_bps_ci"] is None
    assert s["point"].to_list() == [0, 1, 2]


# --- the sweep ----------------------------------------------------------------


def test_api_common_random_numbers_and_schema(small: Path, tmp_path: Path) -> None:
    res = linklab.sweep(small, {"per": [0, 0.05]}, reps=3, seed=7, jobs=2, out=tmp_path / "o")
    runs = res.runs
    assert runs.height == 6 and res.executed == 6 and res.failed == 0
    assert runs.columns[:7] == ["point", "rep", "seed", "per", "key", "status", "error"]
    assert runs.schema["seed"] == pl.UInt64 and runs.schema["per"] == pl.Float64
    assert runs["per"].to_list() == [0.0] * 3 + [0.05] * 3  # 0 typed as the default: float
    # replication r has seed base + r at every point
    assert runs["seed"].to_list() == [7, 8, 9, 7, 8, 9]
    assert runs["rep"].to_list() == [0, 1, 2, 0, 1, 2]
    assert runs["key"].n_unique() == 6
    for col in ("flow[A->B].goodput_bps", "queue[A->B].drops_overflow",
                "link[B->A].throughput_bps", "delay_p95_s", "sim_time_s"):  # fmt: skip
        assert runs.schema[col] == pl.Float64
    # each run equals linklab.run with the same seed and params
    one = linklab.run(small, seed=8, params={"per": 0.05}).summary
    row = runs.filter((pl.col("point") == 1) & (pl.col("rep") == 1)).row(0, named=True)
    assert row["goodput_bps"] == one["aggregate"]["goodput_bps"]
    assert row["events"] == one["events"]
    s = res.summary
    assert s.columns[:4] == ["point", "per", "n", "failed"]
    assert {"goodput_bps_mean", "goodput_bps_std", "goodput_bps_ci"} <= set(s.columns)
    meta = json.loads((tmp_path / "o" / "meta.json").read_text())
    assert meta == {
        "linklab_version": linklab.__version__,
        "scenario": str(small),
        "params": {"per": [0.0, 0.05]},
        "reps": 3,
        "confidence": 0.95,
        "base_seed": 7,
        "backend": "local",
    }
    assert (tmp_path / "o" / "scenario.toml").read_text() == SMALL
    disk_runs, disk_summary = _tables(tmp_path / "o")
    assert_frame_equal(disk_runs, runs)
    assert_frame_equal(disk_summary, s)


def test_in_memory_sweep_and_typed_columns(small: Path) -> None:
    res = linklab.sweep(small.read_text(), {"flows": "1:2:1", "duration": ["1s"]}, reps=1, jobs=1)
    assert res.out is None
    assert res.runs.schema["flows"] == pl.Int64 and res.runs.schema["duration"] == pl.String
    # flows with the same name (count = 2) get "#id"; a point lacking a flow has nulls
    flow_cols = [c for c in res.runs.columns if c.startswith("flow[")]
    assert flow_cols[::4] == ["flow[A->B].goodput_bps", "flow[A->B#0].goodput_bps",
                              "flow[A->B#1].goodput_bps"]  # fmt: skip
    assert res.runs["flow[A->B#1].goodput_bps"].null_count() == 1
    assert res.runs["flow[A->B].goodput_bps"].null_count() == 1


def test_metrics_patterns_select_columns(cli: CliRunner, small: Path, tmp_path: Path) -> None:
    """--metrics keeps the run-level metrics and the per-object columns matching a
    pattern ("[" is literal); the store keeps whole summaries, so another selection
    reuses every run; a pattern matching nothing is refused after the runs, which
    stay stored."""
    full = linklab.sweep(small, {"per": [0, 0.05]}, reps=2, jobs=1, out=tmp_path / "o")
    some = linklab.sweep(small, {"per": [0, 0.05]}, reps=2, jobs=1, out=tmp_path / "o",
                         metrics=["flow[*].goodput_bps", "link[A->*].lost"])  # fmt: skip
    assert some.reused == 4 and some.executed == 0
    per_object = [c for c in some.runs.columns if "[" in c]
    assert per_object == ["flow[A->B].goodput_bps", "link[A->B].lost"]
    assert_frame_equal(some.runs.select(some.runs.columns), full.runs.select(some.runs.columns))
    assert json.loads((tmp_path / "o" / "meta.json").read_text())["metrics"] == [
        "flow[*].goodput_bps", "link[A->*].lost"]  # fmt: skip
    assert list(pl.read_parquet_schema(tmp_path / "o" / "runs.parquet")) == some.runs.columns
    bare = linklab.sweep(small, {"per": [0]}, jobs=1, metrics=[])
    assert not any("[" in c for c in bare.runs.columns) and "goodput_bps" in bare.runs.columns
    proc = cli("sweep", small, "--param", "per=0", "--metrics", "monitr.*", "--out", "p")
    assert_bad_input(proc, "'monitr.*' matches no column", "flow[A->B]")
    assert len(list((tmp_path / "p" / "store").glob("*.json"))) == 1
    proc = cli("sweep", small, "--param", "per=0", "--metrics", "queue[*]*", "--out", "p",
               "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with pytest.raises(SweepError, match="not a list of patterns"):
        linklab.sweep(small, {"per": [0]}, metrics="flow[*]")


def test_resume_and_extend(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    first = linklab.sweep(small, {"per": [0, 0.05]}, reps=2, jobs=2, out=out)
    assert (first.executed, first.reused) == (4, 0)
    mtimes = {p.name: p.stat().st_mtime_ns for p in (out / "store").glob("*.json")}
    again = linklab.sweep(small, {"per": [0, 0.05]}, reps=2, jobs=2, out=out)
    assert (again.executed, again.reused) == (0, 4)
    assert_frame_equal(again.runs, first.runs)  # identical, wall times included
    assert {p.name: p.stat().st_mtime_ns for p in (out / "store").glob("*.json")} == mtimes
    more_reps = linklab.sweep(small, {"per": [0, 0.05]}, reps=3, jobs=2, out=out)
    assert (more_reps.executed, more_reps.reused) == (2, 4)
    bigger = linklab.sweep(small, {"per": [0, 0.05, 0.1]}, reps=3, jobs=2, out=out)
    assert (bigger.executed, bigger.reused) == (3, 6)
    assert len(list((out / "store").glob("*.json"))) == 9
    fresh = linklab.sweep(small, {"per": [0, 0.05, 0.1]}, reps=3, jobs=1)
    assert_frame_equal(_deterministic(bigger.runs), _deterministic(fresh.runs))
    assert_frame_equal(_deterministic(bigger.summary), _deterministic(fresh.summary))


def test_failing_point_recorded_exit_1(cli: CliRunner, small: Path, tmp_path: Path) -> None:
    proc = cli("sweep", small, "--param", "per=0,1.5", "--reps", "2", "--out", "o")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("linklab: error: 2 of 4 runs failed"), proc.stderr
    assert "runs.parquet" in last
    # The distinct error is printed once, with the parameters of a run it stopped
    # (besides the warning that the receive window limits the per=0 runs' flow).
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("linklab: warning: in 2 of 2 runs (e.g. per=0 seed 1)"), lines
    lines = lines[1:]
    assert len(lines) == 2, proc.stderr
    assert lines[0].startswith("linklab: 2 runs failed (e.g. per=1.5):"), proc.stderr
    assert "not a probability" in lines[0]
    runs, summary = _tables(tmp_path / "o")
    bad = runs.filter(pl.col("per") == 1.5)
    assert bad["status"].to_list() == ["failed", "failed"]
    assert all("not a probability" in e for e in bad["error"].to_list())
    assert bad["goodput_bps"].null_count() == 2
    good = runs.filter(pl.col("per") == 0.0)
    assert good["status"].to_list() == ["ok", "ok"] and good["error"].null_count() == 2
    assert summary["n"].to_list() == [2, 0] and summary["failed"].to_list() == [0, 2]
    assert "goodput Mbit/s" in proc.stdout  # the table is still printed


def test_cli_json_and_jobs_1_vs_2(cli: CliRunner, small: Path, tmp_path: Path) -> None:
    common = ["sweep", small, "--param", "per=0,0.02,0.05", "--param", "flows=1,2",
              "--reps", "3", "--seed", "5", "--confidence", "0.9"]  # fmt: skip
    p1 = cli(*common, "--jobs", "1", "--out", "j1", "--json")
    p2 = cli(*common, "--jobs", "2", "--out", "j2")
    assert p1.returncode == 0 and p2.returncode == 0, (p1.stderr, p2.stderr)
    rows = json.loads(p1.stdout)
    assert len(rows) == 6 and rows[0]["per"] == 0.0 and rows[1]["flows"] == 2
    assert "goodput_bps_ci" in rows[0]
    assert "per" in p2.stdout and "goodput Mbit/s" in p2.stdout
    r1, s1 = _tables(tmp_path / "j1")
    r2, s2 = _tables(tmp_path / "j2")
    assert_frame_equal(_deterministic(r1), _deterministic(r2))
    assert_frame_equal(_deterministic(s1), _deterministic(s2))
    assert r1.height == 18 and r1.select("point", "rep").is_duplicated().sum() == 0


# --- crash safety -------------------------------------------------------------

LONG_PARAMS = ("--param", "per=0,0.01,0.02,0.05", "--param", "duration=50s", "--reps", "60")


def _store_files(out: Path) -> list[Path]:
    store = out / "store"
    return list(store.glob("*.json")) if store.is_dir() else []


def _start_and_wait(tmp_path: Path, scenario: Path, out: str, at_least: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "linklab",
            "sweep",
            str(scenario),
            *LONG_PARAMS,
            "--jobs",
            "2",
            "--out",
            out,
        ],  # fmt: skip
        cwd=tmp_path,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while len(_store_files(tmp_path / out)) < at_least:
        assert proc.poll() is None, ("the sweep ended too early", proc.communicate())
        assert time.monotonic() < deadline, "no runs were stored"
        time.sleep(0.01)
    return proc


def test_kill_9_then_rerun_gives_identical_tables(small: Path, tmp_path: Path) -> None:
    proc = _start_and_wait(tmp_path, small, "killed", at_least=25)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    stored = len(_store_files(tmp_path / "killed"))
    assert 25 <= stored < 240, f"the kill should land mid-sweep ({stored} of 240 stored)"
    assert not (tmp_path / "killed" / "runs.parquet").exists()

    again = _run_cli(tmp_path, "sweep", small, *LONG_PARAMS, "--jobs", "2", "--out", "killed")
    assert again.returncode == 0, again.stderr
    assert f"{240 - stored} run now, {stored} reused" in again.stdout
    whole = _run_cli(tmp_path, "sweep", small, *LONG_PARAMS, "--jobs", "2", "--out", "whole")
    assert whole.returncode == 0, whole.stderr

    rk, sk = _tables(tmp_path / "killed")
    rw, sw = _tables(tmp_path / "whole")
    assert rk.height == 240 and rk.select("point", "rep").is_duplicated().sum() == 0
    assert rk["key"].n_unique() == 240
    assert_frame_equal(_deterministic(rk), _deterministic(rw))
    assert_frame_equal(_deterministic(sk), _deterministic(sw))
    assert not list((tmp_path / "killed" / "store").glob(".*.tmp"))


def test_ctrl_c_keeps_finished_runs(small: Path, tmp_path: Path) -> None:
    proc = _start_and_wait(tmp_path, small, "int", at_least=10)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "interrupted" in err and "run the same command again" in err
    kept = _store_files(tmp_path / "int")
    assert len(kept) >= 10
    for f in kept:  # every kept record is complete
        assert json.loads(f.read_text())["status"] == "ok"
    assert not list((tmp_path / "int" / "store").glob(".*.tmp"))
    again = _run_cli(tmp_path, "sweep", small, *LONG_PARAMS, "--jobs", "2", "--out", "int")
    assert again.returncode == 0, again.stderr
    assert f"{len(kept)} reused" in again.stdout


# --- bad input: exit 2, one line ------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--param", "bogus=1,2"], ["bogus", "per"]),
        (["--param", "per"], ["--param", "NAME=V1,V2"]),
        (["--param", "per=0,,1"], ["empty value"]),
        (["--param", "per=0:1:0"], ["step 0"]),
        (["--param", "per=0,1", "--param", "per=2"], ["per", "twice"]),
        (["--param", "per=0,0"], ["twice"]),
        ([], ["--param"]),
        (["--param", "per=0", "--reps", "0"], ["--reps", ">= 1"]),
        (["--param", "per=0", "--confidence", "1"], ["--confidence", "between 0 and 1"]),
        (["--param", "per=0", "--confidence", "x"], ["--confidence"]),
        (["--param", "per=0", "--jobs", "0"], ["--jobs", ">= 1"]),
        (["--param", "per=0", "--backend", "dask"], ["--scheduler"]),
        (["--param", "per=0", "--backend", "slurm"], ["--backend"]),
        (["--param", "per=0", "--seed", "-1"], ["seed"]),
        (["--param", "per=0", "--reps", "1000000000"], ["1000000000 runs", "at most 100000 runs"]),
        (["--param", "per=0:1:0.00001"], ["100001 values", "at most 100000"]),
        (["--param", "per=0,0.1", "--reps", "50001"], ["100002 runs"]),
    ],
)
def test_bad_input(cli: CliRunner, small: Path, tmp_path: Path, args: list[str],
                   needles: list[str]) -> None:  # fmt: skip
    assert_bad_input(cli("sweep", small, *args, "--out", "o"), *needles)
    assert not (tmp_path / "o" / "store").exists()


def test_unwritable_out(cli: CliRunner, small: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    assert_bad_input(cli("sweep", small, "--param", "per=0", "--out", "file/sub"), "--out")


def test_missing_out_and_scenario(cli: CliRunner, tmp_path: Path, small: Path) -> None:
    assert_bad_input(cli("sweep", small, "--param", "per=0"), "--out")
    assert_bad_input(cli("sweep", tmp_path / "nope.toml", "--param", "per=0", "--out", "o"),
                     "nope.toml")  # fmt: skip


def test_unreachable_scheduler(cli: CliRunner, small: Path, tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env_timeout = os.environ.get("LINKLAB_DASK_TIMEOUT")
    os.environ["LINKLAB_DASK_TIMEOUT"] = "2"
    try:
        proc = cli("sweep", small, "--param", "per=0", "--backend", "dask",
                   "--scheduler", f"tcp://127.0.0.1:{port}", "--out", "o")  # fmt: skip
    finally:
        if env_timeout is None:
            os.environ.pop("LINKLAB_DASK_TIMEOUT")
        else:
            os.environ["LINKLAB_DASK_TIMEOUT"] = env_timeout
    assert_bad_input(proc, "cannot reach dask scheduler", f"127.0.0.1:{port}")


def test_reps_cap_answers_at_once(cli: CliRunner, small: Path) -> None:
    """--reps 1000000000 used to build a task list until memory ran out."""
    start = time.monotonic()
    assert_bad_input(cli("sweep", small, "--param", "per=0", "--reps", "1000000000", "--out", "o"))
    assert time.monotonic() - start < 20


def test_scenario_sources_alike(small: Path, tmp_path: Path) -> None:
    """A path, its TOML text and its dict give the same runs; a dict is stored as TOML."""
    import tomllib

    by_path = linklab.sweep(small, {"per": [0, 0.05]}, jobs=1)
    by_text = linklab.sweep(SMALL, {"per": [0, 0.05]}, jobs=1)
    by_dict = linklab.sweep(tomllib.loads(SMALL), {"per": [0, 0.05]}, jobs=1, out=tmp_path / "d")
    for other in (by_text, by_dict):
        assert_frame_equal(_deterministic(other.summary), _deterministic(by_path.summary))
    assert tomllib.loads((tmp_path / "d" / "scenario.toml").read_text()) == tomllib.loads(SMALL)
    assert by_dict.meta["scenario"] == "small"
    with pytest.raises(SweepError, match="does not exist|No such file"):
        linklab.sweep("/nonexistent", {"per": [0]})
    with pytest.raises(SweepError, match="is a directory"):
        linklab.sweep(tmp_path, {"per": [0]})
    loop: dict = tomllib.loads(SMALL)
    loop["tcp"]["loop"] = loop
    with pytest.raises(SweepError, match="tcp.loop: contains itself"):
        linklab.sweep(loop, {"per": [0]})


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    else:  # a digit changed: still valid JSON, but the checksum no longer matches
        record = json.loads(data)
        record["summary"]["events"] += 1
        path.write_text(json.dumps(record))


@pytest.mark.parametrize("how", ["truncated", "empty", "digit"])
def test_damaged_record_is_redone_in_the_same_run(
    cli: CliRunner, small: Path, tmp_path: Path, how: str
) -> None:
    """A damaged store record is redone by the next sweep, which then succeeds."""
    first = cli("sweep", small, "--param", "per=0,0.05", "--reps", "2", "--out", "o")
    assert first.returncode == 0, first.stderr
    runs_before, summary_before = _tables(tmp_path / "o")
    victim = sorted((tmp_path / "o" / "store").glob("*.json"))[1]
    _damage(victim, how)
    again = cli("sweep", small, "--param", "per=0,0.05", "--reps", "2", "--out", "o")
    assert again.returncode == 0, again.stderr
    assert "(1 run now, 3 reused)" in again.stdout
    runs_after, summary_after = _tables(tmp_path / "o")
    assert_frame_equal(_deterministic(runs_after), _deterministic(runs_before))
    assert_frame_equal(_deterministic(summary_after), _deterministic(summary_before))
    assert json.loads(victim.read_text())["sha256"]


def test_records_without_checksum_are_redone(small: Path, tmp_path: Path) -> None:
    """A record whose sha256 was removed (by hand, with its goodput edited) is a
    damaged record: set aside and redone, never reported (issue 34 item 2)."""
    out = tmp_path / "o"
    first = linklab.sweep(small, {"per": [0, 0.05]}, jobs=1, out=out)
    for f in (out / "store").glob("*.json"):
        record = json.loads(f.read_text())
        del record["sha256"]
        record["summary"]["aggregate"]["goodput_bps"] *= 100
        f.write_text(json.dumps(record))
    again = linklab.sweep(small, {"per": [0, 0.05]}, jobs=1, out=out)
    assert (again.executed, again.reused) == (2, 0)
    assert_frame_equal(_deterministic(again.summary), _deterministic(first.summary))
    assert len(list((out / "store").glob("*.json.damaged"))) == 2


def _session(sid: int) -> list[str]:
    """Live (not zombie) processes of session ``sid``, as ``pid cmdline``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        state, _ppid, _pgrp, session = stat[stat.rindex(")") + 2 :].split()[:4]
        if int(session) == sid and state != "Z":
            found.append(f"{entry} {cmd[:100]}")
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")
def test_kill_9_while_workers_start_leaves_no_process(small: Path, tmp_path: Path) -> None:
    """The parent is killed while its workers are still starting (before their set-up
    runs): they, and multiprocessing's resource tracker, must not live on."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "linklab", "sweep", str(small), *LONG_PARAMS, "--jobs", "2",
         "--out", "o"],
        cwd=tmp_path, env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not any("spawn_main" in p for p in _session(proc.pid)):
            assert proc.poll() is None and time.monotonic() < deadline, "no worker started"
            time.sleep(0.002)
        proc.kill()  # SIGKILL: the parent cannot clean up
        proc.wait(timeout=10)
        deadline = time.monotonic() + 15
        while (left := _session(proc.pid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not left, f"still alive after the parent's kill -9: {left}"
    finally:
        for line in _session(proc.pid):
            with contextlib.suppress(OSError):
                os.kill(int(line.split()[0]), signal.SIGKILL)


def test_api_errors(small: Path) -> None:
    with pytest.raises(SweepError, match="unknown parameter 'nope'"):
        linklab.sweep(small, {"nope": [1]})
    with pytest.raises(SweepError, match="reps"):
        linklab.sweep(small, {"per": [0]}, reps=0)
    with pytest.raises(SweepError, match="confidence"):
        linklab.sweep(small, {"per": [0]}, confidence=1.5)
    with pytest.raises(SweepError, match="no parameter"):
        linklab.sweep(small, {})


def test_flatten_keeps_link_fates_and_rlc_counters() -> None:
    from linklab.sweep import flatten_summary

    flat = flatten_summary(
        {
            "links": [
                {"name": "A->B", "throughput_bps": 1.0, "rx_packets": 7, "lost": 2},
                {"name": "R->U", "throughput_bps": 2.0, "rx_packets": 9, "lost": 1,
                 "rlc": {"efficiency": 0.5, "air_bytes": 420, "max_dat_mean": None}},
            ]
        }
    )  # fmt: skip
    assert flat["link[A->B].rx_packets"] == 7.0 and flat["link[A->B].lost"] == 2.0
    assert "link[A->B].rlc.efficiency" not in flat
    assert flat["link[R->U].rlc.efficiency"] == 0.5 and flat["link[R->U].rlc.air_bytes"] == 420.0
    assert flat["link[R->U].rlc.max_dat_mean"] is None


def test_jobs_1_runs_in_process_without_a_main_guard(tmp_path: Path) -> None:
    """A plain script calling sweep(..., jobs=1) without the __main__ guard used to
    die in multiprocessing's spawn (issue 16)."""
    script = tmp_path / "plain.py"
    script.write_text(
        "import linklab\n"
        f"r = linklab.sweep({TINY!r}, params={{'per': [0.0, 0.01]}}, jobs=1)\n"
        "print(r.runs.height, r.failed)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=cli_env(), timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "0"]


def test_worker_processes_do_not_rerun_an_unguarded_script(tmp_path: Path) -> None:
    """A script that calls sweep(..., jobs=2) at its top level, as the README's snippet
    does, saved to a file and run with python3: spawned workers used to run the script
    again (tracebacks from multiprocessing, or "in use by another sweep" with ``out``;
    issue 35). The pool starts at once (BOOT_AFTER = 0) so that workers do run tasks;
    the script's top level runs once. Runs of ~0.2 s, so that the workers are up
    before the sweep ends."""
    long_tiny = TINY.replace('duration = "2s"', 'duration = "60s"')
    script = tmp_path / "plain.py"
    script.write_text(
        "import linklab\n"
        "import linklab.backends.local as local\n"
        "local.BOOT_AFTER = 0.0\n"
        "print('top level')\n"
        f"r = linklab.sweep({long_tiny!r}, params={{'per': [0.0, 0.01, 0.02, 0.03]}}, reps=2,\n"
        "                  jobs=2, out='sw')\n"
        "print(r.runs.height, r.failed)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout.split("\n")[:2] == ["top level", "8 0"], done.stdout


def test_param_values_out_of_range_are_refused_before_any_run(
    cli: CliRunner, small: Path, tmp_path: Path
) -> None:
    """flows=10**30 crashed building the tables (Int128), and every rerun with it
    (issue 34 item 10): now refused before any run, exit 2, nothing stored."""
    big = "1" + "0" * 30
    p = cli("sweep", small, "--param", f"flows={big}", "--out", "o")
    assert_bad_input(p, "'flows'", big, "out of range", "integers from")
    assert not list((tmp_path / "o").glob("store/*.json"))
    for values in ([10**30], [1, -(2**63) - 1], [10**400, 1]):
        with pytest.raises(SweepError, match="out of range; allowed: integers from"):
            linklab.sweep(small, {"flows": values})
    with pytest.raises(SweepError, match="out of range"):
        linklab.sweep(small, {"per": [10**400, 0.5]})  # float(10**400) overflows
    msg = str(pytest.raises(SweepError, linklab.sweep, small, {"flows": [10**5000]}).value)
    assert "an integer of about 5001 digits" in msg and len(msg) < 300, msg
    # The bounds themselves are values a scenario holds.
    assert normalize_params({"flows": [2**63 - 1]}, {"flows": 1})["flows"] == [2**63 - 1]


def test_a_stored_summary_cannot_break_the_tables(small: Path, tmp_path: Path) -> None:
    """A record with a right checksum whose summary does not read as metrics makes
    a failed row, not a crash of the tables."""
    from linklab.store import Store

    out = tmp_path / "o"
    linklab.sweep(small, {"per": [0, 0.05]}, jobs=1, out=out)
    victim = sorted((out / "store").glob("*.json"))[0]
    record = json.loads(victim.read_text())
    del record["sha256"]
    record["summary"] = {"aggregate": {"goodput_bps": 10**30}, "flows": [1, "x"]}
    with Store(out) as store:
        store.put(record["key"], record)
    again = linklab.sweep(small, {"per": [0, 0.05]}, jobs=1, out=out)
    assert again.reused == 2
    row = again.runs.filter(pl.col("key") == record["key"])
    assert row["status"].to_list() == ["failed"]
    assert "does not read as metrics" in row["error"].to_list()[0]
