"""Analytic models: the selective-repeat ARQ Markov chain of seed 001 (§III-A),
the fluid loss-volume model of one rate switch of seed 003 (§3, Eqs. 1–6) and
seed 004's uncoded M-QAM with adaptive modulation (:func:`mqam`), and the
ITU-T G.107 E-model of a voice call (:func:`emodel`, docs/models/media.md).

:func:`arq` evaluates the chain of one isolated SDU of ``npdu`` PDUs over a
Gilbert–Elliott channel (``p_good``/``p_bad`` unit error probabilities,
``g``/``b`` stay probabilities, one channel step per frame): the residual SDU
loss ``F(n)`` after ``n`` transmissions per PDU, its approximation ``F_hat(n)``
(eq. 5), and the mean number of transmission rounds per SDU ``E[eta]`` (eq. 2)
and ``E[eta | n <= M_t]`` (eq. 3). :func:`arq_limit` inverts eq. (5). The
numbers come from the Rust core (``linklab_core::analytic::ArqModel``); see
docs/models/arq-model.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from linklab import _core

__all__ = [
    "LIMIT_CAP",
    "MAX_N",
    "MAX_NPDU",
    "MAX_SDUS",
    "ArqError",
    "arq",
    "arq_limit",
    "arq_monte_carlo",
    "check_arq",
    "LossVolumeError",
    "loss_volume",
    "MqamError",
    "mqam",
    "PsError",
    "ps",
    "FRAME_BITS_PER_SECOND",
    "EMODEL_INPUTS",
    "EModelError",
    "emodel",
    "voice_codecs",
]

_BOUNDS: tuple[int, int, int] = _core.arq_bounds()
#: Largest ``npdu`` accepted (the exact chain holds ``npdu**2`` probabilities).
MAX_NPDU: int = _BOUNDS[0]
#: Largest ``n`` :func:`arq` evaluates, and largest ``n_max`` of
#: :func:`arq_monte_carlo` (the cost is ``n * npdu**2``).
MAX_N: int = _BOUNDS[1]
#: Most SDUs one :func:`arq_monte_carlo` simulates.
MAX_SDUS: int = _BOUNDS[2]
#: What :func:`arq_limit` returns for a target it cannot meet sooner.
LIMIT_CAP: int = _core.arq_limit_cap()
_MAX_SEED = 2**64 - 1


class ArqError(ValueError):
    """Invalid model parameters; ``.name`` is the offending parameter."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


def check_arq(p_good: float, p_bad: float, g: float, b: float, npdu: int) -> None:
    """Raise :class:`ArqError` naming the first invalid parameter."""
    for name, v in (("p_good", p_good), ("p_bad", p_bad), ("g", g), ("b", b)):
        if not (isinstance(v, int | float) and 0.0 <= v <= 1.0):
            raise ArqError(name, f"{name} = {v!r} must be a probability in [0, 1]")
    if g == 1.0 and b == 1.0:
        raise ArqError(
            "g", "g = b = 1 has no stationary distribution (the channel never changes state)"
        )
    _check_int("npdu", npdu, 1, MAX_NPDU)


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ArqError(name, f"{name} = {value!r} must be an integer from {low} to {high}")
    return value


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def arq(
    p_good: float, p_bad: float, g: float, b: float, npdu: int, n_from: int, n_to: int
) -> dict[str, Any]:
    """The model for ``n = n_from ..= n_to`` (``1 <= n_from <= n_to <= MAX_N``).

    Returns ``{"lambda1", "mean_tx", "rows": [{"n", "F", "F_hat",
    "mean_tx_limited"}, ...]}`` where ``mean_tx_limited`` is ``E[eta | n <= M_t]``
    with ``M_t = n``. ``mean_tx`` is ``None`` when it is infinite (the SDU may never
    complete, e.g. ``p_bad = 1`` with ``b = 1``). Raises :class:`ArqError`.
    """
    check_arq(p_good, p_bad, g, b, npdu)
    for name, v in (("n_from", n_from), ("n_to", n_to)):
        _check_int(name, v, 1, MAX_N)
    if n_from > n_to:
        raise ArqError("n_from", f"empty range {n_from}..{n_to}: n_from must not exceed n_to")
    m = _core.arq_model(p_good, p_bad, g, b, npdu, n_to)
    f: list[float] = m["F"]  # type: ignore[assignment]
    f_hat: list[float] = m["F_hat"]  # type: ignore[assignment]
    lim: list[float] = m["mean_tx_limited"]  # type: ignore[assignment]
    rows = [
        {"n": n, "F": f[n], "F_hat": f_hat[n], "mean_tx_limited": lim[n]}
        for n in range(n_from, n_to + 1)
    ]
    return {
        "lambda1": float(m["lambda1"]),  # type: ignore[arg-type]
        "mean_tx": _finite(float(m["mean_tx"])),  # type: ignore[arg-type]
        "rows": rows,
    }


def arq_limit(p_good: float, p_bad: float, g: float, b: float, npdu: int, target: float) -> int:
    """The smallest ``M_t >= 1`` with ``F_hat(M_t) <= target``, ``0 < target <= 1``.

    Capped at :data:`LIMIT_CAP` when the target cannot be met sooner (e.g. a
    channel whose BAD state never lets a PDU through). Raises :class:`ArqError`.
    """
    check_arq(p_good, p_bad, g, b, npdu)
    if not (isinstance(target, int | float) and 0.0 < target <= 1.0):
        raise ArqError("target", f"target = {target!r} must be in (0, 1]")
    return int(_core.arq_limit(p_good, p_bad, g, b, npdu, float(target)))


def arq_monte_carlo(
    p_good: float,
    p_bad: float,
    g: float,
    b: float,
    npdu: int,
    sdus: int,
    n_max: int,
    seed: int = 1,
) -> list[int]:
    """Monte Carlo of ``sdus`` isolated SDUs under the model's assumptions.

    Returns, for ``n = 0 ..= n_max``, how many SDUs were still incomplete after
    ``n`` frames (an estimate of ``sdus * F(n)``). Deterministic in ``seed``
    (stream ``analytic:arq-mc``). ``1 <= sdus <=`` :data:`MAX_SDUS`,
    ``0 <= n_max <=`` :data:`MAX_N`. Raises :class:`ArqError`.
    """
    check_arq(p_good, p_bad, g, b, npdu)
    _check_int("sdus", sdus, 1, MAX_SDUS)
    _check_int("n_max", n_max, 0, MAX_N)
    _check_int("seed", seed, 0, _MAX_SEED)
    return list(_core.arq_monte_carlo(p_good, p_bad, g, b, npdu, sdus, n_max, seed))


class LossVolumeError(ValueError):
    """Invalid loss-volume parameters; ``.name`` is the offending parameter."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


_KINDS = {"bll": "rate", "bb": "rate", "blh": "rate", "window": "size", "buffer": "size",
          "rtt": "time"}  # fmt: skip


def _quantity(name: str, value: object) -> float:
    """``value`` in the model's base unit: a number (bit/s, bytes, seconds) or a
    string with a scenario unit ("9.6kbit", "32kB", "300ms")."""
    if isinstance(value, str):
        try:
            return float(_core.parse_quantity(_KINDS[name], value.strip()))
        except ValueError as e:
            raise LossVolumeError(name, f"{name} = {value!r}: {e}") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise LossVolumeError(name, f"{name} = {value!r} must be a number or a string with a unit")
    return float(value)


def loss_volume(
    bll: float | str,
    bb: float | str,
    blh: float | str,
    window: float | str,
    buffer: float | str,
    rtt: float | str,
) -> dict[str, Any]:
    """Seed 003's fluid model of the losses one rate switch causes at a shared buffer.

    A flow with a fixed window ``window`` and round-trip propagation ``rtt``
    crosses a shared buffer of ``buffer`` bytes served for it at ``bb``, then
    its radio link served at ``bll``, which switches up to ``blh`` at t0 = 0.
    Rates in bit/s (or strings such as ``"9.6kbit"``), sizes in bytes
    (``"32kB"``), times in seconds (``"300ms"``). Returns ``case`` (1, 2 or 3
    as in Eq. 5; 0 when ``blh <= bb``: the shared buffer never fills),
    ``t_start_s``, ``t_end_s`` (None in case 0), ``threshold_low_bps`` =
    W/(T + B/b_b) and ``threshold_high_bps`` = W/T, ``loss_volume_bytes`` (Eq. 6)
    and ``clamped`` (Eq. 6 was negative and is reported as 0). Raises
    :class:`LossVolumeError`. See docs/models/loss-volume.md.
    """
    v = {n: _quantity(n, x) for n, x in
         (("bll", bll), ("bb", bb), ("blh", blh), ("window", window), ("buffer", buffer),
          ("rtt", rtt))}  # fmt: skip
    try:
        r = _core.loss_volume(v["bll"] / 8, v["bb"] / 8, v["blh"] / 8, v["window"], v["buffer"],
                              v["rtt"])  # fmt: skip
    except ValueError as e:
        name, _, why = str(e).partition(": ")
        name = {"b_ll": "bll", "b_b": "bb", "b_lh": "blh"}.get(name, name)
        raise LossVolumeError(name, f"{name}: {why}") from None
    return {
        "case": int(r["case"]),
        "t_start_s": float(r["t_start_s"]),
        "t_end_s": None if r["t_end_s"] is None else float(r["t_end_s"]),
        "threshold_low_bps": 8 * float(r["threshold_low_Bps"]),
        "threshold_high_bps": 8 * float(r["threshold_high_Bps"]),
        "loss_volume_bytes": float(r["loss_volume_bytes"]),
        "clamped": bool(r["clamped"]),
        "inputs": {"bll_bps": v["bll"], "bb_bps": v["bb"], "blh_bps": v["blh"],
                   "window_bytes": v["window"], "buffer_bytes": v["buffer"], "rtt_s": v["rtt"]},
    }  # fmt: skip


#: Symbols a WIPEMU bin carries per second: 1500 frames of 108 data symbols.
FRAME_BITS_PER_SECOND = 1500 * 108


class MqamError(ValueError):
    """Invalid M-QAM model parameters; ``.name`` is the offending parameter."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


def _db(name: str, value: object) -> float:
    """``value`` in dB: a number or a string such as ``"16dB"``."""
    if isinstance(value, str):
        text = value.strip()
        num = text[:-2] if text.lower().endswith("db") else text
        try:
            v = float(num)
        except ValueError:
            raise MqamError(name, f"{name} = {value!r} is not a level in dB (e.g. 16dB)") from None
    elif isinstance(value, bool) or not isinstance(value, int | float):
        raise MqamError(name, f"{name} = {value!r} is not a level in dB (e.g. 16dB)")
    else:
        v = float(value)
    if not math.isfinite(v):
        raise MqamError(name, f"{name} = {value!r} is not finite")
    return v


def mqam(
    snr: float | str, shadow: float | str = 0.0, nmse: float = 0.0, qam8: str = "cross"
) -> dict[str, Any]:
    """Seed 004's uncoded M-QAM over a 108-symbol frame at mean symbol SNR ``snr`` (dB).

    Returns ``rows``: per modulation (``bpsk``, ``4qam``, ``8qam``, ``16qam``,
    ``32qam``, ``64qam``, ``128qam``, ``256qam``) its ``bits`` per symbol, the
    symbol and frame error rates ``ser`` and ``fer`` over AWGN at ``snr``, and
    ``ceiling``: delivered bits per symbol (one try per frame) averaged over
    Rayleigh fading of mean ``snr`` times log-normal shadowing of ``shadow`` dB,
    with ``kbps`` the same at 1500 frames/s; ``levels``: the adaptive 4-256-QAM
    switching levels ``[modulation, predicted SNR dB]`` for prediction ``nmse``
    (the first from -inf); ``ceiling``/``kbps``: adaptive modulation's. ``qam8``:
    ``"cross"`` or ``"rectangular"``. See docs/models/mqam.md.
    """
    s, sh = _db("snr", snr), _db("shadow", shadow)
    if isinstance(nmse, bool) or not isinstance(nmse, int | float):
        raise MqamError("nmse", f"nmse = {nmse!r} is not a number in [0, 1)")
    try:
        r = _core.mqam(s, sh, float(nmse), str(qam8))
    except ValueError as e:
        name, _, why = str(e).partition(": ")
        given = {"snr": snr, "shadow": shadow, "nmse": nmse, "qam8": qam8}.get(name)
        raise MqamError(name, f"{name} = {given!r}: {why}") from None
    rows = [{**row, "kbps": row["ceiling"] * FRAME_BITS_PER_SECOND / 1e3} for row in r["rows"]]
    return {
        "snr_db": s, "shadow_db": sh, "nmse": float(nmse), "qam8": qam8, "rows": rows,
        "levels": [[m, None if math.isinf(db) else db] for m, db in r["levels"]],
        "ceiling": r["ceiling"], "kbps": r["ceiling"] * FRAME_BITS_PER_SECOND / 1e3,
    }  # fmt: skip


class EModelError(ValueError):
    """Invalid E-model input; ``.name`` is the offending input."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


class PsError(ValueError):
    """Invalid processor-sharing parameters; ``.name`` is the offending parameter."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


#: The E-model's inputs (ITU-T G.107 Table 3, lower case; delays in ms, ``ppl`` in %).
EMODEL_INPUTS: tuple[str, ...] = (
    "slr", "rlr", "stmr", "lstr", "ds", "dr", "telr", "wepl", "t", "tr", "ta", "qdu", "ie",
    "bpl", "ppl", "burst_r", "nc", "nfor", "ps", "pr", "a", "s_t", "m_t",
)  # fmt: skip


def voice_codecs() -> dict[str, dict[str, float]]:
    """The voice codecs of ``[[media]]`` (``kind = "voice"``): per name its
    ``frame_ms``, ``frame_bytes``, ``lookahead_ms``, ``interval_ms`` (the
    default packet interval) and G.113 Appendix I's ``ie`` and ``bpl``."""
    return {
        name: {"frame_ms": f, "frame_bytes": b, "lookahead_ms": la, "interval_ms": iv,
               "ie": ie, "bpl": bpl}
        for name, f, b, la, iv, ie, bpl in _core.voice_codecs()
    }  # fmt: skip


def _ms(name: str, value: object) -> float:
    """A delay in ms: a number (ms) or a string with a unit ("150ms", "0.2s")."""
    if isinstance(value, str):
        try:
            return 1e3 * float(_core.parse_quantity("time", value.strip()))
        except ValueError as e:
            raise EModelError(name, f"{name} = {value!r}: {e}") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise EModelError(name, f"{name} = {value!r} is not a delay (ms, or e.g. '150ms')")
    return float(value)


def emodel(
    ta: float | str = 0.0, codec: str | None = None, echo_path: bool = True, **inputs: float
) -> dict[str, Any]:
    """The ITU-T G.107 E-model rating R and MOS (Annex B) of a narrowband call.

    ``ta``: the mouth-to-ear delay Ta in ms (or ``"150ms"``). With ``echo_path``
    (the default) the talker-echo path is as long, T = Ta and Tr = 2 Ta, as a
    ``[[media]]`` voice stream's rating uses; give ``t``/``tr`` to set them apart.
    ``codec``: one of :func:`voice_codecs`, for its G.113 ``ie`` and ``bpl``
    (an explicit ``ie``/``bpl`` wins). Every other input of G.107 Table 3 by its
    lower-case name (:data:`EMODEL_INPUTS`), e.g. ``ppl=2.0`` (% packet loss),
    ``burst_r=1.5``, ``telr=55``; the rest keep G.107's defaults. Returns the
    inputs as used, ``codec``, and ``ro``, ``is``, ``id``, ``idd``, ``ie_eff``,
    ``r``, ``mos``. Raises :class:`EModelError`. See docs/models/media.md.
    """
    given: dict[str, float] = {}
    for name, v in inputs.items():
        if name not in EMODEL_INPUTS:
            raise EModelError(
                name, f"{name}: is not an E-model input; allowed: {', '.join(EMODEL_INPUTS)}"
            )
        given[name] = _ms(name, v) if name in ("t", "tr", "ta") else _number(name, v)
    given["ta"] = _ms("ta", ta)
    if echo_path:
        given.setdefault("t", given["ta"])
        given.setdefault("tr", 2 * given["ta"])
    if codec is not None:
        codecs = voice_codecs()
        if codec not in codecs:
            raise EModelError("codec", f"codec {codec!r}: allowed: {', '.join(codecs)}")
        given.setdefault("ie", codecs[codec]["ie"])
        given.setdefault("bpl", codecs[codec]["bpl"])
    try:
        r = _core.emodel(list(given.items()))
    except ValueError as e:
        name, _, why = str(e).partition(": ")
        raise EModelError(name, f"{name} = {given.get(name)!r}: {why}") from None
    if not all(math.isfinite(float(v)) for v in r.values()):
        # Finite but extreme inputs (e.g. telr = 1e300) overflow G.107's formulas
        # into inf - inf: name the first given input without which the rating is
        # finite, rather than return NaN.
        culprit = next(
            (n for n in inputs if math.isfinite(float(_core.emodel(
                [(k, v) for k, v in given.items() if k != n])["r"]))),
            next(iter(inputs), "ta"),
        )  # fmt: skip
        raise EModelError(
            culprit,
            f"{culprit} = {given.get(culprit)!r}: the E-model's rating is not a finite "
            "number with it; allowed: a value within G.107 Table 3's permitted range",
        )
    return {"codec": codec, **{k: float(v) for k, v in r.items()}}


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise EModelError(name, f"{name} = {value!r} is not a finite number")
    return float(value)


def ps(load: float, capacity: float | str, sizes: Sequence[float | str] = ()) -> dict[str, Any]:
    """The M/G/1 processor-sharing model: Poisson flow arrivals sharing a link of
    ``capacity`` (bit/s, or a string such as ``"10Mbit"``) equally at ``load``
    (0 < ρ < 1). Returns ``slowdown`` = 1/(1 − ρ) (every size's mean completion time
    over its time alone), ``mean_in_system`` = ρ/(1 − ρ) and, per size in ``sizes``
    (bytes, or strings such as ``"1MB"``; at most 1000), ``rows`` of ``size_bytes``,
    ``alone_s`` = x/C and ``mean_s`` = E[T(x)] = x/(C(1 − ρ)). Raises
    :class:`PsError`. See docs/models/workloads.md.
    """
    if isinstance(load, bool) or not isinstance(load, int | float) or not math.isfinite(load):
        raise PsError("load", f"load = {load!r} must be a number in (0, 1)")
    if isinstance(capacity, str):
        try:
            c = float(_core.parse_quantity("rate", capacity.strip()))
        except ValueError as e:
            raise PsError("capacity", f"capacity = {capacity!r}: {e}") from None
    elif isinstance(capacity, bool) or not isinstance(capacity, int | float):
        raise PsError("capacity", f"capacity = {capacity!r} must be a rate")
    else:
        c = float(capacity)
    xs: list[float] = []
    for x in sizes:
        if isinstance(x, str):
            try:
                xs.append(float(_core.parse_quantity("size", x.strip())))
            except ValueError as e:
                raise PsError("size", f"size = {x!r}: {e}") from None
        elif isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
            raise PsError("size", f"size = {x!r} must be a number of bytes")
        else:
            xs.append(float(x))
    try:
        r = _core.ps_model(float(load), c, xs)
    except ValueError as e:
        name, _, why = str(e).partition(": ")
        raise PsError(name, f"{name}: {why}") from None
    return {
        "load": float(load),
        "capacity_bps": c,
        "slowdown": float(r["slowdown"]),
        "mean_in_system": float(r["mean_in_system"]),
        "rows": [{"size_bytes": a, "alone_s": b, "mean_s": t} for a, b, t in r["rows"]],
    }
