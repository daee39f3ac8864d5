"""The one scenario loader: a path, TOML text or a dict, checked before the core sees it.

:func:`load_source` is used by :func:`linklab.run`, :func:`linklab.sweep` and
the CLI alike. It returns TOML text (``str``) or a plain ``dict``:

- an ``os.PathLike`` is a path;
- a ``str`` is TOML text when it spans several lines, or when it contains ``=``
  while naming no existing file and not ending in ``.toml``; any other ``str``
  is a path (so ``"/nonexistent"`` and ``"/tmp"`` are files that cannot be read,
  not TOML). Pass a :class:`pathlib.Path` to say "path" without doubt;
- a ``Mapping`` is a scenario shaped like the TOML file; it is copied into
  plain dicts and lists after checking, iteratively, that it holds only str keys
  and str / int (64-bit) / float / bool / list / dict values, at most
  :data:`MAX_DEPTH` levels deep, with at most :data:`MAX_VALUES` values and no
  container inside itself. A bad shape is a :class:`~linklab.ScenarioError`
  naming the key path.

A file is opened without blocking, refused unless it is a regular file, and
read up to :data:`MAX_FILE_BYTES` (a larger file is refused without being
read whole); it must be UTF-8. Any of these is a
:class:`~linklab.errors.ScenarioFileError` (an ``OSError``).

:func:`shipped` and :func:`overlay` serve the scenarios shipped with the
package (``linklab/scenarios/*.toml``, the repository's ``scenarios/``).
"""

from __future__ import annotations

import copy
import os
import re
import stat
import tomllib
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any, NoReturn

from linklab import _core
from linklab.errors import ScenarioFileError, scenario_error, short_repr

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_VALUES",
    "Source",
    "load_source",
    "overlay",
    "params_table",
    "read_scenario_file",
    "scenario_name",
    "shipped",
    "source_file",
    "to_toml",
]

#: A loaded scenario: TOML text or a plain dict.
Source = str | dict[str, Any]

#: The largest scenario file read (64 MiB; topologies expand patterns in the core).
MAX_FILE_BYTES = 64 * 2**20
#: The deepest nesting of tables and arrays in a scenario dict (the core's bound).
MAX_DEPTH: int = _core.MAX_DEPTH
#: The most values (scalars, tables and arrays) in a scenario dict.
MAX_VALUES = 10_000_000

_HINT = "give a TOML scenario file"
_I64 = (-(2**63), 2**63 - 1)
_ALLOWED = "allowed: str, int, float, bool, list, or dict with str keys"


def load_source(scenario: object) -> Source:
    """The scenario as TOML text or a plain dict (see the module docstring)."""
    if isinstance(scenario, Mapping):
        return plain_dict(scenario)
    if isinstance(scenario, os.PathLike):
        return read_scenario_file(scenario)
    if isinstance(scenario, str):
        return read_scenario_file(scenario) if is_path(scenario) else scenario
    raise TypeError("scenario must be a path, TOML text or a dict, not " + type(scenario).__name__)


def source_file(scenario: object) -> str | None:
    """The file ``scenario`` names (as :func:`load_source` reads it), or None."""
    if isinstance(scenario, os.PathLike):
        return os.fspath(scenario)  # type: ignore[arg-type]
    if isinstance(scenario, str) and is_path(scenario):
        return scenario
    return None


def is_path(text: str) -> bool:
    """Whether the ``str`` ``text`` names a file rather than being TOML text."""
    if "\n" in text or "\r" in text or not text.strip():
        return False
    if "=" not in text:
        return True
    return text.endswith(".toml") or os.path.lexists(text)


def read_scenario_file(path: str | os.PathLike[str]) -> str:
    """The text of scenario file ``path``; :class:`ScenarioFileError` if it cannot be used."""
    name = os.fspath(path)

    def fail(reason: str) -> NoReturn:
        raise ScenarioFileError(
            f"cannot read scenario file {short_repr(name, 1000)}: {reason}; {_HINT}", name
        )

    if "\0" in name:
        fail("the path holds a NUL byte (\\x00); allowed: a path without NUL bytes")
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer.
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        if isinstance(e, IsADirectoryError):
            fail("it is a directory")
        fail(e.strerror or str(e))
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            fail("it is a directory")
        if not stat.S_ISREG(info.st_mode):
            fail(f"it is not a regular file (a {_file_kind(info.st_mode)})")
        if info.st_size > MAX_FILE_BYTES:
            fail(f"it has {info.st_size} bytes; allowed: at most {_mib(MAX_FILE_BYTES)}")
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)  # a file may grow, or report size 0 (/proc)
    except OSError as e:
        if isinstance(e, ScenarioFileError):
            raise
        fail(e.strerror or str(e))
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        fail(f"it has more than {_mib(MAX_FILE_BYTES)}; allowed: at most {_mib(MAX_FILE_BYTES)}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        fail(f"not UTF-8 text ({e.reason} at byte {e.start})")


def _file_kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
    ):
        if test(mode):
            return kind
    return "special file"


def _mib(n: int) -> str:
    return f"{n / 2**20:g} MiB"


# ---------------------------------------------------------------------------
# Dicts
# ---------------------------------------------------------------------------


def plain_dict(doc: Mapping[Any, Any]) -> dict[str, Any]:
    """A plain copy of scenario ``doc`` (dicts and lists); raises ScenarioError for a bad shape.

    Iterative, so neither depth nor a container inside itself can exhaust the
    stack; see the module docstring for what is allowed.
    """
    root: dict[str, Any] = {}
    # (source container, its copy, key path, depth, ids of the containers above it)
    stack: list[tuple[Any, Any, str, int, frozenset[int]]] = [(doc, root, "", 1, frozenset())]
    count = 0
    while stack:
        src, dst, path, depth, above = stack.pop()
        above = above | {id(src)}
        items = (
            ((k, _key_path(path, k), v) for k, v in src.items())
            if isinstance(dst, dict)
            else ((None, f"{path}[{i}]", v) for i, v in enumerate(src))
        )
        for key, where, value in items:
            count += 1
            if count > MAX_VALUES:
                raise scenario_error(
                    "",
                    f"the scenario dict has more than {MAX_VALUES} values; allowed: at most "
                    f"{MAX_VALUES}",
                )
            if isinstance(dst, dict) and not isinstance(key, str):
                raise scenario_error(
                    _short(path),
                    f"key {short_repr(key)} ({type(key).__name__}) is not a str; keys must be str",
                )
            if isinstance(value, Mapping | list | tuple):
                if id(value) in above:
                    raise scenario_error(
                        _short(where),
                        "contains itself (a dict or list inside itself); "
                        "a scenario is a tree of tables, arrays and values",
                    )
                if depth >= MAX_DEPTH:
                    raise scenario_error(
                        _short(where),
                        f"nested more than {MAX_DEPTH} levels deep; allowed: at most {MAX_DEPTH}",
                    )
                child: Any = {} if isinstance(value, Mapping) else []
                stack.append((value, child, where, depth + 1, above))
            else:
                child = _scalar(value, where)
            if isinstance(dst, dict):
                dst[key] = child
            else:
                dst.append(child)
    return root


def _key_path(path: str, key: object) -> str:
    shown = key if isinstance(key, str) else short_repr(key)
    return f"{path}.{shown}" if path else shown


def _short(path: str) -> str:
    """A key path short enough for a one-line message."""
    return path if len(path) <= 80 else f"{path[:40]}…{path[-30:]}"


def _scalar(value: object, where: str) -> str | int | float | bool:
    if isinstance(value, bool | str | float):
        return value
    if isinstance(value, int):
        if not _I64[0] <= value <= _I64[1]:
            raise scenario_error(
                _short(where),
                f"integer {short_repr(value)} is out of range; allowed: a 64-bit signed integer",
            )
        return value
    raise scenario_error(
        _short(where),
        f"{short_repr(value, 60)} ({type(value).__name__}) is not a scenario value; {_ALLOWED}",
    )


# ---------------------------------------------------------------------------
# Reading a loaded source
# ---------------------------------------------------------------------------


def to_toml(source: Source) -> str:
    """TOML text of ``source`` (a dict is written by ``tomli_w``; text is returned as is)."""
    if isinstance(source, str):
        return source
    import tomli_w

    return tomli_w.dumps(source)


def parse(source: Source, where: str = "scenario") -> dict[str, Any]:
    """``source`` as a dict; raises ScenarioError for TOML text that does not parse."""
    if isinstance(source, dict):
        return source
    try:
        return tomllib.loads(source)
    except tomllib.TOMLDecodeError as e:
        raise scenario_error("", f"{where}: not valid TOML ({e}); {_HINT}") from None


def params_table(source: Source, where: str = "scenario") -> dict[str, Any]:
    """The ``[params]`` table of ``source`` (name -> default)."""
    params = parse(source, where).get("params", {})
    if not isinstance(params, dict):
        raise scenario_error(
            "", f"{where}: params must be a table of name = default value; see docs/scenarios.md"
        )
    return params


def scenario_name(source: Source) -> str | None:
    """The scenario's ``name``, if it has one (None for text that does not parse)."""
    try:
        name = parse(source).get("name")
    except ValueError:
        return None
    return name if isinstance(name, str) else None


# ---------------------------------------------------------------------------
# Shipped scenarios and overlays
# ---------------------------------------------------------------------------


def shipped(name: str) -> dict[str, Any]:
    """A fresh copy of shipped scenario ``name`` (``scenarios/<name>.toml``) as a dict."""
    return copy.deepcopy(_shipped(name))


@cache
def _shipped(name: str) -> dict[str, Any]:
    folder = resources.files("linklab") / "scenarios"
    entry = folder / f"{name}.toml"
    if not entry.is_file():
        have = sorted(p.name.removesuffix(".toml") for p in folder.iterdir())
        raise ValueError(f"no shipped scenario {short_repr(name)}; shipped: {', '.join(have)}")
    return tomllib.loads(entry.read_text(encoding="utf-8"))


_KEY_PATH = re.compile(r"[^.\[\]]+(?:\.[^.\[\]]+|\[\d+\])*")
_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def overlay(doc: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``doc`` with each key path of ``changes`` set to its value.

    Key paths are written as the core writes them in its messages:
    ``"params.ts"``, ``"links[1].ab"``, ``"tcp.lt.mss_min"``. The last step may
    be new; every step before it must exist. A value of None removes the key.
    """
    out = copy.deepcopy(dict(doc))
    for path, value in changes.items():
        if not _KEY_PATH.fullmatch(path):
            raise ValueError(f"malformed key path {short_repr(path)}; e.g. 'links[1].ab.loss'")
        steps = [int(index) if index else key for key, index in _STEP.findall(path)]
        node: Any = out
        for step in steps[:-1]:
            node = node[step]
        last = steps[-1]
        if value is None:
            del node[last]
        else:
            node[last] = copy.deepcopy(value)
    return out
