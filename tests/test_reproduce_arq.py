"""`linklab reproduce arq-persistence`: the --quick run end to end, and bad flags."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import CliRunner, assert_bad_input
from linklab.reproduce.scenarios import arq_scenario

REPO = Path(__file__).resolve().parents[1]
TABLES = ("fig3", "fig4", "fig5", "fig6", "energy", "conclusions")


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    out = tmp_path_factory.mktemp("arq") / "out"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "linklab",
            "reproduce",
            "arq-persistence",
            "--quick",
            "--json",
            "--out",
            str(out),
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout), out


def test_scenario_file_is_the_reproductions(cli: CliRunner) -> None:
    """The reproduction runs the shipped file (package data), not a copy of it."""
    assert tomllib.loads((REPO / "scenarios" / "umts-tdd-arq.toml").read_text()) == arq_scenario()
    adaptive = arq_scenario(adaptive=True)
    assert adaptive["links"][1]["max_dat"] == "adaptive" and adaptive["params"]["alpha"] == 0.1
    p = cli("run", REPO / "scenarios" / "umts-tdd-arq.toml", "--set", "duration=2s",
            "--set", "max_dat=4", "--json")  # fmt: skip
    assert p.returncode == 0, p.stderr
    link = next(x for x in json.loads(p.stdout)["links"] if x["name"] == "RNC->UE")
    assert link["rate_bps"] == 800_000 and link["rlc"]["data_pdus_sent"] > 0


def test_quick_json_structure(quick: tuple[dict, Path]) -> None:
    result, out = quick
    assert result["reproduction"] == "arq-persistence"
    assert result["quick"] is True and result["reps"] == 2 and result["failed_runs"] == 0
    assert set(TABLES) <= set(result["tables"])
    assert (out / "report.html").stat().st_size > 1000
    assert json.loads((out / "results.json").read_text())["runs"] == result["runs"]
    for key in ("fig3", "fig4", "fig5", "fig6"):
        assert result["tables"][key]["figures"], key
        for f in result["tables"][key]["figures"]:
            assert Path(f).read_bytes()[:4] == b"\x89PNG"
    for row in result["tables"]["fig4"]["rows"]:
        assert {"config", "goodput_kbit", "published"} <= set(row)
        assert row["goodput_kbit"]["n"] == 2 and row["goodput_kbit"]["mean"] is not None
    assert any(r["config"]["m_t"] == "adaptive" for r in result["tables"]["fig4"]["rows"])


def test_quick_model_columns(quick: tuple[dict, Path]) -> None:
    result, _ = quick
    rows = result["tables"]["fig3"]["rows"]
    for row in rows:
        mc = row["monte_carlo"]
        # the isolated-SDU Monte Carlo agrees with the exact model (99.9 % interval)
        assert abs(mc["mean"] - row["model_F"]) <= 3.3 * mc["ci"] / 1.96 + 1e-9, row
        if row["config"]["m_t"] == 1:
            assert row["model_F_hat"] == pytest.approx(row["model_F"])
    energy = result["tables"]["energy"]["rows"]
    published = {r["config"]["m_t"]: r["published"] for r in energy if r["config"]["pw"] == 0}
    assert published[4] == {"efficiency": 0.65} and published[8] is None
    for r in energy:
        assert 0 < r["air_success"]["mean"] <= 1
        assert 0 < r["delivered_over_air"]["mean"] < 0.952
    fig6 = result["tables"]["fig6"]["rows"]
    assert all(0 < r["R"] <= 1 for r in fig6)
    concl = result["tables"]["conclusions"]["rows"]
    assert concl and all({"claim", "pass", "detail"} <= set(c) for c in concl)


def test_bad_experiment(cli: CliRunner) -> None:
    assert_bad_input(cli("reproduce", "arq-persistence", "--experiments", "fig9"), "fig9", "fig3")
    assert_bad_input(cli("reproduce", "arq-persistence", "--experiments", ","), "--experiments")
