"""linklab.check: properties over random scenarios (docs/checking.md).

The fixed batch (``test_fixed_batch``) checks every property on BATCH_DRAWS draws
of seed BATCH_SEED with two worker processes; the other tests pin the checker
itself (each property flags a fabricated violation) and the command (bad flags,
a failure written as a TOML file that reproduces). Measured on the 2-core
machine: the whole file in about 100 s, the batch about 80 s of it; with workloads and
media drawn (issue 37), on a loaded machine (load 11), the file in 50 s, the batch
20-25 s (26-28 s before them, same machine and load).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import polars as pl
import pytest

pytest.importorskip("hypothesis")

from linklab.check import (  # noqa: E402
    KNOWN_BUGS,
    check_random,
    draw_at,
    features,
    render,
)
from linklab.check._generate import Draw  # noqa: E402
from linklab.check._model import Model, pairs  # noqa: E402
from linklab.check._properties import (  # noqa: E402
    _diff,
    check_capacity,
    check_causality,
    check_draw,
    check_links,
    check_media,
    check_progress,
    check_workloads,
    event_bound,
    min_one_way,
    progress_window,
)

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "python")}

#: The fixed batch: a few hundred draws, every property must hold on each.
BATCH_SEED = 20260601
BATCH_DRAWS = 600

#: Model families the fixed batch must have drawn at least once (the generator
#: covers the model space; a family missing here means the batch checks less
#: than it claims).
REQUIRED = {
    *(f"topology:{t}" for t in ("single", "dumbbell", "chain", "trace", "rlc", "fanout", "frame")),
    *(f"link:{k}" for k in ("wired", "rlc_am", "frame_arq")),
    *(f"rate:{k}" for k in ("rate", "rate_schedule", "trace")),
    "loss:random",
    "channel:bernoulli",
    "channel:gilbert_elliott",
    "channel:rayleigh",
    "netem",
    "netem:loss",
    "netem:jitter",
    "netem:duplicate",
    "fec:ll-fec",
    "fec:hybrid",
    *(f"queue:{k}" for k in ("droptail", "red", "sbd", "codel", "fq_codel", "pie")),
    "limit:packets",
    "limit:bytes",
    *(f"cc:{k}" for k in ("newreno", "reno", "cubic", "westwood", "dctcp", "bbr")),
    "tcp:variant=reno",
    "tcp:variant=newreno",
    "tcp:variant=sack",
    "tcp:profile=ns2",
    "tcp:profile=ns3",
    "tcp:profile=linux",
    "tcp:ecn",
    "tcp:rack",
    "tcp:prr",
    "tcp:pacing",
    "tcp:delayed_ack",
    "tcp:lt",
    "tcp:tcp_l",
    "tcp:rto_tick",
    # The ns-3 and Linux rule sets behind options (docs/models/tcp.md, bbr.md, codel.md):
    "tcp:cwr_per_echo",
    "tcp:idle_restart=linux",
    "tcp:idle_restart=off",
    "tcp:rate_sample=ns3",
    "tcp:prr_variant=ns3",
    "tcp:prr_variant=rfc6937",
    "cc:cubic:timeout_wmax=ns3",
    "cc:cubic:ssthresh_from=cwnd",
    "cc:cubic:avoidance=ns3",
    "cc:cubic:hystart=classic-ns3",
    "cc:westwood:filter=ns3",
    "cc:dctcp:loss=alpha",
    "cc:bbr:send_quantum=ns3",
    "cc:bbr:ack_aggregation=linux",
    "cc:bbr:ack_aggregation=ns3",
    "cc:bbr:loss_window=ns3",
    "cc:dctcp:echo=ns3",
    "tcp:quick_ack_first",
    "tcp:rto_resend_lost",
    "tcp:sacked_rtx_in_pipe",
    "tcp:partial_ack_resend",
    "queue:codel:variant=ns3",
    "queue:fq_codel:variant=ns3",
    "queue:red:count_reset=ns3",
    "flow:count",
    "flow:start_jitter",
    "flow:bytes",
    "flow:stop",
    "flow:tcp",
    "allocation:step",
    "allocation:burst",
    "monitor",
    *(f"workload:{k}" for k in ("poisson", "deterministic", "trace", "closed", "persistent")),
    "workload:paced",
    *(f"size:{k}" for k in ("fixed", "lognormal", "pareto", "cdf", "web_search", "data_mining")),
    *(f"media:{k}" for k in ("cbr", "voice", "video", "two-way")),
}
# `pacing = true` is left out of the batch while finding F6 is open (KNOWN_BUGS).
if "pacing-srtt-after-recovery" in KNOWN_BUGS:
    REQUIRED.discard("tcp:pacing")


def test_fixed_batch(tmp_path: Path) -> None:
    report = check_random(
        BATCH_DRAWS,
        seed=BATCH_SEED,
        out=tmp_path,
        jobs=2,
        timeout=60,
        shrink_per_property=1,
        shrink_budget_s=60,
        avoid=frozenset(KNOWN_BUGS),
    )
    text = render(report)
    assert not report.failed, text + "".join(
        f"\n--- {f.file}\n{f.file.read_text()}" for f in report.failures if f.file
    )
    assert report.outcomes["ok"] + report.outcomes["refused"] == BATCH_DRAWS, text
    # Valid draws: refusals are rare (each reason is listed in the text).
    assert report.outcomes["refused"] <= BATCH_DRAWS // 50, text
    missing = REQUIRED - set(report.features)
    assert not missing, f"the batch never drew {sorted(missing)}"
    # The properties had something to check.
    assert report.progress_flows >= 20, text
    assert report.sliced >= 1, text
    assert report.workload_flows >= 100 and report.media_streams >= 50, text


def test_draws_are_deterministic() -> None:
    for i in (0, 7, 13):
        a, b = draw_at(3, i), draw_at(3, i)
        assert (a.scenario, a.seed, a.files) == (b.scenario, b.seed, b.files)
    assert draw_at(3, 0).scenario != draw_at(4, 0).scenario


def test_reno_rto_guard_is_drawn_with_reno() -> None:
    """`[tcp] reno_rto_guard` (ns-2's Reno after a timeout) is among the draws, on and
    off, mostly beside variant reno where it acts (60 draws of seed 7: 8 set it, 2 on
    with reno; ~2 s), and is reported as a feature."""
    draws = [draw_at(7, i) for i in range(60)]
    set_ = [d for d in draws if "reno_rto_guard" in d.scenario.get("tcp", {})]
    assert {d.scenario["tcp"]["reno_rto_guard"] for d in set_} == {True, False}
    on_reno = [d for d in set_ if d.scenario["tcp"]["reno_rto_guard"]
               and d.scenario["tcp"].get("variant") == "reno"]  # fmt: skip
    assert on_reno and all("tcp:reno_rto_guard" in features(d) for d in on_reno)


# ---------------------------------------------------------------------------
# The checker flags fabricated violations (and passes the honest cases)
# ---------------------------------------------------------------------------

LINK: dict[str, Any] = {
    "duration": "2s",
    "links": [{"a": "S", "b": "D", "rate": "1000000bit", "delay": "10ms"}],
    "flows": [{"from": "S", "to": "D"}],
}


def _seq(rows: list[tuple[int, float, str, int]]) -> pl.DataFrame:
    return pl.DataFrame(
        rows,
        schema={"flow": pl.UInt64, "time_s": pl.Float64, "event": pl.String, "seq": pl.UInt64},
        orient="row",
    )


def test_causality() -> None:
    m = Model(LINK, {})
    lb = min_one_way(m, m.flows[0])
    assert lb == pytest.approx(0.010 + 41 * 8 / 1e6)
    ok = _seq([(0, 0.1, "sent", 0), (0, 0.1 + lb, "received", 0)])
    assert check_causality(m, ok) == []
    early = _seq([(0, 0.1, "sent", 0), (0, 0.1 + lb - 1e-6, "received", 0)])
    assert "below the path's least one-way time" in check_causality(m, early)[0]
    orphan = _seq([(0, 0.2, "received", 1460)])
    assert "never sent" in check_causality(m, orphan)[0]
    started = dict(LINK, flows=[{"from": "S", "to": "D", "start": "1s"}])
    assert "before its start" in check_causality(Model(started, {}), ok)[0]


def _summary(delivered: float, drops: int = 0) -> dict[str, Any]:
    return {
        "flows": [{"id": 0, "delivered_bytes": delivered}],
        "queues": [
            {"link": "S->D", "drops": {"overflow": 0}},
            {"link": "D->S", "drops": {"overflow": drops}},
        ],
        "links": [{"name": "S->D", "lost": 0}, {"name": "D->S", "lost": 0}],
    }


def test_capacity() -> None:
    m = Model(LINK, {})
    cap = m.directions["S->D"].cap_bytes(2.0, m.max_packet)
    payload = cap * 1460 / 1500  # payload that fills the link with 40-byte headers
    assert check_capacity(m, _summary(payload * 0.99)) == []
    problems = check_capacity(m, _summary(payload * 1.01))
    assert problems and problems[0].startswith("S->D:")


def test_rlc_capacity_allows_discarded_sdus() -> None:
    """Finding C2: an RLC SDU counts as started with its first PDU, and one discarded
    after `max_dat` transmissions sends no more, so the bytes started may exceed the rate
    by a packet per SDU lost."""
    sc = {
        "duration": "1s",
        "links": [{"a": "R", "b": "U", "kind": "rlc_am", "rate": "384kbit", "max_dat": 1}],
        "flows": [{"from": "R", "to": "U"}],
    }
    m = Model(sc, {})
    d = m.directions["R->U"]
    cap = d.cap_bytes(1.0, m.max_packet, netem=False) + m.max_packet
    link = {"name": "R->U", "tx_bytes": cap + 2 * m.max_packet, "tx_packets": 40, "rx_packets": 30}
    over, _ = check_links(m, {"links": [{**link, "lost": 0}]})
    assert over and over[0].startswith("R->U:")
    over, _ = check_links(m, {"links": [{**link, "lost": 3}]})
    assert over == []


def test_workloads_and_media() -> None:
    """A real run passes; a fabricated FCT below the bound and a broken media account
    are flagged. The bound of a 10 kB flow on a new connection over 1 Mbit/s, 10 ms:
    SYN, SYN-ACK and the data's trip (3 x 10 ms plus three 41-byte serialisations)
    and 10 kB at 1 Mbit/s (80 ms): 110.98 ms."""
    from linklab.api import run_source

    sc: dict[str, Any] = {
        **LINK,
        "flows": [],
        "workloads": [
            {
                "name": "w",
                "from": "S",
                "to": "D",
                "arrivals": {"kind": "deterministic", "rate": 2},
                "size": {"kind": "fixed", "bytes": 10_000},
            }
        ],
        "media": [{"kind": "cbr", "from": "S", "to": "D", "rate": "64kbit"}],
    }
    r = run_source(sc, seed=1, trace=True)
    m = Model(sc, {})
    fct = r.traces["fct"]
    problems, checked = check_workloads(m, r.summary, fct)
    assert problems == [] and checked == 4, problems
    assert float(fct["fct_s"].min()) >= 0.11098  # type: ignore[arg-type]
    low = fct.with_columns(pl.lit(0.1109, dtype=pl.Float64).alias("fct_s"))
    problems, _ = check_workloads(m, r.summary, low)
    assert problems and "below the least possible 0.1109" in problems[0], problems
    fewer = fct.head(3)
    assert "3 fct rows, 4 arrivals" in check_workloads(m, r.summary, fewer)[0][0]
    assert check_media(m, r.summary) == []
    broken = {**r.summary, "media": [{**r.summary["media"][0], "received": 1}]}
    assert any("delivered" in p for p in check_media(m, broken))


def test_capacity_of_a_trace_and_a_schedule() -> None:
    trace = dict(
        LINK,
        links=[
            {"a": "S", "b": "D", "delay": "0s", "ab": {"trace": "t.down"}, "ba": {"rate": "1Mbit"}}
        ],
    )
    m = Model(trace, {"t.down": "1\n1\n4\n"})  # 3 opportunities per 4 ms
    d = m.directions["S->D"]
    assert d.opportunities(2.0) == 1500
    assert d.cap_bytes(2.0, 0) == 1500 * 1500
    sched = dict(
        LINK,
        links=[
            {
                "a": "S",
                "b": "D",
                "rate_schedule": [{"at": "0s", "rate": "1Mbit"}, {"at": "1s", "rate": "3Mbit"}],
            }
        ],
    )
    d = Model(sched, {}).directions["S->D"]
    assert d.cap_bytes(2.0, 0) == pytest.approx(4e6 / 8)
    assert d.cap_bytes(0.5, 0) == pytest.approx(0.5e6 / 8)


def test_progress() -> None:
    m = Model(LINK, {})
    w = progress_window(m, m.flows[0])
    # Three round trips, each with a full 100-packet queue drained at 1 Mbit/s.
    assert w > 3 * 100 * 1500 * 8 / 1e6
    long = dict(LINK, duration="20s")
    m = Model(long, {})
    w = progress_window(m, m.flows[0])
    steady = [(0, 0.1 * i, "received", 1460 * i) for i in range(200)]
    assert check_progress(m, _summary(1.0), _seq(steady)) == ([], 1)
    stall = [(0, 0.1, "received", 0), (0, 0.1 + w + 0.5, "received", 1460)]
    problems, checked = check_progress(m, _summary(1.0), _seq(stall))
    assert checked == 1 and "delivered nothing new" in problems[0]
    # A segment dropped and not delivered when the stall began excuses it ...
    dropped = [*stall, (0, 0.05, "dropped", 1460)]
    assert check_progress(m, _summary(1.0), _seq(dropped))[0] == []
    # ... one delivered before does not.
    redundant = [*stall, (0, 0.05, "dropped", 0)]
    assert check_progress(m, _summary(1.0), _seq(redundant))[0]
    # A loss on the ACK path excuses the flow throughout.
    assert check_progress(m, _summary(1.0, drops=1), _seq(stall)) == ([], 0)
    # Lossy paths and finite transfers are not checked.
    lossy = dict(long, links=[dict(LINK["links"][0], loss=0.01)])
    assert check_progress(Model(lossy, {}), _summary(1.0), _seq(stall)) == ([], 0)
    finite = dict(long, flows=[{"from": "S", "to": "D", "bytes": 10_000}])
    assert check_progress(Model(finite, {}), _summary(1.0), _seq(stall)) == ([], 0)


def test_event_bound_and_diff() -> None:
    m = Model(LINK, {})
    two = event_bound(Model(dict(LINK, duration="4s"), {}))
    assert two > event_bound(m) > 16 * 2 * 1e6 * 2 / 8 / 40
    assert (
        _diff({"a": [1, {"b": 2.0}], "wall_time_s": 1}, {"a": [1, {"b": 2.0}], "wall_time_s": 2})
        is None
    )
    assert _diff({"a": [1, {"b": 2.0}]}, {"a": [1, {"b": 2.5}]}) == ".a[1].b: 2.0 vs 2.5"
    assert math.isinf(
        Model(dict(LINK, links=[dict(LINK["links"][0], queue={"limit": "inf"})]), {})
        .directions["S->D"]
        .worst_s(1500)
    )


def test_model_reads_ranges_and_routes() -> None:
    assert pairs("BTS{1..2}", "MS{1..4}") == [
        ("BTS1", "MS1"),
        ("BTS1", "MS2"),
        ("BTS2", "MS3"),
        ("BTS2", "MS4"),
    ]
    d = draw_at(1, 0)
    assert features(d)
    sc = {
        "duration": "1s",
        "links": [
            {"a": "S{1..2}", "b": "L", "rate": "1Gbit"},
            {"a": "L", "b": "R", "rate": "10Mbit", "delay": "5ms"},
            {"a": "R", "b": "D{1..2}", "rate": "1Gbit"},
        ],
        "flows": [{"from": "S{1..2}", "to": "D{1..2}", "count": 2}],
    }
    m = Model(sc, {})
    assert [f.dst for f in m.flows] == ["D1", "D1", "D2", "D2"]
    assert m.flows[2].path == ["S2->L", "L->R", "R->D2"]
    assert m.flows[2].ack_path == ["D2->R", "R->L", "L->S2"]
    # Finding C1: the largest packet counts a workload's own `tcp.mss` (seed 888, draw
    # 2060: a 4605-byte workload MSS beside the default 1448 made `capacity` fail).
    sc["workloads"] = [{"name": "w", "from": "S1", "to": "D1", "tcp": {"mss": 4605}}]
    assert Model(sc, {}).max_packet >= 4605 + 40


# ---------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------


def _check(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "linklab.check", *args],
        capture_output=True,
        text=True,
        env=env or ENV,
        cwd=cwd,
        timeout=300,
    )


def test_command_small_batch() -> None:
    r = _check("--draws", "4", "--seed", "5", "-q", "--coverage")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "linklab.check: 4 draws of seed 5" in r.stdout
    assert "failures: none" in r.stdout and "coverage: " in r.stdout


def test_command_only_keeps_the_draws_with_a_name() -> None:
    # --only: the first N draws that use every name given, the others passed over.
    from linklab.check import check_random, draw_at, features

    report = check_random(2, seed=5, jobs=1, only=frozenset({"topology:rlc", "queue:pie"}))
    assert report.draws == 2 and report.outcomes["ok"] == 2, report
    kept = [i for i in range(report.last_index + 1)
            if {"topology:rlc", "queue:pie"} <= features(draw_at(5, i))]  # fmt: skip
    assert len(kept) == 2 and kept[-1] == report.last_index
    assert report.skipped == report.last_index + 1 - 2
    assert report.labels == {"rlc": 2}


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--draws", "0"],
        ["--draws", "x"],
        ["--draws", "3", "--jobs", "0"],
        ["--draws", "3", "--timeout", "-1"],
        ["--draws", "3", "--seed", "-2"],
        ["--draws", "3", "--shrink-time", "nan"],
        ["--draws", "3", "--replay", "x.toml"],
        ["--replay", "does-not-exist.toml"],
        ["--draws", "3", "--out", __file__],
        ["--draws", "3", "--bogus"],
        ["--draws", "3", "--only", "frame"],
        ["--draws", "3", "--only", "bogus:x"],
        ["--draws", "1", "--only", "queue:bogus"],
        ["frobnicate", "--quick"],
        ["envelopes", "--jobs", "0"],
    ],
)
def test_command_bad_flags(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from linklab.check.__main__ import main

    assert main(args) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "error: " in lines[0] and "linklab.check" in lines[0], err
    assert out == ""


def test_command_bad_flag_exit_status() -> None:
    r = _check("--draws", "-1")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("python -m linklab.check: error: argument --draws: --draws '-1'")


def test_failure_is_written_shrunk_and_reproduces(tmp_path: Path) -> None:
    inject = {**ENV, "LINKLAB_CHECK_INJECT": "always"}
    out = tmp_path / "out"
    r = _check(
        "--draws",
        "2",
        "--seed",
        "9",
        "--out",
        str(out),
        "--shrink",
        "1",
        "--shrink-time",
        "60",
        "-q",
        env=inject,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert "failures by property: injected 2" in r.stdout
    files = sorted(out.glob("*.toml"))
    assert [f.name for f in files] == ["injected-000000.toml", "injected-000001.toml"]
    text = files[0].read_text()
    assert "(shrunk by hypothesis)" in text
    doc = tomllib.loads(text)
    # Shrunk to the simplest draw: one plain link, one plain flow, no [tcp].
    assert len(doc["links"]) == 1 and "tcp" not in doc
    assert doc["flows"] == [{"from": "S", "to": "D"}]
    assert "(as drawn, not shrunk)" in files[1].read_text()
    seed = str(doc["seed"])
    run = subprocess.run(
        [sys.executable, "-m", "linklab", "run", files[0].name, "--seed", seed],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=out,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    again = _check("--replay", str(files[0]), env=inject)
    assert again.returncode == 1 and "injected: injected failure" in again.stdout
    clean = _check("--replay", str(files[0]))
    assert clean.returncode == 0 and ": ok" in clean.stdout.splitlines()[0]


# ---------------------------------------------------------------------------
# Regressions: the minimal scenarios of the findings fixed here (docs/checking.md)
# ---------------------------------------------------------------------------


def test_f5_lt_tcp_with_rack_does_not_panic() -> None:
    """F5: LT-TCP's FEC hold asked the scoreboard about a segment RACK marked lost
    above the highest SACKed one, and ``holes_in`` panicked (draw 1793 of seed 1,
    shrunk)."""
    import linklab

    scenario = {
        "duration": "46800us",
        "tcp": {
            "profile": "ns3",
            "mss": 1460,
            "handshake": False,
            "rack": True,
            "lt": {
                "adaptive_mss": True,
                "proactive_fec": True,
                "mss_min": 155,
                "mss_max": 159,
                "block_max": 2,
            },
        },
        "links": [
            {
                "a": "N0",
                "b": "N1",
                "delay": "1000us",
                "rate": "100000000bit",
                "queue": {"kind": "droptail", "limit": "1p"},
            },
            {"a": "N1", "b": "N2", "delay": "0s", "rate": "1000000000bit"},
        ],
        "flows": [{"from": "N0", "to": "N2"}],
    }
    r = linklab.run(scenario, seed=1)
    assert r.summary["flows"][0]["delivered_bytes"] > 0


def test_f1_f2_f3_documented_defaults_are_accepted() -> None:
    """F1: LT-TCP beside a profile takes the profile's mss as its ``mss_max``; F2: an
    RLC direction's ``rate_schedule`` replaces the bearer's ``rate`` (as on a wired
    link); F3: an RLC PDU above 126 bytes gets 2-byte length indicators without
    ``li``. All three were refused."""
    import linklab

    for profile, mss in (("ns2", 1000), ("ns3", 536), ("linux", 1448)):
        r = linklab.run(
            {
                "duration": "1s",
                "tcp": {"profile": profile, "variant": "sack", "lt": {"adaptive_mss": True}},
                "links": [{"a": "S", "b": "D", "rate": "2Mbit", "delay": "10ms"}],
                "flows": [{"from": "S", "to": "D"}],
            },
            seed=1,
        )
        assert r.summary["flows"][0]["lt"]["mss"] <= mss
    r = linklab.run(
        {
            "duration": "2s",
            "links": [
                {"a": "RNC", "b": "UE", "kind": "rlc_am", "rate": "384kbit", "pdu_payload": 160}
            ],
            "flows": [{"from": "RNC", "to": "UE"}],
        },
        seed=1,
    )
    assert r.summary["flows"][0]["delivered_bytes"] > 0
    bearer = {"a": "RNC", "b": "UE", "kind": "rlc_am", "rate": "384kbit"}
    slow = [{"at": "0s", "rate": "64kbit"}, {"at": "5s", "rate": "128kbit"}]
    up = {"duration": "10s", "flows": [{"from": "UE", "to": "RNC"}]}
    fast = linklab.run(up | {"links": [bearer]}, seed=1).summary["flows"][0]
    r = linklab.run(up | {"links": [bearer | {"ba": {"rate_schedule": slow}}]}, seed=1)
    sched = r.summary["flows"][0]
    # The uplink runs at 64 then 128 kbit/s: at most 96 kbit/s over 10 s (and far
    # below the 384-kbit/s bearer's).
    assert 0 < sched["goodput_bps"] < 96e3 < fast["goodput_bps"]
    with pytest.raises(linklab.ScenarioError, match="either `rate` or `rate_schedule`"):
        bad = bearer | {"ba": {"rate": "64kbit", "rate_schedule": slow}}
        linklab.run(up | {"links": [bad]}, seed=1)


@pytest.mark.parametrize(
    "tcp",
    [
        # F6 (shrunk, draw of seed 3): after a recovery the cumulative ACK that covers the
        # retransmission also covers a segment sent once long before; its "RTT" (the
        # recovery's length) inflated srtt and pacing at 2 x cwnd / srtt idled.
        {
            "variant": "sack",
            "cc": "cubic",
            "rwnd": 1048576,
            "min_rto": "200000us",
            "pacing": True,
        },
        # F7: ns-2's 300 ms clock tick made srtt whole ticks and pacing crawled.
        {"pacing": True, "rto_tick": "300ms"},
    ],
    ids=["f6-karn-over-the-whole-ack", "f7-pacing-on-exact-rtt"],
)
def test_f6_f7_pacing_makes_progress(tcp: dict[str, Any]) -> None:
    """F6 and F7, fixed: each minimal scenario passes every property (progress failed)."""
    if "rto_tick" in tcp:
        link = {"a": "S", "b": "D", "rate": "10Mbit", "delay": "20ms"}
        duration = "2s"
    else:
        link = {"a": "S", "b": "D", "delay": "55550ns", "rate": "952189535bit"}
        duration = "1890000us"
    scenario = {
        "duration": duration,
        "tcp": tcp,
        "links": [link],
        "flows": [{"from": "S", "to": "D"}],
    }
    outcome = check_draw(Draw(scenario, seed=1))
    assert outcome.status == "ok", outcome


@pytest.mark.parametrize(
    "name",
    ["f10-frame-fq-codel-overflow.toml", "c3-netem-reorder-rate.toml"],
    ids=["f10-frame-link-reports-queue-drops", "c3-netem-reorder-skips-its-rate"],
)
def test_f10_c3_minimal_scenarios_pass(name: str) -> None:
    """F10 (a frame link left FQ-CoDel's extra overflow drops unreported until its next
    wake-up: the account broke when the run ended first) and C3 (the checker bounded a
    netem stage by its rate although reordered packets skip it, as in Linux), fixed: each
    shrunk draw of seed 1129 passes every property."""
    path = Path(__file__).parent / "data" / "check" / name
    doc = tomllib.loads(path.read_text())
    outcome = check_draw(Draw(doc, seed=int(doc.get("seed", 1))))
    assert outcome.status == "ok", outcome
