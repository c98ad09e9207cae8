"""Two agent loops of our own: one on the ``openai`` SDK (Chat Completions), one on the ``anthropic`` SDK
(Messages). Both call tools through a dispatcher that is either the episode's plain tools wrapped by
``ep.wrap_tools`` or an MCP ``ClientSession``; both grade nothing themselves (the checker does).

Agent policy per episode (from the scenario): SDK ``max_retries``, its own retries after an API exception,
a client timeout, an optional wall-clock budget (an incident SLA), and whether it aborts on a response it
cannot trust (a length stop on a tool call, arguments that are not JSON) or tells the model and goes on.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import anthropic
import openai

from .runtime import EpisodeRuntime
from .world import SYSTEM_PROMPT, TOOL_SPECS, json_schema

MAX_TURNS = 45


class PlainDispatcher:
    def __init__(self, tools: dict[str, Any]) -> None:
        self.tools = tools
        self.names = set(tools)

    async def call(self, name: str, args: dict[str, Any], call_id: str) -> tuple[str, bool]:
        try:
            out = self.tools[name](**args)
            if asyncio.iscoroutine(out):
                out = await out
        except Exception as e:  # what LangChain's ToolNode hands the model
            return f"Error: {e!r}\n Please fix your mistakes.", True
        return (out if isinstance(out, str) else json.dumps(out)), False


class McpDispatcher:
    def __init__(self, session: Any, rt: EpisodeRuntime, names: set[str]) -> None:
        self.session = session
        self.rt = rt
        self.names = names

    async def call(self, name: str, args: dict[str, Any], call_id: str) -> tuple[str, bool]:
        from mcp.shared.exceptions import MCPError

        from agentchaos_otel import mcp as chaos_mcp

        plan = self.rt.begin_tool(name, args, "mcp")
        self.rt.pending = plan
        try:
            with chaos_mcp.tool_call_id(call_id):
                res = await self.session.call_tool(name, args)
        except MCPError as e:
            return f"Error: MCP error {e.code}: {e.message}", True
        except Exception as e:
            return f"Error: {type(e).__name__}: {e}", True
        finally:
            self.rt.pending = None
        text = "\n".join(getattr(c, "text", "") for c in res.content if getattr(c, "type", "") == "text")
        return text, bool(getattr(res, "is_error", False) or getattr(res, "isError", False))


def _openai_tools(names: list[str]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, "description": TOOL_SPECS[n]["description"],
                                              "parameters": json_schema(n)}} for n in names]


def _anthropic_tools(names: list[str]) -> list[dict[str, Any]]:
    return [{"name": n, "description": TOOL_SPECS[n]["description"], "input_schema": json_schema(n)} for n in names]


class Outcome:
    def __init__(self) -> None:
        self.final: str | None = None
        self.error: str | None = None
        self.transcript: list[str] = []  # short notes of what the agent saw (for debugging, never labelled)

    def note(self, who: str, text: Any) -> None:
        self.transcript.append(f"{who}: {str(text)[:300]}")


async def _oa_once(client: openai.AsyncOpenAI, spec: dict[str, Any], messages: list[dict[str, Any]],
                   tools: list[dict[str, Any]]) -> tuple[str | None, list[dict[str, str]], str | None]:
    kw = {"model": spec["model"], "messages": messages, "tools": tools, "temperature": 0}
    if not spec["stream"]:
        resp = await client.chat.completions.create(**kw)
        choices = getattr(resp, "choices", None)
        if not choices:
            raise RuntimeError("the completion has no choices")
        msg = choices[0].message
        calls = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                 for c in (msg.tool_calls or [])]
        return msg.content, calls, choices[0].finish_reason
    stream = await client.chat.completions.create(**kw, stream=True)
    text, finish = "", None
    acc: dict[int, dict[str, str]] = {}
    async for chunk in stream:
        for ch in chunk.choices or []:
            d = ch.delta
            if d is not None and d.content:
                text += d.content
            for tc in (d.tool_calls or []) if d is not None else []:
                slot = acc.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                if tc.id:
                    slot["id"] = tc.id
                if tc.function is not None:
                    if tc.function.name:
                        slot["name"] = tc.function.name
                    if tc.function.arguments:
                        slot["arguments"] += tc.function.arguments
            if ch.finish_reason:
                finish = ch.finish_reason
    return text, [acc[i] for i in sorted(acc)], finish


async def run_openai(spec: dict[str, Any], port: int, prompt: str, dispatcher: Any) -> Outcome:
    out = Outcome()
    client = openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-r2-local-not-a-secret",
                                max_retries=spec["sdk_retries"], timeout=spec["timeout"],
                                default_headers={"x-r2-episode": spec["task_id"]})
    tools = _openai_tools(sorted(dispatcher.names))
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}]
    agent_retries = spec["agent_retries"]
    t0 = time.monotonic()
    try:
        for _ in range(MAX_TURNS):
            try:
                text, calls, finish = await _oa_once(client, spec, messages, tools)
            except Exception as e:
                if agent_retries > 0:
                    agent_retries -= 1
                    await asyncio.sleep(0.05)
                    continue
                out.error = f"model call failed: {type(e).__name__}: {str(e)[:160]}"
                return out
            out.note("model", f"{finish} {text!r} {calls}")
            if spec.get("deadline") and time.monotonic() - t0 > spec["deadline"]:
                out.error = "incident SLA budget exceeded while waiting for the model"
                return out
            if not calls:
                out.final = text or ""
                return out
            if finish == "length" and spec.get("strict", True):
                out.error = "the model's tool call was cut by a length stop"
                return out
            messages.append({"role": "assistant", "content": text or None, "tool_calls": [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in calls]})
            for c in calls:
                try:
                    args = json.loads(c["arguments"] or "{}")
                    if not isinstance(args, dict):
                        raise ValueError("arguments are not an object")
                except ValueError:
                    if spec.get("strict", True):
                        out.error = "tool-call arguments are not valid JSON"
                        return out
                    messages.append({"role": "tool", "tool_call_id": c["id"],
                                     "content": "Error: the tool arguments are not valid JSON."})
                    continue
                if c["name"] not in dispatcher.names:
                    messages.append({"role": "tool", "tool_call_id": c["id"],
                                     "content": f"Error: unknown tool {c['name']!r}."})
                    continue
                result, _err = await dispatcher.call(c["name"], args, c["id"])
                out.note("tool", result)
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": result})
        out.error = "too many turns"
        return out
    finally:
        await client.close()


async def _an_once(client: anthropic.AsyncAnthropic, spec: dict[str, Any], messages: list[dict[str, Any]],
                   tools: list[dict[str, Any]]) -> Any:
    kw = {"model": spec["model"], "max_tokens": 1024, "system": SYSTEM_PROMPT, "messages": messages, "tools": tools}
    if not spec["stream"]:
        return await client.messages.create(**kw)
    async with client.messages.stream(**kw) as s:
        return await s.get_final_message()


async def run_anthropic(spec: dict[str, Any], port: int, prompt: str, dispatcher: Any) -> Outcome:
    out = Outcome()
    client = anthropic.AsyncAnthropic(base_url=f"http://127.0.0.1:{port}", api_key="sk-ant-r2-local-not-a-secret",
                                      max_retries=spec["sdk_retries"], timeout=spec["timeout"],
                                      default_headers={"x-r2-episode": spec["task_id"]})
    tools = _anthropic_tools(sorted(dispatcher.names))
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    agent_retries = spec["agent_retries"]
    t0 = time.monotonic()
    try:
        for _ in range(MAX_TURNS):
            try:
                msg = await _an_once(client, spec, messages, tools)
            except Exception as e:
                if agent_retries > 0:
                    agent_retries -= 1
                    await asyncio.sleep(0.05)
                    continue
                out.error = f"model call failed: {type(e).__name__}: {str(e)[:160]}"
                return out
            out.note("model", f"{msg.stop_reason} {[b.model_dump(exclude_none=True) for b in (msg.content or [])]}")
            if spec.get("deadline") and time.monotonic() - t0 > spec["deadline"]:
                out.error = "incident SLA budget exceeded while waiting for the model"
                return out
            blocks = list(msg.content or [])
            uses = [b for b in blocks if getattr(b, "type", "") == "tool_use"]
            text = "".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", "") == "text")
            if not uses:
                out.final = text
                return out
            if msg.stop_reason == "max_tokens" and spec.get("strict", True):
                out.error = "the model's tool call was cut by max_tokens"
                return out
            messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in blocks]})
            results = []
            for u in uses:
                args = u.input if isinstance(u.input, dict) else {}
                if u.name not in dispatcher.names:
                    results.append({"type": "tool_result", "tool_use_id": u.id, "is_error": True,
                                    "content": f"Error: unknown tool {u.name!r}."})
                    continue
                result, err = await dispatcher.call(u.name, args, u.id)
                out.note("tool", result)
                results.append({"type": "tool_result", "tool_use_id": u.id, "content": result, "is_error": err})
            messages.append({"role": "user", "content": results})
        out.error = "too many turns"
        return out
    finally:
        await client.close()
