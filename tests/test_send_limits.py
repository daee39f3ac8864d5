"""Defaults that do not hide the protocol (issue 33, item 7): a run whose receive
window, not its congestion control, limits every flow says so.

The path: one flow over 10 Mbit/s with 20 ms each way (RTT 40 ms, a bandwidth-delay
product of 50 kB, 33 packets of 1500 B) and a 100-packet drop-tail buffer, with
linklab's TCP defaults (NewReno, initial window 1, rwnd 65535 B = 44 segments of
1460 B). Expectations fixed from that before running it: 44 segments in flight never
fill 33 on the wire plus 100 in the buffer, so nothing is lost, cwnd grows past rwnd
after slow start (about 6 round trips, 0.25 s), and the receive window limits the
flow for nearly all of the 20 s — more than the warning's half by far (≥ 95 % asked
here); no congestion signal ever reaches the congestion control, so CUBIC and
NewReno send the same packets at the same times and the summaries are identical.
With rwnd 8 MiB the window fills the buffer, packets are dropped, the congestion
controls answer them each by its own rule, and the summaries differ; the flow is
then never receiver-limited. About 10 s for the file.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import linklab
from conftest import CliRunner

PATH = """\
name = "path-10mbit-40ms"
duration = "20s"
[params]
cc = "newreno"
[tcp]
cc = "${cc}"
[[links]]
a = "S"
b = "D"
rate = "10Mbit"
delay = "20ms"
queue = { limit = "100p" }
[[flows]]
from = "S"
to = "D"
"""

WIDE = PATH.replace("[tcp]\n", '[tcp]\nrwnd = "8MiB"\n')


def _run(cli: CliRunner, path: Path, cc: str) -> tuple[dict[str, Any], list[str]]:
    proc: subprocess.CompletedProcess[str] = cli("run", path, "--set", f"cc={cc}", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout), proc.stderr.splitlines()


def _measured(summary: dict[str, Any]) -> dict[str, Any]:
    """What the network did: everything but the run's wall time and its params."""
    return {k: v for k, v in summary.items() if k not in ("wall_time_s", "hops_per_s", "params")}


def test_default_rwnd_warns_and_hides_the_congestion_control(
    cli: CliRunner, tmp_path: Path
) -> None:
    path = tmp_path / "path.toml"
    path.write_text(PATH)
    newreno, warned = _run(cli, path, "newreno")
    cubic, warned_cubic = _run(cli, path, "cubic")
    assert _measured(newreno) == _measured(cubic)  # the congestion control never acted
    flow = newreno["flows"][0]
    lim = flow["send_limits"]
    assert flow["retransmits"] == 0 and newreno["queues"][0]["drops"]["overflow"] == 0
    assert lim["rwnd_bytes"] == 65535
    assert lim["rwnd_s"] / lim["busy_s"] >= 0.95, lim
    assert abs(lim["rwnd_s"] + lim["cwnd_s"] + lim["sender_s"] - lim["busy_s"]) < 1e-9
    assert 0.040 <= lim["min_rtt_s"] < 0.041, lim
    # One warning line, with the numbers and the key to change.
    assert len(warned) == 1 and warned == warned_cubic, warned
    line = warned[0]
    assert line.startswith("linklab: warning: the receive window (rwnd 65535 B)"), line
    pct = round(100 * lim["rwnd_s"] / lim["busy_s"])
    assert f"for {pct} % of the time it had data to send" in line, line
    assert "40.1 ms minimum RTT" in line and "goodput 9.6" in line, line
    assert "[tcp] rwnd" in line and 'rwnd = "8MiB"' in line, line
    # The Python API says the same.
    r = linklab.run(path, params={"cc": "cubic"})
    assert r.warnings == [line.removeprefix("linklab: warning: ")]


def test_a_wide_rwnd_does_not_warn_and_the_congestion_controls_differ(
    cli: CliRunner, tmp_path: Path
) -> None:
    path = tmp_path / "wide.toml"
    path.write_text(WIDE)
    newreno, warned = _run(cli, path, "newreno")
    cubic, warned_cubic = _run(cli, path, "cubic")
    assert warned == [] and warned_cubic == []
    for s in (newreno, cubic):
        lim = s["flows"][0]["send_limits"]
        assert lim["rwnd_s"] == 0 and lim["rwnd_bytes"] == 8 << 20, lim
        assert s["queues"][0]["drops"]["overflow"] > 0
    assert newreno["aggregate"] != cubic["aggregate"]
    assert newreno["queues"][0]["drops"] != cubic["queues"][0]["drops"]
    assert linklab.run(path).warnings == []


def test_sweep_warns_for_the_rwnd_limited_runs(tmp_path: Path) -> None:
    both = PATH.replace('[params]\ncc = "newreno"\n', '[params]\ncc = "newreno"\nrwnd = 65535\n')
    both = both.replace("[tcp]\n", '[tcp]\nrwnd = "${rwnd}"\n')
    res = linklab.sweep(both, {"rwnd": [65535, 8 << 20]}, jobs=1)
    fractions = res.runs["rwnd_limited_fraction"].to_list()
    assert fractions[0] >= 0.95 and fractions[1] == 0, fractions
    assert len(res.warnings) == 1, res.warnings
    assert res.warnings[0].startswith("in 1 of 2 runs (e.g. rwnd=65535 seed 1)"), res.warnings
