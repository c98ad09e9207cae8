"""Span processor that puts every LLM and tool span in its episode's step order.

Steps are numbered at span start, from the task's bound episode, so the numbering is the order
in which the agent started its calls, shared by LLM and tool spans, and isolated per task.
"""

from __future__ import annotations

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from agentchaos_otel import attributes as A
from agentchaos_otel.inject.binding import active_state

STEP_OPERATIONS = frozenset({A.OP_CHAT, A.OP_EXECUTE_TOOL, "text_completion", "generate_content"})
_OPENINFERENCE_KIND = "openinference.span.kind"
_OPENINFERENCE_STEP_KINDS = frozenset({"LLM", "TOOL"})


class EpisodeSpanProcessor(SpanProcessor):
    """Adds ``agentchaos.step`` and ``agentchaos.task.id`` to LLM and tool spans at start."""

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        attrs = span.attributes or {}
        op = attrs.get(A.GEN_AI_OPERATION_NAME)
        if op not in STEP_OPERATIONS and attrs.get(_OPENINFERENCE_KIND) not in _OPENINFERENCE_STEP_KINDS:
            return
        if A.STEP in attrs:
            return
        state = active_state()
        if state is None:
            return
        parent = trace.get_current_span(parent_context)
        parent_attrs = parent.attributes if isinstance(parent, ReadableSpan) else None
        if parent_attrs and parent_attrs.get(A.GEN_AI_OPERATION_NAME) == op and A.STEP in parent_attrs:
            # A GenAI span nested in another of the same operation (two instrumentations of the
            # same call) is the same step, not a new one.
            span.set_attribute(A.STEP, parent_attrs[A.STEP])
        else:
            span.set_attribute(A.STEP, state.next_step())
        if state.task_id is not None:
            span.set_attribute(A.TASK_ID, state.task_id)

    def on_end(self, span: ReadableSpan) -> None:
        return None

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
