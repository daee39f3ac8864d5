"""Every output flag of every command, given a path in a folder that does not exist yet
(issue 35, item 4): the command either makes the folder and writes its output, or
refuses before it does any work (exit 2, one line, nothing made). A run is never
lost to an output folder found missing at its end.

The table :data:`OUTPUTS` names each output flag; a test walks the parser so that
a new output flag without a row here fails. About 15 s (two short runs, a two-run
sweep and a plot's imports).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from conftest import CliRunner, assert_bad_input

#: (command, flag) -> "made" (the folder is created) or "refused" (exit 2 first).
OUTPUTS = {
    ("run", "--trace"): "made",
    ("run", "--pcap"): "refused",
    ("emulate", "--trace"): "made",  # live: tests/test_emulate.py (needs root)
    ("emulate", "--record"): "made",  # live: tests/test_emulate.py (needs root)
    ("emulate", "--pcap"): "refused",
    ("schema", "--output"): "refused",
    ("sweep", "--out"): "made",
    ("plot", "--output"): "refused",
    ("plot-trace", "--output"): "refused",
    ("plot-fct", "--output"): "refused",
    ("report", "--output"): "refused",
    ("reproduce", "--out"): "made",
}

#: Flags whose DIR/FILE is read, not written.
INPUTS = {("emulate", "--replay")} | {
    (command, f"--trace-{way}") for command in ("run", "shell") for way in ("up", "down")
}


def _output_flags() -> set[tuple[str, str]]:
    from linklab.cli import build_parser

    found: set[tuple[str, str]] = set()
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in sub.choices.items():
        for action in p._actions:
            metavar = str(action.metavar or "")
            if action.option_strings and ("DIR" in metavar or "FILE" in metavar):
                flag = max(action.option_strings, key=len)
                if (name, flag) not in INPUTS:
                    found.add((name, flag))
    return found


def test_every_output_flag_is_covered() -> None:
    assert _output_flags() == set(OUTPUTS)


def test_made_folders(cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    trace = tmp_path / "new" / "deeper" / "trace"
    proc = cli("run", tiny, "--trace", trace, "--brief")
    assert proc.returncode == 0, proc.stderr
    assert (trace / "cwnd.parquet").is_file()

    out = tmp_path / "a" / "b" / "sweep"
    proc = cli("-q", "sweep", tiny, "--param", "per=0,0.01", "--out", out, "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    assert (out / "runs.parquet").is_file()


def test_reproduce_makes_its_folder_before_it_runs(tmp_path: Path) -> None:
    from linklab.reproduce import REPRODUCTIONS

    out = tmp_path / "x" / "y"
    cls = next(iter(REPRODUCTIONS.values()))
    cls(out, quick=True)  # checks the arguments and makes the folder; runs nothing
    assert out.is_dir() and not any(out.iterdir())


@pytest.mark.parametrize(
    "args",
    [
        ["run", "{tiny}", "--pcap", "A->B:{gone}/x.pcap"],
        ["emulate", "{tiny}", "--pcap", "b:{gone}/x.pcap"],
        ["schema", "-o", "{gone}/schema.json"],
        ["plot", "{tmp}", "--x", "per", "--y", "goodput_bps", "-o", "{gone}/p.png"],
        ["plot-trace", "{tmp}", "-o", "{gone}/t.png"],
        ["plot-fct", "{tmp}", "-o", "{gone}/f.png"],
        ["report", "{tmp}", "-o", "{gone}/r.html"],
    ],
    ids=lambda a: f"{a[0]} {a[-2]}",
)
def test_refused_before_any_work(
    cli: CliRunner, tiny: Path, tmp_path: Path, args: list[str]
) -> None:
    gone = tmp_path / "missing" / "folder"
    argv = [a.format(tiny=tiny, gone=gone, tmp=tmp_path) for a in args]
    assert_bad_input(cli(*argv), str(gone))
    assert not (tmp_path / "missing").exists()
