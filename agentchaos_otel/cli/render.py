"""Terminal rendering of summaries shared by the commands that print them."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def print_summary(console: Console, summary: dict[str, Any], *, title: str) -> None:
    """A key/value table for scalars, then one table per nested mapping."""
    simulated = bool(summary.get("simulated"))
    label = f"{title} — SIMULATED model (not evidence about real models)" if simulated else title
    top = Table(title=label, show_header=False)
    top.add_column("measure")
    top.add_column("value", justify="right")
    nested: list[tuple[str, Any]] = []
    for key, value in summary.items():
        if isinstance(value, dict | list):
            nested.append((key, value))
        else:
            top.add_row(key, _fmt(value))
    console.print(top)
    for key, value in nested:
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            cols = sorted({c for v in value.values() for c in v})
            table = Table(title=key)
            table.add_column(key)
            for c in cols:
                table.add_column(c, justify="right")
            for row_key, row in value.items():
                table.add_row(str(row_key), *[_fmt(row.get(c, "")) for c in cols])
        elif isinstance(value, dict):
            table = Table(title=key, show_header=False)
            table.add_column(key)
            table.add_column("value", justify="right")
            for k, v in value.items():
                table.add_row(str(k), _fmt(v))
        else:
            table = Table(title=key, show_header=False)
            table.add_column(key)
            for item in value:
                table.add_row(_fmt(item))
        console.print(table)
