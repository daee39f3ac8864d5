"""Reproductions of published experiments (``linklab reproduce NAME``).

Each reproduction is a :class:`~linklab.reproduce.framework.Reproduction`: it
runs its experiments with :func:`linklab.sweep`, compares our numbers with the
published ones, and writes figures, ``report.html`` and ``results.json`` into an
output directory. Importing this package registers all of them in
:data:`REPRODUCTIONS` (name -> class; ``cls.experiments`` lists its experiments).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from linklab.reproduce import (  # noqa: F401  (registers them)
    arq_persistence,
    lt_tcp,
    rate_swing,
    rlc_aqm,
    wipemu,
)
from linklab.reproduce.framework import ReproduceError, Reproduction

#: Every reproduction by name, in the order of their seed papers.
REPRODUCTIONS: dict[str, type[Reproduction]] = dict(
    sorted(Reproduction.registry.items(), key=lambda item: item[1].seed)
)

__all__ = ["REPRODUCTIONS", "ReproduceError", "Reproduction", "reproduce"]


def reproduce(
    name: str,
    out: str | Path | None = None,
    *,
    quick: bool = False,
    jobs: int | None = None,
    experiments: Sequence[str] | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], str]:
    """Run reproduction ``name`` into ``out`` (default ``out/NAME``).

    Returns (the JSON object written to ``results.json``, the terminal text).
    Raises :class:`ReproduceError` for bad input.
    """
    if name not in REPRODUCTIONS:
        raise ReproduceError(f"unknown reproduction {name!r}; allowed: {', '.join(REPRODUCTIONS)}")
    cls = REPRODUCTIONS[name]
    target = out if out is not None else Path("out") / name
    return cls(target, quick=quick, jobs=jobs, experiments=experiments, log=log).run()
