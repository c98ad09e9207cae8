"""Server-sent events of streamed Anthropic Messages: assemble, re-emit, and break them.

The counterpart of ``stream`` for ``/v1/messages``. A Messages stream is a sequence of named
events: ``message_start`` (the message with empty content), per content block a
``content_block_start``, ``content_block_delta`` events (``text_delta``, ``input_json_delta``,
``thinking_delta``...) and a ``content_block_stop``, then ``message_delta`` (stop reason, usage)
and ``message_stop``; ``ping`` and ``error`` events may come in between.

``MessagesStreamFaulter`` applies the stream ops of the catalog the way ``StreamFaulter`` does on
chat-completion chunks, while keeping the event grammar the SDK's accumulator relies on, so
that no fault makes the official SDK fail unless failing is the fault's point:

- ``message_start`` always reaches the client (the SDK's ``MessageStream`` refuses any event
  before it, and ``get_final_message`` asserts it was seen), so ``stream_empty`` is a message
  with no content blocks and no stop reason, the Messages form of "no chunks, only [DONE]";
- ``message_stop`` plays the part of ``[DONE]`` (sent after a ``stream_cut``, withheld by
  ``stream_cut_no_done``);
- ``stream_truncate`` closes the open blocks with ``content_block_stop`` and turns the stop
  reason into ``max_tokens``, what the API sends when it stops at the token limit;
- ``stream_drop_tool_calls`` removes the ``tool_use`` blocks and renumbers the blocks after
  them (the SDK indexes its snapshot by block index), ``tool_use`` becoming ``end_turn``.

Payload events, which the chunk-counting ops count, are the deltas that carry generated text,
thinking or tool-input fragments, and the start of a ``tool_use`` block (it carries the tool's
name, as the first tool-call chunk does on the chat side). Events the faulter does not
understand pass through byte-identical.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterable
from typing import Any

from agentchaos_otel.faults import catalog as C
from agentchaos_otel.faults.catalog import FaultSpec
from agentchaos_otel.faults.llm_response import CORRUPTION_MODES, corrupt_text
from agentchaos_otel.faults.stream import Stall
from agentchaos_otel.sse import SSEEvent, encode_event

MESSAGE_STOP = encode_event({"type": "message_stop"}, event="message_stop")
_DELTA_FIELDS = {"text_delta": "text", "input_json_delta": "partial_json", "thinking_delta": "thinking"}


def _data(event: SSEEvent) -> dict[str, Any] | None:
    value = event.json()
    return value if isinstance(value, dict) and isinstance(value.get("type"), str) else None


def is_end(event: SSEEvent) -> bool:
    """Whether the event ends the message, as ``[DONE]`` ends a chat-completion stream."""
    data = _data(event)
    return data is not None and data["type"] == "message_stop"


# --- assemble ---------------------------------------------------------------------------------
def assemble_message(events: Iterable[SSEEvent]) -> dict[str, Any]:
    """The Messages body equivalent to a streamed Anthropic response, as far as it was received.

    Lets a streamed ``/v1/messages`` call be annotated like a non-streamed one. A tool_use block
    whose ``input_json_delta`` fragments do not form valid JSON (the stream was cut) keeps the raw
    fragment text as its ``input``, so the damage stays visible instead of becoming ``{}``.
    """
    message: dict[str, Any] = {"id": None, "type": "message", "role": "assistant", "model": None,
                               "content": [], "stop_reason": None, "stop_sequence": None, "usage": {}}
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    for event in events:
        data = _data(event)
        if data is None:
            continue
        kind = data["type"]
        if kind == "message_start" and isinstance(data.get("message"), dict):
            start = data["message"]
            message.update({k: v for k, v in start.items() if k != "content"})
            message["usage"] = dict(start.get("usage") or {})
        elif kind == "content_block_start" and isinstance(data.get("content_block"), dict):
            index = int(data.get("index", len(blocks)))
            blocks[index] = copy.deepcopy(data["content_block"])
        elif kind == "content_block_delta" and isinstance(data.get("delta"), dict):
            index = int(data.get("index", 0))
            block = blocks.setdefault(index, {"type": "text", "text": ""})
            delta = data["delta"]
            dtype = delta.get("type")
            if dtype == "text_delta":
                block["text"] = str(block.get("text", "")) + str(delta.get("text", ""))
            elif dtype == "input_json_delta":
                partial[index] = partial.get(index, "") + str(delta.get("partial_json", ""))
            elif dtype == "thinking_delta":
                block["thinking"] = str(block.get("thinking", "")) + str(delta.get("thinking", ""))
            elif dtype == "signature_delta":
                block["signature"] = str(delta.get("signature", ""))
        elif kind == "message_delta":
            delta = data.get("delta") or {}
            for key in ("stop_reason", "stop_sequence"):
                if key in delta:
                    message[key] = delta[key]
            if isinstance(data.get("usage"), dict):
                message["usage"].update({k: v for k, v in data["usage"].items() if v is not None})
        elif kind == "message_stop":
            break
    for index, text in partial.items():
        try:
            blocks[index]["input"] = json.loads(text) if text else {}
        except ValueError:
            blocks[index]["input"] = text
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


# --- render -----------------------------------------------------------------------------------
def _pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def _block_events(index: int, block: dict[str, Any], chunk_chars: int) -> list[bytes]:
    kind = block.get("type")
    out: list[bytes] = []

    def emit(name: str, value: dict[str, Any]) -> None:
        out.append(encode_event({"type": name, "index": index, **value}, event=name))

    def deltas(delta_type: str, text: str) -> None:
        for piece in _pieces(text, chunk_chars):
            emit("content_block_delta", {"delta": {"type": delta_type, _DELTA_FIELDS[delta_type]: piece}})

    if kind == "text":
        emit("content_block_start", {"content_block": {**block, "text": ""}})
        deltas("text_delta", str(block.get("text", "")))
    elif kind == "tool_use":
        raw = block.get("input", {})
        emit("content_block_start", {"content_block": {**block, "input": {}}})
        deltas("input_json_delta", raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False))
    elif kind == "thinking":
        emit("content_block_start", {"content_block": {**block, "thinking": "", "signature": ""}})
        deltas("thinking_delta", str(block.get("thinking", "")))
        if block.get("signature"):
            emit("content_block_delta", {"delta": {"type": "signature_delta", "signature": block["signature"]}})
    else:  # server tool results, redacted thinking...: streamed whole in their start event
        emit("content_block_start", {"content_block": block})
    emit("content_block_stop", {})
    return out


def render_message_sse(body: dict[str, Any], *, chunk_chars: int = 16) -> bytes:
    """A Message as the events the API would have streamed for it.

    ``assemble_message`` of the result gives the body back (usage keys included).
    """
    if chunk_chars < 1:
        raise ValueError("chunk_chars must be >= 1")
    usage = dict(body.get("usage") or {})
    start = {k: v for k, v in body.items() if k not in ("content", "stop_reason", "stop_sequence", "usage")}
    start.update({"content": [], "stop_reason": None, "stop_sequence": None,
                  "usage": {**usage, "output_tokens": 1} if "output_tokens" in usage else usage})
    out = [encode_event({"type": "message_start", "message": start}, event="message_start")]
    for index, block in enumerate(b for b in body.get("content") or [] if isinstance(b, dict)):
        out.extend(_block_events(index, block, chunk_chars))
    delta_usage = {"output_tokens": usage["output_tokens"]} if "output_tokens" in usage else {}
    out.append(encode_event({"type": "message_delta", "usage": delta_usage, "delta": {
        "stop_reason": body.get("stop_reason"), "stop_sequence": body.get("stop_sequence")}}, event="message_delta"))
    out.append(MESSAGE_STOP)
    return b"".join(out)


# --- faults -----------------------------------------------------------------------------------
def _is_payload(data: dict[str, Any]) -> bool:
    kind = data["type"]
    if kind == "content_block_delta":
        delta = data.get("delta") if isinstance(data.get("delta"), dict) else {}
        field = _DELTA_FIELDS.get(str(delta.get("type")))
        return bool(field and delta.get(field))
    if kind == "content_block_start":
        block = data.get("content_block")
        return isinstance(block, dict) and block.get("type") == "tool_use"
    return False


class MessagesStreamFaulter:
    """Transforms the event sequence of one streamed Message for a stream-family spec.

    Same contract as ``stream.StreamFaulter``: ``process`` per upstream event, ``finish`` at the
    end of upstream, ``changed`` says whether anything the client receives differs.
    """

    def __init__(self, spec: FaultSpec, rng: random.Random) -> None:
        if spec.op not in C.STREAM_OPS:
            raise ValueError(f"fault {spec.name!r} (op {spec.op!r}) is not a stream fault")
        if spec.op == C.OP_STREAM_CORRUPT and spec.param("mode", "symbols") not in CORRUPTION_MODES:
            raise ValueError(f"fault {spec.name!r}: unknown corruption mode {spec.param('mode')!r}")
        self.spec = spec
        self.rng = rng
        self.changed = False
        self.payload_chunks = 0
        self._stopped = False
        self._stop_sent = False
        self._stalled = False
        self._open: list[int] = []  # blocks started and not yet stopped, in order
        self._dropped: set[int] = set()

    # -- public --------------------------------------------------------------------------------
    def process(self, event: SSEEvent) -> list[bytes | Stall]:
        data = _data(event)
        if data is None or data["type"] in ("ping", "error"):
            return [event.raw]
        handler = {
            C.OP_STREAM_CUT: self._cut,
            C.OP_STREAM_TRUNCATE: self._truncate,
            C.OP_STREAM_CORRUPT: self._corrupt,
            C.OP_STREAM_DROP_TOOL_CALLS: self._drop_tool_calls,
            C.OP_STREAM_EMPTY: self._empty,
            C.OP_STREAM_STALL: self._stall,
        }[self.spec.op]
        out = handler(event, data)
        if not self._stopped:
            self._track(data)
        return out

    def finish(self) -> list[bytes | Stall]:
        if self.spec.op == C.OP_STREAM_EMPTY and self.spec.param("done", True) and not self._stop_sent:
            self._stop_sent = True
            self.changed = True
            return [MESSAGE_STOP]
        return []

    # -- helpers -------------------------------------------------------------------------------
    def _encode(self, event: SSEEvent, data: dict[str, Any]) -> bytes:
        newline = "\r\n" if b"\r\n" in event.raw else "\n"
        return encode_event(data, event=event.event, newline=newline, spaced='": ' in event.data)

    def _track(self, data: dict[str, Any]) -> None:
        index = data.get("index")
        if data["type"] == "content_block_start" and isinstance(index, int) and index not in self._dropped:
            self._open.append(index)
        elif data["type"] == "content_block_stop" and index in self._open:
            self._open.remove(index)

    def _at_cut_point(self, data: dict[str, Any]) -> bool:
        limit = int(self.spec.param("after_chunks", 3))
        return (_is_payload(data) and self.payload_chunks >= limit) or data["type"] == "message_delta"

    def _count(self, data: dict[str, Any]) -> None:
        if _is_payload(data):
            self.payload_chunks += 1

    # -- ops -----------------------------------------------------------------------------------
    def _cut(self, event: SSEEvent, data: dict[str, Any]) -> list[bytes | Stall]:
        if self._stopped:
            return []
        if self._at_cut_point(data) or data["type"] == "message_stop":
            self._stopped = True
            self.changed = True
            if self.spec.param("done", True):
                self._stop_sent = True
                return [MESSAGE_STOP]
            return []
        self._count(data)
        return [event.raw]

    def _truncate(self, event: SSEEvent, data: dict[str, Any]) -> list[bytes | Stall]:
        kind = data["type"]
        if self._stopped:
            # After the cut only the stop reason (with usage) and message_stop still reach the client.
            if kind == "message_delta":
                return [self._encode(event, self._max_tokens(data))]
            return [event.raw] if kind == "message_stop" else []
        if self._at_cut_point(data):
            self._stopped = True
            if kind == "message_delta":
                delta = data.get("delta") if isinstance(data.get("delta"), dict) else {}
                if delta.get("stop_reason") == "max_tokens":
                    return [event.raw]  # the provider already stopped at the limit: nothing to change
                self.changed = True
                return [self._encode(event, self._max_tokens(data))]
            self.changed = True
            return [encode_event({"type": "content_block_stop", "index": i}, event="content_block_stop")
                    for i in self._open]
        self._count(data)
        return [event.raw]

    @staticmethod
    def _max_tokens(data: dict[str, Any]) -> dict[str, Any]:
        new = copy.deepcopy(data)
        delta = new.get("delta") if isinstance(new.get("delta"), dict) else {}
        new["delta"] = {**delta, "stop_reason": "max_tokens", "stop_sequence": None}
        return new

    def _corrupt(self, event: SSEEvent, data: dict[str, Any]) -> list[bytes | Stall]:
        if not _is_payload(data):
            return [event.raw]
        self._count(data)
        delta = data.get("delta")
        every = max(1, int(self.spec.param("every", 1)))
        if not isinstance(delta, dict) or delta.get("type") != "text_delta" or self.payload_chunks % every:
            return [event.raw]
        text = corrupt_text(self.spec, str(delta.get("text", "")), self.rng)
        if text == delta.get("text"):
            return [event.raw]
        self.changed = True
        return [self._encode(event, {**data, "delta": {**delta, "text": text}})]

    def _drop_tool_calls(self, event: SSEEvent, data: dict[str, Any]) -> list[bytes | Stall]:
        kind, index = data["type"], data.get("index")
        if kind == "content_block_start" and isinstance(data.get("content_block"), dict) \
                and data["content_block"].get("type") == "tool_use" and isinstance(index, int):
            self._dropped.add(index)
            self.changed = True
            return []
        if kind.startswith("content_block_") and isinstance(index, int):
            if index in self._dropped:
                return []
            shift = sum(1 for d in self._dropped if d < index)
            return [self._encode(event, {**data, "index": index - shift})] if shift else [event.raw]
        if kind == "message_delta":
            delta = data.get("delta") if isinstance(data.get("delta"), dict) else {}
            if delta.get("stop_reason") == "tool_use":
                self.changed = True
                return [self._encode(event, {**data, "delta": {**delta, "stop_reason": "end_turn"}})]
        return [event.raw]

    def _empty(self, event: SSEEvent, data: dict[str, Any]) -> list[bytes | Stall]:
        kind = data["type"]
        if kind == "message_start":
            return [event.raw]
        if kind == "message_stop" and self.spec.param("done", True) and not self._stop_sent:
            self._stop_sent = True
            return [event.raw]
        self.changed = True
        return []

    def _stall(self, event: SSEEvent, data: dict[str, Any]) -> list[bytes | Stall]:
        if self._stalled:
            return [event.raw]
        before = int(self.spec.param("before_chunk", 2))
        payload = _is_payload(data)
        if payload:
            self.payload_chunks += 1
        if (payload and self.payload_chunks >= before) or data["type"] == "message_delta":
            self._stalled = True
            self.changed = True
            return [Stall(float(self.spec.param("seconds", 5.0))), event.raw]
        return [event.raw]
