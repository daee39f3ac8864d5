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

__all__ = ["arq_scenario", "lt_dumbbell", "ns2_tcp", "static_scenario", "switch_scenario"]


def ns2_tcp(doc: dict[str, Any], unset: tuple[str, ...] = (), **params: Any) -> dict[str, Any]:
    """``doc`` with ns-2's TCP defaults (``[tcp] profile = "ns2"``, docs/models/tcp.md):
    the ``[tcp]`` keys in ``unset`` — our choices where the paper is silent — removed
    so that the profile's values apply, and the ``[params]`` in ``params`` set. The
    keys the paper states stay as they are."""
    keys: dict[str, Any] = {"tcp.profile": "ns2"}
    keys |= {f"tcp.{k}": None for k in unset}
    keys |= {f"params.{k}": v for k, v in params.items()}
    return overlay(doc, keys)


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


def arq_scenario(adaptive: bool = False, model: bool = False) -> dict[str, Any]:
    """Seed 001's set-up (``scenarios/umts-tdd-arq.toml``); ``adaptive``: MaxDAT set
    by the cross-layer controller (alpha = parameter ``alpha``, P_TCP measured at
    the mobile TCP receiver).

    ``model``: the assumptions of the Markov model (§III-A i-v) instead of a
    realistic bearer: ideal feedback (the sender knows each PDU's fate at the next
    frame and sends the lost ones again in it; a discard reaches the receiver at
    once: ``feedback = "ideal"``, PDU delay 5 ms < TTI); every SDU exactly n_pdu = 25
    PDUs (999-byte IP packets + the 1-byte length indicator = 25 x 40 bytes: mss
    959, no handshake, so no SYN, and rwnd a whole number of segments, so no short
    segment); a bearer wide enough (64 Mbit/s = 2000 PDUs per frame, window 2047)
    that every PDU waiting goes in the next frame, so an SDU's PDUs share one frame
    and every retransmission is in the frame after. Eight flows of 8 segments
    (1600 PDUs at most in flight) instead of one: TCP starves at the high residual
    loss of small M_t, and eight give eight times the SDUs to count."""
    doc = shipped("umts-tdd-arq")
    keys: dict[str, Any] = {}
    if adaptive:
        keys |= {
            "params.alpha": 0.1,  # accepted link loss / wired loss
            "links[1].max_dat": "adaptive",
            "links[1].adaptive": {"alpha": "${alpha}", "estimator": "receiver"},
        }
    if model:
        keys |= {
            "name": "umts-tdd-arq-model",
            "description": "Seed 001 under its Markov model's assumptions (ideal feedback)",
            "tcp.mss": 959,
            "tcp.rwnd": 4 * 959,
            "tcp.handshake": False,
            "flows[0].count": 8,
            "params.rate": "64Mbit",
            "params.radio_delay": "5ms",
            "links[1].feedback": "ideal",
            "links[1].tx_window": 2047,
        }
    return overlay(doc, keys) if keys else doc


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
    off and SACK information discarded at a timeout (as in ns-2) and TCP
    timestamps a parameter ``ts``. Erasures at ``per``
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
    doc = shipped(_LT_FILES[scheme])
    if "rto_keeps_sack" in doc.get("params", {}):
        changes["params.rto_keeps_sack"] = False
    if channel is not None:
        changes["links[1].ab.loss"] = None
        changes["links[1].ab.channel"] = {"kind": "gilbert_elliott", **channel}
    return overlay(doc, changes)
