"""The incident tools served over MCP (official SDK ``MCPServer``, Streamable HTTP, uvicorn on loopback).

Each tool answers through ``tools.answer`` with the plan the agent's dispatcher registered for the call
(``EpisodeRuntime.pending``), so faults arrive as ``isError`` results, JSON-RPC errors, or, from a gateway in
front of the server, HTTP statuses. The episode is named by the ``x-r2-episode`` header of the session's client.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from typing import Annotated, Any

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from .runtime import REGISTRY, ToolPlan
from .tools import answer
from .world import TOOL_SPECS


def _serve(name: str, args: dict[str, Any], ctx: Context) -> CallToolResult:
    headers = ctx.headers or {}
    rt = REGISTRY.get(headers.get("x-r2-episode", ""))
    if rt is None:
        return CallToolResult(content=[TextContent(type="text", text="unknown session")], is_error=True)
    plan = rt.pending
    rt.pending = None
    args = {k: v for k, v in args.items() if v is not None}
    if plan is None or plan.name != name:
        plan = ToolPlan(name, args, 0, None, None)
    plan.args = args
    try:
        ans = answer(plan, rt.world)
    except TypeError as e:
        return CallToolResult(content=[TextContent(type="text", text=f"Error executing tool {name}: {e}")],
                              is_error=True)
    if ans.rpc is not None:
        code, message, data = ans.rpc
        raise MCPError(code, message, data)
    if ans.exc is not None:
        return CallToolResult(content=[TextContent(type="text", text=f"Error executing tool {name}: {ans.exc}")],
                              is_error=True)
    return CallToolResult(content=[TextContent(type="text", text=ans.text or "")], is_error=ans.is_error)


def _d(tool: str, param: str) -> str:
    return TOOL_SPECS[tool]["params"][param][1]


def build_server() -> MCPServer:
    srv = MCPServer("incident-tools", instructions="Incident-response tools for the SRE assistant.", log_level="ERROR")

    def reg(fn: Any) -> None:
        spec = TOOL_SPECS[fn.__name__]
        srv.add_tool(fn, name=fn.__name__, description=spec["description"],
                     annotations=ToolAnnotations(**spec["annotations"]), structured_output=False)

    async def list_alerts(ctx: Context, severity: Annotated[str, Field(description=_d("list_alerts", "severity"))]
                          = "all") -> CallToolResult:
        return _serve("list_alerts", {"severity": severity}, ctx)

    async def get_service_status(service: Annotated[str, Field(description=_d("get_service_status", "service"))],
                                 ctx: Context) -> CallToolResult:
        return _serve("get_service_status", {"service": service}, ctx)

    async def query_metrics(service: Annotated[str, Field(description=_d("query_metrics", "service"))],
                            metric: Annotated[str, Field(description=_d("query_metrics", "metric"))],
                            window_minutes: Annotated[int, Field(description=_d("query_metrics", "window_minutes"))],
                            ctx: Context) -> CallToolResult:
        return _serve("query_metrics", {"service": service, "metric": metric, "window_minutes": window_minutes}, ctx)

    async def search_logs(service: Annotated[str, Field(description=_d("search_logs", "service"))],
                          query: Annotated[str, Field(description=_d("search_logs", "query"))], ctx: Context,
                          limit: Annotated[int, Field(description=_d("search_logs", "limit"))] = 20) -> CallToolResult:
        return _serve("search_logs", {"service": service, "query": query, "limit": limit}, ctx)

    async def get_runbook(alert_name: Annotated[str, Field(description=_d("get_runbook", "alert_name"))],
                          ctx: Context) -> CallToolResult:
        return _serve("get_runbook", {"alert_name": alert_name}, ctx)

    async def get_oncall(team: Annotated[str, Field(description=_d("get_oncall", "team"))],
                         ctx: Context) -> CallToolResult:
        return _serve("get_oncall", {"team": team}, ctx)

    async def restart_service(service: Annotated[str, Field(description=_d("restart_service", "service"))],
                              region: Annotated[str, Field(description=_d("restart_service", "region"))],
                              ctx: Context) -> CallToolResult:
        return _serve("restart_service", {"service": service, "region": region}, ctx)

    async def scale_service(service: Annotated[str, Field(description=_d("scale_service", "service"))],
                            replicas: Annotated[int, Field(description=_d("scale_service", "replicas"))],
                            ctx: Context) -> CallToolResult:
        return _serve("scale_service", {"service": service, "replicas": replicas}, ctx)

    async def rollback_deploy(service: Annotated[str, Field(description=_d("rollback_deploy", "service"))],
                              to_version: Annotated[str, Field(description=_d("rollback_deploy", "to_version"))],
                              ctx: Context) -> CallToolResult:
        return _serve("rollback_deploy", {"service": service, "to_version": to_version}, ctx)

    async def page_oncall(handle: Annotated[str, Field(description=_d("page_oncall", "handle"))],
                          message: Annotated[str, Field(description=_d("page_oncall", "message"))],
                          ctx: Context) -> CallToolResult:
        return _serve("page_oncall", {"handle": handle, "message": message}, ctx)

    async def create_incident(title: Annotated[str, Field(description=_d("create_incident", "title"))],
                              severity: Annotated[str, Field(description=_d("create_incident", "severity"))],
                              service: Annotated[str, Field(description=_d("create_incident", "service"))],
                              ctx: Context) -> CallToolResult:
        return _serve("create_incident", {"title": title, "severity": severity, "service": service}, ctx)

    for fn in (list_alerts, get_service_status, query_metrics, search_logs, get_runbook, get_oncall,
               restart_service, scale_service, rollback_deploy, page_oncall, create_incident):
        reg(fn)
    return srv


class GatewayFaults:
    """ASGI middleware in front of the MCP endpoint: answers a ``tools/call`` with the gateway status the
    scenario asks for (rate limit, no upstream), the way Envoy or HAProxy in front of the server would."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        hdrs = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
        rt = REGISTRY.get(hdrs.get("x-r2-episode", ""))
        chunks: list[bytes] = []
        more = True
        while more:
            msg = await receive()
            chunks.append(msg.get("body", b""))
            more = msg.get("more_body", False)
        raw = b"".join(chunks)
        plan = rt.pending if rt is not None else None
        if plan is not None and plan.form is not None and plan.form.kind == "mcp_http":
            try:
                is_call = json.loads(raw or b"{}").get("method") == "tools/call"
            except (ValueError, AttributeError):
                is_call = False
            if is_call:
                rt.pending = None  # type: ignore[union-attr]
                p = plan.form.params
                body = p["body"].encode()
                headers = [(b"content-type", p["ctype"].encode()), (b"content-length", str(len(body)).encode())]
                headers += [(k.encode(), v.encode()) for k, v in p.get("headers", {}).items()]
                await send({"type": "http.response.start", "status": p["status"], "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": raw, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class McpHttpServer:
    def __init__(self) -> None:
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        app = GatewayFaults(build_server().streamable_http_app(stateless_http=False, json_response=False))
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="error", lifespan="on",
                                timeout_keep_alive=30)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=lambda: asyncio.run(self._server.serve()), name="r2-mcp-server",
                                        daemon=True)
        self._thread.start()
        for _ in range(400):
            if self._server.started:
                return
            threading.Event().wait(0.025)
        raise RuntimeError("MCP server did not start")

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
