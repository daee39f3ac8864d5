"""The human-readable report of ``linklab run``: a large network's idle links and queues
are counted, not listed (issue 34 item 6: a million-node star printed two million
rows of zeros, most of the run's wall time)."""

from __future__ import annotations

from linklab.cli import MAX_IDLE_ROWS, render_summary


def _summary(directions: int, busy: set[int]) -> dict:
    links = [
        {"name": f"L{i}", "rate_bps": 1e6, "throughput_bps": 0.0, "lost": 0,
         "tx_packets": 5 if i in busy else 0}
        for i in range(directions)
    ]  # fmt: skip
    queues = [
        {"link": f"L{i}", "kind": "droptail", "arrivals": 5 if i in busy else 0, "drops": {}}
        for i in range(directions)
    ]
    return {"links": links, "queues": queues, "flows": [], "aggregate": {}}


def test_small_networks_list_every_link() -> None:
    text = render_summary(_summary(MAX_IDLE_ROWS, {3}))
    assert all(f"L{i} " in text for i in range(MAX_IDLE_ROWS))
    assert "idle" not in text


def test_large_networks_count_their_idle_links() -> None:
    n = MAX_IDLE_ROWS + 1
    text = render_summary(_summary(n, {3, 77}))
    names = {w for line in text.splitlines() for w in line.split()[:1] if w.startswith("L")}
    assert names == {"L3", "L77"}
    assert f"({n - 2:,} idle link directions with no packets not shown" in text
    assert f"({n - 2:,} idle queues with no packets not shown" in text


def test_dumps_json_is_json_safe_json() -> None:
    import json
    import math

    from linklab._format import dumps_json, json_safe

    clean = {"a": [1, 2.5, {"b": "NaN"}], "c": None}
    assert dumps_json(clean) == json.dumps(clean)
    dirty = {"a": [1, math.nan, {"b": math.inf}], "c": -math.inf}
    assert json.loads(dumps_json(dirty)) == {"a": [1, None, {"b": None}], "c": None}
    assert dumps_json(dirty) == json.dumps(json_safe(dirty))
