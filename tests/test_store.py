"""Stores that heal (issue 34, items 2, 8 and 9): every damaged record is set aside
with a one-line warning and its run redone; records are read only as regular files
under a size bound, without following links; an unusable store folder is a clean
error naming it (exit 2). Measured on the 2-core machine: the file in about 15 s.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import linklab
from conftest import CliRunner, assert_bad_input
from linklab.store import MAX_RECORD_BYTES, Store
from linklab.sweep import SweepError

SCENARIO = """\
name = "store"
duration = "0.3s"
[params]
per = 0.0
[[links]]
a = "A"
b = "B"
rate = "10Mbit"
delay = "10ms"
ab = { loss = "${per}" }
[[flows]]
from = "A"
to = "B"
"""
VALUES = "0,0.01,0.02,0.03,0.04,0.05,0.06,0.07,0.08"
WALL = ("wall_time_s", "wall_time_s_mean", "wall_time_s_std", "wall_time_s_ci")


def _first_sweep(tmp_path: Path) -> tuple[Path, list[Path], pl.DataFrame]:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    linklab.sweep(scenario, {"per": VALUES}, jobs=1, out=tmp_path / "o", progress=False)
    records = sorted((tmp_path / "o" / "store").glob("*.json"))
    assert len(records) == len(VALUES.split(","))
    runs = pl.read_parquet(tmp_path / "o" / "runs.parquet")
    return scenario, records, runs.drop([c for c in WALL if c in runs.columns])


def _nan_inside(path: Path) -> None:
    text = path.read_text()
    path.write_text(re.sub(r'"goodput_bps":[0-9.e+-]+', '"goodput_bps":NaN', text, count=1))


def _no_checksum(path: Path) -> None:
    record = json.loads(path.read_text())
    del record["sha256"]
    record["summary"]["aggregate"]["goodput_bps"] *= 10  # edited by hand
    path.write_text(json.dumps(record))


def _deep(path: Path) -> None:
    path.write_text("[" * 100_000)


def _directory(path: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "x").write_text("{}")


def _dev_zero(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _link_out_of_store(path: Path) -> None:
    """A link to an intact copy outside the store: not followed."""
    outside = path.parent.parent.parent / f"outside-{path.name}"
    outside.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(outside)


def _too_large(path: Path) -> None:
    with open(path, "r+b") as f:  # sparse: costs no disk
        f.truncate(MAX_RECORD_BYTES + 1)


DAMAGES = [
    _nan_inside,
    _no_checksum,
    _deep,
    _directory,
    _dev_zero,
    _fifo,
    _link_out_of_store,
    _too_large,
]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIFOs and /dev/zero")
def test_every_damaged_record_is_set_aside_and_redone(cli: CliRunner, tmp_path: Path) -> None:
    scenario, records, before = _first_sweep(tmp_path)
    damaged = dict(zip(records, DAMAGES, strict=False))
    for path, damage in damaged.items():
        damage(path)
    # Before the fix: ValueError, RecursionError, IsADirectoryError, an unbounded
    # read of /dev/zero or a read blocked on the FIFO (hence the timeout).
    p = cli("sweep", scenario, "--param", f"per={VALUES}", "--out", "o", timeout=120)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert f"({len(damaged)} run now, 1 reused)" in p.stdout, p.stdout
    warnings = [line for line in p.stderr.splitlines() if "set aside" in line]
    assert len(warnings) == len(damaged), p.stderr
    for path in damaged:
        line = next(w for w in warnings if str(path.name) in w)
        assert line.startswith("linklab: warning: the store file "), line
        assert (path.parent / f"{path.name}.damaged").exists() or os.path.islink(
            path.parent / f"{path.name}.damaged"
        )
        # The run's record is whole again.
        assert json.loads(path.read_text())["sha256"]
    after = pl.read_parquet(tmp_path / "o" / "runs.parquet")
    assert_frame_equal(after.drop([c for c in WALL if c in after.columns]), before)
    # A third sweep reuses everything and warns of nothing.
    p = cli("sweep", scenario, "--param", f"per={VALUES}", "--out", "o")
    assert p.returncode == 0 and "set aside" not in p.stderr, p.stderr
    assert f"(0 run now, {len(records)} reused)" in p.stdout, p.stdout


def test_lock_that_is_a_directory_is_set_aside(tmp_path: Path) -> None:
    scenario, records, before = _first_sweep(tmp_path)
    lock = tmp_path / "o" / "store" / ".lock"
    lock.unlink()
    lock.mkdir()
    again = linklab.sweep(scenario, {"per": VALUES}, jobs=1, out=tmp_path / "o", progress=False)
    assert (again.executed, again.reused) == (0, len(records))
    assert lock.is_file() and (lock.parent / ".lock.damaged").is_dir()


@pytest.mark.parametrize("what", ["file", "device"])
def test_unusable_store_folder_is_a_clean_error(cli: CliRunner, tmp_path: Path, what: str) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    (tmp_path / "o").mkdir()
    store = tmp_path / "o" / "store"
    if what == "file":
        store.write_text("not a folder")
    else:
        store.symlink_to("/dev/null")
    p = cli("sweep", scenario, "--param", "per=0", "--out", "o")
    kind = "a file" if what == "file" else "a character device"
    assert_bad_input(p, "the store folder o/store is " + kind)
    with pytest.raises(SweepError, match="store folder .*store is "):
        linklab.sweep(scenario, {"per": [0]}, out=tmp_path / "o", progress=False)


def test_store_reads_only_its_own_whole_records(tmp_path: Path) -> None:
    """The unit: what ``get`` takes, and that it never raises for a damaged file."""
    with Store(tmp_path) as store:
        store.put("k", {"key": "k", "status": "ok", "error": None, "summary": {"a": 1}})
        assert store.get("k") == {"key": "k", "status": "ok", "error": None, "summary": {"a": 1}}
        assert store.get("missing") is None
        text = (store.root / "k.json").read_text()
        (store.root / "other.json").write_text(text)  # another run's key
        assert store.get("other") is None
        assert (store.root / "other.json.damaged").exists()
        (store.root / "other.json").write_text(text)  # set aside again: a new name
        assert store.get("other") is None
        assert (store.root / "other.json.damaged.1").exists()
