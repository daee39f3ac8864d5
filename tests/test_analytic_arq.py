"""The ARQ Markov model (seed 001 §III-A): Python API, `linklab model arq*` CLI."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import CliRunner, assert_bad_input
from linklab.analytic import LIMIT_CAP, ArqError, arq, arq_limit

PAPER = {"p_good": 0.01, "p_bad": 0.9, "g": 0.9, "npdu": 25}


def test_paper_values_and_identities() -> None:
    for b in (0.1, 0.9):
        r = arq(b=b, n_from=1, n_to=40, **PAPER)
        pi_g, pi_b = (1 - b) / (2 - 0.9 - b), 0.1 / (2 - 0.9 - b)
        f1 = 1 - (pi_g * 0.99**25 + pi_b * 0.1**25)
        row1 = r["rows"][0]
        assert row1["n"] == 1
        assert row1["F"] == pytest.approx(f1, abs=1e-12)
        assert row1["F_hat"] == pytest.approx(f1, abs=1e-12)
        assert row1["mean_tx_limited"] == 1.0
        tr = 0.9 * 0.01 + b * 0.9
        det = 0.9 * 0.01 * (0.9 + b - 1)
        assert r["lambda1"] == pytest.approx((tr + math.sqrt(tr * tr - 4 * det)) / 2)
        # mean_tx_limited with M_t = n is the partial sum of F(0..n-1).
        f = [1.0] + [row["F"] for row in r["rows"]]
        for row in r["rows"]:
            assert row["mean_tx_limited"] == pytest.approx(sum(f[: row["n"]]), rel=1e-12)
        assert r["rows"][-1]["mean_tx_limited"] < r["mean_tx"]
    # Low burstiness (b = 0.1) needs far fewer transmissions for 1 % residual loss.
    assert arq_limit(b=0.1, target=0.01, **PAPER) < arq_limit(b=0.9, target=0.01, **PAPER)


def test_infinite_mean_is_none() -> None:
    r = arq(0.1, 1.0, 0.5, 1.0, 2, 1, 3)
    assert r["mean_tx"] is None
    assert arq_limit(0.1, 1.0, 0.5, 1.0, 2, 0.5) == LIMIT_CAP


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"p_good": -0.1}, "p_good"),
        ({"p_bad": 1.5}, "p_bad"),
        ({"g": 1.0, "b": 1.0}, "g"),
        ({"npdu": 0}, "npdu"),
        ({"n_from": 0}, "n_from"),
        ({"n_from": 5, "n_to": 3}, "n_from"),
    ],
)
def test_api_bad_input(kwargs: dict[str, float], name: str) -> None:
    args = {"p_good": 0.01, "p_bad": 0.9, "g": 0.9, "b": 0.9, "npdu": 25, "n_from": 1, "n_to": 5}
    args.update(kwargs)
    with pytest.raises(ArqError) as e:
        arq(**args)  # type: ignore[arg-type]
    assert e.value.name == name


def test_cli_json_equals_api(cli: CliRunner) -> None:
    p = cli("model", "arq", "--p-good", "0.01", "--p-bad", "0.9", "--g", "0.9", "--b", "0.1",
            "--npdu", "25", "--n", "2..7", "--json")  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == arq(0.01, 0.9, 0.9, 0.1, 25, 2, 7)
    p = cli("model", "arq-limit", "--target", "0.001", "--b", "0.1", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["m_t"] == arq_limit(0.01, 0.9, 0.9, 0.1, 25, 0.001)
    assert out["F_hat"] <= 0.001 and out["capped"] is False


def test_cli_text(cli: CliRunner) -> None:
    p = cli("model", "arq", "--n", "3")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].split()[:3] == ["n", "F(n)", "F_hat(n)"]
    assert lines[1].split()[0] == "3"
    assert lines[-1].startswith("lambda1 0.810112")
    p = cli("model", "arq-limit", "--target", "1e-3")
    assert p.returncode == 0 and p.stdout.startswith("M_t 32 "), p.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["arq", "--p-good", "1.2"], "--p-good"),
        (["arq", "--p-bad", "x"], "--p-bad"),
        (["arq", "--g", "-0.5"], "--g"),
        (["arq", "--b", "nan"], "--b"),
        (["arq", "--g", "1", "--b", "1"], "--g and --b"),
        (["arq", "--npdu", "0"], "--npdu"),
        (["arq", "--npdu", "2.5"], "--npdu"),
        (["arq", "--n", "5..3"], "--n"),
        (["arq", "--n", ""], "--n"),
        (["arq", "--n", "1..x"], "--n"),
        (["arq", "--n", "0..4"], "--n"),
        (["arq", "--n", "1...4"], "--n"),
        (["arq-limit", "--target", "0"], "--target"),
        (["arq-limit", "--target", "1.5"], "--target"),
        (["arq-limit", "--target", "-1"], "--target"),
        (["arq-limit"], "--target"),
        (["arq-limit", "--target", "0.1", "--npdu", "-3"], "--npdu"),
    ],
)
def test_cli_bad_input(cli: CliRunner, args: list[str], needle: str) -> None:
    assert_bad_input(cli("model", *args), needle)


def test_cli_no_model(cli: CliRunner) -> None:
    assert_bad_input(cli("model"), "MODEL")


probs = st.floats(0.0, 1.0, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(probs, probs, probs, probs, st.integers(1, 12), st.floats(1e-6, 1.0))
@example(0.0, 0.0, 0.99999, 1.0, 1, 1.0)  # once: 2-g-b rounding made F_hat(1) != F(1)
def test_model_invariants(
    pg: float, pb: float, g: float, b: float, npdu: int, target: float
) -> None:
    if g == 1.0 and b == 1.0:
        with pytest.raises(ArqError):
            arq(pg, pb, g, b, npdu, 1, 2)
        return
    r = arq(pg, pb, g, b, npdu, 1, 30)
    f = [row["F"] for row in r["rows"]]
    assert all(0.0 <= x <= 1.0 for x in f)
    assert all(f[i + 1] <= f[i] + 1e-15 for i in range(len(f) - 1))
    assert r["rows"][0]["F_hat"] == pytest.approx(f[0], abs=1e-12)
    assert 0.0 <= r["lambda1"] <= 1.0
    lim = [row["mean_tx_limited"] for row in r["rows"]]
    assert all(lim[i] <= lim[i + 1] for i in range(len(lim) - 1))
    if r["mean_tx"] is not None:
        assert lim[-1] <= r["mean_tx"] * (1 + 1e-9)
    m_t = arq_limit(pg, pb, g, b, npdu, target)
    assert 1 <= m_t <= LIMIT_CAP
    at = arq(pg, pb, g, b, npdu, m_t, m_t)["rows"][0]["F_hat"]
    assert at <= target or m_t == LIMIT_CAP
    if m_t > 1:
        assert arq(pg, pb, g, b, npdu, m_t - 1, m_t - 1)["rows"][0]["F_hat"] > target


def test_sizes_beyond_the_bounds_are_refused_not_allocated() -> None:
    from linklab import _core
    from linklab.analytic import MAX_N, MAX_NPDU, MAX_SDUS, arq_monte_carlo

    assert (MAX_NPDU, MAX_N, MAX_SDUS) == (1024, 100_000, 10_000_000)
    # Both used to abort the process on a failed allocation.
    with pytest.raises(ArqError) as e:
        arq_monte_carlo(0.01, 0.9, 0.9, 0.9, 25, 10**12, 5)
    assert e.value.name == "sdus" and "1 to 10000000" in str(e.value)
    with pytest.raises(ValueError, match=r"npdu = 1000000 is too large; at most 1024"):
        _core.arq_model(0.01, 0.9, 0.9, 0.9, 10**6, 5)
    # Every bound of the binding, named.
    for call, needle in [
        (lambda: _core.arq_model(0.01, 0.9, 0.9, 0.9, 25, MAX_N + 1), "n = 100001"),
        (lambda: _core.arq_monte_carlo(0.01, 0.9, 0.9, 0.9, 25, MAX_SDUS + 1, 5, 1), "sdus"),
        (lambda: _core.arq_monte_carlo(0.01, 0.9, 0.9, 0.9, 25, 5, MAX_N + 1, 1), "n = "),
        (lambda: _core.arq_monte_carlo(0.01, 0.9, 0.9, 0.9, 2000, 5, 5, 1), "npdu = 2000"),
    ]:
        with pytest.raises(ValueError, match=needle):
            call()
    # ...and of the Python API.
    for kwargs, name in [
        ({"n_max": MAX_N + 1}, "n_max"),
        ({"n_max": -1}, "n_max"),
        ({"sdus": 0}, "sdus"),
        ({"sdus": 2.5}, "sdus"),
        ({"seed": -1}, "seed"),
        ({"npdu": MAX_NPDU + 1}, "npdu"),
    ]:
        args = {"p_good": 0.01, "p_bad": 0.9, "g": 0.9, "b": 0.9, "npdu": 25, "sdus": 10}
        args |= {"n_max": 5} | kwargs
        with pytest.raises(ArqError) as e:
            arq_monte_carlo(**args)  # type: ignore[arg-type]
        assert e.value.name == name
    with pytest.raises(ArqError) as e:
        arq(0.01, 0.9, 0.9, 0.9, 25, 1, MAX_N + 1)
    assert e.value.name == "n_to"
    # At the bounds it works.
    assert len(arq_monte_carlo(0.01, 0.9, 0.9, 0.9, MAX_NPDU, 3, 4)) == 5
    assert len(_core.arq_model(0.01, 0.9, 0.9, 0.9, 25, MAX_N)["F"]) == MAX_N + 1


def test_monte_carlo_counts_are_the_tail_of_eta() -> None:
    from linklab.analytic import arq_monte_carlo

    counts = arq_monte_carlo(0.01, 0.9, 0.9, 0.9, 25, 20_000, 30, seed=4)
    assert counts[0] == 20_000
    assert all(a >= b for a, b in zip(counts, counts[1:], strict=False))
    f = arq(0.01, 0.9, 0.9, 0.9, 25, 1, 30)["rows"]
    for n in (1, 5, 10):
        assert counts[n] / 20_000 == pytest.approx(f[n - 1]["F"], abs=0.02)
