"""Trace-driven links (Mahimahi format), end to end: goodput parity with a
constant link, paths relative to the scenario file, sweeps over traces, and
every bad trace refused with the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

import linklab
from conftest import CliRunner, assert_bad_input

SCENARIO = """
name = "trace"
duration = "20s"
[tcp]
cc = "cubic"
rwnd = "1MiB"
[[links]]
a = "S"
b = "R"
rate = "100Mbit"
delay = "5ms"
[[links]]
a = "R"
b = "D"
delay = "20ms"
queue = { limit = "100p" }
{bottleneck}
[[flows]]
from = "S"
to = "D"
"""


def _constant_trace(path: Path, per_ms: int = 1, ms: int = 1000) -> Path:
    """One 1500-byte opportunity every millisecond (per_ms of them): 12·per_ms Mbit/s."""
    path.write_text("".join(f"{t}\n" for t in range(1, ms + 1) for _ in range(per_ms)))
    return path


def _scenario(tmp_path: Path, bottleneck: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(SCENARIO.replace("{bottleneck}", bottleneck))
    return path


def test_a_constant_trace_is_the_constant_link(tmp_path: Path) -> None:
    _constant_trace(tmp_path / "c12.trace")
    traced = linklab.run(_scenario(tmp_path, 'trace = "c12.trace"'), seed=3).summary
    wired = linklab.run(_scenario(tmp_path, 'rate = "12Mbit"', "w.toml"), seed=3).summary
    g_trace = traced["aggregate"]["goodput_bps"]
    g_wired = wired["aggregate"]["goodput_bps"]
    assert g_wired > 10.5e6  # the bottleneck is the link, not the window
    assert abs(g_trace - g_wired) < 0.01 * g_wired, (g_trace, g_wired)
    # The trace's mean rate is reported as the direction's rate.
    rates = {link["name"]: link["rate_bps"] for link in traced["links"]}
    assert rates["R->D"] == 12_000_000


def test_paths_are_relative_to_the_scenario_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "traces").mkdir()
    _constant_trace(tmp_path / "traces" / "fast.trace", per_ms=2)
    scen = _scenario(tmp_path, 'trace = "traces/fast.trace"')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    goodput = linklab.run(scen).summary["aggregate"]["goodput_bps"]
    assert 18e6 < goodput < 24e6


def test_direction_traces_and_opportunity(tmp_path: Path) -> None:
    # Down a→b from a trace of 1504-byte opportunities, b→a a constant rate.
    _constant_trace(tmp_path / "d.trace")
    scen = _scenario(tmp_path, 'rate = "12Mbit"\nab = { trace = "d.trace", opportunity = "1504B" }')
    rates = {link["name"]: link["rate_bps"] for link in linklab.run(scen).summary["links"]}
    assert rates["R->D"] == 12_032_000
    assert rates["D->R"] == 12_000_000


def test_a_trace_played_once_stops_delivering(tmp_path: Path) -> None:
    # 5 s of trace in a 20 s run delivers what 5 s of the repeating trace do.
    _constant_trace(tmp_path / "five.trace", ms=5000)
    once = linklab.run(_scenario(tmp_path, 'trace = "five.trace"\nonce = true')).summary
    text = SCENARIO.replace("{bottleneck}", 'trace = "five.trace"')
    short = linklab.run(text.replace('duration = "20s"', 'duration = "5s"'), base_dir=tmp_path)
    got = once["aggregate"]["delivered_bytes"]
    want = short.summary["aggregate"]["delivered_bytes"]
    assert abs(got - want) < 0.02 * want, (got, want)


def test_a_sweep_over_trace_files(tmp_path: Path) -> None:
    _constant_trace(tmp_path / "one.trace")
    _constant_trace(tmp_path / "two.trace", per_ms=2)
    text = (
        SCENARIO.replace("{bottleneck}", 'trace = "${trace}"') + '[params]\ntrace = "one.trace"\n'
    )
    scen = tmp_path / "sweep.toml"
    scen.write_text(text)
    res = linklab.sweep(scen, {"trace": ["one.trace", "two.trace"]}, jobs=1, progress=False)
    assert res.failed == 0, res.runs["error"].to_list()
    by = {r["trace"]: r["goodput_bps"] for r in res.runs.to_dicts()}
    assert by["two.trace"] > 1.6 * by["one.trace"], by


# --- bad input: one line naming the file and line (or the key), exit 2 ----------


@pytest.mark.parametrize(
    ("content", "needles"),
    [
        ("1\n2\nx3\n", ['"t.trace"', "line 3", '"x3" is not a timestamp', "whole number"]),
        ("1\n5\n4\n", ['"t.trace"', "line 3", "goes back in time"]),
        ("", ['"t.trace"', "is empty"]),
        ("\n  \n", ['"t.trace"', "is empty"]),
        ("0\n0\n", ['"t.trace"', "line 2", "above 0"]),
        ("1.5\n", ["line 1", '"1.5" is not a timestamp']),
        ("-3\n", ["line 1", '"-3"']),
    ],
)
def test_bad_trace_files(cli: CliRunner, tmp_path: Path, content: str, needles: list[str]) -> None:
    (tmp_path / "t.trace").write_text(content)
    scen = _scenario(tmp_path, 'trace = "t.trace"')
    line = assert_bad_input(cli("run", scen), "links[1].trace", *needles)
    assert "s.toml" in line


def test_binary_and_missing_trace_files(cli: CliRunner, tmp_path: Path) -> None:
    scen = _scenario(tmp_path, 'trace = "nope.trace"')
    assert_bad_input(cli("run", scen), "links[1].trace", '"nope.trace"', "No such file")
    (tmp_path / "bin.trace").write_bytes(b"\xff\xfe\x00\x01")
    scen = _scenario(tmp_path, 'trace = "bin.trace"')
    assert_bad_input(cli("run", scen), "links[1].trace", "is not text")
    (tmp_path / "dir.trace").mkdir()
    scen = _scenario(tmp_path, 'trace = "dir.trace"')
    assert_bad_input(cli("run", scen), "links[1].trace", "not a regular file")


@pytest.mark.parametrize(
    ("bottleneck", "path", "needle"),
    [
        ('rate = "12Mbit"\ntrace = "c.trace"', "links[1].trace", "allowed: one of `rate`"),
        ('rate = "12Mbit"\nopportunity = "1504B"', "links[1].opportunity", "trace-driven"),
        ('rate = "12Mbit"\nonce = true', "links[1].once", "trace-driven"),
        ('trace = "c.trace"\nopportunity = "0B"', "links[1].opportunity", "1 to 65535"),
        ('trace = "c.trace"\nopportunity = "70000B"', "links[1].opportunity", "1 to 65535"),
        ('trace = "c.trace"\nonce = "yes"', "links[1].once", "bool"),
        ("trace = 12", "links[1].trace", "string"),
        (
            'trace = "c.trace"\nfec = { scheme = "ll-fec", n = 10, k = 8 }',
            "links[1].fec",
            "constant-rate",
        ),
    ],
)
def test_bad_trace_keys(
    cli: CliRunner, tmp_path: Path, bottleneck: str, path: str, needle: str
) -> None:
    _constant_trace(tmp_path / "c.trace", ms=10)
    scen = _scenario(tmp_path, bottleneck)
    assert_bad_input(cli("run", scen), path, needle)


def test_errors_leave_nothing_behind(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "t.trace").write_text("1\nzz\n")
    scen = _scenario(tmp_path, 'trace = "t.trace"')
    out = tmp_path / "tr"
    assert_bad_input(cli("run", scen, "--trace", out), "line 2")
    assert not out.exists() or not any(out.iterdir())


def test_a_changed_trace_file_is_not_served_from_the_sweep_store(tmp_path: Path) -> None:
    trace = _constant_trace(tmp_path / "t.trace")
    scen = tmp_path / "s.toml"
    scen.write_text(
        SCENARIO.replace("{bottleneck}", 'trace = "t.trace"').replace(
            'duration = "20s"', 'duration = "${duration}"'
        )
        + '[params]\nduration = "5s"\n'
    )
    out = tmp_path / "out"
    first = linklab.sweep(scen, {"duration": ["5s"]}, jobs=1, progress=False, out=out)
    again = linklab.sweep(scen, {"duration": ["5s"]}, jobs=1, progress=False, out=out)
    assert (first.executed, again.executed, again.reused) == (1, 0, 1)
    _constant_trace(trace, per_ms=2)  # the link is twice as fast now
    changed = linklab.sweep(scen, {"duration": ["5s"]}, jobs=1, progress=False, out=out)
    assert changed.executed == 1 and changed.reused == 0
    g = changed.runs["goodput_bps"][0]
    assert g > 1.5 * first.runs["goodput_bps"][0]
    # The inputs a run reads, as the core resolves them.
    from linklab import _core

    files = _core.input_files(scen.read_text(), base_dir=str(tmp_path))
    assert files == [str(tmp_path / "t.trace")]


def test_a_trace_costs_a_small_multiple_of_its_file(tmp_path: Path) -> None:
    """Issue 34 item 7: a 254-MiB file of ``1`` lines took 2.3 GB (an 8-byte time per
    line, twice over while parsing). Runs of equal timestamps are stored once: a
    64-MiB such file runs in a child whose peak memory stays under 3 x the file."""
    import subprocess
    import sys

    trace = tmp_path / "ones.txt"
    size = 64 << 20
    trace.write_bytes(b"1\n" * (size // 2))
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'duration = "100ms"\n'
        '[[links]]\na = "S"\nb = "D"\ntrace = "ones.txt"\ndelay = "1ms"\n'
        '[[flows]]\nfrom = "S"\nto = "D"\n'
    )
    # VmHWM, the child's own peak (ru_maxrss survives exec: a child of a large pytest
    # process would report the parent's), less what the imports took.
    code = (
        "import sys, linklab\n"
        "def peak():\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('VmHWM:'):\n"
        "            return int(line.split()[1])\n"
        "base = peak()\n"
        "r = linklab.run(sys.argv[1])\n"
        "assert r.summary['flows'][0]['delivered_bytes'] > 0\n"
        "print(peak() - base)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(scenario)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    grown_kb = int(r.stdout.strip().splitlines()[-1])
    assert grown_kb * 1024 < 3 * size, f"{grown_kb} KB for a {size >> 20}-MiB trace"
