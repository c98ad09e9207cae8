"""Four of the tools served over MCP (Streamable HTTP on loopback) with the official ``mcp`` SDK.

Errors come back as ``isError`` results with text content, as MCP servers return tool failures.
The episode is named by the client's ``x-ops-tenant`` header (a tenant header, as a multi-tenant
ops API would take).
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations

from benchmarks.blind.round4.toolside import serve

app_server = MCPServer("opsdesk")
READ = ToolAnnotations(readOnlyHint=True, idempotentHint=True)
WRITE = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True)


def _answer(ctx: Context, name: str, args: dict[str, object]) -> CallToolResult:
    tenant = (ctx.headers or {}).get("x-ops-tenant", "")
    text, is_error, _raised = serve(tenant, name, args)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)


@app_server.tool(annotations=READ, structured_output=False)
async def get_incident(incident_id: str, ctx: Context) -> CallToolResult:
    """Fetch an incident record."""
    return _answer(ctx, "get_incident", {"incident_id": incident_id})


@app_server.tool(annotations=WRITE, structured_output=False)
async def update_incident(incident_id: str, status: str, note: str, ctx: Context) -> CallToolResult:
    """Set an incident's status and append a timeline note."""
    return _answer(ctx, "update_incident", {"incident_id": incident_id, "status": status, "note": note})


@app_server.tool(annotations=READ, structured_output=False)
async def query_metrics(service: str, metric: str, ctx: Context) -> CallToolResult:
    """Query a service metric over the last 15 minutes (8 points)."""
    return _answer(ctx, "query_metrics", {"service": service, "metric": metric})


@app_server.tool(annotations=READ, structured_output=False)
async def search_logs(service: str, query: str, ctx: Context) -> CallToolResult:
    """Search a service's logs; returns the matching hits."""
    return _answer(ctx, "search_logs", {"service": service, "query": query})


class McpHttpServer:
    """uvicorn serving the Streamable HTTP app on a loopback port, in a background thread."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        config = uvicorn.Config(app_server.streamable_http_app(), log_level="error", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve(sockets=[self.sock])),
                                       name="mcp-opsdesk", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/mcp"

    def __enter__(self) -> McpHttpServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
