"""Atomic file output: the one way linklab writes a file.

Every file is written to a temporary file with a unique name in the target's
directory, flushed to disk (``fsync``), renamed over the target, and the
directory is synced after the rename. A reader, a crash or a failure part-way
never sees a half-written file; a file that already exists is replaced only
once its successor is complete; a failure removes the temporaries.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "TMP_SUFFIX",
    "TRACES_ENV",
    "TRACES_HOW",
    "Staging",
    "atomic_write",
    "check_writable_dir",
    "check_writable_file",
    "mahimahi_traces",
]

#: The suffix of temporaries (``.<name>.<random>.tmp``); a reader may remove strays.
TMP_SUFFIX = ".tmp"

_UMASK: int | None = None

#: The environment variable naming a folder of Mahimahi traces (``*.down``/``*.up``), e.g.
#: the ``traces/`` folder of a Mahimahi clone; benchmarks read real traces from it.
TRACES_ENV = "LINKLAB_TRACES"

#: Where to get real cellular traces, for messages that need them.
TRACES_HOW = (
    f"set {TRACES_ENV} to a folder of Mahimahi traces (the traces/ folder of "
    "https://github.com/ravinet/mahimahi, GPL data)"
)


def mahimahi_traces() -> Path | None:
    """The folder of real Mahimahi traces named by ``$LINKLAB_TRACES``, or None when the
    variable is unset or empty. The project itself needs none: its scenarios and tests use
    the synthetic traces in ``scenarios/traces``."""
    value = os.environ.get(TRACES_ENV, "").strip()
    return Path(value).expanduser() if value else None


def _file_mode() -> int:
    """The mode a plain ``open(path, "w")`` would give a new file (0o666 & ~umask)."""
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0o022)
        os.umask(_UMASK)
    return 0o666 & ~_UMASK


def _fsync_path(path: Path, directory: bool = False) -> None:
    """Flush ``path`` (a file, or a directory's entries) to disk."""
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        if directory:  # some platforms cannot open a directory: nothing to sync
            return
        raise
    try:
        os.fsync(fd)
    except OSError:
        if not directory:  # a directory that cannot be synced (some file systems) is fine
            raise
    finally:
        os.close(fd)


class Staging:
    """Stage several output files, then publish them all with renames.

    Use as a context manager: :meth:`add` writes each file to a synced
    temporary; :meth:`commit` renames them into place and syncs their
    directories; leaving the block without committing (e.g. on an exception)
    removes the temporaries and leaves every existing file untouched.
    """

    def __init__(self) -> None:
        self._pending: list[tuple[Path, Path]] = []

    def add(self, target: str | os.PathLike[str], write: Callable[[Path], object]) -> Path:
        """Write ``target``'s content to a temporary file with ``write(tmp_path)``."""
        target = Path(target)
        fd, tmp_name = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=TMP_SUFFIX
        )
        os.close(fd)
        tmp = Path(tmp_name)
        self._pending.append((tmp, target))
        write(tmp)
        _fsync_path(tmp)
        os.chmod(tmp, _file_mode())
        return target

    def add_bytes(self, target: str | os.PathLike[str], data: bytes) -> Path:
        """Stage ``data`` as the content of ``target``."""
        return self.add(target, lambda tmp: tmp.write_bytes(data))

    def commit(self) -> list[Path]:
        """Move every staged file into place and sync the directories; returns the targets."""
        done: list[Path] = []
        while self._pending:
            tmp, target = self._pending[0]
            os.replace(tmp, target)
            self._pending.pop(0)
            done.append(target)
        for directory in dict.fromkeys(t.parent for t in done):
            _fsync_path(directory, directory=True)
        return done

    def discard(self) -> None:
        """Remove the temporaries of files not yet committed."""
        for tmp, _ in self._pending:
            with contextlib.suppress(OSError):
                tmp.unlink()
        self._pending.clear()

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()


def atomic_write(path: str | os.PathLike[str], data: bytes | str) -> Path:
    """Write ``data`` (``str`` as UTF-8) to ``path`` atomically; returns the path."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    with Staging() as s:
        s.add_bytes(path, data)
        return s.commit()[0]


def check_writable_dir(path: str | os.PathLike[str]) -> None:
    """Raise ``OSError`` unless ``path`` is, or can be created as, a writable directory."""
    p = Path(path)
    if p.exists():
        if not p.is_dir():
            raise NotADirectoryError(f"{p} exists and is not a directory")
        if not os.access(p, os.W_OK | os.X_OK):
            raise PermissionError(f"{p} is not writable")
        return
    ancestor = p.parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise NotADirectoryError(f"{ancestor} (in {p}) is not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise PermissionError(f"cannot create {p}: {ancestor} is not writable")


def check_writable_file(path: str | os.PathLike[str]) -> None:
    """Raise ``OSError`` unless a file can be written at ``path`` (its directory exists)."""
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"{p} is a directory")
    parent = p.parent
    if not parent.exists():
        raise FileNotFoundError(f"directory {parent} does not exist")
    if not parent.is_dir():
        raise NotADirectoryError(f"{parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PermissionError(f"directory {parent} is not writable")
