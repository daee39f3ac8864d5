"""`linklab run` output selection: --brief, --links PATTERN, --format text|json|csv."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from conftest import CliRunner

ROOT = Path(__file__).resolve().parents[1]
DUMBBELL = ROOT / "scenarios" / "dumbbell-red-ecn.toml"
SHORT = ("--set", "duration=5s")


def _run(cli: CliRunner, *args: str) -> str:
    proc = cli("run", DUMBBELL, *SHORT, *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_brief_keeps_the_links_that_queue_or_lose(cli: CliRunner) -> None:
    full = json.loads(_run(cli, "--json"))
    brief = json.loads(_run(cli, "--json", "--brief"))
    assert len(full["links"]) == 42 and "flows" not in brief
    assert [x["name"] for x in brief["links"]] == ["L->R"]
    assert [q["link"] for q in brief["queues"]] == ["L->R"]
    assert brief["aggregate"] == full["aggregate"]
    text = _run(cli, "--brief")
    assert "L->R" in text and "S1->L" not in text and "goodput" in text


def test_links_pattern(cli: CliRunner) -> None:
    s = json.loads(_run(cli, "--json", "--links", "L->*", "--links", "R->L"))
    names = [x["name"] for x in s["links"]]
    assert set(names) == {"L->R", "R->L"} | {f"L->S{i}" for i in range(1, 11)}
    assert len(s["flows"]) == 10, "flows stay without --brief"
    none = json.loads(_run(cli, "--json", "--links", "nothing*"))
    assert none["links"] == [] and none["queues"] == []


def test_csv_one_row_per_item(cli: CliRunner) -> None:
    rows = list(csv.DictReader(io.StringIO(_run(cli, "--format", "csv"))))
    tables = [r["table"] for r in rows]
    assert tables.count("aggregate") == 1
    assert tables.count("flow") == 10
    assert tables.count("link") == 42 and tables.count("queue") == 42
    s = json.loads(_run(cli, "--format", "json"))
    agg = next(r for r in rows if r["table"] == "aggregate")
    assert float(agg["goodput_bps"]) == pytest.approx(s["aggregate"]["goodput_bps"])
    q = next(r for r in rows if r["table"] == "queue" and r["link"] == "L->R")
    want = next(x for x in s["queues"] if x["link"] == "L->R")
    assert int(q["drops.aqm_early"]) == want["drops"]["aqm_early"]
    assert float(q["mean_packets"]) == pytest.approx(want["mean_packets"])


@pytest.mark.parametrize(
    ("args", "needle"),
    [(("--json", "--format", "csv"), "disagree"), (("--format", "xml"), "invalid choice")],
)
def test_bad_output_flags(cli: CliRunner, args: tuple[str, ...], needle: str) -> None:
    proc = cli("run", DUMBBELL, *args)
    assert proc.returncode == 2 and needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
