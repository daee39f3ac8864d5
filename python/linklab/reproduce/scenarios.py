"""The reproductions' scenarios: the shipped ``scenarios/*.toml`` files, varied by overlays.

Each function returns a dict: a shipped scenario (package data, see
:func:`linklab._scenario.shipped`) with a few key paths set by
:func:`linklab._scenario.overlay` where the experiment needs what the file does
not vary through ``[params]``. Everything else is a ``[params]`` value given
to the sweep.
"""

from __future__ import annotations

from typing import Any

from linklab._scenario import overlay, shipped
from linklab.reproduce import published as P

__all__ = ["arq_scenario", "lt_dumbbell", "static_scenario", "switch_scenario"]

# ---------------------------------------------------------------------------
# Seed 000 (rlc-aqm)
# ---------------------------------------------------------------------------


def static_scenario(aqm: str) -> dict[str, Any]:
    """A fixed-rate bearer with ``aqm`` (droptail, sbd, red) in the RLC buffer."""
    return shipped(f"umts-rlc-{aqm}")


def switch_scenario(aqm: str) -> dict[str, Any]:
    """Two flows, bearer 384 -> 128 kbit/s at ``switch_at``; ``aqm``: droptail
    (no reconfiguration, Fig. 2), sbd (Table 3 per rate, Fig. 14, the shipped
    file) or red (Table 5 per rate, Fig. 15)."""
    doc = shipped("umts-rate-switch-sbd")
    if aqm == "sbd":
        return doc
    table: list[dict[str, Any]] | None = None
    if aqm == "red":
        table = [
            {
                "rate": f"{rate}kbit",
                "queue": {
                    "kind": "red",
                    "minth": minth,
                    "maxth": 40,
                    "maxp": maxp,
                    "instantaneous": True,
                    "gentle": False,
                },  # fmt: skip
            }
            for rate, (maxp, minth) in P.RED_PROPOSED.items()
        ]
    elif aqm != "droptail":
        raise ValueError(f"unknown AQM {aqm!r}; allowed: droptail, sbd, red")
    return overlay(
        doc,
        {
            "name": f"umts-rate-switch-{aqm}",
            "description": f"Seed 000: two flows, bearer 384 -> 128 kbit/s, {aqm} RLC buffer",
            "links[2].aqm_table": table,  # None: no table, no reconfiguration
        },
    )


# ---------------------------------------------------------------------------
# Seed 001 (arq-persistence)
# ---------------------------------------------------------------------------


def arq_scenario(adaptive: bool = False) -> dict[str, Any]:
    """Seed 001's set-up (``scenarios/umts-tdd-arq.toml``); ``adaptive``: MaxDAT set
    by the cross-layer controller (alpha = parameter ``alpha``, P_TCP measured at
    the mobile TCP receiver)."""
    doc = shipped("umts-tdd-arq")
    if not adaptive:
        return doc
    return overlay(
        doc,
        {
            "params.alpha": 0.1,  # accepted link loss / wired loss
            "links[1].max_dat": "adaptive",
            "links[1].adaptive": {"alpha": "${alpha}", "estimator": "receiver"},
        },
    )


# ---------------------------------------------------------------------------
# Seed 002 (lt-tcp)
# ---------------------------------------------------------------------------

_LT_FILES = {
    "sack": "dumbbell-red-ecn",
    "lt-tcp": "dumbbell-lt-tcp",
    "ll-fec": "dumbbell-ll-fec",
    "ll-hybrid": "dumbbell-ll-hybrid",
}


def lt_dumbbell(scheme: str, channel: dict[str, Any] | None = None) -> dict[str, Any]:
    """Seed 002's dumbbell (10 flows, 10 Mbit/s / 20 ms RED/ECN bottleneck,
    500-byte packets) for ``scheme``: ``sack``, ``lt-tcp`` (every building
    block a parameter), ``ll-fec`` or ``ll-hybrid``: the shipped file with PRR
    off (as in ns-2) and TCP timestamps a parameter ``ts``. Erasures at ``per``
    on the bottleneck's data direction, or ``channel`` (a Gilbert-Elliott
    table) instead."""
    if scheme not in _LT_FILES:
        raise ValueError(f"unknown scheme {scheme!r}; allowed: {', '.join(_LT_FILES)}")
    changes: dict[str, Any] = {
        "params.ts": True,
        "params.prr": False,
        "tcp.timestamps": "${ts}",
        "tcp.prr": "${prr}",
    }
    if channel is not None:
        changes["links[1].ab.loss"] = None
        changes["links[1].ab.channel"] = {"kind": "gilbert_elliott", **channel}
    return overlay(shipped(_LT_FILES[scheme]), changes)
