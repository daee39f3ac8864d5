"""Command-line conventions and discovery (issue 35, items 10 and 11): global flags after
the subcommand, ``--format`` on every command that prints a table, ``run --duration``,
``-`` for standard input, ``did you mean`` for a mistyped subcommand, flag, key,
parameter or value, the API's own argument names in its errors; shipped scenarios
listed, run by name and shipped in the wheel; ``linklab params``. About 20 s.
"""

from __future__ import annotations

import contextlib
import csv
import fnmatch
import io
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import linklab
from conftest import TINY, CliRunner, assert_bad_input, cli_env
from linklab import _core, _log
from linklab.cli import main

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml"))


def _main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


# --- global flags after the subcommand ----------------------------------------


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_before_or_after_the_subcommand(tiny: Path, tmp_path: Path, where: str) -> None:
    args = ["sweep", str(tiny), "--param", "per=0", "--out", str(tmp_path / "o"), "--jobs", "1"]
    argv = ["-q", *args] if where == "before" else [*args, "-q"]
    try:
        status, _, _ = _main(*argv)
        assert status == 0 and _log.quiet
    finally:
        _log.quiet = False
    status, _, _ = _main("model", "arq", "--n", "1..2", "-v")
    assert status == 0 and _log.verbose
    _log.verbose = False


# --- --format ------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv,first_column",
    [
        (["model", "arq", "--n", "1..3"], "n"),
        (["model", "arq-limit", "--target", "1e-3"], "m_t"),
        (["model", "loss-volume"], "case"),
        (["model", "mqam", "--snr", "16dB"], "modulation"),
        (["scenarios"], "name"),
        (["params", str(ROOT / "scenarios" / "dumbbell-red-ecn.toml")], "name"),
    ],
    ids=lambda a: " ".join(a) if isinstance(a, list) else a,
)
def test_tables_print_as_csv_and_json(argv: list[str], first_column: str) -> None:
    status, text, _ = _main(*argv, "--format", "csv")
    assert status == 0
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows and next(iter(rows[0])) == first_column, text[:200]
    status, text, _ = _main(*argv, "--format", "json")
    assert status == 0 and json.loads(text)
    status, plain, _ = _main(*argv)
    assert status == 0 and plain.strip() and not plain.startswith("{")


def test_sweep_csv(tiny: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "o")
    status, text, _ = _main("-q", "sweep", str(tiny), "--param", "per=0,0.01",
                            "--out", out, "--jobs", "1", "--format", "csv")  # fmt: skip
    assert status == 0
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [float(r["per"]) for r in rows] == [0.0, 0.01]
    assert float(rows[0]["goodput_bps_mean"]) > 0


def test_reproduce_csv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from linklab.reproduce import REPRODUCTIONS, Reproduction
    from linklab.reproduce.framework import Table, experiment

    class Toy(Reproduction):
        name = "toy-format"
        short = "a toy"
        seed = "seed 999"
        paper = "A toy"
        tcp_profile = "TCP: a toy's"
        confidence = 0.9
        full = (1, 1)

        @experiment("a")
        def a(self) -> list[Table]:
            t = Table("ta", "Table A", ["y"])
            t.add(["1"], record={"y": 1})
            t.add(["2"], record={"y": 2})
            return [t]

    monkeypatch.setitem(REPRODUCTIONS, "toy-format", Toy)
    try:
        status, text, err = _main("-q", "reproduce", "toy-format", "--out", str(tmp_path),
                                  "--format", "csv")  # fmt: skip
    finally:
        del Reproduction.registry["toy-format"]
    assert status == 0, err
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["table"], r["y"]) for r in rows] == [("ta", "1"), ("ta", "2")]


def test_json_and_format_must_agree(tiny: Path) -> None:
    status, _, err = _main("model", "arq", "--json", "--format", "csv")
    assert status == 2 and "disagree" in err


# --- run --duration, standard input -------------------------------------------------


def test_run_duration_and_standard_input(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "linklab", "run", "-", "--duration", "0.5s", "--json"],
        input=TINY, capture_output=True, text=True, cwd=tmp_path, env=cli_env(), timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["sim_time_s"] == pytest.approx(0.5)


def test_bad_duration(cli: CliRunner, tiny: Path) -> None:
    assert_bad_input(cli("run", tiny, "--duration", "-1s"), "--duration")


# --- did you mean ---------------------------------------------------------------------


def test_did_you_mean(cli: CliRunner, tmp_path: Path) -> None:
    dumbbell = ROOT / "scenarios" / "dumbbell-red-ecn.toml"
    assert_bad_input(cli("rnu"), "did you mean 'run'?")
    assert_bad_input(cli("model", "arq", "--formt", "csv"), "did you mean '--format'?")
    assert_bad_input(cli("run", dumbbell, "--set", "durration=1s"), "did you mean 'duration'?")
    line = assert_bad_input(cli("run", dumbbell, "--set", "delack=ture"), allowed=False)
    assert line.endswith("did you mean 'true'?"), line
    bad_key = tmp_path / "key.toml"
    bad_key.write_text(TINY.replace('variant = "sack"', 'varaint = "sack"'))
    assert_bad_input(cli("run", bad_key), "tcp.varaint", "did you mean 'variant'?")
    bad_value = tmp_path / "value.toml"
    bad_value.write_text(TINY.replace('variant = "sack"', 'variant = "sak"'))
    assert_bad_input(cli("run", bad_value), "did you mean 'sack'?")
    assert_bad_input(cli("run", "dumbell-red-ecn"), "did you mean 'dumbbell-red-ecn'?")
    assert_bad_input(
        cli("sweep", dumbbell, "--param", "flow=1,2", "--out", "o"), "did you mean 'flows'?"
    )


def test_the_api_names_its_own_argument() -> None:
    dumbbell = ROOT / "scenarios" / "dumbbell-red-ecn.toml"
    with pytest.raises(linklab.ScenarioError) as e:
        linklab.run(dumbbell, params={"durration": "1s"})
    assert str(e.value).startswith("params['durration']: unknown parameter")
    assert "--set" not in str(e.value) and "did you mean 'duration'?" in str(e.value)
    assert e.value.path == "params['durration']"
    with pytest.raises(linklab.ScenarioError, match=r"params\['per'\]: 'x' is not a number"):
        linklab.run(dumbbell, params={"per": "x"})


# --- discovery ------------------------------------------------------------------------


def test_scenarios_lists_every_shipped_one() -> None:
    status, text, _ = _main("scenarios", "--json")
    listed = {r["name"]: r["description"] for r in json.loads(text)}
    assert status == 0 and sorted(listed) == [p.stem for p in SCENARIOS]
    assert all(listed.values()), listed
    red = tomllib.loads((ROOT / "scenarios" / "dumbbell-red-ecn.toml").read_text())
    assert listed["dumbbell-red-ecn"] == red["description"]


def test_run_a_shipped_scenario_by_name(cli: CliRunner) -> None:
    proc = cli("run", "dumbbell-red-ecn", "--set", "flows=1", "--duration", "0.5s", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["scenario"] == "dumbbell-red-ecn"
    # A shipped scenario reading files (its traces) finds them beside itself.
    proc = cli("run", "cellular-trace", "--duration", "0.5s", "--json")
    assert proc.returncode == 0, proc.stderr


def test_params_lists_defaults_and_comments() -> None:
    status, text, _ = _main("params", "dumbbell-red-ecn", "--json")
    rows = {r["name"]: r for r in json.loads(text)}
    red = tomllib.loads((ROOT / "scenarios" / "dumbbell-red-ecn.toml").read_text())
    assert status == 0 and list(rows) == list(red["params"])
    assert rows["per"] == {
        "name": "per",
        "default": 0.0,
        "type": "number",
        "comment": "packet erasure rate on the bottleneck, data direction only",
    }
    for p in SCENARIOS:  # every shipped scenario's parameters have a comment
        status, text, _ = _main("params", p.stem, "--json")
        missing = [r["name"] for r in json.loads(text) if not r["comment"]]
        assert status == 0 and not missing, (p.name, missing)


def test_the_wheel_ships_the_scenarios_and_what_they_read() -> None:
    """pyproject's maturin includes cover every shipped scenario and every file one
    reads with its defaults (the synthetic traces): ``linklab run NAME`` works from
    an installed wheel, not only from this repository."""
    includes = [
        i["path"]
        for i in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["maturin"]["include"]
        if i.get("format") == "wheel"
    ]
    package = ROOT / "python" / "linklab" / "scenarios"
    needed = list(SCENARIOS)
    for p in SCENARIOS:
        needed += map(Path, _core.input_files(p.read_text(), base_dir=str(p.parent)))
    for f in needed:
        rel = "python/linklab/scenarios/" + str(f.resolve().relative_to(package.resolve()))
        assert any(fnmatch.fnmatch(rel, g) for g in includes), (rel, includes)


# --- the report leads with what matters ------------------------------------------------


def test_the_report_leads_with_the_aggregate_and_the_bottleneck(tiny: Path) -> None:
    status, text, _ = _main("run", str(tiny), "--duration", "1s")
    lines = text.splitlines()
    assert status == 0 and lines[1].startswith("aggregate: goodput ")
    # One 10 Mbit/s link carrying one bulk flow: it is the bottleneck and nearly full.
    neck = lines[2]
    assert neck.startswith("bottleneck A->B: utilisation "), neck
    assert 80 < float(neck.split("utilisation ")[1].split(" %")[0]) <= 100, neck
    assert "queue mean" in neck and "drops" in neck and "lost 0" in neck
    _, brief, _ = _main("run", str(tiny), "--duration", "1s", "--brief")
    assert brief.splitlines()[1:3] == lines[1:3] and "flow" not in brief.split("\n\n")[1]


def test_completion_knows_the_new_commands_and_flags() -> None:
    status, script, _ = _main("completion", "bash")
    assert status == 0
    for word in ("scenarios", "params", "--format", "--duration"):
        assert word in script, word


def test_a_run_without_flows_does_not_report_a_zero_aggregate() -> None:
    # The aggregate sums the [[flows]]; web-search-mix has workloads only, and a
    # "goodput 0.000 Mbit/s" line above its workload table read as a failed run.
    scenario = Path(__file__).parent.parent / "scenarios" / "web-search-mix.toml"
    status, text, _ = _main("run", str(scenario), "--duration", "1s")
    lines = text.splitlines()
    assert status == 0 and lines[1].startswith("aggregate: no [[flows]]"), lines[1]
    assert lines[2].startswith("bottleneck L->R: utilisation "), lines[2]
    assert any(line.startswith("workloads: ") for line in lines), text
