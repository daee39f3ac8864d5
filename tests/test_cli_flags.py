"""Global flags: -V/--version, -q/--quiet, -v/--verbose."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import TINY, CliRunner


def test_short_version_flag(cli: CliRunner) -> None:
    for flag in ("-V", "--version"):
        proc = cli(flag)
        assert proc.returncode == 0 and proc.stdout.startswith("linklab "), proc


def test_quiet_and_verbose_are_accepted_and_quiet_keeps_stderr_empty(
    cli: CliRunner, tiny: Path, tmp_path: Path
) -> None:
    for flags in (["-q"], ["-v"], ["--quiet"], ["--verbose"]):
        proc = cli(*flags, "run", tiny, "--json")
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["flows"][0]["delivered_bytes"] > 0
    # The tiny scenario's default receive window (65535 B) limits its flow at
    # per=0, which is worth a warning, and -q keeps warnings; with a window
    # that does not limit, nothing at all is left on stderr.
    wide = tmp_path / "wide.toml"
    wide.write_text(TINY.replace("[tcp]\n", '[tcp]\nrwnd = "8MiB"\n'))
    proc = cli("-q", "sweep", wide, "--param", "per=0,0.01", "--out", "sw")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    proc = cli("-q", "sweep", tiny, "--param", "per=0,0.01", "--out", "sw2")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("linklab: warning: in 1 of 2 runs"), lines


def test_shell_completion(cli: CliRunner, tmp_path: Path) -> None:
    import shutil
    import subprocess

    for shell in ("bash", "zsh"):
        proc = cli("completion", shell)
        assert proc.returncode == 0, proc.stderr
        assert "reproduce" in proc.stdout and "--pcap" in proc.stdout
    script = tmp_path / "linklab.bash"
    script.write_text(cli("completion", "bash").stdout)
    bash = shutil.which("bash")
    assert bash is not None
    words = 'COMP_WORDS=(linklab ru); COMP_CWORD=1; COMP_LINE="linklab ru"; COMP_POINT=10'
    out = subprocess.run(
        [bash, "-c", f'source {script}; {words}; _shtab_linklab; echo "${{COMPREPLY[@]}}"'],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["run"], out
    bad = cli("completion", "fish")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
