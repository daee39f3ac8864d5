"""`benches/vs_ns3.py`: the linklab side of the --cc/--queue comparisons and the ns-3 cache."""

from __future__ import annotations

import importlib.util
import json
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

import linklab

REPO = Path(__file__).resolve().parents[1]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vs_ns3", REPO / "benches" / "vs_ns3.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["vs_ns3"] = mod
    spec.loader.exec_module(mod)
    return mod


vs = _bench()
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


def test_bad_bench_flags_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--qlimit=0"], ["--cc=vegas"], ["--queue=sfq"], ["--recovery=fack"]):
        with pytest.raises(SystemExit) as e:
            vs.parse_args(argv)
        assert e.value.code == 2
    assert "--qlimit must be >= 1" in capsys.readouterr().err
