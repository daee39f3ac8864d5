"""The ``local`` backend: a process pool over this machine's cores."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator, Sequence
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


#: Seconds of work (done here, or estimated from the runs so far) after which
#: the worker processes start: about what starting them costs.
BOOT_AFTER = 0.3


def _ready() -> bool:
    """Done once a pool worker has started and imported what a run needs (so
    its first run is as fast as the next)."""
    import linklab.api  # noqa: F401  (run_task's imports)
    import linklab.errors  # noqa: F401

    return True


def _in_thread(fn: Callable[..., Outcome], *args: object) -> Future[Outcome]:
    """``fn(*args)`` in a daemon thread of this process, as a future. Daemon: an
    interrupted sweep does not wait for the run at exit (the core releases the
    GIL while it runs, so the thread runs beside the pool's bookkeeping)."""
    future: Future[Outcome] = Future()

    def go() -> None:
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(fn(*args))
            except BaseException as e:  # handed to the waiting thread
                future.set_exception(e)

    threading.Thread(target=go, name="linklab-sweep-run", daemon=True).start()
    return future


@contextlib.contextmanager
def _main_not_rerun() -> Iterator[None]:
    """Start worker processes without re-running the caller's script in them.

    A spawned worker normally runs the main script again (as ``__mp_main__``)
    so that functions defined there can be unpickled; a script that calls
    ``linklab.sweep`` at its top level, without an ``if __name__ ==
    "__main__":`` guard, then starts the sweep again in every worker (issue 35:
    tracebacks, or "in use by another sweep"). The workers only run linklab's
    own functions, so they need nothing from the script: while they start,
    ``__main__`` is a module with no file, and multiprocessing tells them to
    import nothing for it. Only for a script run by path (``python3 file.py``);
    ``python -m ...`` and notebooks are left as they are.
    """
    main = sys.modules.get("__main__")
    hide = (
        main is not None
        and getattr(main, "__spec__", None) is None
        and getattr(main, "__file__", None) is not None
    )
    if not hide:
        yield
        return
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main  # type: ignore[assignment]


def _context() -> multiprocessing.context.BaseContext:
    # spawn: workers are fresh interpreters started by this process (so they are
    # its children, which the parent-death handling relies on), never forked
    # from a caller that may have threads running (polars' pool) or hold locks.
    return multiprocessing.get_context("spawn")


class LocalBackend:
    """Runs tasks in ``jobs`` workers (default: every core): this process (one
    task at a time, in a thread) and ``jobs - 1`` worker processes, started once
    the work left is worth it (:data:`BOOT_AFTER`); with one worker (``jobs=1``
    or a single task), only this process."""

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
        # This process runs one task at a time itself, from the start. The pool's
        # workers-1 processes start only once the work left looks worth their
        # start-up (BOOT_AFTER seconds of runs here, or as much work estimated
        # from the runs so far), and take runs once one of them is up
        # (`ready`): a small sweep is done before a worker would be.
        pool: ProcessPoolExecutor | None = None
        ready: Future[bool] | None = None
        started = time.monotonic()
        left = len(tasks)
        spent = 0.0  # seconds of the runs done here
        done_here = 0
        done_ok = False
        try:
            # One run per worker process in flight: the next goes to whoever
            # finishes first (this process or a worker), so no worker holds a
            # queue of runs at the end while the others idle, and an interrupt
            # has little to cancel.
            window = workers - 1
            queue = iter(tasks)
            pending: dict[Future[Outcome], Task] = {}
            here: tuple[Future[Outcome], float] | None = None
            in_pool = 0

            while True:
                now = time.monotonic()
                if here is None and (task := next(queue, None)) is not None:
                    future = _in_thread(run_task, source, task.params, task.seed, base_dir)
                    here = (future, now)
                    pending[future] = task
                if pool is None and left > 1:
                    mean = spent / done_here if done_here else 0.0
                    if now - started >= BOOT_AFTER or mean * (left - 1) >= BOOT_AFTER:
                        pool = ProcessPoolExecutor(
                            max_workers=workers - 1,
                            mp_context=_context(),
                            initializer=_worker_init,
                            initargs=(os.getpid(),),
                        )
                        with _main_not_rerun():  # the pool starts a worker per submit
                            ready = pool.submit(_ready)
                while pool is not None and ready is not None and ready.done():
                    if in_pool >= window or (task := next(queue, None)) is None:
                        break
                    with _main_not_rerun():
                        future = pool.submit(run_task, source, task.params, task.seed, base_dir)
                    pending[future] = task
                    in_pool += 1
                if not pending:
                    break
                waiting = list(pending)
                if ready is not None and not ready.done():
                    waiting.append(ready)
                timeout = None if pool is not None else max(0.0, BOOT_AFTER - (now - started))
                finished, _ = wait(waiting, timeout=timeout, return_when=FIRST_COMPLETED)
                for future in finished:
                    if future is ready:
                        future.result()  # a worker that cannot start raises here
                        continue
                    task = pending.pop(future)
                    left -= 1
                    if here is not None and future is here[0]:
                        spent += time.monotonic() - here[1]
                        done_here += 1
                        here = None
                    else:
                        in_pool -= 1
                    yield task, future.result()
            done_ok = True
        except BrokenProcessPool:
            raise RuntimeError("a sweep worker process died (killed, or out of memory)") from None
        finally:
            if pool is not None:
                if done_ok and ready is not None and ready.done():
                    pool.shutdown(wait=True)
                else:
                    # Interrupted, or done before a worker started: stop them now.
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
