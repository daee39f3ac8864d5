"""Execution backends of sweeps: where the runs of a sweep are computed.

A backend takes the scenario text and a list of :class:`Task` and yields
``(task, outcome)`` pairs as runs finish, in any order. Every run goes through
:func:`run_task`, so the outcome of a run is the same whichever backend and
however many workers computed it (the core is deterministic).

- ``local``: a process pool on this machine (:mod:`linklab.backends.local`).
- ``dask``: a ``distributed`` client to an existing scheduler
  (:mod:`linklab.backends.dask`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendError",
    "Outcome",
    "Task",
    "make_backend",
    "run_task",
]

BACKENDS = ("local", "dask")


class BackendError(ValueError):
    """A backend cannot be used (bad settings, unreachable scheduler, version mismatch)."""


@dataclass(frozen=True)
class Task:
    """One run of a sweep: its key, parameter overrides and seed."""

    key: str
    params: dict[str, Any]
    seed: int


@dataclass(frozen=True)
class Outcome:
    """What a worker returns for one run.

    ``status`` is ``"ok"`` (``summary`` set) or ``"failed"`` (``error`` set);
    ``version`` is the linklab version of the worker that ran it.
    """

    status: str
    summary: dict[str, Any] | None
    error: str | None
    version: str


def run_task(
    source: str, params: dict[str, Any], seed: int, base_dir: str | None = None
) -> Outcome:
    """Run one scenario (TOML text) with ``params`` and ``seed``; never raises for a bad run.

    Relative file names in the scenario (trace files) start from ``base_dir``.

    A run that cannot be done (a bad parameter value, an invalid scenario, a
    bug in the core) is returned with status ``failed`` and a one-line error.
    """
    from linklab import _core
    from linklab._format import json_safe
    from linklab.api import run_source
    from linklab.errors import InternalError, error_text

    version = _core.version()
    try:
        result = run_source(source, seed=seed, params=params, base_dir=base_dir)
    except InternalError as e:
        return Outcome("failed", None, f"internal error: {error_text(e)}", version)
    except Exception as e:  # ScenarioError and anything a bad value can raise
        text = error_text(e) or type(e).__name__
        if not isinstance(e, ValueError):
            text = f"{type(e).__name__}: {text}"
        return Outcome("failed", None, text, version)
    return Outcome("ok", json_safe(result.summary), None, version)


class Backend(Protocol):
    """Computes runs; ``execute`` yields outcomes as they finish."""

    name: str
    workers: int

    def execute(
        self, source: str, tasks: Sequence[Task], base_dir: str | None = None
    ) -> Iterator[tuple[Task, Outcome]]:
        """Run every task; stop and clean up (no run left going) when the iterator is closed.

        Relative file names in the scenario start from ``base_dir`` (which a
        remote worker must see at the same path).
        """
        ...

    def close(self) -> None:
        """Release the backend's resources."""
        ...


def make_backend(name: str, *, jobs: int | None = None, scheduler: str | None = None) -> Backend:
    """The backend ``name`` (``local`` or ``dask``) with its settings checked.

    Raises :class:`BackendError` for an unknown name, ``dask`` without a
    scheduler address, or a scheduler that cannot be reached.
    """
    if name == "local":
        if scheduler is not None:
            raise BackendError(
                "--scheduler is only used with --backend dask; drop it or add --backend dask"
            )
        from linklab.backends.local import LocalBackend

        return LocalBackend(jobs)
    if name == "dask":
        if not scheduler:
            raise BackendError(
                "--backend dask needs --scheduler ADDRESS; give the address of a running "
                "dask scheduler, e.g. --scheduler tcp://127.0.0.1:8786"
            )
        from linklab.backends.dask import DaskBackend

        return DaskBackend(scheduler)
    raise BackendError(f"unknown backend {name!r}; allowed: {', '.join(BACKENDS)}")
