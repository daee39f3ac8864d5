"""A swept value in the wrong syntax is bad input, found before anything runs (issue 35,
item 5; docs/sweeps.md, "Options"): exit 2, one line naming the parameter, the bad
value and the allowed syntax, and no output folder. A value the core reads but
refuses (``per=1.5``: not a probability) stays a failed run. About 5 s.
"""

from __future__ import annotations

import contextlib
import io
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import linklab
from conftest import TINY
from linklab.cli import main
from linklab.sweep import SweepError

SCENARIO = TINY.replace("per = 0.0", "per = 0.0\nflows = 1\necn = false").replace(
    'variant = "sack"', 'variant = "sack"\necn = "${ecn}"'
)


def _not_a_number(text: str) -> bool:
    try:
        return not math.isfinite(float(text.replace("_", "")))
    except ValueError:
        return True


_word = st.from_regex(r"[A-Za-z][A-Za-z0-9.%-]{0,8}", fullmatch=True).filter(
    lambda w: w.lower() not in {"inf", "nan", "true", "false"} and _not_a_number(w)
)
_number = st.one_of(
    st.integers(-1000, 1000).map(str),
    st.floats(-10, 10, allow_nan=False).map(lambda x: f"{x:.3g}"),
)
#: (the parameter, its values as given, the bad value the message must quote).
_malformed = st.one_of(
    # Text for a number (per), an integer (flows) or a boolean (ecn).
    st.tuples(st.just("per"), _word).map(lambda t: (t[0], t[1], t[1])),
    st.tuples(st.just("flows"), _word).map(lambda t: (t[0], t[1], t[1])),
    st.tuples(st.just("ecn"), _word).map(lambda t: (t[0], t[1], t[1])),
    # A fraction for an integer, a number for a boolean.
    st.just(("flows", "2.5", "2.5")),
    st.tuples(st.just("ecn"), st.integers(0, 9).map(str)).map(lambda t: (t[0], t[1], t[1])),
    # A range without its step, or with too many parts.
    st.tuples(_number, _number).map(lambda ab: ("per", f"{ab[0]}:{ab[1]}", f"{ab[0]}:{ab[1]}")),
    st.lists(_number, min_size=4, max_size=5).map(":".join).map(lambda x: ("per", x, x)),
    # One bad value among good ones.
    st.tuples(_number, _word).map(lambda t: ("per", f"0,{t[1]},0.1", t[1])),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_malformed)
def test_malformed_values_are_refused_before_anything_runs(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, str, str]
) -> None:
    name, values, bad = case
    where = tmp_path_factory.mktemp("sweep")
    scenario = where / "s.toml"
    scenario.write_text(SCENARIO)
    out = where / "out"
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()) as so:
        status = main(["-q", "sweep", str(scenario), "--param", f"{name}={values}",
                       "--out", str(out), "--jobs", "1"])  # fmt: skip
    lines = err.getvalue().strip().splitlines()
    assert status == 2, (case, err.getvalue())
    assert len(lines) == 1 and lines[0].startswith("linklab: error: "), lines
    assert f"'{name}'" in lines[0] and repr(bad.strip()) in lines[0], (case, lines[0])
    assert "START:STOP:STEP" in lines[0], lines[0]
    assert so.getvalue() == ""
    assert not out.exists()


def test_the_api_refuses_them_too(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    with pytest.raises(SweepError, match=r"parameter 'per': value 'abc' is not a number"):
        linklab.sweep(scenario, {"per": [0, "abc"]}, out=tmp_path / "out", jobs=1)
    assert not (tmp_path / "out").exists()


def test_a_value_the_core_reads_but_refuses_is_a_failed_run(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    result = linklab.sweep(scenario, {"per": [1.5]}, jobs=1)
    assert result.failed == 1
    assert "not a probability" in str(result.runs["error"][0])
