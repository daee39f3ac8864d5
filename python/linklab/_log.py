"""How chatty the command is on stderr: ``linklab -q`` (no progress or stage
lines; errors and warnings still) and ``linklab -v`` (tracebacks of internal
errors). One place for the setting; the library's own functions default to
the normal level."""

from __future__ import annotations

import sys

#: Set by ``linklab -q``: no progress bars, progress or stage lines.
quiet = False
#: Set by ``linklab -v``: an internal error prints its traceback.
verbose = False


def info(line: str) -> None:
    """A progress or stage line on stderr, unless quiet."""
    if not quiet:
        print(line, file=sys.stderr, flush=True)


def warning(line: str) -> None:
    """A warning on stderr, ``linklab: warning: LINE``; printed even when quiet
    (a warning says the results may not mean what they seem)."""
    print(f"linklab: warning: {line}", file=sys.stderr, flush=True)
