"""The freight agent: a hand-written loop on ``anthropic.AsyncAnthropic`` under asyncio.

Per turn it calls the Messages API (``messages.stream`` or ``messages.create``, chosen from the
seed), runs every ``tool_use`` block of the reply concurrently (``asyncio.gather``; MCP tools over
the shared stdio session, the rest as wrapped local functions), sends the results back in the
reply's order (``is_error`` when a tool failed) and stops on a final answer, a stop reason it
cannot continue from, an API error its SDK did not absorb, or a reply that came too late.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2
from mcp import ClientSession

import agentchaos_otel
from agentchaos_otel import mcp as chaos_mcp
from benchmarks.blind.round7 import llm_server, world
from benchmarks.blind.round7.local_tools import LocalTools
from benchmarks.blind.round7.model import TOOL_SCHEMAS, stream_turn

MCP_TOOLS = ("rate_shop", "book_shipment", "track_shipment", "check_inventory")
MAX_TURNS = 60
SYSTEM = (
    "You are the freight operations agent of a 3PL warehouse. For each order in the ticket: "
    "validate the address and stock, compute duties for international orders, rate-shop and book "
    "the cheapest service that meets the delivery promise, release the pick list, book a dock door "
    "and notify the customer with the tracking number. For tracking tickets, check the shipment "
    "and tell the customer its current status."
)


@dataclass
class EpisodeRun:
    """What the build tells the agent about one episode (the ticket and its client settings)."""

    task_id: str
    seed: int
    provider: str
    max_retries: int
    agent_retries: int
    ticket: str
    deadline: float | None = None  # seconds: a reply slower than this misses the carrier cut-off


def _block(b: Any) -> dict[str, Any]:
    if getattr(b, "type", "") == "tool_use":
        return {"type": "tool_use", "id": b.id, "name": b.name, "input": b.input}
    return {"type": "text", "text": getattr(b, "text", "")}


async def _ask(client: anthropic.AsyncAnthropic, model_name: str, messages: list[dict[str, Any]], stream: bool) -> Any:
    kw: dict[str, Any] = {
        "model": model_name,
        "max_tokens": 1024,
        "system": SYSTEM,
        "messages": messages,
        "tools": TOOL_SCHEMAS,
    }
    if stream:
        async with client.messages.stream(**kw) as s:
            async for _ in s:
                pass
            return await s.get_final_message()
    return await client.messages.create(**kw)


async def _run_tool(b: Any, session: ClientSession, local: dict[str, Any]) -> tuple[str, bool]:
    try:
        if b.name in MCP_TOOLS:
            with chaos_mcp.tool_call_id(b.id):
                res = await session.call_tool(b.name, dict(b.input))
            text = "".join(getattr(c, "text", "") for c in getattr(res, "content", []) or [])
            return text, bool(getattr(res, "isError", False))
        if b.name not in local:
            return f"Error: no tool named {b.name!r} is available.", True
        out = local[b.name](**dict(b.input))
        if asyncio.iscoroutine(out):
            out = await out
        return (out if isinstance(out, str) else json.dumps(out)), False
    except Exception as exc:  # a tool failure is reported to the model, as agents do
        return f"{type(exc).__name__}: {exc}", True


async def run_episode(
    run: EpisodeRun, port: int, session: ClientSession, tools: LocalTools, orders: list[world.Order], track_only: bool
) -> tuple[bool, str]:
    """Run one task inside an ``episode`` and return (success graded from the world, how it ended)."""
    prov = llm_server.PROVIDERS[run.provider]
    ended = "turn limit"
    async with agentchaos_otel.episode(task_id=run.task_id, seed=run.seed) as ep:
        local = ep.wrap_tools(tools.as_dict())
        client = anthropic.AsyncAnthropic(
            api_key="sk-loopback-" + run.provider,
            base_url=f"http://127.0.0.1:{port}{prov['base']}",
            max_retries=run.max_retries,
            timeout=llm_server.CLIENT_TIMEOUT,
            default_headers={"x-episode": run.task_id},
        )
        messages: list[dict[str, Any]] = [{"role": "user", "content": run.ticket}]
        retries_left = run.agent_retries
        try:
            accepted = 0  # replies taken; a retry asks again the same way (same request)
            for _ in range(MAX_TURNS):
                stream = stream_turn(run.task_id, accepted)
                t0 = time.monotonic()
                try:
                    msg = await _ask(client, prov["model"], messages, stream)
                except anthropic.APIStatusError as exc:
                    if exc.status_code == 200 and retries_left > 0:  # an error event inside a stream
                        retries_left -= 1
                        continue
                    ended = f"API error {exc.status_code}"
                    break
                except anthropic.APIConnectionError as exc:  # the SDK's retries did not absorb it
                    ended = f"connection: {type(exc).__name__}"
                    break
                except AssertionError:  # a stream that never started a message
                    if retries_left > 0:
                        retries_left -= 1
                        continue
                    ended = "stream without a message"
                    break
                except httpx2.HTTPError as exc:  # a stream torn mid-way
                    if retries_left > 0:
                        retries_left -= 1
                        continue
                    ended = f"stream broken: {type(exc).__name__}"
                    break
                if run.deadline is not None and time.monotonic() - t0 > run.deadline:
                    ended = "reply came after the carrier cut-off"
                    break
                content = list(getattr(msg, "content", None) or [])
                stop = getattr(msg, "stop_reason", None)
                if stop is None:
                    if retries_left > 0:
                        retries_left -= 1
                        continue
                    ended = "incomplete reply"
                    break
                if stop in ("max_tokens", "refusal"):
                    ended = f"stop_reason {stop}"
                    break
                messages.append({"role": "assistant", "content": [_block(b) for b in content]})
                accepted += 1
                if stop == "pause_turn":
                    continue
                uses = [b for b in content if getattr(b, "type", "") == "tool_use"]
                if not uses:
                    ended = "final answer"
                    break
                results = await asyncio.gather(*(_run_tool(b, session, local) for b in uses))
                messages.append(
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": b.id,
                                "content": text,
                                **({"is_error": True} if err else {}),
                            }
                            for b, (text, err) in zip(uses, results, strict=True)
                        ],
                    }
                )
        finally:
            await client.close()
        success = world.grade(tools.db, orders, track_only)
        ep.set_outcome(success=success, error=None if success else ended)
    return success, ended
