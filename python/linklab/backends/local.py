"""The ``local`` backend: a process pool over this machine's cores."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from linklab.backends import BackendError, Outcome, Task, run_task

__all__ = ["LocalBackend"]

_PR_SET_PDEATHSIG = 1


def _worker_init(parent: int) -> None:
    """Set up a worker: ignore Ctrl-C, and die with the parent (pid ``parent``).

    Ctrl-C goes to the whole foreground process group: the parent handles it
    (stops the pool, keeps finished runs). If the parent is killed (``kill -9``)
    the workers must not live on computing runs nobody will store: on Linux the
    kernel kills them (``PR_SET_PDEATHSIG``); everywhere a watchdog thread exits
    once the parent is gone (the core releases the GIL while it runs).

    ``parent`` is the pid the parent recorded itself: a worker that starts
    after its parent died has been adopted by pid 1 or by a subreaper (in a
    container, often neither is 1), so only the recorded pid tells.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="linklab-parent-watch", daemon=True).start()


def _context() -> multiprocessing.context.BaseContext:
    # spawn: workers are fresh interpreters started by this process (so they are
    # its children, which the parent-death handling relies on), never forked
    # from a caller that may have threads running (polars' pool) or hold locks.
    return multiprocessing.get_context("spawn")


class LocalBackend:
    """Runs tasks in ``jobs`` worker processes (default: every core); with one
    worker (``jobs=1`` or a single task), in this process."""

    name = "local"

    def __init__(self, jobs: int | None = None) -> None:
        if jobs is None:
            jobs = os.cpu_count() or 1
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise BackendError(f"invalid jobs {jobs!r}; allowed: an integer >= 1")
        self.workers = jobs

    def execute(
        self, source: str, tasks: Sequence[Task], base_dir: str | None = None
    ) -> Iterator[tuple[Task, Outcome]]:
        if not tasks:
            return
        workers = min(self.workers, len(tasks))
        if workers == 1:
            # One worker: run in this process (no spawn, so a script needs no
            # `if __name__ == "__main__":` guard; the results are the same).
            for task in tasks:
                yield task, run_task(source, task.params, task.seed, base_dir)
            return
        pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=_context(),
            initializer=_worker_init,
            initargs=(os.getpid(),),
        )
        done_ok = False
        try:
            # Keep a bounded window of submitted runs so huge sweeps do not
            # hold a future per run, and an interrupt has little to cancel.
            window = workers * 4
            queue = iter(tasks)
            pending: dict[Future[Outcome], Task] = {}

            def fill() -> None:
                while len(pending) < window:
                    task = next(queue, None)
                    if task is None:
                        return
                    pending[pool.submit(run_task, source, task.params, task.seed, base_dir)] = task

            fill()
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    task = pending.pop(future)
                    try:
                        outcome = future.result()
                    except BrokenProcessPool:
                        raise RuntimeError(
                            "a sweep worker process died (killed, out of memory, or a "
                            "script that calls linklab.sweep without an "
                            "'if __name__ == \"__main__\":' guard)"
                        ) from None
                    yield task, outcome
                fill()
            done_ok = True
        finally:
            if done_ok:
                pool.shutdown(wait=True)
            else:
                _terminate(pool)

    def close(self) -> None:
        pass


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Stop the pool now: cancel queued runs and kill the workers' current ones."""
    processes = list(getattr(pool, "_processes", {}).values() or [])
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        with contextlib.suppress(Exception):
            p.terminate()
    for p in processes:
        with contextlib.suppress(Exception):
            p.join(timeout=5)
