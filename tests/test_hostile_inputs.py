"""Hostile inputs refused with one line naming the key and what is allowed (issue 34).

Non-finite numbers (``nan``, ``inf``, ``-inf``) are refused in every table of
random scenarios (the draws of ``linklab.check``), from TOML text and from
Python dicts alike, with the key path of the value. Measured on the 2-core
machine: the file in about 10 s.
"""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hypothesis")
tomli_w = pytest.importorskip("tomli_w")

import linklab  # noqa: E402
from linklab.check import draw_at  # noqa: E402
from linklab.errors import ScenarioError  # noqa: E402

NON_FINITE = (math.nan, math.inf, -math.inf)
TOML_SPELLING = {0: "nan", 1: "inf", 2: "-inf"}

# Draws of the random-scenario generator: every topology and model family
# appears within the first few dozen (the fixed batch in test_check_random.py
# checks the generator's coverage).
DRAWS = 24


def _tables(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every table (dict) inside ``node``, with its key path."""
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from _tables(v, f"{path}.{k}" if path else k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _tables(v, f"{path}[{i}]")


def _key_to_spoil(table: dict[str, Any], turn: int) -> str:
    """A number of ``table`` if it has one, else a string, else a new key."""
    numbers = [
        k for k, v in table.items() if isinstance(v, int | float) and not isinstance(v, bool)
    ]
    strings = [k for k, v in table.items() if isinstance(v, str)]
    pool = numbers or strings
    return pool[turn % len(pool)] if pool else "spoiled"


def test_non_finite_numbers_in_every_table_are_refused_with_their_path() -> None:
    checked = 0
    tables_seen: set[str] = set()
    for index in range(DRAWS):
        scenario = draw_at(11, index).scenario
        for turn, (path, table) in enumerate(list(_tables(scenario))):
            key = _key_to_spoil(table, turn)
            which = turn % 3
            had, old = key in table, table.get(key)
            table[key] = NON_FINITE[which]
            where = f"{path}.{key}" if path else key
            try:
                for source in (scenario, tomli_w.dumps(scenario)):
                    with pytest.raises(ScenarioError) as err:
                        linklab.run(source)
                    e = err.value
                    assert (e.path, e.value) == (where, TOML_SPELLING[which]), f"draw {index}: {e}"
                    assert "is not a finite number" in e.allowed, str(e)
                    assert "\n" not in str(e)
                    checked += 1
            finally:
                if had:
                    table[key] = old
                else:
                    del table[key]
            # The kind of table (its path without indices): the coverage.
            tables_seen.add("".join(c for c in path if not c.isdigit()).replace("[]", ""))
    assert checked >= 500, checked
    # The tagged tables the issue names are among those spoiled.
    for name in ("links.queue", "links.ab.queue", "links.channel", "links.netem", "tcp.cc"):
        assert any(t.startswith(name) or name in t for t in tables_seen), (name, tables_seen)


@pytest.mark.parametrize(
    ("line", "path"),
    [
        ("delay = inf", "links[0].delay"),
        ("rate = inf", "links[0].rate"),
        ("loss = nan", "links[0].loss"),
        ('queue = { kind = "red", minth = 5, maxth = 15, limit = -inf }', "links[0].queue.limit"),
        ('channel = { kind = "bernoulli", p = nan }', "links[0].channel.p"),
        ("netem = { duplicate = nan }", "links[0].netem.duplicate"),
    ],
)
def test_cli_refuses_non_finite_numbers(tmp_path: Path, line: str, path: str) -> None:
    key = line.split(" = ")[0]
    link = {"rate": 'rate = "10Mbit"', "delay": 'delay = "10ms"'}
    rest = "\n".join(v for k, v in link.items() if k != key)
    text = (
        'duration = "1s"\n[[links]]\na = "A"\nb = "B"\n'
        f'{rest}\n{line}\n[[flows]]\nfrom = "A"\nto = "B"\n'
    )
    f = tmp_path / "s.toml"
    f.write_text(text)
    p = subprocess.run(
        [sys.executable, "-m", "linklab", "run", str(f)], capture_output=True, text=True
    )
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    # (the file's own path, under pytest's tmp_path, holds the test's name)
    assert f"{path}: " in lines[0] and "is not a finite number" in lines[0], lines[0]
    assert "Traceback" not in p.stderr


def test_python_floats_and_params_are_refused() -> None:
    doc: dict[str, Any] = {
        "duration": "1s",
        "links": [{"a": "A", "b": "B", "rate": "10Mbit", "delay": "10ms"}],
        "flows": [{"from": "A", "to": "B"}],
    }
    doc["links"][0]["delay"] = float("inf")
    with pytest.raises(ScenarioError, match=r"links\[0\]\.delay: inf is not a finite number"):
        linklab.run(doc)
    doc["links"][0]["delay"] = "10ms"
    doc["params"] = {"per": float("nan")}
    with pytest.raises(ScenarioError, match=r"params\.per: nan"):
        linklab.run(doc)
