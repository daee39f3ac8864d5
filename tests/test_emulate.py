"""`linklab emulate`: kernel TCP through a scenario's link models in real time.

Tests that create namespaces need root and /dev/net/tun (CI has both); without
them they print an explicit SKIP line and return.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from conftest import TINY, CliRunner, assert_bad_input, cli_env

ROOT = os.geteuid() == 0 and os.path.exists("/dev/net/tun")


def _skip_without_root() -> bool:
    if not ROOT:
        print("SKIP: emulation needs root and /dev/net/tun")
    return not ROOT


#: chrt (util-linux) runs the emulator at SCHED_FIFO priority 10, above every ordinary
#: process, so that its timing does not depend on what else the machine runs.
CHRT = shutil.which("chrt")


def _realtime(cli: CliRunner, *args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
    """``linklab ARGS`` at SCHED_FIFO 10 when chrt is there, else as ``cli`` runs it."""
    if CHRT is None:
        return cli(*args)
    return subprocess.run(
        [CHRT, "-f", "10", sys.executable, "-m", "linklab", *map(str, args)],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_scenario_runs_live_and_its_recording_replays_alike(
    cli: CliRunner, tiny: Path, tmp_path: Path
) -> None:
    if _skip_without_root():
        return
    # Directories that do not exist yet are made (as `linklab run --trace` does).
    rec, trace = tmp_path / "rec", tmp_path / "new" / "trace"
    pcap = tmp_path / "b.pcap"
    proc = _realtime(
        cli, "emulate", tiny, "--duration", "2s", "--json", "--record", rec, "--trace", trace,
        "--pcap", f"b:{pcap}",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)
    # The summary has the keys of `linklab run --json`, plus `emulation`.
    sim = json.loads(cli("run", tiny, "--json").stdout)
    assert set(sim) <= set(s), set(sim) - set(s)
    # The packet account and the send limits are the simulator's own (the kernel's
    # packets are not counted; its TCP_INFO is in `emulation`).
    own = {"lt", "corrupted", "account", "send_limits"}
    assert set(sim["flows"][0]) <= set(s["flows"][0]) | own
    assert [x["name"] for x in s["links"]] == [x["name"] for x in sim["links"]]
    assert s["emulation"]["tun_drops"] == 0
    assert s["emulation"]["kernel_tcp"]["A"]["sack"] is True  # the scenario's variant = "sack"
    # Kernel TCP fills most of the 10 Mbit/s link in 2 s (slow start included).
    assert s["flows"][0]["goodput_bps"] > 6e6, s["flows"][0]
    te = s["emulation"]["timing_error_s"]
    assert 0 <= te["p50"] <= te["p99"] <= te["max"]
    # The loop's lateness: p99 < 10 ms (loose; benches report the real value). Under
    # load (a 1-minute load average of 13 on 2 cores) an ordinary-priority emulator
    # reached a p99 of 27 ms; at SCHED_FIFO it stays below 0.1 ms whatever the load.
    # Without chrt the bound is asserted only on a machine that is not saturated.
    sched = s["emulation"]["scheduler"]
    load, cpus = os.getloadavg()[0], os.cpu_count() or 1
    if CHRT is not None:
        assert sched["policy"] == "fifo" and sched["priority"] == 10, sched
        assert te["p99"] < 0.010, te
    elif load < cpus:
        assert te["p99"] < 0.010, (te, load)
    else:
        print(
            f"timing not asserted: no chrt to raise the emulator's priority and a load of "
            f"{load:.1f} on {cpus} CPUs (p99 lateness {1e3 * te['p99']:.1f} ms)"
        )
    # The kernel's send limits (TCP_INFO's busy, rwnd- and sndbuf-limited times).
    lim = s["flows"][0]["send_limits"]
    assert 1.0 < lim["busy_s"] <= 2.0, lim
    assert lim["rwnd_s"] + lim["cwnd_s"] + lim["sender_s"] == pytest.approx(lim["busy_s"])
    # Linux's delayed ACKs: about one ACK per two data segments once past quick-ACK mode.
    acks = s["links"][1]["tx_packets"] / s["links"][0]["rx_packets"]
    assert acks < 0.75, acks
    assert s["emulation"]["kernel_knobs"] == {}
    info = pl.read_parquet(trace / "tcp_info.parquet")
    assert 150 <= info.height <= 210, info.height  # every 10 ms for 2 s
    assert info["cwnd"].max() > 10
    # The receiver's capture: a nanosecond pcap of raw IP (LINKTYPE_RAW) holding
    # what B's kernel received (data) and sent (ACKs).
    data = pcap.read_bytes()
    assert data[:4] == b"\x4d\x3c\xb2\xa1" and int.from_bytes(data[20:24], "little") == 101
    packets, at = 0, 24
    while at < len(data):
        at += 16 + int.from_bytes(data[at + 8 : at + 12], "little")
        packets += 1
    assert at == len(data)
    # Delivered to B plus sent by B (a packet or two may sit in the ACK queue at the end).
    expected = s["links"][0]["rx_packets"] + s["links"][1]["tx_packets"]
    assert 0 <= packets - expected <= 3, (packets, expected)
    replay = cli("emulate", "--replay", rec, "--json")
    assert replay.returncode == 0, replay.stderr
    out = json.loads(replay.stdout)["replay"]
    assert out["packets"] > 1000 and out["mismatches"] == 0, out


def test_kernel_settings_change_the_namespaces_only(cli: CliRunner, tiny: Path) -> None:
    if _skip_without_root():
        return
    host = Path("/proc/sys/net/ipv4/tcp_early_retrans").read_text()
    proc = _realtime(
        cli, "emulate", tiny, "--duration", "2s", "--json", "--kernel", "quickack=1",
        "--kernel", "net.ipv4.tcp_early_retrans=0", "--kernel", "gso_max_segs=1",
        "--kernel", "pacing=1",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)
    assert s["emulation"]["kernel_knobs"] == {
        "net.ipv4.tcp_early_retrans": "0",
        "quickack": 1,
        "gso_max_segs": 1,
        "pacing": 1,
    }
    # quickack: the receiver ACKs every segment (the default run above: < 0.75).
    acks = s["links"][1]["tx_packets"] / s["links"][0]["rx_packets"]
    assert acks > 0.9, acks
    assert s["flows"][0]["goodput_bps"] > 6e6, s["flows"][0]
    assert Path("/proc/sys/net/ipv4/tcp_early_retrans").read_text() == host


@pytest.mark.parametrize(
    ("knob", "needle"),
    [
        ("net.ipv4.no_such_thing=1", "net.ipv4.no_such_thing"),
        ("kernel.hostname=x", "kernel.hostname"),
        ("net.core.somaxconn=8", "net.core.somaxconn"),
        ("quickack=2", "quickack"),
        ("gso_max_segs=0", "gso_max_segs"),
        ("pacing", "KEY=VALUE"),
    ],
)
def test_bad_kernel_settings(cli: CliRunner, tiny: Path, knob: str, needle: str) -> None:
    assert_bad_input(cli("emulate", tiny, "--kernel", knob), needle)


def test_commands_run_inside_the_namespaces_and_end_the_run(
    cli: CliRunner, tiny: Path, tmp_path: Path
) -> None:
    if _skip_without_root():
        return
    got = tmp_path / "got.txt"
    server = (
        "import os, socket; s = socket.create_server((os.environ['LINKLAB_B'], 7000)); "
        "c, _ = s.accept(); n = 0\n"
        "while (d := c.recv(65536)): n += len(d)\n"
        f"open({str(got)!r}, 'w').write(str(n))"
    )
    client = (
        "import os, socket, time; time.sleep(0.3); "
        "c = socket.create_connection((os.environ['LINKLAB_B'], 7000)); "
        "c.sendall(b'x' * 200000); c.close()"
    )
    t = time.monotonic()
    proc = cli(
        "emulate",
        tiny,
        "--duration",
        "20s",
        "--json",
        "--b",
        f"{sys.executable} -c {_quote(server)}",
        "--a",
        f"{sys.executable} -c {_quote(client)}",
    )
    assert proc.returncode == 0, proc.stderr
    assert got.read_text() == "200000"
    s = json.loads(proc.stdout)
    assert s["emulation"]["traffic"] == "commands"
    assert s["sim_time_s"] < 10 and time.monotonic() - t < 15  # ended when both exited
    assert s["links"][0]["tx_bytes"] > 200000


def test_a_constant_trace_behaves_as_the_wired_link(
    cli: CliRunner, tiny: Path, tmp_path: Path
) -> None:
    if _skip_without_root():
        return
    # One 1500-byte opportunity per millisecond: 12 Mbit/s, as a 12 Mbit/s wired link.
    (tmp_path / "c.trace").write_text("".join(f"{t}\n" for t in range(1, 1001)))
    trace = TINY.replace('rate = "10Mbit"', "").replace(
        'ab = { loss = "${per}" }', 'ab = { trace = "c.trace" }\nba = { trace = "c.trace" }'
    )
    wired = TINY.replace('rate = "10Mbit"', 'rate = "12Mbit"')
    goodput = {}
    for name, text in (("trace", trace), ("wired", wired)):
        path = tmp_path / f"{name}.toml"
        path.write_text(text)
        proc = cli("emulate", path, "--duration", "3s", "--json")
        assert proc.returncode == 0, proc.stderr
        goodput[name] = json.loads(proc.stdout)["flows"][0]["goodput_bps"]
    assert goodput["wired"] > 8e6, goodput
    assert abs(goodput["trace"] / goodput["wired"] - 1) < 0.08, goodput


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def test_nothing_is_left_after_a_run(cli: CliRunner, tiny: Path) -> None:
    if _skip_without_root():
        return

    def links() -> str:
        return subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout

    def sysctls() -> list[str]:
        names = ("tcp_sack", "tcp_timestamps", "tcp_ecn")
        return [Path(f"/proc/sys/net/ipv4/{n}").read_text() for n in names]

    before, host = links(), sysctls()
    # tiny's [tcp] has no timestamps: the emulator sets tcp_timestamps = 0 in the
    # namespaces, and only there.
    assert cli("emulate", tiny, "--duration", "0.5s").returncode == 0
    assert links() == before
    assert "ll0" not in links()
    assert sysctls() == host


# --- bad input: checked before anything is created (no root needed) --------


def test_a_congestion_control_the_kernel_lacks_is_refused(cli: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "ww.toml"
    path.write_text(TINY.replace('variant = "sack"', 'variant = "sack"\ncc = "westwood"'))
    assert_bad_input(cli("emulate", path), "flows[0].cc", "westwood")


def test_linklabs_own_tcp_variants_are_refused(cli: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "lt.toml"
    path.write_text(TINY.replace('variant = "sack"', 'variant = "sack"\ntcp_l = true'))
    assert_bad_input(cli("emulate", path), "TCP-L")


def test_a_monitor_is_refused(cli: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "mon.toml"
    path.write_text(TINY + '[monitor]\nshared = "A->B"\nfrom = "A"\nto = "B"\n')
    proc = cli("emulate", path)
    assert_bad_input(proc, "monitor")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--duration", "0s"], "--duration"),
        (["--duration", "3"], "--duration"),
        (["--shell", "a", "--a", "true"], "--shell"),
        (["--shell", "nowhere"], "nowhere"),
        (["--replay", "."], "--replay"),
        (["--pcap", "nocolon"], "NODE:FILE"),
        (["--pcap", "R:x.pcap"], "R"),
    ],
)
def test_bad_emulate_flags(cli: CliRunner, tiny: Path, args: list[str], needle: str) -> None:
    assert_bad_input(cli("emulate", tiny, *args), needle)


def test_replay_of_a_directory_without_a_recording(cli: CliRunner, tmp_path: Path) -> None:
    assert_bad_input(cli("emulate", "--replay", tmp_path), "no readable recording")


def test_emulate_without_a_scenario(cli: CliRunner) -> None:
    assert_bad_input(cli("emulate"), "SCENARIO")


def test_without_root_emulation_says_so(tiny: Path) -> None:
    # A fresh user namespace without a mapping: the process runs as "nobody"
    # there (geteuid() is 65534) while its files stay readable.
    unshare = shutil.which("unshare")
    if unshare is None:
        print("SKIP: needs unshare (util-linux) to drop root")
        return
    proc = subprocess.run(
        [unshare, "-U", sys.executable, "-m", "linklab", "emulate", str(tiny), "--duration", "1s"],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert_bad_input(proc, "needs root")


# --- user commands: exit statuses, and nothing left behind (issue 34) -------


def _command_failure_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The one ``linklab: error:`` line of a run whose command failed (exit 4)."""
    assert proc.returncode == 4, (proc.returncode, proc.stderr)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("linklab: ")]
    assert len(lines) == 1 and lines[0].startswith("linklab: error: "), proc.stderr
    return lines[0]


def test_a_failing_command_fails_the_run_with_its_status(cli: CliRunner, tiny: Path) -> None:
    if _skip_without_root():
        return
    # A command that exits non-zero: the summary is printed, with its status, and
    # the run exits 4 naming the command and its status on one line.
    proc = cli("emulate", tiny, "--duration", "5s", "--json", "--a", "exit 7")
    line = _command_failure_line(proc)
    assert "--a 'exit 7'" in line and "status 7" in line, line
    (cmd,) = json.loads(proc.stdout)["emulation"]["commands"]
    assert cmd["name"] == "a" and cmd["node"] == "A" and cmd["exit_status"] == 7, cmd
    assert cmd["failed"] and not cmd["killed_at_end"], cmd
    # A command sh cannot start (127); the other one, ending well, is no failure.
    proc = cli("emulate", tiny, "--duration", "5s", "--json", "--a", "sleep 0.2",
               "--b", "/nonexistent/x")  # fmt: skip
    line = _command_failure_line(proc)
    assert "--b '/nonexistent/x'" in line and "status 127" in line and "--a" not in line, line
    a, b = sorted(json.loads(proc.stdout)["emulation"]["commands"], key=lambda c: c["name"])
    assert (a["exit_status"], a["failed"], b["exit_status"], b["failed"]) == (0, False, 127, True)
    assert 0.1 < a["ended_s"] < 5, a


def _live(token: str) -> dict[int, tuple[str, int]]:
    """Live (not zombie) processes whose command line holds ``token``:
    ``{pid: (comm, start time in clock ticks)}``."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if token not in (d / "cmdline").read_bytes().decode(errors="replace"):
                continue
            stat = (d / "stat").read_text()
        except OSError:
            continue
        comm, fields = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :]
        state, start = fields.split()[0], int(fields.split()[19])
        if state != "Z":
            out[int(d.name)] = (comm, start)
    return out


def _tasks_in(namespaces: set[str], started_before: int) -> list[str]:
    """Tasks (threads included) in one of ``namespaces`` (``net:[inode]``) that
    started before ``started_before`` (clock ticks since boot): a namespace whose
    inode the kernel handed out again after it was freed holds only later tasks."""
    found = []
    for task in Path("/proc").glob("[0-9]*/task/[0-9]*"):
        try:
            ns = os.readlink(task / "ns" / "net")
            stat = (task / "stat").read_text()
        except OSError:
            continue
        start = int(stat[stat.rindex(")") + 2 :].split()[19])
        if ns in namespaces and start < started_before:
            found.append(f"{task} {stat[: stat.rindex(')') + 1]}")
    return found


def _ticks_now() -> int:
    return int(float(Path("/proc/uptime").read_text().split()[0]) * os.sysconf("SC_CLK_TCK")) + 1


def test_every_process_a_command_starts_ends_with_the_run(cli: CliRunner, tiny: Path) -> None:
    if _skip_without_root():
        return
    token = f"{300 + os.getpid() % 100}.{time.time_ns() % 10**9:09d}"
    # `a` puts two programs in the background and exits at once (status 0); `b`
    # still runs at the end of the 1 s run and is killed (no failure either).
    background = f"cat /dev/zero > /dev/null & sleep {token} &"
    proc = cli("emulate", tiny, "--duration", "1s", "--json", "--a", background,
               "--b", f"sleep {token}")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    a, b = sorted(json.loads(proc.stdout)["emulation"]["commands"], key=lambda c: c["name"])
    assert a["exit_status"] == 0 and not a["failed"] and not a["killed_at_end"], a
    assert b["killed_at_end"] and not b["failed"] and b["ended_s"] is None, b
    # Nothing any command started is left: not the background sleep (nor its cat).
    assert _live(token) == {}


def test_a_killed_emulator_leaves_no_process_and_no_namespace(tiny: Path) -> None:
    if _skip_without_root():
        return
    token = f"{300 + os.getpid() % 100}.{time.time_ns() % 10**9:09d}"
    mounts = Path("/proc/self/mountinfo").read_text().count(" nsfs ")
    emulator = subprocess.Popen(
        [sys.executable, "-m", "linklab", "emulate", str(tiny), "--duration", "60s",
         "--a", f"sleep {token}", "--b", f"sleep {token} & sleep {token}"],
        env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        # Wait (up to 30 s on a loaded machine) until the three sleeps run.
        deadline = time.monotonic() + 30
        while len([p for p, (c, _) in _live(token).items() if c == "sleep"]) < 3:
            assert emulator.poll() is None, emulator.communicate()[1]
            assert time.monotonic() < deadline, _live(token)
            time.sleep(0.05)
        ours = {p: c for p, (c, _) in _live(token).items() if p != emulator.pid}
        namespaces = {os.readlink(f"/proc/{p}/ns/net") for p in ours}
        host = os.readlink("/proc/self/ns/net")
        assert len(namespaces) == 2 and host not in namespaces, (namespaces, ours)
    finally:
        emulator.kill()  # SIGKILL: no destructor, no handler runs
        emulator.wait()
    killed_at = _ticks_now()
    # Within a couple of seconds no process of the run is alive (zombies wait only
    # for the host's init to reap them) and no task is inside its namespaces; they
    # were held by nothing else (not named, not mounted), so the kernel freed them.
    deadline = time.monotonic() + 3
    while (_live(token) or _tasks_in(namespaces, killed_at)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _live(token) == {}, _live(token)
    assert _tasks_in(namespaces, killed_at) == []
    assert Path("/proc/self/mountinfo").read_text().count(" nsfs ") == mounts


@pytest.mark.parametrize(
    ("drop", "missing"),
    [("-all", "without CAP_SYS_ADMIN and CAP_NET_ADMIN"), ("-net_admin", "without CAP_NET_ADMIN")],
)
def test_root_without_capabilities_is_told_which(tiny: Path, drop: str, missing: str) -> None:
    if _skip_without_root():
        return
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        print("SKIP: needs setpriv (util-linux) to drop capabilities")
        return
    # Root whose bounding set lacks the capabilities: exec gives it none of them.
    proc = subprocess.run(
        [setpriv, "--inh-caps=-all", f"--bounding-set={drop}", sys.executable, "-m", "linklab",
         "emulate", str(tiny), "--duration", "1s"],
        env=cli_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert_bad_input(proc, missing, "capabilities")
