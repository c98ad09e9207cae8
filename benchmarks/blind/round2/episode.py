"""One traced episode: the world, the tools (plain or MCP), the agent loop, the checker."""

from __future__ import annotations

from typing import Any

import httpx2

import agentchaos_otel

from .agents import McpDispatcher, PlainDispatcher, run_anthropic, run_openai
from .runtime import EpisodeRuntime, register, unregister
from .tools import make_plain_tools
from .world import build_world, grade, task_prompt


def make_world(spec: dict[str, Any]) -> Any:
    w = spec["world"]
    return build_world(w["seed"], n_alerts=w["n_alerts"], unhealthy_share=w["unhealthy_share"], sweep=w["sweep"])


async def run_episode(spec: dict[str, Any], model_port: int, mcp_url: str) -> dict[str, Any]:
    world = make_world(spec)
    rt = EpisodeRuntime(spec=spec, world=world)
    register(rt)
    prompt = task_prompt(world, spec["task"])
    agent = run_openai if spec["provider"] == "openai" else run_anthropic
    result: dict[str, Any] = {}
    try:
        async with agentchaos_otel.episode(task_id=spec["task_id"], plan=None, seed=0,
                                           agent_name="blind2-agent") as ep:
            if spec["tools"] == "plain":
                dispatcher: Any = PlainDispatcher(ep.wrap_tools(make_plain_tools(rt)))
                out = await agent(spec, model_port, prompt, dispatcher)
            else:
                from mcp import ClientSession
                from mcp.client.streamable_http import streamable_http_client

                async with httpx2.AsyncClient(headers={"x-r2-episode": spec["task_id"]},
                                              timeout=httpx2.Timeout(10.0, read=30.0)) as hc:
                    async with streamable_http_client(mcp_url, http_client=hc) as streams:
                        read, write = streams[0], streams[1]
                        async with ClientSession(read, write) as session:
                            await session.initialize()
                            listed = await session.list_tools()
                            names = {t.name for t in listed.tools}
                            dispatcher = McpDispatcher(session, rt, names)
                            out = await agent(spec, model_port, prompt, dispatcher)
            ok, why = grade(world, spec["task"], out.final)
            if out.error:
                ok, why = False, out.error
            ep.set_outcome(success=ok, error=out.error)  # the agent's own error, never the checker's verdict
        result = {"success": ok, "why": why, "final": out.final, "events": list(rt.events),
                  "effects": list(world.effects), "transcript": out.transcript}
    finally:
        unregister(spec["task_id"])
    return result
