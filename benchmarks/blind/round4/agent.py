"""The incident-response agent: a hand-written tool loop on the official ``anthropic`` SDK.

Some turns stream (SSE, accumulated here event by event), others take a plain reply, as the
episode's plan says. The SDK retries 408/429/5xx and lost connections (``max_retries=2``); the
agent itself retries a broken stream once, gives up on any other failed call, abandons the task
when one model call takes longer than its per-call budget, and continues a ``pause_turn``.
Four tools go through an MCP ``ClientSession`` (Streamable HTTP), five are local functions behind
``Episode.wrap_tools``.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anthropic
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

import agentchaos_otel
from benchmarks.blind.round4 import registry
from benchmarks.blind.round4.local_tools import ToolBackendError, local_tools
from benchmarks.blind.round4.server import MODEL
from benchmarks.blind.round4.tools import LOCAL_TOOLS, MCP_TOOLS, anthropic_tools
from benchmarks.blind.round4.world import grade

SYSTEM = ("You are the on-call incident responder for an e-commerce platform. Use the tools to "
          "investigate and remediate; act only on what the tools tell you; finish with a short summary.")
CALL_BUDGET_SECONDS = 1.2
MAX_TURNS = 40


class CallFailed(Exception):
    pass


class StreamBroken(Exception):
    pass


async def _accumulate(stream: Any) -> dict[str, Any]:
    msg: dict[str, Any] | None = None
    content: list[dict[str, Any]] = []
    done = False
    async for ev in stream:
        if ev.type == "message_start":
            msg = ev.message.model_dump()
        elif ev.type == "content_block_start":
            block = ev.content_block.model_dump()
            if block["type"] == "tool_use":
                block["_json"] = ""
            content.append(block)
        elif ev.type == "content_block_delta":
            if ev.delta.type == "text_delta":
                content[ev.index]["text"] += ev.delta.text
            elif ev.delta.type == "input_json_delta":
                content[ev.index]["_json"] += ev.delta.partial_json
        elif ev.type == "content_block_stop":
            block = content[ev.index]
            if block["type"] == "tool_use":
                try:
                    block["input"] = json.loads(block.pop("_json") or "{}")
                except ValueError:
                    block["_invalid"] = True
        elif ev.type == "message_delta" and msg is not None:
            msg["stop_reason"] = ev.delta.stop_reason
        elif ev.type == "message_stop":
            done = True
    if msg is None or not done:
        raise StreamBroken("stream ended before message_stop")
    msg["content"] = content
    return msg


async def call_model(client: anthropic.AsyncAnthropic, task_id: str, messages: list[dict[str, Any]],
                     stream: bool) -> dict[str, Any]:
    kwargs = dict(model=MODEL, max_tokens=2048, system=SYSTEM, messages=messages, tools=anthropic_tools(),
                  metadata={"user_id": task_id})
    for attempt in range(2):
        try:
            if not stream:
                reply = await client.messages.create(**kwargs)
                data = reply.model_dump() if hasattr(reply, "model_dump") else dict(reply)
                if data.get("type") != "message" or not isinstance(data.get("content"), list):
                    raise CallFailed(f"unexpected reply: {str(data)[:200]}")
                return data
            events = await client.messages.create(**kwargs, stream=True)
        except anthropic.APIError as exc:
            raise CallFailed(f"{type(exc).__name__}: {exc}") from None
        try:
            return await _accumulate(events)
        except (StreamBroken, anthropic.APIError, httpx2.HTTPError) as exc:
            if attempt == 1:
                raise CallFailed(f"stream failed twice: {exc}") from None
    raise AssertionError("unreachable")


def _plain(block: dict[str, Any]) -> dict[str, Any]:
    if block["type"] == "text":
        return {"type": "text", "text": block["text"]}
    return {"type": "tool_use", "id": block["id"], "name": block["name"], "input": block.get("input") or {}}


async def _run_tool(script: registry.Script, session: ClientSession, local: dict[str, Any],
                    block: dict[str, Any]) -> tuple[str, bool]:
    name, args = block["name"], block.get("input") or {}
    if block.get("_invalid"):
        return "Error: the tool input is not valid JSON; the call was not made.", True
    if name not in MCP_TOOLS and name not in LOCAL_TOOLS:
        return f"Error: no tool named '{name}'.", True
    script.event(kind="tool", name=name, mcp=name in MCP_TOOLS)
    if name in MCP_TOOLS:
        try:
            res = await session.call_tool(name, args)
        except Exception as exc:          # a JSON-RPC error the SDK raises
            return f"MCP error: {exc}", True
        text = "".join(getattr(c, "text", "") for c in res.content)
        return text, bool(res.is_error)
    try:
        return local[name](**args), False
    except (ToolBackendError, TypeError, ValueError) as exc:
        return str(exc), True


async def run_episode(client: anthropic.AsyncAnthropic, mcp_url: str, task_id: str, prompt: str,
                      seed: int) -> dict[str, Any]:
    script = registry.get(task_id)
    final_text, aborted = "", None
    async with agentchaos_otel.episode(task_id, plan=None, seed=seed, agent_name="ops-responder",
                                      simulated=True) as ep:
        local = ep.wrap_tools(local_tools(task_id))
        async with httpx2.AsyncClient(headers={"x-ops-tenant": task_id}, timeout=30.0) as http, \
                streamable_http_client(mcp_url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                await session.list_tools()
                messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
                for turn in range(MAX_TURNS):
                    started = time.monotonic()
                    try:
                        msg = await call_model(client, task_id, messages, turn in script.stream_turns)
                    except CallFailed as exc:
                        aborted = str(exc)
                        break
                    if time.monotonic() - started > CALL_BUDGET_SECONDS:
                        aborted = "model call exceeded the per-call budget; task abandoned"
                        break
                    content = msg["content"]
                    messages.append({"role": "assistant", "content": [_plain(b) for b in content]})
                    if msg["stop_reason"] == "pause_turn":
                        continue
                    uses = [b for b in content if b["type"] == "tool_use"]
                    if not uses:
                        final_text = " ".join(b.get("text", "") for b in content if b["type"] == "text")
                        break
                    results = []
                    for b in uses:
                        text, is_error = await _run_tool(script, session, local, b)
                        results.append({"type": "tool_result", "tool_use_id": b["id"], "content": text,
                                        "is_error": is_error})
                    messages.append({"role": "user", "content": results})
                else:
                    aborted = "turn limit"
        success = aborted is None and grade(script.world, final_text)
        ep.set_outcome(success=success, error=None if success else (aborted or "task not done"))
    return {"success": success, "aborted": aborted, "final": final_text}
