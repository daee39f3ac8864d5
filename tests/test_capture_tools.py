"""Our captures as the tcpdump family reads them (issue 35, item 7): a two-direction
pcapng opens in tcpdump and tcptrace (libpcap) as well as tshark, data segments echo
the receiver's timestamps, and ``emulate --pcap`` writes its records in time order.

Each test needs its tool (``tcpdump``, ``tcptrace``, ``tshark``: Debian packages of
those names) and skips with a line naming it where it is absent; the emulation test
also needs root and /dev/net/tun. Time: about 5 s (the emulation 2 s of it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import linklab
from conftest import TINY, cli_env

# The tiny scenario with RFC 7323 timestamps and 1 % loss (retransmissions, SACK).
SCENARIO = TINY.replace('variant = "sack"', 'variant = "sack"\ntimestamps = true').replace(
    "per = 0.0", "per = 0.01"
)


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (apt-get install {name})")
    return path


def run_tool(*args: str) -> str:
    """The tool's standard output (its standard error appended after it)."""
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, (args, proc.stderr)
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """Both directions of A-B as one pcapng, and the run's summary."""
    out = tmp_path_factory.mktemp("cap") / "ab.pcapng"
    r = linklab.run(SCENARIO, pcap=["A-B"], pcap_format="pcapng")
    r.write_pcap("A-B", out)
    return out, r.summary


def offered(summary: dict[str, Any], i: int) -> int:
    """Packets the first node put into link direction ``i`` (what its capture holds)."""
    return int(summary["links"][i]["account"]["offered"])


def test_tcpdump_reads_a_two_direction_pcapng(capture: tuple[Path, dict[str, Any]]) -> None:
    path, summary = capture
    out = run_tool(tool("tcpdump"), "-r", str(path), "-nn", "-tt")
    assert "link-type EN10MB" in out, out[:300]
    lines = [x for x in out.splitlines() if " IP " in x]
    assert len(lines) == offered(summary, 0) + offered(summary, 1)
    # Time order across the two interfaces.
    times = [float(x.split()[0]) for x in lines]
    assert times == sorted(times)


def test_data_segments_echo_the_receivers_timestamps(
    capture: tuple[Path, dict[str, Any]],
) -> None:
    """RFC 7323 §4.3: a data segment's TSecr is TS.Recent, the TSval of the newest ACK
    its sender had received: one of the ACK TSvals captured before it (at B's side, so
    earlier still), never 0 after the handshake."""
    path, _ = capture
    out = run_tool(tool("tcpdump"), "-r", str(path), "-nn", "-tt")
    ts = re.compile(r"TS val (\d+) ecr (\d+)")
    acked_tsvals: set[int] = set()
    data = 0
    for line in out.splitlines():
        m = ts.search(line)
        if m is None:
            continue
        val, ecr = int(m.group(1)), int(m.group(2))
        if ".5001 >" in line:  # receiver → sender
            acked_tsvals.add(val)
        elif "length 0" not in line:  # a data segment
            data += 1
            assert ecr in acked_tsvals, line
            assert ecr > 0, line
    assert data > 900, data


def test_tcptrace_reads_it(capture: tuple[Path, dict[str, Any]]) -> None:
    path, summary = capture
    out = run_tool(tool("tcptrace"), "-l", "-n", str(path))
    assert "1 TCP connection traced" in out, out
    total = re.findall(r"total packets:\s+(\d+)\s+total packets:\s+(\d+)", out)
    assert total == [(str(offered(summary, 0)), str(offered(summary, 1)))], out
    rexmt = re.search(r"rexmt data pkts:\s+(\d+)", out)
    assert rexmt and int(rexmt.group(1)) == summary["flows"][0]["retransmits"], out


def test_tshark_finds_no_data_segment_without_an_echo(
    capture: tuple[Path, dict[str, Any]],
) -> None:
    path, _ = capture
    tshark = tool("tshark")
    bare = run_tool(
        tshark, "-r", str(path), "-Y", "tcp.len > 0 && tcp.options.timestamp.tsecr == 0"
    )
    assert not [x for x in bare.splitlines() if x.strip() and "Running as" not in x], bare
    n = run_tool(tshark, "-r", str(path), "-Y", "tcp.len > 0 && tcp.options.timestamp.tsecr > 0")
    assert len([x for x in n.splitlines() if "TCP" in x]) > 900


ROOT = os.geteuid() == 0 and os.path.exists("/dev/net/tun")


def pcap_times(data: bytes) -> list[int]:
    """Record timestamps (ns) of a little-endian nanosecond pcap."""
    assert data[:4] == b"\x4d\x3c\xb2\xa1"
    out, at = [], 24
    while at < len(data):
        sec, ns, incl = struct.unpack_from("<III", data, at)
        out.append(sec * 1_000_000_000 + ns)
        at += 16 + incl
    assert at == len(data)
    return out


def test_emulate_pcap_is_in_time_order(tmp_path: Path) -> None:
    """Both kernels' captures: no record earlier than the one before it (1,966 of 8,964
    were, a SYN-ACK before its SYN, when a packet read was stamped with the loop's start
    time and a delivery in between with the wall clock), and tcpdump reads them."""
    if not ROOT:
        pytest.skip("emulation needs root and /dev/net/tun")
    scenario = tmp_path / "tiny.toml"
    scenario.write_text(TINY)
    a, b = tmp_path / "a.pcap", tmp_path / "b.pcap"
    proc = subprocess.run(
        [sys.executable, "-m", "linklab", "emulate", str(scenario), "--duration", "2s",
         "--json", "--pcap", f"a:{a}", "--pcap", f"b:{b}"],
        env=cli_env(), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    if proc.returncode != 0 and "needs" in proc.stderr:
        pytest.skip(proc.stderr.strip())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["flows"][0]["goodput_bps"] > 1e6
    for path in (a, b):
        times = pcap_times(path.read_bytes())
        assert len(times) > 1000
        back = sum(1 for x, y in zip(times, times[1:], strict=False) if y < x)
        assert back == 0, f"{path.name}: {back} of {len(times)} records earlier than the last"
    if shutil.which("tcpdump"):
        out = run_tool("tcpdump", "-r", str(b), "-nn", "-c", "3")
        assert "Flags [S]," in out.splitlines()[0], out
    else:
        print("SKIP: tcpdump is not installed; the SYN-first check needs it")
