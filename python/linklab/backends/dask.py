"""The ``dask`` backend: runs on an existing ``distributed`` scheduler.

Start a scheduler and workers however your site does it (``dask scheduler`` and
``dask worker`` by hand, dask-jobqueue on Slurm, dask-kubernetes, a cloud
service); every worker needs the same linklab version installed. Then
``linklab sweep ... --backend dask --scheduler tcp://HOST:8786``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import Any

from linklab.backends import BackendError, Outcome, Task, run_task

__all__ = ["DaskBackend", "connect_timeout"]

_DEFAULT_TIMEOUT_S = 10.0


def connect_timeout() -> float:
    """Seconds to wait for the scheduler (``LINKLAB_DASK_TIMEOUT``, default 10)."""
    text = os.environ.get("LINKLAB_DASK_TIMEOUT", "")
    try:
        value = float(text) if text else _DEFAULT_TIMEOUT_S
    except ValueError:
        value = _DEFAULT_TIMEOUT_S
    return value if value > 0 else _DEFAULT_TIMEOUT_S


class DaskBackend:
    """Submits every run to the scheduler at ``address`` and gathers results as they finish."""

    name = "dask"

    def __init__(self, address: str) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise BackendError(
                "--backend dask needs the 'distributed' package; install it with "
                "pip install 'linklab[dask]' or use --backend local"
            ) from None
        self.address = address
        timeout = connect_timeout()
        try:
            self.client: Any = Client(
                address, timeout=f"{timeout}s", set_as_default=False, direct_to_workers=False
            )
        except (OSError, TimeoutError, ValueError) as e:
            raise BackendError(
                f"cannot reach dask scheduler {address!r} within {timeout:g} s "
                f"({type(e).__name__}: {e}); give the address of a running scheduler, "
                "e.g. --scheduler tcp://127.0.0.1:8786"
            ) from None
        from linklab import _core

        self._version = _core.version()
        self.workers = max(1, sum(self.client.nthreads().values()))

    def execute(self, source: str, tasks: Sequence[Task]) -> Iterator[tuple[Task, Outcome]]:
        if not tasks:
            return
        from distributed import as_completed

        client = self.client
        futures: dict[Any, Task] = {}
        done_ok = False
        try:
            [remote_source] = client.scatter([source], broadcast=False, hash=False)
            for task in tasks:
                future = client.submit(run_task, remote_source, task.params, task.seed, pure=False)
                futures[future] = task
            for future in as_completed(list(futures), loop=client.loop):
                outcome: Outcome = future.result()
                if outcome.version != self._version:
                    raise BackendError(
                        f"a dask worker runs linklab {outcome.version}, this client "
                        f"{self._version}; install the same linklab version on every worker"
                    )
                task = futures.pop(future)
                yield task, outcome
            done_ok = True
        finally:
            if not done_ok and futures:
                with contextlib.suppress(Exception):
                    client.cancel(list(futures), force=True)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close(timeout=5)
