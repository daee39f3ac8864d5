"""Global flags: -V/--version, -q/--quiet, -v/--verbose."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import CliRunner


def test_short_version_flag(cli: CliRunner) -> None:
    for flag in ("-V", "--version"):
        proc = cli(flag)
        assert proc.returncode == 0 and proc.stdout.startswith("linklab "), proc


def test_quiet_and_verbose_are_accepted_and_quiet_keeps_stderr_empty(
    cli: CliRunner, tiny: Path
) -> None:
    for flags in (["-q"], ["-v"], ["--quiet"], ["--verbose"]):
        proc = cli(*flags, "run", tiny, "--json")
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["flows"][0]["delivered_bytes"] > 0
    proc = cli("-q", "sweep", tiny, "--param", "per=0,0.01", "--out", "sw")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
