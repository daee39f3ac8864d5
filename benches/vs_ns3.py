#!/usr/bin/env python3
"""Side-by-side benchmark: linklab vs ns-3 3.44 on the RED/ECN dumbbell.

Runs, for every (PER, seed), the ns-3 scenario of ``../shared/bench/ns3/`` (our native C++
copy ``benches/ns3/dumbbell.cc`` by default, the shared Python ``dumbbell.py`` as a fall-back)
and ``linklab run scenarios/dumbbell-red-ecn.toml`` with the same settings, one process at a
time, and prints goodput (mean ± 95 % CI over seeds), mean queueing delay at the bottleneck,
core wall time, throughput in packets per wall-second and peak RSS of each child, plus
PASS/FAIL against the targets.  See docs/benchmarks.md.

    python3 benches/vs_ns3.py --quick
    python3 benches/vs_ns3.py --flows 10 --simtime 100 --seeds 10 --per 0,0.01,0.1 --json
    python3 benches/vs_ns3.py --cc cubic --queue droptail --per 0     # a CC over 1 BDP
    python3 benches/vs_ns3.py --cc newreno --queue codel --per 0      # an AQM

``--cc`` (newreno, cubic, bbr, westwood, dctcp) and ``--queue`` (red, droptail, codel,
fq_codel, pie, dctcp = RED marking from K packets as in ns-3's DCTCP example) choose the
congestion control of every flow and the bottleneck's queue in both simulators; linklab runs a
copy of the scenario with ``[tcp] cc`` and the bottleneck's ``queue`` replaced (see
``linklab_overlay``).

The ns-3 venv (``benches/.venv-ns3``, ``pip install ns3``) and the native twin
(``benches/ns3/native/dumbbell``) are created on first use; both are gitignored.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BENCHES = REPO / "benches"
SHARED_NS3 = REPO.parent / "shared" / "bench" / "ns3"
DEFAULT_VENV = BENCHES / ".venv-ns3"
NATIVE_DIR = BENCHES / "ns3" / "native"
NATIVE_SRC = BENCHES / "ns3" / "dumbbell.cc"  # the shared native twin + --cc/--queue
SCENARIO = "scenarios/dumbbell-red-ecn.toml"
NS3_LIBS = (
    "core network internet point-to-point applications traffic-control stats bridge mobility"
).split()

# `--set` overrides that make linklab's TCP behave like ns-3 3.44's defaults in this scenario:
# initial window 10 segments, delayed ACK (every 2nd segment, 200 ms timer), minimum RTO 1 s,
# MSS 448 B (+32 B TCP header with timestamps +20 B IP = 500 B IP packets).
LINKLAB_ALIKE: tuple[str, ...] = ("iw=10", "delack=true", "min_rto=1s", "mss=448", "framing=2B")

# Targets (see docs/benchmarks.md).
TARGET_SPEEDUP = 30.0  # ns-3 Run() / linklab core run, per=0, 10 flows x 100 s
TARGET_RSS_MIB = 30.0  # linklab peak RSS, MiB
TARGET_GOODPUT_REL = 0.05  # |linklab - ns-3| / ns-3 goodput, at every PER
TARGET_QDELAY_REL = 0.10  # |linklab - ns-3| / ns-3 mean queueing delay (--cc/--queue runs)

CCS = ("newreno", "cubic", "bbr", "westwood", "dctcp")
# queue -> default limit in packets (as in benches/ns3/dumbbell.cc): RED as the shared
# scenario, drop-tail 1 BDP (10 Mbit/s x 44 ms base RTT / 500 B = 110 p), AQMs 1000 p.
QUEUES = {"red": 500, "droptail": 110, "codel": 1000, "fq_codel": 1000, "pie": 1000, "dctcp": 500}
DEFAULT_MODEL = {"cc": "newreno", "queue": "red", "qlimit": 500, "ecn": True, "dctcp_k": 20}
NS3_CLASSIC_RECOVERY = "ns3::TcpClassicRecovery"  # --recovery classic (default: TcpPrrRecovery)

# Two-sided 95 % Student t quantiles, df = 1..30.
T95 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class BenchError(RuntimeError):
    """A half of the benchmark cannot run; the message says why and what to do."""


# --------------------------------------------------------------------------------------------
# child processes: wall time and peak RSS of exactly that child (os.wait4)
# --------------------------------------------------------------------------------------------


@dataclass
class ChildResult:
    returncode: int
    stdout: str
    stderr: str
    process_wall_s: float
    peak_rss_kib: int  # ru_maxrss of the child (KiB on Linux)
    load1: float  # 1-min load average when the child started (others' CPU use skews timings)


def run_child(
    cmd: list[str], cwd: Path, timeout: float | None = None, env: dict[str, str] | None = None
) -> ChildResult:
    """Run one command; return its output, whole-process wall time and its own peak RSS.

    ``os.wait4`` reports the rusage of exactly the reaped child (including its own waited-for
    descendants), unlike deltas of ``getrusage(RUSAGE_CHILDREN)``, whose ru_maxrss is a maximum
    over all children ever reaped.
    """
    load1 = os.getloadavg()[0]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL
        )
        deadline = None if timeout is None else t0 + timeout
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG if deadline else 0)
            if pid:
                break
            if deadline and time.perf_counter() > deadline:
                proc.kill()
                pid, status, ru = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return ChildResult(
            returncode=proc.returncode,
            stdout=out.read().decode(errors="replace"),
            stderr=err.read().decode(errors="replace"),
            process_wall_s=wall,
            peak_rss_kib=int(ru.ru_maxrss),
            load1=load1,
        )


def last_json_line(text: str) -> dict[str, Any]:
    """The JSON object a simulator printed (last line starting with '{', or the whole text)."""
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                break
            if isinstance(obj, dict):
                return obj
    obj = json.loads(text)
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    return obj


# --------------------------------------------------------------------------------------------
# ns-3 half
# --------------------------------------------------------------------------------------------


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def ns3_package_dir(venv: Path) -> Path | None:
    py = venv_python(venv)
    if not py.exists():
        return None
    code = (
        "import ns3, os; p = getattr(ns3, '__file__', None); "
        "print(os.path.dirname(p) if p else list(ns3.__path__)[0])"
    )
    r = subprocess.run([str(py), "-c", code], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    d = Path(r.stdout.strip().splitlines()[-1])
    return d if (d / "include").is_dir() and (d / "lib64").is_dir() else None


def ensure_ns3_venv(venv: Path) -> Path:
    """Return the ns3 package directory, creating ``venv`` with ``pip install ns3`` if needed."""
    pkg = ns3_package_dir(venv)
    if pkg:
        return pkg
    log(f"[ns-3] creating {venv} and installing the ns3 wheel (~1.5 min, ~520 MB) ...")
    if not venv_python(venv).exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    r = subprocess.run([str(venv_python(venv)), "-m", "pip", "install", "-q", "ns3"])
    pkg = ns3_package_dir(venv) if r.returncode == 0 else None
    if not pkg:
        raise BenchError(
            f"could not install ns-3 into {venv}: run `python3 -m venv {venv} && "
            f"{venv}/bin/pip install ns3` by hand, or pass --ns3-venv PATH to an existing one"
        )
    return pkg


def ensure_native(pkg: Path, force: bool = False) -> Path:
    """Build the native C++ twin against the wheel's libraries (only when missing/stale)."""
    src = NATIVE_SRC
    if not src.exists():
        raise BenchError(f"ns-3 scenario source not found: {src}")
    NATIVE_DIR.mkdir(parents=True, exist_ok=True)
    binary, local_src = NATIVE_DIR / "dumbbell", NATIVE_DIR / "dumbbell.cc"
    stamp = NATIVE_DIR / "build.stamp"
    want = f"{pkg}\n{hashlib.sha256(src.read_bytes()).hexdigest()}\n"
    if not force and binary.exists() and stamp.exists() and stamp.read_text() == want:
        return binary
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise BenchError("no C++ compiler (g++) found to build the ns-3 native twin")
    shutil.copyfile(src, local_src)
    cmd = [
        cxx,
        "-std=c++20",
        "-O3",
        "-DNS3_BUILD_PROFILE_RELEASE",
        "-DNS3_LOG_ENABLE",
        "-DNS3_ASSERT_ENABLE",
        f"-I{pkg / 'include'}",
        str(local_src),
        "-o",
        str(binary),
        f"-L{pkg / 'lib64'}",
        f"-Wl,-rpath,{pkg / 'lib64'}",
        *[f"-lns3.44-{m}" for m in NS3_LIBS],
    ]
    log(f"[ns-3] building native twin -> {binary} ...")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise BenchError(f"building the ns-3 native twin failed:\n{r.stderr[-3000:]}")
    stamp.write_text(want)
    return binary


@dataclass
class Ns3Runner:
    impl: str  # "native" or "python"
    cmd_prefix: list[str]

    def run(
        self, flows: int, simtime: float, per: float, seed: int, model: dict[str, Any]
    ) -> dict[str, Any]:
        args: dict[str, Any] = {"flows": flows, "simtime": simtime, "per": per, "seed": seed}
        if self.impl == "native":
            if model != DEFAULT_MODEL:
                args |= {
                    "cc": model["cc"],
                    "queue": model["queue"],
                    "qlimit": model["qlimit"],
                    "ecn": int(model["ecn"]),
                    "dctcpk": model["dctcp_k"],
                }
            cmd = self.cmd_prefix + [f"--{k}={v}" for k, v in args.items()]
            if model.get("recovery") == "classic":
                cmd.append(f"--ns3::TcpL4Protocol::RecoveryType={NS3_CLASSIC_RECOVERY}")
        else:
            if model != DEFAULT_MODEL:
                raise BenchError("--cc/--queue need the native ns-3 twin (--ns3-impl native)")
            cmd = self.cmd_prefix + [x for k, v in args.items() for x in (f"--{k}", str(v))]
        res = run_child(cmd, cwd=REPO)
        if res.returncode != 0:
            raise BenchError(f"ns-3 run failed ({' '.join(cmd)}):\n{res.stderr[-3000:]}")
        raw = last_json_line(res.stdout)
        red = raw.get("red", {})
        return {
            "sim": "ns-3",
            "impl": self.impl,
            "flows": flows,
            "simtime": simtime,
            "per": per,
            "seed": seed,
            "goodput_bps": raw["goodput_mbps"] * 1e6,
            "run_wall_s": raw["wall_s"],
            "process_wall_s": res.process_wall_s,
            "events": raw["events"],
            "rx_packets": raw["rx_ip_packets"],
            # Waiting for the bottleneck transmitter, queue disc + device queue (Little's
            # law, as linklab's figure); runs saved before it was measured have only the
            # queue-disc sojourn.
            "queue_delay_s": (raw.get("wait_ms") or raw.get("queue_delay_ms") or 0) / 1e3
            if ("wait_ms" in raw or "queue_delay_ms" in raw)
            else None,
            "qdisc_sojourn_s": raw["queue_delay_ms"] / 1e3 if "queue_delay_ms" in raw else None,
            **model,
            "bottleneck_tx_packets": red.get("enqueued"),
            "peak_rss_kib": res.peak_rss_kib,
            "load1": res.load1,
            "raw": raw,
        }


def make_ns3_runner(venv: Path, impl: str, rebuild: bool) -> Ns3Runner:
    pkg = ensure_ns3_venv(venv)
    if impl in ("auto", "native"):
        try:
            return Ns3Runner("native", [str(ensure_native(pkg, force=rebuild))])
        except BenchError as e:
            if impl == "native":
                raise
            log(f"[ns-3] native twin unavailable, falling back to dumbbell.py: {e}")
    script = SHARED_NS3 / "dumbbell.py"
    if not script.exists():
        raise BenchError(f"ns-3 scenario script not found: {script}")
    return Ns3Runner("python", [str(venv_python(venv)), str(script)])


# --------------------------------------------------------------------------------------------
# linklab half
# --------------------------------------------------------------------------------------------


def find_linklab(explicit: str | None) -> tuple[list[str], dict[str, str] | None]:
    """Command prefix (and environment) that runs the linklab CLI, or BenchError."""
    if explicit:
        return explicit.split(), None
    if os.environ.get("LINKLAB"):
        return os.environ["LINKLAB"].split(), None
    exe = shutil.which("linklab")
    if exe:
        return [exe], None
    for p in (REPO / ".venv" / "bin" / "linklab", REPO / "target" / "release" / "linklab"):
        if p.exists():
            return [str(p)], None
    probe = [sys.executable, "-c", "import linklab._core"]
    if subprocess.run(probe, capture_output=True).returncode == 0:
        return [sys.executable, "-m", "linklab"], None
    # An in-place build (`maturin develop` / a copied _core*.so) under python/.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        x for x in (str(REPO / "python"), env.get("PYTHONPATH")) if x
    )
    if subprocess.run(probe, capture_output=True, env=env, cwd=REPO).returncode == 0:
        return [sys.executable, "-m", "linklab"], env
    raise BenchError(
        "linklab is not installed: no `linklab` on PATH, and `import linklab._core` fails for "
        f"{sys.executable} (also with PYTHONPATH={REPO / 'python'}). Build/install it (e.g. "
        "`maturin develop --release` or `pip install -e .`), or pass --linklab 'CMD' / set "
        "LINKLAB=CMD."
    )


def fmt_seconds(x: float) -> str:
    return f"{x:g}s"


def linklab_links(obj: Any) -> list[dict[str, Any]]:
    """All per-link records (dicts with tx_packets) under a `links` key, list or mapping."""
    found: list[dict[str, Any]] = []

    def walk(o: Any, under_links: bool) -> None:
        if isinstance(o, dict):
            if under_links and "tx_packets" in o:
                found.append(o)
            for k, v in o.items():
                walk(v, under_links or k == "links")
        elif isinstance(o, list):
            for v in o:
                walk(v, under_links)

    walk(obj, False)
    return found


BOTTLENECK = "L->R"  # the bottleneck's data direction in SCENARIO


def linklab_queue(model: dict[str, Any]) -> dict[str, Any]:
    """The bottleneck queue of ``model`` in linklab's terms (what benches/ns3/dumbbell.cc
    configures in ns-3: see the comment at its top)."""
    limit, ecn, q = f"{model['qlimit']}p", bool(model["ecn"]), model["queue"]
    if q == "red":
        return {"kind": "red", "limit": limit, "minth": 75, "maxth": 225, "ecn": ecn,
                "mean_pkt_size": 500, "ns2": True, "idle": "ns2"}  # fmt: skip
    if q == "dctcp":  # RED as DCTCP's marker: QW 1, MinTh K, MaxTh 3K, UseHardDrop false
        k = model["dctcp_k"]
        return {"kind": "red", "limit": limit, "minth": k, "maxth": 3 * k, "wq": 1.0, "ecn": ecn,
                "hard_drop": False, "mean_pkt_size": 500, "ns2": True}  # fmt: skip
    if q == "droptail":
        return {"limit": limit}
    if q == "pie":  # dumbbell.cc sets PieQueueDisc::MeanPktSize to the 500-byte packets
        return {"kind": q, "limit": limit, "ecn": ecn, "mean_pkt_size": 500}
    return {"kind": q, "limit": limit, "ecn": ecn}


def linklab_overlay(scenario: dict[str, Any], model: dict[str, Any]) -> dict[str, Any]:
    """``scenario`` (the parsed SCENARIO) with ``[tcp] cc`` and the bottleneck's queue of
    ``model``; the other links and every other key unchanged."""
    out = json.loads(json.dumps(scenario))
    out.setdefault("tcp", {})["ecn"] = bool(model["ecn"])
    if model.get("recovery") == "classic":
        out["tcp"]["prr"] = False
    if model["cc"] != "newreno":
        out["tcp"]["cc"] = model["cc"]
    (bottleneck,) = [x for x in out["links"] if (x.get("a"), x.get("b")) == ("L", "R")]
    bottleneck["queue"] = linklab_queue(model)
    return out


@dataclass
class LinklabRunner:
    cmd_prefix: list[str]
    extra_sets: list[str]
    env: dict[str, str] | None = None
    model: dict[str, Any] | None = None  # None: DEFAULT_MODEL, SCENARIO as it is
    scenario: str = SCENARIO

    def __post_init__(self) -> None:
        if self.model is not None and self.model != DEFAULT_MODEL:
            import tomllib

            import tomli_w

            parsed = tomllib.loads((REPO / SCENARIO).read_text())
            derived = Path(tempfile.mkdtemp(prefix="vs_ns3-")) / "dumbbell.toml"
            derived.write_text(tomli_w.dumps(linklab_overlay(parsed, self.model)))
            self.scenario = str(derived)

    def command(self, flows: int, simtime: float, per: float, seed: int) -> list[str]:
        sets = [f"per={per:g}", f"flows={flows}", f"duration={fmt_seconds(simtime)}"]
        sets += self.extra_sets
        cmd = self.cmd_prefix + ["run", self.scenario, "--json", "--seed", str(seed)]
        for s in sets:
            cmd += ["--set", s]
        return cmd

    def run(self, flows: int, simtime: float, per: float, seed: int) -> dict[str, Any]:
        cmd = self.command(flows, simtime, per, seed)
        res = run_child(cmd, cwd=REPO, env=self.env)
        if res.returncode != 0:
            raise BenchError(
                f"linklab run failed (exit {res.returncode}): {' '.join(cmd)}\n{res.stderr[-3000:]}"
            )
        try:
            raw = last_json_line(res.stdout)
        except (ValueError, json.JSONDecodeError) as e:
            raise BenchError(f"linklab printed no JSON object ({e}): {res.stdout[-1000:]}") from e
        try:
            goodput = float(raw["aggregate"]["goodput_bps"])
            wall = float(raw["wall_time_s"])
        except (KeyError, TypeError, ValueError) as e:
            raise BenchError(f"linklab JSON lacks {e}: keys {sorted(raw)}") from e
        links = linklab_links(raw)
        # The busiest link is the bottleneck's data direction (every data packet crosses it,
        # erased ones included) - the same count as ns-3's RED enqueues.
        tx = max((int(link["tx_packets"]) for link in links), default=None)
        # Mean queueing delay at the bottleneck by Little's law: time-average occupancy
        # (packets) / departure rate (packets per simulated second).
        qdelay = None
        queue = next((q for q in raw.get("queues", []) if q.get("link") == BOTTLENECK), None)
        sent = next((x["tx_packets"] for x in links if x.get("name") == BOTTLENECK), 0)
        if queue is not None and sent:
            qdelay = float(queue["mean_packets"]) * float(raw["sim_time_s"]) / sent
        return {
            "sim": "linklab",
            "flows": flows,
            "simtime": simtime,
            "per": per,
            "seed": seed,
            "goodput_bps": goodput,
            "run_wall_s": wall,
            "process_wall_s": res.process_wall_s,
            "events": raw.get("events"),
            "bottleneck_tx_packets": tx,
            "queue_delay_s": qdelay,
            "peak_rss_kib": res.peak_rss_kib,
            "load1": res.load1,
            "command": cmd,
            "raw": raw,
        }


# --------------------------------------------------------------------------------------------
# statistics and report
# --------------------------------------------------------------------------------------------


def mean_ci(xs: list[float]) -> tuple[float, float]:
    """Mean and half-width of the two-sided 95 % Student-t confidence interval."""
    n = len(xs)
    if n == 0:
        return math.nan, math.nan
    m = sum(xs) / n
    if n == 1:
        return m, math.nan
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    t = T95[n - 2] if n - 1 <= len(T95) else 1.960
    return m, t * sd / math.sqrt(n)


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-simulator figures over the seeds of one PER."""
    if not runs:
        return {}
    g_m, g_ci = mean_ci([r["goodput_bps"] for r in runs])
    w_m, w_ci = mean_ci([r["run_wall_s"] for r in runs])
    p_m, _ = mean_ci([r["process_wall_s"] for r in runs])
    ev = [r["events"] for r in runs if r.get("events") is not None]
    tx = [r["bottleneck_tx_packets"] for r in runs if r.get("bottleneck_tx_packets") is not None]
    qd = [r["queue_delay_s"] for r in runs if r.get("queue_delay_s") is not None]
    out: dict[str, Any] = {
        "n": len(runs),
        "goodput_bps_mean": g_m,
        "goodput_bps_ci95": g_ci,
        "run_wall_s_mean": w_m,
        "run_wall_s_ci95": w_ci,
        "process_wall_s_mean": p_m,
        "events_mean": sum(ev) / len(ev) if ev else None,
        "bottleneck_tx_packets_mean": sum(tx) / len(tx) if tx else None,
        "queue_delay_s_mean": sum(qd) / len(qd) if qd else None,
        "peak_rss_mib_max": max(r["peak_rss_kib"] for r in runs) / 1024,
        "peak_rss_mib_mean": sum(r["peak_rss_kib"] for r in runs) / len(runs) / 1024,
    }
    if tx and len(tx) == len(runs):
        out["packets_per_wall_s"] = sum(tx) / sum(r["run_wall_s"] for r in runs)
    if ev and len(ev) == len(runs):
        out["events_per_wall_s"] = sum(ev) / sum(r["run_wall_s"] for r in runs)
    if runs[0]["sim"] == "ns-3":
        out["rx_packets_mean"] = sum(r["rx_packets"] for r in runs) / len(runs)
    return out


def build_report(
    cfg: dict[str, Any],
    ns3_runs: list[dict[str, Any]],
    ll_runs: list[dict[str, Any]],
    linklab_error: str | None,
) -> dict[str, Any]:
    rows = []
    for per in cfg["per"]:
        ns = summarize([r for r in ns3_runs if r["per"] == per])
        ll = summarize([r for r in ll_runs if r["per"] == per])
        row: dict[str, Any] = {"per": per, "ns3": ns, "linklab": ll}
        if ns and ll:
            row["goodput_rel_diff"] = (ll["goodput_bps_mean"] - ns["goodput_bps_mean"]) / ns[
                "goodput_bps_mean"
            ]
            row["speedup_run"] = ns["run_wall_s_mean"] / ll["run_wall_s_mean"]
            if ns.get("queue_delay_s_mean") and ll.get("queue_delay_s_mean") is not None:
                row["queue_delay_rel_diff"] = (
                    ll["queue_delay_s_mean"] - ns["queue_delay_s_mean"]
                ) / ns["queue_delay_s_mean"]
            row["speedup_process"] = ns["process_wall_s_mean"] / ll["process_wall_s_mean"]
        rows.append(row)

    reference = cfg["flows"] == 10 and cfg["simtime"] == 100
    targets: dict[str, Any] = {}
    if ll_runs:
        zero = next((r for r in rows if r["per"] == 0 and "speedup_run" in r), None)
        speed = zero["speedup_run"] if zero else None
        rss = max(r["peak_rss_kib"] for r in ll_runs) / 1024
        worst = max(abs(r["goodput_rel_diff"]) for r in rows if "goodput_rel_diff" in r)
        targets = {
            "speedup": {
                "value": speed,
                "target": f">= {TARGET_SPEEDUP:g}x (ns-3 Run() / linklab run, per=0)",
                "pass": speed is not None and speed >= TARGET_SPEEDUP,
                "reference_config": reference,
            },
            "linklab_peak_rss_mib": {
                "value": rss,
                "target": f"<= {TARGET_RSS_MIB:g} MiB",
                "pass": rss <= TARGET_RSS_MIB,
            },
            "goodput_max_abs_rel_diff": {
                "value": worst,
                "target": f"<= {TARGET_GOODPUT_REL:.0%} at every PER",
                "pass": worst <= TARGET_GOODPUT_REL and all("goodput_rel_diff" in r for r in rows),
                "per_per": {str(r["per"]): r.get("goodput_rel_diff") for r in rows},
            },
        }
        if cfg["model"] != DEFAULT_MODEL:  # a CC/AQM comparison: queueing delay too
            qworst = max(
                (abs(r["queue_delay_rel_diff"]) for r in rows if "queue_delay_rel_diff" in r),
                default=None,
            )
            targets["queue_delay_max_abs_rel_diff"] = {
                "value": qworst,
                "target": f"<= {TARGET_QDELAY_REL:.0%} at every PER",
                "pass": qworst is not None and qworst <= TARGET_QDELAY_REL,
            }
    return {
        "benchmark": "linklab vs ns-3 3.44, dumbbell " + model_label(cfg["model"]),
        "config": cfg,
        "host": host_info(),
        "rows": rows,
        "targets": targets,
        "all_pass": bool(targets) and all(t["pass"] for t in targets.values()),
        "linklab_error": linklab_error,
        "ns3_runs": ns3_runs,
        "linklab_runs": ll_runs,
    }


def model_label(model: dict[str, Any]) -> str:
    if model == DEFAULT_MODEL:
        return "RED/ECN"
    ecn = "ECN" if model["ecn"] else "no ECN"
    recovery = ", classic recovery (no PRR)" if model.get("recovery") == "classic" else ""
    return f"{model['cc']} over {model['queue']} {model['qlimit']}p, {ecn}{recovery}"


def host_info() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def fmt_ci(m: float | None, ci: float | None, scale: float = 1e6, nd: int = 3) -> str:
    if m is None or (isinstance(m, float) and math.isnan(m)):
        return "-"
    s = f"{m / scale:.{nd}f}"
    if ci is not None and not math.isnan(ci):
        s += f" ± {ci / scale:.{nd}f}"
    return s


def fmt_ms(x: float | None) -> str:
    return fmt_num(None if x is None else x * 1e3, ".2f", " ms")


def fmt_num(x: float | None, spec: str, suffix: str = "") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return format(x, spec) + suffix


def print_table(rep: dict[str, Any]) -> None:
    cfg = rep["config"]
    print(
        f"linklab vs ns-3 ({rep['ns3_runs'][0]['impl'] if rep['ns3_runs'] else '?'}) - "
        f"dumbbell {model_label(cfg['model'])}, {cfg['flows']} flows x {cfg['simtime']:g} s, "
        f"{len(cfg['seeds'])} seed(s); goodput Mbit/s mean ± 95 % CI"
    )
    hdr = (
        f"{'PER':>6} | {'ns-3 goodput':>17} | {'linklab goodput':>17} | {'diff':>7} | "
        f"{'ns-3 qdelay':>11} | {'ll qdelay':>9} | "
        f"{'ns-3 Run s':>10} | {'ll run s':>8} | {'speedup':>8} | {'proc x':>7} | "
        f"{'ns-3 pkt/s':>10} | {'ll pkt/s':>10} | {'ns-3 MiB':>8} | {'ll MiB':>7}"
    )
    print(hdr)
    print("-" * len(hdr))
    for r in rep["rows"]:
        ns, ll = r["ns3"], r["linklab"]
        diff = r.get("goodput_rel_diff")
        print(
            f"{r['per']:>6g} | {fmt_ci(ns.get('goodput_bps_mean'), ns.get('goodput_bps_ci95')):>17}"
            f" | {fmt_ci(ll.get('goodput_bps_mean'), ll.get('goodput_bps_ci95')):>17}"
            f" | {fmt_num(None if diff is None else diff * 100, '+.1f', '%'):>7}"
            f" | {fmt_ms(ns.get('queue_delay_s_mean')):>11}"
            f" | {fmt_ms(ll.get('queue_delay_s_mean')):>9}"
            f" | {fmt_num(ns.get('run_wall_s_mean'), '.3f'):>10}"
            f" | {fmt_num(ll.get('run_wall_s_mean'), '.4f'):>8}"
            f" | {fmt_num(r.get('speedup_run'), '.1f', 'x'):>8}"
            f" | {fmt_num(r.get('speedup_process'), '.1f', 'x'):>7}"
            f" | {fmt_num(ns.get('packets_per_wall_s'), '.3g'):>10}"
            f" | {fmt_num(ll.get('packets_per_wall_s'), '.3g'):>10}"
            f" | {fmt_num(ns.get('peak_rss_mib_max'), '.1f'):>8}"
            f" | {fmt_num(ll.get('peak_rss_mib_max'), '.1f'):>7}"
        )
    print(
        "qdelay = mean wait for the bottleneck's data-direction transmitter by Little's law "
        "(ns-3: queue disc + device queue; linklab: its queue); "
        "speedup = ns-3 Simulator::Run() / linklab core run (wall_time_s), mean over seeds; "
        "proc x = same for whole processes; pkt/s = bottleneck data-direction packets per "
        "core-run wall second; MiB = peak RSS of the child (max over seeds)."
    )
    if rep["linklab_error"]:
        print(f"\nlinklab: NOT RUN - {rep['linklab_error']}")
        return
    t = rep["targets"]
    sp = t["speedup"]
    note = "" if sp["reference_config"] else "  (not the 10 flows x 100 s reference config)"
    print()
    print(
        f"headline: linklab is {fmt_num(sp['value'], '.1f')}x faster than ns-3 at per=0, "
        f"{cfg['flows']} flows x {cfg['simtime']:g} s{note}"
    )
    for name, tt in t.items():
        val = tt["value"]
        shown = (
            fmt_num(None if val is None else val * 100, "+.1f", "%")
            if name.startswith(("goodput", "queue_delay"))
            else fmt_num(val, ".2f")
        )
        print(f"  [{'PASS' if tt['pass'] else 'FAIL'}] {name} = {shown}  (target {tt['target']})")


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------


def parse_per(s: str) -> list[float]:
    try:
        vals = [float(x) for x in s.split(",") if x.strip()]
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"bad --per list {s!r}") from e
    if not vals or any(not 0 <= v < 1 for v in vals):
        raise argparse.ArgumentTypeError("--per values must be in [0, 1)")
    return vals


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--flows", type=int, default=10)
    p.add_argument("--simtime", type=float, default=100.0, help="simulated seconds")
    p.add_argument("--seeds", type=int, default=10, help="seeds 1..N (ns-3 RngRun, linklab --seed)")
    p.add_argument("--per", type=parse_per, default=[0.0, 0.01, 0.1], help="comma list")
    p.add_argument("--quick", action="store_true", help="2 flows x 5 s, one seed (smoke run)")
    p.add_argument("--cc", choices=CCS, default="newreno", help="congestion control, every flow")
    p.add_argument(
        "--queue",
        choices=tuple(QUEUES),
        default="red",
        help="bottleneck queue (dctcp = RED marking from K packets, for --cc dctcp)",
    )
    p.add_argument("--qlimit", type=int, metavar="P", help="queue limit in packets")
    p.add_argument("--no-ecn", action="store_true", help="ECN off in TCP and the queue")
    p.add_argument("--dctcp-k", type=int, default=20, metavar="P", help="DCTCP marking threshold")
    p.add_argument(
        "--recovery",
        choices=("prr", "classic"),
        default="prr",
        help="SACK loss recovery on both sides: PRR (ns-3's default, the scenario's) or "
        "classic RFC 6675 (ns-3 TcpClassicRecovery, linklab prr = false)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument(
        "--ns3-venv",
        type=Path,
        default=Path(os.environ.get("NS3_VENV", DEFAULT_VENV)),
        help="venv with `pip install ns3` (created if missing; env NS3_VENV)",
    )
    p.add_argument(
        "--ns3-impl",
        choices=("auto", "native", "python"),
        default="auto",
        help="native C++ twin (default when it builds) or the cppyy dumbbell.py",
    )
    p.add_argument("--rebuild", action="store_true", help="rebuild the native twin")
    p.add_argument(
        "--ns3-from",
        type=Path,
        metavar="JSON",
        help="reuse ns-3 runs saved by --save-ns3 (matching flows/simtime/per/seed)",
    )
    p.add_argument(
        "--save-ns3",
        type=Path,
        metavar="JSON",
        help="write the ns-3 runs and summary here (e.g. benches/results/...)",
    )
    p.add_argument("--ns3-only", action="store_true", help="skip linklab")
    p.add_argument("--linklab", metavar="CMD", help="linklab command (default: found on PATH)")
    p.add_argument(
        "--linklab-set",
        action="append",
        default=[],
        metavar="K=V",
        help="extra `--set` for linklab (repeatable; appended after the defaults)",
    )
    p.add_argument(
        "--no-alike",
        action="store_true",
        help=f"do not pass the ns-3-alike TCP sets {' '.join(LINKLAB_ALIKE)}",
    )
    a = p.parse_args(argv)
    if a.quick:
        a.flows, a.simtime, a.seeds = 2, 5.0, 1
    if a.qlimit is not None and a.qlimit < 1:
        p.error(f"--qlimit must be >= 1 packet, not {a.qlimit}")
    if a.dctcp_k < 1:
        p.error(f"--dctcp-k must be >= 1 packet, not {a.dctcp_k}")
    return a


def model_of(a: argparse.Namespace) -> dict[str, Any]:
    """The CC/queue choice of the arguments, keyed as in DEFAULT_MODEL."""
    model = {
        "cc": a.cc,
        "queue": a.queue,
        "qlimit": a.qlimit or QUEUES[a.queue],
        "ecn": not a.no_ecn,
        "dctcp_k": a.dctcp_k,
    }
    if a.recovery == "classic":  # only when set, so that saved PRR runs keep their keys
        model["recovery"] = "classic"
    return model


CacheKey = tuple[int, float, float, int, str]


def cache_key(flows: int, simtime: float, per: float, seed: int, model: dict[str, Any]) -> CacheKey:
    return (flows, simtime, per, seed, json.dumps(model, sort_keys=True))


def load_ns3_cache(path: Path | None) -> dict[CacheKey, dict[str, Any]]:
    """Saved ns-3 runs by configuration; runs saved before --cc/--queue are DEFAULT_MODEL's."""
    if not path:
        return {}
    data = json.loads(path.read_text())
    out = {}
    for r in data["runs"]:
        model = {k: r.get(k, v) for k, v in DEFAULT_MODEL.items()}
        if "recovery" in r:  # set only for --recovery classic (see model_of)
            model["recovery"] = r["recovery"]
        out[cache_key(r["flows"], r["simtime"], r["per"], r["seed"], model)] = r
    return out


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    seeds = list(range(1, a.seeds + 1))
    cfg = {
        "flows": a.flows,
        "simtime": a.simtime,
        "per": a.per,
        "seeds": seeds,
        "scenario": SCENARIO,
        "model": model_of(a),
    }

    ll: LinklabRunner | None = None
    linklab_error: str | None = "skipped (--ns3-only)" if a.ns3_only else None
    if not a.ns3_only:
        try:
            sets = ([] if a.no_alike else list(LINKLAB_ALIKE)) + a.linklab_set
            cmd, env = find_linklab(a.linklab)
            ll = LinklabRunner(cmd, sets, env, cfg["model"])
            cfg["linklab_command"] = ll.command(a.flows, a.simtime, a.per[0], seeds[0])
        except BenchError as e:
            linklab_error = str(e)
            log(f"[linklab] {e}")

    cache = load_ns3_cache(a.ns3_from)
    ns3: Ns3Runner | None = None
    ns3_runs: list[dict[str, Any]] = []
    ll_runs: list[dict[str, Any]] = []
    try:
        for per in a.per:
            for seed in seeds:
                key = cache_key(a.flows, a.simtime, per, seed, cfg["model"])
                if key in cache:
                    r = cache[key]
                else:
                    if ns3 is None:
                        ns3 = make_ns3_runner(a.ns3_venv, a.ns3_impl, a.rebuild)
                    r = ns3.run(a.flows, a.simtime, per, seed, cfg["model"])
                ns3_runs.append(r)
                msg = (
                    f"[ns-3 {r['impl']}] per={per:g} seed={seed}: "
                    f"{r['goodput_bps'] / 1e6:.3f} Mbit/s, Run() {r['run_wall_s']:.2f} s, "
                    f"{r['peak_rss_kib'] / 1024:.0f} MiB"
                )
                if key in cache:
                    msg += " (cached)"
                log(msg)
                if ll is not None:
                    try:
                        q = ll.run(a.flows, a.simtime, per, seed)
                    except BenchError as e:
                        linklab_error, ll = str(e), None
                        ll_runs.clear()
                        log(f"[linklab] {e}\n[linklab] continuing with ns-3 only")
                        continue
                    ll_runs.append(q)
                    log(
                        f"[linklab] per={per:g} seed={seed}: "
                        f"{q['goodput_bps'] / 1e6:.3f} Mbit/s, run {q['run_wall_s']:.3f} s, "
                        f"{q['peak_rss_kib'] / 1024:.1f} MiB"
                    )
    except BenchError as e:
        log(f"[ns-3] {e}")
        return 2

    rep = build_report(cfg, ns3_runs, ll_runs, linklab_error)
    if a.save_ns3:
        # Merge into an existing file: runs of other configurations (PER, model, ...) stay.
        a.save_ns3.parent.mkdir(parents=True, exist_ok=True)
        kept: list[dict[str, Any]] = []
        if a.save_ns3.exists():
            mine = {cache_key(r["flows"], r["simtime"], r["per"], r["seed"], cfg["model"])
                    for r in ns3_runs}  # fmt: skip
            kept = [r for k, r in load_ns3_cache(a.save_ns3).items() if k not in mine]
        saved = {
            "benchmark": "ns-3 3.44 dumbbell (benches/vs_ns3.py --save-ns3)",
            "host": rep["host"],
            "runs": kept + ns3_runs,
        }
        tmp = a.save_ns3.with_name(a.save_ns3.name + ".tmp")
        tmp.write_text(json.dumps(saved, indent=1) + "\n")
        tmp.replace(a.save_ns3)
        log(f"[ns-3] saved {len(ns3_runs)} runs to {a.save_ns3}")
    if a.json:
        print(json.dumps(rep))
    else:
        print_table(rep)
    if a.ns3_only:
        return 0
    if linklab_error:
        return 2
    return 0 if rep["all_pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
