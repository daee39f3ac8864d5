"""Exceptions raised by linklab.

``ScenarioError`` (a ``ValueError``) is a scenario that cannot be run, with
``.path`` (the key path, e.g. ``links[2].ab.loss``; empty when it concerns the
whole scenario) and ``.message`` (what is wrong and what is allowed). The Rust
core raises it, and so does the Python loader for a scenario dict of the wrong
shape (:func:`scenario_error`). ``ScenarioFileError`` (an ``OSError``) is a
scenario file that cannot be read: missing, a directory, not a regular file,
too large, not UTF-8. ``InternalError`` (a ``RuntimeError``) is a bug in the
core: a Rust panic turned into a Python exception. ``AccountingError`` (an
``InternalError``) is a run whose packet account did not close at its end (a
packet counted nowhere, or twice): also a bug, its message naming the link
direction or flow, the counts, the scenario and the seed. ``EmulationError`` (a
``ValueError``) is a scenario or option live emulation cannot run, or a machine
that cannot emulate (not Linux, no root, no ``/dev/net/tun``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from linklab._core import AccountingError, EmulationError, InternalError, ScenarioError

__all__ = [
    "AccountingError",
    "EmulationError",
    "InternalError",
    "ScenarioError",
    "ScenarioFileError",
    "did_you_mean",
    "error_text",
    "for_api",
    "one_line",
    "scenario_error",
    "short_repr",
]

#: At most this many characters of an offending value are quoted in a message.
SHOWN_CHARS = 80


class ScenarioFileError(OSError):
    """A scenario file that cannot be read; ``.path`` is the file, ``str()`` says why."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


def scenario_error(path: str, message: str, value: str = "") -> ScenarioError:
    """A :class:`ScenarioError` shaped as the core builds them: ``.path``,
    ``.value`` (the offending value as written, or ``""``), ``.allowed`` (what is
    wrong and what is allowed) and ``.message`` (``value allowed``)."""
    exc = ScenarioError(f"{path}: {message}" if path else message)
    exc.path = path
    exc.value = value
    exc.allowed = message
    exc.message = f"{value} {message}" if value else message
    return exc


def short_repr(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for an error message: at most ``limit`` characters (a longer
    one is cut, ``…`` and its full length appended), an integer too long to print
    by its number of digits, and a value whose ``repr`` raises by its type."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4 * limit:
        digits = int(value.bit_length() * 0.30103) + 1
        return f"{'-' if value < 0 else ''}<an integer of about {digits} digits>"
    try:
        text = repr(value)
    except Exception:  # a foreign object's __repr__ may raise anything
        return f"<a {type(value).__name__} that cannot be shown>"
    if not isinstance(text, str):
        return f"<a {type(value).__name__} that cannot be shown>"
    if len(text) > limit:
        return f"{text[: limit - 1]}… ({len(text)} characters)"
    return text


def error_text(exc: BaseException) -> str:
    """One line describing ``exc``: ``path: message`` for a ScenarioError.

    Multi-line messages (e.g. a TOML syntax error with a source excerpt) are
    folded into one line, keeping the text and dropping the excerpt.
    """
    if isinstance(exc, ScenarioError):
        path = getattr(exc, "path", "") or ""
        message = getattr(exc, "message", None) or str(exc)
        text = f"{path}: {message}" if path else message
    else:
        text = str(exc)
    return with_suggestion(one_line(text))


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``did you mean 'X'?`` for the candidate closest to ``word`` (difflib), or ``""``."""
    import difflib

    match = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f"did you mean {match[0]!r}?" if match and match[0] != word else ""


def _quoted(text: str) -> list[str]:
    return re.findall(r"[\"'`]([^\"'`]*)[\"'`]", text)


#: Messages that name a mistyped word and the words allowed:
#: (pattern, group of the word, how to read the candidates from the rest).
_MISTYPED = [
    # the core: an unknown key, then the keys the table takes
    (re.compile(r"unknown key `([^`]+)`; [^:]*: (.+)$"), lambda t: t.split(", ")),
    # the core: a value not among the allowed ones
    (re.compile(r'"([^"]*)" is not [^;]*; allowed: (.+)$'), _quoted),
    # the core: --set of a parameter the scenario does not have
    (re.compile(r"--set ([^:\s]+): unknown parameter; [^:]*: (.+)$"), lambda t: t.split(", ")),
    (re.compile(r"params\['([^']+)'\]: unknown parameter; [^:]*: (.+)$"), lambda t: t.split(", ")),
    # the core: --set of a boolean parameter
    (re.compile(r"'([^']*)' is not (true or false)"), lambda _: ["true", "false"]),
    # argparse: a subcommand or choice
    (re.compile(r"invalid choice: '([^']*)' \(choose from (.+)\)"), _quoted),
]


def with_suggestion(text: str) -> str:
    """``text`` with ``; did you mean 'X'?`` appended when it names a mistyped word
    (a key, a value, a parameter, a subcommand) and one of those allowed is close."""
    for pattern, candidates in _MISTYPED:
        m = pattern.search(text)
        if m:
            hint = did_you_mean(m[1], candidates(m[2]))
            return f"{text}; {hint}" if hint else text
    return text


def for_api(exc: ScenarioError) -> ScenarioError:
    """``exc`` as the Python API reports it: a parameter override is ``params['NAME']``
    (the argument the caller gave), not the command's ``--set NAME``, and a mistyped
    key, value or parameter gets a ``did you mean``."""
    path = getattr(exc, "path", "") or ""
    message = getattr(exc, "message", None) or str(exc)
    if path.startswith("--set "):
        path = f"params[{path[6:]!r}]"
    message = with_suggestion(f"{path}: {message}" if path else message)
    if path:
        message = message[len(path) + 2 :]
    out = ScenarioError(f"{path}: {message}" if path else message)
    out.path = path
    out.value = getattr(exc, "value", "")
    out.allowed = getattr(exc, "allowed", "")
    out.message = message
    return out


def one_line(text: str) -> str:
    """Fold a multi-line message into one line, dropping source-excerpt lines."""
    kept: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        # toml-rs style excerpts: "  |", "3 | key = ", "  |     ^"
        if not line or _is_excerpt(line):
            continue
        kept.append(line)
    return ": ".join(kept) if kept else text.strip()


def _is_excerpt(line: str) -> bool:
    head, sep, _ = line.partition("|")
    return bool(sep) and (head.strip() == "" or head.strip().isdigit())
