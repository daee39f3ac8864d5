"""Long work says what it is doing when stderr is not a terminal (issue 35, item 6):
``sweep``, ``reproduce`` and ``emulate`` print a progress line every
``PROGRESS_INTERVAL`` seconds through the one mechanism, ``linklab.sweep.Progress``;
``-q`` silences them. The interval is shortened here; about 10 s (the live run
needs root and /dev/net/tun and says SKIP without them).
"""

from __future__ import annotations

import importlib
import os
import re
import time
from pathlib import Path

import pytest

from conftest import TINY
from linklab import _log
from linklab.cli import main
from linklab.reproduce import Reproduction
from linklab.reproduce.framework import Table, experiment

#: The module (``linklab.sweep`` is also the function).
sweep = importlib.import_module("linklab.sweep")

ROOT = os.geteuid() == 0 and os.path.exists("/dev/net/tun")


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sweep, "PROGRESS_INTERVAL", 0.0)
    monkeypatch.setattr(_log, "quiet", False)


def test_lines_count_runs(fast: None, capsys: pytest.CaptureFixture[str]) -> None:
    p = sweep.Progress("lines", 3, reused=1, desc="sweep")
    p.update(False)
    p.update(True)
    p.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("linklab: sweep: 2/3 runs done, ")
    assert lines[1].startswith("linklab: sweep: 3/3 runs done, 1 failed, ")


def test_a_clock_tells_the_seconds_of_a_block(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sweep, "PROGRESS_INTERVAL", 0.2)
    with sweep.Progress.clock("lines", 1.0, "emulate"):
        time.sleep(1.2)
    lines = capsys.readouterr().err.splitlines()
    assert 3 <= len(lines) <= 7, lines  # one every 0.2 s for 1.2 s (0.5 s ticks at most)
    assert all(re.fullmatch(r"linklab: emulate: \d of 1 s elapsed, ETA \d s", x) for x in lines)
    with sweep.Progress.clock("off", 1.0, "emulate"):
        time.sleep(0.3)
    assert capsys.readouterr().err == ""


def test_reproduce_prints_lines(
    fast: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(TINY.replace('duration = "2s"', 'duration = "0.2s"'))

    class Toy(Reproduction):
        name = "toy-progress"
        seed = "seed 999"
        paper = "A toy"
        tcp_profile = "TCP: a toy's"
        confidence = 0.9
        full = (1, 1)

        @experiment("grid")
        def grid(self) -> list[Table]:
            self.sweep("g", scenario, {"per": [0.0, 0.01, 0.02]})
            return [Table("t", "T", ["x"])]

    try:
        Toy(tmp_path / "o", jobs=1).run()
    finally:
        del Reproduction.registry["toy-progress"]
    err = capsys.readouterr().err
    assert "linklab: reproduce toy-progress 1/1 grid: 3/3 runs done" in err, err


def test_quiet_prints_no_progress(
    tmp_path: Path, tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep.PROGRESS_INTERVAL, old = 0.0, sweep.PROGRESS_INTERVAL
    try:
        status = main(["-q", "sweep", str(tiny), "--param", "per=0,0.01", "--jobs", "1",
                       "--out", str(tmp_path / "o")])  # fmt: skip
    finally:
        sweep.PROGRESS_INTERVAL = old
        _log.quiet = False
    assert status == 0
    assert "runs done" not in capsys.readouterr().err


def test_emulate_prints_lines(fast: None, tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not ROOT:
        print("SKIP: emulation needs root and /dev/net/tun")
        return
    sweep.PROGRESS_INTERVAL = 0.5
    assert main(["emulate", str(tiny), "--duration", "2s"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"^linklab: emulate: 1 of 2 s elapsed, ETA 1 s$", err, re.M), err
