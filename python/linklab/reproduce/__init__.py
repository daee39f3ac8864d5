"""Reproductions of published experiments (``linklab reproduce NAME``).

Each reproduction runs its experiments with :func:`linklab.sweep`, compares our
numbers with the published ones, and writes figures, ``report.html`` and
``results.json`` into an output directory.
"""

from __future__ import annotations

from linklab.reproduce.arq_persistence import EXPERIMENTS as ARQ_PERSISTENCE_EXPERIMENTS
from linklab.reproduce.arq_persistence import reproduce_arq_persistence
from linklab.reproduce.common import ReproduceError
from linklab.reproduce.lt_tcp import EXPERIMENTS as LT_TCP_EXPERIMENTS
from linklab.reproduce.lt_tcp import reproduce_lt_tcp
from linklab.reproduce.rlc_aqm import EXPERIMENTS as RLC_AQM_EXPERIMENTS
from linklab.reproduce.rlc_aqm import reproduce_rlc_aqm

REPRODUCTIONS = {
    "rlc-aqm": reproduce_rlc_aqm,
    "arq-persistence": reproduce_arq_persistence,
    "lt-tcp": reproduce_lt_tcp,
}
EXPERIMENTS = {
    "rlc-aqm": RLC_AQM_EXPERIMENTS,
    "arq-persistence": ARQ_PERSISTENCE_EXPERIMENTS,
    "lt-tcp": LT_TCP_EXPERIMENTS,
}

__all__ = [
    "ARQ_PERSISTENCE_EXPERIMENTS",
    "EXPERIMENTS",
    "LT_TCP_EXPERIMENTS",
    "REPRODUCTIONS",
    "RLC_AQM_EXPERIMENTS",
    "ReproduceError",
    "reproduce_arq_persistence",
    "reproduce_lt_tcp",
    "reproduce_rlc_aqm",
]
