"""Confidence intervals: the one Student-t half-width used by sweeps and reproductions."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

__all__ = ["t_ci", "t_half_width"]


def t_half_width(std: Any, k: Any, confidence: float) -> Any:
    """``t_{(1+confidence)/2, k-1} · std / sqrt(k)`` for ``k >= 2`` samples.

    ``std`` is the sample standard deviation (ddof 1). Works elementwise on
    numpy arrays as on numbers (scipy's Student-t quantile; ``scipy.stats``
    costs about a second to import, ``scipy.special`` does not).
    """
    import numpy as np
    from scipy.special import stdtrit

    return stdtrit(k - 1, (1.0 + confidence) / 2.0) * std / np.sqrt(k)


def t_ci(values: Sequence[float], confidence: float) -> dict[str, Any]:
    """``{mean, ci, n}`` of ``values``: mean and Student-t half-width (None when n < 2)."""
    k = len(values)
    mean = statistics.fmean(values) if k else None
    ci = None
    if k >= 2:
        ci = float(t_half_width(statistics.stdev(values), k, confidence))
    return {"mean": mean, "ci": ci, "n": k}
