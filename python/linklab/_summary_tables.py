"""The summary's lists (flows, links, queues, media) as flat polars tables.

Every nested object becomes columns named by its path joined with ``_``
(``send_limits`` → ``send_limits_busy_s``, a queue's ``drops`` →
``drops_overflow``, a flow's ``account`` → ``account_data_sent``); a list of
``{cause, …, packets}`` objects (the packet account's drops) becomes its total
(``account_data_dropped``) and one column per cause (``account_data_dropped_link_loss``).
The identifying columns come first (a flow's ``name``, ``id``, ``from``, ``to``); a
column no row has a value for (``completed_s`` when no flow completed) is Float64,
never polars' Null type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

__all__ = ["FIRST", "flat_table", "flatten"]

#: Leading columns per summary list.
FIRST: dict[str, tuple[str, ...]] = {
    "flows": ("name", "id", "from", "to"),
    "links": ("name",),
    "queues": ("link", "kind"),
    "media": ("name", "id", "kind", "from", "to"),
}


def _is_drop_list(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(x, Mapping) and "cause" in x and "packets" in x for x in value
    )


def flatten(item: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """One summary object as flat ``{column: value}`` (see the module docs)."""
    out: dict[str, Any] = {}
    for key, value in item.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{name}_"))
        elif _is_drop_list(value):
            out[name] = sum(int(x["packets"]) for x in value)
            for x in value:
                col = f"{name}_{x['cause']}"
                out[col] = out.get(col, 0) + int(x["packets"])
        else:
            out[name] = value
    return out


def flat_table(
    items: Iterable[Mapping[str, Any]] | None, first: Sequence[str] = ()
) -> pl.DataFrame:
    """``items`` flattened, one row each, ``first`` columns leading."""
    import polars as pl

    rows = [flatten(x) for x in items or []]
    order: dict[str, None] = {}
    for row in rows:
        order.update(dict.fromkeys(row))
    if not rows:
        return pl.DataFrame()
    frame = pl.DataFrame(rows, infer_schema_length=None)
    frame = frame.with_columns(
        pl.col(c).cast(pl.Float64) for c, t in frame.schema.items() if t == pl.Null
    )
    lead = [c for c in first if c in order]
    return frame.select(*lead, *(c for c in order if c not in lead))
