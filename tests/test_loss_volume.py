"""Seed 003's fluid loss-volume model (Eqs. 1-6): API and `linklab model loss-volume`."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import CliRunner, assert_bad_input
from linklab.analytic import LossVolumeError, loss_volume


def test_fig5_defaults_by_hand() -> None:
    # b_ll 9.6, b_b 38.4, b_lh 163.2 kbit/s, W 32 kB, B 5 kB, T 0.3 s: case 3,
    # L = W (b_lh - b_b) / b_lh.
    r = loss_volume("9.6kbit", "38.4kbit", "163.2kbit", "32kB", "5kB", "300ms")
    assert r["case"] == 3
    assert r["loss_volume_bytes"] == pytest.approx(32_000 * (163.2 - 38.4) / 163.2)
    assert r["threshold_low_bps"] == pytest.approx(8 * 32_000 / (0.3 + 5000 / 4800))
    assert r["threshold_high_bps"] == pytest.approx(8 * 32_000 / 0.3)
    # Numbers in base units give the same.
    assert loss_volume(9600, 38400, 163200, 32000, 5000, 0.3) == r


def test_the_sharp_swing_limit_and_the_clamp() -> None:
    r = loss_volume("9.6kbit", "38.4kbit", "10Gbit", "32kB", "5kB", "300ms")
    assert r["case"] == 1
    assert r["loss_volume_bytes"] == pytest.approx(32_000 - 5000 - 1200 * 0.3, rel=1e-3)
    c = loss_volume("9.6kbit", "38.4kbit", "163.2kbit", "5.5kB", "5kB", "200ms")
    assert c["case"] == 2 and c["clamped"] and c["loss_volume_bytes"] == 0.0


@settings(max_examples=200, deadline=None)
@given(
    w=st.floats(3000, 200_000),
    b=st.floats(0, 50_000),
    t=st.floats(0.05, 2.0),
    blh=st.floats(20_000, 4_000_000),
)
def test_monotone_in_window_and_buffer(w: float, b: float, t: float, blh: float) -> None:
    # More window never loses less; more shared buffer never loses more.
    base = loss_volume(9600, 38400, blh, w, b, t)["loss_volume_bytes"]
    assert loss_volume(9600, 38400, blh, w * 1.1, b, t)["loss_volume_bytes"] >= base - 1e-6
    assert loss_volume(9600, 38400, blh, w, b + 500, t)["loss_volume_bytes"] <= base + 1e-6


def test_errors_name_the_parameter() -> None:
    with pytest.raises(LossVolumeError) as e:
        loss_volume("9.6kbit", "38.4kbit", "9.6kbit", "32kB", "5kB", "300ms")
    assert e.value.name == "blh" and "switch up" in str(e.value)
    with pytest.raises(LossVolumeError) as e:
        loss_volume("9.6kbit", "38.4kbit", "163kbit", "-32kB", "5kB", "300ms")
    assert e.value.name == "window"
    with pytest.raises(LossVolumeError) as e:
        loss_volume("9.6kbit", "38.4kbit", "163kbit", "32kB", "5kB", True)
    assert e.value.name == "rtt"


def test_cli_table_json_and_range(cli: CliRunner) -> None:
    done = cli("model", "loss-volume")
    assert done.returncode == 0 and "24470.6" in done.stdout
    done = cli("model", "loss-volume", "--blh", "19.2kbit..1Mbit:8", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["vary"] == "blh" and len(doc["rows"]) == 8
    assert [r["case"] for r in doc["rows"]] == [0, 3, 2, 2, 2, 2, 1, 1]
    for r in doc["rows"]:
        assert {"case", "t_start_s", "t_end_s", "loss_volume_bytes"} <= set(r)


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--rtt", "0ms"], ["--rtt", "positive"]),
        (["--blh", "9kbit"], ["--blh", "switch up"]),
        (["--blh", "1..2"], ["--blh", "A..B:N"]),
        (["--bll", "1kbit..2kbit:3"], ["--bll", "only on --blh"]),
        (["--blh", "20kbit..1Mbit:3", "--rtt", "0.1s..1s:3"], ["one of them"]),
        (["--window", "lots"], ["--window", "lots"]),
        (["--window", "100B"], ["--window", "bottleneck"]),
    ],
)
def test_cli_bad_input(cli: CliRunner, args: list[str], needles: list[str]) -> None:
    assert_bad_input(cli("model", "loss-volume", *args), *needles)
