"""linklab report: a self-contained HTML page, checked as text and in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CliRunner, assert_bad_input, cli_env, needs_chromium
from test_plots import make_sweep

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
POINTS = 8  # per × flows below
FIGURES = 7  # six main metrics against per + the goodput-vs-delay scatter


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of a synthetic per × flows sweep with one failed run, made by the CLI."""
    base = tmp_path_factory.mktemp("report")
    sweep = make_sweep(
        base / "sweep", {"per": [0.0, 0.01, 0.05, 0.1], "flows": [2, 10]}, fail=[(3, 1)]
    )
    out = base / "report.html"
    proc = subprocess.run(
        [sys.executable, "-m", "linklab", "report", str(sweep), "-o", str(out)],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    return out


def test_report_content(report: Path) -> None:
    text = report.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    for heading in ("Parameter grid", "Summary", "Failed runs", "Figures", "Scenario"):
        assert f"<h2>{heading}</h2>" in text
    assert text.count('<tr class="point">') == POINTS
    assert text.count('<tr class="failed">') == 1
    assert text.count("<img ") == FIGURES
    assert text.count('src="data:image/png;base64,') == FIGURES
    # self-contained: nothing fetched, no script
    assert not re.search(r"""(src|href)=["']?(https?:|//|file:)""", text)
    assert "<script" not in text.lower() and "<link" not in text.lower()
    # everything from files is escaped
    assert "<b>" not in text and "<oops>" not in text
    assert "synthetic &lt;b&gt;&amp;amp; test&lt;/b&gt;" in text
    assert "&lt;oops&gt; &amp; &quot;boom&quot;" in text
    # settings and formatting
    assert "95 % (Student-t)" in text
    assert "0, 0.01, 0.05, 0.1" in text
    assert re.search(r"<td>\d\.\d+ <span class=\"ci\">± \d\.\d+</span></td>", text)
    assert '<td class="bad">2/3</td>' in text


@needs_chromium
def test_report_renders_in_chromium(report: Path, tmp_path: Path) -> None:
    assert CHROMIUM
    from PIL import Image

    shot = tmp_path / "shot.png"
    flags = ["--headless", "--disable-gpu", "--no-sandbox", f"--user-data-dir={tmp_path / 'ud'}"]
    proc = subprocess.run(
        [CHROMIUM, *flags, f"--screenshot={shot}", "--window-size=1200,2000", report.as_uri()],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0 and shot.is_file(), proc.stderr[-2000:]
    with Image.open(shot) as im:
        assert im.format == "PNG"
        assert im.size == (1200, 2000)
        rgb = im.convert("RGB")
        colours = rgb.getcolors(maxcolors=1 << 20)
        assert colours is not None and len(colours) > 50  # text, tables, plot lines
        # not one colour dominating everything: the page has content
        assert max(n for n, _ in colours) < 0.97 * 1200 * 2000
        # the figure area (lower half) holds plot colours (e.g. tab10 blue/orange)
        lower = rgb.crop((0, 1000, 1200, 2000)).getcolors(maxcolors=1 << 20) or []
        saturated = sum(n for n, (r, g, b) in lower if max(r, g, b) - min(r, g, b) > 80)
        assert saturated > 500, saturated

    # The DOM after load: a copy of the report with a probe writing each image's
    # natural and laid-out size into the body (the report itself has no script).
    probe = tmp_path / "probe.html"
    script = (
        "<script>window.addEventListener('load', function () {"
        "var r = []; document.querySelectorAll('img, svg').forEach(function (e) {"
        "var b = e.getBoundingClientRect();"
        "r.push((e.naturalWidth || 0) + 'x' + (e.naturalHeight || 0) + ':' +"
        " Math.round(b.width) + 'x' + Math.round(b.height)); });"
        "document.body.setAttribute('data-probe', r.join(' ')); });</script>"
    )
    probe.write_text(report.read_text(encoding="utf-8").replace("</body>", script + "</body>"))
    proc = subprocess.run(
        [CHROMIUM, *flags, "--dump-dom", probe.as_uri()],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert dom.count('<tr class="point">') == POINTS
    assert dom.count('<tr class="failed">') == 1
    m = re.search(r'data-probe="([^"]*)"', dom)
    assert m, "the probe script did not run"
    sizes = m.group(1).split()
    assert len(sizes) == FIGURES
    for s in sizes:
        natural, shown = s.split(":")
        nw, nh = map(int, natural.split("x"))
        sw, sh = map(int, shown.split("x"))
        assert nw > 300 and nh > 200, s  # decoded PNG
        assert sw > 300 and sh > 200, s  # laid out at a readable size


def test_report_without_swept_params_and_all_failed(tmp_path: Path, cli: CliRunner) -> None:
    from linklab.report import render_report

    one = make_sweep(tmp_path / "one", {}, reps=2)
    text = render_report(one)
    assert text.count('<tr class="point">') == 1
    assert "No parameter varies" in text
    assert text.count("<img ") == 1  # the scatter only
    dead = make_sweep(tmp_path / "dead", {"per": [0.0, 0.1]}, reps=2, fail=[(1, 0), (1, 1)])
    text = render_report(dead)
    assert "<td>–</td>" in text
    assert text.count('<tr class="failed">') == 2


def test_format_mean_ci() -> None:
    from linklab.report import format_mean_ci

    assert format_mean_ci(8.2174e6, 5.23e4, 1e-6) == ("8.217", "± 0.052")
    assert format_mean_ci(12.34, 1.26) == ("12.3", "± 1.3")
    assert format_mean_ci(1234.0, 456.0) == ("1,234", "± 456")
    assert format_mean_ci(0.0412, None, 1e3) == ("41.20", "")
    assert format_mean_ci(0.0412, float("nan"), 1e3) == ("41.20", "")
    assert format_mean_ci(None, None) == ("–", "")
    assert format_mean_ci(float("nan"), 1.0) == ("–", "")


def test_report_bad_input(cli: CliRunner, tmp_path: Path) -> None:
    sweep = make_sweep(tmp_path / "s", {"per": [0.0, 0.1]}, reps=2)
    assert_bad_input(cli("report", tmp_path / "nope", "-o", "r.html"), "does not exist")
    (tmp_path / "empty").mkdir()
    assert_bad_input(cli("report", tmp_path / "empty", "-o", "r.html"), "no summary.parquet")
    assert_bad_input(cli("report", sweep, "-o", "r.png"), "'.png'", ".html")
    assert_bad_input(cli("report", sweep, "-o", tmp_path / "no" / "r.html"), "r.html")
    assert_bad_input(cli("report", sweep), "-o")
    keep = tmp_path / "keep.html"
    keep.write_text("old")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "summary.parquet").write_bytes(b"not parquet")
    assert_bad_input(cli("report", tmp_path / "bad", "-o", keep), "summary.parquet")
    assert keep.read_text() == "old"
    assert not list(tmp_path.glob(".keep.html.*"))  # no temporaries left behind


@pytest.mark.parametrize(
    ("meta", "needles"),
    [
        ({"params": 5}, ["meta.json", "params is 5", "an object of parameter name"]),
        ({"params": {"per": "0,0.1"}}, ["params is", "list of values"]),
        ({"confidence": "high"}, ["confidence", "between 0 and 1"]),
        ({"reps": -1}, ["reps is -1", ">= 1"]),
    ],
)
def test_report_and_plot_refuse_bad_meta(
    cli: CliRunner, tmp_path: Path, meta: dict, needles: list[str]
) -> None:
    """A meta.json of the wrong shape is bad input (it was 'internal error: AttributeError')."""
    sweep = make_sweep(tmp_path / "s", {"per": [0.0, 0.1]}, reps=2)
    path = sweep / "meta.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **meta}))
    assert_bad_input(cli("report", sweep, "-o", tmp_path / "r.html"), *needles)
    assert_bad_input(
        cli("plot", sweep, "--x", "per", "--y", "goodput_bps", "-o", tmp_path / "p.png"), *needles
    )
