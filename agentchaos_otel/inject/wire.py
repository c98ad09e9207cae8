"""One adapter per provider wire format, chosen once per call, so the call logic has no provider branches.

An intercepted call needs the same things from whichever format it speaks: whether a request
is one of its calls, the request's normalised fields and their attributes, the provider-neutral
view of a completion and the digest the agent's view of it reduces to, whether a body has tool
calls, how to rewrite it under a fault, the error response a status fault sends, the signals of
a body that failed to carry an answer, and for streams how to assemble events into a body,
render a body back into events, fault the event sequence and recognise its end. Each format is
one ``WireFormat`` subclass; ``for_request`` picks the adapter when a request is recognised and
``LLMCall`` asks only it from then on.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel import signals
from agentchaos_otel.faults import anthropic as anthropic_faults
from agentchaos_otel.faults import http as http_faults
from agentchaos_otel.faults import llm_response
from agentchaos_otel.faults import messages_stream as messages_sse
from agentchaos_otel.faults import stream as chat_sse
from agentchaos_otel.faults.catalog import FaultSpec
from agentchaos_otel.sse import SSEEvent
from agentchaos_otel.trace import annotate


class WireFormat:
    """What the per-call logic asks of a provider format; one instance per format (``ADAPTERS``)."""

    provider: str = ""

    # -- requests --------------------------------------------------------------------------------
    def matches(self, path: str, headers: Any) -> bool:
        """Whether a POST to ``path`` (trailing slash removed) with ``headers`` is a call of this format."""
        raise NotImplementedError

    def parse_request(self, request: Any) -> tuple[dict[str, Any], str]:
        """(the request's normalised fields, why its body could not be read or '').

        The request itself always leaves unchanged; a body that is unread, not JSON or not a JSON
        object gives the empty view and a reason the call records as skipped.
        """
        try:
            body = json.loads(request.content or b"{}")
        except (ValueError, UnicodeDecodeError, RuntimeError) as exc:  # RuntimeError: unread or too deep
            return annotate.normalise_request(None), f"request body is not JSON ({type(exc).__name__})"
        problem = "" if isinstance(body, dict) else "request body is not a JSON object"
        return annotate.normalise_request(body), problem

    def request_attributes(self, req: dict[str, Any], *, capture: bool,
                           conversation: annotate.Conversation) -> dict[str, Any]:
        """Span attributes of a normalised request (``annotate.normalise_request``); captured
        messages are read in this provider's format (``trace.messages.input_messages``)."""
        return annotate.request_attributes(self.provider, req, normalised=True, capture=capture,
                                           conversation=conversation)

    # -- complete responses ----------------------------------------------------------------------
    def view(self, body: dict[str, Any]) -> annotate.ResponseView:
        raise NotImplementedError

    def _agent_view(self, body: dict[str, Any]) -> Any:
        raise NotImplementedError

    def digest(self, body: dict[str, Any]) -> str:
        """Digest of what the agent reads from a completion (ids and timestamps left out).

        Trigger verification compares these before and after a fault: a provider's fresh response
        id or timestamp must not make an unchanged message look changed.
        """
        return signals.canonical_json_digest(self._agent_view(body))

    def body_signals(self, body: dict[str, Any]) -> dict[str, Any]:
        """How a 2xx body failed to carry an answer ({} where the format has no such signals)."""
        return {}

    def has_tool_calls(self, body: dict[str, Any]) -> bool:
        raise NotImplementedError

    def apply_response_fault(self, spec: FaultSpec, body: dict[str, Any], *, rng: random.Random,
                             previous_body: dict[str, Any] | None = None) -> dict[str, Any]:
        raise NotImplementedError

    def error_response(self, spec: FaultSpec, *, model: str | None,
                       rng: random.Random | None) -> http_faults.ErrorResponse | None:
        """The error this provider sends for an HTTP-status fault; None for other request faults."""
        return http_faults.error_response(spec, self.provider, model=model, rng=rng)

    # -- streams ---------------------------------------------------------------------------------
    def assemble_stream(self, events: Iterable[SSEEvent]) -> dict[str, Any]:
        raise NotImplementedError

    def render_stream(self, body: dict[str, Any], upstream: Sequence[SSEEvent]) -> bytes:
        raise NotImplementedError

    def stream_faulter(self, spec: FaultSpec, rng: random.Random) -> Any:
        raise NotImplementedError

    def stream_ended(self, event: SSEEvent) -> bool:
        raise NotImplementedError


# The adapters bind the format's own functions directly (no wrapper frame on the hot path);
# the signatures and meanings are those of ``WireFormat``.
class ChatCompletions(WireFormat):
    """OpenAI chat completions (and every OpenAI-compatible server)."""

    provider = A.PROVIDER_OPENAI
    view = staticmethod(annotate.view_openai)
    body_signals = staticmethod(signals.body_signals)
    has_tool_calls = staticmethod(llm_response.has_tool_calls)
    apply_response_fault = staticmethod(llm_response.apply_response_fault)
    assemble_stream = staticmethod(chat_sse.assemble_chat_completion)
    stream_faulter = staticmethod(chat_sse.StreamFaulter)

    def matches(self, path: str, headers: Any) -> bool:
        return path.endswith("/chat/completions")

    def _agent_view(self, body: dict[str, Any]) -> Any:
        return body.get("choices")

    def render_stream(self, body: dict[str, Any], upstream: Sequence[SSEEvent]) -> bytes:
        # Usage chunks only when the client asked for them (stream_options.include_usage): the SDK
        # would otherwise see a chunk shape the provider never sends it.
        include_usage = any('"usage"' in e.data and '"usage":null' not in e.data.replace(" ", "") for e in upstream)
        return chat_sse.render_chat_completion_sse(body, include_usage=include_usage)

    def stream_ended(self, event: SSEEvent) -> bool:
        return event.is_done


class AnthropicMessages(WireFormat):
    """The Anthropic Messages API."""

    provider = A.PROVIDER_ANTHROPIC
    view = staticmethod(annotate.view_anthropic)
    body_signals = staticmethod(signals.messages_body_signals)
    has_tool_calls = staticmethod(anthropic_faults.has_tool_use)
    apply_response_fault = staticmethod(anthropic_faults.apply_response_fault)
    assemble_stream = staticmethod(messages_sse.assemble_message)
    stream_faulter = staticmethod(messages_sse.MessagesStreamFaulter)
    stream_ended = staticmethod(messages_sse.is_end)

    def matches(self, path: str, headers: Any) -> bool:
        return path.endswith("/messages") and ("anthropic-version" in headers or path.endswith("/v1/messages"))

    def _agent_view(self, body: dict[str, Any]) -> Any:
        return [body.get("content"), body.get("stop_reason")]

    def render_stream(self, body: dict[str, Any], upstream: Sequence[SSEEvent]) -> bytes:
        return messages_sse.render_message_sse(body)


OPENAI = ChatCompletions()
ANTHROPIC = AnthropicMessages()
ADAPTERS: tuple[WireFormat, ...] = (OPENAI, ANTHROPIC)  # asked in this order
_BY_PROVIDER = {w.provider: w for w in ADAPTERS}


def for_request(request: Any) -> WireFormat | None:
    """The adapter of an LLM call's wire format, or None for every other request."""
    if request.method != "POST":
        return None
    path = request.url.path.rstrip("/")
    headers = request.headers
    for adapter in ADAPTERS:
        if adapter.matches(path, headers):
            return adapter
    return None


def for_provider(provider: str) -> WireFormat:
    return _BY_PROVIDER[provider]
