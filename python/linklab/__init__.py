"""linklab: a lab for TCP over wireless links.

A deterministic Rust simulation core (``linklab._core``) under a thin Python
front: :func:`run` runs one scenario and returns a :class:`Result` with the
summary, polars trace tables and pcap captures.
"""

from __future__ import annotations

from linklab._core import json_schema, version
from linklab.api import Result, run
from linklab.errors import AccountingError, InternalError, ScenarioError, ScenarioFileError
from linklab.sweep import SweepResult, sweep

__version__: str = version()

__all__ = [
    "AccountingError",
    "InternalError",
    "Result",
    "ScenarioError",
    "ScenarioFileError",
    "SweepResult",
    "__version__",
    "json_schema",
    "run",
    "sweep",
]
