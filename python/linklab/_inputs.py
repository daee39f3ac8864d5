"""Run inputs besides the scenario: the seed and ``[params]`` overrides, checked once.

The core owns the rules of ``[params]`` (``scenario/params.rs``, ``resolve``):
an override arrives as text and is parsed by the type of the parameter's
default (integer, number, ``true``/``false``, else text), and it alone decides
whether a value is acceptable. Python only

- turns a Python value into that text (:func:`params_to_strings`), and
- types a swept value for the sweep's tables and run keys (:func:`typed_like`):
  a lossless widening to the default's type (an int for a float parameter
  becomes a float, any value for a text parameter becomes its text), never a
  refusal. A value the core refuses is a failed run with the core's message.

So the two never disagree on what is valid: Python has no validity rule. A sweep
asks the core about each swept value before it runs anything
(:func:`linklab.sweep.check_syntax`): a value the core cannot read as its
parameter's type is bad input; one it reads but refuses later is a failed run.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from linklab.errors import short_repr

__all__ = ["MAX_SEED", "check_seed", "params_to_strings", "to_text", "typed_like"]

#: The largest seed (seeds are unsigned 64-bit integers).
MAX_SEED = 2**64 - 1
SEED_RANGE = "an integer from 0 to 2**64-1"


def check_seed(seed: object, what: str = "seed") -> int:
    """``seed`` if it is an int in [0, 2**64-1]; else TypeError (not an int) or ValueError."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"{what} must be an int, not {type(seed).__name__}; allowed: {SEED_RANGE}")
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"invalid {what} {seed}; allowed: {SEED_RANGE}")
    return seed


def to_text(value: object) -> str:
    """A parameter value as the text the core parses (booleans as ``true``/``false``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def params_to_strings(params: object) -> dict[str, str]:
    """``[params]`` overrides as the strings the core parses.

    ``params`` is a mapping of parameter name to a str, bool or number; anything
    else is a TypeError (a ValueError for an empty or non-str name).
    """
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise TypeError(
            f"params must be a dict of parameter name to value, e.g. {{'per': 0.1}}, "
            f"not a {type(params).__name__}"
        )
    out: dict[str, str] = {}
    for name, value in params.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"parameter names must be non-empty strings, not {short_repr(name)}")
        if not isinstance(value, str | bool | numbers.Real):
            raise TypeError(
                f"params[{short_repr(name)}] is a {type(value).__name__}; allowed: str, "
                f"int, float or bool"
            )
        out[name] = to_text(value)
    return out


def typed_like(value: Any, default: Any) -> Any:
    """``value`` widened to the type of the parameter's ``default`` where that loses nothing."""
    if isinstance(default, bool):
        return value
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(default, str) and not isinstance(value, str):
        return to_text(value)
    return value
