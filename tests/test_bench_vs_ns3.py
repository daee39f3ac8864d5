"""`benches/vs_ns3.py`: the linklab side of the --cc/--queue comparisons and the ns-3 cache."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

import linklab
from conftest import load_bench

REPO = Path(__file__).resolve().parents[1]


vs = load_bench("vs_ns3")
SCENARIO = tomllib.loads((REPO / vs.SCENARIO).read_text())


def _model(**kw: object) -> dict[str, object]:
    args = vs.parse_args([f"--{k.replace('_', '-')}={v}" for k, v in kw.items()])
    return vs.model_of(args)


def test_default_model_is_the_shipped_scenario() -> None:
    assert _model() == vs.DEFAULT_MODEL
    assert vs.linklab_queue(vs.DEFAULT_MODEL) == SCENARIO["links"][1]["queue"]


@pytest.mark.parametrize(("queue", "kind"), [("droptail", "droptail"), ("dctcp", "red")])
def test_overlay_replaces_only_the_bottleneck_queue_and_runs(queue: str, kind: str) -> None:
    model = _model(queue=queue, cc="newreno")
    out = vs.linklab_overlay(SCENARIO, model)
    assert out["links"][0] == SCENARIO["links"][0] and out["links"][2] == SCENARIO["links"][2]
    assert out["links"][1]["queue"]["limit"] == f"{vs.QUEUES[queue]}p"
    assert SCENARIO["links"][1]["queue"]["kind"] == "red"  # the parsed original is untouched
    res = linklab.run(out, params={"flows": 2, "duration": "2s"}, seed=1)
    (q,) = [q for q in res.summary["queues"] if q["link"] == vs.BOTTLENECK]
    assert q["kind"] == kind and q["arrivals"] > 0


def test_cache_keys_of_old_runs_are_the_default_model(tmp_path: Path) -> None:
    old = {"flows": 10, "simtime": 100.0, "per": 0.0, "seed": 1, "goodput_bps": 1.0}
    new = old | _model(cc="cubic", queue="codel") | {"goodput_bps": 2.0}
    path = tmp_path / "ns3.json"
    path.write_text(json.dumps({"runs": [old, new]}))
    cache = vs.load_ns3_cache(path)
    assert cache[vs.cache_key(10, 100.0, 0.0, 1, vs.DEFAULT_MODEL)]["goodput_bps"] == 1.0
    cubic = vs.cache_key(10, 100.0, 0.0, 1, _model(cc="cubic", queue="codel"))
    assert cache[cubic]["goodput_bps"] == 2.0


def test_classic_recovery_is_its_own_model(tmp_path: Path) -> None:
    """`--recovery classic` turns PRR off on both sides, and its saved ns-3 runs never
    stand in for the PRR runs of the same CC and queue (or the other way round)."""
    prr, classic = (
        _model(cc="cubic", queue="droptail"),
        _model(cc="cubic", queue="droptail", recovery="classic"),
    )
    assert "recovery" not in prr and classic == prr | {"recovery": "classic"}
    assert vs.linklab_overlay(SCENARIO, classic)["tcp"]["prr"] is False
    assert vs.linklab_overlay(SCENARIO, prr)["tcp"]["prr"] == SCENARIO["tcp"]["prr"]
    base = {"flows": 10, "simtime": 100.0, "per": 0.0, "seed": 1}
    runs = [base | prr | {"goodput_bps": 1.0}, base | classic | {"goodput_bps": 2.0}]
    path = tmp_path / "ns3.json"
    path.write_text(json.dumps({"runs": runs}))
    cache = vs.load_ns3_cache(path)
    assert cache[vs.cache_key(10, 100.0, 0.0, 1, prr)]["goodput_bps"] == 1.0
    assert cache[vs.cache_key(10, 100.0, 0.0, 1, classic)]["goodput_bps"] == 2.0
    assert "classic recovery" in vs.model_label(classic)


def test_median_of_repeats() -> None:
    runs = [
        {"run_wall_s": w, "process_wall_s": p, "hops": 1000, "hops_per_s": 1000 / w, "x": 7}
        for w, p in ((0.2, 1.0), (0.1, 3.0), (0.5, 2.0))
    ]
    m = vs.median_of_repeats(runs)
    assert (m["run_wall_s"], m["process_wall_s"], m["x"]) == (0.2, 2.0, 7)
    assert m["run_wall_s_all"] == [0.2, 0.1, 0.5] and m["hops_per_s"] == 1000 / 0.2
    assert vs.median_of_repeats(runs[:1]) == runs[0]


def test_repeat_runs_linklab_n_times_against_a_saved_ns3_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = vs.parse_args(["--quick", "--per=0", "--repeat=3"])
    model = vs.model_of(args)
    saved = {"sim": "ns-3", "impl": "native", "flows": 2, "simtime": 5.0, "per": 0.0,
             "seed": 1, "goodput_bps": 9.0e6, "run_wall_s": 1.0, "process_wall_s": 1.5,
             "peak_rss_kib": 4096, "rx_packets": 1} | model  # fmt: skip
    path = tmp_path / "ns3.json"
    path.write_text(json.dumps({"runs": [saved]}))
    code = vs.main(["--quick", "--per=0", "--repeat=3", "--ns3-from", str(path), "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and rep["linklab_error"] is None
    (ll,) = rep["linklab_runs"]
    assert len(ll["run_wall_s_all"]) == 3 and ll["run_wall_s"] in ll["run_wall_s_all"]
    (ns,) = rep["ns3_runs"]
    assert ns["run_wall_s"] == 1.0 and "run_wall_s_all" not in ns  # saved: once
    assert rep["rows"][0]["speedup_run"] == pytest.approx(1.0 / ll["run_wall_s"])


def test_bad_bench_flags_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        ["--qlimit=0"],
        ["--cc=vegas"],
        ["--queue=sfq"],
        ["--recovery=fack"],
        ["--repeat=0"],
        ["--grid", "--repeat=2"],
    ):
        with pytest.raises(SystemExit) as e:
            vs.parse_args(argv)
        assert e.value.code == 2
    assert "--qlimit must be >= 1" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# the grid (--grid): design, settings of both sides, committed ns-3 runs, --quick
# --------------------------------------------------------------------------------------------


def _levels() -> list[tuple[float, ...]]:
    return [vs.GRID_LEVELS[f] for f in vs.GRID_FACTORS]


def test_default_design_covers_every_pair_in_nine_rows() -> None:
    rows = list(vs.DEFAULT_DESIGN)
    assert len(rows) == len(set(rows)) == 9  # 3 x 3: no strength-2 array is smaller
    assert vs.covers_pairs(rows, _levels())
    for i in range(len(rows)):  # every row is needed
        assert not vs.covers_pairs(rows[:i] + rows[i + 1 :], _levels())
    small = [(1, 2, 3), (10, 20), (0.5, 1.0)]
    greedy = vs.covering_rows(small)
    assert vs.covers_pairs(greedy, small) and len(greedy) < 3 * 2 * 2


def test_grid_pairs_and_cells() -> None:
    pairs = vs.grid_pairs(list(vs.CCS), list(vs.GRID_QUEUES))
    assert len(pairs) == 4 * 5 + 1 and ("dctcp", "dctcp") in pairs
    assert all((cc == "dctcp") == (q == "dctcp") for cc, q in pairs)
    cells = vs.grid_cells(list(vs.CCS), list(vs.GRID_QUEUES), vs.GRID_LEVELS, "covering")
    assert len(cells) == len(pairs) * 9 == len({c.key for c in cells})
    assert all(vs.parse_cell_key(c.key) == c for c in cells)
    full = vs.grid_cells(["newreno"], ["droptail"], vs.GRID_LEVELS, "factorial")
    assert len(full) == 3 * 2 * 2 * 3 * 3


GRID_EXAMPLES = [
    "newreno/droptail/f16/mss1448/r10/d0/q0.5bdp/t20",  # 3.3-packet BDP: the smallest queue
    "cubic/red/f16/mss536/r100/d18/q0.5bdp/t20",
    "dctcp/dctcp/f4/mss1448/r100/d18/q1bdp/t20",
    "bbr/fq_codel/f1/mss536/r10/d98/q1000p/t30",
    "westwood/pie/f4/mss1448/r10/d98/q1000p/t30",
    "newreno/codel/f1/mss1448/r10/d18/q1000p/t20",
]


@pytest.mark.parametrize("key", GRID_EXAMPLES)
def test_grid_cell_is_the_same_scenario_on_both_sides(key: str) -> None:
    cell = vs.parse_cell_key(key)
    st = vs.grid_settings(cell)
    doc = vs.linklab_grid_doc(SCENARIO, st)
    assert vs.grid_mismatches(st, None, doc) == []
    argv = dict(x[2:].split("=", 1) for x in vs.ns3_grid_argv(st, 7))
    assert float(argv["rate"]) == cell.rate_mbps and float(argv["delay"]) == cell.delay_ms
    assert int(argv["segsize"]) == cell.mss and argv["seed"] == "7"
    assert int(argv["qlimit"]) + vs.DEVICE_QUEUE_P == int(st["linklab_limit_p"])
    assert int(argv["bufsize"]) == st["buffer_bytes"] >= 2 * st["bdp_packets"] * st["packet_bytes"]
    # The checker catches a scenario that differs in any one parameter.
    for path, value in (("params.mss", 1000), ("params.iw", 4), ("tcp.cc", "reno"),
                        ("links.1.rate", "11Mbit"), ("links.0.delay", "2ms"),
                        ("links.1.queue.limit", "7p"), ("params.rwnd", "64KiB")):  # fmt: skip
        bad = json.loads(json.dumps(doc))
        *head, last = path.split(".")
        d = bad
        for k in head:
            d = d[int(k)] if isinstance(d, list) else d[k]
        d[last] = value
        assert vs.grid_mismatches(st, None, bad), path
    # ns-3.44's variants the grid selects (families C, D, J, I): each is checked.
    assert doc["tcp"]["prr_variant"] == "ns3"
    variants = [("tcp.prr_variant", "rfc6937")]
    if cell.cc == "newreno":
        assert doc["tcp"]["cut_flight"] == "pipe"
        variants.append(("tcp.cut_flight", "flightsize"))
    if cell.cc == "westwood":
        assert doc["tcp"]["cc"] == {"kind": "westwood", "filter": "ns3"}
        variants.append(("tcp.cc.filter", "linux"))
    if cell.queue == "pie":
        (bott,) = [x for x in doc["links"] if (x["a"], x["b"]) == ("L", "R")]
        assert bott["queue"]["burst_rule"] == "ns3"
        variants.append(("links.1.queue.burst_rule", "rfc8033"))
    if cell.queue in ("codel", "fq_codel"):
        (bott,) = [x for x in doc["links"] if (x["a"], x["b"]) == ("L", "R")]
        assert bott["queue"]["variant"] == "ns3"
        variants.append(("links.1.queue.variant", "linux"))
    for path, value in variants:
        bad = json.loads(json.dumps(doc))
        *head, last = path.split(".")
        d = bad
        for k in head:
            d = d[int(k)] if isinstance(d, list) else d[k]
        d[last] = value
        assert vs.grid_mismatches(st, None, bad), path


@pytest.mark.parametrize(
    ("key", "rate_sample", "dctcp_loss"),
    [
        ("bbr/fq_codel/f1/mss536/r10/d98/q1000p/t30", "ns3", None),
        ("dctcp/dctcp/f4/mss1448/r100/d18/q1bdp/t20", None, "alpha"),
        ("cubic/red/f16/mss536/r100/d18/q0.5bdp/t20", None, None),
    ],
)
def test_grid_gives_linklab_ns3s_rate_samples_and_dctcp_loss(
    key: str, rate_sample: str | None, dctcp_loss: str | None
) -> None:
    """BBR cells take ns-3.44's rate samples (`rate_sample = "ns3"`) and send quantum
    (`cc.send_quantum = "ns3"`, family A) and ACK-aggregation allowance
    (`cc.ack_aggregation = "ns3"`) and window around losses (`cc.loss_window = "ns3"`),
    DCTCP cells its loss response (`cc.loss = "alpha"`, family G), as `profile = "ns3"`
    selects; the checker rejects a scenario without them."""
    st = vs.grid_settings(vs.parse_cell_key(key))
    assert (st.get("rate_sample"), st.get("dctcp_loss")) == (rate_sample, dctcp_loss)
    assert st.get("bbr_send_quantum") == ("ns3" if rate_sample else None)
    assert st.get("bbr_ack_aggregation") == ("ns3" if rate_sample else None)
    assert st.get("bbr_loss_window") == ("ns3" if rate_sample else None)
    doc = vs.linklab_grid_doc(SCENARIO, st)
    assert doc["tcp"].get("rate_sample") == rate_sample
    # ns-3.44's loss count of a rate sample (`rate_losses = "ns3"`, g33bbr) with it.
    assert st.get("rate_losses") == rate_sample
    assert doc["tcp"].get("rate_losses") == rate_sample
    cc = doc["tcp"]["cc"]
    assert (cc.get("loss") if isinstance(cc, dict) else None) == dctcp_loss
    # ns-3.44's DCTCP receiver echo (`cc.echo = "ns3"`, families G/P/O4) with it.
    assert (cc.get("echo") if isinstance(cc, dict) else None) == ("ns3" if dctcp_loss else None)
    assert (cc.get("send_quantum") if isinstance(cc, dict) else None) == st.get("bbr_send_quantum")
    assert (cc.get("ack_aggregation") if isinstance(cc, dict) else None) == st.get(
        "bbr_ack_aggregation"
    )
    assert (cc.get("loss_window") if isinstance(cc, dict) else None) == st.get("bbr_loss_window")
    assert vs.grid_mismatches(st, None, doc) == []
    bad = json.loads(json.dumps(doc))
    bad["tcp"]["rate_sample"] = "ns3" if rate_sample is None else "linux"
    assert vs.grid_mismatches(st, None, bad)
    bad = json.loads(json.dumps(doc))
    bad["tcp"]["rate_losses"] = "ns3" if rate_sample is None else "linux"
    assert vs.grid_mismatches(st, None, bad)
    for k, v in (
        ("loss", "halve"),
        ("echo", "rfc8257"),
        ("send_quantum", "draft"),
        ("ack_aggregation", "off"),
        ("loss_window", "linux"),
    ):
        if isinstance(cc, dict) and k in cc:
            bad = json.loads(json.dumps(doc))
            bad["tcp"]["cc"][k] = v
            assert vs.grid_mismatches(st, None, bad), k


@pytest.mark.parametrize(
    ("key", "target_us"),
    [
        # 1502-byte frames (1448 + 52 + 2 B) at 10 Mbit/s: 1.2016 ms in ns-3's device queue.
        ("newreno/codel/f1/mss1448/r10/d18/q1000p/t20", 6201.6),
        ("cubic/fq_codel/f16/mss1448/r10/d0/q1000p/t20", 6201.6),
        ("westwood/pie/f4/mss1448/r10/d98/q1000p/t30", 16201.6),
        # 590-byte frames at 100 Mbit/s: 47.2 us.
        ("cubic/pie/f16/mss536/r100/d18/q1000p/t20", 15047.2),
    ],
)
def test_aqm_targets_count_ns3s_device_queue(key: str, target_us: float) -> None:
    """ns-3's CoDel/FQ-CoDel/PIE sojourn ends when the packet enters the one-packet device
    queue, one frame's transmission before it is sent; linklab's at the start of its
    transmission. linklab's target is ns-3's plus that frame time (`device_wait_ms`), and the
    checker rejects a scenario whose AQM has ns-3's target unchanged."""
    st = vs.grid_settings(vs.parse_cell_key(key))
    frame_ms = (st["packet_bytes"] + st["framing_bytes"]) * 8 / (st["rate_mbps"] * 1e3)
    assert vs.device_wait_ms(st) == pytest.approx(frame_ms)
    assert vs.linklab_aqm_target_ms(st) == pytest.approx(target_us / 1e3)
    doc = vs.linklab_grid_doc(SCENARIO, st)
    (bott,) = [x for x in doc["links"] if (x["a"], x["b"]) == ("L", "R")]
    assert bott["queue"]["target"] == f"{target_us:g}us"
    assert vs.grid_mismatches(st, None, doc) == []
    bott["queue"]["target"] = f"{vs.AQM_TARGET_MS[st['queue']]:g}ms"
    assert vs.grid_mismatches(st, None, doc) == [
        f"linklab aqm target: {vs.AQM_TARGET_MS[st['queue']]}, expected {round(target_us / 1e3, 6)}"
    ]


def test_committed_ns3_grid_is_the_current_grid() -> None:
    """Every cell of the default grid saved in the committed file was run with the arguments
    the script gives ns-3 today, and ns-3's settings read back from its objects agree with the
    linklab scenario of the cell. At least 181 of the 189 cells have all their seeds: the
    BBR cells of the rows of 16 flows at 100 Mbit/s (8 cells left, ~30-440 s of ns-3 CPU per
    run) are not all run yet (docs/benchmarks.md, "The grid");
    `--grid --save-ns3 benches/results/ns3-grid.json` completes them."""
    data = vs.load_grid_results(vs.NS3_GRID_RESULTS)
    assert "3.44" in data["ns3"]["version"]
    cells = vs.grid_cells(list(vs.CCS), list(vs.GRID_QUEUES), vs.GRID_LEVELS, "covering")
    assert len(cells) == 189
    complete = 0
    for c in cells:
        entry = data["cells"].get(c.key)
        if entry is None:
            continue
        st = vs.grid_settings(c)
        assert entry["ns3_argv"] == vs.ns3_grid_argv(st, 0), c.key
        assert set(entry["runs"]) <= {str(s) for s in range(1, vs.GRID_SEEDS + 1)}, c.key
        complete += len(entry["runs"]) == vs.GRID_SEEDS
        doc = vs.linklab_grid_doc(SCENARIO, st)
        assert vs.grid_mismatches(st, entry["ns3_settings"], doc) == [], c.key
    assert complete >= 181


def test_tally_uses_the_committed_ten_seeds_where_there_are_ten() -> None:
    """Family F's rule (issue 33, g33p; docs/benchmarks.md "The grid"): without `--seeds`
    every cell whose 10 ns-3 seeds are committed in ns3-grid-seeds10.json is judged over
    seeds 1-10 on both sides, every other cell over 3; `--seeds N` gives all cells N. The
    tally then averages each cell over its own seeds: a cell whose 3 seeds miss and whose 10
    agree counts as agreeing, and the other way round."""
    more = vs.load_grid_results(vs.NS3_GRID_SEEDS10_RESULTS)
    # 14 cells, and since g33u (issue 33) families Q and U: newreno/fq_codel/f16/mss1448/r100/d98
    # and newreno/pie/f4/mss1448/r100/d18; S (g33c); since g33s the 37 cells of the more-seeds
    # rule (docs/benchmarks.md, fifth session); since g33v2 the 15 its second tier selects
    # (six run by g33v2, the other nine by the lead the same session; sixth-session block).
    assert len(more["cells"]) == 17 + 37 + 15
    cells = vs.grid_cells(list(vs.CCS), list(vs.GRID_QUEUES), vs.GRID_LEVELS, "covering")
    by = vs.grid_cell_seeds(cells, True, None, more)
    ten = sorted(k for k, v in by.items() if v == list(range(1, 11)))
    assert ten == sorted(more["cells"])
    assert all(v == [1, 2, 3] for k, v in by.items() if k not in more["cells"])
    assert all(v == [1, 2, 3] for v in vs.grid_cell_seeds(cells, True, 3, more).values())
    # A stale entry (other ns-3 arguments) or a missing seed keeps the cell at 3 seeds.
    key = ten[0]
    stale = {"cells": {key: more["cells"][key] | {"ns3_argv": ["--other"]}}}
    assert vs.grid_cell_seeds(cells, True, None, stale)[key] == [1, 2, 3]
    short = {"cells": {key: more["cells"][key] | {"runs": {str(s): {} for s in range(1, 10)}}}}
    assert vs.grid_cell_seeds(cells, True, None, short)[key] == [1, 2, 3]

    # The tally over synthetic runs: cell a misses on seeds 1-3 (linklab 2.0 against 1.0
    # Mbit/s) and agrees over 10; cell b the other way round.
    a, b = cells[0], cells[1]

    def run(s: int, g: float) -> dict[str, object]:
        return {"seed": s, "goodput_bps": g * 1e6, "queue_delay_s": 0.01, "run_wall_s": 1.0}

    ns3 = {a.key: {s: run(s, 1.0 if s <= 3 else 2.0) for s in range(1, 11)},
           b.key: {s: run(s, 1.0) for s in range(1, 11)}}  # fmt: skip
    ll = {a.key: {s: run(s, 2.0 if s <= 3 else 1.5) for s in range(1, 11)},
          b.key: {s: run(s, 1.0 if s <= 3 else 3.0) for s in range(1, 11)}}  # fmt: skip
    three = vs.grid_report([a, b], [1, 2, 3], ns3, ll, {})
    assert [r["pass"] for r in three["cells"]] == [False, True] and three["n_pass"] == 1
    per = vs.grid_report([a, b], {a.key: list(range(1, 11)), b.key: list(range(1, 11))}, ns3,
                         ll, {})  # fmt: skip
    # a: ns-3 (3 + 14) / 10 = 1.7, linklab (6 + 10.5) / 10 = 1.65 (-2.9 %); b: 1.0 vs 2.4.
    assert [r["pass"] for r in per["cells"]] == [True, False] and per["n_pass"] == 1
    assert [r["seeds"] for r in per["cells"]] == [10, 10]
    assert per["cells"][0]["ns3"]["n"] == per["cells"][0]["linklab"]["n"] == 10
    assert abs(per["cells"][0]["goodput_rel_diff"] - (1.65 / 1.7 - 1)) < 1e-12


def test_more_seeds_rule_selects_wide_intervals_of_cheap_cells(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The more-seeds rule (issue 33, g33s; docs/benchmarks.md, the fifth-session block): a
    cell judged over 3 seeds whose 95 % interval of the relative difference is wider than
    that metric's tolerance (goodput 0.10, queueing delay 0.15; strictly wider) and whose ns-3
    run costs at most 10 CPU-s a seed (first tier), or 20 (second tier, g33v2: the first's
    cells and the wide ones up to 20). `--more-seeds-rule REPORT` prints the second tier's
    cells; a file that is not a grid report exits 2."""

    def row(key: str, g: float | None, q: float | None, cpu: float, seeds: int = 3) -> dict:
        ns3 = {"n": seeds, "cpu_s": cpu * seeds}
        return {"key": key, "seeds": seeds, "goodput_rel_diff_ci95": g,
                "queue_delay_rel_diff_ci95": q, "ns3": ns3}  # fmt: skip

    rep = {"cells": [
        row("g-wide", 0.1001, 0.01, 1.0),
        row("q-wide", 0.01, 0.1501, 1.0),
        row("at-the-tolerance", 0.10, 0.15, 1.0),  # not wider: stays at 3 seeds
        row("cpu-at-the-cap", 0.5, 0.5, 10.0),
        row("cpu-over-the-cap", 0.5, 0.5, 10.01),
        row("ten-seeds-already", 0.5, 0.5, 1.0, seeds=10),
        row("no-interval", None, None, 1.0),
        row("cpu-at-the-cap2", 0.5, 0.01, 20.0),
        row("cpu-over-the-cap2", 0.5, 0.5, 20.01),
        row("narrow-at-the-cap2", 0.05, 0.05, 20.0),
    ]}  # fmt: skip
    assert vs.MORE_SEEDS_NS3_CPU_CAP_S == 10.0 and vs.MORE_SEEDS_NS3_CPU_CAP2_S == 20.0
    assert vs.more_seeds_cells(rep) == ["g-wide", "q-wide", "cpu-at-the-cap"]
    tier2 = ["g-wide", "q-wide", "cpu-at-the-cap", "cpu-over-the-cap", "cpu-at-the-cap2"]
    assert vs.more_seeds_cells(rep, vs.MORE_SEEDS_NS3_CPU_CAP2_S) == tier2
    with pytest.raises(ValueError, match="cap_s must be > 0"):
        vs.more_seeds_cells(rep, 0.0)
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(rep))
    assert vs.main(["--more-seeds-rule", str(path)]) == 0
    assert capsys.readouterr().out.split() == tier2
    path.write_text(json.dumps({"runs": []}))
    assert vs.main(["--more-seeds-rule", str(path)]) == 2
    assert "not a grid report" in capsys.readouterr().err
    assert vs.main(["--more-seeds-rule", str(tmp_path / "missing.json")]) == 2


def test_quick_grid_against_the_committed_ns3_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """`--grid --quick`: linklab over two cells (3 seeds) against the committed ns-3 runs,
    no ns-3 needed. NewReno over 4 BDP of drop-tail agrees within the targets; so does CUBIC
    over CoDel (one flow, 40 ms), family H's cell until the grid's CUBIC cells took ns-3's
    start-up (`hystart = "classic-ns3"`, `abc`) and CoDel's target counted ns-3's device
    queue (`device_wait_ms`): its queueing delay was 46 % below ns-3's, then 30 %, now within
    15 % (docs/benchmarks.md, "The grid")."""
    code = vs.main(["--grid", "--quick", "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert rep["errors"] == [] and rep["n_compared"] == 2 and code == 0
    reno, cubic = rep["cells"]
    assert reno["key"] == vs.QUICK_CELLS[0] and reno["pass"]
    assert reno["ns3"]["n"] == reno["linklab"]["n"] == vs.GRID_SEEDS
    assert abs(reno["goodput_rel_diff"]) <= vs.TARGET_GRID_GOODPUT
    assert abs(reno["queue_delay_rel_diff"]) <= vs.TARGET_GRID_QDELAY
    assert reno["ns3"]["retransmits_mean"] == reno["linklab"]["retransmits_mean"] == 86
    assert cubic["key"] == vs.QUICK_CELLS[1] and cubic["pass"]
    assert abs(cubic["queue_delay_rel_diff"]) <= vs.TARGET_GRID_QDELAY
    assert rep["misses"] == [] and cubic["key"] not in vs.GRID_MISSES


@pytest.mark.parametrize("queue", ["codel", "fq_codel", "pie"])
def test_overlay_gives_ns3s_own_rules(queue: str) -> None:
    """The --cc/--queue rows run under ns-3.44's departures, as the grid's cells do: TCP's
    through `profile = "ns3"` (the scenario's keys still override it), the AQMs' through
    their `variant`/`burst_rule` (an FQ-CoDel without them queued 42 % less than ns-3) and
    the grid's device-queue targets (device_wait_ms)."""
    out = vs.linklab_overlay(SCENARIO, _model(queue=queue, cc="cubic"))
    assert out["tcp"]["profile"] == "ns3" and out["tcp"]["mss"] == SCENARIO["tcp"]["mss"]
    q = out["links"][1]["queue"]
    if queue == "pie":
        assert q["burst_rule"] == "ns3"
    else:
        assert q["variant"] == "ns3" and q["mtu"] == f"{vs.MTU_B}B"
        assert (q.get("quantum") == f"{vs.MTU_B}B") == (queue == "fq_codel")
    # The grid's targets, one frame of ns-3's 1-packet device queue higher: 502 bytes at
    # 10 Mbit/s (device_wait_ms).
    assert q["target"] == {"pie": "15.4016ms"}.get(queue, "5.4016ms")
    res = linklab.run(out, params={"flows": 2, "duration": "2s"}, seed=1)
    (s,) = [s for s in res.summary["queues"] if s["link"] == vs.BOTTLENECK]
    assert s["kind"] == queue and s["arrivals"] > 0
