"""The reference agent with its tools over MCP as a campaign adapter (entry point ``mcp``).

Same tasks (ids included), same simulated model and the same agent loop as ``--agent reference``;
only where the tools are differs: each episode opens an MCP session to one tool server process
(``server.py``, Streamable HTTP on loopback) and calls the tools with ``ClientSession.call_tool``,
handing the model the result's text as an MCP agent does. Nothing wraps the tools: the episode's
tool condition reaches them through the MCP hooks of ``configure()``, so a plan and seed fault the
same calls as under ``--agent reference``. With ``--guard idempotency`` the guard is switched on
for the episode's session and declared from the tools' own annotations alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from agentchaos_otel.agents.reference import REFERENCE_MAX_STEPS, REFERENCE_MISTAKE_RATE, reference_task_id
from agentchaos_otel.campaign.agents import TOP_LOGPROBS, AgentOptions, AgentSetup, count_tasks
from agentchaos_otel.campaign.runner import EpisodeOutcome, EpisodeSpec
from agentchaos_otel.errors import UsageError


def _text(result: Any) -> str:
    """What an MCP agent hands its model: the result's text content."""
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    return "\n".join(texts)


def mcp_tools(session: Any, names: list[str]) -> dict[str, Callable[..., Any]]:
    """Async callables ``fn(**arguments) -> text`` that call ``names`` over ``session``."""
    def tool(name: str) -> Callable[..., Any]:
        async def call(**arguments: Any) -> str:
            return _text(await session.call_tool(name, arguments))
        call.__name__ = name
        return call
    return {name: tool(name) for name in names}


async def run_episode(url: str, client: Any, task: Any, *, model: str, max_steps: int,
                      request_options: Mapping[str, Any] | None, response_guard: bool,
                      idempotency_guard: bool) -> EpisodeOutcome:
    """One episode: an MCP session to the tool server, the reference agent loop over it."""
    import openai
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from agentchaos_otel import mcp as chaos_mcp
    from agentchaos_otel.sim.reference_agent import run_reference_agent_async
    from agentchaos_otel.sim.reference_tasks import REFERENCE_TOOLS

    llm = openai.AsyncOpenAI(base_url=str(client.base_url), api_key=client.api_key,
                             max_retries=client.max_retries, timeout=client.timeout)
    if response_guard:
        from agentchaos_otel.campaign.guarded import CAMPAIGN_POLICY
        from agentchaos_otel.guards.clients import guard_client

        guard_client(llm, CAMPAIGN_POLICY)
    try:
        async with streamable_http_client(url) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                listed = {t.name for t in (await session.list_tools()).tools}
                if idempotency_guard:
                    chaos_mcp.guard_idempotency(session)
                names = [n for n in REFERENCE_TOOLS if n in listed]  # the reference agent's declaration order
                run = await run_reference_agent_async(llm, task, model=model, tools=mcp_tools(session, names),
                                                      max_steps=max_steps, request_options=request_options)
    finally:
        await llm.close()
    return EpisodeOutcome(bool(run.success), run.error)


def mcp_agent(tasks: str, seed: int = 0, conditions: list[str] | None = None,
              options: AgentOptions | None = None) -> AgentSetup:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise UsageError("--agent mcp needs the mcp SDK: pip install 'agentchaos-otel[mcp]'") from None
    from agentchaos_otel.agents.mcp.server import ServerProcess
    from agentchaos_otel.sim.reference_agent import ReferencePolicy
    from agentchaos_otel.sim.reference_tasks import reference_tasks

    opts = options or AgentOptions()
    n = 200 if tasks == "all" else count_tasks(tasks)
    lo, hi = opts.subtasks
    by_id = {reference_task_id(t.task_id, opts.subtasks): t
             for t in reference_tasks(n, seed, min_subtasks=lo, max_subtasks=hi)}
    request_options = {"logprobs": True, "top_logprobs": TOP_LOGPROBS} if opts.logprobs else None
    max_steps = opts.step_cap or max(REFERENCE_MAX_STEPS, 3 * hi)

    def make(client: Any, model: str) -> Callable[[EpisodeSpec], Any]:
        from agentchaos_otel.campaign.guarded import split_label

        server = ServerProcess()

        def run_one(spec: EpisodeSpec) -> EpisodeOutcome:
            _, guarded = split_label(spec.condition)
            return asyncio.run(run_episode(
                server.url(), client, by_id[spec.task_id], model=model, max_steps=max_steps,
                request_options=request_options, response_guard=guarded and "response" in opts.guards,
                idempotency_guard=guarded and "idempotency" in opts.guards))

        run_one.server = server  # type: ignore[attr-defined]  # lives as long as the campaign's run_one
        return run_one

    policy = ReferencePolicy(mistake_rate=0.0 if opts.perfect else REFERENCE_MISTAKE_RATE)
    return AgentSetup("mcp", list(by_id), policy, make, opens_episode=False)

