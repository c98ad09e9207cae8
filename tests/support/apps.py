"""Ordinary agent applications, as the README's zero-code lines assume a user has them.

``AGENT`` (``agent.py``) is the reference agent's loop over the openai SDK, one root span per task
and its tools traced as ``execute_tool`` spans, as an agent framework would; ``MCP_AGENT``
(``mcp_agent.py``) is the same loop with its tools over MCP: the official SDK's stdio client to the
reference tool server (``python -m agentchaos_otel.agents.mcp.server stdio``). Neither calls
``configure()`` or ``episode()``: what traces and breaks them comes from outside (zero-code). They
take their model from the openai SDK's own ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, which tests
point at the simulated model server. ``TASKS`` is replaced by the number of tasks to run; each
task prints ``task_id success llm_calls``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

AGENT = """
import openai
from opentelemetry import trace

from agentchaos_otel.sim.reference_agent import run_reference_agent
from agentchaos_otel.sim.reference_tasks import REFERENCE_TOOLS, reference_tasks

tracer = trace.get_tracer("my-agent")


def traced(name, fn):
    def call(**arguments):
        with tracer.start_as_current_span(f"execute_tool {name}", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}):
            return fn(**arguments)
    return call


tools = {name: traced(name, fn) for name, fn in REFERENCE_TOOLS.items()}
client = openai.OpenAI(max_retries=0)
for task in reference_tasks(TASKS, seed=5, min_subtasks=2, max_subtasks=2):
    with tracer.start_as_current_span(f"task {task.task_id}"):
        run = run_reference_agent(client, task, model="sim-reference", tools=tools)
    print(task.task_id, run.success, run.llm_calls)
"""

MCP_AGENT = """
import asyncio
import sys

import openai
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from opentelemetry import trace

from agentchaos_otel.sim.reference_agent import run_reference_agent_async
from agentchaos_otel.sim.reference_tasks import reference_tasks

tracer = trace.get_tracer("my-mcp-agent")
SERVER = StdioServerParameters(command=sys.executable, args=["-m", "agentchaos_otel.agents.mcp.server", "stdio"])


def mcp_tool(session, name):
    async def call(**arguments):
        result = await session.call_tool(name, arguments)
        return "\\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")
    return call


async def main():
    llm = openai.AsyncOpenAI(max_retries=0)
    async with stdio_client(SERVER) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name: mcp_tool(session, t.name) for t in (await session.list_tools()).tools}
        for task in reference_tasks(TASKS, seed=5, min_subtasks=2, max_subtasks=2):
            with tracer.start_as_current_span(f"task {task.task_id}"):
                run = await run_reference_agent_async(llm, task, model="sim-reference", tools=tools)
            print(task.task_id, run.success, run.llm_calls)


asyncio.run(main())
"""


def source(app: str, tasks: int) -> str:
    """An application's text with its number of tasks filled in."""
    return textwrap.dedent(app).lstrip().replace("TASKS", str(tasks))


def write_apps(directory: Path, tasks: int) -> None:
    """Put ``agent.py`` and ``mcp_agent.py`` in ``directory``."""
    (directory / "agent.py").write_text(source(AGENT, tasks), encoding="utf-8")
    (directory / "mcp_agent.py").write_text(source(MCP_AGENT, tasks), encoding="utf-8")
