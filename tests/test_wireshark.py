"""Our captures as Wireshark reads them (issue 16): real SYN options, the window
the receiver offers, pcapng names, and no expert warning that our synthetic
headers cause, on a capture of every shipped scenario.

Needs ``tshark`` (``scripts/test`` installs it from the Debian packages); the
tests are skipped with that reason where it is absent.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import linklab
from conftest import TINY, needs_tshark

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml"))
TSHARK = shutil.which("tshark")

pytestmark = needs_tshark

# Wireshark labels a retransmission "out-of-order" when it is not a fast
# retransmission (the segment right at the duplicate ACKs) and leaves within the
# handshake's RTT of the highest segment (epan/dissectors/packet-tcp.c,
# tcp_analyze_sequence_number): the later holes of a SACK recovery. Real Linux
# captures show the same; it describes the TCP, not our headers.
SACK_RECOVERY_LABEL = "This frame is a (suspected) out-of-order segment"


def tshark(*args: str) -> str:
    assert TSHARK is not None
    proc = subprocess.run([TSHARK, *args], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def expert(path: Path) -> dict[str, list[tuple[str, str]]]:
    """``tshark -z expert``: severity → [(group, summary)]."""
    out: dict[str, list[tuple[str, str]]] = {}
    severity = ""
    for line in tshark("-r", str(path), "-q", "-z", "expert").splitlines():
        head = re.match(r"^(Errors|Warns|Notes|Chats) \(\d+\)", line)
        if head:
            severity = head.group(1)
            continue
        row = re.match(r"^\s+\d+\s+(\S+)\s+\S+\s+(.*)$", line)
        if row and severity:
            out.setdefault(severity, []).append((row.group(1), row.group(2).strip()))
    return out


def first_link(path: Path) -> str:
    summary = linklab.run(path).summary
    a, b = summary["links"][0]["name"].split("->")
    return f"{a}-{b}"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
def test_no_warning_from_our_headers(scenario: Path, tmp_path: Path) -> None:
    """Both directions of the first link of every shipped scenario, as pcapng."""
    spec = first_link(scenario)
    out = tmp_path / "cap.pcapng"
    linklab.run(scenario, pcap=[spec], pcap_format="pcapng").write_pcap(spec, out)
    found = expert(out)
    assert "Errors" not in found, found["Errors"]
    warns = [w for w in found.get("Warns", []) if w[1] != SACK_RECOVERY_LABEL]
    assert not warns, warns
    for severity, rows in found.items():
        groups = {g for g, _ in rows}
        assert groups <= {"Sequence"}, (severity, rows)
    # Every SYN (scenarios with a handshake) carries the MSS option.
    bare = tshark("-r", str(out), "-Y", "tcp.flags.syn == 1 && !tcp.options.mss_val")
    assert not bare.strip(), bare


def test_syn_options_window_and_names(tmp_path: Path) -> None:
    text = TINY.replace('variant = "sack"', 'variant = "sack"\ntimestamps = true\nrwnd = "1MiB"')
    r = linklab.run(text, pcap=["A-B", "A->B@rx"], pcap_format="pcapng")
    both, rx = tmp_path / "both.pcapng", tmp_path / "rx.pcapng"
    r.write_pcap("A-B", both)
    r.write_pcap("A->B@rx", rx)
    fields = [
        "tcp.flags.syn",
        "tcp.options.mss_val",
        "tcp.options.sack_perm",
        "tcp.options.timestamp.tsval",
        "tcp.options.wscale.shift",
        "tcp.window_size",
        "frame.interface_name",
        "ip.src_host",
    ]
    args = ["-r", str(both), "-N", "n", "-T", "fields", "-E", "separator=|"]
    for f in fields:
        args += ["-e", f]
    rows = [line.split("|") for line in tshark(*args).splitlines()]
    syn, synack = rows[0], rows[1]
    for row in (syn, synack):
        assert row[0] == "1"
        assert row[1] == "1460"  # the default mss
        assert row[2] != "", "SACK permitted"
        assert row[3] != "", "timestamps"
        assert row[4] == "5", "the smallest window scale for 1 MiB"
    assert syn[6] == "A->B" and synack[6] == "B->A"
    assert syn[7] == "A" and synack[7] == "B", "node names resolved from the pcapng"
    # After the handshake the scaled window is the full 1 MiB.
    later = {int(row[5]) for row in rows[2:]}
    assert later == {1 << 20}, later
    # '@rx': where the packets leave A->B, at B; one interface.
    names = set(tshark("-r", str(rx), "-T", "fields", "-e", "frame.interface_name").split())
    assert names == {"A->B@rx"}
