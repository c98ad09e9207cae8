"""The agent loop: the official openai SDK, chat -> tool calls -> tool results -> ... -> answer.

Tool errors are handed back to the model as the tool message (``Error: <repr>`` plus the
LangGraph ToolNode hint), malformed tool-call arguments and unknown tools likewise. API errors
raised by the SDK (after its own retries) end the task; so do blocked finish reasons, a response
without choices, a per-call deadline overrun (when the episode has one) and the turn limit.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import openai

SYSTEM = (
    "You are the back-office assistant of an online outdoor-gear shop. Use the tools to look things up and act; "
    "never guess values. Answer briefly once you have what you need."
)

BLOCKED = {
    "content_filter",
    "safety",
    "recitation",
    "prohibited_content",
    "blocklist",
    "spii",
    "guardrail_intervened",
    "error",
}


@dataclass
class Outcome:
    final: str | None
    error: str | None
    llm_calls: int


def _message_from_completion(resp: Any) -> tuple[dict[str, Any] | None, str | None, Any]:
    if resp is None or not getattr(resp, "choices", None):
        return None, None, None
    ch = resp.choices[0]
    m = ch.message
    msg: dict[str, Any] = {"role": "assistant", "content": m.content}
    if m.tool_calls:
        msg["tool_calls"] = [
            {"id": t.id, "type": "function", "function": {"name": t.function.name, "arguments": t.function.arguments}}
            for t in m.tool_calls
        ]
    return msg, ch.finish_reason, getattr(ch, "error", None)


def _message_from_stream(stream: Any) -> tuple[dict[str, Any] | None, str | None, Any]:
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    err = None
    got = False
    for chunk in stream:
        if getattr(chunk, "error", None):
            err = chunk.error
        if not chunk.choices:
            continue
        got = True
        c = chunk.choices[0]
        d = c.delta
        if d is not None:
            if d.content:
                content.append(d.content)
            for tc in d.tool_calls or []:
                slot = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
                if tc.id:
                    slot["id"] = tc.id
                if tc.function is not None:
                    if tc.function.name:
                        slot["name"] += tc.function.name
                    if tc.function.arguments:
                        slot["arguments"] += tc.function.arguments
        if c.finish_reason:
            finish = c.finish_reason
    if not got:
        return None, None, err
    msg: dict[str, Any] = {"role": "assistant", "content": "".join(content) if content else None}
    if calls:
        msg["tool_calls"] = [
            {
                "id": s["id"] or f"call_{i}",
                "type": "function",
                "function": {"name": s["name"], "arguments": s["arguments"]},
            }
            for i, s in sorted(calls.items())
        ]
    return msg, finish, err


def run_agent(
    client: openai.OpenAI,
    model: str,
    prompt: str,
    tools: dict[str, Callable[..., Any]],
    *,
    schemas: list[dict[str, Any]],
    stream: bool,
    max_turns: int,
    deadline: float | None,
    json_answer: bool,
    on_tool_call: Callable[[str], None],
    before_llm_call: Callable[[], None],
) -> Outcome:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
    extra: dict[str, Any] = {}
    if json_answer:
        extra["response_format"] = {"type": "json_object"}
    calls = 0
    for _turn in range(max_turns):
        before_llm_call()
        t0 = time.monotonic()
        calls += 1
        try:
            if stream:
                s = client.chat.completions.create(model=model, messages=messages, tools=schemas, stream=True, **extra)
                msg, finish, err = _message_from_stream(s)
            else:
                resp = client.chat.completions.create(model=model, messages=messages, tools=schemas, **extra)
                msg, finish, err = _message_from_completion(resp)
        except openai.APIError as e:
            return Outcome(None, f"{type(e).__name__}: {e}"[:400], calls)
        if deadline is not None and time.monotonic() - t0 > deadline:
            return Outcome(None, f"turn deadline exceeded: the model call took longer than {deadline:.1f}s", calls)
        if msg is None:
            return Outcome(None, "malformed completion: the response carried no choices", calls)
        if err:
            return Outcome(None, f"completion failed: {err}"[:400], calls)
        if finish and finish.lower() in BLOCKED:
            return Outcome(None, f"completion stopped with finish_reason={finish}", calls)
        if msg.get("tool_calls"):
            messages.append(msg)
            for tc in msg["tool_calls"]:
                name, raw = tc["function"]["name"], tc["function"]["arguments"]
                result = _execute(tools, name, raw, on_tool_call)
                messages.append({"role": "tool", "tool_call_id": tc["id"], "content": result})
            continue
        return Outcome(msg.get("content") or "", None, calls)
    return Outcome(None, f"stopped after {max_turns} turns without an answer", calls)


def _execute(tools: dict[str, Callable[..., Any]], name: str, raw: str, on_tool_call: Callable[[str], None]) -> str:
    if name not in tools:
        return f"Error: {name} is not a valid tool, try one of [{', '.join(tools)}]."
    try:
        args = json.loads(raw or "{}")
    except json.JSONDecodeError as e:
        return f"Error: the arguments for {name} are not valid JSON ({e}).\n Please fix your mistakes."
    if not isinstance(args, dict):
        return f"Error: the arguments for {name} must be a JSON object.\n Please fix your mistakes."
    on_tool_call(name)
    try:
        out = tools[name](**args)
    except Exception as e:  # noqa: BLE001 - the agent reports any tool exception to the model
        return f"Error: {e!r}\n Please fix your mistakes."
    return out if isinstance(out, str) else json.dumps(out)
