"""Scenario texts of the rlc-aqm reproduction (seed 000, Alcaraz & Cerdan).

They are the repository's ``scenarios/umts-rlc-*.toml`` and
``scenarios/umts-rate-switch-sbd.toml`` (Fig. 5 and Table 1 of the paper), kept
here so that the reproduction does not depend on the working directory, plus the
two rate-switch variants the repository has no file for: drop-tail without
reconfiguration (Fig. 2) and RED reconfigured per rate with Table 5 (Fig. 15).
"""

from __future__ import annotations

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
