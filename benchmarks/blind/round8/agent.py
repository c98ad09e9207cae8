"""The agent loop, hand-written on the sync ``openai`` client (Chat Completions), as a desk would run it.

Mostly streamed (``stream=True`` with usage), tool calls assembled from ``delta.tool_calls``
fragments by index; several tool calls in one reply run one after another, in order; MCP tools are
called through the ``mcp`` client session, the others through ``Episode.wrap_tools``. The SDK's own
retries and per-call timeout are the user's settings. A reply that stopped for any reason other
than ``stop``/``tool_calls``, a stream that ended without a finish reason, an exception, or the
ticket's time budget running out ends the run as a failure.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import httpx2
import openai
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

import agentchaos_otel
from agentchaos_otel import mcp as chaos_mcp

from .providers import PROVIDERS
from .runtime import Runtime
from .tools import LOCAL_TOOLS, MCP_TOOLS, OPENAI_TOOLS, local_tools
from .world import grade

SYSTEM = ("You are the support desk's agent. Use the tools to do exactly what the ticket asks; call tools "
          "in parallel when they do not depend on each other; answer briefly when done.")
MAX_TURNS = 45


@dataclass
class Outcome:
    success: bool
    reason: str
    turns: int


def _llm(client: openai.OpenAI, model: str, messages: list[dict[str, Any]], stream: bool
         ) -> tuple[str | None, list[dict[str, Any]], str | None]:
    """One chat request: content, tool calls and finish reason (None: the stream never finished)."""
    if not stream:
        resp = client.chat.completions.create(model=model, messages=messages, tools=OPENAI_TOOLS)  # type: ignore[arg-type]
        choice = resp.choices[0]
        calls = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                 for c in (choice.message.tool_calls or [])]
        return choice.message.content, calls, choice.finish_reason
    content: list[str] = []
    calls_by_index: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    with client.chat.completions.create(model=model, messages=messages, tools=OPENAI_TOOLS,  # type: ignore[arg-type]
                                        stream=True, stream_options={"include_usage": True}) as events:
        for event in events:
            for choice in event.choices or []:
                delta = choice.delta
                if delta is not None and delta.content:
                    content.append(delta.content)
                for frag in (delta.tool_calls or []) if delta is not None else []:
                    slot = calls_by_index.setdefault(frag.index, {"id": None, "name": "", "arguments": ""})
                    if frag.id:
                        slot["id"] = frag.id
                    if frag.function is not None:
                        slot["name"] += frag.function.name or ""
                        slot["arguments"] += frag.function.arguments or ""
                if choice.finish_reason:
                    finish = choice.finish_reason
    calls = [calls_by_index[i] for i in sorted(calls_by_index)]
    return ("".join(content) or None), calls, finish


async def run_episode(rt: Runtime, llm_port: int, mcp_url: str, seed: int) -> Outcome:
    """Run one ticket inside ``agentchaos_otel.episode`` and grade the world it leaves."""
    prov = PROVIDERS[rt.provider]
    with agentchaos_otel.episode(task_id=rt.task_id, seed=seed) as ep:
        tools = ep.wrap_tools(local_tools(rt.task_id))
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{llm_port}{prov.base}", api_key="sk-desk-local-key",
                               max_retries=rt.max_retries, timeout=rt.timeout,
                               default_headers={"x-desk-run": rt.task_id},
                               default_query={"api-version": prov.query} if prov.query else None)
        async with httpx2.AsyncClient(headers={"x-desk-run": rt.task_id}, timeout=30) as http:
            async with streamable_http_client(mcp_url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    outcome = await _loop(rt, client, prov.model, session, tools)
        client.close()
        ep.set_outcome(success=outcome.success, error=None if outcome.success else outcome.reason[:200])
    return outcome


async def _loop(rt: Runtime, client: openai.OpenAI, model: str, session: ClientSession,
                tools: dict[str, Any]) -> Outcome:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM},
                                      {"role": "user", "content": rt.task.prompt}]
    start = time.monotonic()
    for turn in range(MAX_TURNS):
        try:
            content, calls, finish = _llm(client, model, messages, rt.stream_for(turn))
        except Exception as exc:  # noqa: BLE001 - any failure of the model call ends the run, as in the desk
            return Outcome(False, f"model call failed: {type(exc).__name__}", turn)
        if time.monotonic() - start > rt.deadline:
            return Outcome(False, "ticket time budget exceeded; run abandoned", turn)
        if finish is None:
            return Outcome(False, "stream ended without a finish reason", turn)
        if finish not in ("stop", "tool_calls"):
            return Outcome(False, f"model stopped: {finish}", turn)
        if not calls:
            ok, why = grade(rt.world, rt.task)
            return Outcome(ok, why or "done", turn)
        messages.append({"role": "assistant", "content": content, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in calls]})
        for call in calls:
            messages.append({"role": "tool", "tool_call_id": call["id"],
                             "content": await _tool(rt, session, tools, call)})
    return Outcome(False, "too many turns", MAX_TURNS)


async def _tool(rt: Runtime, session: ClientSession, tools: dict[str, Any], call: dict[str, Any]) -> str:
    name = call["name"]
    try:
        args = json.loads(call["arguments"] or "{}")
        if not isinstance(args, dict):
            raise ValueError("arguments are not an object")
    except ValueError as exc:
        return f"Error: could not parse the arguments of {name}: {exc}"
    if name not in MCP_TOOLS and name not in LOCAL_TOOLS:
        return f"Error: no tool named {name}"
    rt.current_step = rt.next_step("tool", name)
    if name in MCP_TOOLS:
        with chaos_mcp.tool_call_id(call["id"]):
            result = await session.call_tool(name, args)
        return "\n".join(getattr(c, "text", "") for c in result.content)
    try:
        return str(tools[name](**args))
    except Exception as exc:  # noqa: BLE001 - a tool's exception is shown to the model, as desks do
        return f"Error: {type(exc).__name__}: {exc}"
