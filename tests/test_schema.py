"""The JSON Schema of scenario files: every shipped scenario validates, bad documents
are refused, and the schema and the loader agree on them."""

from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import linklab

SCENARIOS = sorted((Path(__file__).resolve().parent.parent / "scenarios").glob("*.toml"))

# A small valid scenario; each bad document below changes one thing in it.
GOOD: dict[str, Any] = {
    "name": "schema-check",
    "duration": "1s",
    "params": {"per": 0.01, "rate": "2Mbit"},
    "tcp": {"variant": "sack", "mss": 1448, "rwnd": "64KiB"},
    "links": [
        {"a": "S{1..2}", "b": "R", "rate": "100Mbit", "delay": "1ms"},
        {
            "a": "R",
            "b": "D",
            "rate": "${rate}",
            "delay": "20ms",
            "queue": {"kind": "red", "limit": "100p", "minth": 5, "maxth": 15, "ecn": True},
            "ab": {"loss": "${per}"},
        },
    ],
    "flows": [{"from": "S{1..2}", "to": "D"}],
}


def _set(doc: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    node: Any = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def _without(doc: dict[str, Any], key: str) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    del out[key]
    return out


BAD: dict[str, dict[str, Any]] = {
    "rate in bytes per second": _set(GOOD, ("links", 0, "rate"), "2Mbps"),
    "rate without unit": _set(GOOD, ("links", 0, "rate"), "2000000"),
    "unknown TCP variant": _set(GOOD, ("tcp", "variant"), "cubic"),
    "delay without unit": _set(GOOD, ("links", 0, "delay"), "50"),
    "delay as a number": _set(GOOD, ("links", 0, "delay"), 50),
    "stay probability above 1": _set(
        GOOD,
        ("links", 1, "channel"),
        {"kind": "gilbert_elliott", "p_good": 0, "p_bad": 1, "g": 1.5, "b": 0.5, "slot": "10ms"},
    ),
    "loss above 1": _set(GOOD, ("links", 1, "ab", "loss"), 1.5),
    "RED key on a drop-tail queue": _set(GOOD, ("links", 0, "queue"), {"limit": "50p", "minth": 5}),
    "queue limit without unit": _set(GOOD, ("links", 0, "queue"), {"limit": "50"}),
    "unknown queue kind": _set(GOOD, ("links", 0, "queue"), {"kind": "sfq"}),
    "CoDel target without a unit": _set(
        GOOD, ("links", 0, "queue"), {"kind": "codel", "target": 5}
    ),
    "RED without thresholds": _set(GOOD, ("links", 0, "queue"), {"kind": "red"}),
    "unknown channel kind": _set(GOOD, ("links", 0, "channel"), {"kind": "fractal"}),
    "unknown link key": _set(GOOD, ("links", 0, "speed"), 3),
    "radio key on a wired link": _set(GOOD, ("links", 0, "tti"), "10ms"),
    "unknown link kind": _set(GOOD, ("links", 0, "kind"), "satellite"),
    "unknown FEC scheme": _set(GOOD, ("links", 0, "fec"), {"scheme": "raptor", "n": 10, "k": 9}),
    "hybrid key on ll-fec": _set(
        GOOD, ("links", 0, "fec"), {"scheme": "ll-fec", "n": 10, "k": 9, "persistence": 3}
    ),
    "negative mss": _set(GOOD, ("tcp", "mss"), -1),
    "initial window above 10": _set(GOOD, ("tcp", "initial_window"), 11),
    "unknown TCP key": _set(GOOD, ("tcp", "bogus"), True),
    "boolean as text": _set(GOOD, ("tcp", "ecn"), "yes"),
    "unknown top-level key": _set(GOOD, ("speed",), 1),
    "no duration": _without(GOOD, "duration"),
    "flow count of 0": _set(GOOD, ("flows", 0, "count"), 0),
    "bins out of range": _set(GOOD, ("tcp", "lt"), {"proactive_bins": [[0.5, 300]]}),
    "unknown congestion control": _set(GOOD, ("tcp", "cc"), "vegas"),
    "CUBIC beta of 1": _set(GOOD, ("tcp", "cc"), {"kind": "cubic", "beta": 1.0}),
    "CUBIC key on NewReno": _set(GOOD, ("tcp", "cc"), {"kind": "newreno", "beta": 0.7}),
    "congestion control as a number": _set(GOOD, ("tcp", "cc"), 3),
}


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(linklab.json_schema())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.name for p in SCENARIOS])
def test_every_shipped_scenario_validates(
    validator: jsonschema.Draft202012Validator, path: Path
) -> None:
    doc = tomllib.loads(path.read_text())
    errors = [f"{list(e.absolute_path)}: {e.message[:200]}" for e in validator.iter_errors(doc)]
    assert errors == []


def test_the_good_document_validates_and_runs(validator: jsonschema.Draft202012Validator) -> None:
    validator.validate(GOOD)
    result = linklab.run(GOOD)
    assert result.summary["aggregate"]["delivered_bytes"] > 0


@pytest.mark.parametrize("name", list(BAD))
def test_bad_documents_are_refused_by_schema_and_loader(
    validator: jsonschema.Draft202012Validator, name: str
) -> None:
    doc = BAD[name]
    assert list(validator.iter_errors(doc)), f"the schema accepts: {name}"
    with pytest.raises(linklab.ScenarioError) as e:
        linklab.run(doc)
    assert e.value.path, f"the loader's error names no key: {e.value}"


def test_placeholders_are_allowed_for_any_value(validator: jsonschema.Draft202012Validator) -> None:
    doc = _set(GOOD, ("tcp", "ecn"), "${ecn}")
    doc = _set(doc, ("links", 0, "queue"), {"kind": "${q}", "limit": "${limit}"})
    validator.validate(doc)


def test_the_error_carries_value_and_allowed() -> None:
    with pytest.raises(linklab.ScenarioError) as e:
        linklab.run(BAD["rate in bytes per second"])
    err = e.value
    assert err.path == "links[0].rate"
    assert err.value == '"2Mbps"'
    assert "Mbit" in err.allowed
    assert err.message == f"{err.value} {err.allowed}"
    assert str(err) == f"{err.path}: {err.message}"


def _best(validator: jsonschema.Draft202012Validator, doc: dict[str, Any]) -> Any:
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    assert error is not None, "the schema accepts it"
    return error


def test_a_mistyped_key_is_named_at_its_table(validator: jsonschema.Draft202012Validator) -> None:
    """The kind of a table picks its schema (if/then), so a mistyped key is reported
    against that kind, at the table that holds it and naming it, not as "not valid
    under any of the given schemas" of every kind (issue 35, item 12)."""
    doc = copy.deepcopy(GOOD)
    doc["links"][1]["rat"] = doc["links"][1].pop("rate")
    errors = list(validator.iter_errors(doc))
    assert [list(e.absolute_path) for e in errors] == [["links", 1]]
    assert errors[0].message == "Additional properties are not allowed ('rat' was unexpected)"
    # What an editor shows (jsonschema's best_match): the same place and key.
    best = _best(validator, doc)
    assert (list(best.absolute_path), best.message) == (["links", 1], errors[0].message)
    # The same in a queue of kind red, and an unknown kind at the kind key.
    e = _best(validator, _set(GOOD, ("links", 1, "queue", "minthh"), 3))
    assert list(e.absolute_path) == ["links", 1, "queue"] and "'minthh'" in e.message
    e = _best(validator, _set(GOOD, ("links", 1, "queue", "kind"), "redd"))
    assert list(e.absolute_path) == ["links", 1, "queue", "kind"]
    assert e.message.startswith("'redd' is not one of ['droptail', 'red',"), e.message
    # A RED key on the default kind (drop-tail, no kind given).
    e = _best(validator, BAD["RED key on a drop-tail queue"])
    assert list(e.absolute_path) == ["links", 0, "queue"] and "'minth'" in e.message
    for error in validator.iter_errors(BAD["unknown link key"]):
        assert "anyOf" not in error.message and "any of the given" not in error.message


def test_defaults_are_carried_and_valid(validator: jsonschema.Draft202012Validator) -> None:
    """Every default the descriptions state is a `default` keyword at the property, and
    each one validates against its own property's schema."""
    schema = validator.schema
    found: dict[str, Any] = {}

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            for key, prop in (node.get("properties") or {}).items():
                if isinstance(prop, dict) and "default" in prop:
                    found[f"{where}.{key}"] = prop["default"]
                    sub = jsonschema.Draft202012Validator({**prop, "$defs": schema["$defs"]})
                    bad = [e.message for e in sub.iter_errors(prop["default"])]
                    assert not bad, (where, key, prop["default"], bad)
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for item in node:
                walk(item, where)

    walk(schema, "")
    # Before: 35 properties carried a default (those with a serde default in Rust);
    # with the descriptions read, 192 (distinct places). The rest state prose
    # ("Default: the direction's propagation delay") or none.
    assert len(found) >= 150, len(found)
    links = schema["$defs"]["LinkConfig"]["allOf"][1]["then"]["properties"]
    assert links["delay"]["default"] == "0s" and links["loss"]["default"] == 0
    tcp = schema["$defs"]["TcpOverlay"]["properties"]
    assert tcp["max_rto"]["default"] == "60s" and tcp["prr"]["default"] is False


def test_a_schema_key_is_accepted(
    validator: jsonschema.Draft202012Validator, tmp_path: Path
) -> None:
    """Editors find the schema by a top-level "$schema" key; schema and loader take it."""
    doc = {"$schema": "./scenario.schema.json", **GOOD}
    validator.validate(doc)
    assert linklab.run(doc).summary["aggregate"]["delivered_bytes"] > 0
    path = tmp_path / "s.toml"
    path.write_text('"$schema" = "scenario.schema.json"\n' + SCENARIOS[0].read_text())
    assert linklab.run(path).summary["flows"]
