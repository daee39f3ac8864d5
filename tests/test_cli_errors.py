"""Bad input anywhere: exit 2, one clear stderr line, no traceback, nothing lost."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import TINY, CliRunner, assert_bad_input

# --- argument errors (no working core needed) ------------------------------


def test_unknown_flag(cli: CliRunner, tiny: Path) -> None:
    assert_bad_input(cli("run", tiny, "--bogus"), "--bogus")


def test_unknown_command(cli: CliRunner) -> None:
    assert_bad_input(cli("frobnicate"), "frobnicate")


def test_no_command(cli: CliRunner) -> None:
    assert_bad_input(cli())


def test_missing_flag_value(cli: CliRunner, tiny: Path) -> None:
    assert_bad_input(cli("run", tiny, "--seed"), "--seed")


@pytest.mark.parametrize("bad", ["per", "=1", "", " =3"])
def test_malformed_set(cli: CliRunner, tiny: Path, bad: str) -> None:
    assert_bad_input(cli("run", tiny, "--set", bad), "--set", "name=value")


@pytest.mark.parametrize("bad", ["x", "1.5", "-1", "18446744073709551616", ""])
def test_bad_seed(cli: CliRunner, tiny: Path, bad: str) -> None:
    assert_bad_input(cli("run", tiny, f"--seed={bad}"), "--seed", "0 to 2**64-1")


@pytest.mark.parametrize("bad", ["A->B", "A->B:", ":file.pcap"])
def test_malformed_pcap(cli: CliRunner, tiny: Path, bad: str) -> None:
    assert_bad_input(cli("run", tiny, "--pcap", bad), "--pcap", "LINK:FILE")


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["run", "TINY", "--trace", ""], "--trace"),
        (["run", "TINY", "--trace", " "], "--trace"),
        (["sweep", "TINY", "--param", "per=0", "--out", ""], "--out"),
        (["schema", "-o", ""], "--output"),
        (["plot", "sw", "--x", "per", "--y", "goodput_bps", "-o", ""], "--output"),
        (["plot-trace", "tr", "-o", ""], "--output"),
        (["report", "sw", "-o", ""], "--output"),
        (["reproduce", "wipemu", "--quick", "--out", ""], "--out"),
    ],
)
def test_empty_output_path(cli: CliRunner, tiny: Path, args: list[str], flag: str) -> None:
    """An empty output path meant the current directory: 'run --trace ""' and
    'sweep --out ""' wrote (and overwrote) their files there (issue 33 soak)."""
    before = sorted(p.name for p in tiny.parent.iterdir())
    argv = [str(tiny) if a == "TINY" else a for a in args]
    assert_bad_input(cli(*argv), flag, "non-empty path")
    assert sorted(p.name for p in tiny.parent.iterdir()) == before


# --- scenario file errors ---------------------------------------------------


def test_missing_scenario_file(cli: CliRunner, tmp_path: Path) -> None:
    line = assert_bad_input(cli("run", tmp_path / "nope.toml"), "nope.toml")
    assert "No such file" in line


def test_scenario_is_a_directory(cli: CliRunner, tmp_path: Path) -> None:
    assert_bad_input(cli("run", tmp_path), str(tmp_path))


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_scenario_is_a_device(cli: CliRunner, command: str) -> None:
    """/dev/zero was read until MemoryError: a non-regular file is refused unread."""
    args = ["--param", "per=0", "--out", "o"] if command == "sweep" else []
    line = assert_bad_input(cli(command, "/dev/zero", *args), "/dev/zero", "not a regular file")
    assert "character device" in line


def test_scenario_is_a_fifo(cli: CliRunner, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)  # nobody writes: opening it must not wait
    assert_bad_input(cli("run", fifo, timeout=20), "pipe.toml", "FIFO")


def test_scenario_not_utf8(cli: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "bin.toml"
    path.write_bytes(b'name = "\xff\xfe"\n')
    assert_bad_input(cli("run", path), "bin.toml", "UTF-8")


def test_toml_syntax_error(cli: CliRunner, tmp_path: Path) -> None:
    """Needs the core: its TOML parser reports the line; the CLI folds it into one line."""
    path = tmp_path / "broken.toml"
    path.write_text('name = "broken"\nduration = \n[[links]]\n')
    line = assert_bad_input(cli("run", path), "broken.toml", allowed=False)
    assert "line 2" in line, line


def test_scenario_error_names_key_path(cli: CliRunner, tmp_path: Path) -> None:
    """Needs the core: an unknown key is rejected with its key path."""
    path = tmp_path / "typo.toml"
    path.write_text(TINY.replace('rate = "10Mbit"', 'rat = "10Mbit"'))
    line = assert_bad_input(cli("run", path), "links[0]", "rat", allowed=False)
    assert "rate" in line, f"the message lists the allowed keys: {line}"


def test_scenario_error_out_of_range_param(cli: CliRunner, tiny: Path) -> None:
    """Needs the core: a loss probability above 1 is rejected, naming the key."""
    assert_bad_input(cli("run", tiny, "--set", "per=1.5"), "loss")


def test_scenario_error_unknown_pcap_link(cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    """Needs the core: capturing a link that does not exist is a scenario error."""
    out = tmp_path / "x.pcap"
    assert_bad_input(cli("run", tiny, "--pcap", f"X->Y:{out}"), "X->Y")
    assert not out.exists()


# --- output errors: checked before the run, nothing lost --------------------


def test_pcap_into_missing_directory(cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "dir" / "ab.pcap"
    assert_bad_input(cli("run", tiny, "--pcap", f"A->B:{target}"), "--pcap", str(target))
    assert not target.parent.exists()


def test_pcap_under_a_file(cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("keep me")
    target = blocker / "ab.pcap"
    assert_bad_input(cli("run", tiny, "--pcap", f"A->B:{target}"), "--pcap")
    assert blocker.read_text() == "keep me"


def test_trace_dir_is_a_file(cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "traces"
    blocker.write_text("keep me")
    assert_bad_input(cli("run", tiny, "--trace", blocker), "--trace", str(blocker))
    assert blocker.read_text() == "keep me"


def test_schema_output_unwritable(cli: CliRunner, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("keep me")
    assert_bad_input(cli("schema", "-o", blocker / "schema.json"), "schema.json")
    assert blocker.read_text() == "keep me"


def test_failed_run_keeps_existing_outputs(cli: CliRunner, tmp_path: Path) -> None:
    """A run that fails (bad scenario) leaves earlier outputs byte-for-byte intact."""
    pcap = tmp_path / "ab.pcap"
    pcap.write_bytes(b"old capture")
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "cwnd.parquet").write_bytes(b"old trace")
    bad = tmp_path / "bad.toml"
    bad.write_text(TINY.replace("[tcp]", "[tcp]\nbogus_key = 1"))
    proc = cli("run", bad, "--trace", traces, "--pcap", f"A->B:{pcap}")
    assert_bad_input(proc, allowed=False)
    assert pcap.read_bytes() == b"old capture"
    assert (traces / "cwnd.parquet").read_bytes() == b"old trace"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


# --- link-level FEC settings (docs/models/ll-fec.md) -------------------------

_SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"


@pytest.mark.parametrize(
    ("scenario", "sets", "needles"),
    [
        ("dumbbell-ll-hybrid.toml", ["n=256"], ["links[1].ab.fec.n", "255"]),
        ("dumbbell-ll-hybrid.toml", ["k=10"], ["links[1].ab.fec.k", "k < n"]),
        ("dumbbell-ll-hybrid.toml", ["k=0"], ["links[1].ab.fec.k"]),
        ("dumbbell-ll-hybrid.toml", ["persistence=-1"], ["links[1].ab.fec.persistence"]),
        ("dumbbell-ll-fec.toml", ["per=0.999"], ["links[1].ab.fec.matched_per", "n = 10"]),
        ("dumbbell-ll-fec.toml", ["loss_unit=bit"], ["links[1].ab.fec.loss_unit"]),
    ],
)
def test_link_fec_bad_settings(
    cli: CliRunner, scenario: str, sets: list[str], needles: list[str]
) -> None:
    """Needs the core: impossible FEC settings exit 2 naming the key path."""
    args: list[str | Path] = ["run", _SCENARIOS / scenario]
    for s in sets:
        args += ["--set", s]
    assert_bad_input(cli(*args), *needles)


# --- LT-TCP parameters (scenarios/dumbbell-lt-tcp.toml) ----------------------

LT_TCP = Path(__file__).resolve().parents[1] / "scenarios" / "dumbbell-lt-tcp.toml"


@pytest.mark.parametrize(
    ("setting", "key"),
    [
        ("mss_min=600", "tcp.lt.mss_min"),
        ("g=0", "tcp.lt.g_min_segments"),
        ("estimator=oracle", "tcp.lt.estimator"),
    ],
)
def test_lt_tcp_bad_parameter(cli: CliRunner, setting: str, key: str) -> None:
    """Needs the core: MSS_min > MSS_max, G < 1, an unknown estimator side."""
    assert_bad_input(cli("run", LT_TCP, "--set", setting), key)


def test_lt_tcp_bins_must_cover_0_to_1(cli: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "bins.toml"
    path.write_text(LT_TCP.read_text().replace("[1.0, 11]]", "[0.9, 11]]"))
    assert_bad_input(cli("run", path), "tcp.lt.proactive_bins", "[0, 1]")


def test_a_broken_packet_account_is_exit_3_with_one_line(
    tiny: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The core raises AccountingError when a run's packet account does not
    # close (crates/core/src/net/account.rs; its Rust tests break a link on
    # purpose). Here: that the CLI maps it to exit 3 with the core's message.
    from linklab import _core, cli

    message = (
        "packet account broken in scenario 'tiny', seed 1: link direction a->b: departed 10 "
        "+ copies 0 != delivered 7 + lost 0 (none) + in transit 1 (wire 1)"
    )

    def broken(*_args: object, **_kwargs: object) -> None:
        raise _core.AccountingError(message)

    monkeypatch.setattr(_core, "run", broken)
    assert cli.main(["run", str(tiny)]) == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip() == f"linklab: internal error: {message}"
    assert issubclass(_core.AccountingError, _core.InternalError)
