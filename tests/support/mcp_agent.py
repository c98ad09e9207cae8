"""An agent whose tools come over MCP, written as any agent is: the official SDK and nothing of ours.

Run as a process by the MCP tests. How it is traced is chosen from outside (``AGENTCHAOS_TEST_SETUP``):
``configure`` (``agentchaos_otel.configure``), ``instrumentor`` (``AgentChaosInstrumentor().instrument()``
on the process's provider) or ``none`` (zero-code: ``opentelemetry-instrument`` did it). Other MCP
instrumentations are switched on around ours, in the order ``AGENTCHAOS_TEST_OTHERS`` names them
(``openinference``, ``openllmetry``, ``agentchaos``). Prints one JSON line: what the agent was shown.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

SERVER = Path(__file__).resolve().with_name("mcp_server.py")
CALLS = [("get_quote", {"symbol": "NVDA"}), ("place_order", {"symbol": "NVDA", "qty": 1}), ("echo", {"text": "x"}),
         ("get_quote", {"symbol": "AMD"})]


def _setup() -> Any:
    setup = os.environ.get("AGENTCHAOS_TEST_SETUP", "configure")
    plan = os.environ.get("AGENTCHAOS_TEST_PLAN") or None
    others = [o for o in os.environ.get("AGENTCHAOS_TEST_OTHERS", "agentchaos").split(",") if o]
    handle = None
    for name in others:
        if name == "openinference":
            from openinference.instrumentation.mcp import MCPInstrumentor

            MCPInstrumentor().instrument()
        elif name == "openllmetry":
            from opentelemetry.instrumentation.mcp import McpInstrumentor

            McpInstrumentor().instrument()
        elif name == "agentchaos" and setup == "configure":
            import agentchaos_otel

            handle = agentchaos_otel.configure(db=os.environ["AGENTCHAOS_TEST_DB"], plan=plan, seed=3, metrics=False)
        elif name == "agentchaos" and setup == "instrumentor":
            from opentelemetry import trace
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import SimpleSpanProcessor

            from agentchaos_otel.instrumentor import AgentChaosInstrumentor
            from agentchaos_otel.store.exporter import DuckDBSpanExporter

            provider = TracerProvider()
            provider.add_span_processor(SimpleSpanProcessor(DuckDBSpanExporter(os.environ["AGENTCHAOS_TEST_DB"])))
            trace.set_tracer_provider(provider)
            AgentChaosInstrumentor().instrument(tracer_provider=provider, plan=plan, seed=3)
            handle = provider
    return handle


async def _agent() -> list[dict[str, Any]]:
    from mcp import ClientSession, StdioServerParameters
    from opentelemetry import trace

    shown = []
    if os.environ.get("AGENTCHAOS_TEST_TRANSPORT") == "inprocess":  # 2.x: mcp.Client on the server object
        from mcp import Client

        sys.path.insert(0, str(SERVER.parent))
        import mcp_server

        with trace.get_tracer("mcp-test-agent").start_as_current_span("agent run"):
            async with Client(mcp_server.build()) as client:
                await client.list_tools()
                for name, args in CALLS:
                    result = await client.call_tool(name, args)
                    shown.append(result.model_dump(by_alias=True, mode="json", exclude_none=True))
        return shown
    if os.environ.get("AGENTCHAOS_TEST_TRANSPORT", "stdio") == "http":
        from mcp.client.streamable_http import streamable_http_client

        manager: Any = streamable_http_client(os.environ["AGENTCHAOS_TEST_URL"])
    else:
        from mcp.client.stdio import stdio_client

        manager = stdio_client(StdioServerParameters(command=sys.executable, args=[str(SERVER), "stdio"],
                                                     env=dict(os.environ)))
    with trace.get_tracer("mcp-test-agent").start_as_current_span("agent run"):
        async with manager as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                await session.list_tools()
                for name, args in CALLS:
                    result = await session.call_tool(name, args)
                    shown.append(result.model_dump(by_alias=True, mode="json", exclude_none=True))
    return shown


def main() -> None:
    handle = _setup()
    shown = asyncio.run(_agent())
    if handle is not None:
        handle.shutdown()
    else:
        from opentelemetry import trace

        shutdown = getattr(trace.get_tracer_provider(), "shutdown", None)
        if shutdown is not None:
            shutdown()
    print(json.dumps({"shown": shown}))


if __name__ == "__main__":
    main()
