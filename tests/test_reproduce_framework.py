"""The reproduction framework: registry, checks, tables, shipped scenarios."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from linklab._scenario import shipped
from linklab.reproduce import REPRODUCTIONS, ReproduceError, Reproduction, reproduce
from linklab.reproduce.framework import Check, Table, experiment, verdict

REPO = Path(__file__).resolve().parents[1]


def test_registry_lists_each_reproduction_and_its_experiments_once() -> None:
    assert list(REPRODUCTIONS) == ["rlc-aqm", "arq-persistence", "lt-tcp", "rate-swing", "wipemu"]
    assert REPRODUCTIONS["rlc-aqm"].experiments == (
        "table6", "sensitivity", "fig1", "search", "traces",
    )  # fmt: skip
    assert REPRODUCTIONS["arq-persistence"].experiments == (
        "fig3", "fig4", "fig5", "fig6", "energy",
    )  # fmt: skip
    assert REPRODUCTIONS["lt-tcp"].experiments == (
        "tables", "components", "fig2", "mss", "estimator", "sensitivity", "ns2",
    )  # fmt: skip
    assert REPRODUCTIONS["rate-swing"].experiments == (
        "fig5", "fig3", "fig6", "fig7", "fig9", "table3", "fig11", "remedies",
    )  # fmt: skip
    assert REPRODUCTIONS["wipemu"].experiments == (
        "channel", "fixed", "adaptive", "transport", "transfer",
    )  # fmt: skip


def test_a_subclass_registers_and_runs_its_steps_in_order(tmp_path: Path) -> None:
    ran: list[str] = []

    class Toy(Reproduction):
        name = "toy-test"
        seed = "seed 999"
        paper = "A toy"
        tcp_profile = "TCP: a toy's"
        confidence = 0.9
        full = (3, 10)

        @experiment("b")
        def second(self) -> list[Table]:
            ran.append("b")
            t = Table("tb", "Table B", ["x", "verdict"])
            t.add(["1"], checks=[Check("one", True, "fine")], record={"x": 1})
            t.add(["2"], checks=[Check("two", False, "off by 3")], record={"x": 2})
            return [t]

        @experiment("a")
        def first(self) -> list[Table]:
            ran.append("a")
            t = Table("ta", "Table A", ["y"])
            t.add(["plain"])
            return [t]

    try:
        assert Toy.experiments == ("b", "a")  # class order, not alphabetical
        result, text = Toy(tmp_path / "o", experiments=["a", "b"]).run()
        assert ran == ["b", "a"] and result["experiments"] == ["a", "b"]
        assert result["checks"] == {"passed": 1, "missed": 1}
        rows = result["tables"]["tb"]["rows"]
        assert rows[1] == {
            "x": 2,
            "checks": [{"check": "two", "pass": False, "detail": "off by 3"}],
        }
        assert "MISS: off by 3" in text and "checks: 1 passed, 1 missed" in text
        html = (tmp_path / "o" / "report.html").read_text()
        assert "class='verdict miss'" in html and "class='verdict ok'" in html
        assert (tmp_path / "o" / "results.json").is_file()
        assert not list((tmp_path / "o").glob(".*.tmp"))
        with pytest.raises(ReproduceError, match="unknown experiment 'c'; allowed: b, a"):
            Toy(tmp_path / "o", experiments=["c"])
    finally:
        del Reproduction.registry["toy-test"]


def test_checks_and_verdicts() -> None:
    assert Check.within("goodput", 4.0, 10.0).passed
    miss = Check.within("delay", -30.0, 25.0)
    assert not miss.passed and miss.detail == "delay -30.0 %, misses by 5.0 pt"
    up = Check.direction("goodput", -2.0, True, "our drop-tail")
    assert not up.passed and "should rise" in up.detail
    assert verdict([Check("a", True, "x")]) == "ok"
    assert verdict([miss, up]).startswith("MISS: delay -30.0 %")
    assert Check("numpy", __import__("numpy").bool_(True), "").json()["pass"] is True


def test_unknown_reproduction() -> None:
    with pytest.raises(ReproduceError, match="allowed: rlc-aqm, arq-persistence, lt-tcp"):
        reproduce("nope")


@pytest.mark.parametrize("path", sorted((REPO / "scenarios").glob("*.toml")))
def test_shipped_scenarios_are_the_repository_files(path: Path) -> None:
    """linklab/scenarios (package data) holds every file of the repository's scenarios/."""
    assert shipped(path.stem) == tomllib.loads(path.read_text(encoding="utf-8"))


def test_unknown_shipped_scenario() -> None:
    with pytest.raises(ValueError, match="no shipped scenario 'nope'; shipped: .*dumbbell-red-ecn"):
        shipped("nope")


def test_every_reproduction_states_its_tcp_profile() -> None:
    """Issue 15 item 1: each reproduction says which TCP it simulates and which
    simulator the paper used; the report and results.json carry it."""
    from linklab.reproduce import REPRODUCTIONS

    assert set(REPRODUCTIONS) == {"rlc-aqm", "arq-persistence", "lt-tcp", "rate-swing", "wipemu"}
    for name, cls in REPRODUCTIONS.items():
        text = cls.tcp_profile
        assert text.startswith("TCP: ") and len(text) > 120, name
        assert "ns2" in text or "ns-2" in text or "Linux" in text, name


def test_a_table_too_wide_is_cut_into_blocks_of_columns() -> None:
    """A grid whose unbreakable cells cannot fit the width (rate-swing's 13 x 13
    Table 3) is printed in blocks of columns, each repeating the row labels."""
    from linklab._format import text_table

    headers = ["T_D \\ T_B", *(f"{x}" for x in range(13))]
    rows = [[f"{td}", *(f"{td}.{tb} ± 0.1{tb} ({tb}.5)" for tb in range(13))] for td in range(3)]
    text = text_table(headers, rows, left=len(headers), rule=True, width=120)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 120
    blocks = text.split("\n\n")
    assert len(blocks) >= 2
    for block in blocks:  # the row labels' column leads every block
        assert block.splitlines()[0].startswith("T_D \\")
    # every cell printed once ("mean ± ci" kept on one line)
    for td in range(3):
        for tb in range(13):
            assert text.count(f"{td}.{tb} ± 0.1{tb} ") + text.count(f"{td}.{tb} ± 0.1{tb}\n") == 1
    # a table that fits is one block, as before
    assert "\n\n" not in text_table(headers[:3], [r[:3] for r in rows], width=120)


def test_judge_records_the_checks_and_notes_each_with_its_numbers() -> None:
    t = Table("k", "title", ["a"])
    t.judge({"scheme": "checks"}, [Check("holds", True, "3 vs 2"), Check("fails", False, "1 vs 2")])
    assert t.records == [
        {
            "config": {"scheme": "checks"},
            "published": None,
            "checks": [
                {"check": "holds", "pass": True, "detail": "3 vs 2"},
                {"check": "fails", "pass": False, "detail": "1 vs 2"},
            ],
        }
    ]
    assert t.notes == ["holds: 3 vs 2 -> ok", "fails: 1 vs 2 -> MISS: 1 vs 2"]
    assert t.judged and [c.name for c in t.checks] == ["holds", "fails"]
