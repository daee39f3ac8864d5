"""Shared fixtures: a tiny scenario and a helper running the CLI in a subprocess."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

TINY = """\
name = "tiny"
duration = "2s"
[params]
per = 0.0
[[links]]
a = "A"
b = "B"
rate = "10Mbit"
delay = "10ms"
queue = { kind = "droptail", limit = "100p" }
ab = { loss = "${per}" }
[[flows]]
from = "A"
to = "B"
[tcp]
variant = "sack"
"""

# The pcap magic of nanosecond-resolution captures, as written little- or big-endian.
PCAP_NS_MAGIC = (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")

CliRunner = Callable[..., subprocess.CompletedProcess[str]]


def needs_tool(purpose: str, package: str, *names: str) -> pytest.MarkDecorator:
    """Skip a test, with a line naming the Debian package to install, when none of the
    commands ``names`` is on PATH. ``scripts/test`` installs these packages when it can
    (as root with apt-get); where it cannot, only the tests that need them skip."""
    missing = all(shutil.which(n) is None for n in names)
    return pytest.mark.skipif(
        missing, reason=f"needs {names[0]} ({purpose}): apt-get install {package}"
    )


#: ns-2.35 (Debian package ns2): the lt-tcp reproduction runs it beside linklab.
needs_ns2 = needs_tool("ns-2.35 beside linklab", "ns2", "ns")
#: tshark (Debian package tshark): reads linklab's captures back.
needs_tshark = needs_tool("reading captures back", "tshark", "tshark")
#: headless Chromium (Debian package chromium): renders the HTML report.
needs_chromium = needs_tool("rendering the report", "chromium", "chromium", "chromium-browser")


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("LINKLAB_DEBUG", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """The tiny scenario, written to a file."""
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


@pytest.fixture
def cli(tmp_path: Path) -> CliRunner:
    """Run ``python -m linklab ARGS...`` in tmp_path; returns the completed process."""

    def run(*args: str | os.PathLike[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "linklab", *map(str, args)],
            cwd=tmp_path,
            env=cli_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run


def assert_bad_input(
    proc: subprocess.CompletedProcess[str], *needles: str, allowed: bool = True
) -> str:
    """Exit 2, one ``linklab: error:`` line on stderr naming ``needles``, no traceback.

    ``allowed``: the line also says what is allowed (``<what was wrong>; <allowed>``).
    """
    err = proc.stderr
    assert proc.returncode == 2, (proc.returncode, err)
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("linklab: error: "), err
    assert not allowed or ";" in lines[0], f"the message should say what is allowed: {err}"
    for needle in needles:
        assert needle in lines[0], (needle, err)
    assert proc.stdout == "", proc.stdout
    return lines[0]


def load_bench(name: str) -> ModuleType:
    """The benchmark script ``benches/NAME.py`` as module ``NAME`` (loaded once)."""
    if name in sys.modules:
        return sys.modules[name]
    path = Path(__file__).resolve().parents[1] / "benches" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader, path
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
