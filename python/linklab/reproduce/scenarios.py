"""Scenario texts of the reproductions (rlc-aqm: seed 000; arq-persistence: seed 001).

They are the repository's ``scenarios/umts-rlc-*.toml`` and
``scenarios/umts-rate-switch-sbd.toml`` (Fig. 5 and Table 1 of the paper), kept
here so that the reproduction does not depend on the working directory, plus the
two rate-switch variants the repository has no file for: drop-tail without
reconfiguration (Fig. 2) and RED reconfigured per rate with Table 5 (Fig. 15).
"""

from __future__ import annotations

import json

_COMMON_HEAD = """\
[tcp]
variant = "reno"
mss = 1460           # 1500-byte IP packets
rwnd = 65535         # 64 KB maximum window
initial_window = 1
delayed_ack = "${delack}"  # off in the main tables; the sensitivity study turns it on

[[links]]
a = "S{1..${flows}}"
b = "G"
rate = "100Mbit"
queue = { limit = "1000p" }

[[links]]
a = "G"
b = "RNC"
rate = "1Mbit"
delay = "100ms"      # round trip 200 ms
queue = { limit = "1000p" }
"""

_FLOWS = """
[[flows]]
from = "S{1..${flows}}"
to = "UE"
"""

_STATIC_PARAMS = """\
[params]
flows = 1
rate = "384kbit"
buffer = "40p"
duration = "100s"
fer = 0.1
fdt = 0.01
delack = false
"""

_QUEUE = {
    "droptail": ("", ""),
    "sbd": (
        'minth = 20\nmaxth = 40\ntr = "200ms"\nalpha = 5\n',
        'queue = { kind = "sbd", minth = "${minth}", maxth = "${maxth}", tr = "${tr}", '
        'alpha = "${alpha}" }\n',
    ),
    "red": (
        "minth = 20\nmaxth = 40\nmaxp = 0.05\n",
        'queue = { kind = "red", minth = "${minth}", maxth = "${maxth}", maxp = "${maxp}", '
        "instantaneous = true, gentle = false }\n",
    ),
}


def static_scenario(aqm: str) -> str:
    """A fixed-rate bearer with ``aqm`` (droptail, sbd, red) in the RLC buffer."""
    params, queue = _QUEUE[aqm]
    return (
        f'name = "umts-rlc-{aqm}"\n'
        f'description = "Seed 000: TCP Reno over a UMTS RLC AM bearer, {aqm} RLC buffer"\n'
        'duration = "${duration}"\n\n'
        + _STATIC_PARAMS
        + params
        + "\n"
        + _COMMON_HEAD
        + '\n[[links]]\na = "RNC"\nb = "UE"\nkind = "rlc_am"\npreset = "seed000"\n'
        'rate = "${rate}"\nbuffer = "${buffer}"\n'
        + queue
        + 'channel = { kind = "rayleigh", fd_t = "${fdt}", fer = "${fer}" }\n'
        + _FLOWS
    )


SBD_TABLE = (
    "aqm_table = [\n"
    '  { rate = "384kbit", queue = { kind = "sbd", minth = 20, maxth = 40, tr = "200ms", alpha = 5 } },\n'  # noqa: E501
    '  { rate = "256kbit", queue = { kind = "sbd", minth = 20, maxth = 40, tr = "500ms", alpha = 5 } },\n'  # noqa: E501
    '  { rate = "128kbit", queue = { kind = "sbd", minth = 15, maxth = 40, tr = "1300ms", alpha = 5 } },\n'  # noqa: E501
    '  { rate = "64kbit", queue = { kind = "sbd", minth = 10, maxth = 40, tr = "2500ms", alpha = 5 } },\n'  # noqa: E501
    "]\n"
)


def _red(rate: int, maxp: float, minth: int) -> str:
    return (
        f'  {{ rate = "{rate}kbit", queue = {{ kind = "red", minth = {minth}, maxth = 40, '
        f"maxp = {maxp}, instantaneous = true, gentle = false }} }},\n"
    )


RED_TABLE = (
    "aqm_table = [\n"
    + _red(384, 0.05, 20)
    + _red(256, 0.06, 15)
    + _red(128, 0.2, 10)
    + _red(64, 0.3, 10)
    + "]\n"
)


def switch_scenario(aqm: str) -> str:
    """Two flows, bearer 384 -> 128 kbit/s at ``switch_at``; ``aqm``: droptail
    (no reconfiguration, Fig. 2), sbd (Table 3 per rate, Fig. 14) or red
    (Table 5 per rate, Fig. 15)."""
    table = {"droptail": "", "sbd": SBD_TABLE, "red": RED_TABLE}[aqm]
    return (
        f'name = "umts-rate-switch-{aqm}"\n'
        f'description = "Seed 000: two flows, bearer 384 -> 128 kbit/s, {aqm} RLC buffer"\n'
        'duration = "${duration}"\n\n'
        '[params]\nflows = 2\nswitch_at = "50s"\nbuffer = "40p"\nduration = "100s"\n'
        "fer = 0.1\nfdt = 0.01\ndelack = false\n\n"
        + _COMMON_HEAD
        + '\n[[links]]\na = "RNC"\nb = "UE"\nkind = "rlc_am"\npreset = "seed000"\n'
        'rate_schedule = [{ at = "0s", rate = "384kbit" }, '
        '{ at = "${switch_at}", rate = "128kbit" }]\n' + table + 'buffer = "${buffer}"\n'
        'channel = { kind = "rayleigh", fd_t = "${fdt}", fer = "${fer}" }\n' + _FLOWS
    )


# Seed 001 (Vacirca et al.): the repository's scenarios/umts-tdd-arq.toml, verbatim
# (tests/test_reproduce_arq.py checks they are the same).
ARQ_SCENARIO = """\
# Seed 001 (Vacirca, De Vendictis, Todini, Baiocchi), sections II and IV: one greedy
# TCP Reno source in the wired Internet -> RNC -> UMTS-TDD radio bearer (RLC
# acknowledged mode, selective repeat) -> mobile receiver.
#
# - 1000-byte IP packets (mss 960), 40-byte RLC PDU payload: 1001 bytes per SDU with
#   its 1-byte length indicator, i.e. 25.025 PDUs per SDU on average (the paper's
#   n_pdu = 25; an SDU straddles PDU boundaries, so it touches 26 PDUs).
# - Gilbert-Elliott channel stepping once per 10 ms radio frame (= the TTI = the
#   model's unit time tau), independent PDU errors given the state: p_G = 0.01,
#   p_B = 0.9, g = 0.9, b = 0.1 or 0.9, on the downlink (data). The uplink (TCP ACKs,
#   STATUS PDUs) is error-free by default: the model's assumption iii.
# - Bearer rate 800 kbit/s of RLC payload = 25 PDUs per 10 ms frame, one SDU per
#   frame (the model's assumption ii). The paper does not state the rate.
# - Wired part: no capacity limit (100 Mbit/s), round trip `wired_rtt` (0.3 s or
#   1 s), random loss `pw` on the data direction, independent of TCP.
# - RLC: seed 000's Table 1 (PDU delay 25 ms, i.e. a 50 ms radio round trip: the
#   paper does not give it) except Timer_Status_Prohibit off (the paper's
#   receiver sends a STATUS when an SDU's last PDU arrives, i.e. without a
#   prohibit timer); MaxDAT `max_dat` (a number of transmissions, or "none").
# - RLC buffer `buffer` SDUs; 100000 is "infinite" (TCP's 64 KB window never fills it).
name = "umts-tdd-arq"
description = "Seed 001: TCP Reno over a UMTS-TDD RLC AM bearer with a Gilbert-Elliott channel"
duration = "${duration}"

[params]
duration = "100s"
max_dat = "none"       # transmissions per PDU, or "none" (unlimited)
buffer = "100000p"     # RLC SDU buffer; 100000p = infinite
pw = 0.0               # wired packet loss probability P_W (data direction)
wired_delay = "150ms"  # one way: wired round trip 0.3 s (500ms: 1 s)
rate = "800kbit"       # 25 PDUs of 40 bytes per 10 ms frame
radio_delay = "25ms"   # RLC PDU delay, TTI start -> arrival (seed 000's 50 ms radio round trip)
p_good = 0.01
p_bad = 0.9
g = 0.9
b = 0.9
up_p_good = 0.0        # uplink channel (STATUS PDUs, TCP ACKs): error-free by default
up_p_bad = 0.0

[tcp]
variant = "reno"
mss = 960              # 1000-byte IP packets
rwnd = 65535
initial_window = 1

[[links]]
a = "S"
b = "RNC"
rate = "100Mbit"
delay = "${wired_delay}"
queue = { limit = "10000p" }
ab = { loss = "${pw}" }

[[links]]
a = "RNC"
b = "UE"
kind = "rlc_am"
preset = "seed000"
rate = "${rate}"
pdu_payload = "320bit"
tti = "10ms"
delay = "${radio_delay}"
status_prohibit = "off"
max_dat = "${max_dat}"
buffer = "${buffer}"

[links.ab.channel]     # downlink (data): one channel step per 10 ms frame (slot = TTI)
kind = "gilbert_elliott"
p_good = "${p_good}"
p_bad = "${p_bad}"
g = "${g}"
b = "${b}"

[links.ba.channel]     # uplink (TCP ACKs, STATUS PDUs)
kind = "gilbert_elliott"
p_good = "${up_p_good}"
p_bad = "${up_p_bad}"
g = "${g}"
b = "${b}"

[[flows]]
from = "S"
to = "UE"
"""

_FIXED_MAX_DAT = 'max_dat = "${max_dat}"\n'
_ADAPTIVE_MAX_DAT = (
    'max_dat = "adaptive"\nadaptive = { alpha = "${alpha}", estimator = "receiver" }\n'
)
_ALPHA_PARAM = "alpha = 0.1           # adaptive MaxDAT: accepted link loss / wired loss\n"


def arq_scenario(adaptive: bool = False) -> str:
    """Seed 001's set-up; ``adaptive``: MaxDAT set by the cross-layer controller
    (alpha = parameter ``alpha``, P_TCP measured at the mobile TCP receiver)."""
    if not adaptive:
        return ARQ_SCENARIO
    assert _FIXED_MAX_DAT in ARQ_SCENARIO
    text = ARQ_SCENARIO.replace(_FIXED_MAX_DAT, _ADAPTIVE_MAX_DAT)
    return text.replace("[params]\n", "[params]\n" + _ALPHA_PARAM, 1)


# ---------------------------------------------------------------------------
# Seed 002 (LT-TCP): the dumbbell of scenarios/dumbbell-*.toml, one text per scheme
# ---------------------------------------------------------------------------

_LT_PARAMS = """\
[params]
flows = 10
per = 0.0
duration = "100s"
iw = 10
delack = true
ts = true
min_rto = "1s"
mss = 448
rwnd = "1MiB"
prr = false
framing = "0B"
"""

_LT_SWITCHES = """\
mss_min = 100
g = 10
ecn_only = true
adaptive_mss = true
proactive = true
reactive = true
estimator = "sender"
"""

_LT_BLOCK = """
[tcp.lt]
ecn_only = "${ecn_only}"
adaptive_mss = "${adaptive_mss}"
proactive_fec = "${proactive}"
reactive_fec = "${reactive}"
estimator = "${estimator}"
g_min_segments = "${g}"
mss_min = "${mss_min}"
proactive_bins = [[0.001, 0], [0.05, 1], [0.10, 3], [0.15, 4], [0.20, 5], [0.30, 7], [0.40, 9],
                  [1.0, 11]]
reactive_bins = [[0.001, 0], [0.30, 1], [1.0, 2]]
"""

_LT_FEC = {
    "ll-fec": (
        'n = 10\nloss_unit = "fragment"\n',
        'fec = { scheme = "ll-fec", n = "${n}", matched_per = "link", loss_unit = "${loss_unit}" }',
    ),
    "ll-hybrid": (
        'n = 10\nk = 9\npersistence = 3\nloss_unit = "fragment"\n',
        'fec = { scheme = "hybrid", n = "${n}", k = "${k}", persistence = "${persistence}", '
        'loss_unit = "${loss_unit}" }',
    ),
}


def lt_dumbbell(scheme: str, channel: dict[str, object] | None = None) -> str:
    """Seed 002's dumbbell (10 flows, 10 Mbit/s / 20 ms RED/ECN bottleneck,
    500-byte packets) for ``scheme``: ``sack``, ``lt-tcp`` (every building
    block a parameter), ``ll-fec`` or ``ll-hybrid``. Erasures at ``per`` on the
    bottleneck's data direction, or ``channel`` (a Gilbert-Elliott table) instead."""
    params, tcp_lt, ab_extra = _LT_PARAMS, "", ""
    if scheme == "lt-tcp":
        params += _LT_SWITCHES
        tcp_lt = _LT_BLOCK
    elif scheme in _LT_FEC:
        extra, ab_extra = _LT_FEC[scheme]
        params += extra
    elif scheme != "sack":
        raise ValueError(f"unknown scheme {scheme!r}")
    if channel is None:
        loss = 'loss = "${per}"'
    else:
        items = ", ".join(
            f"{k} = {json.dumps(v)}" for k, v in {"kind": "gilbert_elliott", **channel}.items()
        )
        loss = f"channel = {{ {items} }}"
    ab = "ab = { " + ", ".join(x for x in (loss, ab_extra) if x) + " }\n"
    return (
        f'name = "lt-dumbbell-{scheme}"\n'
        f'description = "Seed 002 dumbbell: {scheme}"\n'
        'duration = "${duration}"\n\n'
        + params
        + """
[tcp]
variant = "sack"
ecn = true
timestamps = "${ts}"
mss = "${mss}"
initial_window = "${iw}"
delayed_ack = "${delack}"
min_rto = "${min_rto}"
rwnd = "${rwnd}"
prr = "${prr}"
"""
        + tcp_lt
        + """
[[links]]
a = "S{1..${flows}}"
b = "L"
rate = "100Mbit"
delay = "1ms"
overhead = "${framing}"
queue = { limit = "1000p" }

[[links]]
a = "L"
b = "R"
rate = "10Mbit"
delay = "20ms"
overhead = "${framing}"
queue = { kind = "red", limit = "500p", minth = 75, maxth = 225, ecn = true, mean_pkt_size = 500 }
"""
        + ab
        + """
[[links]]
a = "R"
b = "D{1..${flows}}"
rate = "100Mbit"
delay = "1ms"
overhead = "${framing}"
queue = { limit = "1000p" }

[[flows]]
from = "S{1..${flows}}"
to = "D{1..${flows}}"
start_jitter = "1s"
"""
    )
