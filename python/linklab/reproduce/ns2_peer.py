"""ns-2.35 itself as a peer of a reproduction: runs of a Tcl script of ours under the
real simulator (Debian's ``ns2`` package, ``ns`` on PATH), side by side with
linklab's runs of the same set-up.

The seed papers ran ns-2; linklab's ``[tcp] profile = "ns2"`` models ns-2.35's TCP.
Running ns-2 itself on the set-up a paper states separates two questions: does our
model behave as ns-2 does (ours against ns-2), and does ns-2 on the stated set-up
give the published number (ns-2 against the paper)?

The scripts live in ``reproduce/ns2/``; each takes ``key=value`` arguments and prints
one line of ``key=value`` integers when the run ends.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from linklab.reproduce.framework import ReproduceError

__all__ = [
    "NS2_INSTALL",
    "SCRIPTS",
    "WithNs2",
    "ns2_binary",
    "parse_output",
    "run_ns2",
    "runs_ns2",
]

#: The Tcl scripts shipped for ns-2 runs.
SCRIPTS = Path(__file__).with_name("ns2")

#: How to get ns-2.35 (said in every message about it).
NS2_INSTALL = "Debian/Ubuntu: apt-get install ns2, which is ns-2.35"


def ns2_binary() -> str | None:
    """The path of ns-2's ``ns``, or None when it is not installed."""
    return shutil.which("ns")


class WithNs2:
    """Mixed in before :class:`Reproduction` by a reproduction with an experiment ``ns2``
    that runs ns-2.35 itself: without ``ns`` on PATH, asking for ``ns2`` by name is
    refused (exit 2, how to install it) and a default run leaves it out with a line."""

    no_ns2: bool
    chosen: tuple[str, ...]  # set by Reproduction.__init__
    log: Callable[[str], None]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        asked = kwargs.get("experiments")
        #: ns-2.35 is not installed: the ns2 experiment is left out of a default run.
        self.no_ns2 = ns2_binary() is None
        if self.no_ns2 and asked and "ns2" in asked:
            raise ReproduceError(
                "experiment ns2 runs ns-2.35 itself, whose `ns` is not on PATH; install it "
                f"({NS2_INSTALL}) or choose other experiments"
            )
        super().__init__(*args, **kwargs)
        if self.no_ns2 and "ns2" in self.chosen:
            self.chosen = tuple(x for x in self.chosen if x != "ns2")
            self.log(f"reproduce: experiment ns2 left out: no ns-2.35 ({NS2_INSTALL})")


def parse_output(text: str) -> dict[str, int]:
    """The ``key=value`` integers of the last non-empty line of a script's output;
    :class:`ReproduceError` if there is none or a value is not an integer."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ReproduceError("ns-2 printed no result line")
    out: dict[str, int] = {}
    for field in lines[-1].split():
        key, sep, value = field.partition("=")
        try:
            if not sep:
                raise ValueError
            out[key] = int(value)
        except ValueError:
            raise ReproduceError(
                f"ns-2 printed {lines[-1]!r}; expected key=integer pairs"
            ) from None
    return out


def run_ns2(script: str, args: Mapping[str, Any]) -> dict[str, int]:
    """One run of ``reproduce/ns2/<script>`` with ``key=value`` arguments."""
    ns = ns2_binary()
    if ns is None:
        raise ReproduceError(f"ns-2's `ns` is not on PATH; install it ({NS2_INSTALL})")
    cmd = [ns, str(SCRIPTS / script), *(f"{k}={v}" for k, v in args.items())]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        said = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise ReproduceError(f"ns-2 exited with status {proc.returncode} on {script} {dict(args)}: "
                             f"{said}")  # fmt: skip
    return parse_output(proc.stdout)


def runs_ns2(
    script: str, points: Sequence[Mapping[str, Any]], seeds: Sequence[int], jobs: int | None
) -> list[list[dict[str, int]]]:
    """Every point of ``points`` once per seed of ``seeds`` (``seed=`` added to its
    arguments), ``jobs`` at a time (default: the CPUs): per point, the results in the
    order of ``seeds``. ns-2 is deterministic for a seed, so the results are too."""
    tasks = [{**p, "seed": s} for p in points for s in seeds]
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        done = list(pool.map(lambda a: run_ns2(script, a), tasks))
    n = len(seeds)
    return [done[i * n : (i + 1) * n] for i in range(len(points))]
