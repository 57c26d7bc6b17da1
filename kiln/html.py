"""HTML pieces the report pages share: escaping, tables, and charts saved as PNG beside the page."""

from __future__ import annotations

import html
import re
from collections.abc import Collection
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def escape(value: object) -> str:
    """``value`` as text safe inside HTML elements and attributes."""
    return html.escape(str(value), quote=True)


def table(header: list[str], rows: list[list[object]], numeric: Collection[int] = ()) -> str:
    """An HTML table; the columns in ``numeric`` are right-aligned."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f'<td class="n">{escape(c)}</td>' if i in numeric else f"<td>{escape(c)}</td>"
                         for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def save_chart(fig: Figure, out_dir: Path, name: str, alt: str) -> str:
    """Save ``fig`` as ``<name>.png`` in ``out_dir`` (no timestamp, so reruns are identical); returns its <img> tag."""
    filename = re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".png"
    FigureCanvasAgg(fig)
    fig.savefig(out_dir / filename, dpi=100, metadata={"Software": None})
    fig.clear()
    return f'<img src="{escape(filename)}" alt="{escape(alt)}">'
