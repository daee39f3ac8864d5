"""Seed 004's uncoded M-QAM model: API and `linklab model mqam`."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import CliRunner, assert_bad_input
from linklab.analytic import MqamError, mqam


def _q(x: float) -> float:
    return 0.5 * math.erfc(x / math.sqrt(2))


def test_awgn_error_rates_by_hand() -> None:
    r = mqam("10dB")
    rows = {x["modulation"]: x for x in r["rows"]}
    assert list(rows) == ["bpsk", "4qam", "8qam", "16qam", "32qam", "64qam", "128qam", "256qam"]
    g = 10.0
    assert rows["bpsk"]["ser"] == pytest.approx(_q(math.sqrt(2 * g)), rel=1e-9)
    p16 = 2 * (1 - 1 / 4) * _q(math.sqrt(3 * g / 15))
    assert rows["16qam"]["ser"] == pytest.approx(1 - (1 - p16) ** 2, rel=1e-9)
    # Cross 8-QAM: 96 g / (31 M - 32).
    p8 = 2 * (1 - 1 / 4) * _q(math.sqrt(96 * g / 216))
    assert rows["8qam"]["ser"] == pytest.approx(1 - (1 - p8) ** 2, rel=1e-9)
    assert rows["4qam"]["fer"] == pytest.approx(1 - (1 - rows["4qam"]["ser"]) ** 108, rel=1e-6)
    assert [x["bits"] for x in r["rows"]] == list(range(1, 9))
    # Rectangular 8-QAM: exact for the 4 x 2 rectangle.
    x = _q(math.sqrt(g / 3))
    rect = {x["modulation"]: x for x in mqam(10, qam8="rectangular")["rows"]}
    assert rect["8qam"]["ser"] == pytest.approx(1 - (1 - 1.5 * x) * (1 - x), rel=1e-9)


def test_levels_and_ceiling_at_16db() -> None:
    perfect = mqam("16dB")
    noisy = mqam("16dB", nmse=0.1)
    names = [m for m, _ in perfect["levels"]]
    assert names == ["4qam", "8qam", "16qam", "32qam", "64qam", "128qam", "256qam"]
    assert perfect["levels"][0][1] is None
    dbs = [db for _, db in perfect["levels"][1:]]
    assert dbs == sorted(dbs)
    # More conservative with prediction errors.
    assert all(n[1] > p[1] for p, n in zip(perfect["levels"][1:], noisy["levels"][1:], strict=True))
    # Seed 004 quotes [17]: about 2.2 bits/symbol at 16 dB (NMSE 0.1 levels).
    assert noisy["ceiling"] == pytest.approx(2.2, abs=0.15)
    assert noisy["ceiling"] < perfect["ceiling"]
    # Adaptive beats every fixed modulation; shadowing costs capacity.
    assert all(perfect["ceiling"] > x["ceiling"] for x in perfect["rows"])
    assert mqam("16dB", "4dB")["ceiling"] != perfect["ceiling"]
    assert perfect["kbps"] == pytest.approx(perfect["ceiling"] * 162.0)


@settings(max_examples=20, deadline=None)
@given(st.floats(min_value=-5, max_value=35))
def test_error_rates_fall_with_snr_and_rise_with_points(snr: float) -> None:
    lo = mqam(snr)["rows"]
    hi = mqam(snr + 3)["rows"]
    for a, b in zip(lo, hi, strict=True):
        assert b["ser"] <= a["ser"] + 1e-15
        assert 0 <= a["fer"] <= 1
    for a, b in zip(lo, lo[1:], strict=False):
        assert a["ser"] <= b["ser"] + 1e-15


def test_api_errors() -> None:
    for kw, name in (({"snr": "loud"}, "snr"), ({"snr": 99}, "snr"), ({"snr": 1, "nmse": 1.0},
                     "nmse"), ({"snr": 1, "qam8": "star"}, "qam8"), ({"snr": 1, "shadow": -1},
                     "shadow")):  # fmt: skip
        with pytest.raises(MqamError) as e:
            mqam(**kw)  # type: ignore[arg-type]
        assert e.value.name == name


def test_cli_table_and_json(cli: CliRunner) -> None:
    done = cli("model", "mqam", "--snr", "16dB")
    assert done.returncode == 0, done.stderr
    assert "adaptive ceiling" in done.stdout and "256qam" in done.stdout
    done = cli("model", "mqam", "--snr", "16", "--nmse", "0.1", "--shadow", "4dB", "--json")
    doc = json.loads(done.stdout)
    assert {"rows", "levels", "ceiling"} <= set(doc)
    assert {"modulation", "bits", "ser", "fer"} <= set(doc["rows"][0])


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--snr", "loud"], ["--snr", "dB"]),
        (["--snr", "16", "--nmse", "x"], ["--nmse", "[0, 1)"]),
        (["--snr", "16", "--nmse", "1.5"], ["--nmse", "[0, 1)"]),
        (["--snr", "16", "--qam8", "star"], ["--qam8", "cross or rectangular"]),
        (["--snr", "99dB"], ["--snr", "-20 to 60"]),
    ],
)
def test_cli_bad_input(cli: CliRunner, args: list[str], needles: list[str]) -> None:
    assert_bad_input(cli("model", "mqam", *args), *needles)
