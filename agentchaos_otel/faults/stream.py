"""Server-sent events of streamed chat completions: parse, assemble, re-emit, and break them.

AgentChaos turns streaming off to rewrite a whole JSON body, so stream-specific failures (a cut
mid-way, a stall, a stream that ends without ``[DONE]``) never happen under it. Here a streamed
response stays streamed: ``SSEParser`` splits the upstream bytes into events as they arrive,
``StreamFaulter`` decides event by event what the agent receives, and ``Stall`` items tell the
transport where to pause (it sleeps in its own sync or async way, this module never does).

Whatever the faulter does not understand (comments, named events, non-JSON data, incomplete
trailing bytes) passes through byte-identical, so an unknown dialect degrades to "no fault"
instead of a broken stream.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agentchaos_otel.faults import catalog as C
from agentchaos_otel.faults.catalog import FaultSpec
from agentchaos_otel.faults.llm_response import CORRUPTION_MODES, corrupt_text
from agentchaos_otel.sse import DONE, SSEEvent, encode_event


@dataclass(frozen=True)
class Stall:
    seconds: float


# --- assemble ---------------------------------------------------------------------------------
def _chunk_of(event: SSEEvent) -> dict[str, Any] | None:
    value = event.json()
    if isinstance(value, dict) and isinstance(value.get("choices"), list):
        return value
    return None


def assemble_chat_completion(events: Iterable[SSEEvent]) -> dict[str, Any]:
    """The non-streamed ``chat.completion`` body equivalent to what a client read from the events.

    Reading stops at ``[DONE]`` and ignores incomplete trailing bytes, as the SDKs do, so the
    result describes what the agent actually received.
    """
    head: dict[str, Any] = {"id": None, "object": "chat.completion", "created": None, "model": None}
    extras: dict[str, Any] = {}
    usage: Any = None
    states: dict[int, dict[str, Any]] = {}
    for event in events:
        if event.is_done and event.complete:
            break
        chunk = _chunk_of(event)
        if chunk is None:
            continue
        for key in ("id", "created", "model"):
            if head[key] is None and chunk.get(key) is not None:
                head[key] = chunk[key]
        for key in ("system_fingerprint", "service_tier"):
            if chunk.get(key) is not None:
                extras[key] = chunk[key]
        if chunk.get("usage"):
            usage = chunk["usage"]
        for position, choice in enumerate(chunk["choices"]):
            if not isinstance(choice, dict):
                continue
            index = choice.get("index", position)
            st = states.setdefault(index, {"role": "assistant", "content": None, "refusal": None,
                                           "has_refusal": False, "tools": {}, "logprobs": None,
                                           "finish_reason": None})
            _merge_delta(st, choice)
    choices = []
    for index in sorted(states):
        st = states[index]
        message: dict[str, Any] = {"role": st["role"], "content": st["content"]}
        if st["has_refusal"]:
            message["refusal"] = st["refusal"]
        if st["tools"]:
            message["tool_calls"] = [st["tools"][i] for i in sorted(st["tools"])]
        choices.append({"index": index, "message": message, "logprobs": st["logprobs"],
                        "finish_reason": st["finish_reason"]})
    return {**head, **extras, "choices": choices, "usage": usage}


def _merge_delta(st: dict[str, Any], choice: dict[str, Any]) -> None:
    delta = choice.get("delta")
    if isinstance(delta, dict):
        if delta.get("role"):
            st["role"] = delta["role"]
        if isinstance(delta.get("content"), str):
            st["content"] = (st["content"] or "") + delta["content"]
        if "refusal" in delta:
            st["has_refusal"] = True
            if isinstance(delta["refusal"], str):
                st["refusal"] = (st["refusal"] or "") + delta["refusal"]
        for position, call in enumerate(delta.get("tool_calls") or []):
            if not isinstance(call, dict):
                continue
            entry = st["tools"].setdefault(call.get("index", position),
                                           {"id": None, "type": "function",
                                            "function": {"name": "", "arguments": ""}})
            if call.get("id"):
                entry["id"] = call["id"]
            if call.get("type"):
                entry["type"] = call["type"]
            fn = call.get("function") or {}
            name = fn.get("name")
            if name and name != entry["function"]["name"]:
                entry["function"]["name"] += name
            if isinstance(fn.get("arguments"), str):
                entry["function"]["arguments"] += fn["arguments"]
    logprobs = choice.get("logprobs")
    if isinstance(logprobs, dict):
        merged = st["logprobs"] if st["logprobs"] is not None else {"content": None}
        for key in ("content", "refusal"):
            if isinstance(logprobs.get(key), list):
                merged[key] = (merged.get(key) or []) + logprobs[key]
        st["logprobs"] = merged
    if choice.get("finish_reason"):
        st["finish_reason"] = choice["finish_reason"]


# --- render -----------------------------------------------------------------------------------
def _pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def render_chat_completion_sse(body: dict[str, Any], *, chunk_chars: int = 16,
                               include_usage: bool = True) -> bytes:
    """A completion as the ``chat.completion.chunk`` events OpenAI would have streamed for it.

    With logprobs whose tokens spell the content, one chunk per token (as OpenAI streams them);
    otherwise ``chunk_chars`` characters per chunk with all logprobs on the first chunk.
    ``assemble_chat_completion`` of the result gives the body back.
    """
    if chunk_chars < 1:
        raise ValueError("chunk_chars must be >= 1")
    base: dict[str, Any] = {"id": body.get("id"), "object": "chat.completion.chunk",
                            "created": body.get("created"), "model": body.get("model")}
    for key in ("service_tier", "system_fingerprint"):
        if key in body:
            base[key] = body[key]
    out: list[bytes] = []

    def emit(choice: dict[str, Any]) -> None:
        chunk = {**base, "choices": [choice]}
        if include_usage:
            chunk["usage"] = None
        out.append(encode_event(chunk))

    for position, choice in enumerate(body.get("choices") or []):
        index = choice.get("index", position)
        message = choice.get("message") or {}
        content = message.get("content")
        logprobs = choice.get("logprobs")
        entries = logprobs.get("content") if isinstance(logprobs, dict) else None
        first: dict[str, Any] = {"role": message.get("role", "assistant"),
                                 "content": "" if isinstance(content, str) else None}
        if "refusal" in message:
            first["refusal"] = None
        per_token = (isinstance(entries, list) and bool(entries) and isinstance(content, str)
                     and "".join(str(e.get("token", "")) for e in entries if isinstance(e, dict)) == content)
        first_logprobs = None
        if isinstance(logprobs, dict) and not per_token:
            first_logprobs = logprobs
        elif isinstance(logprobs, dict):
            first_logprobs = {k: ([] if k == "content" else v) for k, v in logprobs.items()}
        emit({"index": index, "delta": first, "logprobs": first_logprobs, "finish_reason": None})
        if per_token:
            for entry in entries:
                emit({"index": index, "delta": {"content": entry.get("token", "")},
                      "logprobs": {"content": [entry]}, "finish_reason": None})
        elif isinstance(content, str):
            for piece in _pieces(content, chunk_chars):
                emit({"index": index, "delta": {"content": piece}, "logprobs": None, "finish_reason": None})
        if isinstance(message.get("refusal"), str):
            for piece in _pieces(message["refusal"], chunk_chars):
                emit({"index": index, "delta": {"refusal": piece}, "logprobs": None, "finish_reason": None})
        for j, call in enumerate(message.get("tool_calls") or []):
            fn = call.get("function") or {}
            emit({"index": index, "delta": {"tool_calls": [{
                "index": j, "id": call.get("id"), "type": call.get("type", "function"),
                "function": {"name": fn.get("name", ""), "arguments": ""}}]},
                "logprobs": None, "finish_reason": None})
            for piece in _pieces(str(fn.get("arguments") or ""), chunk_chars):
                fragment = {"index": j, "function": {"arguments": piece}}
                emit({"index": index, "delta": {"tool_calls": [fragment]}, "logprobs": None,
                      "finish_reason": None})
        emit({"index": index, "delta": {}, "logprobs": None, "finish_reason": choice.get("finish_reason")})
    if include_usage and body.get("usage") is not None:
        out.append(encode_event({**base, "choices": [], "usage": body["usage"]}))
    out.append(DONE)
    return b"".join(out)


# --- faults -----------------------------------------------------------------------------------
def _is_payload(chunk: dict[str, Any]) -> bool:
    """A chunk that carries generated text or tool-call fragments (not role/finish/usage only)."""
    for choice in chunk["choices"]:
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if not isinstance(delta, dict):
            continue
        if delta.get("content") or delta.get("refusal") or delta.get("tool_calls"):
            return True
    return False


def _finish_reasons(chunk: dict[str, Any]) -> list[str]:
    return [c["finish_reason"] for c in chunk["choices"] if isinstance(c, dict) and c.get("finish_reason")]


class StreamFaulter:
    """Lazily transforms the event sequence of one streamed response for a stream-family spec.

    Faults that count chunks count *payload* chunks (content or tool-call fragments). A response
    shorter than the count is still faulted at its finish chunk, so a scheduled stream fault
    always changes something unless the op has nothing to act on (e.g. no tool calls to drop);
    ``changed`` says which happened.
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
        self._done_sent = False
        self._stalled = False
        self._indices: list[int] = []

    # -- public --------------------------------------------------------------------------------
    def process(self, event: SSEEvent) -> list[bytes | Stall]:
        handler = {
            C.OP_STREAM_CUT: self._cut,
            C.OP_STREAM_TRUNCATE: self._truncate,
            C.OP_STREAM_CORRUPT: self._corrupt,
            C.OP_STREAM_DROP_TOOL_CALLS: self._drop_tool_calls,
            C.OP_STREAM_EMPTY: self._empty,
            C.OP_STREAM_STALL: self._stall,
        }[self.spec.op]
        chunk = _chunk_of(event)
        if chunk is not None:
            for i, choice in enumerate(chunk["choices"]):
                index = choice.get("index", i) if isinstance(choice, dict) else i
                if index not in self._indices:
                    self._indices.append(index)
        return handler(event, chunk)

    def finish(self) -> list[bytes | Stall]:
        if self.spec.op == C.OP_STREAM_EMPTY and self.spec.param("done", True) and not self._done_sent:
            self._done_sent = True
            self.changed = True
            return [DONE]
        return []

    # -- helpers -------------------------------------------------------------------------------
    def _encode(self, event: SSEEvent, chunk: dict[str, Any]) -> bytes:
        newline = "\r\n" if b"\r\n" in event.raw else "\n"
        return encode_event(chunk, event=event.event, newline=newline, spaced='": ' in event.data)

    def _at_cut_point(self, chunk: dict[str, Any] | None) -> bool:
        if chunk is None:
            return False
        limit = int(self.spec.param("after_chunks", 3))
        return (_is_payload(chunk) and self.payload_chunks >= limit) or bool(_finish_reasons(chunk))

    def _count(self, chunk: dict[str, Any] | None) -> None:
        if chunk is not None and _is_payload(chunk):
            self.payload_chunks += 1

    # -- ops -----------------------------------------------------------------------------------
    def _cut(self, event: SSEEvent, chunk: dict[str, Any] | None) -> list[bytes | Stall]:
        if self._stopped:
            return []
        if self._at_cut_point(chunk):
            self._stopped = True
            self.changed = True
            if self.spec.param("done", True):
                self._done_sent = True
                return [DONE]
            return []
        self._count(chunk)
        return [event.raw]

    def _truncate(self, event: SSEEvent, chunk: dict[str, Any] | None) -> list[bytes | Stall]:
        if self._stopped:
            # After the cut only the usage summary and [DONE] still reach the client.
            if event.is_done or (chunk is not None and not chunk["choices"] and chunk.get("usage")):
                return [event.raw]
            if chunk is not None or event.has_data:
                return []
            return [event.raw]
        if self._at_cut_point(chunk):
            assert chunk is not None
            reasons = _finish_reasons(chunk)
            if not _is_payload(chunk) and reasons and all(r == "length" for r in reasons):
                self._stopped = True  # the provider already stopped at the limit: nothing to change
                return [event.raw]
            self._stopped = True
            self.changed = True
            final = {k: v for k, v in chunk.items() if k not in ("choices", "usage")}
            final["choices"] = [{"index": i, "delta": {}, "logprobs": None, "finish_reason": "length"}
                                for i in (self._indices or [0])]
            if "usage" in chunk:
                final["usage"] = None
            return [self._encode(event, final)]
        self._count(chunk)
        return [event.raw]

    def _corrupt(self, event: SSEEvent, chunk: dict[str, Any] | None) -> list[bytes | Stall]:
        if chunk is None or not _is_payload(chunk):
            return [event.raw]
        self._count(chunk)
        every = max(1, int(self.spec.param("every", 1)))
        if self.payload_chunks % every:
            return [event.raw]
        new = copy.deepcopy(chunk)
        modified = False
        for choice in new["choices"]:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if isinstance(delta, dict) and isinstance(delta.get("content"), str) and delta["content"]:
                text = corrupt_text(self.spec, delta["content"], self.rng)
                if text != delta["content"]:
                    delta["content"] = text
                    choice["logprobs"] = None  # the tokens they describe are gone
                    modified = True
        if not modified:
            return [event.raw]
        self.changed = True
        return [self._encode(event, new)]

    def _drop_tool_calls(self, event: SSEEvent, chunk: dict[str, Any] | None) -> list[bytes | Stall]:
        if chunk is None:
            return [event.raw]
        new = copy.deepcopy(chunk)
        modified = False
        for choice in new["choices"]:
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict) and delta.get("tool_calls"):
                del delta["tool_calls"]
                modified = True
            if choice.get("finish_reason") == "tool_calls":
                choice["finish_reason"] = "stop"
                modified = True
        if not modified:
            return [event.raw]
        self.changed = True
        carries = any(isinstance(c, dict) and (c.get("delta") or c.get("finish_reason"))
                      for c in new["choices"])
        if not carries and not new.get("usage"):
            return []  # a chunk that only carried tool-call fragments disappears
        return [self._encode(event, new)]

    def _empty(self, event: SSEEvent, chunk: dict[str, Any] | None) -> list[bytes | Stall]:
        if event.is_done:
            if self.spec.param("done", True) and not self._done_sent:
                self._done_sent = True
                return [DONE]
            self.changed = True
            return []
        if event.has_data:
            self.changed = True
            return []
        return [event.raw]  # comments and blank keep-alives are not content

    def _stall(self, event: SSEEvent, chunk: dict[str, Any] | None) -> list[bytes | Stall]:
        if chunk is None or self._stalled:
            return [event.raw]
        before = int(self.spec.param("before_chunk", 2))
        payload = _is_payload(chunk)
        if payload:
            self.payload_chunks += 1
        if (payload and self.payload_chunks >= before) or _finish_reasons(chunk):
            self._stalled = True
            self.changed = True
            return [Stall(float(self.spec.param("seconds", 5.0))), event.raw]
        return [event.raw]
