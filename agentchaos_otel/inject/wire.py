"""One adapter per provider wire format, so the per-call logic has no provider branches.

An intercepted call needs the same few things from whichever format it speaks: whether a body
has tool calls, how to rewrite it under a fault, what digest of it the agent's view reduces to,
and for streams how to assemble events into a body, render a body back into events, fault the
event sequence and recognise its end. ``for_provider`` returns the adapter that
``call.recognise`` named.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel import signals
from agentchaos_otel.faults import anthropic as anthropic_faults
from agentchaos_otel.faults import llm_response
from agentchaos_otel.faults import messages_stream as messages_sse
from agentchaos_otel.faults import stream as chat_sse
from agentchaos_otel.faults.catalog import FaultSpec
from agentchaos_otel.sse import SSEEvent
from agentchaos_otel.trace import annotate


@dataclass(frozen=True)
class WireFormat:
    provider: str
    has_tool_calls: Callable[[dict[str, Any]], bool]
    apply_response_fault: Callable[..., dict[str, Any]]
    view: Callable[[dict[str, Any]], annotate.ResponseView]
    assemble_stream: Callable[[Iterable[SSEEvent]], dict[str, Any]]
    render_stream: Callable[[dict[str, Any], Sequence[SSEEvent]], bytes]
    stream_faulter: Callable[[FaultSpec, random.Random], Any]
    stream_ended: Callable[[SSEEvent], bool]
    _agent_view: Callable[[dict[str, Any]], Any]

    def digest(self, body: dict[str, Any]) -> str:
        """Digest of what the agent reads from a completion (ids and timestamps left out).

        Trigger verification compares these before and after a fault: a provider's fresh response
        id or timestamp must not make an unchanged message look changed.
        """
        return signals.canonical_json_digest(self._agent_view(body))


def _render_chat(body: dict[str, Any], upstream: Sequence[SSEEvent]) -> bytes:
    # Usage chunks only when the client asked for them (stream_options.include_usage): the SDK
    # would otherwise see a chunk shape the provider never sends it.
    include_usage = any('"usage"' in e.data and '"usage":null' not in e.data.replace(" ", "") for e in upstream)
    return chat_sse.render_chat_completion_sse(body, include_usage=include_usage)


OPENAI = WireFormat(
    provider=A.PROVIDER_OPENAI,
    has_tool_calls=llm_response.has_tool_calls,
    apply_response_fault=llm_response.apply_response_fault,
    view=annotate.view_openai,
    assemble_stream=chat_sse.assemble_chat_completion,
    render_stream=_render_chat,
    stream_faulter=chat_sse.StreamFaulter,
    stream_ended=lambda e: e.is_done,
    _agent_view=lambda body: body.get("choices"),
)

ANTHROPIC = WireFormat(
    provider=A.PROVIDER_ANTHROPIC,
    has_tool_calls=anthropic_faults.has_tool_use,
    apply_response_fault=anthropic_faults.apply_response_fault,
    view=annotate.view_anthropic,
    assemble_stream=messages_sse.assemble_message,
    render_stream=lambda body, _upstream: messages_sse.render_message_sse(body),
    stream_faulter=messages_sse.MessagesStreamFaulter,
    stream_ended=messages_sse.is_end,
    _agent_view=lambda body: [body.get("content"), body.get("stop_reason")],
)

_BY_PROVIDER = {w.provider: w for w in (OPENAI, ANTHROPIC)}


def for_provider(provider: str) -> WireFormat:
    return _BY_PROVIDER[provider]
