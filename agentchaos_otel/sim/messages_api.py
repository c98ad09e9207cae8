"""The Anthropic Messages API (``POST /v1/messages``) on the simulated server.

The official ``anthropic`` SDK, our injector's Messages codec and the coexistence tests need a
loopback model that speaks this wire format for real: non-streamed bodies, SSE streams
(``message_start``, ``content_block_start``/``delta``/``stop`` with ``text_delta`` and
``input_json_delta``, ``ping``, ``message_delta`` with stop reason and usage, ``message_stop``),
tool use, ``max_tokens`` cuts and Anthropic-shaped errors. Policies keep speaking one dialect:
a Messages request is translated into the equivalent chat-completions request, the server
generates the completion as usual, and the result is rendered back as a Message. Everything it
answers is simulated (model ids ``sim-*``), like the rest of the server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentchaos_otel.sim.completions import Completion

MESSAGES_PATH = "/v1/messages"
TEXT_CHUNK_TOKENS = 1  # one text_delta per simulated token, as the API streams them
JSON_CHUNK_TOKENS = 3  # input_json_delta fragments of a few tokens each

STOP_REASON = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use",
               "content_filter": "refusal"}
_ERROR_TYPE = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
               500: "api_error", 529: "overloaded_error"}


class MessagesRequestError(Exception):
    """A Messages request the server refuses, rendered in Anthropic's error shape."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def body(self) -> dict[str, Any]:
        return error_body(self.status, self.message)


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": _ERROR_TYPE.get(status, "api_error"), "message": message}}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _chat_messages(message: dict[str, Any]) -> list[dict[str, Any]]:
    """One Messages turn as chat messages: tool results become ``tool`` messages, tool uses ``tool_calls``."""
    role, content = message.get("role"), message.get("content")
    if isinstance(content, str):
        return [{"role": role, "content": content}]
    if not isinstance(content, list):
        raise MessagesRequestError(400, "messages: content must be a string or a list of content blocks")
    blocks = [b for b in content if isinstance(b, dict)]
    if role == "assistant":
        calls = [{"id": b.get("id"), "type": "function",
                  "function": {"name": b.get("name"), "arguments": json.dumps(b.get("input", {}))}}
                 for b in blocks if b.get("type") == "tool_use"]
        out: dict[str, Any] = {"role": "assistant", "content": _text_of(blocks) or None}
        if calls:
            out["tool_calls"] = calls
        return [out]
    chat = [{"role": "tool", "tool_call_id": b.get("tool_use_id"), "content": _text_of(b.get("content"))}
            for b in blocks if b.get("type") == "tool_result"]
    text = _text_of(blocks)
    if text or not chat:
        chat.append({"role": role, "content": text})
    return chat


def _chat_tool_choice(choice: Any) -> Any:
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind == "tool":
        return {"type": "function", "function": {"name": choice.get("name")}}
    return {"any": "required", "none": "none"}.get(str(kind), "auto")


def to_chat_request(request: Any) -> dict[str, Any]:
    """The chat-completions request that asks the simulated model what ``request`` asks."""
    if not isinstance(request, dict):
        raise MessagesRequestError(400, "The request body must be a JSON object.")
    if not isinstance(request.get("model"), str) or not request["model"]:
        raise MessagesRequestError(400, "model: Field required")
    max_tokens = request.get("max_tokens")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise MessagesRequestError(400, "max_tokens: Field required (an integer >= 1)")
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise MessagesRequestError(400, "messages: at least one message is required")
    chat: list[dict[str, Any]] = []
    system = _text_of(request.get("system"))
    if system:
        chat.append({"role": "system", "content": system})
    for m in messages:
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            raise MessagesRequestError(400, "messages: each message needs a role of 'user' or 'assistant'")
        chat.extend(_chat_messages(m))
    out: dict[str, Any] = {"model": request["model"], "messages": chat, "max_tokens": max_tokens,
                           "stream": bool(request.get("stream"))}
    tools = request.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise MessagesRequestError(400, "tools: must be a list")
        out["tools"] = [{"type": "function", "function": {
            "name": t.get("name"), "description": t.get("description", ""),
            "parameters": t.get("input_schema") or {"type": "object"}}} for t in tools if isinstance(t, dict)]
    if request.get("tool_choice") is not None:
        out["tool_choice"] = _chat_tool_choice(request["tool_choice"])
    for key, target in (("temperature", "temperature"), ("top_p", "top_p"), ("stop_sequences", "stop")):
        if request.get(key) is not None:
            out[target] = request[key]
    return out


def _message_id(c: Completion) -> str:
    return "msg_" + c.id.split("-", 1)[-1]


def _tool_use_id(call_id: str) -> str:
    return "toolu_" + call_id.split("_", 1)[-1]


def _input(arguments: str) -> Any:
    """The tool input object; arguments cut by ``max_tokens`` are no JSON object, so ``{}``."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _usage(c: Completion) -> dict[str, Any]:
    return {"input_tokens": c.prompt_tokens, "output_tokens": c.choices[0].completion_tokens,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def message_body(c: Completion) -> dict[str, Any]:
    """The non-streamed Message for a completion (first choice: the API has no ``n``)."""
    ch = c.choices[0]
    content: list[dict[str, Any]] = []
    if ch.content:
        content.append({"type": "text", "text": ch.content})
    content += [{"type": "tool_use", "id": _tool_use_id(call.id), "name": call.name, "input": _input(call.arguments)}
                for call in ch.calls]
    return {"id": _message_id(c), "type": "message", "role": "assistant", "model": c.model, "content": content,
            "stop_reason": STOP_REASON.get(ch.finish_reason, ch.finish_reason), "stop_sequence": None,
            "usage": _usage(c)}


def message_events(c: Completion) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event name, data) of the SSE stream the API sends for the same Message."""
    ch = c.choices[0]
    start = {k: v for k, v in message_body(c).items() if k not in ("content", "stop_reason", "usage")}
    yield "message_start", {"type": "message_start", "message": {
        **start, "content": [], "stop_reason": None, "usage": {**_usage(c), "output_tokens": 1}}}
    index = 0
    if ch.content:
        yield "content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": {"type": "text", "text": ""}}
        yield "ping", {"type": "ping"}
        for i in range(0, len(ch.content_tokens), TEXT_CHUNK_TOKENS):
            text = "".join(ch.content_tokens[i:i + TEXT_CHUNK_TOKENS])
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "text_delta", "text": text}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    for call in ch.calls:
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {
            "type": "tool_use", "id": _tool_use_id(call.id), "name": call.name, "input": {}}}
        for i in range(0, len(call.arg_tokens), JSON_CHUNK_TOKENS):
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                "type": "input_json_delta", "partial_json": "".join(call.arg_tokens[i:i + JSON_CHUNK_TOKENS])}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": STOP_REASON.get(ch.finish_reason, ch.finish_reason),
                                      "stop_sequence": None},
                            "usage": {"output_tokens": ch.completion_tokens}}
    yield "message_stop", {"type": "message_stop"}
