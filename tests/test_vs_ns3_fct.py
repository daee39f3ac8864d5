"""`benches/vs_ns3_fct.py`: open-loop flows against ns-3 (issue 37), linklab's side only,
against the committed ns-3 runs (benches/results/ns3-fct.json). About 7 s."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import load_bench

fct = load_bench("vs_ns3_fct")


def test_committed_ns3_runs_ran_the_arrivals_and_settings_linklab_runs() -> None:
    """Every committed ns-3 run read the arrival list this script draws for its load and
    seed (digest and flow count), and ns-3 read back from its objects what was asked."""
    saved = json.loads(fct.RESULTS.read_text())
    st = fct.settings()
    for load in fct.LOADS:
        for seed in fct.SEEDS:
            run = saved["runs"][f"load{load:g}/seed{seed}"]
            arr = fct.arrivals(load, seed)
            assert run["arrivals_sha256_16"] == fct.arrivals_digest(arr)
            assert run["flows"] == len(arr) == len(run["fct_s"])
            assert run["ns3_args"] == []
            assert fct.ns3_mismatches(st, run["settings"]) == [], (load, seed)
            # ns-3 resends a lost SYN after ConnTimeout (3 s), not after its initial RTO
            # (1 s, linklab's ns-3 profile): one of the causes of the p99 misses.
            assert run["settings"]["conn_timeout_ms"] == 3000.0
    exp = saved["experiments"]["conn_timeout_1s"]["runs"]["load0.5/seed1"]
    assert exp["settings"]["conn_timeout_ms"] == 1000.0


def test_linklab_scenario_has_one_trace_workload_per_pair(tmp_path: Path) -> None:
    arr = fct.arrivals(0.5, 1)
    doc = fct.linklab_doc(tmp_path, arr)
    assert "flows" not in doc and len(doc["workloads"]) == fct.PAIRS
    lines = sum(len((tmp_path / f"pair{p + 1}.txt").read_text().splitlines()) for p in range(4))
    assert lines == len(arr)
    (bneck,) = [x for x in doc["links"] if (x["a"], x["b"]) == ("L", "R")]
    assert bneck["queue"] == {"kind": "droptail", "limit": "34p"}  # 33 + ns-3's device queue


def test_quick_against_the_committed_ns3_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Load 0.5, seeds 1-50: every bucket's median FCT within the 15 % target (fixed before the
    runs); the p99 of the buckets not in KNOWN_P99_MISSES too. The misses and their causes are
    in docs/benchmarks.md ("Flow completion times against ns-3")."""
    out = tmp_path / "rep.json"
    fct.main(["--quick", "--json", str(out)])
    rep = json.loads(out.read_text())
    (load,) = rep["loads"]
    assert load["load"] == 0.5
    for row in load["buckets"]:
        assert row["unfinished_ns3"] == row["unfinished_linklab"] == 0
        assert row["p50_pass"], row
        known = (0.5, row["bucket"]) in fct.KNOWN_P99_MISSES
        assert row["p99_pass"] != known, row
    assert sum(r["flows"] for r in load["buckets"]) == 11211
    assert load["speed_ratio_cpu"] > 5
    assert "PASS" in capsys.readouterr().out


def test_handshake_rule_and_rate_test() -> None:
    """`--handshakes` (issue 37): a flow lost its handshake and nothing else when it
    retransmitted no data segment and took >= 2.9 s; the rate test is the two-sided binomial
    comparison of two Poisson rates."""
    k, n = fct.handshake_losses([3.1, 2.95, 0.2, None, 4.0], [0, 0, 0, 0, 3])
    assert (k, n) == (2, 4)  # the unfinished flow counts in n, the retransmitting one in neither
    assert fct.rate_test(0, 10, 0, 10) == 1.0
    assert fct.rate_test(10, 100, 10, 100) == pytest.approx(1.0)
    # 20 against 5 in equal trials: P(X >= 20 or X <= 5 | 25, 1/2) = 2 * 0.002039 (exact)
    assert fct.rate_test(20, 1000, 5, 1000) == pytest.approx(0.004077, abs=2e-6)
    # Unequal trials shift p: 10 of 2000 against 10 of 1000 is not the same as 10 against 10.
    assert fct.rate_test(10, 2000, 10, 1000) < fct.rate_test(10, 1000, 10, 1000)


def test_fct_tails_classes_and_one_seed(capsys: pytest.CaptureFixture[str]) -> None:
    """`benches/fct_tails.py` (issue 37, eighth session): the flow classes, and one seed of
    load 0.5 against its committed ns-3 run, which now carries every flow's SYN drops."""
    tails = load_bench("fct_tails")
    assert tails.flow_class(0, 0, 1) == "H" and tails.flow_class(9, 2, 1) == "H"
    assert tails.flow_class(2, 1, 0) == "R" and tails.flow_class(8, 0, 0) == "L"
    assert tails.flow_class(7, 0, 0) == "r" and tails.flow_class(0, 0, 0) == "0"
    saved = json.loads(fct.RESULTS.read_text())["runs"]
    assert all(saved[f"load0.5/seed{s}"]["flow_syn_drops"] is not None for s in fct.SEEDS)
    assert tails.main(["--seeds", "33-33"]) == 0
    out = capsys.readouterr().out
    # Seed 33, flow 110 (27 241 bytes): ns-3's retransmission at its timeout was dropped
    # and a second timeout, 2 s later, resent it (3.26 s); linklab's got through (1.28 s).
    assert "3.26R#110(2)" in out
    assert "no lost handshake: >= 2.9 s ns-3 1 of" in out and ", linklab 0 of" in out
