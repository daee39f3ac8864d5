"""The run store of a sweep: one small JSON file per finished run, keyed by its hash.

``DIR/store/<key>.json`` is written with :mod:`linklab._files` (a synced
temporary file renamed into place), so a process killed at any moment leaves
either the complete file or none (stray ``.*.tmp`` files are removed the next
time the store is opened). Each record carries the sha256 of its content
(``"sha256"``).

A record is read only if it is a regular file (not a link, directory, FIFO or
device; opened without following links) of at most :data:`MAX_RECORD_BYTES`,
and used only if it is a complete JSON record (finite numbers, bounded nesting)
of its own key with the right checksum. Anything else (a power loss, a full
disk, a foreign hand, a record without its checksum) is a damaged record: it is
set aside as ``<key>.json.damaged`` (``.damaged.1``, … if taken), with a
one-line warning, and counts as missing, so the sweep that finds it does the run
again.

A sweep holds an exclusive lock (``DIR/store/.lock``, ``flock``) while it works,
so two sweeps never write into the same directory at once; the kernel drops the
lock when the process dies, even by ``kill -9``. A ``.lock`` that is not a
regular file is set aside the same way. A store folder that cannot be used (a
file in its place, no permission) raises :class:`StoreError` naming it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from linklab import _log
from linklab._files import TMP_SUFFIX, atomic_write

__all__ = ["MAX_RECORD_BYTES", "MemoryStore", "Store", "StoreBusyError", "StoreError"]

_SUFFIX = ".json"
_CHECKSUM = "sha256"
_DAMAGED = ".damaged"

#: The largest record read back or written (bytes). A run's summary is a few
#: hundred bytes per flow, link and queue: a network at the scenario caps
#: (1,000,000 links, 200,000 flows) stays below it.
MAX_RECORD_BYTES = 1 << 30


class StoreError(OSError):
    """The store folder (or a file in it) cannot be used; the message names it."""


class StoreBusyError(StoreError):
    """Another process holds the store's lock."""


class _Damaged(Exception):
    """A record that cannot be used; the message says why (after its path)."""


def _file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISREG, "a file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _reject_constant(name: str) -> Any:
    raise _Damaged(f"holds {name}, which is not a number")


class Store:
    """Finished runs of a sweep directory, one JSON file per run key."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.root = Path(directory) / "store"
        self._lock_fd: int | None = None

    # -- locking ------------------------------------------------------------

    def open(self) -> Store:
        """Create the directory, take the lock and remove stray temporaries."""
        root = self.root
        try:
            st = os.stat(root)
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise StoreError(f"cannot use the store folder {root}: {e.strerror}") from None
        if st is not None and not stat.S_ISDIR(st.st_mode):
            raise StoreError(
                f"the store folder {root} is {_file_kind(st.st_mode)}; allowed: a directory "
                "(move it away or give another --out directory)"
            )
        try:
            root.mkdir(parents=True, exist_ok=True)
            self._open_lock()
            self.remove_strays()
        except StoreError:
            self.close()
            raise
        except OSError as e:
            self.close()
            raise StoreError(
                f"cannot use the store folder {root}: {e.strerror or e}; allowed: a directory "
                "this user can read and write"
            ) from None
        return self

    def remove_strays(self) -> None:
        """Remove the temporaries (``.*.tmp``) a write cut short left in the store folder:
        at opening, and after an interrupt (a Ctrl-C between a temporary's creation and
        its rename). Only the sweep holding the store's lock writes in it."""
        for entry in os.scandir(self.root):
            if entry.name.startswith(".") and entry.name.endswith(TMP_SUFFIX):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)

    def _open_lock(self) -> int:
        lock = self.root / ".lock"
        for _ in range(2):
            try:
                fd = os.open(
                    lock,
                    os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                    0o666,
                )
            except OSError as e:
                if not os.path.lexists(lock):
                    raise
                try:
                    kind = _file_kind(os.lstat(lock).st_mode)
                except OSError:
                    kind = e.strerror or "unusable"
                self._set_aside(lock, f"is {kind}, not the lock file")
                continue
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                kind = _file_kind(os.fstat(fd).st_mode)
                os.close(fd)
                self._set_aside(lock, f"is {kind}, not the lock file")
                continue
            break
        else:
            raise StoreError(f"cannot create the lock file {lock}")
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
        return fd

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
        """The record of run ``key``, or None if it is missing or damaged (then set aside)."""
        path = self._path(key)
        try:
            return _parse(_read(path), key)
        except FileNotFoundError:
            return None
        except _Damaged as e:
            self._set_aside(path, str(e))
            return None

    def put(self, key: str, record: dict[str, Any]) -> None:
        """Store ``record`` (with its checksum) as run ``key`` atomically."""
        data = json.dumps(
            {**record, _CHECKSUM: _checksum(record)}, separators=(",", ":"), allow_nan=False
        )
        size = len(data.encode("utf-8"))
        if size > MAX_RECORD_BYTES:
            mib = size / 2**20
            record = {
                **record,
                "status": "failed",
                "summary": None,
                "error": f"its summary ({mib:.0f} MiB) is larger than a store record may be "
                f"({MAX_RECORD_BYTES // 2**20} MiB)",
            }
            data = json.dumps({**record, _CHECKSUM: _checksum(record)}, separators=(",", ":"))
        atomic_write(self._path(key), data)

    def _set_aside(self, path: Path, reason: str) -> None:
        """Rename damaged ``path`` to ``<name>.damaged[.N]`` with a one-line warning."""
        for n in range(1000):
            aside = path.with_name(f"{path.name}{_DAMAGED}{f'.{n}' if n else ''}")
            if not os.path.lexists(aside):
                break
        try:
            os.rename(path, aside)
        except OSError as e:
            raise StoreError(
                f"the store file {path} {reason}, and it cannot be set aside ({e.strerror}); "
                "remove it by hand"
            ) from None
        _log.warning(f"the store file {path} {reason}; set aside as {aside.name}")


def _read(path: Path) -> bytes:
    """The bytes of record ``path``: a regular file of at most MAX_RECORD_BYTES,
    opened without following a link and without blocking (a FIFO)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise
    except OSError as e:
        raise _Damaged(f"cannot be read ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise _Damaged(f"is {_file_kind(st.st_mode)}, not a record")
    limit = f"is larger than a record may be ({MAX_RECORD_BYTES // 2**20} MiB)"
    if st.st_size > MAX_RECORD_BYTES:
        raise _Damaged(limit)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as e:
        raise _Damaged(f"cannot be read ({e.strerror})") from None
    try:
        st = os.fstat(fd)  # the file opened, not the name looked at above
        if not stat.S_ISREG(st.st_mode):
            raise _Damaged(f"is {_file_kind(st.st_mode)}, not a record")
        chunks: list[bytes] = []
        left = MAX_RECORD_BYTES + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as e:
        raise _Damaged(f"cannot be read ({e.strerror})") from None
    finally:
        os.close(fd)
    if left <= 0:
        raise _Damaged(limit)
    return b"".join(chunks)


def _parse(data: bytes, key: str) -> dict[str, Any]:
    """The record in ``data`` without its checksum; ``_Damaged`` unless it is whole."""
    try:
        record = json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except RecursionError:
        raise _Damaged("is nested too deeply to be a record") from None
    except (UnicodeDecodeError, ValueError):
        raise _Damaged("is not a complete JSON record") from None
    if not isinstance(record, dict):
        raise _Damaged("is not a JSON object")
    checksum = record.pop(_CHECKSUM, None)
    if not isinstance(checksum, str):
        raise _Damaged(f"has no {_CHECKSUM} checksum")
    if record.get("key") != key:
        raise _Damaged("holds another run's key")
    try:
        right = _checksum(record)
    except (ValueError, RecursionError):
        right = None
    if checksum != right:
        raise _Damaged(f"does not match its {_CHECKSUM} checksum (altered or incomplete)")
    status, summary, error = record.get("status"), record.get("summary"), record.get("error")
    if (
        status not in ("ok", "failed")
        or not (summary is None or isinstance(summary, dict))
        or not (error is None or isinstance(error, str))
    ):
        raise _Damaged("is not shaped like a run record (status, summary, error)")
    return record


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
