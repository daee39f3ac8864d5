"""`rate_schedule` on a wired link direction, end to end."""

from __future__ import annotations

import linklab

LINK = """
name = "step"
duration = "40s"
[tcp]
rwnd = "1MiB"
[[links]]
a = "S"
b = "R"
delay = "20ms"
queue = { limit = "200p" }
{rate}
[[flows]]
from = "S"
to = "R"
"""


def _run(rate: str, duration: str = "40s") -> dict[str, float]:
    text = LINK.replace("{rate}", rate).replace('duration = "40s"', f'duration = "{duration}"')
    return linklab.run(text, seed=1).summary["aggregate"]


def test_goodput_follows_the_step() -> None:
    step = 'rate_schedule = [{ at = "0s", rate = "10Mbit" }, { at = "20s", rate = "1Mbit" }]'
    both = _run(step)["goodput_bps"]
    fast = _run('rate = "10Mbit"')["goodput_bps"]
    slow = _run('rate = "1Mbit"')["goodput_bps"]
    assert slow < both < fast
    # Half the time at each rate: close to their mean (TCP at ~95 % of each link).
    assert abs(both - (fast + slow) / 2) < 0.05 * (fast + slow) / 2


def test_before_the_step_it_is_the_constant_link() -> None:
    step = 'rate_schedule = [{ at = "0s", rate = "10Mbit" }, { at = "20s", rate = "1Mbit" }]'
    assert _run(step, "15s") == _run('rate = "10Mbit"', "15s")


def test_per_direction_schedule_and_its_error() -> None:
    # The data direction's own schedule replaces the link's rate; b->a keeps 10 Mbit/s.
    data = 'rate = "10Mbit"\nab = { rate_schedule = [{ at = "0s", rate = "2Mbit" }] }'
    goodput = _run(data)["goodput_bps"]
    assert 0.85 * 2e6 < goodput < 2e6
    bad = 'ab = { rate = "1Mbit", rate_schedule = [{ at = "0s", rate = "2Mbit" }] }\nrate = "1Mbit"'
    try:
        _run(bad)
    except linklab.ScenarioError as e:
        assert e.path == "links[0].ab.rate_schedule", e.path
    else:
        raise AssertionError("a rate and a schedule for one direction must be refused")


def test_an_unbounded_queue_never_overflows() -> None:
    # A 1 Mbit/s link behind a fast one with limit = "inf": the window (1 MiB)
    # queues entirely, nothing is dropped, and the limit reads back as "inf".
    text = LINK.replace("{rate}", 'rate = "1Mbit"').replace(
        'queue = { limit = "200p" }', 'queue = { limit = "inf" }'
    )
    s = linklab.run(text, seed=1).summary
    q = next(q for q in s["queues"] if q["link"] == "S->R")
    assert q["drops"]["overflow"] == 0
    assert q["max_packets"] > 200
    assert s["aggregate"]["retransmits"] == 0
