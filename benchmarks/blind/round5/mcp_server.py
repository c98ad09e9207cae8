"""The ERP's MCP server (stdio): invoices, payments and the vendor master over the SQLite ledger.

``python -m benchmarks.blind.round5.mcp_server LEDGER`` is started by the agent as a subprocess.
Failure forms armed for a call (table ``chaos``: tool, per-tool call number, form) are applied
here, as the ERP or something in front of it would answer: an ``isError`` result with the error's
text, or a well-formed result with the data changed. Tool failures of the real ERP (unknown id,
missing argument) are ``isError`` results too.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

from benchmarks.blind.round5 import tools
from benchmarks.blind.round5.world import armed, next_ordinal

ANNOTATIONS = {
    "search_invoices": types.ToolAnnotations(read_only_hint=True),
    "get_invoice": types.ToolAnnotations(read_only_hint=True),
    "get_vendor": types.ToolAnnotations(read_only_hint=True),
    "post_payment": types.ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
}


def _schema(name: str) -> dict[str, Any]:
    props = {k: {"type": t} for k, t in tools.PARAMS[name].items()}
    return {"type": "object", "properties": props, "required": tools.REQUIRED[name]}


def _text(text: str, error: bool) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


def handle(ledger: Path, name: str, args: dict[str, Any]) -> types.CallToolResult:
    """One tool call: count it, run it (unless the armed form failed it first), and answer."""
    db = sqlite3.connect(ledger, timeout=30, isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")
        ordinal = next_ordinal(db, name)
        form = armed(db, name, ordinal)
        db.execute("COMMIT")
        if form is not None and form["kind"] == "text" and not form["ran"]:
            return _text(tools.fill(form["text"], name, args), True)
        try:
            value = tools.run(db, name, args)
        except tools.ToolError as exc:
            return _text(str(exc), True)
        if form is None:
            return _text(json.dumps(value), False)
        if form["kind"] == "text":
            return _text(tools.fill(form["text"], name, args), True)
        return _text(tools.transform(form, name, value, db), False)
    finally:
        db.close()


def build(ledger: Path) -> Server:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=n, description=tools.DESCRIPTIONS[n], input_schema=_schema(n), annotations=ANNOTATIONS[n]
                )
                for n in tools.MCP_TOOLS
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in tools.MCP_TOOLS:
            return _text(f"Unknown tool: {params.name}", True)
        return handle(ledger, params.name, dict(params.arguments or {}))

    return Server("erp-ap", on_list_tools=list_tools, on_call_tool=call_tool)


async def _main(ledger: Path) -> None:
    server = build(ledger)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_main, Path(sys.argv[1]))
