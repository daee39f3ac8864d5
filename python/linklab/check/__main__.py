"""``python -m linklab.check``: properties checked over random scenarios.

    python -m linklab.check --draws N [--seed S] [--out DIR] [--jobs J]
    python -m linklab.check --replay FILE [--seed N]

Prints the batch's summary (draws, refusals by reason, failures by property) and
writes each failure's minimal scenario into ``--out``. Exit status 0 when every
property held, 1 on a failure, 2 on bad flags (one line, no traceback).
``docs/checking.md`` describes the draws, the properties and how to reproduce a
failure. (Other checks, such as envelope grids, are to come as subcommands.)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

PROG = "python -m linklab.check"
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130

#: Other checks, run as ``python -m linklab.check NAME …``: the module whose
#: ``main(argv) -> int`` runs them (`envelopes`: docs/validation.md).
COMMANDS: dict[str, str] = {"envelopes": "linklab.check.envelopes"}


class UsageError(Exception):
    """Bad flags: one line on stderr, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}; see '{self.prog} --help'")


def _int_at_least(flag: str, low: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            value = low - 1
        if value < low:
            raise argparse.ArgumentTypeError(
                f"{flag} {text!r} is not allowed; allowed: an integer ≥ {low}"
            )
        return value

    return parse


def _seconds(flag: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not value > 0 or value == float("inf"):
            raise argparse.ArgumentTypeError(
                f"{flag} {text!r} is not allowed; allowed: a number of seconds > 0"
            )
        return value

    return parse


def _seed(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        value = -1
    if not 0 <= value < 1 << 64:
        raise argparse.ArgumentTypeError(
            f"--seed {text!r} is not allowed; allowed: an integer from 0 to 2**64-1"
        )
    return value


#: The families of coverage names (``linklab.check.features``), for ``--only``.
FAMILIES = (
    "allocation", "cc", "channel", "fec", "flow", "frame", "limit", "link", "loss", "lt",
    "media", "monitor", "netem", "overhead", "queue", "rate", "rlc", "size", "tcp",
    "topology", "workload",
)  # fmt: skip


def _coverage_name(text: str) -> str:
    family = text.split(":", 1)[0]
    if family not in FAMILIES or (
        ":" not in text and family not in ("monitor", "netem", "overhead")
    ):
        raise argparse.ArgumentTypeError(
            f"--only {text!r} is not allowed; allowed: a coverage name FAMILY:VALUE as "
            f"--coverage prints it, FAMILY one of {', '.join(FAMILIES)} "
            "(e.g. topology:frame, queue:pie)"
        )
    return text


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        description="Check linklab's models over random valid scenarios: every run must end "
        "cleanly (or be refused with a ScenarioError), receive nothing before it was sent or "
        "faster than its links allow, deliver no more than its links carry, make progress on "
        "lossless paths, be deterministic, stay within a bounded number of events and not "
        "hang. Failures are shrunk to minimal scenarios written as TOML (docs/checking.md).",
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--draws", type=_int_at_least("--draws", 1), metavar="N", help="check N random draws"
    )
    what.add_argument(
        "--replay",
        type=Path,
        metavar="FILE",
        help="check one scenario file again (a failure written by --out)",
    )
    p.add_argument(
        "--seed",
        type=_seed,
        default=None,
        metavar="S",
        help="the batch's seed (default 1); with --replay the run seed (default: the file's)",
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="write each failure's minimal scenario (TOML) into DIR",
    )
    p.add_argument(
        "--jobs",
        type=_int_at_least("--jobs", 1),
        default=2,
        metavar="J",
        help="worker processes (default 2)",
    )
    p.add_argument(
        "--first",
        type=_int_at_least("--first", 0),
        default=0,
        metavar="I",
        help="start at draw I of the batch (default 0)",
    )
    p.add_argument(
        "--timeout",
        type=_seconds("--timeout"),
        default=60.0,
        metavar="SECONDS",
        help="a draw not done after this long fails the `hang` property (default 60)",
    )
    p.add_argument(
        "--shrink",
        type=_int_at_least("--shrink", 0),
        default=3,
        metavar="K",
        help="shrink the first K failures of each property (default 3; the others "
        "are written as drawn)",
    )
    p.add_argument(
        "--shrink-time",
        type=_seconds("--shrink-time"),
        default=120.0,
        metavar="SECONDS",
        help="time spent shrinking one failure (default 120)",
    )
    p.add_argument(
        "--avoid-known",
        action="store_true",
        help="leave out the combinations of known, unfixed core bugs "
        "(linklab.check.KNOWN_BUGS), as the test suite's batch does",
    )
    p.add_argument(
        "--only",
        type=_coverage_name,
        action="append",
        default=[],
        metavar="NAME",
        help="check only draws that use NAME, a coverage name as --coverage prints it "
        "(e.g. topology:frame, queue:pie, link:rlc_am, cc:bbr); repeat to require several; "
        "--draws N then counts the draws checked",
    )
    p.add_argument(
        "--coverage", action="store_true", help="also print how often each model family was drawn"
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and not argv[0].startswith("-"):
        if argv[0] not in COMMANDS:
            known = ", ".join(sorted(COMMANDS)) or "none yet"
            print(
                f"{PROG}: error: unknown command {argv[0]!r}; allowed: --draws N, --replay FILE "
                f"(commands: {known}); see '{PROG} --help'",
                file=sys.stderr,
            )
            return EXIT_BAD_INPUT
        import importlib

        command: Any = importlib.import_module(COMMANDS[argv[0]])
        return int(command.main(argv[1:]))
    try:
        args = build_parser().parse_args(argv)
        if args.out is not None and args.out.exists() and not args.out.is_dir():
            raise UsageError(
                f"--out {str(args.out)!r} is a file; allowed: a directory (created if missing)"
            )
        if args.replay is not None and not args.replay.is_file():
            raise UsageError(f"--replay {str(args.replay)!r} is not a file")
        try:
            import hypothesis  # noqa: F401
        except ImportError:
            raise UsageError(
                "linklab.check needs hypothesis: pip install hypothesis (or the 'dev' extra)"
            ) from None
        from linklab import check

        if args.replay is not None:
            try:
                draw, outcome = check.replay(args.replay, args.seed, args.timeout)
            except (ValueError, KeyError, OSError) as e:
                raise UsageError(f"--replay {str(args.replay)!r}: {e}") from None
            return _print_replay(args.replay, draw, outcome)

        def note(line: str) -> None:
            if not args.quiet:
                print(f"  … {line}", file=sys.stderr, flush=True)

        report = check.check_random(
            args.draws,
            seed=1 if args.seed is None else args.seed,
            out=args.out,
            jobs=args.jobs,
            timeout=args.timeout,
            shrink_per_property=args.shrink,
            shrink_budget_s=args.shrink_time,
            first=args.first,
            avoid=frozenset(check.KNOWN_BUGS) if args.avoid_known else frozenset(),
            only=frozenset(args.only),
            progress=note,
        )
        if args.only and report.draws == 0:
            raise UsageError(
                f"--only {' '.join(args.only)}: none of draws {args.first}…{report.last_index} "
                "of the batch has that; allowed: names that --coverage prints"
            )
        print(check.render(report))
        if args.coverage:
            print(check.coverage(report))
        return EXIT_FAILED if report.failed else EXIT_OK
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _print_replay(path: Path, draw: object, outcome: object) -> int:
    from linklab.check import Draw, Outcome

    assert isinstance(draw, Draw) and isinstance(outcome, Outcome)
    print(f"linklab.check --replay {path} (seed {draw.seed}): {outcome.status}")
    if outcome.status == "refused":
        print(f"  refused: {outcome.refusal}")
    for prop, message in outcome.failures:
        print(f"  {prop}: {' '.join(message.split())}")
    return EXIT_FAILED if outcome.failures else EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
