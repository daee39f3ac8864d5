"""The ``linklab`` command.

Exit status: 0 success; 2 bad input (bad flag or value, unreadable scenario,
invalid scenario, unwritable output), with one line on stderr
``linklab: error: <what was wrong>; <what is allowed>``; 1 internal error (a bug
in the core); 3 a run whose packet account did not close (a bug in the core: a
packet counted nowhere or twice; ``linklab: internal error: packet account
broken …`` names the link or flow, the counts, the scenario and the seed); 130
interrupted (Ctrl-C). Outputs are written only after the run
succeeded, each atomically, so nothing already on disk is lost or corrupted.
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import io
import json
import math
import os
import re
import shlex
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from linklab import _checks, _core, _log, _path, _stream
from linklab._files import Staging, check_writable_dir, check_writable_file
from linklab._format import dumps_json, json_safe, text_table
from linklab._inputs import SEED_RANGE, check_seed, params_to_strings
from linklab._scenario import MAX_FILE_BYTES, read_scenario_file
from linklab.errors import (
    AccountingError,
    InternalError,
    ScenarioError,
    ScenarioFileError,
    did_you_mean,
    error_text,
    one_line,
    short_repr,
    with_suggestion,
)

__all__ = ["main"]

PROG = "linklab"
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 1
EXIT_ACCOUNTING = 3
#: ``linklab emulate``: the run finished (its summary printed) but a command of
#: ``--a``/``--b``/``--shell`` ended with a status other than 0 before the end.
EXIT_COMMAND_FAILED = 4
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad input: reported as one line on stderr, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit 2 (no usage dump), with
    ``did you mean`` for a mistyped subcommand, choice or flag."""

    #: Every flag of every command (set by :func:`build_parser`).
    flags: tuple[str, ...] = ()

    def error(self, message: str) -> NoReturn:
        text = f"{message}; see '{self.prog} --help'"
        unknown = re.match(r"unrecognized arguments: (-\S+)", message)
        if unknown:
            hint = did_you_mean(unknown[1].split("=")[0], self.flags)
            raise UsageError(f"{text}; {hint}" if hint else text)
        hinted = with_suggestion(message)
        raise UsageError(text + hinted[len(message) :])


# ---------------------------------------------------------------------------
# Argument types
# ---------------------------------------------------------------------------


def _seed(text: str) -> int:
    try:
        return check_seed(int(text, 10))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid seed {short_repr(text)}; allowed: {SEED_RANGE}"
        ) from None


def _out_path(flag: str, what: str) -> Callable[[str], str]:
    """An output path flag: an empty (or blank) path is refused; it meant the
    current directory, where a run or sweep wrote (and overwrote) its files."""

    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(
                f"invalid {flag} {short_repr(text)}; allowed: a non-empty path of {what}"
            )
        return text

    return parse


def _output_file(p: argparse.ArgumentParser, help: str = "FILE.png or FILE.svg") -> None:
    """The required ``-o/--output FILE`` of the plot and report commands."""
    p.add_argument(
        "-o",
        "--output",
        required=True,
        type=_out_path("--output", "a file"),
        metavar="FILE",
        help=help,
    )


def _assignment(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(
            f"malformed --set {short_repr(text)}; expected name=value, e.g. --set per=0.01"
        )
    return name.strip(), value


def _node_pcap_spec(text: str) -> tuple[str, str]:
    node, sep, file = text.partition(":")
    if not sep or not node or not file:
        raise argparse.ArgumentTypeError(
            f"malformed --pcap {short_repr(text, 1000)}; expected NODE:FILE, "
            "e.g. --pcap b:phone.pcap "
            "(NODE: a node that ends a flow, or a/b for the first flow's ends)"
        )
    return node, file


def _pcap_spec(text: str) -> tuple[str, str]:
    link, sep, file = text.rpartition(":")
    if not sep or not link or not file:
        raise argparse.ArgumentTypeError(
            f"malformed --pcap {short_repr(text, 1000)}; expected LINK:FILE, "
            "e.g. --pcap 'A->B:ab.pcap' "
            "(LINK is 'A->B' for one direction or 'A-B' for both, with @rx for where "
            "packets leave the link)"
        )
    return link, file


# ---------------------------------------------------------------------------
# Parser
# ---------------------------------------------------------------------------


def _add_seed_and_set(p: argparse.ArgumentParser) -> None:
    """The --seed and --set flags of the commands that run one scenario."""
    p.add_argument("--seed", type=_seed, metavar="N", help="run seed (0 to 2**64-1)")
    p.add_argument(
        "--set",
        dest="params",
        type=_assignment,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a [params] entry (repeatable)",
    )


def build_parser(*, reproductions: bool = True) -> argparse.ArgumentParser:
    """The ``linklab`` parser. ``reproductions=False`` leaves ``reproduce`` a bare command
    (its help line only): the reproductions' modules are not imported, which keeps a
    ``linklab run`` process ~5 MiB smaller and ~60 ms quicker to start (:func:`main` builds
    the full command only when the arguments name it)."""
    parser = _Parser(
        prog=PROG,
        description="linklab: a lab for TCP over wireless links.",
    )
    parser.add_argument("-V", "--version", action="version", version=f"{PROG} {_core.version()}")
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress bars, progress or stage lines on stderr (errors and warnings still)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print the traceback of an internal error (as LINKLAB_DEBUG=1 does)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = sub.add_parser(
        "run",
        help="run a scenario (or a path built from flags) and print its summary",
        description=(
            "Run a scenario file and print its summary. Without SCENARIO, the path flags "
            "(--rate, --delay, --loss, --queue, --trace-up/--trace-down; one link a-b) "
            "build a quick simulated path with one bulk TCP flow a->b "
            f"({_path.RUN_DURATION} unless --duration)."
        ),
    )
    run.add_argument("scenario", nargs="?", metavar="SCENARIO", help=SCENARIO_HELP)
    _add_seed_and_set(run)
    run.add_argument(
        "--duration",
        type=_duration,
        metavar="T",
        help="simulate this long (default: the scenario's)",
    )
    run.add_argument(
        "--json", action="store_true", help="print the summary as one JSON object (--format json)"
    )
    run.add_argument(
        "--format",
        choices=("text", "json", "csv"),
        help="text tables (default), one JSON object, or CSV: one row per aggregate, flow, "
        "link direction and queue (column 'table'; nested values as dotted columns)",
    )
    run.add_argument(
        "--brief",
        action="store_true",
        help="only the aggregate and the link directions that queue or lose "
        "(mean queue >= 0.5 packets, or any drop, ECN mark or loss); no per-flow rows",
    )
    run.add_argument(
        "--links",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only the link directions whose name matches PATTERN (shell-style, e.g. "
        "'L->*'; repeatable)",
    )
    run.add_argument(
        "--trace",
        type=_out_path("--trace", "a directory"),
        metavar="DIR",
        help="write Parquet traces into DIR",
    )
    run.add_argument(
        "--histograms",
        action="store_true",
        help="with --trace: also write every flow's delay and jitter histograms "
        "(histograms.parquet; bins of 1 ms, or the scenario's [histograms] widths)",
    )
    run.add_argument(
        "--pcap",
        type=_pcap_spec,
        action="append",
        default=[],
        metavar="LINK:FILE",
        help="capture LINK ('A->B' one direction, 'A-B' both; packets as they enter it, or "
        "with @rx as they leave it, e.g. 'A->B@rx') into FILE: pcapng with link and node "
        "names if FILE ends in .pcapng, else classic pcap (repeatable)",
    )
    _path.add_path_flags(run, "a path built from flags (instead of SCENARIO)")
    run.add_argument(
        "--print-scenario",
        action="store_true",
        help="print the scenario the path flags build (TOML) instead of running it",
    )
    run.set_defaults(func=_cmd_run)

    _add_emulate_parser(sub)
    _add_shell_parser(sub)

    schema = sub.add_parser(
        "schema",
        help="print the JSON Schema of scenario files",
        description="Print (or write) the JSON Schema of scenario files.",
    )
    schema.add_argument(
        "-o",
        "--output",
        type=_out_path("--output", "a file"),
        metavar="FILE",
        help="write the schema to FILE",
    )
    schema.set_defaults(func=_cmd_schema)
    _add_sweep_parser(sub)
    _add_plot_parsers(sub)
    if reproductions:
        _add_reproduce_parser(sub)
    else:
        sub.add_parser("reproduce", help=REPRODUCE_HELP)
    _add_model_parser(sub)
    completion = sub.add_parser(
        "completion",
        help="print a shell completion script",
        description=(
            "Print a completion script for SHELL: commands, flags and their choices, "
            "file names where a command takes a file. Install it, for bash: linklab "
            "completion bash > ~/.local/share/bash-completion/completions/linklab; for zsh: "
            "linklab completion zsh > ~/.zfunc/_linklab (with ~/.zfunc in $fpath)."
        ),
    )
    completion.add_argument("shell", choices=("bash", "zsh", "tcsh"), help="the shell")
    completion.set_defaults(func=_cmd_completion)
    _add_discovery_parsers(sub)
    _add_global_flags_everywhere(parser)
    return parser


#: The help of a SCENARIO argument.
SCENARIO_HELP = (
    "scenario TOML file, the name of a shipped scenario (see 'linklab scenarios'), "
    "or - for standard input"
)


def _add_global_flags_everywhere(parser: argparse.ArgumentParser) -> None:
    """-q and -v after the subcommand too (``linklab sweep ... -q``); collect every flag
    for ``did you mean``."""
    flags: set[str] = set()
    stack = [parser]
    while stack:
        p = stack.pop()
        for action in p._actions:
            flags.update(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    for flag in (("-q", "--quiet"), ("-v", "--verbose")):
                        child.add_argument(
                            *flag, action="store_true", default=argparse.SUPPRESS,
                            help=argparse.SUPPRESS,
                        )  # fmt: skip
                    stack.append(child)
    _Parser.flags = tuple(sorted(flags))


def _add_format(p: argparse.ArgumentParser, what: str = "the result") -> None:
    """``--json`` and ``--format text|json|csv`` of a command that prints a table."""
    p.add_argument("--json", action="store_true", help=f"print {what} as JSON (--format json)")
    p.add_argument("--format", choices=("text", "json", "csv"),
                   help="text tables (default), JSON, or CSV (one header row)")  # fmt: skip


def _csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """``rows`` as CSV: nested values as dotted columns, lists as JSON text."""
    flat: list[dict[str, Any]] = []
    for row in rows:
        out: dict[str, Any] = {}
        _flat("", dict(row), out)
        flat.append(out)
    columns = list(dict.fromkeys(k for row in flat for k in row))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(flat)
    return buf.getvalue()


def _emit(args: argparse.Namespace, doc: Any, rows: Sequence[Mapping[str, Any]]) -> bool:
    """Print ``doc`` (JSON) or ``rows`` (CSV) as ``--json``/``--format`` ask; False for text."""
    fmt = _output_format(args)
    if fmt == "json":
        print(json.dumps(json_safe(doc), allow_nan=False))
    elif fmt == "csv":
        sys.stdout.write(_csv(rows))
    return fmt != "text"


# ---------------------------------------------------------------------------
# Scenarios by name, from standard input; discovery (scenarios, params)
# ---------------------------------------------------------------------------


def _shipped_dir() -> Path:
    from importlib import resources

    return Path(os.fspath(resources.files("linklab") / "scenarios"))  # type: ignore[call-overload]


def _shipped_names() -> list[str]:
    folder = _shipped_dir()
    return sorted(p.stem for p in folder.glob("*.toml")) if folder.is_dir() else []


def _scenario_path(arg: str) -> str:
    """The file SCENARIO names: itself, or a shipped scenario of that name."""
    if arg != "-" and not os.path.lexists(arg) and "/" not in arg and os.sep not in arg:
        name = arg.removesuffix(".toml")
        if name in _shipped_names():
            return str(_shipped_dir() / f"{name}.toml")
    return arg


def _read_scenario(arg: str) -> tuple[str, str]:
    """(TOML text, base directory for its relative file names) of SCENARIO: a file,
    a shipped scenario's name, or ``-`` (standard input; files relative to the
    current directory)."""
    if arg == "-":
        data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise UsageError(
                f"the scenario on standard input has more than {MAX_FILE_BYTES} bytes; "
                "allowed: at most 64 MiB"
            )
        try:
            return data.decode("utf-8"), os.getcwd()
        except UnicodeDecodeError as e:
            raise UsageError(
                f"the scenario on standard input is not UTF-8 text ({e.reason} at byte "
                f"{e.start}); give a TOML scenario"
            ) from None
    path = _scenario_path(arg)
    try:
        text = read_scenario_file(path)
    except ScenarioFileError as e:
        hint = did_you_mean(arg.removesuffix(".toml"), _shipped_names())
        raise UsageError(
            str(e)
            + (f", or a shipped scenario's name ('linklab scenarios'): {hint}" if hint else "")
        ) from None
    return text, os.path.dirname(os.path.abspath(path))


def _add_discovery_parsers(sub: Any) -> None:
    sc = sub.add_parser(
        "scenarios",
        help="list the scenarios shipped with linklab",
        description="List the scenarios shipped with linklab, with their descriptions; run "
        "one by name ('linklab run dumbbell-red-ecn'), see its parameters with "
        "'linklab params NAME'.",
    )
    _add_format(sc, "the list")
    sc.set_defaults(func=_cmd_scenarios)
    pa = sub.add_parser(
        "params",
        help="list a scenario's [params] with defaults and comments",
        description="List the [params] of SCENARIO: each name, its default, its type and the "
        "comment beside it in the file; change one with --set NAME=VALUE (run, emulate) or "
        "sweep it with --param NAME=V1,V2,... (sweep).",
    )
    pa.add_argument("scenario", metavar="SCENARIO", help=SCENARIO_HELP)
    _add_format(pa, "the parameters")
    pa.set_defaults(func=_cmd_params)


def _describe(text: str) -> str:
    """A scenario's ``description``, else its first comment line."""
    import tomllib

    try:
        desc = tomllib.loads(text).get("description")
    except tomllib.TOMLDecodeError:
        desc = None
    if isinstance(desc, str) and desc.strip():
        return " ".join(desc.split())
    for line in text.splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""


def _cmd_scenarios(args: argparse.Namespace) -> int:
    rows = []
    for name in _shipped_names():
        text = read_scenario_file(_shipped_dir() / f"{name}.toml")
        rows.append({"name": name, "description": _describe(text)})
    if _emit(args, rows, rows):
        return 0
    table = [[r["name"], r["description"]] for r in rows]
    print(text_table(["scenario", "description"], table, left=2))
    return 0


def params_of(text: str) -> list[dict[str, Any]]:
    """The ``[params]`` of scenario ``text``: name, default, type and the comment
    beside (or above) each in the file, in file order."""
    import tomllib

    try:
        table = tomllib.loads(text).get("params", {})
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"not valid TOML ({one_line(str(e))}); give a TOML scenario") from None
    if not isinstance(table, dict):
        raise UsageError("[params] is not a table; see docs/scenarios.md")
    comments: dict[str, str] = {}
    inside, above = False, ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            inside = stripped.split("#")[0].strip() == "[params]"
            above = ""
            continue
        if not inside:
            continue
        if stripped.startswith("#"):
            above = (above + " " + stripped.lstrip("# ")).strip()
            continue
        m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s*=.*?(?:#\s*(.*))?$", stripped)
        if m:
            comments[m[1]] = (m[2] or above).strip()
        above = ""
    kinds = {bool: "boolean", int: "integer", float: "number", str: "text"}
    return [
        {"name": k, "default": v, "type": kinds.get(type(v), type(v).__name__),
         "comment": comments.get(k, "")}
        for k, v in table.items()
    ]  # fmt: skip


def _cmd_params(args: argparse.Namespace) -> int:
    from linklab._inputs import to_text

    text, _ = _read_scenario(args.scenario)
    rows = params_of(text)
    if _emit(args, rows, rows):
        return 0
    if not rows:
        print(f"{args.scenario}: no [params]")
        return 0
    table = [[r["name"], to_text(r["default"]), r["type"], r["comment"]] for r in rows]
    print(text_table(["param", "default", "type", "comment"], table, left=4))
    return 0


def _cmd_completion(args: argparse.Namespace) -> int:
    import shtab

    parser = build_parser()
    # File names where a command takes a scenario, a directory or a file.
    stack = [parser]
    while stack:
        p = stack.pop()
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack.extend(action.choices.values())
            elif action.metavar in ("SCENARIO", "FILE", "LINK:FILE", "NODE:FILE"):
                action.complete = shtab.FILE  # type: ignore[attr-defined]
            elif action.metavar in ("DIR", "SWEEP_DIR", "TRACE_DIR"):
                action.complete = shtab.DIRECTORY  # type: ignore[attr-defined]
    print(shtab.complete(parser, shell=args.shell))
    return 0


# ---------------------------------------------------------------------------
# Analytic models (`linklab model ...`)
# ---------------------------------------------------------------------------


def _probability(flag: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not 0.0 <= value <= 1.0:
            raise argparse.ArgumentTypeError(
                f"invalid {flag} {short_repr(text)}; allowed: a probability in [0, 1]"
            )
        return value

    return parse


def _npdu(text: str) -> int:
    from linklab.analytic import MAX_NPDU

    try:
        value = int(text, 10)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_NPDU:
        raise argparse.ArgumentTypeError(
            f"invalid --npdu {short_repr(text)}; allowed: an integer from 1 to {MAX_NPDU}"
        )
    return value


def _n_range(text: str) -> tuple[int, int]:
    from linklab.analytic import MAX_N

    lo_text, sep, hi_text = text.partition("..")
    if not sep:
        lo_text = hi_text = text
    try:
        lo, hi = int(lo_text, 10), int(hi_text, 10)
    except ValueError:
        lo, hi = 0, -1
    if not 1 <= lo <= hi <= MAX_N:
        raise argparse.ArgumentTypeError(
            f"invalid --n {short_repr(text)}; allowed: FROM..TO (or one N) with 1 <= FROM "
            f"<= TO <= {MAX_N}"
        )
    return lo, hi


def _target(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(
            f"invalid --target {short_repr(text)}; allowed: a residual loss probability in (0, 1]"
        )
    return value


def _add_channel_flags(p: argparse.ArgumentParser) -> None:
    opt = p.add_argument
    opt("--p-good", type=_probability("--p-good"), default=0.01, metavar="P",
        help="PDU error probability in GOOD (default 0.01, seed 001)")  # fmt: skip
    opt("--p-bad", type=_probability("--p-bad"), default=0.9, metavar="P",
        help="PDU error probability in BAD (default 0.9)")  # fmt: skip
    opt("--g", type=_probability("--g"), default=0.9, metavar="G",
        help="probability of staying GOOD for one frame (default 0.9)")  # fmt: skip
    opt("--b", type=_probability("--b"), default=0.9, metavar="B",
        help="probability of staying BAD for one frame (default 0.9)")  # fmt: skip
    opt("--npdu", type=_npdu, default=25, metavar="N",
        help="PDUs per SDU (default 25)")  # fmt: skip
    _add_format(p)


def _add_model_parser(sub: Any) -> None:
    model = sub.add_parser(
        "model",
        help="evaluate an analytic model",
        description="Evaluate an analytic model (see docs/models/arq-model.md).",
    )
    msub = model.add_subparsers(dest="model", metavar="MODEL", required=True)
    arq = msub.add_parser(
        "arq",
        help="selective-repeat ARQ over a Gilbert-Elliott channel: F(n), F_hat(n), E[eta]",
        description=(
            "Residual SDU loss F(n) after n transmissions per PDU, its approximation "
            "F_hat(n) (eq. 5) and the mean transmission rounds per SDU with M_t = n, "
            "for one SDU of NPDU PDUs (seed 001, section III-A)."
        ),
    )
    _add_channel_flags(arq)
    arq.add_argument("--n", type=_n_range, default=(1, 20), metavar="FROM..TO",
                     help="transmissions per PDU (default 1..20)")  # fmt: skip
    arq.set_defaults(func=_cmd_model_arq)
    lim = msub.add_parser(
        "arq-limit",
        help="smallest M_t whose approximate residual SDU loss F_hat(M_t) <= TARGET",
        description="Invert eq. (5) of seed 001: the smallest M_t >= 1 with F_hat(M_t) <= T.",
    )
    lim.add_argument("--target", type=_target, required=True, metavar="T",
                     help="target residual SDU loss, in (0, 1]")  # fmt: skip
    _add_channel_flags(lim)
    lim.set_defaults(func=_cmd_model_arq_limit)
    lv = msub.add_parser(
        "loss-volume",
        help="bytes one rate switch drops at a shared buffer (seed 003, Eqs. 1-6)",
        description=(
            "The continuous-flow model of seed 003 (Paliwal et al., section 3): a flow with a "
            "fixed window crosses a shared buffer served for it at BB, then its radio link, "
            "whose rate switches from BLL up to BLH; prints the case of Eq. 5, t_start, t_end, "
            "both thresholds and the loss volume of Eq. 6. One of --blh, --window, --rtt may "
            "be a range A..B:N (N evenly spaced values, ends included). Defaults: Fig. 5 "
            "(docs/models/loss-volume.md)."
        ),
    )
    opt = lv.add_argument
    opt("--bll", default="9.6kbit", metavar="RATE", help="radio rate before (default 9.6kbit)")
    opt("--bb", default="38.4kbit", metavar="RATE",
        help="the flow's rate at the shared buffer (default 38.4kbit)")  # fmt: skip
    opt("--blh", default="163.2kbit", metavar="RATE", help="radio rate after (default 163.2kbit)")
    opt("--window", default="32kB", metavar="SIZE", help="TCP window W (default 32kB)")
    opt("--buffer", default="5kB", metavar="SIZE", help="shared buffer space B (default 5kB)")
    opt("--rtt", default="300ms", metavar="TIME", help="round-trip propagation T (default 300ms)")
    _add_format(lv)
    lv.set_defaults(func=_cmd_model_loss_volume)
    mq = msub.add_parser(
        "mqam",
        help="uncoded M-QAM error rates, adaptive switching levels and link ceiling (seed 004)",
        description=(
            "Seed 004's uncoded M-QAM on 108-symbol frames: per modulation the symbol and "
            "frame error rates over AWGN at --snr and the ceiling (delivered bits per symbol "
            "and kbit/s at 1500 frames/s) over Rayleigh fading of that mean SNR times "
            "log-normal shadowing; the adaptive 4-256-QAM switching levels for a prediction "
            "NMSE and their ceiling (docs/models/mqam.md)."
        ),
    )
    opt = mq.add_argument
    opt("--snr", required=True, metavar="DB", help="mean symbol SNR, e.g. 16dB")
    opt("--shadow", default="0dB", metavar="DB", help="shadowing std. dev. (default 0dB)")
    opt("--nmse", default="0", metavar="X", help="prediction NMSE in [0, 1) (default 0)")
    opt("--qam8", default="cross", metavar="KIND",
        help="8-QAM constellation: cross (default) or rectangular")  # fmt: skip
    _add_format(mq)
    mq.set_defaults(func=_cmd_model_mqam)
    em = msub.add_parser(
        "emodel",
        help="ITU-T G.107 E-model: rating R and MOS of a voice call from delay and loss",
        description=(
            "The ITU-T G.107 E-model of a narrowband call: R = Ro - Is - Id - Ie,eff + A and "
            "the MOS of its Annex B, from the mouth-to-ear delay Ta (the echo path as long: "
            "T = Ta, Tr = 2 Ta, as [[media]] voice streams use) and the packet loss Ppl with a "
            "codec's G.113 Ie and Bpl; every other input at G.107's default unless set with "
            "--set NAME=VALUE. One of --delay, --loss may be a range A..B:N "
            "(docs/models/media.md)."
        ),
    )
    opt = em.add_argument
    opt("--delay", default="0ms", metavar="TIME",
        help="mouth-to-ear delay Ta, e.g. 150ms (default 0ms)")  # fmt: skip
    opt("--loss", default="0", metavar="PCT", help="packet loss Ppl in %% (default 0)")
    opt("--codec", default=None, metavar="NAME",
        help="g711, g711-plc, g729a or g723.1: its Ie and Bpl (default: G.107's "
             "Ie 0, Bpl 4.3)")  # fmt: skip
    opt("--burst-r", default="1", metavar="X", help="burst ratio BurstR (default 1: random)")
    opt("--set", action="append", default=[], metavar="NAME=VALUE",
        help="another G.107 input, e.g. --set telr=55 (repeatable)")  # fmt: skip
    _add_format(em)
    em.set_defaults(func=_cmd_model_emodel)
    ps = msub.add_parser(
        "ps",
        help="M/G/1 processor sharing: flow completion times and slowdown under load",
        description=(
            "Poisson flow arrivals sharing a link of capacity C equally at load rho: every "
            "size x takes E[T(x)] = x/(C(1-rho)) on average, a slowdown 1/(1-rho); "
            "rho/(1-rho) flows are in progress on average (docs/models/workloads.md). "
            "--load may be a range A..B:N."
        ),
    )
    opt = ps.add_argument
    opt("--load", required=True, metavar="RHO", help="load in (0, 1), or a range A..B:N")
    opt("--capacity", required=True, metavar="RATE", help="link capacity, e.g. 10Mbit")
    opt("--size", action="append", default=[], metavar="SIZE",
        help="a flow size whose E[T] to print, e.g. 20kB (repeatable)")  # fmt: skip
    _add_format(ps)
    ps.set_defaults(func=_cmd_model_ps)


_RANGE_FLAGS = ("blh", "window", "rtt")


def _values(name: str, text: str) -> list[str | float]:
    """``text`` as given, or the values of a range ``A..B:N``."""
    from linklab import _core
    from linklab.analytic import _KINDS

    if ".." not in text:
        return [text]
    if name not in _RANGE_FLAGS:
        raise UsageError(
            f"--{name} {short_repr(text)} is a range; allowed: a range only on --blh, "
            f"--window or --rtt"
        )
    span, sep, count = text.partition(":")
    lo, _, hi = span.partition("..")
    try:
        n = int(count) if sep else -1
    except ValueError:
        n = -1
    if not 2 <= n <= 1000:
        raise UsageError(
            f"invalid --{name} {short_repr(text)}; allowed: a value, or a range A..B:N with "
            f"2 <= N <= 1000"
        )
    try:
        a, b = (_core.parse_quantity(_KINDS[name], x.strip()) for x in (lo, hi))
    except ValueError as e:
        raise UsageError(f"invalid --{name} {short_repr(text)}: {e}") from None
    return [a + (b - a) * i / (n - 1) for i in range(n)]


def _emodel_values(flag: str, text: str, parse: Callable[[str], float]) -> list[float]:
    """``text`` as one value, or the values of a range ``A..B:N``."""
    if ".." not in text:
        return [parse(text)]
    span, sep, count = text.partition(":")
    lo, _, hi = span.partition("..")
    try:
        n = int(count) if sep else -1
    except ValueError:
        n = -1
    if not 2 <= n <= 1000:
        raise UsageError(
            f"invalid {flag} {short_repr(text)}; allowed: a value, or a range A..B:N with "
            f"2 <= N <= 1000"
        )
    a, b = parse(lo), parse(hi)
    return [a + (b - a) * i / (n - 1) for i in range(n)]


def _cmd_model_emodel(args: argparse.Namespace) -> int:
    from linklab import _core
    from linklab.analytic import EMODEL_INPUTS, EModelError, emodel, voice_codecs

    def delay(text: str) -> float:
        try:
            return 1e3 * float(_core.parse_quantity("time", text.strip()))
        except ValueError as e:
            raise UsageError(f"invalid --delay {short_repr(text)}: {e}") from None

    def number(flag: str) -> Callable[[str], float]:
        def parse(text: str) -> float:
            try:
                v = float(text.strip().removesuffix("%"))
            except ValueError:
                v = math.nan
            if not math.isfinite(v):
                raise UsageError(f"invalid {flag} {short_repr(text)}; allowed: a finite number")
            return v

        return parse

    if args.codec is not None and args.codec not in voice_codecs():
        raise UsageError(
            f"invalid --codec {short_repr(args.codec)}; allowed: {', '.join(voice_codecs())}"
        )
    extra: dict[str, float] = {}
    for item in args.set:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in EMODEL_INPUTS or name in ("ta", "ppl", "burst_r"):
            raise UsageError(
                f"invalid --set {short_repr(item)}; allowed: NAME=VALUE with NAME one of "
                f"{', '.join(n for n in EMODEL_INPUTS if n not in ('ta', 'ppl', 'burst_r'))} "
                f"(--delay, --loss and --burst-r set the others)"
            )
        extra[name] = number(f"--set {name}")(value)
    delays = _emodel_values("--delay", args.delay, delay)
    losses = _emodel_values("--loss", args.loss, number("--loss"))
    if len(delays) > 1 and len(losses) > 1:
        raise UsageError("ranges on --delay and --loss; allowed: a range on one of them")
    burst = number("--burst-r")(args.burst_r)
    rows = []
    for ta in delays:
        for ppl in losses:
            try:
                r = emodel(ta, codec=args.codec, ppl=ppl, burst_r=burst, **extra)
            except EModelError as e:
                flag, text = {"ta": ("--delay", args.delay), "ppl": ("--loss", args.loss),
                              "burst_r": ("--burst-r", args.burst_r)}.get(
                    e.name, (f"--set {e.name}", str(extra.get(e.name))))  # fmt: skip
                why = str(e).split(": ", 1)[-1]
                raise UsageError(f"invalid {flag} {short_repr(text)}; {why}") from None
            rows.append(r)
    table = [{"ta_ms": r["ta"], "ppl_pct": r["ppl"], "ie_eff": r["ie_eff"], "id": r["id"],
              "idd": r["idd"], "r": r["r"], "mos": r["mos"]} for r in rows]  # fmt: skip
    if _emit(args, rows[0] if len(rows) == 1 else {"rows": rows}, table):
        return 0
    head = ["Ta ms", "Ppl %", "Ie,eff", "Id", "Idd", "R", "MOS"]
    cells = [[f"{x['ta_ms']:.4g}", f"{x['ppl_pct']:.4g}", f"{x['ie_eff']:.2f}", f"{x['id']:.2f}",
              f"{x['idd']:.2f}", f"{x['r']:.2f}", f"{x['mos']:.2f}"] for x in table]  # fmt: skip
    print(text_table(head, cells))
    r0 = rows[0]
    print(f"codec {args.codec or '(G.107 default)'}: Ie {r0['ie']:g}, Bpl {r0['bpl']:g}, "
          f"BurstR {r0['burst_r']:g}; Ro {r0['ro']:.2f}, Is {r0['is']:.2f}")  # fmt: skip
    return 0


def _cmd_model_mqam(args: argparse.Namespace) -> int:
    from linklab.analytic import MqamError, mqam

    try:
        nmse = float(args.nmse)
    except ValueError:
        raise UsageError(f"invalid --nmse {args.nmse!r}; allowed: a number in [0, 1)") from None
    try:
        r = mqam(args.snr, args.shadow, nmse, args.qam8)
    except MqamError as e:
        raise UsageError(f"invalid --{e.name}: {str(e).split(': ', 1)[-1]}; "
                         f"allowed: {_MQAM_ALLOWED[e.name]}") from None  # fmt: skip
    if _emit(args, r, r["rows"]):
        return 0
    head = ["modulation", "bits", "SER (AWGN)", "FER (AWGN)", "ceiling bits/symbol", "kbit/s"]
    rows = [[x["modulation"], str(x["bits"]), f"{x['ser']:.3e}", f"{x['fer']:.3e}",
             f"{x['ceiling']:.3f}", f"{x['kbps']:.1f}"] for x in r["rows"]]  # fmt: skip
    print(text_table(head, rows))
    lv = ", ".join(f"{m} from {'-inf' if db is None else f'{db:.2f}'} dB" for m, db in r["levels"])
    print(f"adaptive 4-256-QAM (NMSE {r['nmse']:g}): {lv}")
    print(f"adaptive ceiling: {r['ceiling']:.3f} bits/symbol, {r['kbps']:.1f} kbit/s")
    return 0


_MQAM_ALLOWED = {
    "snr": "-20 to 60 dB, e.g. 16dB",
    "shadow": "0 to 20 dB",
    "nmse": "a number in [0, 1)",
    "qam8": "cross or rectangular",
}


def _cmd_model_ps(args: argparse.Namespace) -> int:
    from linklab.analytic import PsError, ps

    text = args.load
    if ".." in text:
        span, sep, count = text.partition(":")
        lo, _, hi = span.partition("..")
        try:
            a, b, n = float(lo), float(hi), int(count) if sep else -1
        except ValueError:
            a = b = 0.0
            n = -1
        if not 2 <= n <= 1000:
            raise UsageError(
                f"invalid --load {short_repr(text)}; allowed: a number in (0, 1), or a range "
                f"A..B:N with 2 <= N <= 1000"
            )
        loads = [a + (b - a) * i / (n - 1) for i in range(n)]
    else:
        try:
            loads = [float(text)]
        except ValueError:
            raise UsageError(
                f"invalid --load {short_repr(text)}; allowed: a number in (0, 1), or a range A..B:N"
            ) from None
    results = []
    for rho in loads:
        try:
            results.append(ps(rho, args.capacity, args.size))
        except PsError as e:
            raise UsageError(f"--{e.name}: {str(e).split(': ', 1)[-1]}") from None
    flat = [
        {"load": r["load"], "slowdown": r["slowdown"], "mean_in_system": r["mean_in_system"],
         **{f"mean_s_{x['size_bytes']:g}B": x["mean_s"] for x in r["rows"]}}
        for r in results
    ]  # fmt: skip
    if _emit(args, results[0] if len(results) == 1 else {"rows": results}, flat):
        return 0
    sizes = [x["size_bytes"] for x in results[0]["rows"]]
    head = ["load", "slowdown", "flows in progress"] + [f"E[T] {x:g} B s" for x in sizes]
    rows = [
        [f"{r['load']:.3g}", f"{r['slowdown']:.4g}", f"{r['mean_in_system']:.4g}"]
        + [f"{x['mean_s']:.4g}" for x in r["rows"]]
        for r in results
    ]
    print(text_table(head, rows))
    return 0


def _cmd_model_loss_volume(args: argparse.Namespace) -> int:
    from linklab.analytic import LossVolumeError, loss_volume

    given = {
        n: _values(n, getattr(args, n)) for n in ("bll", "bb", "blh", "window", "buffer", "rtt")
    }
    ranged = [n for n, v in given.items() if len(v) > 1]
    if len(ranged) > 1:
        raise UsageError(f"ranges on --{' and --'.join(ranged)}; allowed: a range on one of them")
    vary = ranged[0] if ranged else None
    rows = []
    for x in given[vary] if vary else [None]:
        kw = {n: v[0] for n, v in given.items()}
        if vary:
            kw[vary] = x
        try:
            r = loss_volume(**kw)  # type: ignore[arg-type]
        except LossVolumeError as e:
            raise UsageError(f"--{e.name}: {str(e).split(': ', 1)[-1]}") from None
        rows.append(r)
    if _emit(args, rows[0] if vary is None else {"vary": vary, "rows": rows}, rows):
        return 0
    unit = {"blh": ("blh kbit/s", lambda r: r["inputs"]["blh_bps"] / 1e3),
            "window": ("W bytes", lambda r: r["inputs"]["window_bytes"]),
            "rtt": ("T ms", lambda r: r["inputs"]["rtt_s"] * 1e3)}  # fmt: skip
    head = ["case", "t_start s", "t_end s", "W/(T+B/bb) kbit/s", "W/T kbit/s", "loss volume B"]
    if vary:
        head.insert(0, unit[vary][0])
    table = []
    for r in rows:
        cells = [
            str(r["case"]),
            f"{r['t_start_s']:.4g}",
            "-" if r["t_end_s"] is None else f"{r['t_end_s']:.4g}",
            f"{r['threshold_low_bps'] / 1e3:.4g}",
            f"{r['threshold_high_bps'] / 1e3:.4g}",
            f"{r['loss_volume_bytes']:.1f}" + (" (clamped)" if r["clamped"] else ""),
        ]
        if vary:
            cells.insert(0, f"{unit[vary][1](r):.4g}")
        table.append(cells)
    print(text_table(head, table))
    return 0


def _arq_args(args: argparse.Namespace) -> tuple[float, float, float, float, int]:
    if args.g == 1.0 and args.b == 1.0:
        raise UsageError(
            "--g and --b are both 1: the channel never changes state and has no "
            "stationary distribution; allowed: at most one of them equal to 1"
        )
    return args.p_good, args.p_bad, args.g, args.b, args.npdu


def _cmd_model_arq(args: argparse.Namespace) -> int:
    from linklab.analytic import arq

    n_from, n_to = args.n
    result = arq(*_arq_args(args), n_from, n_to)
    if _emit(args, result, result["rows"]):
        return 0
    rows = [
        [str(r["n"]), f"{r['F']:.6g}", f"{r['F_hat']:.6g}", f"{r['mean_tx_limited']:.6g}"]
        for r in result["rows"]
    ]
    print(text_table(["n", "F(n)", "F_hat(n)", "E[eta|n<=M_t=n]"], rows))
    mean = result["mean_tx"]
    print(
        f"lambda1 {result['lambda1']:.6g}  "
        f"E[eta] {'inf' if mean is None else format(mean, '.6g')} (unlimited M_t)"
    )
    return 0


def _cmd_model_arq_limit(args: argparse.Namespace) -> int:
    from linklab.analytic import LIMIT_CAP, arq, arq_limit

    params = _arq_args(args)
    m_t = arq_limit(*params, args.target)
    model = arq(*params, m_t, m_t)
    row = model["rows"][0]
    result = {
        "m_t": m_t,
        "target": args.target,
        "F_hat": row["F_hat"],
        "F": row["F"],
        "lambda1": model["lambda1"],
        "capped": m_t == LIMIT_CAP and row["F_hat"] > args.target,
    }
    if not _emit(args, result, [result]):
        note = f" (cap {LIMIT_CAP}: target not reachable)" if result["capped"] else ""
        print(f"M_t {m_t}{note}  F_hat(M_t) {row['F_hat']:.6g}  F(M_t) {row['F']:.6g}")
    return 0


#: The help line of ``linklab reproduce``.
REPRODUCE_HELP = "reproduce a published experiment and compare with the paper"


def _wants_reproductions(argv: Sequence[str]) -> bool:
    """Whether parsing ``argv`` needs the full ``reproduce`` command (its names, flags and
    help): when an argument is ``reproduce``, or ``completion`` (its script lists them)."""
    return any(a in ("reproduce", "completion") for a in argv)


def _add_reproduce_parser(sub: Any) -> None:
    from linklab.reproduce import REPRODUCTIONS

    rep = sub.add_parser(
        "reproduce",
        help=REPRODUCE_HELP,
        description="Reproduce a published experiment (see docs/reproductions/).",
    )
    rep.add_argument(
        "name",
        metavar="NAME",
        choices=list(REPRODUCTIONS),
        help="reproduction: "
        + ", ".join(f"{name} ({cls.short})" for name, cls in REPRODUCTIONS.items()),
    )
    rep.add_argument("--quick", action="store_true",
                     help="a subset, few short replications: indicative verdicts")  # fmt: skip
    _add_format(rep, "the results")
    rep.add_argument("--out", default=None, type=_out_path("--out", "a directory"), metavar="DIR",
                     help="output directory (default out/NAME)")  # fmt: skip
    rep.add_argument("--jobs", type=_positive_int("--jobs"), metavar="N", help="worker processes")
    rep.add_argument(
        "--experiments",
        metavar="LIST",
        help="comma-separated subset (default: all); "
        + "; ".join(f"{name}: {','.join(cls.experiments)}" for name, cls in REPRODUCTIONS.items()),
    )
    rep.set_defaults(func=_cmd_reproduce)


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from linklab.reproduce import REPRODUCTIONS, ReproduceError, reproduce

    allowed = ", ".join(REPRODUCTIONS[args.name].experiments)
    experiments = None
    if args.experiments is not None:
        experiments = [x.strip() for x in args.experiments.split(",") if x.strip()]
        if not experiments:
            raise UsageError(f"empty --experiments; allowed: {allowed}")
    _output_format(args)
    try:
        result, text = reproduce(
            args.name, args.out, quick=args.quick, jobs=args.jobs, experiments=experiments
        )
    except ReproduceError as e:
        raise UsageError(str(e)) from None
    rows = [
        {"table": name, **row}
        for name, table in (result.get("tables") or {}).items()
        for row in table.get("rows") or []
    ]
    if not _emit(args, result, rows):
        print(text, end="")
    return 1 if result["failed_runs"] else 0


def _add_sweep_parser(sub: Any) -> None:
    sweep = sub.add_parser(
        "sweep",
        help="run a parameter grid with replications; store runs, summarise with CIs",
        description=(
            "Run SCENARIO over a grid of [params] values, REPS times per point "
            "(replication r uses seed BASE+r at every point), store every run in "
            "DIR/store and write DIR/runs.parquet, DIR/summary.parquet, "
            "DIR/scenario.toml and DIR/meta.json. Running it again does only what "
            "is missing. See docs/sweeps.md."
        ),
    )
    sweep.add_argument("scenario", metavar="SCENARIO", help=SCENARIO_HELP)
    sweep.add_argument(
        "--param",
        dest="sweep_params",
        action="append",
        default=[],
        metavar="NAME=VALUES",
        help="a swept [params] entry: NAME=V1,V2,... or NAME=START:STOP:STEP (repeatable; "
        "the grid is their Cartesian product)",
    )
    opt = sweep.add_argument
    opt("--reps", type=_positive_int("--reps"), default=1, metavar="R",
        help="replications per grid point (default 1)")  # fmt: skip
    opt("--confidence", type=_confidence, default=0.95, metavar="C",
        help="confidence level of the Student-t intervals (default 0.95)")  # fmt: skip
    opt("--seed", type=_seed, default=1, metavar="BASE",
        help="base seed: replication r uses BASE+r (default 1)")  # fmt: skip
    opt("--jobs", type=_positive_int("--jobs"), default=None, metavar="N",
        help="local worker processes (default: every core)")  # fmt: skip
    opt("--backend", choices=("local", "dask"), default="local",
        help="where runs are computed (default local)")  # fmt: skip
    opt("--scheduler", metavar="ADDRESS",
        help="dask scheduler address, e.g. tcp://10.0.0.1:8786")  # fmt: skip
    opt("--metrics", action="append", default=None, metavar="PATTERN",
        help="keep only the per-object metric columns matching this shell-style pattern, "
             "e.g. 'flow[*].goodput_bps' or 'monitor.*' (repeatable; the run-level metrics "
             "are always kept; default: every column)")  # fmt: skip
    sweep.add_argument(
        "--out",
        required=True,
        type=_out_path("--out", "a directory"),
        metavar="DIR",
        help="output directory",
    )
    _add_format(sweep, "the summary rows")
    sweep.set_defaults(func=_cmd_sweep)


def _positive_int(flag: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            value = 0
        if value < 1:
            raise argparse.ArgumentTypeError(
                f"invalid {flag} {short_repr(text)}; allowed: an integer >= 1"
            )
        return value

    return parse


def _confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(
            f"invalid --confidence {short_repr(text)}; allowed: a number strictly between 0 "
            f"and 1, e.g. 0.95"
        )
    return value


def _cmd_sweep(args: argparse.Namespace) -> int:
    from linklab.sweep import (
        SweepError,
        SweepInterrupted,
        parse_param_spec,
        render_summary_table,
        sweep,
    )

    if args.backend == "dask" and not args.scheduler:
        raise UsageError(
            "--backend dask needs --scheduler ADDRESS; give the address of a running "
            "dask scheduler, e.g. --scheduler tcp://127.0.0.1:8786"
        )
    if args.backend != "dask" and args.scheduler:
        raise UsageError("--scheduler is only used with --backend dask; add --backend dask")
    output_format = _output_format(args)
    _check_output(check_writable_dir, args.out, "--out directory")
    scenario: Any = Path(_scenario_path(args.scenario))
    if args.scenario == "-":
        scenario, _ = _read_scenario("-")
    try:
        params: dict[str, list[Any]] = {}
        for spec in args.sweep_params:
            name, values = parse_param_spec(spec)
            if name in params:
                raise UsageError(f"--param {name} given twice; give each parameter once")
            params[name] = values
        if not params:
            raise UsageError("no --param given; give at least one, e.g. --param per=0,0.01,0.1")
        result = sweep(
            scenario,
            params,
            reps=args.reps,
            confidence=args.confidence,
            seed=args.seed,
            jobs=args.jobs,
            backend=args.backend,
            scheduler=args.scheduler,
            out=args.out,
            progress=not _log.quiet,
            metrics=args.metrics,
        )
    except SweepError as e:
        raise UsageError(str(e)) from None
    except SweepInterrupted as e:
        print(
            f"{PROG}: interrupted: {e.finished} of {e.total} runs finished and are kept in "
            f"{e.store}; run the same command again to do the rest",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED

    names = list(params)
    if output_format == "json":
        rows = [json_safe(r) for r in result.summary.iter_rows(named=True)]
        print(json.dumps(rows))
    elif output_format == "csv":
        sys.stdout.write(_csv(list(result.summary.iter_rows(named=True))))
    else:
        print(render_summary_table(result.summary, names, args.confidence))
        print(
            f"\n{result.runs.height} runs ({result.executed} run now, {result.reused} reused) "
            f"-> {args.out}"
        )
    sys.stdout.flush()  # the tables first, then what they hide
    for line in result.warnings:
        _log.warning(line)
    if result.failed:
        import polars as pl

        # The first distinct errors, each with the parameters of a run it stopped.
        seen: dict[str, tuple[int, str]] = {}
        for row in result.runs.filter(pl.col("error").is_not_null()).iter_rows(named=True):
            msg = one_line(str(row["error"]))
            where = " ".join(f"{n}={row.get(n)}" for n in names)
            count, first = seen.get(msg, (0, where))
            seen[msg] = (count + 1, first)
        for msg, (count, where) in list(seen.items())[:3]:
            runs = "run" if count == 1 else "runs"
            print(f"{PROG}: {count} {runs} failed (e.g. {where or 'seed'}): {msg}", file=sys.stderr)
        more = f" ({len(seen) - 3} more distinct errors)" if len(seen) > 3 else ""
        _fail(
            f"{result.failed} of {result.runs.height} runs failed{more}; every error is in "
            f"{Path(args.out) / 'runs.parquet'} (columns status, error)"
        )
        return EXIT_INTERNAL
    return 0


# ---------------------------------------------------------------------------
# plot, plot-trace, report (linklab.plots, linklab.report; see docs/plots.md)
# ---------------------------------------------------------------------------


def _add_plot_parsers(sub: Any) -> None:
    plot = sub.add_parser(
        "plot",
        help="plot a metric of a sweep against a parameter, or goodput vs delay",
        description=(
            "Plot metric --y (mean with confidence-interval error bars) against swept "
            "parameter --x, one line per value of --hue, one panel per combination of the "
            "other parameters that vary (or fix them with --where). With --scatter: one "
            "point per configuration, metric --y (default goodput_bps) against metric --x "
            "(default delay_mean_s), coloured by --hue. See docs/plots.md."
        ),
    )
    plot.add_argument("dir", metavar="DIR", help="sweep directory (from 'linklab sweep')")
    plot.add_argument("--x", metavar="NAME", help="swept parameter (with --scatter: a metric)")
    plot.add_argument("--y", metavar="METRIC", help="metric, e.g. goodput_bps")
    plot.add_argument("--hue", metavar="NAME", help="parameter: one line (colour) per value")
    plot.add_argument(
        "--where",
        type=_where_item,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="keep only sweep points with this parameter value (repeatable)",
    )
    plot.add_argument("--scatter", action="store_true", help="metric vs metric per configuration")
    _output_file(plot)
    plot.set_defaults(func=_cmd_plot)

    trace = sub.add_parser(
        "plot-trace",
        help="plot the queue, cwnd and sequence-number traces of 'linklab run --trace'",
        description=(
            "Three stacked panels on one time axis: queue occupancy per link (links whose "
            "queue ever held more than one packet, or --link), cwnd per flow, sequence "
            "numbers sent/received/dropped per flow. See docs/plots.md."
        ),
    )
    trace.add_argument("dir", metavar="TRACEDIR", help="directory from 'linklab run --trace'")
    trace.add_argument("--link", dest="links", action="append", metavar="LINK",
                       help="queue of this link direction, e.g. 'L->R' (repeatable)")  # fmt: skip
    trace.add_argument("--flow", dest="flows", action="append", metavar="ID",
                       help="only this flow id (repeatable)")  # fmt: skip
    _output_file(trace)
    trace.set_defaults(func=_cmd_plot_trace)

    fct = sub.add_parser(
        "plot-fct",
        help="plot the flow completion times of a workload run ('linklab run --trace')",
        description=(
            "Two panels from the fct table of a scenario with [[workloads]]: the CDF of "
            "the flow completion times per workload, and the slowdown by flow size (mean "
            "and p99 per size bucket). See docs/models/workloads.md."
        ),
    )
    fct.add_argument("dir", metavar="TRACEDIR", help="directory from 'linklab run --trace'")
    _output_file(fct)
    fct.set_defaults(func=_cmd_plot_fct)

    report = sub.add_parser(
        "report",
        help="write a self-contained HTML report of a sweep",
        description=(
            "Write one self-contained HTML file (figures embedded): scenario, parameter "
            "grid, summary table with confidence intervals, failed runs, plots. "
            "See docs/plots.md."
        ),
    )
    report.add_argument("dir", metavar="DIR", help="sweep directory (from 'linklab sweep')")
    _output_file(report, help="FILE.html")
    report.set_defaults(func=_cmd_report)


def _where_item(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(
            f"malformed --where {short_repr(text)}; expected NAME=VALUE, e.g. --where flows=10"
        )
    return name.strip(), value.strip()


def _cmd_plot(args: argparse.Namespace) -> int:
    from linklab.plots import PlotError, check_output, plot_metric, plot_scatter

    where = dict(args.where)
    try:
        check_output(args.output)
        if args.scatter:
            plot_scatter(
                args.dir,
                x=args.x or "delay_mean_s",
                y=args.y or "goodput_bps",
                label=args.hue,
                out=args.output,
                where=where,
            )
        else:
            if not args.x or not args.y:
                raise UsageError(
                    "plot needs --x NAME and --y METRIC; e.g. --x per --y goodput_bps "
                    "(or --scatter for goodput vs delay)"
                )
            plot_metric(args.dir, args.x, args.y, hue=args.hue, out=args.output, where=where)
    except PlotError as e:
        raise UsageError(str(e)) from None
    return 0


def _cmd_plot_trace(args: argparse.Namespace) -> int:
    from linklab.plots import PlotError, check_output, plot_trace

    try:
        check_output(args.output)
        plot_trace(args.dir, out=args.output, links=args.links, flows=args.flows)
    except PlotError as e:
        raise UsageError(str(e)) from None
    return 0


def _cmd_plot_fct(args: argparse.Namespace) -> int:
    from linklab.plots import PlotError, check_output
    from linklab.workloads import plot_fct

    try:
        check_output(args.output)
        plot_fct(args.dir, out=args.output)
    except PlotError as e:
        raise UsageError(str(e)) from None
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from linklab.plots import PlotError
    from linklab.report import write_report

    try:
        write_report(args.dir, args.output)
    except PlotError as e:
        raise UsageError(str(e)) from None
    return 0


# ---------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------


def _cmd_run(args: argparse.Namespace) -> int:
    output_format = _output_format(args)
    # Check outputs before a possibly long run; write them only after it.
    trace_dir: str | None = args.trace
    if trace_dir is not None:
        _check_output(check_writable_dir, trace_dir, "--trace directory")
    elif args.histograms:
        raise UsageError(
            "--histograms writes histograms.parquet beside the traces; give --trace DIR too"
        )
    pcap_files: dict[str, str] = {}
    for link, file in args.pcap:
        _check_output(check_writable_file, file, "--pcap file")
        if file in pcap_files.values():
            raise UsageError(
                f"--pcap file {short_repr(file, 1000)} given twice; give each link its own file"
            )
        if link in pcap_files:
            raise UsageError(
                f"--pcap link {short_repr(link)} given twice; capture each link into one file"
            )
        pcap_files[link] = file

    source: Any
    flags = _path.given_flags(args)
    if args.scenario is None:
        if not flags:
            raise UsageError(
                "no SCENARIO given; give a scenario file, a shipped scenario's name "
                "('linklab scenarios') or -, or build a path by flags, e.g. "
                "linklab run --rate 10Mbit --delay 20ms"
            )
        if args.params:
            raise UsageError(
                f"--set {args.params[0][0]}: a path built from flags has no [params]; "
                "give the value by its flag (see 'linklab run --help')"
            )
        source = _path.path_scenario(
            flags, args.duration or _path.RUN_DURATION, ["linklab", "run", *_path_words(args)]
        )
        if args.print_scenario:
            sys.stdout.write(source)
            return 0
        base_dir = os.getcwd()
    else:
        if flags:
            raise UsageError(
                f"{next(iter(flags))} builds a path of its own and {args.scenario!r} is a "
                "scenario; give one of them (change a scenario's values with --set)"
            )
        if args.print_scenario:
            raise UsageError(
                "--print-scenario prints the path the flags build; with a SCENARIO, "
                "drop it (the file is the scenario)"
            )
        source, base_dir = _read_scenario(args.scenario)
        if args.duration is not None:
            source = _with_duration(source, args.duration)
    try:
        # Traces and captures stream to their files while the run goes on.
        summary, _, _ = _stream.run(
            source,
            seed=args.seed,
            params=params_to_strings(dict(args.params)) or None,
            trace_dir=trace_dir,
            pcap_files=pcap_files,
            base_dir=base_dir,
            histograms=args.histograms,
        )
    except ScenarioError as e:
        if args.scenario is None:
            raise UsageError(_path.flag_error(e, flags)) from None
        raise UsageError(f"{args.scenario}: {error_text(e)}") from None
    except _stream.OutputError as e:
        raise UsageError(
            f"cannot write --{e.what} {e.path!r}: {e.reason}; "
            "give a path in an existing, writable directory"
        ) from None

    warnings = _checks.warnings(summary)
    summary = select_rows(summary, brief=args.brief, links=args.links)
    if output_format == "json":
        print(dumps_json(summary))
    elif output_format == "csv":
        sys.stdout.write(render_csv(summary))
    else:
        print(render_summary(summary))
    sys.stdout.flush()  # the summary first, then what it hides
    for line in warnings:
        _log.warning(line)
    return 0


def _with_duration(source: str, duration: str) -> Any:
    """``source`` with its top-level ``duration`` replaced (as a dict; TOML that does not
    parse is left for the core to report)."""
    import tomllib

    try:
        doc = tomllib.loads(source)
    except tomllib.TOMLDecodeError:
        return source
    doc["duration"] = duration
    return doc


def _output_format(args: argparse.Namespace) -> str:
    if args.json and args.format not in (None, "json"):
        raise UsageError(f"--json and --format {args.format} disagree; give one of them")
    return "json" if args.json else args.format or "text"


def _busy(link: dict[str, Any], queue: dict[str, Any]) -> bool:
    """Whether a link direction queues or loses (what ``--brief`` keeps)."""
    drops = queue.get("drops") or {}
    counts = [link.get("lost"), queue.get("ecn_marks"), *drops.values()]
    if any(isinstance(c, int | float) and c > 0 for c in counts):
        return True
    mean = queue.get("mean_packets")
    return isinstance(mean, int | float) and mean >= 0.5


def select_rows(
    summary: dict[str, Any], *, brief: bool = False, links: Sequence[str] = ()
) -> dict[str, Any]:
    """``summary`` with only the link directions (and their queues) named by one of the
    shell-style ``links`` patterns (all when empty) and, with ``brief``, that queue or
    lose, and without per-flow rows."""
    if not brief and not links:
        return summary
    queues = {q.get("link"): q for q in summary.get("queues") or []}
    keep = {
        name
        for x in summary.get("links") or []
        if (name := str(x.get("name", "")))
        and (not links or any(fnmatch.fnmatchcase(name, p) for p in links))
        and (not brief or _busy(x, queues.get(name) or {}))
    }
    out = dict(summary)
    out["links"] = [x for x in summary.get("links") or [] if x.get("name") in keep]
    out["queues"] = [q for q in summary.get("queues") or [] if q.get("link") in keep]
    if brief:
        out.pop("flows", None)
    return out


def _flat(prefix: str, value: Any, into: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flat(f"{prefix}.{k}" if prefix else str(k), v, into)
    elif isinstance(value, list):
        into[prefix] = json.dumps(json_safe(value))
    else:
        into[prefix] = json_safe(value)


def render_csv(summary: dict[str, Any]) -> str:
    """The summary as one CSV table: a row for the aggregate, each flow, each link
    direction and each queue, told apart by the first column ``table``; nested values
    are dotted columns (``drops.overflow``), lists JSON text, missing values empty."""
    rows: list[dict[str, Any]] = []
    for table, items in (
        ("aggregate", [summary.get("aggregate") or {}]),
        ("flow", summary.get("flows") or []),
        ("link", summary.get("links") or []),
        ("queue", summary.get("queues") or []),
    ):
        for item in items:
            row: dict[str, Any] = {"table": table}
            _flat("", item, row)
            rows.append(row)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _duration(text: str) -> str:
    try:
        seconds = _core.parse_quantity("time", text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"invalid --duration {short_repr(text)}: {e}") from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError(
            f"invalid --duration {short_repr(text)}; allowed: above 0 s"
        )
    return text


def _add_emulate_parser(sub: Any) -> None:
    emu = sub.add_parser(
        "emulate",
        help="run a scenario live: kernel TCP through its link models",
        description=(
            "Run a scenario live: real Linux TCP stacks in network namespaces, their "
            "packets carried through the scenario's link models in real time (needs "
            "root and /dev/net/tun; see docs/emulation.md). Each [[flows]] entry is a "
            "kernel TCP connection with its cc, unless --a/--b/--shell run your own "
            "programs. With --replay DIR, replay a recording in simulated time instead."
        ),
    )
    emu.add_argument("scenario", nargs="?", metavar="SCENARIO", help=SCENARIO_HELP)
    _add_seed_and_set(emu)
    emu.add_argument(
        "--duration", type=_duration, metavar="T", help="run this long (default: the scenario's)"
    )
    _add_format(emu, "the summary")
    emu.add_argument(
        "--trace",
        type=_out_path("--trace", "a directory"),
        metavar="DIR",
        help="write tcp_info.parquet into DIR",
    )
    emu.add_argument(
        "--record",
        type=_out_path("--record", "a directory"),
        metavar="DIR",
        help="store every arrival and decision in DIR for --replay",
    )
    emu.add_argument(
        "--replay",
        metavar="DIR",
        help="replay the recording in DIR through the same links in simulated time",
    )
    emu.add_argument(
        "--a",
        metavar="CMD",
        help="run CMD (with sh -c) in the first flow's sender namespace instead of the "
        "built-in traffic; $LINKLAB_B is the receiver's address; what CMD starts ends "
        "with it; exit status 4 if it exits non-zero before the end of the run",
    )
    emu.add_argument(
        "--b", metavar="CMD", help="run CMD in the first flow's receiver namespace (see --a)"
    )
    emu.add_argument(
        "--shell",
        metavar="NODE",
        help="an interactive shell in NODE's namespace ('a'/'b': the first flow's ends); "
        "the run ends when it exits",
    )
    emu.add_argument(
        "--pcap",
        type=_node_pcap_spec,
        action="append",
        default=[],
        metavar="NODE:FILE",
        help="write what NODE's kernel sent and received to FILE (pcap, raw IP; NODE may "
        "be a or b); repeatable",
    )
    emu.add_argument(
        "--linux-defaults",
        action="store_true",
        help="leave kernel TCP as Linux ships it instead of applying the scenario's [tcp] "
        "(SACK, timestamps, ECN, initial window, min RTO, MSS)",
    )
    emu.add_argument(
        "--kernel",
        type=_kernel_knob,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change a kernel setting in every namespace (never on the host): a sysctl "
        "under net.ipv4. (e.g. net.ipv4.tcp_recovery=0), quickack=1 (no "
        "delayed ACKs), pacing=1 (pace any congestion control), gso_max_segs=1 (no GSO); "
        "repeatable",
    )
    emu.set_defaults(func=_cmd_emulate)


def _live_progress(args: argparse.Namespace, source: str) -> Any:
    """Progress over a live run's seconds: a bar on a terminal, a line every few
    seconds elsewhere (as ``sweep`` shows its runs); plain lines while commands of
    ``--a``/``--b`` may write to the terminal, nothing with ``--shell`` or ``-q``."""
    from linklab.sweep import Progress, _progress_mode

    mode = "off" if args.shell is not None else _progress_mode(not _log.quiet)
    if mode == "bar" and (args.a or args.b):
        mode = "lines"
    return Progress.clock(mode, _run_seconds(args, source), "emulate")


def _run_seconds(args: argparse.Namespace, source: str) -> float | None:
    """How long the live run lasts (``--duration`` or the scenario's), if known."""
    import re
    import tomllib

    text = args.duration
    try:
        if text is None:
            doc = tomllib.loads(source)
            text = str(doc.get("duration", ""))
            ref = re.fullmatch(r"\$\{(\w+)\}", text)
            if ref:
                given = dict(args.params)
                text = str(given.get(ref[1], doc.get("params", {}).get(ref[1], "")))
        return float(_core.parse_quantity("time", text))
    except (ValueError, TypeError, AttributeError, tomllib.TOMLDecodeError):
        return None


def _kernel_knob(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r}: give KEY=VALUE, e.g. net.ipv4.tcp_recovery=0 or quickack=1"
        )
    return key.strip(), value.strip()


def _cmd_emulate(args: argparse.Namespace) -> int:
    from linklab import emulate as live

    if args.replay is not None:
        extra = [
            f for f, v in (("SCENARIO", args.scenario), ("--record", args.record)) if v is not None
        ]
        extra += [
            "--" + f.replace("_", "-")
            for f in ("a", "b", "shell", "trace", "duration", "linux_defaults", "pcap", "kernel")
            if getattr(args, f)
        ]
        extra += ["--set"] * bool(args.params) + ["--seed"] * (args.seed is not None)
        if extra:
            raise UsageError(
                f"--replay takes the scenario, parameters and seed from its recording; "
                f"drop {', '.join(extra)}"
            )
        try:
            out = live.replay(args.replay)
        except (live.EmulationError, ScenarioError) as e:
            raise UsageError(error_text(e)) from None
        if _output_format(args) == "json":
            print(json.dumps({"replay": out}))
        else:
            first = ", ".join(f"packet {u} on link {ln}" for u, ln in out["first"])
            print(
                f"replay: {out['packets']} decisions, {out['mismatches']} mismatches"
                + (f" (first: {first})" if first else "")
            )
        return 0 if out["mismatches"] == 0 else EXIT_INTERNAL
    if args.scenario is None:
        raise UsageError(
            "no SCENARIO given; emulate a scenario file, or replay a recording with --replay DIR"
        )
    if args.shell is not None and (args.a or args.b):
        raise UsageError("--shell replaces --a/--b; give one or the other")
    for flag, where in (("--trace", args.trace), ("--record", args.record)):
        if where is not None:
            _check_output(check_writable_dir, where, f"{flag} directory")
    pcap: dict[str, str] = {}
    for node, file in args.pcap:
        _check_output(check_writable_file, file, "--pcap file")
        if file in pcap.values() or node in pcap:
            raise UsageError(
                f"--pcap {node}:{file} repeats a node or a file; give each node its own file"
            )
        pcap[node] = file
    source, base_dir = _read_scenario(args.scenario)
    commands = [(side, cmd) for side, cmd in (("a", args.a), ("b", args.b)) if cmd]
    try:
        with _live_progress(args, source):
            result = live.emulate_raw(
                source,
                seed=args.seed,
                params=params_to_strings(dict(args.params)) or None,
                duration=args.duration,
                record_dir=args.record,
                trace_dir=args.trace,
                commands=commands,
                shell=args.shell,
                base_dir=base_dir,
                linux_defaults=args.linux_defaults,
                pcap=pcap,
                kernel=dict(args.kernel) or None,
            )
    except ScenarioError as e:
        raise UsageError(f"{args.scenario}: {error_text(e)}") from None
    except live.EmulationError as e:
        raise UsageError(f"{args.scenario}: {error_text(e)}") from None
    summary = result.summary
    output_format = _output_format(args)
    if output_format == "json":
        print(dumps_json(summary))
    elif output_format == "csv":
        sys.stdout.write(render_csv(summary))
    else:
        print(render_summary(summary))
    emu = summary["emulation"]
    if emu["tun_drops"]:
        _log.warning(
            f"the kernel dropped {emu['tun_drops']} packets at the TUN devices "
            "(the emulator fell behind); the results understate what the link carries"
        )
    failed = [c for c in emu.get("commands") or [] if c.get("failed")]
    if failed:
        _fail(
            "; ".join(_command_failure(c) for c in failed)
            + " (a command must exit with status 0, or still run at the end of the run; "
            f"exit status {EXIT_COMMAND_FAILED})"
        )
        return EXIT_COMMAND_FAILED
    return 0


def _path_words(args: argparse.Namespace) -> list[str]:
    """The path flags and ``--duration`` as given (for the built scenario's description)."""
    words = [w for k, v in _path.given_flags(args).items() for w in (k, v)]
    return words + (["--duration", args.duration] if args.duration else [])


def _add_shell_parser(sub: Any) -> None:
    sh = sub.add_parser(
        "shell",
        help="run a command (or a shell) behind a live emulated path built from flags",
        description=(
            "Run CMD (or, without one, an interactive $SHELL) in the namespace of node a, "
            "behind a live emulated path to node b built from the path flags, as "
            "Mahimahi's mm-delay/mm-link/mm-loss shells do: "
            "linklab shell --rate 10Mbit --delay 20ms -- CMD. $LINKLAB_B is the far "
            "end's address; --b runs a command there (a server). The exit status is "
            "CMD's. Kernel TCP stays as Linux "
            "ships it. Equivalent to 'linklab emulate' of the scenario --print-scenario "
            "shows, with --a CMD or --shell a (and --b) and --linux-defaults. Needs root and "
            "/dev/net/tun (docs/emulation.md)."
        ),
    )
    _path.add_path_flags(sh, "the path (one link a-b; up is a->b, down is b->a)")
    sh.add_argument(
        "--duration",
        type=_duration,
        metavar="T",
        help=f"end the path (and kill CMD) after T; default {SHELL_DURATION}, the longest "
        "a live run may last",
    )
    sh.add_argument(
        "--b",
        metavar="CMD",
        help="also run CMD (with sh -c) at b, the far end, e.g. a server: --b 'iperf3 -s'; "
        "it is killed when the command at a (or the shell) ends",
    )
    sh.add_argument("--seed", type=_seed, metavar="N", help="seed of the path's random loss")
    sh.add_argument(
        "--print-scenario",
        action="store_true",
        help="print the scenario the path flags build (TOML) instead of running it",
    )
    sh.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        metavar="-- CMD ...",
        help="the command and its arguments (default: $SHELL, interactive)",
    )
    sh.set_defaults(func=_cmd_shell)


#: How long ``linklab shell`` keeps the path without ``--duration``: the most a live
#: run may last.
SHELL_DURATION = "3600s"


def _cmd_shell(args: argparse.Namespace) -> int:
    from linklab import emulate as live

    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    flags = _path.given_flags(args)
    far = ["--b", args.b] if args.b is not None else []
    words = ["linklab", "shell", *_path_words(args), *far, *(["--", *command] if command else [])]
    # The scenario --print-scenario shows runs as long as `linklab run` would; the
    # shell itself lasts until CMD exits (or --duration).
    printed = _path.path_scenario(flags, args.duration or _path.RUN_DURATION, words)
    if not flags:
        raise UsageError(
            "no path given; build one by flags, e.g. linklab shell --rate 10Mbit --delay "
            "20ms -- CMD (see 'linklab shell --help')"
        )
    if args.print_scenario:
        sys.stdout.write(printed)
        return 0
    source = _path.path_scenario(flags, args.duration or SHELL_DURATION, words)
    line = shlex.join(command)
    if not command and not _log.quiet:
        print(
            f"{PROG} shell: a shell at a behind the path {shlex.join(_path_words(args))} "
            "to b (its address in $LINKLAB_B); exit it to end",
            file=sys.stderr,
        )
    try:
        result = live.emulate_raw(
            source,
            seed=args.seed,
            commands=([("a", line)] if command else []) + ([("b", args.b)] if args.b else []),
            shell=None if command else "a",
            lead="a" if command else "shell",
            base_dir=os.getcwd(),
            linux_defaults=True,
        )
    except ScenarioError as e:
        raise UsageError(_path.flag_error(e, flags)) from None
    except live.EmulationError as e:
        raise UsageError(f"{PROG} shell: {error_text(e)}") from None
    emu = result.summary["emulation"]
    if emu["tun_drops"]:
        _log.warning(
            f"the kernel dropped {emu['tun_drops']} packets at the TUN devices "
            "(the emulator fell behind): the path was slower than asked"
        )
    ran = next(c for c in emu["commands"] if c["name"] in ("a", "shell"))
    far_end = next((c for c in emu["commands"] if c["name"] == "b"), None)
    if far_end is not None and far_end.get("failed"):
        _log.warning(_command_failure(far_end))
    if ran.get("killed_at_end"):
        _log.warning(
            f"the path ended after {args.duration or SHELL_DURATION} with the command "
            "still running; it was killed"
        )
    # The status a shell gives: the command's own, 128 + N for a signal N (SIGKILL
    # for a command the end of --duration killed).
    status = ran.get("exit_status")
    if status is not None:
        return int(status)
    sig = ran.get("signal")
    if sig is None and not ran.get("killed_at_end"):
        raise InternalError(f"the command's end is not in the summary: {ran}")
    return 128 + int(sig if sig is not None else signal.SIGKILL)


#: What ``sh`` means by these exit statuses.
_SH_STATUS = {126: "sh: not executable", 127: "sh: no such command"}


def _command_failure(c: Mapping[str, Any]) -> str:
    """One failed command of ``emulation.commands``, as a phrase."""
    flag = {"a": "--a", "b": "--b", "shell": "--shell"}.get(c["name"], f"command at {c['name']}")
    line = str(c["command"])
    line = line if len(line) <= 120 else line[:120] + "..."
    what = f"{flag} {line!r} (node {c['node']})"
    if c.get("exit_status") is None:
        sig = c.get("signal")
        try:
            name = signal.Signals(sig).name if sig is not None else "unknown"
        except ValueError:
            name = "unknown"
        how = f"was killed by signal {sig} ({name})"
    else:
        status = c["exit_status"]
        how = f"exited with status {status}"
        if status in _SH_STATUS:
            how += f" ({_SH_STATUS[status]})"
        elif 128 < status < 128 + signal.NSIG:
            try:
                how += f" (128 + {status - 128}: {signal.Signals(status - 128).name})"
            except ValueError:
                pass
    return f"{what} {how} {_num(c.get('ended_s'), 1, 2)} s into the run"


def _cmd_schema(args: argparse.Namespace) -> int:
    text = _core.json_schema()
    json.loads(text)  # the core must hand back JSON; a failure here is a bug
    if args.output:
        _check_output(check_writable_file, args.output, "output file")
        try:
            with Staging() as staged:
                staged.add_bytes(args.output, (text + "\n").encode())
                staged.commit()
        except OSError as e:
            raise UsageError(_os_error(e, f"cannot write output file {args.output!r}")) from None
    else:
        print(text)
    return 0


def _check_output(check: Callable[[str], None], path: str, what: str) -> None:
    try:
        check(path)
    except OSError as e:
        raise UsageError(
            f"cannot write {what} {short_repr(path, 1000)}: {e}; give a path in an existing, "
            f"writable directory"
        ) from None


def _os_error(e: OSError, what: str) -> str:
    reason = e.strerror or str(e)
    return f"{what}: {reason}"


# ---------------------------------------------------------------------------
# Human-readable summary
# ---------------------------------------------------------------------------


def _num(value: Any, scale: float = 1.0, digits: int = 3) -> str:
    if isinstance(value, bool) or value is None:
        return "-"
    if isinstance(value, int) and scale == 1.0:
        return f"{value:,}"
    if isinstance(value, int | float):
        v = value * scale
        return f"{v:,.{digits}f}" if math.isfinite(v) else "-"
    return str(value)


#: Above this many rows, the links and queues tables leave out the idle ones.
MAX_IDLE_ROWS = 100


def _not_idle(rows: list[dict[str, Any]], count: str) -> tuple[list[dict[str, Any]], int]:
    """The rows to show and how many idle ones (``count`` zero) were left out: all of
    them up to :data:`MAX_IDLE_ROWS` rows, else only those that saw a packet (a
    million-node star's report would otherwise be two million rows of zeros)."""
    if len(rows) <= MAX_IDLE_ROWS:
        return rows, 0
    busy = [r for r in rows if r.get(count) != 0]
    return busy, len(rows) - len(busy)


def _idle_note(idle: int, what: str) -> str:
    if not idle:
        return ""
    return f"\n({idle:,} idle {what} with no packets not shown; --json lists every one)"


def bottleneck(s: Mapping[str, Any]) -> str | None:
    """One line on the bottleneck: the link direction whose queue held the most packets
    on average (then the most drops and marks, then the busiest), with its utilisation,
    queue and losses; None without links."""
    links = s.get("links") or []
    if not links:
        return None
    queues = {q.get("link"): q for q in s.get("queues") or []}

    def number(x: Any) -> float:
        return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else 0.0

    def use(x: Mapping[str, Any]) -> float:
        rate = number(x.get("rate_bps"))
        return number(x.get("throughput_bps")) / rate if rate > 0 else 0.0

    def losses(q: Mapping[str, Any]) -> float:
        return sum(number(v) for v in (q.get("drops") or {}).values())

    def key(x: Mapping[str, Any]) -> tuple[float, float, float]:
        q = queues.get(x.get("name")) or {}
        return (number(q.get("mean_packets")), losses(q) + number(q.get("ecn_marks")), use(x))

    x = max(links, key=key)
    q = queues.get(x.get("name")) or {}
    line = f"bottleneck {x.get('name', '?')}:"
    if number(x.get("rate_bps")) > 0:
        line += f" utilisation {100 * use(x):.1f} %"
    if q:
        line += (
            f"  queue mean {_num(q.get('mean_packets'), digits=1)} pkts "
            f"max {_num(q.get('max_packets'))}  drops {_num(int(losses(q)))}  "
            f"ecn marks {_num(q.get('ecn_marks'))}"
        )
    line += f"  lost {_num(x.get('lost'))}"
    return line


def _media_table(media: list[dict[str, Any]]) -> str:
    """The media streams: delay quantiles, RFC 3550 jitter, loss, late loss, R and MOS
    (voice), frames played (video)."""
    rows = []
    for m in media:
        e = m.get("emodel") or {}
        v = m.get("video") or {}
        rows.append(
            [
                str(m.get("id", "")),
                str(m.get("name", "")),
                str(m.get("codec") or m.get("kind", "")),
                _num(m.get("sent")),
                _num(m.get("delay_mean_s"), 1e3, 2),
                _num(m.get("delay_p50_s"), 1e3, 2),
                _num(m.get("delay_p99_s"), 1e3, 2),
                _num(m.get("jitter_s"), 1e3, 2),
                _num(m.get("loss_pct"), digits=2),
                _num(m.get("late_pct"), digits=2),
                _num(m.get("playout_s"), 1e3, 0),
                _num(e.get("r"), digits=1) if e else "-",
                _num(e.get("mos"), digits=2) if e else "-",
                _num(v.get("frames_played_pct"), digits=2) if v else "-",
            ]
        )
    headers = [
        "media", "name", "kind", "sent", "mean delay ms", "p50 ms", "p99 ms", "jitter ms",
        "loss %", "late %", "playout ms", "R", "MOS", "frames played %",
    ]  # fmt: skip
    return text_table(headers, rows, left=3)


def _aggregate_line(a: dict[str, Any]) -> str:
    """The summary's aggregate over the [[flows]]."""
    return (
        f"aggregate: goodput {_num(a.get('goodput_bps'), 1e-6)} Mbit/s  "
        f"delay mean {_num(a.get('delay_mean_s'), 1e3, 2)} ms  "
        f"p50 {_num(a.get('delay_p50_s'), 1e3, 2)} ms  "
        f"p95 {_num(a.get('delay_p95_s'), 1e3, 2)} ms  "
        f"max {_num(a.get('delay_max_s'), 1e3, 2)} ms  "
        f"timeouts {_num(a.get('timeouts'))}  "
        f"fast retransmits {_num(a.get('fast_retransmits'))}  "
        f"retransmits {_num(a.get('retransmits'))}  "
        f"delivered {_num(a.get('delivered_bytes'))} B"
    )


def render_summary(s: dict[str, Any]) -> str:
    """The summary as a readable report: header, aggregate, flows, links, queues."""
    parts: list[str] = []
    parts.append(
        f"scenario {s.get('scenario', '?')}  seed {_num(s.get('seed'))}  "
        f"simulated {_num(s.get('sim_time_s'))} s  wall {_num(s.get('wall_time_s'))} s  "
        f"events {_num(s.get('events'))}"
    )
    a = s.get("aggregate") or {}
    if not s.get("flows") and (s.get("workloads") or s.get("media")):
        # The aggregate sums the [[flows]] only: a run of workloads or media alone
        # would print a goodput of 0 that reads as a failure.
        parts.append("aggregate: no [[flows]] (the workloads' and media's results are below)")
    else:
        parts.append(_aggregate_line(a))
    neck = bottleneck(s)
    if neck is not None:
        parts.append(neck)

    flows = s.get("flows") or []
    if flows:
        rows = [
            [
                str(f.get("id", "")),
                str(f.get("name", "")),
                f"{f.get('from', '?')}->{f.get('to', '?')}",
                _num(f.get("goodput_bps"), 1e-6),
                _num(f.get("delay_mean_s"), 1e3, 2),
                _num(f.get("delay_p95_s"), 1e3, 2),
                _num(f.get("timeouts")),
                _num(f.get("fast_retransmits")),
                _num(f.get("retransmits")),
                _num(f.get("completed_s")) if f.get("completed_s") is not None else "-",
            ]
            for f in flows
        ]
        headers = [
            "flow", "name", "path", "goodput Mbit/s", "mean delay ms", "p95 delay ms",
            "timeouts", "fast rtx", "rtx", "completed s",
        ]  # fmt: skip
        parts.append("\n" + text_table(headers, rows, left=3))

    media = s.get("media") or []
    if media:
        parts.append("\n" + _media_table(media))
    from linklab import _fct

    work = _fct.render(s)
    if work is not None:
        parts.append("\n" + work)

    links = s.get("links") or []
    if links:
        shown, idle = _not_idle(links, "tx_packets")
        rows = [
            [
                str(x.get("name", "")),
                _num(x.get("rate_bps"), 1e-6),
                _num(x.get("throughput_bps"), 1e-6),
                _num(x.get("tx_packets")),
                _num(x.get("lost")),
            ]
            for x in shown
        ]
        headers = ["link", "rate Mbit/s", "throughput Mbit/s", "tx packets", "lost"]
        parts.append("\n" + text_table(headers, rows) + _idle_note(idle, "link directions"))

    arq_links = [x for x in links if isinstance(x.get("rlc"), dict)]
    if arq_links:
        rows = []
        for x in arq_links:
            a = x["rlc"]
            mt = a.get("max_dat")
            rows.append(
                [
                    str(x.get("name", "")),
                    _num(a.get("sdus_acked")),
                    _num(a.get("sdus_discarded")),
                    _num(a.get("residual_sdu_loss"), digits=5),
                    _num(a.get("efficiency"), digits=3),
                    "unlimited" if mt is None else str(mt),
                    _num(a.get("max_dat_mean"), digits=1),
                    _num(a.get("max_dat_unlimited_fraction"), digits=2),
                    _num(a.get("p_ll"), digits=4),
                    _num(a.get("p_tcp"), digits=4),
                ]
            )
        headers = [
            "arq link", "sdus acked", "discarded", "residual loss", "efficiency",
            "max_dat", "mean max_dat", "unlimited frac", "P_LL", "P_TCP",
        ]  # fmt: skip
        parts.append("\n" + text_table(headers, rows))

    queues = s.get("queues") or []
    if queues:
        rows = []
        queues, idle_queues = _not_idle(queues, "arrivals")
        for q in queues:
            drops = q.get("drops") or {}
            rows.append(
                [
                    str(q.get("link", "")),
                    str(q.get("kind", "")),
                    _num(q.get("arrivals")),
                    _num(drops.get("overflow")),
                    _num(drops.get("aqm_early")),
                    _num(drops.get("aqm_forced")),
                    _num(q.get("ecn_marks")),
                    _num(q.get("mean_packets"), digits=2),
                    _num(q.get("mean_bytes"), digits=0),
                    _num(q.get("max_packets")),
                ]
            )
        headers = [
            "queue", "kind", "arrivals", "drops overflow", "drops aqm early",
            "drops aqm forced", "ecn marks", "mean pkts", "mean bytes", "max pkts",
        ]  # fmt: skip
        parts.append("\n" + text_table(headers, rows, left=2) + _idle_note(idle_queues, "queues"))
    emu = s.get("emulation")
    if emu:
        t = emu.get("timing_error_s") or {}
        nodes = "  ".join(f"{n} {a}" for n, a in (emu.get("nodes") or {}).items())
        parts.append(
            f"\nemulation ({emu.get('traffic')}): nodes {nodes}\n"
            f"  packets read {_num(emu.get('packets_read'))}  "
            f"written {_num(emu.get('packets_written'))}  "
            f"link drops {_num(emu.get('link_drops'))}  "
            f"TUN drops {_num(emu.get('tun_drops'))}  "
            f"unroutable {_num(emu.get('unroutable'))}\n"
            f"  timing error p50 {_num(t.get('p50'), 1e6, 1)} us  "
            f"p99 {_num(t.get('p99'), 1e6, 1)} us  "
            f"p99.9 {_num(t.get('p999'), 1e6, 1)} us  max {_num(t.get('max'), 1e6, 1)} us"
        )
        for c in emu.get("commands") or []:
            if c.get("killed_at_end"):
                end = "still running at the end (killed)"
            elif c.get("exit_status") is None:
                end = f"killed by signal {c.get('signal')}"
            else:
                end = f"exited with status {c['exit_status']}"
            parts.append(
                f"  command {c['name']} (node {c['node']}) {c['command']!r}: {end}"
                + (" -- FAILED" if c.get("failed") else "")
            )
    return "\n".join(parts)


# ---------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------


def _fail(message: str) -> None:
    print(f"{PROG}: error: {one_line(message)}", file=sys.stderr)


def run() -> None:
    """The console script: :func:`main`, then exit with its status. After Ctrl-C
    the process ends without the interpreter's shutdown hooks (its outputs are
    already closed and flushed): CPython 3.11's process pool can race there and
    print a traceback from its exit hook (python/cpython#105829)."""
    status = main()
    if status == EXIT_INTERRUPTED:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status)
    sys.exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``linklab`` command; returns the exit status."""
    try:
        words = sys.argv[1:] if argv is None else argv
        args = build_parser(reproductions=_wants_reproductions(words)).parse_args(words)
        _log.quiet, _log.verbose = args.quiet, args.verbose
        status: int = args.func(args)
    except UsageError as e:
        _fail(str(e))
        return EXIT_BAD_INPUT
    except ScenarioError as e:
        _fail(error_text(e))
        return EXIT_BAD_INPUT
    except AccountingError as e:
        print(f"{PROG}: internal error: {one_line(str(e))}", file=sys.stderr)
        return EXIT_ACCOUNTING
    except InternalError as e:
        print(f"{PROG}: internal error: {one_line(str(e))}", file=sys.stderr)
        return EXIT_INTERNAL
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Output piped into a reader that quit (e.g. `| head`): not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as e:
        if os.environ.get("LINKLAB_DEBUG") or _log.verbose:
            raise
        print(
            f"{PROG}: internal error: {type(e).__name__}: {one_line(str(e))} "
            "(set LINKLAB_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return status


if __name__ == "__main__":
    raise SystemExit(main())
