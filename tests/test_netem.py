"""netem-style impairments on a link direction, end to end (docs/models/netem.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

import linklab
from conftest import CliRunner, assert_bad_input

SCENARIO = """
name = "netem"
duration = "20s"
[tcp]
rwnd = "128KiB"
[[links]]
a = "S"
b = "D"
rate = "10Mbit"
delay = "10ms"
queue = {{ limit = "200p" }}
ab = {{ netem = {netem} }}
[[flows]]
from = "S"
to = "D"
"""


def _run(netem: str, seed: int = 1, rwnd: str = "128KiB") -> dict:
    text = SCENARIO.format(netem=netem).replace('rwnd = "128KiB"', f'rwnd = "{rwnd}"')
    return linklab.run(text, seed=seed).summary


def _netem(summary: dict) -> dict:
    return next(x for x in summary["links"] if x["name"] == "S->D")["netem"]


def test_jitter_reorders_with_tfifo_not_with_pfifo_or_rate() -> None:
    jitter = 'delay = "40ms", jitter = "20ms", distribution = "normal"'
    tfifo = _run(f"{{ {jitter} }}")["aggregate"]
    pfifo = _run(f'{{ {jitter}, child = "pfifo" }}')["aggregate"]
    rate = _run(f'{{ {jitter}, rate = "10Mbit" }}')["aggregate"]
    # No packet is lost: every fast retransmission is a reordering artefact.
    assert tfifo["fast_retransmits"] > 20, tfifo
    assert pfifo["fast_retransmits"] == 0, pfifo
    assert rate["fast_retransmits"] == 0, rate
    # Without spurious window cuts the in-order variants carry more.
    assert pfifo["goodput_bps"] > tfifo["goodput_bps"]


def test_constant_delay_adds_to_the_path() -> None:
    # A window of a few packets: no queueing, the delay is the path's.
    base = _run("{}", rwnd="8KiB")["aggregate"]
    more = _run('{ delay = "30ms" }', rwnd="8KiB")["aggregate"]
    assert more["delay_p50_s"] == pytest.approx(base["delay_p50_s"] + 0.030, abs=2e-4)


def test_duplication_corruption_and_loss_counters() -> None:
    s = _run("{ duplicate = 0.1, corrupt = 0.01 }")
    n = _netem(s)
    assert 0.08 < n["duplicated"] / n["packets"] < 0.12, n
    assert 0.005 < n["corrupted"] / n["packets"] < 0.02, n
    assert s["aggregate"]["retransmits"] > 0  # corrupted packets are lost to TCP
    assert s["aggregate"]["goodput_bps"] > 5e6
    # Gilbert–Elliott: stationary loss = p/(p+r)·(1-h) + r/(p+r)·(1-k).
    ge = _netem(_run('{ loss = { kind = "gemodel", p = 0.01, r = 0.2, loss_bad = 0.5 } }'))
    want = 0.01 / 0.21 * 0.5
    assert abs(ge["lost"] / ge["packets"] - want) < 0.35 * want, ge


def test_ecn_marks_instead_of_dropping() -> None:
    text = SCENARIO.format(netem='{ loss = { kind = "random", p = 0.02 }, ecn = true }')
    text = text.replace('rwnd = "128KiB"', 'rwnd = "128KiB"\necn = true')
    s = linklab.run(text).summary
    n = _netem(s)
    assert n["lost"] == 0 and n["ecn_marked"] > 0, n
    assert s["aggregate"]["retransmits"] == 0


def test_same_seed_same_result() -> None:
    netem = (
        '{ delay = "20ms", jitter = "5ms", correlation = 0.5, distribution = "paretonormal", '
        "reorder = 0.05, gap = 3, duplicate = 0.01, "
        'loss = { kind = "state", p13 = 0.01, p31 = 0.5 } }'
    )
    a, b = _run(netem, seed=4), _run(netem, seed=4)
    for k in ("wall_time_s", "hops_per_s"):
        a.pop(k)
        b.pop(k)
    assert a == b
    c = _run(netem, seed=5)
    assert _netem(c) != _netem(a)


@pytest.mark.parametrize(
    ("netem", "path", "needle"),
    [
        ('{ jiter = "5ms" }', "links[0].ab.netem", "jiter"),
        ("{ reorder = 0.1 }", "links[0].ab.netem.reorder", "without a delay"),
        ('{ delay = "5ms", gap = 3 }', "links[0].ab.netem.gap", "reorder"),
        ('{ delay = "5ms", distribution = "gauss" }', "links[0].ab.netem.distribution", "normal"),
        ('{ loss = { kind = "bursty" } }', "links[0].ab.netem.loss.kind", "gemodel"),
        (
            '{ loss = { kind = "state", p13 = 0.7, p14 = 0.5 } }',
            "links[0].ab.netem.loss.p14",
            "≤ 1",
        ),
        ("{ duplicate = 1.5 }", "links[0].ab.netem.duplicate", "probability"),
        ("{ limit = 0 }", "links[0].ab.netem.limit", "1 to 10000000"),
        ('{ child = "fq" }', "links[0].ab.netem.child", "pfifo"),
    ],
)
def test_bad_netem(cli: CliRunner, tmp_path: Path, netem: str, path: str, needle: str) -> None:
    scen = tmp_path / "n.toml"
    scen.write_text(SCENARIO.format(netem=netem))
    assert_bad_input(cli("run", scen), path, needle)


def test_netem_with_link_fec_is_refused(cli: CliRunner, tmp_path: Path) -> None:
    scen = tmp_path / "n.toml"
    text = SCENARIO.format(netem='{ delay = "5ms" }').replace(
        "ab = { netem", 'fec = { scheme = "ll-fec", n = 10, k = 8 }\nab = { netem'
    )
    scen.write_text(text)
    assert_bad_input(cli("run", scen), "links[0].fec", "netem")
