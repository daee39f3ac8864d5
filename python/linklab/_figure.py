"""The figure class every linklab plot returns (imported only when drawing).

A plain :class:`matplotlib.figure.Figure` built without pyplot shows in a Jupyter
notebook only after ``%matplotlib inline`` (the inline backend registers IPython's
display formatters for figures). :class:`LinklabFigure` carries its own
``_repr_png_``, so IPython's rich display shows it as the value of a cell whatever
the backend, and it never enters pyplot's list of open figures.
"""

from __future__ import annotations

import io

from matplotlib.figure import Figure

__all__ = ["NOTEBOOK_DPI", "LinklabFigure"]

#: Resolution of the PNG a notebook shows (the files written use their own).
NOTEBOOK_DPI = 100


class LinklabFigure(Figure):
    """A :class:`~matplotlib.figure.Figure` that displays itself in a notebook."""

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png", dpi=NOTEBOOK_DPI, metadata={"Software": "linklab"})
        return buf.getvalue()
