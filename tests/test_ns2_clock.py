"""`[tcp] rto_tick`: ns-2's coarse retransmission timer (docs/models/tcp.md)."""

from __future__ import annotations

import pytest

import linklab
from conftest import TINY

LOSSY = TINY.replace('ab = { loss = "${per}" }', "ab = { loss = 0.05 }")


def _run(tcp: str) -> dict[str, object]:
    text = LOSSY.replace('[tcp]\nvariant = "sack"', f'[tcp]\nvariant = "newreno"\n{tcp}')
    return linklab.run(text, seed=3).summary


def test_the_ns2_clock_changes_the_timeouts_and_is_deterministic() -> None:
    rfc = _run("")
    ns2 = _run('rto_tick = "100ms"\nmin_rto_after_backoff = true\nmin_rto = "200ms"')
    again = _run('rto_tick = "100ms"\nmin_rto_after_backoff = true\nmin_rto = "200ms"')
    assert ns2 == again | {k: ns2[k] for k in ("wall_time_s", "hops_per_s")}
    flow, flow_rfc = ns2["flows"][0], rfc["flows"][0]  # type: ignore[index]
    assert flow["delivered_bytes"] > 0
    keys = ("timeouts", "retransmits", "delivered_bytes")
    assert [flow[k] for k in keys] != [flow_rfc[k] for k in keys]


@pytest.mark.parametrize(
    ("tcp", "needle"),
    [
        ('rto_tick = "5s"', "rto_tick"),
        ('rto_tick = "0s"', "rto_tick"),
        ("min_rto_after_backoff = true", "min_rto_after_backoff"),
    ],
)
def test_bad_ns2_clock_settings(tcp: str, needle: str) -> None:
    with pytest.raises(linklab.ScenarioError) as e:
        _run(tcp)
    assert needle in str(e.value)
