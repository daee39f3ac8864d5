"""What a run's numbers alone would hide: the warnings ``linklab run`` and
``linklab sweep`` print on stderr and ``Result.warnings`` lists
(docs/metrics.md, "Warnings").

One check so far: the receive window, not the congestion control, limited every
flow for most of the time it had data to send (``flows[].send_limits``, RFC 4898's
``SndLimTimeRwin``). Then no loss or ECN mark ever made the congestion control act,
and ``cc = "cubic"`` and ``cc = "newreno"`` give the same result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: "Most of the time": a flow counts as limited by its receive window when the
#: window stopped it for more than half of the time it had data to send
#: (``send_limits.rwnd_s / send_limits.busy_s > RWND_LIMITED``). Then the receive
#: window, not the congestion control, was the limit the flow spent the larger
#: part of its sending under; the congestion window set the pace for less than
#: the rest, so no choice of congestion control can change most of the result.
RWND_LIMITED = 0.5

_MIB = 1 << 20
#: The largest `rwnd` a scenario may set (`TcpConfig::validate`).
_RWND_MAX = 1 << 30


def _fractions(summary: Mapping[str, Any]) -> list[tuple[float, Mapping[str, Any]]]:
    """(rwnd-limited fraction, send_limits) of each flow that had data to send."""
    out = []
    for f in summary.get("flows") or []:
        lim = f.get("send_limits") if isinstance(f, Mapping) else None
        if not isinstance(lim, Mapping):
            continue
        busy, rwnd = lim.get("busy_s"), lim.get("rwnd_s")
        if isinstance(busy, int | float) and isinstance(rwnd, int | float) and busy > 0:
            out.append((float(rwnd) / float(busy), lim))
    return out


def rwnd_limited_fraction(summary: Mapping[str, Any]) -> float | None:
    """The smallest, over the flows that had data to send, of the fraction of that
    time the receive window limited the flow: how far *every* flow was
    rwnd-limited (None: no flow had data to send, or the summary does not say)."""
    fractions = _fractions(summary)
    return min(x for x, _ in fractions) if fractions else None


def suggested_rwnd(rwnd: int) -> int:
    """A receive window to try instead of ``rwnd``, bytes: the smallest power of two
    of at least 8 MiB (above Linux's default maximum, ``tcp_rmem[2]`` 6 MiB) and 8
    times ``rwnd``, at most 1 GiB."""
    want = max(8 * _MIB, 8 * rwnd)
    return min(1 << (want - 1).bit_length(), _RWND_MAX)


def _size(n: int) -> str:
    return f"{n // _MIB}MiB" if n % _MIB == 0 else f"{n}B"


def _span(values: Sequence[float], fmt: str) -> str:
    lo, hi = format(min(values), fmt), format(max(values), fmt)
    return lo if lo == hi else f"{lo}-{hi}"


def rwnd_warning(summary: Mapping[str, Any]) -> str | None:
    """The warning for a run whose every flow was limited by its receive window for
    more than :data:`RWND_LIMITED` of the time it had data to send, else None."""
    fractions = _fractions(summary)
    if not fractions or min(x for x, _ in fractions) <= RWND_LIMITED:
        return None
    limits = [lim for _, lim in fractions]
    rwnds = sorted({int(lim.get("rwnd_bytes") or 0) for lim in limits})
    rtts = [float(r) for lim in limits if isinstance(r := lim.get("min_rtt_s"), int | float)]
    n = len(fractions)
    who = "the flow" if n == 1 else f"all {n} flows"
    pct = _span([100 * x for x, _ in fractions], ".0f")
    window = f"{rwnds[0]} B" if len(rwnds) == 1 else f"{rwnds[0]}-{rwnds[-1]} B"
    numbers = [
        f"the receive window (rwnd {window}), not the congestion control, limited {who} "
        f"for {pct} % of the time {'it' if n == 1 else 'they'} had data to send"
    ]
    if rtts and min(rtts) > 0:
        cap = rwnds[-1] * 8 / min(rtts)
        per = "" if n == 1 else " per flow"
        numbers.append(
            f"one window per round trip allows at most {cap / 1e6:.3g} Mbit/s{per} at the "
            f"{1e3 * min(rtts):.3g} ms minimum RTT"
        )
    goodput = (summary.get("aggregate") or {}).get("goodput_bps")
    if isinstance(goodput, int | float):
        numbers.append(f"goodput {goodput / 1e6:.3g} Mbit/s{'' if n == 1 else ' in all'}")
    return (
        f"{'; '.join(numbers)}. The congestion control hardly acted, so the choice of cc "
        "changes little: raise [tcp] rwnd (or a flow's tcp.rwnd) above the path's "
        f'bandwidth-delay product and its buffer, e.g. rwnd = "{_size(suggested_rwnd(rwnds[-1]))}"'
    )


def warnings(summary: Mapping[str, Any]) -> list[str]:
    """Every warning for the run of ``summary`` (each one line, without a prefix)."""
    return [w for w in (rwnd_warning(summary),) if w is not None]
