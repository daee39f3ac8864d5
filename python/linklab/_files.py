"""Atomic file output: write to a temporary file beside the target, then rename.

A reader (or a later failure) never sees a half-written file, and a file that
already exists is replaced only once its successor is complete.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["Staging", "atomic_write_bytes", "check_writable_dir", "check_writable_file"]

_UMASK: int | None = None


def _file_mode() -> int:
    """The mode a plain ``open(path, "w")`` would give a new file (0o666 & ~umask)."""
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0o022)
        os.umask(_UMASK)
    return 0o666 & ~_UMASK


class Staging:
    """Stage several output files, then publish them all with renames.

    Use as a context manager: files are written to temporaries by :meth:`add`;
    :meth:`commit` renames them into place; leaving the block without
    committing (e.g. on an exception) removes the temporaries and leaves every
    existing file untouched.
    """

    def __init__(self) -> None:
        self._pending: list[tuple[Path, Path]] = []

    def add(self, target: str | os.PathLike[str], write: Callable[[Path], None]) -> Path:
        """Write ``target``'s content to a temporary file with ``write(tmp_path)``."""
        target = Path(target)
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        os.close(fd)
        tmp = Path(tmp_name)
        self._pending.append((tmp, target))
        write(tmp)
        os.chmod(tmp, _file_mode())
        return target

    def add_bytes(self, target: str | os.PathLike[str], data: bytes) -> Path:
        """Stage ``data`` as the content of ``target``."""

        def write(tmp: Path) -> None:
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())

        return self.add(target, write)

    def commit(self) -> list[Path]:
        """Move every staged file into place; returns the targets."""
        done: list[Path] = []
        while self._pending:
            tmp, target = self._pending[0]
            os.replace(tmp, target)
            self._pending.pop(0)
            done.append(target)
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


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically."""
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
