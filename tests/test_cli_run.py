"""The CLI on the happy path: version, schema, run (most of these need the working core)."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl

import linklab
from conftest import PCAP_NS_MAGIC, TINY, CliRunner, cli_env

SUMMARY_KEYS = {
    "scenario", "seed", "sim_time_s", "wall_time_s", "events", "hops", "hops_per_s", "aggregate",
    "flows", "links", "queues",
}  # fmt: skip


def _ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    return proc.stdout


def _summary(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    out = _ok(proc)
    assert len(out.strip().splitlines()) == 1, "--json prints one JSON object on one line"
    summary = json.loads(out)
    assert isinstance(summary, dict)
    return summary


def _without_wall(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k not in ("wall_time_s", "hops_per_s")}


# --- no core needed ---------------------------------------------------------


def test_version(cli: CliRunner) -> None:
    out = _ok(cli("--version"))
    assert out.strip() == f"linklab {linklab.__version__}"


def test_schema_prints_json(cli: CliRunner) -> None:
    schema = json.loads(_ok(cli("schema")))
    assert isinstance(schema, dict)


def test_schema_to_file(cli: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "sub" / "schema.json"
    target.parent.mkdir()
    assert _ok(cli("schema", "-o", target)) == ""
    assert json.loads(target.read_text()) == json.loads(linklab.json_schema())


# --- need the working core --------------------------------------------------


def test_schema_describes_scenarios(cli: CliRunner) -> None:
    """Needs the core's schema: it describes the top-level keys of a scenario."""
    schema = json.loads(_ok(cli("schema")))
    assert {"name", "duration", "links", "flows"} <= set(schema.get("properties", {}))


def test_run_json(cli: CliRunner, tiny: Path) -> None:
    summary = _summary(cli("run", tiny, "--json", "--seed", "7"))
    assert SUMMARY_KEYS <= set(summary)
    assert summary["scenario"] == "tiny"
    assert summary["seed"] == 7
    assert summary["sim_time_s"] == 2.0
    assert summary["wall_time_s"] > 0
    assert summary["events"] > 0
    assert len(summary["flows"]) == 1
    flow = summary["flows"][0]
    assert (flow["from"], flow["to"]) == ("A", "B")
    # A lossless 10 Mbit/s link carries a bulk flow at most at 10 Mbit/s, and well above 1.
    assert 1e6 < flow["goodput_bps"] <= 10e6
    assert flow["timeouts"] == 0
    assert flow["completed_s"] is None
    assert {link["name"] for link in summary["links"]} >= {"A->B", "B->A"}


def test_run_table(cli: CliRunner, tiny: Path) -> None:
    out = _ok(cli("run", tiny))
    assert "tiny" in out
    assert "goodput" in out
    assert "A->B" in out
    assert "droptail" in out


def test_set_overrides_params(cli: CliRunner, tiny: Path) -> None:
    """With 3% loss on A->B there are losses and retransmissions; with 0 there are none."""
    clean = _summary(cli("run", tiny, "--json"))
    lossy = _summary(cli("run", tiny, "--json", "--set", "per=0.03"))
    assert clean["aggregate"]["retransmits"] == 0
    assert lossy["aggregate"]["retransmits"] > 0
    assert lossy["aggregate"]["goodput_bps"] < clean["aggregate"]["goodput_bps"]


def test_same_seed_same_summary(cli: CliRunner, tiny: Path) -> None:
    a = _summary(cli("run", tiny, "--json", "--seed", "3", "--set", "per=0.02"))
    b = _summary(cli("run", tiny, "--json", "--seed", "3", "--set", "per=0.02"))
    assert _without_wall(a) == _without_wall(b)


def test_deterministic_across_processes(tiny: Path, tmp_path: Path) -> None:
    """Two runs in parallel processes and one after them give identical summaries."""
    cmd = [sys.executable, "-m", "linklab", "run", str(tiny), "--json", "--set", "per=0.02"]

    def start() -> subprocess.Popen[str]:
        return subprocess.Popen(
            cmd, cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    procs = [start(), start()]
    outs = [p.communicate(timeout=60) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    sequential = subprocess.run(
        cmd, cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=60
    )
    assert sequential.returncode == 0, sequential.stderr
    summaries = [json.loads(out) for out, _ in outs] + [json.loads(sequential.stdout)]
    first = _without_wall(summaries[0])
    for s in summaries[1:]:
        assert _without_wall(s) == first


def test_trace_parquet(cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "new" / "traces"
    _ok(cli("run", tiny, "--json", "--trace", out))
    files = sorted(out.glob("*.parquet"))
    assert files, "--trace writes at least one Parquet table"
    for f in files:
        frame = pl.read_parquet(f)
        # tiny loses nothing: no drops, no timer expiries
        assert frame.height > 0 or f.name in ("drops.parquet", "rto.parquet"), f
    assert not list(out.glob("*.tmp")) and not list(out.glob(".*"))


def test_pcap(cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    target = tmp_path / "ab.pcap"
    target.write_bytes(b"old")  # replaced atomically
    _ok(cli("run", tiny, "--json", "--pcap", f"A->B:{target}"))
    data = target.read_bytes()
    assert data[:4] in PCAP_NS_MAGIC
    assert len(data) > 24 + 16, "a global header and at least one packet"


def test_pcap_link_with_colon_free_split(cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    """The link spec may hold '-' and '>'; the file is what follows the last ':'."""
    target = tmp_path / "both.pcap"
    _ok(cli("run", tiny, "--json", "--pcap", f"A-B:{target}"))
    data = target.read_bytes()
    assert data[:4] in PCAP_NS_MAGIC
    stamps = _pcap_stamps(data)
    assert len(stamps) > 2 and stamps == sorted(stamps), "both directions, in time order"


def _pcap_stamps(data: bytes) -> list[tuple[int, int]]:
    order = "<" if data[:4] == PCAP_NS_MAGIC[0] else ">"
    pos, out = 24, []
    while pos < len(data):
        sec, nsec, incl, _ = struct.unpack_from(f"{order}IIII", data, pos)
        out.append((sec, nsec))
        pos += 16 + incl
    assert pos == len(data)
    return out


def test_ctrl_c_exits_130(tmp_path: Path) -> None:
    """Needs the core: SIGINT during a long run exits 130 without a traceback."""
    long = tmp_path / "long.toml"
    long.write_text(TINY.replace('duration = "2s"', 'duration = "100000s"'))
    proc = subprocess.Popen(
        [sys.executable, "-m", "linklab", "run", str(long)],
        cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(2.0)  # past interpreter start-up and imports, into the run
    assert proc.poll() is None, proc.communicate()
    os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, (proc.returncode, err)
    assert "Traceback" not in err


def test_pcapng_by_suffix(cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    """A .pcapng file gets pcapng: a section header, then interfaces named after the link."""
    target = tmp_path / "both.pcapng"
    _ok(cli("run", tiny, "--json", "--pcap", f"A-B:{target}"))
    data = target.read_bytes()
    assert data[:4] == b"\x0a\x0d\x0d\x0a"
    assert b"A->B" in data and b"B->A" in data


def test_pcap_same_link_twice(cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    proc = cli("run", tiny, "--pcap", f"A->B:{tmp_path / 'x.pcap'}", "--pcap", "A->B:y.pcapng")
    assert proc.returncode == 2 and "given twice" in proc.stderr, proc.stderr


def test_run_does_not_import_the_reproductions(tmp_path: Path) -> None:
    """`linklab run` builds `reproduce` bare: the reproductions' modules (~5 MiB, ~60 ms of
    imports) stay out of a run's process; `linklab reproduce` still gets its names."""
    code = (
        "import sys, linklab.cli as c; s = c.main(['run', sys.argv[1], '--json']);"
        "print(s, 'linklab.reproduce' in sys.modules)"
    )
    scenario = tmp_path / "tiny.toml"
    scenario.write_text(TINY)
    run = [sys.executable, "-c", code, str(scenario)]
    proc = subprocess.run(run, env=cli_env(), capture_output=True, text=True)
    assert _ok(proc).strip().splitlines()[-1] == "0 False"
    code = "import linklab.cli as c; c.main(['reproduce', '--help'])"
    run = [sys.executable, "-c", code]
    proc = subprocess.run(run, env=cli_env(), capture_output=True, text=True)
    assert "wipemu" in _ok(proc) and "--experiments" in proc.stdout
