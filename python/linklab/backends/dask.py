"""The ``dask`` backend: runs on an existing ``distributed`` scheduler.

Start a scheduler and workers however your site does it (``dask scheduler`` and
``dask worker`` by hand, dask-jobqueue on Slurm, dask-kubernetes, a cloud
service); every worker needs the same linklab version installed. Then
``linklab sweep ... --backend dask --scheduler tcp://HOST:8786``.

Connecting is bounded by :func:`connect_timeout` (``LINKLAB_DASK_TIMEOUT``
seconds, default 10): the address is checked first (``[tcp://]HOST:PORT``), a
TCP address is probed with a plain connection (a name that does not resolve or
a port nobody listens on fails at once), and the client must finish its
handshake within the timeout (a server that accepts but never answers).
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
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
        host_port = _parse_address(address)
        if host_port is not None:
            _probe(address, host_port, timeout)
        self.client: Any = _connect(Client, address, timeout)
        from linklab import _core

        self._version = _core.version()
        self.workers = max(1, sum(self.client.nthreads().values()))

    def execute(
        self, source: str, tasks: Sequence[Task], base_dir: str | None = None
    ) -> Iterator[tuple[Task, Outcome]]:
        if not tasks:
            return
        from distributed import as_completed

        client = self.client
        futures: dict[Any, Task] = {}
        done_ok = False
        try:
            [remote_source] = client.scatter([source], broadcast=False, hash=False)
            for task in tasks:
                future = client.submit(
                    run_task, remote_source, task.params, task.seed, base_dir, pure=False
                )
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


_HINT = "give the address of a running scheduler, e.g. --scheduler tcp://127.0.0.1:8786"


def _parse_address(address: str) -> tuple[str, int] | None:
    """(host, port) of a TCP/TLS scheduler address (None for other schemes), or BackendError."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address, strict=False)
        if scheme not in ("tcp", "tls"):
            return None
        host, port = parse_host_port(location)
    except (ValueError, TypeError) as e:
        raise BackendError(f"invalid dask scheduler address {address!r} ({e}); {_HINT}") from None
    if not host or not 0 < int(port) < 65536:
        raise BackendError(
            f"invalid dask scheduler address {address!r} (host and a port from 1 to 65535 "
            f"needed); {_HINT}"
        )
    return host, int(port)


def _probe(address: str, host_port: tuple[str, int], timeout: float) -> None:
    """Open (and close) a TCP connection to the scheduler, or raise BackendError."""
    try:
        with socket.create_connection(host_port, timeout=timeout):
            pass
    except OSError as e:
        reason = e.strerror or str(e) or type(e).__name__
        raise BackendError(
            f"cannot reach dask scheduler {address!r} within {timeout:g} s ({reason}); {_HINT}"
        ) from None


def _connect(client_type: Any, address: str, timeout: float) -> Any:
    """A connected ``distributed.Client``, within ``timeout`` seconds or BackendError.

    The client connects in a daemon thread so that a server that accepts but
    never answers (the client's own timeout does not cover that) cannot hang
    the sweep; a client that failed is closed without a traceback.
    """

    class _Client(client_type):  # type: ignore[misc, valid-type]
        def __del__(self) -> None:  # a failed client must not print on collection
            with contextlib.suppress(Exception):
                if getattr(self, "status", "") not in ("closed", "closing"):
                    self.close(timeout=1)

    box: dict[str, Any] = {}

    def connect() -> None:
        try:
            box["client"] = _Client(
                address, timeout=f"{timeout}s", set_as_default=False, direct_to_workers=False
            )
        except BaseException as e:  # handed to the caller
            box["error"] = e

    thread = threading.Thread(target=connect, name="linklab-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    if "client" in box:
        return box["client"]
    e = box.get("error")
    reason = f"{type(e).__name__}: {e}" if e is not None else "no answer"
    raise BackendError(
        f"cannot reach dask scheduler {address!r} within {timeout:g} s ({reason}); {_HINT}"
    )
