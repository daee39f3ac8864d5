"""Real-time media over UDP (``[[media]]``, docs/models/media.md): ``r.media``, the
run report, ``linklab model emodel`` and the errors. The models' own checks (the
exact delay of an idle path, the drop-tail bound, RFC 3550 by hand, determinism,
G.107's reference points) are Rust unit tests beside the code."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import jsonschema
import polars as pl
import pytest

import linklab
from conftest import CliRunner, assert_bad_input
from linklab.analytic import EModelError, emodel, voice_codecs

ROOT = Path(__file__).resolve().parents[1]

CALL = """\
duration = "5s"
[[links]]
a = "A"
b = "B"
rate = "2Mbit"
delay = "25ms"
[[media]]
kind = "voice"
from = "A"
to = "B"
direction = "two-way"
codec = "g729a"
talk_spurts = false
[[media]]
kind = "cbr"
from = "A"
to = "B"
rate = "64kbit"
size = "160B"
"""


def test_r_media_is_one_row_per_stream() -> None:
    r = linklab.run(CALL, seed=2)
    m = r.media
    assert m.columns[:5] == ["name", "id", "kind", "from", "to"]
    assert m["name"].to_list() == ["voice:A->B", "voice:A->B (back)", "cbr:A->B"]
    assert m["kind"].to_list() == ["voice", "voice", "cbr"]
    # An idle 2 Mbit/s, 25 ms link: G.729A in 20 ms packets is 20 + 12 + 28 = 60 B,
    # 25 ms + 0.24 ms every time; nothing lost or late against 100 ms.
    voice = m.row(0, named=True)
    assert voice["delay_p99_s"] == pytest.approx(0.025 + 60 * 8 / 2e6, abs=1e-12)
    assert voice["jitter_s"] == 0.0 and voice["lost"] == 0 and voice["late"] == 0
    # The E-model columns: Ta = 20 ms packets + 5 ms look-ahead + 100 ms playout,
    # no loss: R = the G.107 rating of that delay minus G.729A's Ie = 11.
    assert voice["emodel_ta_ms"] == pytest.approx(125.0)
    want = emodel(125.0, codec="g729a")
    assert voice["emodel_r"] == pytest.approx(want["r"])
    assert voice["emodel_mos"] == pytest.approx(want["mos"])
    # CBR at 64 kbit/s of 160 B payloads: a packet every 20 ms, no E-model.
    cbr = m.row(2, named=True)
    assert cbr["sent"] == 5000 // 20 + 1 and cbr["emodel_r"] is None
    assert m.schema["emodel_r"] == pl.Float64
    assert linklab.run(ROOT / "scenarios" / "cellular-trace.toml").media.is_empty()


def test_run_report_and_json_carry_media(cli: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "call.toml"
    path.write_text(CALL)
    proc = cli("run", path)
    assert proc.returncode == 0, proc.stderr
    assert "media  name" in proc.stdout and "voice:A->B (back)" in proc.stdout
    proc = cli("run", path, "--json")
    media = json.loads(proc.stdout)["media"]
    assert [x["id"] for x in media] == [0, 1, 2]
    assert media[0]["account"]["sent"] == media[0]["sent"]


def test_bufferbloat_example_aqm_helps_the_call() -> None:
    """The shipped example: behind the deep drop-tail buffer the call's delay
    follows the download's standing queue; FQ-CoDel keeps the call's sparse flow
    out of it (RFC 8290's sparse-flow priority), so its p99 delay is lower and its rating higher."""
    path = ROOT / "scenarios" / "voice-bufferbloat.toml"
    drop = linklab.run(path).media.row(0, named=True)
    fq = linklab.run(path, params={"queue": "fq_codel"}).media.row(0, named=True)
    assert fq["delay_p99_s"] < drop["delay_p99_s"]
    assert fq["emodel_r"] > drop["emodel_r"]
    assert fq["late_pct"] < drop["late_pct"]


def test_emodel_api_reference_points() -> None:
    assert emodel()["r"] == pytest.approx(93.2, abs=0.05)  # G.107 §7.7
    assert emodel()["mos"] == pytest.approx(4.41, abs=0.005)  # Annex B
    # Ie,eff at 2 % random loss: G.729A 19 (11 + 84 * 2 / 21).
    assert emodel(codec="g729a", ppl=2)["ie_eff"] == pytest.approx(19.0)
    assert set(voice_codecs()) == {"g711", "g711-plc", "g729a", "g723.1"}
    assert emodel("150ms")["ta"] == 150.0 and emodel("150ms")["tr"] == 300.0
    with pytest.raises(EModelError) as e:
        emodel(ppl=101)
    assert e.value.name == "ppl"
    with pytest.raises(EModelError) as e:
        emodel(loudness=3)
    assert e.value.name == "loudness"


def test_model_emodel_command(cli: CliRunner) -> None:
    proc = cli("model", "emodel", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["r"] == pytest.approx(93.2, abs=0.05)
    proc = cli("model", "emodel", "--delay", "0ms..400ms:5", "--codec", "g711-plc", "--loss", "1")
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 7
    assert_bad_input(cli("model", "emodel", "--codec", "opus"), "--codec", "g729a")
    assert_bad_input(cli("model", "emodel", "--loss", "120"), "--loss", "0 to 100")
    assert_bad_input(cli("model", "emodel", "--set", "x=1"), "--set", "telr")


@pytest.mark.parametrize("setting", ["telr=1e300", "telr=-1e300", "slr=1e300", "nc=1e300"])
def test_model_emodel_extreme_input_is_refused_not_nan(cli: CliRunner, setting: str) -> None:
    # Finite but extreme G.107 inputs overflowed the formulas into inf - inf:
    # the command printed R and MOS "nan" with exit 0 (found by hand, issue 33).
    name = setting.split("=")[0]
    assert_bad_input(cli("model", "emodel", "--set", setting), f"--set {name}", "G.107")


@pytest.mark.parametrize(
    "entry,path",
    [
        ('kind = "voice"\nfrom = "A"\nto = "B"\ncodec = "opus"', "media[0].codec"),
        ('kind = "video"\nfrom = "A"\nto = "B"\nframe_rate = 500', "media[0].frame_rate"),
        ('kind = "hologram"\nfrom = "A"\nto = "B"', "media[0].kind"),
    ],
)
def test_bad_media_exits_2_naming_the_key(cli: CliRunner, tmp_path: Path, entry: str,
                                          path: str) -> None:  # fmt: skip
    f = tmp_path / "bad.toml"
    f.write_text(
        f'duration = "1s"\n[[links]]\na = "A"\nb = "B"\nrate = "1Mbit"\n[[media]]\n{entry}\n'
    )
    assert_bad_input(cli("run", f), path)


def test_the_emulator_refuses_media(cli: CliRunner) -> None:
    proc = cli("emulate", "voice-bufferbloat", "--duration", "1s")
    assert_bad_input(proc, "media", "simulated only")


def test_sweeps_carry_media_columns() -> None:
    """A longer playout delay: fewer late packets, a longer Ta (sweep columns per stream)."""
    text = CALL.replace('duration = "5s"', 'duration = "5s"\n[params]\nplayout = "100ms"  # x')
    text = text.replace('codec = "g729a"', 'codec = "g729a"\nplayout = "${playout}"')
    sw = linklab.sweep(text, {"playout": ["60ms", "100ms"]}, reps=1)
    cols = set(sw.runs.columns)
    assert {"media[voice:A->B].r", "media[cbr:A->B].delay_p99_s"} <= cols
    assert "media[cbr:A->B].r" not in cols
    m = sw.media
    assert m["media"].to_list()[:3] == ["voice:A->B", "voice:A->B (back)", "cbr:A->B"]
    # Nothing is late on an idle 25 ms path: the longer playout only adds delay.
    r = m.filter(pl.col("media") == "voice:A->B")["r"].to_list()
    assert r[0] > r[1]


def test_the_schema_describes_media() -> None:
    """``linklab schema`` takes a ``[[media]]`` table by kind and refuses what the
    loader refuses: an unknown kind, a key of another kind, a codec it lacks."""
    schema = json.loads(linklab.json_schema())
    doc = tomllib.loads(CALL)
    jsonschema.validate(doc, schema)
    for bad in (
        {"kind": "hologram", "from": "A", "to": "B"},
        {"kind": "voice", "from": "A", "to": "B", "frame_rate": 30},
        {"kind": "voice", "from": "A", "to": "B", "codec": "opus"},
        {"kind": "cbr", "from": "A", "to": "B", "interval": 20},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**doc, "media": [bad]}, schema)


# Media, workload flows and [[flows]] in one run: media flow ids (bit 31) are no
# workload slot. Before the merge fix, the first media packet dropped at a full
# queue indexed the workload bookkeeping with 2^31 and panicked; the capture left
# media out as if it were a workload flow.
MIXED = """\
duration = "4s"
[[links]]
a = "A"
b = "B"
rate = "1Mbit"
delay = "10ms"
queue = { limit = "8p" }
[[flows]]
from = "A"
to = "B"
[[workloads]]
from = "A"
to = "B"
arrivals = { kind = "poisson", rate = 5 }
size = { kind = "fixed", bytes = 20000 }
[[media]]
kind = "cbr"
from = "A"
to = "B"
rate = "200kbit"
size = "200B"
"""


def test_media_beside_workloads_and_flows() -> None:
    r = linklab.run(MIXED, seed=3, pcap=["A->B"])
    m = r.media.row(0, named=True)
    assert m["sent"] > 400 and m["lost"] > 0, m  # the full queue drops media too
    assert r.fct.height > 5
    pcap = next(iter(r.pcaps.values()))
    # The media packets are in the capture: IPv4 headers whose protocol (offset 9) is UDP.
    udp = re.findall(rb"\x45\x00.{7}\x11", pcap, flags=re.DOTALL)
    assert len(udp) > 100, len(udp)
    assert r.summary["workloads"]["workloads"][0]["completed"] > 0


def test_trace_tables_carry_media_packets(cli: CliRunner, tmp_path: Path) -> None:
    """``run --trace DIR``: a media stream's packets are rows of ``media_packets``
    (sent, received, dropped: the counts of its packet account) and its losses rows of
    ``drops`` of kind ``media``. 1 Mbit/s of CBR into a 500 kbit/s link behind a
    5-packet buffer beside nothing else: about half overflow. Time: about a second."""
    path = tmp_path / "m.toml"
    path.write_text(
        """\
duration = "2s"
[[links]]
a = "S"
b = "D"
rate = "500kbit"
delay = "10ms"
queue = { kind = "droptail", limit = "5p" }
[[media]]
kind = "cbr"
from = "S"
to = "D"
size = "972B"
rate = "1Mbit"
"""
    )
    out = cli("run", path, "--trace", tmp_path / "tr")
    assert out.returncode == 0, out.stderr
    acc = json.loads((tmp_path / "tr" / "summary.json").read_text())["media"][0]["account"]
    pk = pl.read_parquet(tmp_path / "tr" / "media_packets.parquet")
    assert pk.columns == ["stream", "time_s", "event", "seq"]
    counts = dict(pk.group_by("event").len().iter_rows())
    dropped = sum(d["packets"] for d in acc["dropped"])
    assert counts == {"sent": acc["sent"], "received": acc["delivered"], "dropped": dropped}
    assert dropped > 50
    drops = pl.read_parquet(tmp_path / "tr" / "drops.parquet")
    assert drops.height == dropped and set(drops["kind"]) == {"media"}
    assert set(drops["link"]) == {"S->D"} and set(drops["cause"]) == {"overflow"}
    assert pk["time_s"].is_sorted()
