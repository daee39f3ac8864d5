"""Workloads (``[[workloads]]``, docs/models/workloads.md): the fct table, the summary,
bad input, determinism across processes, the memory bound and the PS anchor.

Time: about 25 s in all on the 2-core reference machine (the PS quick grid ~12 s).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

import linklab
from conftest import TINY, CliRunner, assert_bad_input, cli_env, load_bench

DUMBBELL = """\
name = "wl"
duration = "20s"
[[links]]
a = "S{1..4}"
b = "R"
rate = "100Mbit"
delay = "1ms"
[[links]]
a = "R"
b = "D{1..2}"
rate = "10Mbit"
delay = "5ms"
queue = { kind = "droptail", limit = "200p" }
[[workloads]]
name = "web"
from = "S{1..4}"
to = "D{1..2}"
arrivals = { kind = "poisson", load = 0.5, link = "R->D1" }
size = { kind = "lognormal", median = "20kB", sigma = 1.0, max = "5MB" }
stop = "15s"
"""


def test_fct_table_and_summary_agree() -> None:
    r = linklab.run(DUMBBELL, seed=2)
    w = r.summary["workloads"]
    s = w["workloads"][0]
    fct = r.fct
    assert list(fct.columns) == [
        "workload", "flow", "from", "to", "size_bytes", "start_s", "fct_s", "ideal_s",
        "slowdown", "retransmits", "timeouts", "handshake_drops",
    ]  # fmt: skip
    assert fct.height == s["arrivals"] == w["flows_started"]
    assert int(fct["handshake_drops"].sum()) == s["handshake_drops"]
    done = fct.drop_nulls("fct_s")
    assert done.height == s["completed"] == s["arrivals"]  # arrivals stop 5 s early
    assert sorted(fct["flow"].to_list()) == list(range(fct.height))
    assert int(fct["size_bytes"].sum()) == s["offered_bytes"]
    # The summary's quantiles come from the same flows (histogram: 0.4 % resolution).
    assert math.isclose(float(done["fct_s"].mean()), s["fct_s"]["mean"], rel_tol=1e-9)
    p50 = float(done["slowdown"].quantile(0.5, "nearest"))
    assert math.isclose(p50, s["slowdown"]["p50"], rel_tol=0.01)
    # Slots: bounded by the flows alive at once, not by the flows started.
    assert w["slots"] == w["peak_alive"] < s["arrivals"] / 10
    # Pairs: every sender and receiver of the cross product is used.
    assert set(fct["from"]) == {"S1", "S2", "S3", "S4"}
    assert set(fct["to"]) == {"D1", "D2"}


def test_run_prints_the_workload_table(cli: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "wl.toml"
    path.write_text(DUMBBELL)
    out = cli("run", path)
    assert out.returncode == 0, out.stderr
    assert "workloads: " in out.stdout and "slowdown mean" in out.stdout
    assert "web       all" in out.stdout
    js = json.loads(cli("run", path, "--json").stdout)
    assert js["workloads"]["workloads"][0]["name"] == "web"


def test_same_seed_same_results_in_parallel_processes(tmp_path: Path) -> None:
    path = tmp_path / "wl.toml"
    path.write_text(DUMBBELL)
    cmd = [sys.executable, "-m", "linklab", "run", str(path), "--json", "--seed", "7"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, env=cli_env()) for _ in range(2)]
    outs = [p.communicate(timeout=60)[0] for p in procs]
    alone = subprocess.run(cmd, capture_output=True, env=cli_env(), timeout=60, check=True).stdout

    def strip(raw: bytes) -> dict[str, object]:
        d = json.loads(raw)
        d.pop("wall_time_s", None)
        d.pop("hops_per_s", None)
        d.pop("timings", None)
        return d

    assert strip(outs[0]) == strip(outs[1]) == strip(alone)
    other = subprocess.run(
        cmd[:-1] + ["8"], capture_output=True, env=cli_env(), timeout=60, check=True
    ).stdout
    assert strip(other)["workloads"] != strip(alone)["workloads"]


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        (('kind = "poisson"', 'kind = "poison"'), ["workloads[0].arrivals.kind", "poisson"]),
        ((', link = "R->D1"', ""), ["workloads[0].arrivals.link"]),
        (('link = "R->D1"', 'link = "R->X"'), ["workloads[0]", "R->X"]),
        (("sigma = 1.0", "sigma = 9.0"), ["workloads[0].size.sigma", "0 to 5"]),
        (('to = "D{1..2}"', 'to = "Q"'), ["workloads[0].to", "not a node"]),
        (('stop = "15s"', 'stop = "15s"\nweights = [1, 2]'), ["workloads[0].weights", "8"]),
        (('stop = "15s"', 'stop = "15s"\nbuckets = ["1MB", "10kB"]'), ["workloads[0].buckets[1]"]),
    ],
)
def test_bad_workloads_exit_2_naming_the_key(
    cli: CliRunner, tmp_path: Path, change: tuple[str, str], needles: list[str]
) -> None:
    path = tmp_path / "bad.toml"
    assert change[0] in DUMBBELL
    path.write_text(DUMBBELL.replace(change[0], change[1]))
    assert_bad_input(cli("run", path), *needles)


def test_files_bad_lines_give_file_and_line(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "sizes.cdf").write_text("# bytes  P\n1000 0\n5000 0.4\n2000 0.9\n")
    path = tmp_path / "cdf.toml"
    path.write_text(
        DUMBBELL.replace(
            'size = { kind = "lognormal", median = "20kB", sigma = 1.0, max = "5MB" }',
            'size = { kind = "cdf", file = "sizes.cdf" }',
        )
    )
    assert_bad_input(cli("run", path), "workloads[0].size.file", "sizes.cdf:4:")
    (tmp_path / "sizes.cdf").write_text("# bytes  P\n1000 0\n5000 0.4\n20000 1\n")
    assert cli("run", path).returncode == 0
    (tmp_path / "arr.txt").write_text("0 1000\n0.5 2000\n0.25 10\n")
    text = DUMBBELL.replace(
        'arrivals = { kind = "poisson", load = 0.5, link = "R->D1" }',
        'arrivals = { kind = "trace", file = "arr.txt" }',
    )
    path.write_text(
        text.replace(
            'size = { kind = "lognormal", median = "20kB", sigma = 1.0, max = "5MB" }\n', ""
        )
    )
    assert_bad_input(cli("run", path), "workloads[0].arrivals.file", "arr.txt:3:", "back")
    (tmp_path / "arr.txt").write_text("0 1000\n0.5 2000\n")
    r = linklab.run(path)
    assert r.fct["size_bytes"].to_list() == [1000, 2000]


def test_the_emulator_refuses_workloads(cli: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "wl.toml"
    path.write_text(TINY + '[[workloads]]\nfrom = "A"\nto = "B"\n'
                    'arrivals = { kind = "poisson", rate = 1 }\nsize = "web_search"\n')  # fmt: skip
    assert_bad_input(cli("emulate", path), "workloads", "simulated only")


def test_model_ps(cli: CliRunner) -> None:
    out = cli("model", "ps", "--load", "0.5", "--capacity", "10Mbit", "--size", "1MB", "--json")
    d = json.loads(out.stdout)
    assert d["slowdown"] == 2.0 and math.isclose(d["rows"][0]["mean_s"], 1.6)
    assert_bad_input(cli("model", "ps", "--load", "1", "--capacity", "10Mbit"), "--load")


def test_memory_is_bounded_by_the_flows_alive() -> None:
    """2 000 short flows (the quick form of the 100 000-flow benchmark): the slots the
    run allocates are the most flows alive at once, a small fraction of the flows."""
    r = load_bench("workloads").scale(2_000)
    assert r["completed"] == r["flows_started"] > 1_800
    assert r["slots"] == r["peak_alive"] < r["flows_started"] / 20


def test_ps_anchor() -> None:
    """Poisson arrivals of large flows at loads 0.3 ... 0.8 over a 2 ms-RTT, 2000-packet
    drop-tail 10 Mbit/s bottleneck: the mean slowdown of the flows above 1 MB, pooled
    over 3 seeds of 1000 s, within 20 % of M/G/1-PS's 1/(1 - rho) at every load (the
    tolerance and its reasons: docs/models/workloads.md, "Validation"). ~20 s."""
    bench = load_bench("workloads")
    rows = bench.ps_grid([0.3, 0.4, 0.5, 0.6, 0.7, 0.8], [1, 2, 3], 1000.0, ("droptail",))
    assert len(rows) == 6
    for row in rows:
        assert row["unfinished"] == 0, row
        assert abs(row["measured"] / row["ps_slowdown"] - 1) <= 0.20, row


def test_plot_fct(cli: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "wl.toml"
    path.write_text(DUMBBELL)
    assert cli("run", path, "--trace", tmp_path / "tr").returncode == 0
    out = cli("plot-fct", tmp_path / "tr", "-o", tmp_path / "fct.svg")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "fct.svg").read_bytes().startswith(b"<?xml")
    assert_bad_input(cli("plot-fct", tmp_path, "-o", tmp_path / "x.png"), "fct.parquet")


def test_closed_loop_and_paced_keys_run_and_refuse_bad_values(
    cli: CliRunner, tmp_path: Path
) -> None:
    text = """\
duration = "10s"
[[links]]
a = "C{1..3}"
b = "S"
rate = "10Mbit"
delay = "5ms"
[[workloads]]
name = "pages"
from = "C{1..3}"
to = "S"
arrivals = { kind = "closed", clients = 6, think = "500ms", objects = 4, parallel = 2 }
size = { kind = "fixed", bytes = 400 }
response = { kind = "lognormal", median = "30kB", sigma = 1.0 }
rate_cap = "4Mbit"
"""
    path = tmp_path / "closed.toml"
    path.write_text(text)
    out = cli("run", path)
    assert out.returncode == 0, out.stderr
    assert "pages: " in out.stdout and " transactions, p50 " in out.stdout
    s = linklab.run(path).summary["workloads"]["workloads"][0]
    assert s["transactions"] > 20 and s["transaction_s"]["p50"] > 0
    path.write_text(text.replace("parallel = 2", "parallel = 5"))
    assert_bad_input(cli("run", path), "workloads[0].arrivals.parallel", "1 to 4")
    path.write_text(text.replace('rate_cap = "4Mbit"', 'on = "1s"'))
    assert_bad_input(cli("run", path), "workloads[0].off")
    path.write_text(TINY.replace('to = "B"', 'to = "B"\nrate_cap = "1Mbit"'))
    assert_bad_input(cli("emulate", path), "rate_cap", "simulated only")


PERSISTENT = """\
duration = "60s"
[[links]]
a = "S"
b = "D"
rate = "10Mbit"
delay = "20ms"
queue = { kind = "droptail", limit = "200p" }
[[workloads]]
name = "small"
from = "S"
to = "D"
arrivals = { kind = "poisson", rate = 2 }
size = { kind = "fixed", bytes = 10000 }
tcp = { initial_window = 10 }
"""


def test_persistent_connections_skip_the_handshake_rtt(cli: CliRunner, tmp_path: Path) -> None:
    """10 kB flows (within the initial window) at 2 per second over a 40 ms round trip
    (load 1.6 %): on a persistent connection a flow skips the SYN/SYN-ACK round trip, so
    the median FCT is lower by one RTT. Target fixed from the path: 40 ms plus the SYNs'
    serialisation (~0.1 ms), within 10 %. Time: well under a second."""
    new = linklab.run(PERSISTENT, seed=1).fct
    kept_text = PERSISTENT + 'connection = "persistent"\npool = 2\n'
    kept = linklab.run(kept_text, seed=1).fct
    assert new.height == kept.height > 90
    assert kept["fct_s"].null_count() == 0
    d = float(new["fct_s"].median()) - float(kept["fct_s"].median())  # type: ignore[arg-type]
    assert 0.9 * 0.0401 <= d <= 1.1 * 0.0401, d
    # Same arrivals and sizes in both (the streams do not depend on the connections).
    assert new["start_s"].to_list() == kept["start_s"].to_list()
    assert linklab.run(kept_text, seed=1).fct.equals(kept)
    w = linklab.run(kept_text, seed=1).summary["workloads"]
    assert w["slots"] <= 2 and w["peak_alive"] <= 2
    path = tmp_path / "p.toml"
    path.write_text(kept_text + 'on = "1s"\noff = "1s"\n')
    assert_bad_input(cli("run", path), "workloads[0].connection", "persistent", "on")
    path.write_text(PERSISTENT + "pool = 3\n")
    assert_bad_input(cli("run", path), "workloads[0].pool", 'connection = "persistent"')
