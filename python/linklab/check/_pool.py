"""Worker processes that check draws, each under a timeout.

A draw runs in a worker process (``spawn``: a fresh interpreter, no threads
inherited), so that a run that hangs, or a core that aborts, costs only that
worker: the parent kills a worker whose draw outlives the timeout (by its pid:
only processes this pool started) and starts a new one. A hang is reported as the
``hang`` property, a dead worker as ``exception``, an exception raised by the
checker itself as ``checker`` (a bug of this tool, not of the models).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from linklab.check._generate import Draw
from linklab.check._properties import Outcome, check_draw


def _serve(conn: multiprocessing.connection.Connection) -> None:
    """A worker: check each draw it is sent, until it is sent None.

    The core's panic messages (a panic becomes an ``InternalError`` whose message
    the outcome carries) would flood the terminal: the worker's stderr goes to
    /dev/null.
    """
    os.environ["RUST_BACKTRACE"] = "0"
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        key, draw = task
        try:
            outcome = check_draw(draw)
        except Exception:  # noqa: BLE001 - the checker's own bug, reported as such
            outcome = Outcome("failed", [("checker", traceback.format_exc(limit=6))])
        conn.send((key, outcome))


@dataclass
class _Worker:
    process: multiprocessing.process.BaseProcess
    conn: multiprocessing.connection.Connection
    key: Any = None
    started: float = 0.0


class Pool:
    """``jobs`` worker processes; :meth:`map` checks draws, ``timeout`` seconds each."""

    def __init__(self, jobs: int, timeout: float) -> None:
        self.jobs = max(1, jobs)
        self.timeout = timeout
        self._ctx = multiprocessing.get_context("spawn")
        self._workers: list[_Worker] = []

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> _Worker:
        parent, child = self._ctx.Pipe()
        process = self._ctx.Process(target=_serve, args=(child,), daemon=True)
        process.start()
        child.close()
        return _Worker(process, parent)

    def _stop(self, worker: _Worker, kill: bool) -> None:
        if kill:
            worker.process.kill()
        else:
            try:
                worker.conn.send(None)
            except OSError:
                worker.process.kill()
        worker.process.join(timeout=10)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()
        worker.conn.close()

    def close(self) -> None:
        for w in self._workers:
            self._stop(w, kill=False)
        self._workers.clear()

    def map(
        self, tasks: Iterable[tuple[Any, Draw]], on_result: Callable[[Any, Outcome], None]
    ) -> None:
        """Check every ``(key, draw)``; ``on_result(key, outcome)`` as each ends."""
        todo: Iterator[tuple[Any, Draw]] = iter(tasks)
        while len(self._workers) < self.jobs:
            self._workers.append(self._start())
        idle = list(self._workers)
        busy: dict[int, _Worker] = {}
        exhausted = False
        while True:
            while idle and not exhausted:
                nxt = next(todo, None)
                if nxt is None:
                    exhausted = True
                    break
                w = idle.pop()
                w.key, w.started = nxt[0], time.monotonic()
                w.conn.send(nxt)
                busy[id(w)] = w
            if not busy:
                return
            now = time.monotonic()
            wait = min(w.started + self.timeout for w in busy.values()) - now
            ready = multiprocessing.connection.wait(
                [w.conn for w in busy.values()], timeout=max(0.0, wait)
            )
            for w in list(busy.values()):
                if w.conn in ready:
                    try:
                        key, outcome = w.conn.recv()
                    except (EOFError, OSError):
                        code = w.process.exitcode if not w.process.is_alive() else None
                        self._replace(w, busy, idle, kill=True)
                        on_result(
                            w.key,
                            Outcome(
                                "failed",
                                [
                                    (
                                        "exception",
                                        f"the worker process died (exit code "
                                        f"{code}) while running the draw",
                                    )
                                ],
                            ),
                        )
                        continue
                    del busy[id(w)]
                    idle.append(w)
                    on_result(key, outcome)
                elif time.monotonic() - w.started > self.timeout:
                    key = w.key
                    self._replace(w, busy, idle, kill=True)
                    on_result(
                        key,
                        Outcome(
                            "failed",
                            [("hang", f"no result within the {self.timeout:g} s timeout")],
                            wall_s=self.timeout,
                        ),
                    )

    def _replace(
        self, w: _Worker, busy: dict[int, _Worker], idle: list[_Worker], kill: bool
    ) -> None:
        busy.pop(id(w), None)
        self._stop(w, kill=kill)
        self._workers.remove(w)
        fresh = self._start()
        self._workers.append(fresh)
        idle.append(fresh)

    def check(self, draw: Draw) -> Outcome:
        """Check one draw (in a worker, under the timeout)."""
        box: list[Outcome] = []
        self.map([(0, draw)], lambda _k, o: box.append(o))
        return box[0]
