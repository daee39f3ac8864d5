"""The one look of linklab's HTML pages (sweep reports, reproduction reports).

A page is self-contained: one inline stylesheet, figures embedded as base64
PNG, no external resource and no script. Everything shown is escaped with
:func:`escape`.
"""

from __future__ import annotations

import base64
import html

__all__ = ["CSS", "escape", "figure", "page"]

CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: #1d2330; background: #fff; margin: 0; }
main { max-width: 1400px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 2px solid #dfe4ec; }
.sub { color: #5b6475; margin: 0 0 16px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 4px 0 8px; }
th, td { padding: 5px 12px; border-bottom: 1px solid #e4e8ef; text-align: right;
         vertical-align: top; }
th { background: #f3f5f9; font-weight: 600; border-bottom: 2px solid #cfd6e2; }
td.l, th.l { text-align: left; }
tbody tr:nth-child(even) td { background: #fafbfd; }
table.kv th { text-align: left; background: none; border-bottom: 1px solid #e4e8ef;
              font-weight: 600; }
table.kv td { text-align: left; }
.ci { color: #6b7385; }
td.err { color: #a1262b; text-align: left; font-family: ui-monospace, monospace;
         font-size: 13px; white-space: pre-wrap; max-width: 640px; }
td.verdict { text-align: left; }
td.verdict.ok { background: #e3f4e8; }
td.verdict.miss { background: #fbe3e4; color: #a1262b; }
.wide { overflow-x: auto; }
.figs { display: grid; grid-template-columns: repeat(auto-fill, minmax(500px, 1fr)); gap: 18px; }
figure { margin: 0; padding: 10px; border: 1px solid #e4e8ef; border-radius: 6px; }
figure img { display: block; width: 100%; height: auto; }
figcaption { color: #5b6475; font-size: 13px; margin-top: 6px; }
pre { background: #f6f8fb; border: 1px solid #e4e8ef; border-radius: 6px; padding: 12px 14px;
      overflow-x: auto; font-size: 13px; line-height: 1.4; }
.note { color: #5b6475; font-style: italic; }
.ok { color: #23734a; font-weight: 600; }
.bad { color: #a1262b; font-weight: 600; }
"""


def escape(value: object) -> str:
    """``value`` as HTML text (quotes escaped too, so it fits in attributes)."""
    return html.escape(str(value), quote=True)


def figure(png: bytes, caption: str, size: tuple[int, int] | None = None) -> str:
    """A ``<figure>`` with ``png`` embedded and its caption (``size``: width, height)."""
    b64 = base64.b64encode(png).decode("ascii")
    dims = f' width="{size[0]}" height="{size[1]}"' if size else ""
    return (
        f'<figure><img src="data:image/png;base64,{b64}"{dims} alt="{escape(caption)}">'
        f"<figcaption>{escape(caption)}</figcaption></figure>"
    )


def page(title: str, body: str, generator: str) -> str:
    """A complete HTML document: ``title``, the stylesheet, ``body`` inside ``<main>``."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="generator" content="{escape(generator)}">\n'
        f"<title>{escape(title)}</title>\n"
        f"<style>{CSS}</style>\n</head>\n<body>\n<main>\n{body}\n</main>\n</body>\n</html>\n"
    )
