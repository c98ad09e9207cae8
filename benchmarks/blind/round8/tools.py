"""The desk's tools: seven local functions (wrapped with ``Episode.wrap_tools``) and five served over
MCP (Streamable HTTP, official ``mcp`` SDK), with the tool-side faults applied where a real API
would answer them: in the function for local tools, in the MCP server for MCP tools.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations

from .runtime import REGISTRY, Runtime, tool_view
from .world import ToolFailure

MCP_TOOLS = ("get_ticket", "search_kb", "page_oncall", "send_sms", "schedule_csat")
LOCAL_TOOLS = ("get_customer", "lookup_order", "get_subscription", "issue_refund", "apply_credit", "send_email",
               "update_ticket")
STRUCTURED = ("get_ticket", "search_kb")


def run_tool(rt: Runtime, tool: str, args: dict[str, Any], step: int) -> tuple[str, bool]:
    """Run one call against the episode's world; the text the agent sees and whether it is an error."""
    spec = rt.tool_fault(tool, step)
    real: str | None = None
    failed = False
    if spec is None or spec.form.mech != "text" or spec.applied:
        try:
            real = rt.world.call(tool, args)
        except ToolFailure as exc:
            real, failed = json.dumps({"error": str(exc)}), True
    if spec is None:
        return str(real), failed
    if failed and spec.form.mech != "text":
        return str(real), True
    return tool_view(rt, spec, tool, args, str(real), step)


def local_tools(task_id: str) -> dict[str, Callable[..., str]]:
    """Plain sync functions, one per local tool, that return the API's text as the agent sees it."""

    def make(name: str) -> Callable[..., str]:
        def tool(**kwargs: Any) -> str:
            rt = REGISTRY[task_id]
            text, _ = run_tool(rt, name, kwargs, rt.current_step)
            return text
        tool.__name__ = name
        tool.__doc__ = f"The desk's {name.replace('_', ' ')} API."
        return tool

    return {name: make(name) for name in LOCAL_TOOLS}


# ---- the MCP server -------------------------------------------------------------------------------
server = MCPServer("support-desk", instructions="Ticketing, knowledge base, paging, SMS and CSAT tools.")


def _result(ctx: Context, name: str, args: dict[str, Any]) -> CallToolResult:
    rt = REGISTRY[(ctx.headers or {}).get("x-desk-run", "")]
    text, is_error = run_tool(rt, name, args, rt.current_step)
    structured = None
    if not is_error and name in STRUCTURED:
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        structured = value if isinstance(value, dict) else None
    content = [TextContent(type="text", text=text)] if text else []
    return CallToolResult(content=content, structured_content=structured, is_error=is_error)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, idempotentHint=True))
def get_ticket(ticket_id: str, ctx: Context) -> CallToolResult:
    """Read a support ticket: requester, subject and the fields its kind carries."""
    return _result(ctx, "get_ticket", {"ticket_id": ticket_id})


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, idempotentHint=True))
def search_kb(query: str, ctx: Context) -> CallToolResult:
    """Search the knowledge base; hits carry article_id, topic, title, score."""
    return _result(ctx, "search_kb", {"query": query})


@server.tool(annotations=ToolAnnotations(destructiveHint=True, idempotentHint=False))
def page_oncall(service: str, severity: str, summary: str, ctx: Context) -> CallToolResult:
    """Open an incident and page the service's on-call engineer."""
    return _result(ctx, "page_oncall", {"service": service, "severity": severity, "summary": summary})


@server.tool(annotations=ToolAnnotations(destructiveHint=True, idempotentHint=False, openWorldHint=True))
def send_sms(phone: str, body: str, ctx: Context) -> CallToolResult:
    """Text a customer."""
    return _result(ctx, "send_sms", {"phone": phone, "body": body})


@server.tool(annotations=ToolAnnotations(destructiveHint=False, idempotentHint=False))
def schedule_csat(ticket_id: str, channel: str, ctx: Context) -> CallToolResult:
    """Schedule a satisfaction survey for a solved ticket (channel: email or sms)."""
    return _result(ctx, "schedule_csat", {"ticket_id": ticket_id, "channel": channel})


class McpDesk:
    """The MCP server on a loopback port (uvicorn in a daemon thread) for the whole build."""

    def __init__(self, port: int) -> None:
        app = server.streamable_http_app()
        self.port = port
        self.uv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error",
                                                lifespan="on"))
        self.thread = threading.Thread(target=self.uv.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def __enter__(self) -> McpDesk:
        self.thread.start()
        while not self.uv.started:
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.uv.should_exit = True
        self.thread.join(timeout=5)


def _fn(name: str, desc: str, props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": desc, "parameters": {
        "type": "object", "properties": props, "required": list(props)}}}


S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741 - a JSON schema, read as one
OPENAI_TOOLS = [
    _fn("get_ticket", "Read a support ticket.", {"ticket_id": S}),
    _fn("search_kb", "Search the knowledge base.", {"query": S}),
    _fn("page_oncall", "Page on-call for a service (severity SEV1..SEV4).",
        {"service": S, "severity": S, "summary": S}),
    _fn("send_sms", "Text a customer (E.164 phone).", {"phone": S, "body": S}),
    _fn("schedule_csat", "Schedule a CSAT survey.", {"ticket_id": S, "channel": S}),
    _fn("get_customer", "Look up a customer account and entitlements by email.", {"email": S}),
    _fn("lookup_order", "Look up an order.", {"order_id": S}),
    _fn("get_subscription", "Read a customer's subscription.", {"customer_id": S}),
    _fn("issue_refund", "Refund an order (not idempotent).", {"order_id": S, "amount_cents": I, "reason": S}),
    _fn("apply_credit", "Apply an account credit (not idempotent).",
        {"customer_id": S, "amount_cents": I, "reason": S}),
    _fn("send_email", "Email a customer.", {"to": S, "subject": S, "body": S}),
    _fn("update_ticket", "Update a ticket's status (open, pending, solved) and add a note.",
        {"ticket_id": S, "status": S, "note": S}),
]
