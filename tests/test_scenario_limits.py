"""Scenarios at any size or shape end in a ScenarioError naming the problem, never a crash."""

from __future__ import annotations

from typing import Any

import pytest

import linklab
from linklab import _core

LINK = {"a": "S", "b": "R", "rate": "1Mbit"}

#: A child's own peak memory (VmHWM, kB): ``ru_maxrss`` survives ``exec`` on Linux,
#: so a child of a large pytest process would report the parent's peak.
PEAK_KB = (
    "def _peak_kb():\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM:'):\n"
    "            return int(line.split()[1])\n"
)
FLOW = {"from": "S", "to": "R"}


def _refused(doc: Any) -> linklab.ScenarioError:
    with pytest.raises(linklab.ScenarioError) as e:
        linklab.run(doc)
    return e.value


def _refused_by_core(doc: Any) -> linklab.ScenarioError:
    """The binding's own guard (``linklab.run`` checks the dict in Python first,
    see test_api.py; a caller of ``_core.run`` has only this one)."""
    with pytest.raises(linklab.ScenarioError) as e:
        _core.run(doc)
    return e.value


def test_a_dict_holding_itself_is_refused_by_the_core() -> None:
    d: dict[str, Any] = {"duration": "2s"}
    d["self"] = d
    assert "nested" in _refused_by_core(d).allowed
    items: list[Any] = []
    items.append(items)
    assert "nested" in _refused_by_core({"duration": "2s", "links": items}).allowed


def test_a_deeply_nested_dict_is_refused() -> None:
    doc: dict[str, Any] = {}
    for _ in range(11_000):
        doc = {"x": doc}
    err = _refused_by_core({"duration": "2s", "tcp": doc})
    assert err.path == "scenario" and "nested" in err.allowed
    err = _refused({"duration": "2s", "tcp": doc})
    assert err.path.startswith("tcp.x.x") and "nested" in err.allowed


def test_an_empty_network_is_refused() -> None:
    assert _refused({"duration": "2s"}).path == "links"
    assert _refused({"duration": "2s", "links": [LINK]}).path == "flows"


def test_huge_ranges_and_flow_counts_name_the_cap() -> None:
    huge = {"a": "N{1..99999999}", "b": "H", "rate": "1Mbit"}
    err = _refused({"duration": "1s", "links": [huge], "flows": [FLOW]})
    assert err.path == "links[0].a" and "MAX_NODES" in err.allowed
    doc = {
        "duration": "1s",
        "links": [{"a": "S{1..100}", "b": "R", "rate": "1Mbit"}],
        "flows": [{"from": "S{1..100}", "to": "R", "count": 10_000}],
    }
    err = _refused(doc)
    assert err.path == "flows[0]" and "MAX_FLOWS" in err.allowed


def test_fan_out_by_groups_builds_one_link_per_mobile() -> None:
    # A BSC feeding 2 BTS, each with 3 mobiles; one flow per mobile.
    text = """
duration = "2s"
[[links]]
a = "SRV"
b = "BSC"
rate = "100Mbit"
[[links]]
a = "BSC"
b = "BTS{1..2}"
rate = "10Mbit"
[[links]]
a = "BTS{1..2}"
b = "MS{1..6}"
rate = "153.6kbit"
queue = { limit = "inf" }
[[flows]]
from = "SRV"
to = "MS{1..6}"
"""
    s = linklab.run(text).summary
    names = {x["name"] for x in s["links"]}
    assert {"BTS1->MS3", "BTS2->MS4", "BTS2->MS6"} <= names
    assert "BTS1->MS4" not in names
    assert len(s["flows"]) == 6 and all(f["goodput_bps"] > 0 for f in s["flows"])


@pytest.mark.parametrize(
    ("links", "flows", "path", "cap"),
    [
        # 600 000 + 400 000 + R = 1 000 001 nodes: refused at the second entry.
        (
            [("A{1..600000}", "R"), ("B{1..400000}", "R")],
            [{"from": "A1", "to": "B1"}],
            "links[1]",
            "MAX_NODES",
        ),
        # 200 001 flows over 400 000 links.
        (
            [("A{1..200000}", "R"), ("B{1..200000}", "R")],
            [{"from": "A1", "to": "B1"}, {"from": "A{1..200000}", "to": "B1", "count": 1}],
            "flows[1]",
            "MAX_FLOWS",
        ),
    ],
)
def test_caps_are_checked_before_anything_is_built(
    links: list[tuple[str, str]], flows: list[dict[str, Any]], path: str, cap: str
) -> None:
    """Issue 34 item 5: the caps come from the ranges' sizes. The 1 000 001-node
    scenario was refused only after the first 600 000 links were built (18 s, 2.2 GB
    here); now in a child process whose peak memory stays under 300 MB."""
    import json
    import subprocess
    import sys

    doc = {
        "duration": "1s",
        "links": [{"a": a, "b": b, "rate": "1Mbit"} for a, b in links],
        "flows": flows,
    }
    code = (
        PEAK_KB + "import json, sys, linklab\n"
        "try:\n"
        "    linklab.run(json.loads(sys.argv[1]))\n"
        "except linklab.ScenarioError as e:\n"
        "    print(e.path, e.allowed)\n"
        "print(_peak_kb())\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, json.dumps(doc)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    message, peak_kb = r.stdout.strip().rsplit("\n", 1)
    assert message.startswith(path) and cap in message, message
    assert int(peak_kb) < 300_000, f"{peak_kb} KB"
