"""Type stubs of the Rust extension module ``linklab._core``."""

from collections.abc import Callable
from typing import Any, Literal

Column = tuple[Literal["f64", "u64"], bytes] | tuple[Literal["str"], list[str]]

class ScenarioError(ValueError):
    path: str
    value: str
    allowed: str
    message: str

class InternalError(RuntimeError): ...
class AccountingError(InternalError): ...
class EmulationError(ValueError): ...

__version__: str
MAX_DEPTH: int

def run(
    source: str | dict[str, object],
    *,
    seed: int | None = None,
    params: dict[str, str] | None = None,
    trace: bool = False,
    pcap: list[str] | None = None,
    pcapng: list[str] | None = None,
    sink: Callable[[dict[str, dict[str, Column]], dict[str, bytes]], object] | None = None,
    timings: dict[str, float] | None = None,
    base_dir: str | None = None,
    histograms: bool = False,
) -> tuple[dict[str, object], dict[str, dict[str, Column]], dict[str, bytes]]: ...
def emulate(
    source: str | dict[str, object],
    *,
    seed: int | None = None,
    params: dict[str, str] | None = None,
    base_dir: str | None = None,
    duration: str | None = None,
    record: bool = False,
    commands: list[tuple[str, str]] | None = None,
    shell: str | None = None,
    linux_defaults: bool = False,
    pcap: list[tuple[str, str]] | None = None,
) -> tuple[dict[str, Any], dict[str, list[Any]], str | None]: ...
def emulate_replay(
    source: str | dict[str, object],
    record: str,
    *,
    seed: int | None = None,
    params: dict[str, str] | None = None,
    base_dir: str | None = None,
) -> dict[str, Any]: ...
def input_files(
    source: str | dict[str, object],
    *,
    params: dict[str, str] | None = None,
    base_dir: str | None = None,
) -> list[str]: ...
def sch_schedules(entry: str, pairs: int, end_s: float) -> list[list[tuple[float, int]]]: ...
def json_schema() -> str: ...
def version() -> str: ...
def size_cdfs() -> tuple[list[tuple[str, list[tuple[float, float]]]], float]: ...
def arq_model(
    p_good: float, p_bad: float, g: float, b: float, npdu: int, n_max: int
) -> dict[str, float | list[float]]: ...
def arq_limit(p_good: float, p_bad: float, g: float, b: float, npdu: int, target: float) -> int: ...
def arq_limit_cap() -> int: ...
def arq_bounds() -> tuple[int, int, int]: ...
def arq_monte_carlo(
    p_good: float, p_bad: float, g: float, b: float, npdu: int, sdus: int, n_max: int, seed: int
) -> list[int]: ...
