"""Adaptive RLC MaxDAT (seed 001 §III): scenario keys, summary, CLI errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import linklab
from conftest import CliRunner, assert_bad_input
from linklab.errors import ScenarioError
from linklab.sweep import flatten_summary

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "crates" / "core" / "testdata" / "arq_adaptive.toml"


def test_cli_rejects_alpha_out_of_range(cli: CliRunner) -> None:
    proc = cli("run", SCENARIO, "--set", "alpha=1.5")
    line = assert_bad_input(proc, "links[1].adaptive.alpha", "0 ≤ alpha ≤ 1")
    assert "1.5" in line


def test_cli_rejects_adaptive_without_gilbert_elliott(cli: CliRunner, tmp_path: Path) -> None:
    text = SCENARIO.read_text().replace(
        'channel = { kind = "gilbert_elliott", p_good = 0.01, p_bad = 0.9, g = 0.9, b = "${b}" }',
        'channel = { kind = "bernoulli", p = 0.1 }',
    )
    path = tmp_path / "bernoulli.toml"
    path.write_text(text)
    assert_bad_input(cli("run", path), "links[1].ab.channel", "gilbert_elliott", allowed=False)


@settings(max_examples=12, deadline=None)
@given(alpha=st.floats(allow_nan=False, allow_infinity=False, min_value=-2.0, max_value=3.0))
def test_alpha_range_is_checked_at_load_time(alpha: float) -> None:
    params = {"alpha": alpha, "duration": "5s"}
    if 0.0 <= alpha <= 1.0:
        arq = _downlink(linklab.run(SCENARIO, seed=1, params=params).summary)
        assert arq["max_dat"] is None or arq["max_dat"] >= 1
    else:
        with pytest.raises(ScenarioError) as e:
            linklab.run(SCENARIO, seed=1, params=params)
        assert e.value.path == "links[1].adaptive.alpha"


def _downlink(summary: dict) -> dict:
    return next(x["rlc"] for x in summary["links"] if x["name"] == "R->M")


def test_summary_report_and_sweep_columns(cli: CliRunner) -> None:
    proc = cli("run", SCENARIO, "--json", "--set", "duration=60s")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    arq = _downlink(summary)
    assert 0.0 <= arq["residual_sdu_loss"] < 1.0
    assert 0.0 < arq["efficiency"] < 1.0
    assert arq["max_dat_changes"] >= 1
    flat = flatten_summary(summary)
    assert flat["link[R->M].rlc.residual_sdu_loss"] == arq["residual_sdu_loss"]
    assert flat["link[R->M].rlc.max_dat_mean"] == arq["max_dat_mean"]
    assert flat["link[R->M].rlc.sdus_delivered"] == arq["sdus_delivered"]
    assert "link[S->R].rlc.residual_sdu_loss" not in flat  # wired: no ARQ
    text = cli("run", SCENARIO, "--set", "duration=60s")
    assert text.returncode == 0, text.stderr
    assert "arq link" in text.stdout and "R->M" in text.stdout


def test_arq_trace_table() -> None:
    res = linklab.run(SCENARIO, seed=2, params={"duration": "120s"}, trace=True)
    arq = res.traces["arq"]
    assert arq.columns == ["link", "time_s", "max_dat", "p_tcp", "p_ll", "target"]
    assert arq.height == _downlink(res.summary)["max_dat_changes"]
    assert set(arq["link"].to_list()) == {"R->M"}
    assert arq["time_s"].is_sorted()
