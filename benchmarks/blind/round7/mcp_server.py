"""The freight MCP server (stdio): rating, booking, tracking and inventory over the SQLite world.

Started once per build as a subprocess (``python -m benchmarks.blind.round7.mcp_server WORLD``) and
shared by every episode; each call finds its episode from the order it names, counts its calls per
tool, and answers with the form scheduled for that call (an ``isError`` result or a rewritten
value) after really running the tool.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from benchmarks.blind.round7 import tools, world

_DB = world.connect(Path(sys.argv[1])) if __name__ == "__main__" else None
_COUNTS: Counter[tuple[str, str]] = Counter()
server = MCPServer("freight-ops", instructions="Carrier rating, labels, tracking and stock.")


def _call(name: str, args: dict[str, Any]) -> CallToolResult:
    assert _DB is not None
    try:
        result = tools.run_tool(_DB, name, args)
    except tools.ToolInputError as exc:
        return CallToolResult(content=[TextContent(type="text", text=f"Invalid arguments: {exc}")], isError=True)
    order = world.load_order(_DB, str(args["order_id"]))
    assert order is not None
    task = world.task_of(_DB, order.order_id) or ""
    _COUNTS[(task, name)] += 1
    nth = _COUNTS[(task, name)]
    form = tools.scheduled_form(_DB, task, name, nth)
    if form is None:
        return CallToolResult(content=[TextContent(type="text", text=json.dumps(result))], isError=False)
    tools.record_fired(_DB, task, "tool", name, nth, form.name)
    text, is_error = tools.render(form, name, result, order)
    content = [TextContent(type="text", text=text)] if text else []
    return CallToolResult(content=content, isError=is_error)


_READ = ToolAnnotations(readOnlyHint=True, openWorldHint=True)


@server.tool(annotations=_READ, structured_output=False)
def rate_shop(order_id: str, postal_code: str, country: str, weight_kg: float) -> CallToolResult:
    """Quote every carrier service for an order (amount in USD, transit days)."""
    return _call(
        "rate_shop", {"order_id": order_id, "postal_code": postal_code, "country": country, "weight_kg": weight_kg}
    )


@server.tool(annotations=ToolAnnotations(destructiveHint=True, idempotentHint=False), structured_output=False)
def book_shipment(
    order_id: str, carrier: str, service: str, street: str, postal_code: str, duties: float = 0.0
) -> CallToolResult:
    """Buy a label for an order with a carrier service; returns the tracking number."""
    return _call(
        "book_shipment",
        {
            "order_id": order_id,
            "carrier": carrier,
            "service": service,
            "street": street,
            "postal_code": postal_code,
            "duties": duties,
        },
    )


@server.tool(annotations=_READ, structured_output=False)
def track_shipment(order_id: str, tracking_number: str = "") -> CallToolResult:
    """Latest carrier status and scan events of an order's shipment."""
    return _call("track_shipment", {"order_id": order_id, "tracking_number": tracking_number})


@server.tool(annotations=_READ, structured_output=False)
def check_inventory(order_id: str, sku: str, warehouse: str) -> CallToolResult:
    """On-hand and allocatable stock of a SKU in a warehouse."""
    return _call("check_inventory", {"order_id": order_id, "sku": sku, "warehouse": warehouse})


if __name__ == "__main__":
    server.run("stdio")
