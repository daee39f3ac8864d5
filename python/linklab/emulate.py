"""Live emulation: kernel TCP through a scenario's link models in real time.

:func:`emulate` runs a scenario live (``docs/emulation.md``): one network
namespace per flow endpoint, joined through the same link models the simulator
runs, with a kernel TCP connection per ``[[flows]]`` entry or commands of your
own. :func:`replay` feeds a recording back through the same links in simulated
time and counts the decisions that differ (a sans-IO model must decide alike).

A record directory holds ``run.json`` (the scenario, its parameters, seed and
base directory) and ``record.json`` (every arrival at a link and every
decision), so ``linklab emulate --replay DIR`` needs nothing else.
"""

from __future__ import annotations

import io
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from linklab import _core
from linklab._files import Staging
from linklab._inputs import check_seed, params_to_strings
from linklab._scenario import load_source, source_file
from linklab.errors import EmulationError, ScenarioError, for_api

__all__ = ["EmulationError", "EmulationResult", "emulate", "replay"]

#: Files of a record directory.
RUN_FILE = "run.json"
RECORD_FILE = "record.json"


@dataclass
class EmulationResult:
    """What :func:`emulate` returns."""

    #: The summary: the shape of ``linklab run --json`` plus ``emulation``.
    summary: dict[str, Any]
    #: ``TCP_INFO`` of every built-in sender every 10 ms (``t``, ``flow``,
    #: ``cwnd``, ``ssthresh``, ``rtt_s``, ``rttvar_s``, ``unacked``,
    #: ``total_retrans``, ``bytes_acked``, ``delivery_rate_bps``, ``ca_state``).
    tcp_info: pl.DataFrame


def emulate(
    scenario: str | os.PathLike[str] | Mapping[str, Any],
    seed: int | None = None,
    params: Mapping[str, object] | None = None,
    duration: str | None = None,
    record_dir: str | os.PathLike[str] | None = None,
    trace_dir: str | os.PathLike[str] | None = None,
    commands: Sequence[tuple[str, str]] = (),
    shell: str | None = None,
    lead: str | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    linux_defaults: bool = False,
    pcap: Mapping[str, str | os.PathLike[str]] | None = None,
    kernel: Mapping[str, object] | None = None,
) -> EmulationResult:
    """Run ``scenario`` live (a path, TOML text or a dict, as :func:`linklab.run`).

    ``duration`` (e.g. ``"10s"``) replaces the scenario's. ``record_dir``
    stores the recording for :func:`replay`; ``trace_dir`` writes
    ``tcp_info.parquet``. ``commands`` (``[(node, command line)]``) or
    ``shell`` (a node name) replace the built-in traffic: each command runs
    with ``sh -c`` inside that node's namespace, with ``LINKLAB_<NODE>`` set
    to every node's address and ``LINKLAB_A``/``LINKLAB_B`` to the first
    flow's ends; the run ends when all have exited or at the duration. Each
    runs under an init of a PID namespace of its own, so everything it starts
    ends with it (and with the run, also after ``kill -9`` of the emulator);
    ``summary["emulation"]["commands"]`` holds each one's ``exit_status`` and
    ``failed`` (it exited non-zero before the end; the CLI then exits 4).
    ``lead`` (a node of ``commands``, or ``"shell"``) ends the run when that
    one ends, killing the others (a server at the far end of a client, as
    ``linklab shell --b``).

    The scenario's ``[tcp]`` is mapped onto the kernels where Linux has a knob
    (SACK, timestamps, ECN, initial window, minimum RTO, MSS; the summary's
    ``emulation.kernel_tcp``); ``linux_defaults`` leaves them as Linux ships.
    ``pcap`` maps a node (or ``"a"``/``"b"``) to a file: what that node's kernel
    sent and received, as a nanosecond pcap of raw IP packets.

    ``kernel`` changes kernel settings beyond the scenario's ``[tcp]`` in
    every namespace the run makes (never on the host), for experiments that
    change one thing on the kernel's side: a sysctl under ``net.ipv4.``
    (``{"net.ipv4.tcp_recovery": 0}``: RACK off), ``quickack`` (1: the
    receiver ACKs every segment), ``pacing`` (1: the senders are paced
    whatever their congestion control) or
    ``gso_max_segs`` (1: no GSO on the TUN devices); the summary lists them
    under ``emulation.kernel_knobs``.

    Needs Linux, root with ``CAP_SYS_ADMIN`` and ``CAP_NET_ADMIN``, and
    ``/dev/net/tun``. Raises ``ScenarioError`` for a
    scenario that cannot be loaded, :class:`EmulationError` (a
    ``ValueError``) for one that cannot be emulated or a machine that cannot
    emulate, ``RuntimeError`` if a system call fails during the run.
    """
    try:
        return emulate_raw(
            scenario=scenario,
            seed=seed,
            params=params,
            duration=duration,
            record_dir=record_dir,
            trace_dir=trace_dir,
            commands=commands,
            shell=shell,
            lead=lead,
            base_dir=base_dir,
            linux_defaults=linux_defaults,
            pcap=pcap,
            kernel=kernel,
        )
    except ScenarioError as e:
        raise for_api(e) from None


def emulate_raw(
    scenario: str | os.PathLike[str] | Mapping[str, Any],
    seed: int | None = None,
    params: Mapping[str, object] | None = None,
    duration: str | None = None,
    record_dir: str | os.PathLike[str] | None = None,
    trace_dir: str | os.PathLike[str] | None = None,
    commands: Sequence[tuple[str, str]] = (),
    shell: str | None = None,
    lead: str | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    linux_defaults: bool = False,
    pcap: Mapping[str, str | os.PathLike[str]] | None = None,
    kernel: Mapping[str, object] | None = None,
) -> EmulationResult:
    """:func:`emulate`, its scenario errors as the core raises them (``--set NAME``:
    the ``linklab emulate`` command's words)."""
    overrides = params_to_strings(params)
    if seed is not None:
        check_seed(seed)
    file = source_file(scenario)
    if base_dir is None:
        base_dir = os.path.dirname(os.path.abspath(file)) if file is not None else os.getcwd()
    source = load_source(scenario)
    with Staging() as staged:
        # Captures are written during the run into staged temporaries (synced
        # by the core at the end) and renamed into place only after it.
        captures: list[tuple[str, str]] = []
        for node, path in (pcap or {}).items():
            staged.add(path, lambda tmp, node=node: captures.append((node, os.fspath(tmp))))
        started = time.perf_counter()
        summary, info, record = _core.emulate(
            source,
            seed=seed,
            params=overrides or None,
            base_dir=os.fspath(base_dir),
            duration=duration,
            record=record_dir is not None,
            commands=list(commands) or None,
            shell=shell,
            lead=lead,
            linux_defaults=linux_defaults,
            pcap=captures or None,
            kernel=[(str(k), _knob_value(v)) for k, v in (kernel or {}).items()] or None,
        )
        summary["wall_time_s"] = time.perf_counter() - started
        frame = pl.DataFrame(info)
        # The directories may not exist yet (the CLI checks that they can be made).
        for where in (record_dir, trace_dir):
            if where is not None:
                Path(where).mkdir(parents=True, exist_ok=True)
        if record_dir is not None:
            run = {
                "scenario": source,
                "params": overrides,
                "seed": summary["seed"],
                "base_dir": os.path.abspath(os.fspath(base_dir)),
            }
            staged.add_bytes(Path(record_dir) / RUN_FILE, json.dumps(run).encode())
            staged.add_bytes(Path(record_dir) / RECORD_FILE, (record or "").encode())
        if trace_dir is not None:
            buf = io.BytesIO()
            frame.write_parquet(buf)
            staged.add_bytes(Path(trace_dir) / "tcp_info.parquet", buf.getvalue())
        staged.commit()
    return EmulationResult(summary=summary, tcp_info=frame)


def _knob_value(v: object) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def replay(record_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Replay the recording in ``record_dir`` (written by :func:`emulate`)
    through freshly built links of the same scenario, parameters and seed, in
    simulated time: ``{"packets", "mismatches", "first"}``. Needs no root.

    Raises :class:`EmulationError` for a directory that holds no readable
    recording, ``ScenarioError`` if its scenario no longer loads.
    """
    where = Path(record_dir)
    try:
        run = json.loads((where / RUN_FILE).read_text())
        record = (where / RECORD_FILE).read_text()
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise EmulationError(
            f"--replay {os.fspath(record_dir)!r}: no readable recording ({e}); give a "
            "directory written by 'linklab emulate --record DIR'"
        ) from None
    if not isinstance(run, dict) or not {"scenario", "params", "seed", "base_dir"} <= set(run):
        raise EmulationError(
            f"--replay {os.fspath(record_dir)!r}: {RUN_FILE} lacks scenario, params, seed "
            "or base_dir; give a directory written by 'linklab emulate --record DIR'"
        )
    out: dict[str, Any] = _core.emulate_replay(
        run["scenario"],
        record,
        seed=run["seed"],
        params=run["params"] or None,
        base_dir=run["base_dir"],
    )
    return out
