"""Every command and Python snippet in README.md and docs/ works as written (issues 16, 35).

Commands are the lines of code blocks that start with ``linklab``, ``sudo
linklab``, ``python3 benches/`` or ``scripts/``; snippets are the ```` ```python ````
blocks, each saved to a file and run with ``python3 file.py`` as a reader would.
Each document's commands and snippets run in document order in one scratch
directory (which links ``scenarios`` and ``benches`` from the repository), so a
plot can use the sweep written above it. Commands that
cannot run here are parsed by the very parser that would read them, so a
renamed flag or a wrong choice still fails; the reason for each is in
:func:`plan`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cli_env

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
COMMAND = re.compile(r"^(sudo linklab |linklab |python3 benches/|scripts/)")
PLACEHOLDERS = {"SCENARIO", "HOST", "tcp://host:8786", "tcp://HOST:8786"}


def runs_clean(argv: list[str], cwd: Path, where: str) -> None:
    """Run ``argv`` in ``cwd``: it must exit 0 without a traceback."""
    proc = subprocess.run(
        argv, cwd=cwd, env=cli_env(), capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.returncode == 0, f"{where}\n{proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr, f"{where}\n{proc.stderr[-2000:]}"


def commands(doc: Path) -> list[tuple[int, str]]:
    """(line number, command) of every command in ``doc``'s code blocks."""
    out: list[tuple[int, str]] = []
    lines = doc.read_text().splitlines()
    fenced = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced or line.startswith("    "):
            text, start = line.strip(), i + 1
            if COMMAND.match(text):
                while text.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    text = text[:-1] + " " + lines[i].strip()
                out.append((start, text))
        i += 1
    return out


def snippets(doc: Path) -> list[tuple[int, str]]:
    """(line number, code) of every ```` ```python ```` block in ``doc``."""
    out: list[tuple[int, str]] = []
    block: list[str] | None = None
    start = 0
    for i, line in enumerate(doc.read_text().splitlines(), 1):
        if block is None and line.strip() == "```python":
            block, start = [], i + 1
        elif block is not None and line.strip() == "```":
            out.append((start, "\n".join(block) + "\n"))
            block = None
        elif block is not None:
            block.append(line)
    return out


def run_snippet(code: str, line: int, scratch: Path, where: str) -> None:
    """``code`` saved to a file in ``scratch`` and run there with ``python3 FILE``."""
    script = scratch / f"snippet_{line}.py"
    script.write_text(code)
    runs_clean([sys.executable, script.name], scratch, where)


def argv_of(command: str, scratch: Path) -> list[list[str]]:
    """The command's argument vectors (``a && b`` gives two), comments dropped,
    ``[--flag]`` taken as given, ``DIR`` as a scratch directory and environment
    variables (``$LINKLAB_TRACES``) expanded when they are set."""
    words = shlex.split(command, comments=True)
    out: list[list[str]] = [[]]
    for w in words:
        if w == "&&":
            out.append([])
            continue
        if w.startswith("[") and w.endswith("]"):
            w = w[1:-1]
        out[-1].append(str(scratch / "dir") if w == "DIR" else os.path.expandvars(w))
    return [a[1:] if a[0] == "sudo" else a for a in out]


def plan(argv: list[str]) -> str:
    """``run``, or why the command is only parsed (or skipped)."""
    if argv[0].startswith("scripts/"):
        return "skip: the test suite itself"
    if argv[0].startswith("benches/") or argv[:2] == ["python3", argv[1]]:
        return "parse: a benchmark (minutes); tests/test_bench_*.py run its --quick form"
    sub = argv[1] if len(argv) > 1 else ""
    if sub == "emulate":
        return "parse: live emulation in real time as root; tests/test_emulate.py runs it"
    if sub == "shell":
        return "parse: live emulation in real time as root; tests/test_cli_path.py runs it"
    if sub == "reproduce":
        return "parse: minutes to hours; tests/test_reproduce*.py run each --quick end to end"
    if PLACEHOLDERS & set(argv) or "dask" in argv:
        return "parse: a placeholder or a Dask scheduler address"
    return "run"


def parse_linklab(argv: list[str]) -> None:
    from linklab.cli import build_parser
    from linklab.reproduce import REPRODUCTIONS

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            args = build_parser().parse_args(argv[1:])
        except SystemExit as e:
            pytest.fail(f"{shlex.join(argv)}: exit {e.code}: {err.getvalue().strip()}")
    if getattr(args, "command", None) == "reproduce" and args.experiments:
        allowed = REPRODUCTIONS[args.name].experiments
        unknown = [x for x in args.experiments.split(",") if x not in allowed]
        assert not unknown, f"{shlex.join(argv)}: unknown experiments {unknown}"


def parse_bench(argv: list[str]) -> None:
    script = ROOT / argv[1]
    spec = importlib.util.spec_from_file_location(f"_docs_{script.stem}", script)
    assert spec is not None and spec.loader is not None, script
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            parsed = module.parse_args(argv[2:])
        except SystemExit as e:
            pytest.fail(f"{shlex.join(argv)}: exit {e.code}: {err.getvalue().strip()}")
    assert isinstance(parsed, argparse.Namespace | tuple)


def missing_input(argv: list[str]) -> str | None:
    """What the command reads from outside the repository (real Mahimahi traces in
    the folder ``$LINKLAB_TRACES`` names) when this machine does not have it."""
    from linklab._files import TRACES_ENV, TRACES_HOW, mahimahi_traces

    folder = mahimahi_traces()
    for w in argv:
        _, _, value = w.rpartition("=")
        if "$" + TRACES_ENV in value or "${" + TRACES_ENV + "}" in value:
            return f"${TRACES_ENV}: {TRACES_HOW}"
        if folder is not None and value.startswith(str(folder)) and not Path(value).exists():
            return value
    return None


def test_the_docs_have_commands() -> None:
    found = {doc.name for doc in DOCS if commands(doc)}
    assert {"README.md", "plots.md", "sweeps.md", "benchmarks.md"} <= found, found


def test_the_docs_have_snippets() -> None:
    found = {doc.name for doc in DOCS if snippets(doc)}
    assert {"README.md", "sweeps.md", "plots.md"} <= found, found


@pytest.mark.parametrize(
    "doc", [d for d in DOCS if commands(d) or snippets(d)], ids=lambda d: d.name
)
def test_commands_work_as_written(doc: Path, tmp_path: Path) -> None:
    for name in ("scenarios", "benches"):
        (tmp_path / name).symlink_to(ROOT / name)
    code = dict(snippets(doc))
    steps = sorted([*commands(doc), *code.items()])
    for line, command in steps:
        if line in code:
            run_snippet(code[line], line, tmp_path, f"{doc.relative_to(ROOT)}:{line}: snippet")
            continue
        for argv in argv_of(command, tmp_path):
            how = plan(argv)
            where = f"{doc.relative_to(ROOT)}:{line}: {command}"
            if how.startswith("skip"):
                continue
            if how.startswith("parse"):
                if argv[0] == "linklab":
                    parse_linklab(argv)
                else:
                    parse_bench(argv)
                continue
            gone = missing_input(argv)
            if gone is not None:
                print(f"not run (needs {gone}): {where}")
                continue
            runs_clean([sys.executable, "-m", "linklab", *argv[1:]], tmp_path, where)
