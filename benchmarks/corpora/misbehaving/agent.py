"""A small generic tool-calling loop on the official ``openai`` SDK, not the project's reference agent.

It does what a typical hand-written agent does: call the model with the tools, run every tool
call it gets, feed results back as ``tool`` messages (a tool's exception as an ``Error: ...``
line), stop at the first reply without tool calls. SDK exceptions end the run; so does a reply
the code cannot read (no choices, no message), as in most agents.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import openai

SYSTEM = "You are a helpful assistant. Use the tools to look things up; never guess values."
# Policies an agent's prompt may add (the scripted model reads them): try a failed lookup once
# more; if the second try fails too, go on with the other questions.
RETRY_ONCE = "If a lookup fails, try it once more."
SKIP_AFTER_RETRY = "If it fails again, go on with the other questions."


def _collect_stream(stream: Any) -> tuple[str | None, list[dict[str, Any]]]:
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for chunk in stream:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        if delta.content:
            text.append(delta.content)
        for tc in delta.tool_calls or []:
            slot = calls.setdefault(tc.index, {"id": tc.id, "type": "function",
                                               "function": {"name": "", "arguments": ""}})
            if tc.id:
                slot["id"] = tc.id
            if tc.function and tc.function.name:
                slot["function"]["name"] = tc.function.name
            if tc.function and tc.function.arguments:
                slot["function"]["arguments"] += tc.function.arguments
    return ("".join(text) if text else None), [calls[i] for i in sorted(calls)]


def run(client: openai.OpenAI, model: str, prompt: str, tools: Mapping[str, Callable[..., Any]],
        schemas: list[dict[str, Any]], *, json_mode: bool = False, stream: bool = False,
        max_turns: int = 64, max_tokens: int = 256, policy: tuple[str, ...] = ()) -> str | None:
    """The final answer text, or None when the loop ended without one. SDK errors propagate.
    ``policy``: sentences added to the system prompt (``RETRY_ONCE``, ``SKIP_AFTER_RETRY``)."""
    system = " ".join((SYSTEM, *policy))
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
    for _ in range(max_turns):
        kwargs: dict[str, Any] = {"model": model, "messages": messages, "tools": schemas, "max_tokens": max_tokens}
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        if stream:
            text, calls = _collect_stream(client.chat.completions.create(stream=True, **kwargs))
        else:
            resp = client.chat.completions.create(**kwargs)
            msg = resp.choices[0].message  # raises on a body without choices, as agents do
            text = msg.content
            calls = [c.model_dump() for c in msg.tool_calls or []]
        if not calls:
            return text
        messages.append({"role": "assistant", "content": text, "tool_calls": calls})
        for c in calls:
            fn = c["function"]
            try:
                out = tools[fn["name"]](**json.loads(fn["arguments"] or "{}"))
                content = out if isinstance(out, str) else json.dumps(out)
            except Exception as exc:  # noqa: BLE001 - the model is told, as agents do
                content = f"Error: {type(exc).__name__}: {exc}"
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": content})
    return None
