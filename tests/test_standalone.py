"""The project works from a clone with nothing beside it (issue 35 item 1): no tracked
file names a path outside the repository, and what needs real cellular traces finds
them through ``$LINKLAB_TRACES`` only."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from linklab._files import TRACES_ENV, mahimahi_traces

ROOT = Path(__file__).resolve().parents[1]
# A path beside the repository (a "shared" folder one or more levels up) or on this
# machine (under /work).
OUTSIDE = re.compile(r"(\.\./)+shared\b|/work/(main|wt|shared)\b")


def tracked_text_files() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    files = [ROOT / f for f in out.split("\0") if f]
    return [f for f in files if f.is_file() and not f.is_symlink()]


def test_no_tracked_file_names_a_path_outside_the_repository() -> None:
    files = tracked_text_files()
    assert len(files) > 100, "git ls-files found too little"
    hits = []
    for f in files:
        try:
            text = f.read_text()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                hits.append(f"{f.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not hits, "paths outside the repository:\n" + "\n".join(hits)


@pytest.mark.parametrize(
    ("value", "expected"), [(None, None), ("", None), ("  ", None), ("/x/traces", "/x/traces")]
)
def test_real_traces_come_from_the_environment_only(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: str | None
) -> None:
    if value is None:
        monkeypatch.delenv(TRACES_ENV, raising=False)
    else:
        monkeypatch.setenv(TRACES_ENV, value)
    got = mahimahi_traces()
    assert (None if got is None else str(got)) == expected
