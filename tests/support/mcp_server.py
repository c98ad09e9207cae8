"""An MCP server for the tests, on the official SDK of either major (1.x FastMCP, 2.x MCPServer).

Run as a process: ``python tests/support/mcp_server.py stdio`` or ``... http PORT [json]``; or use
``build()`` in-process. It imports nothing of this project: what the tests see of it is what any
agent would see of a real server. ``place_order`` appends a line to the file named by
``MCP_TEST_LEDGER``, so a test can count how often it really ran.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import sys
from typing import Any

from pydantic import BaseModel

try:  # mcp 2.x
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as Server
    from mcp.shared.exceptions import MCPError

    MAJOR = 2

    def rpc_error(code: int, message: str) -> Exception:
        return MCPError(code=code, message=message)
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import Context  # type: ignore[no-redef]
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef]
    from mcp.shared.exceptions import McpError

    MAJOR = 1

    def rpc_error(code: int, message: str) -> Exception:
        return McpError(ErrorData(code=code, message=message))

from mcp.types import ErrorData, ToolAnnotations


class Quote(BaseModel):
    symbol: str
    price: float
    currency: str
    as_of: str
    history: list[float]
    order_id: int


def build() -> Any:
    srv = Server("agentchaos-test-server")

    @srv.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def get_quote(symbol: str) -> Quote:
        """A price quote (structured output)."""
        return Quote(symbol=symbol, price=123.5, currency="USD", as_of=dt.date(2026, 3, 1).isoformat(),
                     history=[120.0, 121.5, 119.25, 123.5], order_id=4711)

    @srv.tool(annotations=ToolAnnotations(destructiveHint=True, idempotentHint=False))
    def place_order(symbol: str, qty: int) -> dict[str, Any]:
        """Place an order: every call is a new order (not idempotent)."""
        ledger = os.environ.get("MCP_TEST_LEDGER")
        if ledger:
            with open(ledger, "a", encoding="utf-8") as f:
                f.write(f"{symbol} {qty}\n")
        return {"order_id": 1001, "symbol": symbol, "qty": qty, "status": "filled"}

    @srv.tool(annotations=ToolAnnotations(destructiveHint=False, idempotentHint=True))
    def set_limit(symbol: str, limit: float) -> str:
        """Set a price limit (idempotent: the same call twice leaves the same limit)."""
        return f"limit for {symbol} set to {limit}"

    @srv.tool()
    def echo(text: str) -> str:
        """Plain text back (the SDK wraps it as {"result": text})."""
        return text

    @srv.tool()
    def numbers(n: int) -> list[int]:
        """A list (one text block per item)."""
        return list(range(1, n + 1))

    @srv.tool()
    def fail_rpc(code: int) -> str:
        """Raise a JSON-RPC error inside the tool."""
        raise rpc_error(code, f"server raised {code}")

    @srv.tool()
    def fail_plain() -> str:
        """Raise an ordinary exception inside the tool (an isError result)."""
        raise ValueError("plain failure in the tool")

    @srv.tool()
    def trace_context(ctx: Context) -> str:
        """The W3C traceparent the request carried in params._meta ('' if none)."""
        meta = ctx.request_context.meta
        data = meta if isinstance(meta, dict) else (meta.model_dump() if meta is not None else {})
        return str(data.get("traceparent") or "")

    @srv.tool()
    async def slow(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    return srv


def main(argv: list[str]) -> None:
    srv = build()
    if argv[0] == "stdio":
        srv.run("stdio")
        return
    port, json_response = int(argv[1]), argv[2:] == ["json"]
    if MAJOR == 1:
        srv.settings.host, srv.settings.port, srv.settings.log_level = "127.0.0.1", port, "WARNING"
        srv.settings.json_response = json_response
        srv.run("streamable-http")
    else:
        srv.run("streamable-http", host="127.0.0.1", port=port, json_response=json_response)


if __name__ == "__main__":
    main(sys.argv[1:])
