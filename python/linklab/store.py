"""The run store of a sweep: one small JSON file per finished run, keyed by its hash.

``DIR/store/<key>.json`` is written with :mod:`linklab._files` (a synced
temporary file renamed into place), so a process killed at any moment leaves
either the complete file or none (stray ``.*.tmp`` files are removed the next
time the store is opened). Each record carries the sha256 of its content
(``"sha256"``); a file that cannot be read back as a complete record with the
right checksum (a power loss, a full disk, a foreign hand) counts as missing and
is deleted, so the sweep that finds it does the run again. (Records written
before records had checksums are read as they parse.)

A sweep holds an exclusive lock (``DIR/store/.lock``, ``flock``) while it works,
so two sweeps never write into the same directory at once; the kernel drops the
lock when the process dies, even by ``kill -9``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from linklab._files import TMP_SUFFIX, atomic_write

__all__ = ["MemoryStore", "Store", "StoreBusyError"]

_SUFFIX = ".json"
_CHECKSUM = "sha256"


class StoreBusyError(OSError):
    """Another process holds the store's lock."""


class Store:
    """Finished runs of a sweep directory, one JSON file per run key."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.root = Path(directory) / "store"
        self._lock_fd: int | None = None

    # -- locking ------------------------------------------------------------

    def open(self) -> Store:
        """Create the directory, take the lock and remove stray temporaries."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o666)
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreBusyError(
                f"{self.root.parent} is in use by another sweep; wait for it to finish "
                "or give another --out directory"
            ) from None
        except ImportError:  # no flock (Windows): run unlocked
            pass
        self._lock_fd = fd
        for entry in os.scandir(self.root):
            if entry.name.startswith(".") and entry.name.endswith(TMP_SUFFIX):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
        return self

    def close(self) -> None:
        """Release the lock."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Store:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- records ------------------------------------------------------------

    def _path(self, key: str) -> Path:
        return self.root / f"{key}{_SUFFIX}"

    def get(self, key: str) -> dict[str, Any] | None:
        """The record of run ``key``, or None if it is missing or damaged (then deleted)."""
        path = self._path(key)
        try:
            with open(path, encoding="utf-8") as f:
                record = json.load(f)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            record = None
        # A record written before records had checksums is taken as it parses.
        checksum = record.pop(_CHECKSUM, None) if isinstance(record, dict) else None
        if (
            not isinstance(record, dict)
            or record.get("key") != key
            or (checksum is not None and checksum != _checksum(record))
        ):
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        return record

    def put(self, key: str, record: dict[str, Any]) -> None:
        """Store ``record`` (with its checksum) as run ``key`` atomically."""
        data = json.dumps(
            {**record, _CHECKSUM: _checksum(record)}, separators=(",", ":"), allow_nan=False
        )
        atomic_write(self._path(key), data)


def _checksum(record: dict[str, Any]) -> str:
    """sha256 hex of the canonical JSON of ``record`` (a JSON round trip keeps it)."""
    text = json.dumps(
        record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class MemoryStore:
    """A store that keeps records in memory (a sweep without an output directory)."""

    def __init__(self) -> None:
        self._records: dict[str, dict[str, Any]] = {}
        self.root = None

    def open(self) -> MemoryStore:
        return self

    def close(self) -> None:
        pass

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def get(self, key: str) -> dict[str, Any] | None:
        return self._records.get(key)

    def put(self, key: str, record: dict[str, Any]) -> None:
        json.dumps(record, allow_nan=False)  # the same check as the file store
        self._records[key] = record
