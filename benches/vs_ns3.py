#!/usr/bin/env python3
"""Side-by-side benchmark: linklab vs ns-3 3.44 on the RED/ECN dumbbell.

Runs, for every (PER, seed), the ns-3 dumbbell (our native C++ ``benches/ns3/dumbbell.cc``; the
cppyy script ``dumbbell.py`` it was made from, named by ``$LINKLAB_NS3_SCRIPT``, as a fall-back)
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
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BENCHES = REPO / "benches"
NS3_SCRIPT_ENV = "LINKLAB_NS3_SCRIPT"  # the cppyy dumbbell.py (not in the repository)
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
    cpu_s: float = 0.0  # user + system CPU seconds of the child


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
            cpu_s=ru.ru_utime + ru.ru_stime,
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
    script = Path(os.environ.get(NS3_SCRIPT_ENV, "")).expanduser()
    if not os.environ.get(NS3_SCRIPT_ENV) or not script.is_file():
        raise BenchError(
            f"the cppyy ns-3 script needs ${NS3_SCRIPT_ENV} naming dumbbell.py "
            f"(now {os.environ.get(NS3_SCRIPT_ENV)!r}); the default --ns3-impl native needs "
            "only g++ and the ns3 wheel"
        )
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
    # ns-3.44's own rules where they depart from the RFCs and Linux, as the grid gives them
    # (grid_settings): PIE's burst allowance, CoDel's MinBytes exemption on the flow
    # queue's bytes with its mark timing and FQ-CoDel's new-flow rule, MinBytes and the
    # quantum at the device MTU; and the grid's delay targets one device-queue frame
    # higher (device_wait_ms: ns-3's sojourn ends as the packet enters the 1-packet device
    # queue, linklab's as its transmission starts; 5.4016 and 15.4016 ms here).
    target = f"{fmt_float(linklab_aqm_target_ms(row_aqm_settings(q)))}ms"
    if q == "pie":  # dumbbell.cc sets PieQueueDisc::MeanPktSize to the 500-byte packets
        return {"kind": q, "limit": limit, "ecn": ecn, "mean_pkt_size": 500, "burst_rule": "ns3",
                "target": target}  # fmt: skip
    out = {"kind": q, "limit": limit, "ecn": ecn, "mtu": f"{MTU_B}B", "variant": "ns3",
           "target": target}  # fmt: skip
    if q == "fq_codel":
        out["quantum"] = f"{MTU_B}B"
    return out


ROW_PACKET_B = 500  # the rows' IP packets: MSS 448 + 52 (LINKLAB_ALIKE)
ROW_RATE_MBPS = 10.0  # the shared scenario's bottleneck


def row_aqm_settings(queue: str) -> dict[str, Any]:
    """What device_wait_ms / linklab_aqm_target_ms read, for the --cc/--queue rows (the
    shared scenario: 500-byte packets, PPP framing, 10 Mbit/s, ns-3's device queue 1p)."""
    return {"queue": queue, "packet_bytes": ROW_PACKET_B, "framing_bytes": FRAMING_B,
            "device_queue_p": DEVICE_QUEUE_P, "rate_mbps": ROW_RATE_MBPS}  # fmt: skip


def linklab_overlay(scenario: dict[str, Any], model: dict[str, Any]) -> dict[str, Any]:
    """``scenario`` (the parsed SCENARIO) with ``[tcp] cc`` and the bottleneck's queue of
    ``model``, under ``[tcp] profile = "ns3"`` (ns-3.44's departures from the RFCs, which
    the scenario's own keys override); the other links and every other key unchanged."""
    out = json.loads(json.dumps(scenario))
    out.setdefault("tcp", {})["ecn"] = bool(model["ecn"])
    out["tcp"]["profile"] = "ns3"
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
            "hops": raw.get("hops"),
            "hops_per_s": raw.get("hops_per_s"),
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


def median_of_repeats(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One simulator's repeats of one (PER, seed), as one run: ``run_wall_s`` and
    ``process_wall_s`` the medians over the repeats (every value kept in ``*_all``), the
    rest from the first repeat (the runs are deterministic: the same every time), and
    linklab's ``hops_per_s`` its hops over the median run time."""
    first = dict(runs[0])
    if len(runs) == 1:
        return first
    for k in ("run_wall_s", "process_wall_s"):
        xs = [r[k] for r in runs]
        first[k], first[f"{k}_all"] = statistics.median(xs), xs
    if first.get("hops") and first.get("hops_per_s"):
        first["hops_per_s"] = first["hops"] / first["run_wall_s"]
    return first


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
    # Packet-hops per wall-second of linklab's run phase (docs/metrics.md): the hops over
    # the seeds' run-phase seconds (each run's hops / hops_per_s).
    hop_runs = [r for r in runs if r.get("hops") and r.get("hops_per_s")]
    if hop_runs and len(hop_runs) == len(runs):
        out["hops_mean"] = sum(r["hops"] for r in runs) / len(runs)
        out["hops_per_s"] = sum(r["hops"] for r in runs) / sum(
            r["hops"] / r["hops_per_s"] for r in runs
        )
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
        f"{'ns-3 pkt/s':>10} | {'ll pkt/s':>10} | {'ll hop/s':>9} | {'ns-3 MiB':>8} | {'ll MiB':>7}"
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
            f" | {fmt_num(ll.get('hops_per_s'), '.3g'):>9}"
            f" | {fmt_num(ns.get('peak_rss_mib_max'), '.1f'):>8}"
            f" | {fmt_num(ll.get('peak_rss_mib_max'), '.1f'):>7}"
        )
    print(
        "qdelay = mean wait for the bottleneck's data-direction transmitter by Little's law "
        "(ns-3: queue disc + device queue; linklab: its queue); "
        "speedup = ns-3 Simulator::Run() / linklab core run (wall_time_s), mean over seeds; "
        "proc x = same for whole processes; pkt/s = bottleneck data-direction packets per "
        "core-run wall second; hop/s = linklab's packet-hops per wall second of its run phase "
        "(docs/metrics.md); MiB = peak RSS of the child (max over seeds)."
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
# the grid (--grid): every CC x queue pair over flows, MSS, rate, delay and queue limit
# --------------------------------------------------------------------------------------------

# Queues whose limit is a multiple of the bandwidth-delay product (`--qlimit` in BDP); the
# AQMs (CoDel, FQ-CoDel, PIE) hold AQM_LIMIT_P packets whatever the path.
GRID_QUEUES = ("droptail", "red", "codel", "fq_codel", "pie", "dctcp")
BUFFER_QUEUES = ("droptail", "red", "dctcp")
AQM_LIMIT_P = 1000
HEADERS_B = 52  # IP 20 + TCP 20 + timestamp option 12: an MSS-sized segment is MSS + 52 at IP
FRAMING_B = 2  # ns-3 point-to-point (PPP) header on every frame
MTU_B = 1500  # ns-3 point-to-point MTU: CoDel's MinBytes, FQ-CoDel's quantum
ACCESS_DELAY_MS = 1.0
ACCESS_RATE_FACTOR = 10  # access links 10x the bottleneck: the queue builds only at L->R
DEVICE_QUEUE_P = 1  # ns-3's point-to-point device queue behind the queue disc (set to 1p)
# The delay targets of the sojourn-time AQMs as the twin builds them (ns-3's defaults, RFC 8289
# and RFC 8033's): CoDel's and FQ-CoDel's `Target`, PIE's `QueueDelayReference`.
AQM_TARGET_MS = {"codel": 5.0, "fq_codel": 5.0, "pie": 15.0}
RED_THRESHOLDS = (0.15, 0.45)  # RED MinTh, MaxTh as fractions of the limit (75/225 of 500)
GRID_FACTORS = ("flows", "delay", "qlimit", "mss", "rate")
GRID_LEVELS: dict[str, tuple[float, ...]] = {
    "flows": (1, 4, 16),
    "delay": (0.0, 18.0, 98.0),  # bottleneck one-way ms: base RTT 2 x (1 + d + 1) = 4/40/200
    "qlimit": (0.5, 1.0, 4.0),  # BDP multiples (drop-tail, RED, DCTCP's marker)
    "mss": (536, 1448),
    "rate": (10.0, 100.0),  # Mbit/s
}
# The covering design of the five factors above (columns as GRID_FACTORS): every pair of
# levels of every two factors appears in at least one row (strength 2), in the fewest rows
# possible (9 = 3 x 3). Of the arrays built from the L9(3^4) orthogonal array (flows, delay,
# qlimit and a fourth column folded onto MSS) with the rate chosen per row, this is the one
# with the fewest ns-3 packets (see `grid_design`, which rebuilds it, and docs/benchmarks.md).
DEFAULT_DESIGN: tuple[tuple[float, ...], ...] = (
    (1, 0.0, 0.5, 1448, 100.0),
    (1, 18.0, 4.0, 1448, 10.0),
    (1, 98.0, 1.0, 536, 10.0),
    (4, 0.0, 4.0, 536, 10.0),
    (4, 18.0, 1.0, 1448, 100.0),
    (4, 98.0, 0.5, 1448, 10.0),
    (16, 0.0, 1.0, 1448, 10.0),
    (16, 18.0, 0.5, 536, 100.0),
    (16, 98.0, 4.0, 1448, 100.0),
)
GRID_SEEDS = 3
# Targets of issue 33 item 5, fixed before any grid run: a cell agrees when linklab's mean
# goodput is within 10 % and its mean queueing delay within 15 % of ns-3's (means over the
# seeds); the grid passes when at least 90 % of its cells agree.
TARGET_GRID_GOODPUT = 0.10
TARGET_GRID_QDELAY = 0.15
TARGET_GRID_PASS_RATE = 0.90
NS3_GRID_RESULTS = BENCHES / "results" / "ns3-grid.json"
# The cells whose ns-3 runs are committed for 10 seeds (54 cells: 17 until the fourth session,
# family F's noise was measured with them; 37 more by the more-seeds rule below). Without
# `--seeds`, the grid's tally uses seeds 1-10 on both sides for every cell saved there with
# the arguments the script gives ns-3 today, whichever way each then goes (issue 33, g33p):
# the target is a mean over >= 3 seeds, and more seeds measure the same mean better.
# `--seeds N` gives every cell seeds 1..N.
NS3_GRID_SEEDS10_RESULTS = BENCHES / "results" / "ns3-grid-seeds10.json"
GRID_MORE_SEEDS = 10
# Which cells get those 10 seeds (issue 33, g33s; fixed by the lead before any run, from the
# committed results only, and applied as it falls): a cell judged over GRID_SEEDS seeds whose
# 95 % interval of the relative difference of either metric is wider than that metric's
# tolerance (TARGET_GRID_GOODPUT, TARGET_GRID_QDELAY), and whose ns-3 run costs at most this
# many CPU-s a seed (a cap for cost only). `more_seeds_cells` applies it to a grid report;
# `--more-seeds-rule REPORT` prints the cells (docs/benchmarks.md, the fifth-session block).
MORE_SEEDS_NS3_CPU_CAP_S = 10.0
# The rule's second tier (issue 33, g33v2; fixed and committed before any of its runs): the
# same wide-interval cells with ns-3 at most this many CPU-s a seed. The cap is a cost bound
# only, taken from the committed runs' costs and the machine's budget, not from any verdict:
# seeds 4-10 of every cell the rule selects must fit in about 30 min of one core (1800 CPU-s);
# on linklab-vs-ns3-grid.json of 6b42176 a cap of 20 selects 15 cells (7 x 201.6 = 1411
# CPU-s), the next multiple of 10, 30, would select 18 (1926 CPU-s, over the budget).
MORE_SEEDS_NS3_CPU_CAP2_S = 20.0


def _shown_path(path: Path) -> str:
    """``path`` as a report records it: relative to the repository when inside it (a report
    names no path of the machine it ran on)."""
    p = Path(path).resolve()
    return str(p.relative_to(REPO)) if p.is_relative_to(REPO) else str(path)


def _grid_q(queue: str, bdp: str) -> str:
    """A cell key's queue-limit part: `q{bdp}bdp` for the buffer queues, else the AQM limit."""
    return f"q{bdp}bdp" if queue in ("droptail", "red") else "q1000p"


# The grid's misses and their causes as docs/benchmarks.md ("The grid") records them, by
# family: A-J, O3, P and S found by experiment, O1, O4, Q and R open. `--grid` prints a
# miss's family beside it; a miss without one is new and needs a cause.
GRID_MISS_FAMILY = {
    "A": "ns-3's BBR rate samples reused across ACKs (bandwidth overestimated, standing queue); "
    "with them and ns-3's send quantum emulated what is left is open; bbr/red/f1/r100/d0 "
    "(ns-3's RTO collapse, 16-17 timeouts a run on both sides) moved out with BBR's "
    "loss_window ns3 (g33m: 14.7 -> 17.3 Mbit/s, ns-3 14.9), in again with RED's count_reset "
    "ns3 (g33c2, 10 seeds: +10.9 -> +9.3 %), out again with ns-3's whole-millisecond "
    "timestamp RTT (ts_rtt_ms, g33n; merged tree +16.2 %, +8.1 % without it); traced by "
    "g33bbr: not the ms RTT's consumers (ns-3's BBR min RTT is the timestamp sample too, "
    "4.000 ms on both sides) but RED: ns-3 drops a Not-ECT resend early in the first two "
    "overflows after each RTO (2 and 7.6 % of them), linklab none (its RED average, "
    "thresholds +1 for the device packet, 0.5-1.1 packets lower 60-130 ms after the idle "
    "RTO wait; after the first recovery its queue ~2 packets lower, open); +16.9 % with "
    "g33bbr's rate_losses and CWR fix",
    "C": "ns-3.44 PRR (issue #1350), emulated since g33e (prr_variant ns3); the f1 r100 d0 "
    "cell in since g33c (ns-3's constant Reno-friendly alpha, its quick first ACK)",
    "D": "Westwood+ estimator: ns-3's emulated (filter ns3); the last cell (westwood/red/f1) "
    "came in with ns-3's exact CWR rule (g33u)",
    "P": "ns-3.44 EnterCwr at an echo in recovery or after a timeout (a further cut); "
    "no recovery from CA_CWR (a loss in it waits for the RTO)",
    "Q": "start-up overshoot, seed noise: agrees over the 10 ns-3 seeds committed by g33u",
    "R": "open: moved out with ns-3's whole ECN state machine (cwr_per_echo rules 1-2; not traced)",
    "S": "seed-level chance (g33s, seventh session): the start times decide whether the first "
    "flow's late HyStart exit (893-911 segments) meets the others' slow starts and overflows "
    "FQ-CoDel's 1000 packets (drops, one RTO, 6.5-6.9 ms); ns-3 in 2 of its 10 seeds, linklab "
    "in none (4 of 50 and 5 of 100 over more seeds; means -5.1 %); with ns-3's start times "
    "linklab -8.2 %, -2.8 % with a 1-packet device queue (not modelled; an experiment)",
    "C2": "start-up-decided cells; cubic/red/f1/r10/d18 came in with ns-3.44's TcpCubic "
    "CntClamp (unknown_max_growth, now selected by profile ns3 and the grid; g33x1 traced "
    "it: +8.1/-18.3 -> +0.7/-6.3 %); newreno/red/f4/r10/d98 with ns-3.44's RED count, "
    "which an arrival refused by the full queue does not reset (count_reset ns3, g33c2: "
    "marks during the start-up overflow, so ns-3's share of flows cut to 2 segments by an "
    "echo after their timeout, 31-32 of 40; +10.3 -> +0.7 % over 10 seeds)",
    "F": "seed noise: over 10 seeds the interval of the difference reaches the band; the "
    "one-flow RED/PIE cells have a bad mode (a timeout, then an echo in CA_LOSS: ssthresh 2 "
    "segments) in some seeds of both simulators, at different rates and depths (g33u)",
    "O1": "open: BBR, many flows over a few-packet buffer; with ns-3's NextSeg in CA_LOSS "
    "(rto_resend_lost) and TcpBbr's loss window (loss_window ns3) emulated (g33m) "
    "droptail and red are still below ns-3's goodput with a fuller queue",
    "A2": "open: moved out with ns-3.44's BBR AckAggregationCwnd (ack_aggregation ns3; "
    "queue up, not traced)",
    "H": "CUBIC start-up: linklab's HyStart++ (RFC 9406) vs ns-3's TcpCubic slow start",
    "J": "ns-3.44 PIE holds p at 0 while its burst allowance lasts (RFC 8033, Linux: p runs)",
    "G": "ns-3.44 DCTCP answers loss with cwnd x (1 - alpha/2) (emulated: cc.loss = alpha); "
    "ns-3's first RTO, from its slow-start overshoot in CWR, linklab does not have",
    "T": "open: moved out when the grid took an ns-3.44 emulation (PRR g33e; CUBIC's "
    "ssthresh from cwnd g33t); the last cell (newreno/pie/f16/r100/d98) is decided by PIE's "
    "random first marks in the start-up, its queue built up 2 s later at 25-30 s (g33f); "
    "in over 10 seeds (the more-seeds rule's second tier, g33v2: -5.9/-3.1 %)",
    "U": "timeouts then an echo in CA_LOSS (ssthresh 2 segments) in some seeds; agrees over "
    "the 10 ns-3 seeds committed by g33u",
    "O3": "bbr/red/f1/mss536 explained (g33o3, g33o3b, g33bbr): in the ECN start-up (no fast "
    "recovery in CWR) ns-3's sender sends its whole 1 MB SndBufSize past the first hole and "
    "the write that fills it marks the rate samples app-limited (CalculateAppLimited), so "
    "BBR's full-pipe check skips ten rounds (send_buffer models it); in since g33o3b: "
    "linklab's end of ns-3's CA_CWR (cwr_per_echo) set BBR's window to the one at the echo, "
    "which ns-3 (HasCongControl) and Linux (cong_control) leave alone (a linklab bug: "
    "-18.1 -> -3.7 % over 10 seeds); cubic/red/f4 came in with count_reset ns3",
    "O4": "open: 16 flows at 100 Mbit/s; its last cells came in with ns-3.44's pipe "
    "(sacked_rtx_in_pipe, g33f)",
    "V": "moved out with ns-3.44's pipe, which keeps a SACKed retransmission in flight "
    "(sacked_rtx_in_pipe, g33f); the drop-tail cells came in with ns-3.44's partial-ACK "
    "DoRetransmit (partial_ack_resend, g33v), the codel and fq_codel cells over 10 seeds "
    "(the more-seeds rule's second tier, g33v2): their 3-seed misses were the random start "
    "times, which decide whether the 16 flows' joint slow-start overshoot overflows the "
    "1000-packet limit (with ns-3's start times linklab drops the same packets)",
    "O5": "open: 16 BBR flows, MSS 536, 0.5 BDP of drop-tail at 100 Mbit/s (ns-3 run first "
    "committed 2026-11-28): linklab retransmits 2.2x ns-3's segments, queue +18 % (+21 % "
    "with g33m's rto_resend_lost and loss_window; not traced: 370-470 s of ns-3 CPU a seed); "
    "in since ns-3.44's partial-ACK DoRetransmit (partial_ack_resend, g33v): -0.8/-10.5 %",
    "N": "near the line (a few points out), or partly family A; the two BBR cells at "
    "r100/d18 went out (-10.5 -> -16.8 %, +7.1 -> +15.9 % delay, 3 seeds) with ns-3's 1 ms "
    "timestamp RTT (`ts_rtt_ms`, g33n); both in since g33bbr: bbr/droptail/f16/mss536 with "
    "ns-3's loss count of a rate sample (rate_losses ns3: -2.3/-15.0 -> +5.8/-6.7 %), "
    "bbr/codel/f4 with the end of an ns-3 CWR leaving BBR's window (+1.3/+15.9 -> "
    "+1.3/+13.8 %)",
    "W": "10 seeds (g33s): a bad mode (RTO collapse: 19-35 timeouts a run, goodput 5-8 of "
    "10 Mbit/s) in some seeds of both simulators, at different rates (bbr/codel/f16: ns-3 "
    "4 of 10 seeds, linklab 1, and 1 milder); the 10-seed interval still reaches the band; "
    "in since g33bbr (+14.4/+2.0 -> +5.5/+12.6 %): the end of an ns-3 CWR no longer "
    "resets BBR's window",
    "I": "FQ-CoDel: ns-3's rules modelled (variant ns3); the last cell "
    "(newreno/fq_codel/f16/r10/d0) came in with ns-3.44's PRR entry on the ACK that ends one "
    "CWR and starts the next (g33i: its flows locked in back-to-back CWR, -21.6 -> -3.3 %)",
}
GRID_MISSES = {
    **dict.fromkeys(
        [
            "bbr/red/f1/mss1448/r100/d0/q0.5bdp/t20",
        ],
        "A",
    ),
    **dict.fromkeys(
        [
            "newreno/pie/f1/mss536/r10/d98/q1000p/t30",
        ],
        "P",
    ),
    **dict.fromkeys(
        [
            "cubic/fq_codel/f4/mss1448/r100/d18/q1000p/t20",
        ],
        "S",
    ),
    **dict.fromkeys(
        [
            "dctcp/dctcp/f1/mss1448/r100/d0/q0.5bdp/t20",
        ],
        "G",
    ),
}
# `--grid --quick`: two cells of the default design, against the committed ns-3 runs.
QUICK_CELLS = (
    "newreno/droptail/f1/mss1448/r10/d18/q4bdp/t20",
    "cubic/codel/f1/mss1448/r10/d18/q1000p/t20",
)
NS3_CC = {
    "newreno": "ns3::TcpNewReno",
    "cubic": "ns3::TcpCubic",
    "bbr": "ns3::TcpBbr",
    "westwood": "ns3::TcpWestwoodPlus",
    "dctcp": "ns3::TcpDctcp",
}
NS3_QDISC = {
    "droptail": "ns3::FifoQueueDisc",
    "red": "ns3::RedQueueDisc",
    "dctcp": "ns3::RedQueueDisc",
    "codel": "ns3::CoDelQueueDisc",
    "fq_codel": "ns3::FqCoDelQueueDisc",
    "pie": "ns3::PieQueueDisc",
}
LINKLAB_KIND = {"droptail": "droptail", "red": "red", "dctcp": "red", "codel": "codel",
                "fq_codel": "fq_codel", "pie": "pie"}  # fmt: skip


def grid_simtime(delay_ms: float) -> float:
    """Simulated seconds of a cell: 20 s (>= 450 base RTTs), 30 s when the base RTT is
    100 ms or more (150 RTTs of 204 ms), flows starting in [0, 1) s."""
    return 30.0 if 2 * (2 * ACCESS_DELAY_MS + delay_ms) >= 100 else 20.0


@dataclass(frozen=True)
class Cell:
    """One scenario of the grid (both simulators run exactly this, see `grid_settings`)."""

    cc: str
    queue: str
    flows: int
    mss: int
    rate_mbps: float
    delay_ms: float
    qlimit_bdp: float | None  # None: an AQM at AQM_LIMIT_P packets
    simtime: float

    @property
    def key(self) -> str:
        q = f"q{AQM_LIMIT_P}p" if self.qlimit_bdp is None else f"q{self.qlimit_bdp:g}bdp"
        return (
            f"{self.cc}/{self.queue}/f{self.flows}/mss{self.mss}/r{self.rate_mbps:g}"
            f"/d{self.delay_ms:g}/{q}/t{self.simtime:g}"
        )


def parse_cell_key(key: str) -> Cell:
    """The cell of a key printed by the grid (`Cell.key`); ValueError if malformed."""
    parts = key.strip().split("/")
    try:
        cc, queue, f, m, r, d, q, t = parts
        if cc not in CCS or queue not in GRID_QUEUES:
            raise ValueError
        if q == f"q{AQM_LIMIT_P}p":
            qlimit = None
        elif q.startswith("q") and q.endswith("bdp"):
            qlimit = float(q[1:-3])
        else:
            raise ValueError
        if (qlimit is None) == (queue in BUFFER_QUEUES):
            raise ValueError
        cell = Cell(cc, queue, int(f[1:]), int(m[3:]), float(r[1:]), float(d[1:]), qlimit,
                    float(t[1:]))  # fmt: skip
        if not (f[0], m[:3], r[0], d[0], t[0]) == ("f", "mss", "r", "d", "t"):
            raise ValueError
    except ValueError:
        raise ValueError(
            f"bad cell key {key!r}: expected CC/QUEUE/fFLOWS/mssMSS/rMBITS/dMS/qLIMIT/tSECONDS, "
            f"e.g. {QUICK_CELLS[0]} (LIMIT: Nbdp for {', '.join(BUFFER_QUEUES)}, "
            f"{AQM_LIMIT_P}p for the AQMs)"
        ) from None
    return cell


def grid_pairs(ccs: list[str], queues: list[str]) -> list[tuple[str, str]]:
    """Every CC x queue pair; DCTCP runs over its marking queue (`dctcp`) and only there."""
    return [(c, q) for c in ccs for q in queues if (c == "dctcp") == (q == "dctcp")]


def covering_rows(levels: list[tuple[float, ...]]) -> list[tuple[float, ...]]:
    """A strength-2 covering array of `levels` by the greedy rule (deterministic): add the
    candidate row that covers the most pairs not covered yet, first such row in product
    order, until every pair of levels of every two factors is covered."""
    import itertools

    n = len(levels)
    todo = {(i, j, a, b) for i in range(n) for j in range(i + 1, n)
            for a in levels[i] for b in levels[j]}  # fmt: skip
    rows: list[tuple[float, ...]] = []
    cands = list(itertools.product(*levels))
    while todo:
        gains = [sum((i, j, r[i], r[j]) in todo for i in range(n) for j in range(i + 1, n))
                 for r in cands]  # fmt: skip
        best = cands[gains.index(max(gains))]
        rows.append(best)
        todo -= {(i, j, best[i], best[j]) for i in range(n) for j in range(i + 1, n)}
    return rows


def covers_pairs(rows: list[tuple[float, ...]], levels: list[tuple[float, ...]]) -> bool:
    """Whether every pair of levels of every two factors appears in some row."""
    n = len(levels)
    return all(
        {(r[i], r[j]) for r in rows} >= {(a, b) for a in levels[i] for b in levels[j]}
        for i in range(n)
        for j in range(i + 1, n)
    )


def grid_design(levels: dict[str, tuple[float, ...]], design: str) -> list[tuple[float, ...]]:
    """Rows of (flows, delay, qlimit, mss, rate): the full factorial, or a covering design
    (DEFAULT_DESIGN for the default levels, else `covering_rows`)."""
    import itertools

    lv = [tuple(levels[f]) for f in GRID_FACTORS]
    if design == "factorial":
        return list(itertools.product(*lv))
    if lv == [GRID_LEVELS[f] for f in GRID_FACTORS]:
        return list(DEFAULT_DESIGN)
    return covering_rows(lv)


def grid_cells(
    ccs: list[str],
    queues: list[str],
    levels: dict[str, tuple[float, ...]],
    design: str,
    simtime: float | None = None,
) -> list[Cell]:
    """The cells: every CC x queue pair crossed with the rows of the design (the AQMs ignore
    the queue-limit column, so rows that differ only there are run once)."""
    cells: list[Cell] = []
    seen: set[str] = set()
    rows = grid_design(levels, design)
    for cc, queue in grid_pairs(ccs, queues):
        for flows, delay, qlimit, mss, rate in rows:
            c = Cell(
                cc,
                queue,
                int(flows),
                int(mss),
                float(rate),
                float(delay),
                float(qlimit) if queue in BUFFER_QUEUES else None,
                simtime if simtime is not None else grid_simtime(float(delay)),
            )
            if c.key not in seen:
                seen.add(c.key)
                cells.append(c)
    return cells


def grid_settings(cell: Cell, ecn: bool = True) -> dict[str, Any]:
    """The scenario of `cell` in numbers both simulators are given (ns3_grid_argv and
    linklab_grid_doc are built from this and nothing else).

    Queue limit: the queue disc of ns-3 holds `qdisc_limit_p` packets and the point-to-point
    device queue behind it one more, which waits for the transmitter as well; linklab has one
    queue per link direction, so its limit is their sum. RED's thresholds count the queue
    disc in ns-3 and the whole queue in linklab, so linklab's are one packet higher. The
    sojourn-time AQMs' targets likewise: see device_wait_ms."""
    pkt = cell.mss + HEADERS_B
    rtt_ms = 2 * (2 * ACCESS_DELAY_MS + cell.delay_ms)
    bdp_bytes = cell.rate_mbps * 1e6 * rtt_ms / 1e3 / 8
    bdp_pkts = bdp_bytes / pkt
    if cell.qlimit_bdp is None:
        qdisc = AQM_LIMIT_P
    else:
        qdisc = max(1, round(cell.qlimit_bdp * bdp_pkts))
    waiting = qdisc + DEVICE_QUEUE_P
    # TCP send and receive buffers (ns-3 SndBufSize/RcvBufSize, linklab rwnd): twice what
    # the path and the whole queue hold, at least 1 MiB, so that no window but the CC's limits.
    buf = max(1 << 20, math.ceil(2 * (bdp_bytes + waiting * pkt) / 65536) * 65536)
    st: dict[str, Any] = {
        "cc": cell.cc,
        "queue": cell.queue,
        "flows": cell.flows,
        "simtime_s": cell.simtime,
        "mss": cell.mss,
        "packet_bytes": pkt,
        "framing_bytes": FRAMING_B,
        "rate_mbps": cell.rate_mbps,
        "delay_ms": cell.delay_ms,
        "access_rate_mbps": cell.rate_mbps * ACCESS_RATE_FACTOR,
        "access_delay_ms": ACCESS_DELAY_MS,
        "base_rtt_ms": rtt_ms,
        "bdp_packets": round(bdp_pkts, 3),
        "qlimit_bdp": cell.qlimit_bdp,
        "qdisc_limit_p": qdisc,
        "device_queue_p": DEVICE_QUEUE_P,
        "linklab_limit_p": waiting,
        "buffer_bytes": buf,
        "initial_window": 10,
        "delayed_ack": {"count": 2, "timeout_ms": 200.0},
        "min_rto_ms": 1000.0,
        "sack": True,
        "timestamps": True,
        "prr": True,
        "ecn": ecn,
        "start_jitter_s": 1.0,
        # ns-3.44's slow start: TcpCubic adds the segments an ACK acknowledges and runs its
        # HyStart with ns-3's thresholds; TcpDctcp is a TcpLinuxReno (byte counting);
        # TcpNewReno and TcpWestwoodPlus add one segment per ACK (linklab's `abc`, CUBIC's
        # `hystart = "classic-ns3"`: what `profile = "ns3"` selects).
        "abc": cell.cc in ("cubic", "dctcp"),
        # ns-3.44's ECN state machine (family P; tcp-socket-base.cc at ns-3.44): an echo
        # of new data enters CWR in every state but CWR, fast recovery and after a timeout
        # included, with a further cut (1908-1924, EnterCwr 1652-1676); no fast recovery
        # starts in CWR (DupAck 1737-1830); CWR answers every echo, no loss's reduction
        # (3233-3238). linklab's `cwr_per_echo`, what `profile = "ns3"` selects.
        "cwr_per_echo": bool(ecn),
        # ns-3.44's TcpPrrRecovery (family C; tcp-prr-recovery.cc at ns-3.44): a segment
        # added to DeliveredData per ACK with new SACK information (ns-3 issue #1350),
        # RecoverFS the pipe, its 32-bit arithmetic. linklab's `prr_variant = "ns3"`, what
        # `profile = "ns3"` selects.
        "prr_variant": "ns3",
        # ns-3.44 asks TcpTxBuffer::NextSeg in every state (families O1, O5;
        # tcp-socket-base.cc SendPendingData, tcp-tx-buffer.cc NextSeg at ns-3.44): after a
        # timeout a segment sent since then that IsLost marks lost is resent before new
        # data, not left to the next timeout. linklab's `rto_resend_lost`, what
        # `profile = "ns3"` selects.
        "rto_resend_lost": True,
        # ns-3.44's receiver acknowledges a connection's first data segment at once
        # (family C; tcp-socket-base.cc at ns-3.44: ProcessSynRcvd and ProcessSynSent set
        # m_delAckCount = m_delAckMaxCount, "Always respond to first data packet"), then every
        # second one. linklab's `quick_ack_first`, what `profile = "ns3"` selects.
        "quick_ack_first": True,
        # ns-3.44's pipe (families O4, T; tcp-tx-buffer.cc at ns-3.44: Update 771-864 marks a
        # retransmitted segment SACKed without clearing its m_retrans flag, BytesInFlight
        # 1055-1073 = sent - SACKed - lost + retransmitted): a SACKed retransmission stays in
        # flight until the cumulative ACK covers it or a timeout clears the flags. linklab's
        # `sacked_rtx_in_pipe`, what `profile = "ns3"` selects.
        "sacked_rtx_in_pipe": True,
        # ns-3.44's partial ACK in SACK recovery (family V, g33v; tcp-socket-base.cc at
        # ns-3.44, ProcessAck): DoRetransmit unless the new head is a retransmission not
        # SACKed (IsRetransmittedDataAcked): one segment outside the window and the pacing
        # timer, NextSeg without rule 3 (lost and never resent, else new data, else the
        # head). linklab's `partial_ack_resend`, what `profile = "ns3"` selects.
        "partial_ack_resend": True,
        # ns-3.44's RTT from the timestamp echo (family N, g33n; tcp-option-ts.cc
        # NowToTsValue/ElapsedTimeFromTsValue, tcp-socket-base.cc CalculateRttSample at
        # ns-3.44): TSval in whole milliseconds, the sample the whole milliseconds since (1 us
        # for 0), for the SRTT, the RTO and Westwood+'s m_minRtt alike. linklab's `ts_rtt_ms`,
        # what `profile = "ns3"` selects.
        "ts_rtt_ms": True,
    }
    if cell.cc == "cubic":
        st["hystart"] = "classic-ns3"
        # ns-3.44's TcpCubic keeps W_max through a timeout (family C; tcp-cubic.cc at
        # ns-3.44): GetSsThresh sets m_lastMaxCwnd at the timeout as at a loss (fast
        # convergence) and CubicReset (CA_LOSS) leaves it, where RFC 9438 sec. 4.8 and
        # Linux's bictcp_reset forget it. linklab's CUBIC `timeout_wmax = "ns3"`, what
        # `profile = "ns3"` selects.
        st["cubic_timeout_wmax"] = "ns3"
        # ... and its GetSsThresh takes cwnd (whole segments), not the bytes in flight it
        # is handed: linklab's CUBIC `ssthresh_from = "cwnd"` (profile "ns3").
        st["cubic_ssthresh_from"] = "cwnd"
        # ... and its Update keeps the Reno-friendly estimate's alpha = 3(1 - beta)/(1 + beta)
        # throughout (m_tcpCwnd, its `scale`), as Linux does; RFC 9438 sec. 4.3 switches it
        # to 1 once W_est reaches cwnd_prior. linklab's CUBIC `alpha_switch = false` (profile
        # "ns3"; family C, g33c).
        st["cubic_alpha_switch"] = False
        # ... and clamps its count to m_cntClamp (20: one segment per 20 acknowledged at
        # least) while m_lastMaxCwnd is 0, i.e. before the first reduction (tcp-cubic.cc
        # 321-324 at ns-3.44), as Linux's bictcp_update does. linklab's CUBIC
        # `unknown_max_growth = true` (profile "ns3"; family C2, traced by g33x1).
        st["cubic_unknown_max_growth"] = True
        # ... and its IncreaseWindow adds a whole segment once m_cWndCnt (never reset)
        # reaches the cnt of its integer Update, so its window is whole segments, all of it
        # sent (tcp-cubic.cc 183-349 at ns-3.44). linklab's CUBIC `avoidance = "ns3"`
        # (profile "ns3"; traced on the --cc cubic --queue fq_codel row, g39q).
        st["cubic_avoidance"] = "ns3"
    if cell.cc == "bbr":
        # ns-3.44's TcpRateLinux keeps its rate sample across ACKs (family A;
        # tcp-rate-ops.cc at ns-3.44): linklab's `rate_sample = "ns3"`, what
        # `profile = "ns3"` selects.
        st["rate_sample"] = "ns3"
        # ns-3.44's ReceivedAck hands the rate sample the absolute change of the bytes marked
        # lost and not SACKed (tcp-socket-base.cc 1853, 1944-1946 at ns-3.44), so an ACK that
        # delivers a lost segment's retransmission reports a loss: TcpBbr ends its 5/4 phase
        # on it (first divergence after each RTO in bbr/red/f1/r100/d0, g33bbr). linklab's
        # `rate_losses = "ns3"`, what `profile = "ns3"` selects.
        st["rate_losses"] = "ns3"
        # ns-3.44's TcpBbr sends one segment per quantum (SetSendQuantum) and its InFlight
        # is gain x BDP + 3 segments (+ 2 in the 5/4 phase): BBR's `send_quantum = "ns3"`.
        st["bbr_send_quantum"] = "ns3"
        # ns-3.44's TcpBbr adds AckAggregationCwnd (the extra-acked estimate, its epoch
        # length truncated to whole seconds, restarted at 4096 bytes) to its window
        # target: BBR's `ack_aggregation = "ns3"`.
        st["bbr_ack_aggregation"] = "ns3"
        # ns-3.44's TcpBbr takes lost bytes out of the window in CA_RECOVERY only
        # (ModulateCwndForRecovery) and restores nothing when a timeout's CA_LOSS ends
        # (RestoreCwnd at CA_EVENT_COMPLETE_CWR only): BBR's `loss_window = "ns3"`.
        st["bbr_loss_window"] = "ns3"
    if cell.cc == "dctcp":
        # ns-3.44's TcpDctcp::GetSsThresh, cwnd x (1 - alpha/2), answers losses and
        # timeouts too (family G; tcp-dctcp.cc at ns-3.44): linklab's DCTCP
        # `loss = "alpha"`, what `profile = "ns3"` selects.
        st["dctcp_loss"] = "alpha"
        # ns-3.44's DCTCP receiver (family G/P/O4; tcp-dctcp.cc CeState0to1/CeState1to0 at
        # ns-3.44) acknowledges, on a CE change, the rcv_nxt saved before the previous
        # segment arrived: an isolated mark is echoed on a duplicate ACK or on the segment
        # before it, half the marks reach alpha. linklab's DCTCP `echo = "ns3"`, what
        # `profile = "ns3"` selects.
        st["dctcp_echo"] = "ns3"
    if cell.cc == "newreno":
        # ns-3.44's EnterRecovery hands GetSsThresh the pipe with the head marked lost
        # (BytesInFlight), which TcpNewReno halves (tcp-socket-base.cc 1694-1712), and at a
        # timeout the bytes in flight before it (3916, 3963); its CUBIC, DCTCP and Westwood+
        # do not use it. linklab's `cut_flight = "pipe"`, what `profile =
        # "ns3"` selects for NewReno.
        st["cut_flight"] = "pipe"
    if cell.cc == "westwood":
        # ns-3.44's TcpWestwoodPlus estimator (family D): samples over one SRTT on a
        # timer, Tustin's filter (alpha 0.9). linklab's westwood `filter = "ns3"`, what
        # `profile = "ns3"` selects.
        st["westwood_filter"] = "ns3"
    if cell.queue == "red":
        st["red_minth"] = round(RED_THRESHOLDS[0] * qdisc, 6)
        st["red_maxth"] = round(RED_THRESHOLDS[1] * qdisc, 6)
        st["red_wq"] = 0.002
    elif cell.queue == "dctcp":
        # The DCTCP paper's K > C x RTT / 7 (RFC 8257 sec. 4.1), at least 1, at most the limit.
        k = max(1, min(qdisc, math.ceil(bdp_pkts / 7)))
        st["dctcp_k"] = k
        st["red_minth"], st["red_maxth"], st["red_wq"] = float(k), float(3 * k), 1.0
    if cell.queue in ("red", "dctcp"):
        # ns-3.44's RedQueueDisc resets m_count at an early action only (family C2, g33c2;
        # red-queue-disc.cc DoEnqueue at ns-3.44): a forced drop resets it only with
        # Ns1Compat (ns-2's condition inverted) and an arrival the full internal queue
        # refuses leaves it, where ns-2's red.cc resets it at both. linklab's RED
        # `count_reset = "ns3"`.
        st["red_count_reset"] = "ns3"
    if cell.queue in ("red", "dctcp", "pie"):
        st["mean_pkt_size"] = pkt
    if cell.queue == "pie":
        # ns-3.44's PieQueueDisc (family J): p held at 0 while the burst allowance lasts,
        # the allowance armed by the first arrival after a quiet 1.5 s (pie-queue-disc.cc
        # 273-277, 344-347, 423-453 at ns-3.44). linklab's PIE `burst_rule = "ns3"`.
        st["pie_burst_rule"] = "ns3"
    if cell.queue in ("codel", "fq_codel"):
        st["codel_mtu"] = MTU_B
        # ns-3.44's CoDelQueueDisc (families I, O4, Q, N; codel-queue-disc.cc at ns-3.44): no
        # drop while fewer than MinBytes wait (OkToDrop), a mark in the dropping state
        # schedules the next from now (DoDequeue); FqCoDelQueueDisc's flow queues are such
        # CoDels counting their own bytes, and an emptied new flow always goes to the old
        # list (fq-codel-queue-disc.cc DoDequeue). linklab's CoDel/FQ-CoDel `variant = "ns3"`.
        st["codel_variant"] = "ns3"
    if cell.queue == "fq_codel":
        st["fq_quantum"] = MTU_B
    return st


def fmt_float(x: float) -> str:
    return f"{x:.10g}"


def device_wait_ms(st: dict[str, Any]) -> float:
    """What a packet waits in ns-3's device queue after it left the queue disc, while a queue
    stands: the transmission of the DEVICE_QUEUE_P full-size frames ahead of it.

    ns-3's queue disc hands a packet to the point-to-point device when the device queue has
    room, i.e. when the packet ahead of it starts its transmission; so a CoDel/FQ-CoDel/PIE
    sojourn time in ns-3 (queue disc enqueue to dequeue) ends one frame's transmission before
    the packet's own transmission starts. linklab has one queue per link direction and its
    AQM's sojourn ends at the start of the packet's transmission, one frame time later for the
    same packet. The grid gives linklab's AQM the target plus this time, so that both decide
    on the same packets: with a standing queue ns-3's `sojourn < target` is linklab's
    `sojourn < target + device_wait_ms`, and a packet that meets an idle device queue has a
    sojourn below either target on both sides. (1.2 ms at 10 Mbit/s with 1500-byte packets:
    a quarter of CoDel's 5 ms.)"""
    frame_bits = (st["packet_bytes"] + st["framing_bytes"]) * 8
    return st["device_queue_p"] * frame_bits / (st["rate_mbps"] * 1e3)


def linklab_aqm_target_ms(st: dict[str, Any]) -> float:
    """The target of linklab's CoDel/FQ-CoDel/PIE in the cell of `st` (device_wait_ms)."""
    return AQM_TARGET_MS[st["queue"]] + device_wait_ms(st)


def ns3_grid_argv(st: dict[str, Any], seed: int) -> list[str]:
    """The native twin's arguments for the cell of `st` (benches/ns3/dumbbell.cc)."""
    argv = [
        f"--flows={st['flows']}",
        f"--simtime={fmt_float(st['simtime_s'])}",
        "--per=0",
        f"--seed={seed}",
        f"--segsize={st['mss']}",
        f"--cc={st['cc']}",
        f"--queue={st['queue']}",
        f"--qlimit={st['qdisc_limit_p']}",
        f"--ecn={int(st['ecn'])}",
        f"--rate={fmt_float(st['rate_mbps'])}",
        f"--delay={fmt_float(st['delay_ms'])}",
        f"--accessrate={fmt_float(st['access_rate_mbps'])}",
        f"--accessdelay={fmt_float(st['access_delay_ms'])}",
        f"--bufsize={st['buffer_bytes']}",
        f"--meanpkt={st['packet_bytes']}",
    ]
    if "red_minth" in st:
        argv += [f"--minth={fmt_float(st['red_minth'])}", f"--maxth={fmt_float(st['red_maxth'])}"]
    if "dctcp_k" in st:
        argv.append(f"--dctcpk={st['dctcp_k']}")
    return argv


def linklab_grid_queue(st: dict[str, Any]) -> dict[str, Any]:
    """The bottleneck queue of `st` in linklab's terms."""
    q, ecn = st["queue"], bool(st["ecn"])
    limit = f"{st['linklab_limit_p']}p"
    if q == "droptail":
        return {"kind": "droptail", "limit": limit}
    if q in ("red", "dctcp"):
        out: dict[str, Any] = {
            "kind": "red",
            "limit": limit,
            "minth": st["red_minth"] + DEVICE_QUEUE_P,
            "maxth": st["red_maxth"] + DEVICE_QUEUE_P,
            "wq": st["red_wq"],
            "ecn": ecn,
            "mean_pkt_size": st["mean_pkt_size"],
            "ns2": True,
            "idle": "ns2",
        }
        if "red_count_reset" in st:
            out["count_reset"] = st["red_count_reset"]
        if q == "dctcp":
            out["hard_drop"] = False
        return out
    target = f"{fmt_float(round(linklab_aqm_target_ms(st) * 1e3, 3))}us"
    if q == "pie":
        out = {"kind": "pie", "limit": limit, "ecn": ecn, "mean_pkt_size": st["mean_pkt_size"],
               "target": target}  # fmt: skip
        if "pie_burst_rule" in st:
            out["burst_rule"] = st["pie_burst_rule"]
        return out
    out = {"kind": q, "limit": limit, "ecn": ecn, "mtu": f"{st['codel_mtu']}B", "target": target}
    if "codel_variant" in st:
        out["variant"] = st["codel_variant"]
    if q == "fq_codel":
        out["quantum"] = f"{st['fq_quantum']}B"
    return out


def linklab_grid_doc(base: dict[str, Any], st: dict[str, Any]) -> dict[str, Any]:
    """SCENARIO (parsed, `base`) turned into the cell of `st`: every parameter in the
    scenario's own tables, so the TOML alone reproduces the run (`--show-cell`)."""
    doc = json.loads(json.dumps(base))
    doc["name"] = "vs-ns3-grid"
    doc["params"].update(
        {
            "flows": st["flows"],
            "per": 0.0,
            "duration": f"{fmt_float(st['simtime_s'])}s",
            "iw": st["initial_window"],
            "delack": True,
            "min_rto": f"{fmt_float(st['min_rto_ms'])}ms",
            "mss": st["mss"],
            "rwnd": f"{st['buffer_bytes']}B",
            "prr": st["prr"],
            "rto_keeps_sack": True,
            "framing": f"{st['framing_bytes']}B",
        }
    )
    tcp = doc["tcp"]
    tcp.update({"cc": st["cc"], "ecn": bool(st["ecn"]), "variant": "sack", "timestamps": True})
    if "hystart" in st:
        tcp["cc"] = {"kind": st["cc"], "hystart": st["hystart"]}
    if "cubic_timeout_wmax" in st:
        tcp["cc"]["timeout_wmax"] = st["cubic_timeout_wmax"]
    if "cubic_ssthresh_from" in st:
        tcp["cc"]["ssthresh_from"] = st["cubic_ssthresh_from"]
    if "cubic_alpha_switch" in st:
        tcp["cc"]["alpha_switch"] = st["cubic_alpha_switch"]
    if "cubic_unknown_max_growth" in st:
        tcp["cc"]["unknown_max_growth"] = st["cubic_unknown_max_growth"]
    if "cubic_avoidance" in st:
        tcp["cc"]["avoidance"] = st["cubic_avoidance"]
    if "dctcp_loss" in st:
        tcp["cc"] = {"kind": st["cc"], "loss": st["dctcp_loss"]}
    if "dctcp_echo" in st:
        tcp["cc"] = {**tcp["cc"], "echo": st["dctcp_echo"]}
    if "bbr_send_quantum" in st:
        tcp["cc"] = {"kind": st["cc"], "send_quantum": st["bbr_send_quantum"]}
    if "bbr_ack_aggregation" in st:
        tcp["cc"] = {**tcp["cc"], "ack_aggregation": st["bbr_ack_aggregation"]}
    if "bbr_loss_window" in st:
        tcp["cc"] = {**tcp["cc"], "loss_window": st["bbr_loss_window"]}
    if st.get("rto_resend_lost"):
        tcp["rto_resend_lost"] = True
    if "rate_sample" in st:
        tcp["rate_sample"] = st["rate_sample"]
    if "rate_losses" in st:
        tcp["rate_losses"] = st["rate_losses"]
    if "westwood_filter" in st:
        tcp["cc"] = {"kind": st["cc"], "filter": st["westwood_filter"]}
    if st.get("abc"):
        tcp["abc"] = True
    if st.get("cwr_per_echo"):
        tcp["cwr_per_echo"] = True
    if st.get("quick_ack_first"):
        tcp["quick_ack_first"] = True
    if st.get("sacked_rtx_in_pipe"):
        tcp["sacked_rtx_in_pipe"] = True
    if st.get("partial_ack_resend"):
        tcp["partial_ack_resend"] = True
    # ns-3's socket send buffer (the twin's SndBufSize = --bufsize; family O3, g33o3): a
    # sender that has sent all of it marks its rate samples app-limited
    # (TcpRateLinux::CalculateAppLimited at the write that fills it). linklab's `send_buffer`.
    tcp["send_buffer"] = f"{st['buffer_bytes']}B"
    if st.get("ts_rtt_ms"):
        tcp["ts_rtt_ms"] = True
    if "prr_variant" in st:
        tcp["prr_variant"] = st["prr_variant"]
    if "cut_flight" in st:
        tcp["cut_flight"] = st["cut_flight"]
    for link in doc["links"]:
        if (link.get("a"), link.get("b")) == ("L", "R"):
            link["rate"] = f"{fmt_float(st['rate_mbps'])}Mbit"
            link["delay"] = f"{fmt_float(st['delay_ms'])}ms"
            link["queue"] = linklab_grid_queue(st)
        else:
            link["rate"] = f"{fmt_float(st['access_rate_mbps'])}Mbit"
            link["delay"] = f"{fmt_float(st['access_delay_ms'])}ms"
    return doc


_UNITS = {"bit": 1.0, "kbit": 1e3, "Mbit": 1e6, "Gbit": 1e9, "s": 1e3, "ms": 1.0, "us": 1e-3,
          "ns": 1e-6, "B": 1.0, "kB": 1e3, "KiB": 1024.0, "MB": 1e6, "MiB": 2.0**20,
          "p": 1.0}  # fmt: skip


def _quantity(text: Any) -> float:
    """A number from a scenario value: 100Mbit -> 1e8 (bit/s), 18ms -> 18 (ms), 5p -> 5
    (NaN if unreadable)."""
    import re

    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z]*)\s*", str(text))
    if not m or m.group(2) not in _UNITS | {"": 1.0}:
        return math.nan  # unequal to anything: reported as a mismatch
    return float(m.group(1)) * _UNITS.get(m.group(2), 1.0)


def grid_mismatches(
    st: dict[str, Any],
    ns3: dict[str, Any] | None,
    doc: dict[str, Any],
    ll_summary: dict[str, Any] | None = None,
) -> list[str]:
    """Every parameter on which ns-3 (its settings read back from the built objects), the
    linklab scenario and linklab's run summary disagree with the cell's settings `st`;
    empty when both simulators ran the same scenario."""
    bad: list[str] = []

    def same(what: str, got: Any, want: Any) -> None:
        ok = (
            math.isclose(float(got), float(want), rel_tol=1e-9, abs_tol=1e-9)
            if isinstance(want, float) and got is not None and not isinstance(got, bool)
            else got == want
        )
        if not ok:
            bad.append(f"{what}: {got!r}, expected {want!r}")

    q = st["queue"]
    if ns3 is not None:
        same("ns-3 rate_mbps", ns3.get("rate_mbps"), st["rate_mbps"])
        same("ns-3 delay_ms", ns3.get("delay_ms"), st["delay_ms"])
        same("ns-3 access_rate_mbps", ns3.get("access_rate_mbps"), st["access_rate_mbps"])
        same("ns-3 access_delay_ms", ns3.get("access_delay_ms"), st["access_delay_ms"])
        same("ns-3 qdisc", ns3.get("qdisc"), NS3_QDISC[q])
        same("ns-3 qdisc_limit_p", ns3.get("qdisc_limit_p"), st["qdisc_limit_p"])
        same("ns-3 device_queue_p", ns3.get("device_queue_p"), st["device_queue_p"])
        same("ns-3 segment_size", ns3.get("segment_size"), st["mss"])
        same("ns-3 initial_cwnd", ns3.get("initial_cwnd"), st["initial_window"])
        same("ns-3 del_ack_count", ns3.get("del_ack_count"), st["delayed_ack"]["count"])
        same("ns-3 del_ack_timeout_ms", ns3.get("del_ack_timeout_ms"),
             st["delayed_ack"]["timeout_ms"])  # fmt: skip
        same("ns-3 min_rto_ms", ns3.get("min_rto_ms"), st["min_rto_ms"])
        same("ns-3 snd_buf", ns3.get("snd_buf"), st["buffer_bytes"])
        same("ns-3 rcv_buf", ns3.get("rcv_buf"), st["buffer_bytes"])
        same("ns-3 sack", ns3.get("sack"), st["sack"])
        same("ns-3 timestamps", ns3.get("timestamps"), st["timestamps"])
        same("ns-3 cc", ns3.get("cc"), NS3_CC[st["cc"]])
        same("ns-3 recovery", ns3.get("recovery"),
             "ns3::TcpPrrRecovery" if st["prr"] else "ns3::TcpClassicRecovery")  # fmt: skip
        if (ns3.get("bottleneck_mtu") or 0) < st["packet_bytes"]:
            bad.append(f"ns-3 bottleneck_mtu {ns3.get('bottleneck_mtu')} < packet size")
        if q in ("red", "dctcp"):
            same("ns-3 red_min_th", ns3.get("red_min_th"), st["red_minth"])
            same("ns-3 red_max_th", ns3.get("red_max_th"), st["red_maxth"])
            same("ns-3 red_qw", ns3.get("red_qw"), st["red_wq"])
            same("ns-3 red_mean_pkt_size", ns3.get("red_mean_pkt_size"), st["mean_pkt_size"])
            same("ns-3 red_link_mbps", ns3.get("red_link_mbps"), st["rate_mbps"])
            same("ns-3 red_hard_drop", ns3.get("red_hard_drop"), q == "red")
        if q == "pie":
            same("ns-3 pie_mean_pkt_size", ns3.get("pie_mean_pkt_size"), st["mean_pkt_size"])
            same("ns-3 pie_target_ms", ns3.get("pie_target_ms"), AQM_TARGET_MS[q])
        if q == "codel":
            same("ns-3 codel_min_bytes", ns3.get("codel_min_bytes"), st["codel_mtu"])
            same("ns-3 codel_target", _quantity(str(ns3.get("codel_target")).strip("+")),
                 AQM_TARGET_MS[q])  # fmt: skip
        if q == "fq_codel":
            same("ns-3 fq_quantum", ns3.get("fq_quantum"), st["fq_quantum"])
        if q != "droptail":
            same("ns-3 qdisc_ecn", ns3.get("qdisc_ecn"), st["ecn"])

    p, tcp = doc["params"], doc["tcp"]
    same("linklab flows", p.get("flows"), st["flows"])
    same("linklab duration", _quantity(p.get("duration")), st["simtime_s"] * 1e3)
    same("linklab mss", p.get("mss"), st["mss"])
    same("linklab iw", p.get("iw"), st["initial_window"])
    same("linklab delack", p.get("delack"), True)  # every 2nd segment or 200 ms
    same("linklab min_rto", _quantity(p.get("min_rto")), st["min_rto_ms"])
    same("linklab rwnd", _quantity(p.get("rwnd")), float(st["buffer_bytes"]))
    same("linklab framing", _quantity(p.get("framing")), float(st["framing_bytes"]))
    same("linklab prr", p.get("prr"), st["prr"])
    cc = tcp.get("cc")
    same("linklab tcp.cc", cc.get("kind") if isinstance(cc, dict) else cc, st["cc"])
    if isinstance(cc, dict) or "hystart" in st:
        same("linklab tcp.cc.hystart", cc.get("hystart") if isinstance(cc, dict) else None,
             st.get("hystart"))  # fmt: skip
    if isinstance(cc, dict) or "cubic_timeout_wmax" in st:
        same("linklab tcp.cc.timeout_wmax",
             cc.get("timeout_wmax") if isinstance(cc, dict) else None,
             st.get("cubic_timeout_wmax"))  # fmt: skip
    if isinstance(cc, dict) or "cubic_ssthresh_from" in st:
        same("linklab tcp.cc.ssthresh_from",
             cc.get("ssthresh_from") if isinstance(cc, dict) else None,
             st.get("cubic_ssthresh_from"))  # fmt: skip
    if isinstance(cc, dict) or "cubic_alpha_switch" in st:
        same("linklab tcp.cc.alpha_switch",
             cc.get("alpha_switch") if isinstance(cc, dict) else None,
             st.get("cubic_alpha_switch"))  # fmt: skip
    if isinstance(cc, dict) or "cubic_unknown_max_growth" in st:
        same("linklab tcp.cc.unknown_max_growth",
             cc.get("unknown_max_growth") if isinstance(cc, dict) else None,
             st.get("cubic_unknown_max_growth"))  # fmt: skip
    if isinstance(cc, dict) or "cubic_avoidance" in st:
        same("linklab tcp.cc.avoidance",
             cc.get("avoidance") if isinstance(cc, dict) else None,
             st.get("cubic_avoidance"))  # fmt: skip
    if isinstance(cc, dict) or "dctcp_loss" in st:
        same("linklab tcp.cc.loss", cc.get("loss") if isinstance(cc, dict) else None,
             st.get("dctcp_loss"))  # fmt: skip
    if isinstance(cc, dict) or "dctcp_echo" in st:
        same("linklab tcp.cc.echo", cc.get("echo") if isinstance(cc, dict) else None,
             st.get("dctcp_echo"))  # fmt: skip
    if isinstance(cc, dict) or "bbr_send_quantum" in st:
        same("linklab tcp.cc.send_quantum",
             cc.get("send_quantum") if isinstance(cc, dict) else None,
             st.get("bbr_send_quantum"))  # fmt: skip
    if isinstance(cc, dict) or "bbr_ack_aggregation" in st:
        same("linklab tcp.cc.ack_aggregation",
             cc.get("ack_aggregation") if isinstance(cc, dict) else None,
             st.get("bbr_ack_aggregation"))  # fmt: skip
    if isinstance(cc, dict) or "bbr_loss_window" in st:
        same("linklab tcp.cc.loss_window",
             cc.get("loss_window") if isinstance(cc, dict) else None,
             st.get("bbr_loss_window"))  # fmt: skip
    same("linklab tcp.rate_sample", tcp.get("rate_sample", "linux"),
         st.get("rate_sample", "linux"))  # fmt: skip
    same("linklab tcp.rate_losses", tcp.get("rate_losses", "linux"),
         st.get("rate_losses", "linux"))  # fmt: skip
    same(
        "linklab tcp.rto_resend_lost",
        bool(tcp.get("rto_resend_lost", False)),
        bool(st.get("rto_resend_lost", False)),
    )
    if isinstance(cc, dict) or "westwood_filter" in st:
        same("linklab tcp.cc.filter", cc.get("filter") if isinstance(cc, dict) else None,
             st.get("westwood_filter"))  # fmt: skip
    same("linklab tcp.prr_variant", tcp.get("prr_variant"), st.get("prr_variant"))
    same("linklab tcp.cut_flight", tcp.get("cut_flight"), st.get("cut_flight"))
    same("linklab tcp.abc", bool(tcp.get("abc", False)), bool(st.get("abc", False)))
    same(
        "linklab tcp.cwr_per_echo",
        bool(tcp.get("cwr_per_echo", False)),
        bool(st.get("cwr_per_echo", False)),
    )
    same(
        "linklab tcp.quick_ack_first",
        bool(tcp.get("quick_ack_first", False)),
        bool(st.get("quick_ack_first", False)),
    )
    same(
        "linklab tcp.sacked_rtx_in_pipe",
        bool(tcp.get("sacked_rtx_in_pipe", False)),
        bool(st.get("sacked_rtx_in_pipe", False)),
    )
    same("linklab tcp.send_buffer", _quantity(tcp.get("send_buffer")), float(st["buffer_bytes"]))
    same(
        "linklab tcp.partial_ack_resend",
        bool(tcp.get("partial_ack_resend", False)),
        bool(st.get("partial_ack_resend", False)),
    )
    same(
        "linklab tcp.ts_rtt_ms",
        bool(tcp.get("ts_rtt_ms", False)),
        bool(st.get("ts_rtt_ms", False)),
    )
    same("linklab tcp.ecn", tcp.get("ecn"), st["ecn"])
    same("linklab tcp.variant", tcp.get("variant"), "sack")
    same("linklab tcp.timestamps", tcp.get("timestamps"), st["timestamps"])
    for key, param in (("mss", "mss"), ("initial_window", "iw"), ("delayed_ack", "delack"),
                       ("min_rto", "min_rto"), ("rwnd", "rwnd"), ("prr", "prr")):  # fmt: skip
        same(f"linklab tcp.{key}", tcp.get(key), f"${{{param}}}")
    (flow,) = doc["flows"]
    same("linklab start_jitter", _quantity(flow.get("start_jitter")), st["start_jitter_s"] * 1e3)
    for link in doc["links"]:
        bott = (link.get("a"), link.get("b")) == ("L", "R")
        name = "bottleneck" if bott else f"access {link.get('a')}-{link.get('b')}"
        same(f"linklab {name} rate", _quantity(link["rate"]),
             (st["rate_mbps"] if bott else st["access_rate_mbps"]) * 1e6)  # fmt: skip
        same(f"linklab {name} delay", _quantity(link["delay"]),
             st["delay_ms"] if bott else st["access_delay_ms"])  # fmt: skip
        same(f"linklab {name} overhead", link.get("overhead"), "${framing}")
        if not bott:
            continue
        lq = link["queue"]
        same("linklab queue kind", lq.get("kind"), LINKLAB_KIND[q])
        same("linklab queue limit", _quantity(lq.get("limit")),
             float(st["qdisc_limit_p"] + st["device_queue_p"]))  # fmt: skip
        if q in ("red", "dctcp"):
            same("linklab red minth", lq.get("minth"), st["red_minth"] + st["device_queue_p"])
            same("linklab red maxth", lq.get("maxth"), st["red_maxth"] + st["device_queue_p"])
            same("linklab red wq", lq.get("wq"), st["red_wq"])
            same("linklab red mean_pkt_size", lq.get("mean_pkt_size"), st["mean_pkt_size"])
            same("linklab red hard_drop", lq.get("hard_drop", True), q == "red")
            same("linklab red ns2", (lq.get("ns2"), lq.get("idle")), (True, "ns2"))
            same("linklab red count_reset", lq.get("count_reset", "ns2"),
                 st.get("red_count_reset", "ns2"))  # fmt: skip
        if q == "pie":
            same("linklab pie mean_pkt_size", lq.get("mean_pkt_size"), st["mean_pkt_size"])
            same("linklab pie burst_rule", lq.get("burst_rule"), st.get("pie_burst_rule"))
        if q in AQM_TARGET_MS:
            same("linklab aqm target", round(_quantity(lq.get("target")), 6),
                 round(linklab_aqm_target_ms(st), 6))  # fmt: skip
        if q in ("codel", "fq_codel"):
            same("linklab codel mtu", _quantity(lq.get("mtu")), float(st["codel_mtu"]))
            same("linklab codel variant", lq.get("variant", "linux"), st.get("codel_variant"))
        if q == "fq_codel":
            same("linklab fq quantum", _quantity(lq.get("quantum")), float(st["fq_quantum"]))
        if q != "droptail":
            same("linklab queue ecn", lq.get("ecn"), st["ecn"])
    if ll_summary is not None:
        links = {x.get("name"): x for x in linklab_links(ll_summary)}
        same("linklab run L->R rate_bps", links.get(BOTTLENECK, {}).get("rate_bps"),
             round(st["rate_mbps"] * 1e6))  # fmt: skip
        for i in range(1, st["flows"] + 1):
            same(f"linklab run S{i}->L rate_bps", links.get(f"S{i}->L", {}).get("rate_bps"),
                 round(st["access_rate_mbps"] * 1e6))  # fmt: skip
        queue = next((x for x in ll_summary.get("queues", []) if x.get("link") == BOTTLENECK), {})
        same("linklab run L->R queue kind", queue.get("kind"), LINKLAB_KIND[q])
        same("linklab run flows", len(ll_summary.get("flows", [])), st["flows"])
    return bad


def show_cell(cell: Cell, ecn: bool, seed: int = 1) -> str:
    """A cell's settings for both simulators: the common numbers, the ns-3 command, the
    linklab scenario (TOML) and command."""
    import tomli_w

    st = grid_settings(cell, ecn)
    base = tomllib_load(REPO / SCENARIO)
    doc = linklab_grid_doc(base, st)
    lines = [f"cell {cell.key}", "", "settings (both simulators):"]
    lines += [f"  {k} = {json.dumps(v)}" for k, v in st.items()]
    lines += ["", "ns-3 (benches/ns3/native/dumbbell):",
              "  dumbbell " + " ".join(ns3_grid_argv(st, seed)), "",
              f"linklab (linklab run cell.toml --json --seed {seed}), cell.toml:", ""]  # fmt: skip
    lines += ["  " + x for x in tomli_w.dumps(doc).splitlines()]
    mism = grid_mismatches(st, None, doc)
    lines += ["", "linklab scenario vs settings: " + ("agree" if not mism else "; ".join(mism))]
    return "\n".join(lines)


def tomllib_load(path: Path) -> dict[str, Any]:
    import tomllib

    return tomllib.loads(path.read_text())


# ---- runs -----------------------------------------------------------------------------------


def ns3_grid_run(binary: Path, st: dict[str, Any], seed: int, extra: list[str]) -> dict[str, Any]:
    """One ns-3 run of a cell: the figures kept in the results file."""
    cmd = [str(binary), *ns3_grid_argv(st, seed), *extra]
    res = run_child(cmd, cwd=REPO)
    if res.returncode != 0:
        raise BenchError(f"ns-3 run failed ({' '.join(cmd)}):\n{res.stderr[-3000:]}")
    raw = last_json_line(res.stdout)
    red = raw.get("red", {})
    return {
        "seed": seed,
        "goodput_bps": raw["goodput_mbps"] * 1e6,
        "queue_delay_s": raw["wait_ms"] / 1e3,
        "qdisc_sojourn_s": raw["queue_delay_ms"] / 1e3,
        "retransmits": raw["retransmits"],
        "timeouts": raw["loss_episodes"],
        "recoveries": raw["recovery_episodes"],
        "flow_bytes": raw["flow_bytes"],
        "drops": red.get("total_dropped"),
        "marks": red.get("total_marked"),
        "bottleneck_packets": red.get("enqueued"),
        "events": raw["events"],
        "run_wall_s": raw["wall_s"],
        "process_wall_s": round(res.process_wall_s, 4),
        "cpu_s": round(res.cpu_s, 4),
        "peak_rss_kib": res.peak_rss_kib,
        "load1": res.load1,
        "settings": raw["settings"],
    }


def linklab_grid_run(
    prefix: list[str], env: dict[str, str] | None, toml: Path, seed: int, sets: list[str]
) -> dict[str, Any]:
    """One linklab run of a cell (its scenario file `toml`)."""
    cmd = [*prefix, "run", str(toml), "--json", "--seed", str(seed)]
    for s in sets:
        cmd += ["--set", s]
    res = run_child(cmd, cwd=REPO, env=env)
    if res.returncode != 0:
        raise BenchError(
            f"linklab run failed (exit {res.returncode}): {' '.join(cmd)}\n{res.stderr[-3000:]}"
        )
    raw = last_json_line(res.stdout)
    links = {x.get("name"): x for x in linklab_links(raw)}
    sent = int(links[BOTTLENECK]["tx_packets"])
    queue = next(x for x in raw["queues"] if x.get("link") == BOTTLENECK)
    agg = raw["aggregate"]
    return {
        "seed": seed,
        "goodput_bps": float(agg["goodput_bps"]),
        # Little's law, as ns-3's wait_ms: mean packets waiting / departures per second.
        "queue_delay_s": float(queue["mean_packets"]) * float(raw["sim_time_s"]) / sent
        if sent
        else 0.0,
        "retransmits": agg["retransmits"],
        "timeouts": agg["timeout_episodes"],
        "drops": sum(queue["drops"].values()),
        "marks": queue.get("ecn_marks"),
        "bottleneck_packets": queue.get("arrivals"),
        "events": raw.get("events"),
        "run_wall_s": float(raw["wall_time_s"]),
        "process_wall_s": round(res.process_wall_s, 4),
        "cpu_s": round(res.cpu_s, 4),
        "peak_rss_kib": res.peak_rss_kib,
        "summary": raw,
    }


def load_grid_results(path: Path | None) -> dict[str, Any]:
    """The committed ns-3 grid runs ({"cells": {key: {"settings", "runs": {seed: run}}}})."""
    if path is None or not path.exists():
        return {"cells": {}}
    data = json.loads(path.read_text())
    if not isinstance(data.get("cells"), dict):
        raise BenchError(f"{path}: not an ns-3 grid results file (no 'cells' object)")
    return data


def save_grid_results(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    tmp.replace(path)


def est_packets(cell: Cell) -> float:
    """Bottleneck packets of one run (what ns-3's time is proportional to)."""
    return cell.rate_mbps * 1e6 / 8 / (cell.mss + HEADERS_B + FRAMING_B) * cell.simtime


# ---- report ---------------------------------------------------------------------------------


def rel(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0 or math.isnan(a) or math.isnan(b):
        return None
    return (a - b) / b


def sample_var(xs: list[float]) -> float:
    n = len(xs)
    if n < 2:
        return math.nan
    m = sum(xs) / n
    return sum((x - m) ** 2 for x in xs) / (n - 1)


def diff_ci95(a: dict[str, Any], b: dict[str, Any], k: str) -> float | None:
    """Half-width of the 95 % interval of mean_a - mean_b (Welch), or None."""
    va, vb, na, nb = a.get(f"{k}_var"), b.get(f"{k}_var"), a["n"], b["n"]
    if va is None or vb is None or math.isnan(va) or math.isnan(vb):
        return None
    se2 = va / na + vb / nb
    if se2 == 0:
        return 0.0
    df = se2**2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    t = T95[min(len(T95), max(1, int(df))) - 1] if df < len(T95) else 1.960
    return t * math.sqrt(se2)


def grid_side(runs: list[dict[str, Any]]) -> dict[str, Any]:
    if not runs:
        return {}
    gs, qs = [r["goodput_bps"] for r in runs], [r["queue_delay_s"] for r in runs]
    g, gci = mean_ci(gs)
    q, qci = mean_ci(qs)
    out = {
        "n": len(runs),
        "goodput_bps_mean": g,
        "goodput_bps_ci95": gci,
        "goodput_bps_var": sample_var(gs),
        "queue_delay_s_mean": q,
        "queue_delay_s_ci95": qci,
        "queue_delay_s_var": sample_var(qs),
    }
    for k in ("retransmits", "timeouts", "drops", "marks"):
        vals = [r[k] for r in runs if r.get(k) is not None]
        out[f"{k}_mean"] = sum(vals) / len(vals) if len(vals) == len(runs) else None
    out["cpu_s"] = sum(r.get("cpu_s", 0.0) for r in runs)
    out["run_wall_s"] = sum(r["run_wall_s"] for r in runs)
    keep = ("seed", "goodput_bps", "queue_delay_s", "retransmits", "timeouts", "drops", "marks")
    out["runs"] = [{k: r.get(k) for k in keep} for r in runs]
    return out


def grid_cell_seeds(
    cells: list[Cell], ecn: bool, n_seeds: int | None, more: dict[str, Any]
) -> dict[str, list[int]]:
    """The seeds each cell's verdict uses: 1..`n_seeds` for every cell when given; else
    1..GRID_MORE_SEEDS for a cell whose ns-3 runs `more` (NS3_GRID_SEEDS10_RESULTS) holds for
    all those seeds with the arguments the script gives ns-3 today, 1..GRID_SEEDS for the
    rest. The rule is fixed, not chosen per result: every such cell takes its 10 seeds,
    whichever way its verdict then goes."""
    out = {}
    for c in cells:
        n = n_seeds or GRID_SEEDS
        if n_seeds is None:
            e = more.get("cells", {}).get(c.key, {})
            runs = e.get("runs", {})
            if e.get("ns3_argv") == ns3_grid_argv(grid_settings(c, ecn), 0) and all(
                str(s) in runs for s in range(1, GRID_MORE_SEEDS + 1)
            ):
                n = GRID_MORE_SEEDS
        out[c.key] = list(range(1, n + 1))
    return out


def more_seeds_cells(report: dict[str, Any], cap_s: float = MORE_SEEDS_NS3_CPU_CAP_S) -> list[str]:
    """The cells of a grid report (`--grid --json`, e.g. benches/results/
    linklab-vs-ns3-grid.json) that the more-seeds rule sends to seeds 1..GRID_MORE_SEEDS:
    judged over GRID_SEEDS seeds, the 95 % interval of the relative difference of goodput
    wider than TARGET_GRID_GOODPUT or of queueing delay wider than TARGET_GRID_QDELAY, and
    ns-3's mean CPU-s a seed at most `cap_s` (MORE_SEEDS_NS3_CPU_CAP_S, the first tier;
    MORE_SEEDS_NS3_CPU_CAP2_S, the second, includes the first). A cell without an interval
    (fewer than 2 seeds on a side) is not selected. In the report's order."""
    if not cap_s > 0:
        raise ValueError(f"more_seeds_cells: cap_s must be > 0 CPU-s a seed, not {cap_s}")
    out = []
    for r in report.get("cells", []):
        ns = r.get("ns3") or {}
        if r.get("seeds") != GRID_SEEDS or not ns.get("n"):
            continue
        g, q = r.get("goodput_rel_diff_ci95"), r.get("queue_delay_rel_diff_ci95")
        wide = (g is not None and g > TARGET_GRID_GOODPUT) or (
            q is not None and q > TARGET_GRID_QDELAY
        )
        if wide and ns.get("cpu_s", math.inf) / ns["n"] <= cap_s:
            out.append(r["key"])
    return out


def more_seeds_main(path: Path) -> int:
    """`--more-seeds-rule REPORT`: print the cells `more_seeds_cells` selects with the second
    tier's cap (MORE_SEEDS_NS3_CPU_CAP2_S; its cells include the first tier's), one a line."""
    try:
        rep = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        log(f"--more-seeds-rule: cannot read a grid report from {path}: {e}")
        return 2
    if not isinstance(rep, dict) or not isinstance(rep.get("cells"), list):
        log(f"--more-seeds-rule: {path} is not a grid report (`--grid --json`: a 'cells' list)")
        return 2
    for k in more_seeds_cells(rep, MORE_SEEDS_NS3_CPU_CAP2_S):
        print(k)
    return 0


def grid_report(
    cells: list[Cell],
    seeds: list[int] | dict[str, list[int]],
    ns3_runs: dict[str, dict[int, dict[str, Any]]],
    ll_runs: dict[str, dict[int, dict[str, Any]]],
    cfg: dict[str, Any],
) -> dict[str, Any]:
    """The tally: per cell the means over its seeds (`seeds`, one list for every cell or a
    list per cell key, `grid_cell_seeds`) on both sides, the verdict against the targets."""
    rows = []
    for c in cells:
        cs = seeds[c.key] if isinstance(seeds, dict) else seeds
        ns = grid_side([ns3_runs[c.key][s] for s in cs if s in ns3_runs.get(c.key, {})])
        ll = grid_side([ll_runs[c.key][s] for s in cs if s in ll_runs.get(c.key, {})])
        row: dict[str, Any] = {"key": c.key, "cell": c.__dict__, "ns3": ns, "linklab": ll}
        row["seeds"] = len(cs)
        if ns and ll:
            gd = rel(ll["goodput_bps_mean"], ns["goodput_bps_mean"])
            qd = rel(ll["queue_delay_s_mean"], ns["queue_delay_s_mean"])
            row["goodput_rel_diff"], row["queue_delay_rel_diff"] = gd, qd
            # Is the difference larger than the seeds' noise? (95 % Welch interval of the
            # difference of the means, relative to ns-3's mean; reported, not a target.)
            for k, name in (("goodput_bps", "goodput"), ("queue_delay_s", "queue_delay")):
                half, base = diff_ci95(ll, ns, k), ns[f"{k}_mean"]
                row[f"{name}_rel_diff_ci95"] = None if half is None or not base else half / base
            row["goodput_pass"] = gd is not None and abs(gd) <= TARGET_GRID_GOODPUT
            row["queue_delay_pass"] = qd is not None and abs(qd) <= TARGET_GRID_QDELAY
            row["pass"] = row["goodput_pass"] and row["queue_delay_pass"]
        rows.append(row)
    compared = [r for r in rows if "pass" in r]
    n_pass = sum(r["pass"] for r in compared)
    rate = n_pass / len(compared) if compared else None
    return {
        "benchmark": "linklab vs ns-3 3.44, grid of CC x queue x path (benches/vs_ns3.py --grid)",
        "config": cfg,
        "host": host_info(),
        "targets": {
            "goodput_rel": TARGET_GRID_GOODPUT,
            "queue_delay_rel": TARGET_GRID_QDELAY,
            "pass_rate": TARGET_GRID_PASS_RATE,
        },
        "cells": rows,
        "n_cells": len(rows),
        "n_compared": len(compared),
        "n_pass": n_pass,
        "pass_rate": rate,
        "all_pass": bool(compared)
        and len(compared) == len(rows)
        and n_pass >= TARGET_GRID_PASS_RATE * len(compared),
        "misses": [r["key"] for r in compared if not r["pass"]],
        "cpu_s": {
            "ns3": sum(r["ns3"].get("cpu_s", 0.0) for r in rows),
            "linklab": sum(r["linklab"].get("cpu_s", 0.0) for r in rows),
            "ns3_run_wall": sum(r["ns3"].get("run_wall_s", 0.0) for r in rows),
            "linklab_run_wall": sum(r["linklab"].get("run_wall_s", 0.0) for r in rows),
        },
    }


def fmt_pct(x: float | None) -> str:
    return fmt_num(None if x is None else x * 100, "+.1f", "%")


def print_grid_table(rep: dict[str, Any]) -> None:
    cfg = rep["config"]
    more = cfg.get("seeds_by_cell") or {}
    also = f" ({len(more)} cells marked * over seeds 1-{max(more.values())})" if more else ""
    print(
        f"linklab vs ns-3 3.44 - grid: {rep['n_cells']} cells, seeds {cfg['seeds']}{also}; "
        "goodput Mbit/s and mean queueing delay ms, mean ± 95 % CI; diff = (linklab - ns-3) "
        "/ ns-3 ± the 95 % interval of that difference (Welch); retx / TO = retransmitted "
        "segments / timeout episodes, mean per run (ns-3|linklab)"
    )
    w = max((len(r["key"]) + 1 for r in rep["cells"]), default=10)
    hdr = (
        f"{'cell':<{w}} | {'ns-3 goodput':>15} | {'ll goodput':>15} | {'diff':>12} | "
        f"{'ns-3 delay':>15} | {'ll delay':>15} | {'diff':>12} | {'retx':>11} | {'TO':>11} | ok"
    )
    print(hdr)
    print("-" * len(hdr))
    for r in rep["cells"]:
        ns, ll = r["ns3"], r["linklab"]

        def pair(k: str, nd: int, ns: dict[str, Any] = ns, ll: dict[str, Any] = ll) -> str:
            a, b = ns.get(f"{k}_mean"), ll.get(f"{k}_mean")
            return f"{fmt_num(a, f'.{nd}f')}|{fmt_num(b, f'.{nd}f')}"

        g_ns = fmt_ci(ns.get("goodput_bps_mean"), ns.get("goodput_bps_ci95"), 1e6, 2)
        g_ll = fmt_ci(ll.get("goodput_bps_mean"), ll.get("goodput_bps_ci95"), 1e6, 2)
        q_ns = fmt_ci(ns.get("queue_delay_s_mean"), ns.get("queue_delay_s_ci95"), 1e-3, 2)
        q_ll = fmt_ci(ll.get("queue_delay_s_mean"), ll.get("queue_delay_s_ci95"), 1e-3, 2)
        ok = "-" if "pass" not in r else ("PASS" if r["pass"] else "MISS")

        def dif(name: str, r: dict[str, Any] = r) -> str:
            d, h = r.get(f"{name}_rel_diff"), r.get(f"{name}_rel_diff_ci95")
            return fmt_pct(d) + ("" if d is None or h is None else f"±{h * 100:.0f}")

        key = r["key"] + ("*" if r["key"] in more else "")
        print(
            f"{key:<{w}} | {g_ns:>15} | {g_ll:>15} | {dif('goodput'):>12}"
            f" | {q_ns:>15} | {q_ll:>15} | {dif('queue_delay'):>12}"
            f" | {pair('retransmits', 0):>11} | {pair('timeouts', 1):>11} | {ok}"
        )
    cpu = rep["cpu_s"]
    print(
        f"\nCPU (processes, user+sys): ns-3 {cpu['ns3']:.0f} s "
        f"(Run() wall {cpu['ns3_run_wall']:.0f} s), linklab {cpu['linklab']:.1f} s "
        f"(core run wall {cpu['linklab_run_wall']:.1f} s)"
    )
    if rep["pass_rate"] is None:
        print("no cell compared (linklab not run)")
        return
    print(
        f"[{'PASS' if rep['all_pass'] else 'FAIL'}] {rep['n_pass']}/{rep['n_compared']} cells "
        f"({rep['pass_rate']:.1%}) within goodput ±{TARGET_GRID_GOODPUT:.0%} and queueing "
        f"delay ±{TARGET_GRID_QDELAY:.0%} of ns-3 (target >= {TARGET_GRID_PASS_RATE:.0%} of "
        "the cells)"
    )
    for k in rep["misses"]:
        fam = GRID_MISSES.get(k)
        why = f"  [{fam}: {GRID_MISS_FAMILY[fam]}]" if fam else "  [no documented cause]"
        print(f"  miss: {k}{why}")
    pivot: dict[tuple[str, str], list[int]] = {}
    for r in rep["cells"]:
        if "pass" in r:
            n = pivot.setdefault((r["cell"]["cc"], r["cell"]["queue"]), [0, 0])
            n[0] += bool(r["pass"])
            n[1] += 1
    queues = [q for q in GRID_QUEUES if any(k[1] == q for k in pivot)]
    print("\ncells within both targets, by congestion control (rows) and queue (columns):")
    print(f"{'':>9} " + " ".join(f"{q:>9}" for q in queues))
    for cc in [c for c in CCS if any(k[0] == c for k in pivot)]:
        cols = [pivot.get((cc, q)) for q in queues]
        print(f"{cc:>9} " + " ".join(f"{f'{n[0]}/{n[1]}' if n else '':>9}" for n in cols))


def grid_main(a: argparse.Namespace) -> int:
    """`--grid`: run (or read) ns-3 and run linklab over the cells; table or JSON."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import tomli_w

    ecn = not a.no_ecn
    if a.quick:
        cells = [parse_cell_key(k) for k in QUICK_CELLS]
    elif a.cell:
        cells = [parse_cell_key(k) for k in a.cell]
    else:
        levels = {
            "flows": tuple(a.flows or GRID_LEVELS["flows"]),
            "mss": tuple(a.mss or GRID_LEVELS["mss"]),
            "rate": tuple(a.rate or GRID_LEVELS["rate"]),
            "delay": tuple(a.delay or GRID_LEVELS["delay"]),
            "qlimit": tuple(a.qlimit_bdp or GRID_LEVELS["qlimit"]),
        }
        cells = grid_cells(a.cc or list(CCS), a.queue or list(GRID_QUEUES), levels, a.design,
                           a.simtime)  # fmt: skip
    if a.show_cell:
        for c in cells:
            print(show_cell(c, ecn))
            print()
        return 0
    results = load_grid_results(a.ns3_results)
    more = load_grid_results(NS3_GRID_SEEDS10_RESULTS) if a.seeds is None else {"cells": {}}
    cell_seeds = grid_cell_seeds(cells, ecn, a.seeds, more)
    seeds = list(range(1, (a.seeds or GRID_SEEDS) + 1))
    # The 10-seed cells' ns-3 runs come from their own file (seeds 1-3 there are the same
    # runs as in ns3-grid.json: same arguments, deterministic).
    extra = {c.key: more["cells"][c.key] for c in cells if len(cell_seeds[c.key]) > len(seeds)}
    results = results | {"cells": results["cells"] | extra}
    store = a.save_ns3
    stored = load_grid_results(store)["cells"] if store else {}  # what --save-ns3 writes
    if store and store != a.ns3_results:  # runs already in the store count too
        results = results | {"cells": results["cells"] | stored}
    use_cache = not a.ns3_arg and not a.fresh_ns3
    if a.saved_only:  # the cells whose ns-3 runs are all in the results file

        def saved(c: Cell) -> bool:
            e = results["cells"].get(c.key, {})
            argv = ns3_grid_argv(grid_settings(c, ecn), 0)
            runs = e.get("runs", {})
            return e.get("ns3_argv") == argv and all(str(x) in runs for x in cell_seeds[c.key])

        cells = [c for c in cells if saved(c)]
        if not cells or not use_cache:
            raise BenchError(f"--saved-only: no cell of the grid is saved in {a.ns3_results}")
    base = tomllib_load(REPO / SCENARIO)
    tmpdir = Path(tempfile.mkdtemp(prefix="vs_ns3_grid-"))
    ll_prefix: list[str] | None = None
    ll_env: dict[str, str] | None = None
    if not a.ns3_only:
        try:
            ll_prefix, ll_env = find_linklab(a.linklab)
        except BenchError as e:
            log(f"[linklab] {e}")
            return 2

    docs: dict[str, dict[str, Any]] = {}
    sts: dict[str, dict[str, Any]] = {}
    tomls: dict[str, Path] = {}
    for i, c in enumerate(cells):
        st = grid_settings(c, ecn)
        doc = linklab_grid_doc(base, st)
        bad = grid_mismatches(st, None, doc)
        if bad:
            raise BenchError(f"{c.key}: the linklab scenario does not match: {'; '.join(bad)}")
        sts[c.key], docs[c.key] = st, doc
        tomls[c.key] = tmpdir / f"cell{i:04d}.toml"
        tomls[c.key].write_text(tomli_w.dumps(doc))

    lock = threading.Lock()
    binary: list[Path] = []
    ns3_runs: dict[str, dict[int, dict[str, Any]]] = {c.key: {} for c in cells}
    ll_runs: dict[str, dict[int, dict[str, Any]]] = {c.key: {} for c in cells}
    errors: list[str] = []

    def cached(c: Cell, seed: int) -> dict[str, Any] | None:
        entry = results["cells"].get(c.key)
        if not use_cache or not entry or str(seed) not in entry.get("runs", {}):
            return None
        if entry.get("ns3_argv") != ns3_grid_argv(sts[c.key], 0):
            log(f"[ns-3] {c.key}: saved runs had other ns-3 arguments; running ns-3 again")
            return None
        return entry["runs"][str(seed)] | {"settings": entry.get("ns3_settings")}

    def task(c: Cell, seed: int) -> None:
        try:
            r = cached(c, seed)
            tag = " (saved)"
            if r is None:
                tag = ""
                with lock:
                    if not binary:
                        binary.append(ensure_native(ensure_ns3_venv(a.ns3_venv), a.rebuild))
                r = ns3_grid_run(binary[0], sts[c.key], seed, a.ns3_arg)
                if store and use_cache:
                    with lock:
                        argv = ns3_grid_argv(sts[c.key], 0)  # seed 0: the cell's
                        entry = results["cells"].setdefault(c.key, {})
                        if entry.get("ns3_argv") != argv:
                            entry.clear()
                        stored[c.key] = entry
                        entry["settings"] = sts[c.key]
                        entry["ns3_argv"] = argv
                        entry["ns3_settings"] = r["settings"]
                        entry.setdefault("runs", {})[str(seed)] = {
                            k: v for k, v in r.items() if k != "settings"
                        }
                        header = {
                            "benchmark": "ns-3 3.44 grid runs (benches/vs_ns3.py --grid "
                            "--save-ns3): the ns-3 side of every cell, by cell key and seed",
                            "ns3": {
                                "version": "3.44 (PyPI wheel `ns3`)",
                                "twin": "benches/ns3/dumbbell.cc",
                                "twin_sha256": hashlib.sha256(NATIVE_SRC.read_bytes()).hexdigest(),
                            },
                            "host": host_info(),
                        }
                        save_grid_results(store, header | {"cells": stored})
            bad = grid_mismatches(sts[c.key], r.get("settings"), docs[c.key])
            if bad:
                raise BenchError(f"{c.key}: ns-3 and linklab disagree: {'; '.join(bad)}")
            ns3_runs[c.key][seed] = r
            msg = (
                f"[ns-3] {c.key} seed {seed}: {r['goodput_bps'] / 1e6:.3f} Mbit/s, "
                f"{r['queue_delay_s'] * 1e3:.2f} ms, cpu {r.get('cpu_s', 0):.1f} s{tag}"
            )
            if ll_prefix is not None:
                q = linklab_grid_run(ll_prefix, ll_env, tomls[c.key], seed, a.linklab_set)
                bad = grid_mismatches(sts[c.key], None, docs[c.key], q["summary"])
                if bad:
                    raise BenchError(f"{c.key}: linklab ran something else: {'; '.join(bad)}")
                if not a.keep_summaries:
                    q.pop("summary")
                ll_runs[c.key][seed] = q
                msg += (
                    f" | linklab {q['goodput_bps'] / 1e6:.3f} Mbit/s, "
                    f"{q['queue_delay_s'] * 1e3:.2f} ms, cpu {q['cpu_s']:.2f} s"
                )
            log(msg)
        except (BenchError, KeyError, ValueError) as e:
            with lock:
                errors.append(f"{c.key} seed {seed}: {e}")
            log(f"[grid] {c.key} seed {seed}: {e}")

    tasks = sorted(
        ((c, s) for c in cells for s in cell_seeds[c.key]), key=lambda t: (est_packets(t[0]), t[1])
    )
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for _ in pool.map(lambda t: task(*t), tasks):
            pass
    shutil.rmtree(tmpdir, ignore_errors=True)
    cfg = {
        "design": "quick" if a.quick else ("cells" if a.cell else a.design),
        "seeds": seeds,
        "seeds_by_cell": {k: len(v) for k, v in cell_seeds.items() if len(v) != len(seeds)},
        "ecn": ecn,
        "ns3_results": _shown_path(a.ns3_results) if a.ns3_results else None,
        "linklab_set": a.linklab_set,
        "ns3_arg": a.ns3_arg,
    }
    rep = grid_report(cells, cell_seeds, ns3_runs, ll_runs, cfg)
    rep["errors"] = errors
    if a.json:
        print(json.dumps(rep))
    else:
        print_grid_table(rep)
        for e in errors:
            print(f"error: {e}")
    if errors:
        return 2
    if a.ns3_only:
        return 0
    return 0 if rep["all_pass"] else 1


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


def list_of(kind: type, name: str, lo: float, allowed: tuple[str, ...] = ()) -> Any:
    """An argparse type: a comma list of `kind` values >= lo (or of `allowed` names)."""

    def parse(text: str) -> list[Any]:
        items = [x.strip() for x in text.split(",") if x.strip()]
        if allowed:
            bad = [x for x in items if x not in allowed]
            if not items or bad:
                raise argparse.ArgumentTypeError(
                    f"bad {name} {text!r}: a comma list of {', '.join(allowed)}"
                )
            return items
        try:
            vals = [kind(x) for x in items]
        except ValueError:
            vals = []
        if not vals or any(v < lo for v in vals):
            what = "integers" if kind is int else "numbers"
            raise argparse.ArgumentTypeError(
                f"bad {name} {text!r}: a comma list of {what} >= {lo:g}"
            )
        return vals

    return parse


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--flows", type=list_of(int, "--flows", 1), help="flows (10; grid: 1,4,16)")
    p.add_argument(
        "--simtime", type=float, help="simulated seconds (100; grid: 20, 30 at RTT 200 ms)"
    )
    p.add_argument(
        "--seeds",
        type=int,
        help="seeds 1..N, ns-3 RngRun and linklab --seed (10; grid: 3, and 10 for the cells "
        "whose 10 seeds are committed in benches/results/ns3-grid-seeds10.json)",
    )
    p.add_argument("--per", type=parse_per, help="comma list (0,0.01,0.1; not in the grid)")
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run both simulators on each (PER, seed) N times in turn and take each side's "
        "median time (default 1; a saved ns-3 run counts once; not in the grid)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="2 flows x 5 s, one seed (smoke run); with --grid: the cells of QUICK_CELLS",
    )
    p.add_argument("--cc", type=list_of(str, "--cc", 0, CCS), help="congestion control(s)")
    p.add_argument(
        "--queue",
        type=list_of(str, "--queue", 0, tuple(QUEUES)),
        help="bottleneck queue(s) (dctcp = RED marking from K packets, for --cc dctcp)",
    )
    p.add_argument(
        "--qlimit",
        type=list_of(float, "--qlimit", 0),
        help="queue limit: packets (one point), or BDP multiples in the grid (0.5,1,4)",
    )
    p.add_argument("--no-ecn", action="store_true", help="ECN off in TCP and the queue")
    p.add_argument("--dctcp-k", type=int, default=20, metavar="P", help="DCTCP marking threshold")
    p.add_argument(
        "--recovery",
        choices=("prr", "classic"),
        default="prr",
        help="SACK loss recovery on both sides: PRR (ns-3's default, the scenario's) or "
        "classic RFC 6675 (ns-3 TcpClassicRecovery, linklab prr = false)",
    )
    g = p.add_argument_group(
        "grid",
        "--grid, or a list in --flows/--cc/--queue/--qlimit, or any of --mss/--rate/--delay, "
        "runs every CC x queue pair over a design of flows, MSS, rate, delay and queue limit",
    )
    g.add_argument("--grid", action="store_true", help="run the grid (defaults: the design)")
    g.add_argument("--mss", type=list_of(int, "--mss", 100), help="MSS, bytes (536,1448)")
    g.add_argument(
        "--rate", type=list_of(float, "--rate", 0.001), help="bottleneck Mbit/s (10,100)"
    )
    g.add_argument(
        "--delay",
        type=list_of(float, "--delay", 0),
        help="bottleneck one-way delay, ms (0,18,98: base RTT 4, 40, 200 ms)",
    )
    g.add_argument(
        "--design",
        choices=("covering", "factorial"),
        default="covering",
        help="covering: every pair of factor levels in some cell (9 rows for the defaults); "
        "factorial: every combination",
    )
    g.add_argument("--cell", action="append", metavar="KEY", help="only this cell (repeatable)")
    g.add_argument("--show-cell", action="store_true", help="print the cells' settings, both sides")
    g.add_argument("--jobs", type=int, default=1, help="runs at once (default 1)")
    g.add_argument(
        "--ns3-results",
        type=Path,
        default=NS3_GRID_RESULTS,
        metavar="JSON",
        help="saved ns-3 grid runs to compare against "
        f"(default {NS3_GRID_RESULTS.relative_to(REPO)})",
    )
    g.add_argument("--fresh-ns3", action="store_true", help="run ns-3 even for saved cells")
    g.add_argument(
        "--saved-only",
        action="store_true",
        help="only the cells whose ns-3 runs are all saved (no ns-3 needed)",
    )
    g.add_argument(
        "--ns3-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra argument for the ns-3 twin (an experiment: never read from or saved)",
    )
    g.add_argument(
        "--keep-summaries", action="store_true", help="keep linklab's summaries in --json"
    )
    g.add_argument(
        "--more-seeds-rule",
        type=Path,
        metavar="REPORT",
        help="print the cells of a grid report (--grid --json) the more-seeds rule gives "
        f"{GRID_MORE_SEEDS} seeds (3-seed interval wider than the tolerance, ns-3 <= "
        f"{MORE_SEEDS_NS3_CPU_CAP2_S:g} CPU-s a seed: both tiers) and exit",
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
        help="write the ns-3 runs here (e.g. benches/results/...; the grid saves after each run)",
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
    a.grid = bool(
        a.grid
        or a.mss
        or a.rate
        or a.delay
        or a.cell
        or a.show_cell
        or any(len(x or ()) > 1 for x in (a.flows, a.cc, a.queue, a.qlimit))
    )
    if a.repeat < 1:
        p.error(f"--repeat must be >= 1, not {a.repeat}")
    if a.grid:
        if a.per is not None:
            p.error("--per is not a grid factor (the grid runs PER 0)")
        if a.repeat != 1:
            p.error("--repeat is not for the grid (its runs are compared by their results)")
        if a.jobs < 1:
            p.error(f"--jobs must be >= 1, not {a.jobs}")
        if a.seeds is not None and a.seeds < 1:
            p.error(f"--seeds must be >= 1, not {a.seeds}")
        if a.simtime is not None and a.simtime <= 1:
            p.error(f"--simtime must be > 1 s (flows start in [0, 1) s), not {a.simtime:g}")
        if a.qlimit and min(a.qlimit) <= 0:
            p.error(f"--qlimit must be > 0 BDP in the grid, not {min(a.qlimit):g}")
        a.qlimit_bdp = a.qlimit
        for k in a.cell or []:
            try:
                parse_cell_key(k)
            except ValueError as e:
                p.error(str(e))
        return a
    a.flows = a.flows[0] if a.flows else 10
    a.cc = a.cc[0] if a.cc else "newreno"
    a.queue = a.queue[0] if a.queue else "red"
    a.simtime = 100.0 if a.simtime is None else a.simtime
    a.seeds = 10 if a.seeds is None else a.seeds
    a.per = [0.0, 0.01, 0.1] if a.per is None else a.per
    if a.quick:
        a.flows, a.simtime, a.seeds = 2, 5.0, 1
    if a.qlimit is not None:
        (q,) = a.qlimit
        if q != int(q) or q < 1:
            p.error(f"--qlimit must be >= 1 packet, not {q:g}")
        a.qlimit = int(q)
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
    if a.more_seeds_rule is not None:
        return more_seeds_main(a.more_seeds_rule)
    if a.grid:
        try:
            return grid_main(a)
        except BenchError as e:
            log(f"[grid] {e}")
            return 2
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
                # --repeat: the two simulators in turn, a.repeat times (a saved ns-3 run
                # once); each side's times are its medians (median_of_repeats).
                ns_reps: list[dict[str, Any]] = [cache[key]] if key in cache else []
                ll_reps: list[dict[str, Any]] = []
                for _ in range(a.repeat):
                    if key not in cache:
                        if ns3 is None:
                            ns3 = make_ns3_runner(a.ns3_venv, a.ns3_impl, a.rebuild)
                        ns_reps.append(ns3.run(a.flows, a.simtime, per, seed, cfg["model"]))
                    if ll is not None:
                        try:
                            ll_reps.append(ll.run(a.flows, a.simtime, per, seed))
                        except BenchError as e:
                            linklab_error, ll = str(e), None
                            ll_runs.clear()
                            ll_reps.clear()
                            log(f"[linklab] {e}\n[linklab] continuing with ns-3 only")
                r = median_of_repeats(ns_reps)
                ns3_runs.append(r)
                msg = (
                    f"[ns-3 {r['impl']}] per={per:g} seed={seed}: "
                    f"{r['goodput_bps'] / 1e6:.3f} Mbit/s, Run() {r['run_wall_s']:.2f} s, "
                    f"{r['peak_rss_kib'] / 1024:.0f} MiB"
                )
                if key in cache:
                    msg += " (cached)"
                log(msg)
                if ll_reps:
                    q = median_of_repeats(ll_reps)
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
