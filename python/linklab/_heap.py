"""The C heap of a long linklab process (a reproduction): bounded and released.

Every ``linklab.run`` simulates on a thread of its own (``crates/py``: the
``linklab-run`` worker), and a reproduction runs hundreds of them in its main
process beside Python threads (a sweep's in-process runs, ns-2 runs in a thread
pool). glibc's malloc gives threads arenas of their own, up to 8 per core (16
on a 2-core machine), and keeps the pages each arena freed: after a freed large
block its mmap threshold rises (to 32 MiB at most), so later large blocks come
from the arenas too, and up to twice that stays in each arena untrimmed.
Measured on ``linklab reproduce rate-swing`` (2026-11-28, /proc/PID/smaps of the
main process): 507 of its 776 MiB in 16 thread arenas of 30-47 MiB each, after
the experiments before ``ns2`` and the first minutes of ``ns2``; the same cells
in a fresh process took 75 MiB. With :func:`bound_heap` the same process held at
most 285 MiB, 217 MiB after ``ns2`` (docs/reproductions/rate-swing.md, "Memory").

:func:`bound_heap` caps the arenas and fixes the thresholds (the live data is
the same; only what glibc keeps of the freed pages changes): large blocks are
mapped and unmapped on their own, freed tops are returned. :func:`release_heap`
hands back what is free inside the heaps between steps. Both do nothing off
glibc (musl, macOS).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys
from typing import Any

__all__ = [
    "ARENAS",
    "MMAP_THRESHOLD",
    "TRIM_THRESHOLD",
    "bound_heap",
    "release_heap",
    "resident",
]

#: mallopt parameters (glibc's malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8

#: Arenas in all (the main one and the threads'): one for the main thread, one
#: shared by the other threads (in a reproduction's main process a simulation
#: thread and one or two Python threads at a time; a table3 cell's run takes the
#: same CPU time with and without the cap).
ARENAS = 2
#: Blocks from this size are mapped on their own and unmapped when freed
#: (glibc starts at 128 KiB and raises it to 32 MiB; fixed here).
MMAP_THRESHOLD = 1 << 20
#: Free memory at the top of a heap beyond this is returned to the system.
TRIM_THRESHOLD = 4 << 20


def _libc() -> Any:
    """glibc, or None elsewhere (or when it cannot be loaded)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    # musl has neither mallopt's arena setting nor malloc_trim.
    if not hasattr(libc, "malloc_trim") or not hasattr(libc, "mallopt"):
        return None
    return libc


def bound_heap() -> bool:
    """Cap glibc's arenas at :data:`ARENAS` and fix its mmap and trim thresholds
    (:data:`MMAP_THRESHOLD`, :data:`TRIM_THRESHOLD`) for the rest of this process.
    Arenas made before the call stay. True when glibc took the settings."""
    libc = _libc()
    if libc is None:
        return False
    ok = libc.mallopt(_M_ARENA_MAX, ARENAS) == 1
    ok &= libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    ok &= libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    return bool(ok)


def release_heap() -> None:
    """Collect Python's garbage and hand the heap pages now free back to the
    system (``malloc_trim``: every arena, inside the heaps too, not only their tops)."""
    gc.collect()
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


def resident() -> tuple[float, float] | None:
    """This process's resident set now and its peak since it started, in MiB
    (``VmRSS``, ``VmHWM`` of /proc/self/status); None where there is no such file
    (not Linux). The peak is not reset between steps: that would also reset the
    peak the parent reads at exit (``ru_maxrss``, benches/repro_memory.py)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024
    except (OSError, KeyError, ValueError, IndexError):
        return None
