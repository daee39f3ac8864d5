"""The dask backend: a real scheduler and two workers on 127.0.0.1, results as local."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from conftest import cli_env

pytest.importorskip("distributed")

from test_sweep import SMALL, _deterministic, _run_cli, _tables  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=10)


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A dask scheduler and two single-threaded workers; yields the scheduler address."""
    from distributed import Client

    workdir = tmp_path_factory.mktemp("dask")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = cli_env()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "distributed.cli.dask_scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--no-dashboard",
                ],  # fmt: skip
                cwd=workdir,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
        )
        for i in range(2):
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "distributed.cli.dask_worker",
                        address,
                        "--nworkers",
                        "1",
                        "--nthreads",
                        "1",
                        "--no-dashboard",
                        "--host",
                        "127.0.0.1",
                        "--name",
                        f"w{i}",
                        "--local-directory",
                        str(workdir / f"w{i}"),
                    ],  # fmt: skip
                    cwd=workdir,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )  # fmt: skip
            )
        deadline = time.monotonic() + 60
        while True:
            try:
                with Client(address, timeout="5s", set_as_default=False) as client:
                    client.wait_for_workers(2, timeout=max(1.0, deadline - time.monotonic()))
                break
            except (OSError, TimeoutError):
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    raise
                time.sleep(0.2)
        yield address
    finally:
        _stop(procs[1:])  # the workers first (together), then the scheduler
        _stop(procs[:1])


def test_dask_matches_local(scheduler: str, tmp_path: Path) -> None:
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL)
    args = ["sweep", scenario, "--param", "per=0,0.02,0.05", "--param", "flows=1,2",
            "--reps", "3", "--seed", "11"]  # fmt: skip
    dask = _run_cli(tmp_path, *args, "--backend", "dask", "--scheduler", scheduler,
                    "--out", "dask")  # fmt: skip
    assert dask.returncode == 0, dask.stderr
    local = _run_cli(tmp_path, *args, "--jobs", "2", "--out", "local")
    assert local.returncode == 0, local.stderr
    rd, sd = _tables(tmp_path / "dask")
    rl, sl = _tables(tmp_path / "local")
    assert rd.height == 18 and (rd["status"] == "ok").all()
    assert_frame_equal(_deterministic(rd), _deterministic(rl))
    assert_frame_equal(_deterministic(sd), _deterministic(sl))


def test_dask_failed_point_and_resume(scheduler: str, tmp_path: Path) -> None:
    import linklab

    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL)
    out = tmp_path / "o"
    res = linklab.sweep(scenario, {"per": [0.0, 2.0]}, reps=2, backend="dask",
                        scheduler=scheduler, out=out)  # fmt: skip
    assert (res.executed, res.failed) == (4, 2)
    bad = res.runs.filter(pl.col("per") == 2.0)
    assert all("not a probability" in e for e in bad["error"].to_list())
    again = linklab.sweep(scenario, {"per": [0.0, 2.0]}, reps=3, backend="dask",
                          scheduler=scheduler, out=out)  # fmt: skip
    assert (again.executed, again.reused) == (2, 4)
