"""Turn request and response bodies of an LLM call into span attributes.

Works on parsed JSON of the OpenAI chat-completions and Anthropic Messages formats, normalised
to one small view (text, tool calls, finish reasons, usage) so signals are computed the same way
for both. Message content is only copied onto spans when the GenAI content-capture setting asks,
in the conventions' message format (``trace.messages``).
"""

from __future__ import annotations

import json
import math
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel import signals
from agentchaos_otel.trace import messages as genai_messages


def content_capture_enabled() -> bool:
    return os.environ.get(A.CAPTURE_CONTENT_ENV, "").strip().lower() in ("1", "true", "yes", "on")


@dataclass
class ResponseView:
    """The provider-neutral parts of a completion that signals and attributes are built from."""

    response_id: str | None = None
    model: str | None = None
    text: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # OpenAI shape
    finish_reasons: list[str] = field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None
    logprobs: list[dict[str, Any]] | None = None


_INT64 = 2 ** 63


def _int(value: Any) -> int | None:
    """An integer that fits a span attribute (OTLP and the store hold 64-bit integers)."""
    if isinstance(value, int) and not isinstance(value, bool) and -_INT64 <= value < _INT64:
        return value
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def view_openai(body: dict[str, Any]) -> ResponseView:
    choices = body.get("choices") or []
    first = choices[0] if choices and isinstance(choices[0], dict) else {}
    message = first.get("message") or {}
    usage = body.get("usage") or {}
    lp = first.get("logprobs")
    return ResponseView(
        response_id=body.get("id"),
        model=body.get("model"),
        text=message.get("content") if isinstance(message.get("content"), str) else None,
        tool_calls=[c for c in (message.get("tool_calls") or []) if isinstance(c, dict)],
        finish_reasons=[str(c.get("finish_reason")) for c in choices
                        if isinstance(c, dict) and c.get("finish_reason") is not None],
        input_tokens=_int(usage.get("prompt_tokens")),
        output_tokens=_int(usage.get("completion_tokens")),
        logprobs=lp.get("content") if isinstance(lp, dict) and isinstance(lp.get("content"), list) else None,
    )


def view_anthropic(body: dict[str, Any]) -> ResponseView:
    blocks = [b for b in (body.get("content") or []) if isinstance(b, dict)]
    text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    calls = [{"id": b.get("id"), "type": "function",
              "function": {"name": b.get("name"), "arguments": json.dumps(b.get("input"))}}
             for b in blocks if b.get("type") == "tool_use"]
    usage = body.get("usage") or {}
    return ResponseView(
        response_id=body.get("id"), model=body.get("model"), text=text, tool_calls=calls,
        finish_reasons=[str(body["stop_reason"])] if body.get("stop_reason") else [],
        input_tokens=_int(usage.get("input_tokens")), output_tokens=_int(usage.get("output_tokens")),
    )


def _message(m: dict[str, Any]) -> dict[str, Any]:
    """A message as the signals read it: a ``tool_calls`` that is not a list is not tool calls."""
    if m.get("tool_calls") is not None and not isinstance(m["tool_calls"], list):
        return {k: v for k, v in m.items() if k != "tool_calls"}
    return m


def normalise_request(body: Any) -> dict[str, Any]:
    """The fields of a request body the injector reads, each of the type it expects or absent.

    Agents send whatever their code builds (``"tools": 5``, ``"messages": "x"``, ``"model": {}``);
    the request itself always leaves untouched, and annotation reads only this view, so no value
    a provider would reject can make the injector fail.
    """
    req = body if isinstance(body, dict) else {}
    out: dict[str, Any] = {"stream": req.get("stream") is True}
    if isinstance(req.get("model"), str):
        out["model"] = req["model"]
    if isinstance(req.get("messages"), list):
        out["messages"] = [_message(m) for m in req["messages"] if isinstance(m, dict)]
    if isinstance(req.get("tools"), list):
        out["tools"] = [t for t in req["tools"] if isinstance(t, dict)]
    if isinstance(req.get("system"), str | list):  # Anthropic system instructions
        out["system"] = req["system"]
    max_tokens = _int(req.get("max_tokens", req.get("max_completion_tokens")))
    if max_tokens is not None:
        out["max_tokens"] = max_tokens
    temperature = _number(req.get("temperature"))
    if temperature is not None:
        out["temperature"] = temperature
    if isinstance(req.get("response_format"), dict):
        out["response_format"] = req["response_format"]
    return out


class Conversation:
    """One episode's conversation as far as its last request: digests and text kept per message.

    An agent re-sends the whole conversation on every call, so digesting and case-folding it
    from the start each time is quadratic in the episode's length. This keeps, per message of the
    last request, the running digest and the case-folded text; the next request reuses the
    longest prefix of messages equal to the last one (a C-level dict comparison) and only
    digests and folds what is new. The digest is a chain over canonical per-message JSON, so the
    same messages give the same digest whether computed incrementally or from scratch.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._messages: list[Any] = []
        self._chain: list[str] = [""]
        self._texts: list[str | None] = []

    def update(self, messages: list[Any]) -> tuple[str, str]:
        """(digest, case-folded text) of ``messages``, reusing the previous request's prefix."""
        with self._lock:
            prev, chain, texts = self._messages, self._chain, self._texts
            p = 0
            limit = min(len(prev), len(messages))
            while p < limit and messages[p] == prev[p]:
                p += 1
            chain, texts = chain[:p + 1], texts[:p]
            for m in messages[p:]:
                chain.append(signals.digest(chain[-1] + signals.canonical_json(m)))
                texts.append(signals.message_text([m]))
            self._messages, self._chain, self._texts = list(messages), chain, texts
        return chain[-1], "\n".join(t for t in texts if t is not None)


def conversation_digest(messages: list[Any]) -> str:
    """The request digest of ``messages`` computed from scratch (equal to ``Conversation``'s)."""
    return Conversation().update(messages)[0]


def request_attributes(provider: str, body: Any, *, normalised: bool = False,
                       conversation: Conversation | None = None, capture: bool | None = None) -> dict[str, Any]:
    """Attributes of a request body (raw, or already normalised with ``normalised=True``).

    ``conversation`` carries the episode's digests forward; ``capture`` is the content-capture
    setting read once for the call (read here when not given).
    """
    req = body if normalised else normalise_request(body)
    messages = req.get("messages", [])
    attrs: dict[str, Any] = {
        A.GEN_AI_OPERATION_NAME: A.OP_CHAT,
        A.GEN_AI_PROVIDER_NAME: provider,
        A.GEN_AI_REQUEST_STREAM: req.get("stream", False),
        A.REQUEST_MESSAGE_COUNT: len(messages),
        A.REQUEST_TOOL_COUNT: len(req.get("tools", [])),
    }
    if "model" in req:
        attrs[A.GEN_AI_REQUEST_MODEL] = req["model"]
    if "max_tokens" in req:
        attrs[A.GEN_AI_REQUEST_MAX_TOKENS] = req["max_tokens"]
    if "temperature" in req:
        attrs[A.GEN_AI_REQUEST_TEMPERATURE] = req["temperature"]
    attrs.update(signals.request_format_signals(req))
    try:
        attrs[A.REQUEST_DIGEST] = (conversation or Conversation()).update(messages)[0]
        if content_capture_enabled() if capture is None else capture:
            inputs, instructions = genai_messages.input_messages(provider, req)
            attrs[A.GEN_AI_INPUT_MESSAGES] = json.dumps(inputs, ensure_ascii=False)
            if instructions:
                attrs[A.GEN_AI_SYSTEM_INSTRUCTIONS] = json.dumps(instructions, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        pass  # nested past what the encoder takes: the counts above still describe the request
    return attrs


def entropy_attributes(tokens: list[dict[str, Any]] | None) -> dict[str, Any]:
    """Entropy of each generated token from its top-k alternatives, and the mass they cover.

    The top-k list misses the tail of the distribution; the entropy is computed over the covered
    part only (an underestimate bounded by the missing mass) and the covered mass is reported so
    readers can judge it.
    """
    if not tokens:
        return {}
    entropies: list[float] = []
    masses: list[float] = []
    for tok in tokens:
        tops = tok.get("top_logprobs") if isinstance(tok, dict) else None
        if not tops:
            continue
        probs = [math.exp(t["logprob"]) for t in tops
                 if isinstance(t, dict) and isinstance(t.get("logprob"), int | float)
                 and math.isfinite(t["logprob"])]
        if not probs:
            continue
        entropies.append(-sum(p * math.log(p) for p in probs if p > 0))
        masses.append(sum(probs))
    if not entropies:
        return {}
    return {
        A.LOGPROBS_ENTROPY_MEAN: sum(entropies) / len(entropies),
        A.LOGPROBS_ENTROPY_MAX: max(entropies),
        A.LOGPROBS_ENTROPY_LAST: entropies[-1],
        A.LOGPROBS_TOP_MASS: sum(masses) / len(masses),
        A.LOGPROBS_TOKENS: len(entropies),
    }


def response_attributes(v: ResponseView, request_tools: list[dict[str, Any]] | None, *,
                        capture: bool | None = None) -> dict[str, Any]:
    """Attributes describing what the agent received (``capture``: as for ``request_attributes``)."""
    attrs: dict[str, Any] = {}
    if v.response_id:
        attrs[A.GEN_AI_RESPONSE_ID] = str(v.response_id)
    if v.model:
        attrs[A.GEN_AI_RESPONSE_MODEL] = str(v.model)
    attrs[A.GEN_AI_RESPONSE_FINISH_REASONS] = list(v.finish_reasons)
    attrs.update(usage_attributes(v))
    attrs.update(signals.content_signals(v.text))
    attrs.update(signals.tool_call_signals(v.tool_calls, request_tools))
    attrs[A.RESPONSE_DIGEST] = signals.canonical_json_digest({"text": v.text or "", "tools": [
        [(c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments")]
        for c in v.tool_calls]})
    attrs.update(entropy_attributes(v.logprobs))
    if content_capture_enabled() if capture is None else capture:
        message = genai_messages.output_message(v.text, v.tool_calls, v.finish_reasons)
        attrs[A.GEN_AI_OUTPUT_MESSAGES] = json.dumps([message], ensure_ascii=False)
    return attrs


def usage_attributes(v: ResponseView) -> dict[str, Any]:
    """The token usage a completion reports (what the GenAI metrics count)."""
    attrs: dict[str, Any] = {}
    if v.input_tokens is not None:
        attrs[A.GEN_AI_USAGE_INPUT_TOKENS] = v.input_tokens
    if v.output_tokens is not None:
        attrs[A.GEN_AI_USAGE_OUTPUT_TOKENS] = v.output_tokens
    return attrs


def original_attributes(v: ResponseView, digest: str) -> dict[str, Any]:
    """What the provider really sent, kept as ground truth beside what the agent saw."""
    attrs: dict[str, Any] = {A.ORIGINAL_FINISH_REASONS: list(v.finish_reasons), A.ORIGINAL_DIGEST: digest}
    if v.input_tokens is not None:
        attrs[A.ORIGINAL_INPUT_TOKENS] = v.input_tokens
    if v.output_tokens is not None:
        attrs[A.ORIGINAL_OUTPUT_TOKENS] = v.output_tokens
    return attrs
