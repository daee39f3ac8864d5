"""Trace tables and their file names, shared by the API (``api.py``) and the streaming
of a run's pieces (``_stream.py``), which both import this module (neither imports
the other)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from linklab import _core
from linklab.errors import short_repr

if TYPE_CHECKING:  # numpy and polars cost ~70 MB: imported only when traces exist
    import polars as pl

__all__ = ["file_stem", "trace_frame"]

_NUMERIC: dict[str, str] = {
    "f64": "<f8",
    "u64": "<u8",
}


def trace_frame(columns: Mapping[str, tuple[str, Any]]) -> pl.DataFrame:
    """A polars DataFrame from the binding's ``{column: (dtype, data)}``."""
    import numpy as np
    import polars as pl

    series: list[pl.Series] = []
    for name, (dtype, data) in columns.items():
        if dtype in _NUMERIC:
            values = np.frombuffer(data, dtype=_NUMERIC[dtype])
            pl_dtype = pl.Float64 if dtype == "f64" else pl.UInt64
            series.append(pl.Series(name, values, dtype=pl_dtype))
        elif dtype == "str":
            series.append(pl.Series(name, data, dtype=pl.String))
        else:
            raise _core.InternalError(
                f"trace column {short_repr(name)} has unknown dtype {short_repr(dtype)}"
            )
    frame = pl.DataFrame(series)
    # Before its first loss a sender has no slow-start threshold (the core
    # holds it at "infinite", 2**63 - 1): null, not a number.
    unset = [c for c in _UNSET_WHEN_HUGE if c in frame.columns]
    if unset:
        frame = frame.with_columns(
            pl.when(pl.col(c) >= _HUGE).then(None).otherwise(pl.col(c)).alias(c) for c in unset
        )
    return frame


#: Trace columns whose "not set yet" the core writes as a huge value.
_UNSET_WHEN_HUGE = ("ssthresh_bytes",)
_HUGE = 1 << 62


_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")


def file_stem(name: str) -> str:
    """A file name stem for trace table ``name`` (only letters, digits, `_`, `.`, `-`)."""
    stem = _UNSAFE.sub("_", name).lstrip(".")
    return stem or "trace"
