"""Captured message content in the GenAI conventions' format, and reading it back in any format.

With content capture on, LLM spans carry ``gen_ai.input.messages``, ``gen_ai.output.messages``
and, where the provider takes them apart from the chat history (Anthropic's ``system``),
``gen_ai.system_instructions``, as JSON in the conventions' message schema: a message is a
``role`` and a list of ``parts`` (``text`` with ``content``, ``tool_call`` with ``id``, ``name``
and ``arguments``, ``tool_call_response`` with ``id`` and ``response``; other provider blocks
are kept as generic parts under their own ``type``); an output message also has a
``finish_reason`` from the conventions' values (``stop``, ``length``, ``content_filter``,
``tool_call``, ``error``; other provider reasons are kept as they are). Semconv readers such as
Phoenix show these.

Readers (the diagnosers, trace import) must also understand content written before, or by
other instrumentations, in the OpenAI wire shape (``content`` string or part list, ``tool_calls``
with ``function.arguments``); ``read_output`` and ``read_input`` accept both and return the
wire shape the signal functions take.
"""

from __future__ import annotations

import json
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel.tool_signals import parsed_result

FINISH_REASONS = {"stop": "stop", "length": "length", "content_filter": "content_filter", "tool_calls": "tool_call",
                  "function_call": "tool_call", "end_turn": "stop", "stop_sequence": "stop",
                  "max_tokens": "length", "tool_use": "tool_call", "refusal": "content_filter"}
MISSING_FINISH_REASON = "error"  # a response that ended without one (a cut stream), as upstream records it


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "content": text}


def _content_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [_text_part(content)]
    parts: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(_text_part(str(block.get("text", ""))))
        elif kind == "tool_use":
            parts.append({"type": "tool_call", "id": block.get("id"), "name": block.get("name"),
                          "arguments": block.get("input")})
        elif kind == "tool_result":
            result = block.get("content")
            if isinstance(result, list):
                result = "".join(str(b.get("text", "")) for b in result if isinstance(b, dict))
            parts.append({"type": "tool_call_response", "id": block.get("tool_use_id"), "response": result})
        elif isinstance(kind, str):
            parts.append(dict(block))  # images, documents, thinking...: a generic part of that type
    return parts


def _tool_call_part(call: dict[str, Any]) -> dict[str, Any] | None:
    fn = call.get("function")
    if not isinstance(fn, dict):
        return None
    return {"type": "tool_call", "id": call.get("id"), "name": fn.get("name"),
            "arguments": parsed_result(fn.get("arguments"))}


def _openai_message(m: dict[str, Any]) -> dict[str, Any]:
    role = str(m.get("role"))
    if role == "tool":
        return {"role": "tool", "parts": [{"type": "tool_call_response", "id": m.get("tool_call_id"),
                                           "response": m.get("content")}]}
    parts = [] if m.get("content") is None else _content_parts(m.get("content"))
    parts += [p for c in m.get("tool_calls") or [] if isinstance(c, dict) and (p := _tool_call_part(c))]
    out: dict[str, Any] = {"role": role, "parts": parts}
    if isinstance(m.get("name"), str):
        out["name"] = m["name"]
    return out


InputMessages = tuple[list[dict[str, Any]], list[dict[str, Any]] | None]


def _request_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request.get("messages") or [] if isinstance(m, dict)]


def openai_input_messages(request: dict[str, Any]) -> InputMessages:
    """(input messages, None) of a chat-completions request: its system prompt is a message."""
    return [_openai_message(m) for m in _request_messages(request)], None


def anthropic_input_messages(request: dict[str, Any]) -> InputMessages:
    """(input messages, system instructions or None) of a Messages request."""
    system = request.get("system")
    instructions = _content_parts(system) if system else None
    return ([{"role": str(m.get("role")), "parts": _content_parts(m.get("content"))}
             for m in _request_messages(request)], instructions)


_INPUT_READERS = {A.PROVIDER_OPENAI: openai_input_messages, A.PROVIDER_ANTHROPIC: anthropic_input_messages}


def input_messages(provider: str, request: dict[str, Any]) -> InputMessages:
    """(input messages, system instructions or None) of a request body in ``provider``'s format.

    Formats other than Anthropic's are read as chat completions, the shape OpenAI-compatible
    servers and imported traces share.
    """
    return _INPUT_READERS.get(provider, openai_input_messages)(request)


def output_message(text: str | None, tool_calls: list[dict[str, Any]], finish_reasons: list[str]) -> dict[str, Any]:
    """The assistant message the agent received (tool calls in the OpenAI shape, as in ``ResponseView``)."""
    parts = [_text_part(text)] if text else []
    parts += [p for c in tool_calls if (p := _tool_call_part(c))]
    reason = finish_reasons[0] if finish_reasons else None
    return {"role": "assistant", "parts": parts,
            "finish_reason": FINISH_REASONS.get(reason, reason) if reason else MISSING_FINISH_REASON}


# --- reading back ------------------------------------------------------------------------------
def loads_or_none(value: Any) -> Any:
    """A JSON text decoded (None when it is not JSON); any other value as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _wire_message(m: dict[str, Any]) -> dict[str, Any]:
    """A parts-format message in the OpenAI wire shape; a wire-shape message unchanged."""
    if not isinstance(m.get("parts"), list):
        return m
    texts, calls, responses = [], [], []
    for p in m["parts"]:
        if not isinstance(p, dict):
            continue
        kind = p.get("type")
        if kind == "text":
            texts.append(str(p.get("content") or ""))
        elif kind == "tool_call":
            args = p.get("arguments")
            calls.append({"id": p.get("id"), "type": "function", "function": {
                "name": p.get("name"), "arguments": args if isinstance(args, str) else json.dumps(args)}})
        elif kind == "tool_call_response":
            responses.append(p)
    if responses and m.get("role") == "tool":
        r = responses[0]
        body = r.get("response")
        return {"role": "tool", "tool_call_id": r.get("id"),
                "content": body if isinstance(body, str) else json.dumps(body)}
    out: dict[str, Any] = {"role": m.get("role"), "content": "".join(texts) if texts else None}
    if calls:
        out["tool_calls"] = calls
    if m.get("finish_reason"):
        out["finish_reason"] = m["finish_reason"]
    return out


def read_input(value: Any) -> list[dict[str, Any]] | None:
    """Captured input messages (either format) as OpenAI wire-shape messages."""
    msgs = loads_or_none(value)
    if not isinstance(msgs, list):
        return None
    return [_wire_message(m) for m in msgs if isinstance(m, dict)]


def read_output(value: Any) -> tuple[str | None, list[dict[str, Any]], list[str]] | None:
    """(text, tool calls in the OpenAI shape, finish reasons) of captured output, either format."""
    msgs = read_input(value)
    if not msgs:
        return None
    m = msgs[-1]
    text = m.get("content")
    if isinstance(text, list):  # wire shape with a part list
        text = "".join(str(p.get("content") or p.get("text") or "") for p in text if isinstance(p, dict))
    calls = [c for c in m.get("tool_calls") or [] if isinstance(c, dict)]
    reasons = [str(m["finish_reason"])] if m.get("finish_reason") else []
    return (text if isinstance(text, str) else None), calls, reasons
