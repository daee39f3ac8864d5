"""A path built from flags, as Mahimahi's shells build one (``linklab shell``,
``linklab run`` without a scenario file).

One link between two nodes: ``a``, where ``linklab shell`` runs its command (the
inside of the shell, the first flow's sender) and ``b``, the far end. *Up* is
a→b (the link's ``ab`` direction: what the command sends), *down* is b→a
(``ba``: what it receives), as Mahimahi's ``mm-link UPLINK DOWNLINK``. Each
flag is one key of the scenario's ``[[links]]`` table (docs/models/wired-link.md),
written into TOML text that the core loads and checks as it checks a file; its
errors are then put in the words of the flag (:func:`flag_error`).
:func:`path_scenario` builds the text; ``--print-scenario`` prints it, so the
path can grow into a scenario file.
"""

from __future__ import annotations

import argparse
import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from linklab.errors import ScenarioError, one_line, with_suggestion

__all__ = [
    "PATH_FLAGS",
    "RUN_DURATION",
    "add_path_flags",
    "flag_error",
    "given_flags",
    "path_scenario",
]

#: The simulated time of ``linklab run`` with path flags and no ``--duration``.
RUN_DURATION = "30s"

#: The nodes of the path: a (the command's side, the flow's sender) and b.
NODE_A, NODE_B = "a", "b"


@dataclass(frozen=True)
class PathFlag:
    """One flag of the path and the scenario key it sets."""

    #: The flag as typed (``--rate-up``).
    flag: str
    #: Where the value goes in the ``[[links]]`` table: ``rate``, ``ab.rate``,
    #: ``queue.kind``.
    key: str
    #: ``"number"``: written as a TOML number when it reads as one, else as a
    #: string (which the core then refuses with the key's own message).
    kind: str
    metavar: str
    help: str

    @property
    def dest(self) -> str:
        return "path_" + self.flag.removeprefix("--").replace("-", "_")


#: Every path flag, in the order of ``--help`` and of the TOML written.
PATH_FLAGS: tuple[PathFlag, ...] = (
    PathFlag("--rate", "rate", "str", "RATE",
             "the link's rate in both directions, e.g. 10Mbit (key rate)"),
    PathFlag("--rate-up", "ab.rate", "str", "RATE", "the rate a->b only (ab.rate)"),
    PathFlag("--rate-down", "ba.rate", "str", "RATE", "the rate b->a only (ba.rate)"),
    PathFlag("--delay", "delay", "str", "T",
             "one-way propagation delay of each direction, e.g. 20ms: the RTT is twice "
             "it (delay; as mm-delay)"),
    PathFlag("--loss", "loss", "number", "P",
             "independent loss probability per packet in both directions, 0..1 (loss)"),
    PathFlag("--loss-up", "ab.loss", "number", "P", "the loss a->b only (ab.loss)"),
    PathFlag("--loss-down", "ba.loss", "number", "P", "the loss b->a only (ba.loss)"),
    PathFlag("--queue", "queue.kind", "str", "KIND",
             "the queue in front of each direction: droptail (default), codel, pie or "
             "fq_codel (queue.kind; red and sbd need thresholds: write them in a file, "
             "see --print-scenario)"),
    PathFlag("--queue-limit", "queue.limit", "str", "LIMIT",
             "that queue's limit, packets (100p) or bytes (150kB) (queue.limit; default "
             "the kind's)"),
    PathFlag("--trace-up", "ab.trace", "str", "FILE",
             "a Mahimahi trace for a->b instead of a rate (ab.trace; as mm-link's UPLINK)"),
    PathFlag("--trace-down", "ba.trace", "str", "FILE",
             "a Mahimahi trace for b->a (ba.trace; as mm-link's DOWNLINK)"),
)  # fmt: skip


def add_path_flags(p: argparse.ArgumentParser, title: str) -> None:
    """The path flags, as a group of ``p``'s help titled ``title``."""
    group = p.add_argument_group(title)
    for f in PATH_FLAGS:
        group.add_argument(f.flag, dest=f.dest, metavar=f.metavar, help=f.help)


def given_flags(args: argparse.Namespace) -> dict[str, str]:
    """``{flag: value}`` of the path flags given on the command line."""
    return {f.flag: v for f in PATH_FLAGS if (v := getattr(args, f.dest, None)) is not None}


def _toml_value(flag: PathFlag, text: str) -> str:
    if flag.kind == "number":
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if math.isfinite(number):
            return repr(number)
    return _toml_string(text)


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string (a surrogate, which no file can hold, as U+FFFD)."""
    out = []
    for c in text:
        if c in '"\\':
            out.append("\\" + c)
        elif c < " " or c == "\x7f":
            out.append(f"\\u{ord(c):04x}")
        elif "\ud800" <= c <= "\udfff":
            out.append("\\ufffd")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def path_scenario(
    flags: Mapping[str, str], duration: str = RUN_DURATION, command: Sequence[str] = ()
) -> str:
    """The scenario (TOML text) of the path ``flags`` (``{"--rate": "10Mbit", …}``)
    build: one link a–b with a bulk TCP flow a→b of Linux's TCP (``profile =
    "linux"``), running ``duration``. ``command``
    (the words that built it, e.g. ``["linklab", "run", "--rate", "10Mbit"]``) goes
    into the description. Values are not checked here: the core checks them as it
    checks a file."""
    by_flag = {f.flag: f for f in PATH_FLAGS}
    unknown = set(flags) - set(by_flag)
    if unknown:
        raise ValueError(f"not path flags: {sorted(unknown)}")
    top: list[str] = []
    tables: dict[str, list[str]] = {}
    for f in PATH_FLAGS:
        if f.flag not in flags:
            continue
        head, _, key = f.key.rpartition(".")
        item = f"{key} = {_toml_value(f, flags[f.flag])}"
        if head:
            tables.setdefault(head, []).append(item)
        else:
            top.append(item)
    link = top + [f"{head} = {{ {', '.join(items)} }}" for head, items in tables.items()]
    words = list(command) or ["linklab", *(w for k, v in flags.items() for w in (k, v))]
    return "\n".join(
        [
            f"# The path of `{_printable(shlex.join(words))}`:",
            f"# one link between {NODE_A} (where `linklab shell` runs its command) and "
            f"{NODE_B}; up is {NODE_A}->{NODE_B} (ab), down is {NODE_B}->{NODE_A} (ba).",
            f"# `linklab run` sends one bulk TCP flow {NODE_A}->{NODE_B}; trace files are "
            "relative to this file.",
            'name = "path"',
            f"description = {_toml_string('A path built from flags: ' + shlex.join(words[1:]))}",
            f"duration = {_toml_string(duration)}",
            "",
            "[tcp]",
            'profile = "linux"  # Linux 6.x: CUBIC, SACK, window scaling (docs/models/tcp.md)',
            "",
            "[[links]]",
            f'a = "{NODE_A}"',
            f'b = "{NODE_B}"',
            *link,
            "",
            "[[flows]]",
            f'from = "{NODE_A}"',
            f'to = "{NODE_B}"',
            "",
        ]
    )


def _printable(text: str) -> str:
    """``text`` for a TOML comment: characters that cannot stand there escaped."""
    return "".join(
        c if c.isprintable() and not "\ud800" <= c <= "\udfff" else ascii(c)[1:-1] for c in text
    )


_DIRECTIONS = {"ab": "up", "ba": "down"}


def flag_error(e: ScenarioError, flags: Mapping[str, str]) -> str:
    """The core's error about a scenario :func:`path_scenario` built, in the words of
    the flag that set the value (``--queue "codl" is not a queue kind; allowed: …``)."""
    path = getattr(e, "path", "") or ""
    message = getattr(e, "message", None) or str(e)
    value = getattr(e, "value", "") or ""
    key = path.removeprefix("links[0].")
    if key == path and path != "duration":
        # Not a key of the link: name the scenario the flags built.
        text = f"{path}: {message}" if path else message
        return with_suggestion(one_line(f"the path the flags build: {text} (see --print-scenario)"))
    if path == "duration":
        return one_line(f"--duration {message}")
    head = key.split(".")[0]
    if head in _DIRECTIONS and "." not in key:
        # A rule about one direction and values from both levels.
        way = _DIRECTIONS[head]
        return one_line(f"the {way} direction ({head}): {message}")
    if key in ("rate", "ab.rate", "ba.rate") and not value:
        way = _DIRECTIONS.get(head)
        which = f"the {way} direction ({head})" if way else "the link"
        return (
            f"no rate for {which}; give --rate (both directions, e.g. --rate 10Mbit)"
            + (f", --rate-{way} or --trace-{way}" if way else ", or --rate-up/--rate-down or "
               "--trace-up/--trace-down for each direction")
        )  # fmt: skip
    if key in ("ab.trace", "ba.trace") and "given with" in message:
        way = _DIRECTIONS[head]
        return (
            f"--trace-{way} and --rate-{way} both set the {way} direction's rate; "
            f"give one of them (--rate goes on in the other direction)"
        )
    flag = next((f for f in PATH_FLAGS if f.key == key), None)
    if flag is None:
        # A key no flag sets (a RED queue's minth): the flag that brought it in.
        near = next((f for f in PATH_FLAGS if f.key.split(".")[0] == head), None)
        given = f"{near.flag} {flags.get(near.flag, '')}".strip() if near else "the flags"
        return with_suggestion(
            one_line(
                f"{given}: links[0].{key}: {message}; no flag sets {key}: write the path to "
                "a file with --print-scenario, add it there and run the file"
            )
        )
    name = flag.flag
    message = message.replace("relative to the scenario file", "relative to the current directory")
    return with_suggestion(one_line(f"{name} {message}"))
