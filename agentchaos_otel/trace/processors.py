"""Span processor that puts every LLM and tool span in its episode's step order, whoever traced it.

Steps are numbered at span start, from the task's bound episode, so the numbering is the order
in which the agent started its calls, shared by LLM and tool spans, and isolated per task.

**One logical call, two spans.** Most agents already have GenAI tracing around the SDK call
(OpenInference ``ChatCompletion``, the official openai-v2 ``chat {model}``, OpenLLMetry
``openai.chat`` / ``anthropic.chat``, the anthropic SDK's own ``anthropic.messages.create``)
and our transport opens its ``chat`` span for each HTTP attempt under it. Our span stays the
HTTP attempt (an SDK retry is a second attempt, as without the other instrumentation); when a
step span starts directly under a still-open step span of the same kind (LLM under LLM, tool
under tool), or, for instrumentations that start their span without making it current
(OpenLLMetry's ``anthropic.chat``), beside a still-open foreign one with the same parent:

- it takes the enclosing span's step if it is the first span under it, a new step otherwise
  (a retry), so the numbering is the one the agent gets without the other instrumentation;
- it records ``agentchaos.step.wrapper_span_id`` (the enclosing span) and the enclosing span
  counts ``agentchaos.step.wrapped_attempts``;
- when it ends, its ``agentchaos.*`` attributes (ground truth, signals; not its step) are
  mirrored onto the enclosing span while that is still open, so a Phoenix or Jaeger user sees
  them on the span their tool shows; an attempt without a fault never hides an earlier
  attempt's fault.

The store's views, the diagnosers' input and the live predictor count the inner spans as the
steps and leave out the enclosing one; a foreign LLM span with nothing of ours below it
(imported traces, no injector) is itself the call.

**Episodes without ``episode()``** (zero-code): each root span of the application (its own
root span, a web request, an agent framework's ``invoke_agent``) gets a fresh copy of the
process-wide plan bound to its trace, so every root trace has its own schedule and step
numbering, and carries the plan's condition, seed and experiment. An LLM call with no span of
the application around it is its own trace and keeps the process-wide state.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from agentchaos_otel import attributes as A
from agentchaos_otel import redact
from agentchaos_otel.plans import binding
from agentchaos_otel.trace.kinds import step_kind

OWN_SCOPE = "agentchaos_otel"
# Copied onto the enclosing span as they are: everything of ours except where the step sits.
_NOT_MIRRORED = frozenset({A.STEP, A.STEP_WRAPPER_SPAN_ID, A.STEP_WRAPPED_ATTEMPTS, A.TASK_ID})


def _span_id(span: ReadableSpan) -> str:
    return format(span.get_span_context().span_id, "016x")


def _is_ours(span: ReadableSpan) -> bool:
    scope = span.instrumentation_scope
    return scope is not None and scope.name == OWN_SCOPE


def _sibling_key(span: ReadableSpan) -> tuple[int, int]:
    return span.get_span_context().trace_id, span.parent.span_id if span.parent is not None else 0


# Attribute keys repeat across spans: the name check runs once per distinct key (bounded).
_is_secret_name = functools.lru_cache(maxsize=4096)(redact.is_secret_name)


def _redact_credential_headers(span: Span) -> None:
    """Mask credential-named attributes (captured ``Authorization`` and API-key headers) at start.

    HTTP instrumentations set captured request headers as start attributes; masking them here,
    before any exporter of the process sees the span, keeps keys out of the user's own exporters
    too, without rewriting OTel's sanitize variables in the environment.
    """
    attrs = span.attributes
    if not attrs:
        return
    for key in [k for k in attrs if _is_secret_name(k)]:
        span.set_attribute(key, (redact.MARKER,))


class EpisodeSpanProcessor(SpanProcessor):
    """Adds ``agentchaos.step`` and ``agentchaos.task.id`` to LLM and tool spans at start."""

    def __init__(self) -> None:
        self._wrapper_of: dict[int, Span] = {}  # inner span id -> the enclosing span of the same step
        self._foreign_open: dict[tuple[int, int], list[Span]] = {}  # (trace, parent) -> open foreign steps
        self._roots: set[int] = set()  # trace ids this processor bound a state to
        self._lock = threading.Lock()
        self._pending_refusal: str | None = None

    def refuse(self, message: str) -> None:
        """Record ``message`` (why zero-code settings were refused) on the next span to start."""
        self._pending_refusal = message

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        _redact_credential_headers(span)
        if self._pending_refusal is not None:
            message, self._pending_refusal = self._pending_refusal, None
            span.set_attribute(A.INJECTOR_REFUSED, message)
        kind = step_kind(span.attributes)
        parent = span.parent
        if parent is None or parent.is_remote:
            self._bind_root(span, kind)
        if kind is None or A.STEP in (span.attributes or {}):
            return
        state = binding.current_episode() or binding.trace_state(span.get_span_context().trace_id) \
            or binding.process_default()
        if state is None:
            return
        enclosing = self._enclosing(span, kind, parent_context)
        step = None
        if enclosing is not None:
            attempts = int((enclosing.attributes or {}).get(A.STEP_WRAPPED_ATTEMPTS, 0))
            enclosing.set_attribute(A.STEP_WRAPPED_ATTEMPTS, attempts + 1)
            span.set_attribute(A.STEP_WRAPPER_SPAN_ID, _span_id(enclosing))
            with self._lock:
                self._wrapper_of[span.get_span_context().span_id] = enclosing
            if attempts == 0:
                step = enclosing.attributes[A.STEP]
        span.set_attribute(A.STEP, state.next_step() if step is None else step)
        if state.task_id is not None:
            span.set_attribute(A.TASK_ID, state.task_id)
        if enclosing is None and not _is_ours(span):
            with self._lock:
                self._foreign_open.setdefault(_sibling_key(span), []).append(span)

    def _enclosing(self, span: Span, kind: str, parent_context: otel_context.Context | None) -> Span | None:
        """The open span of another instrumentation that sees the same step as ``span``, if any."""
        parent = trace.get_current_span(parent_context)
        if isinstance(parent, Span) and parent.is_recording() and step_kind(parent.attributes) == kind \
                and A.STEP in (parent.attributes or {}):
            return parent
        if not _is_ours(span):
            return None
        with self._lock:
            siblings = [c for c in self._foreign_open.get(_sibling_key(span), ())
                        if c.is_recording() and step_kind(c.attributes) == kind]
        unpaired = [c for c in siblings if not (c.attributes or {}).get(A.STEP_WRAPPED_ATTEMPTS)]
        pool = unpaired or siblings  # a sibling already paired takes the retries of its call
        return pool[-1] if pool else None

    def _bind_root(self, span: Span, kind: str | None) -> None:
        """A root span of the application becomes an episode of the process-wide plan."""
        default = binding.process_default()
        if default is None or kind is not None or binding.current_episode() is not None:
            return
        if _is_ours(span):
            return  # our own episode() root: it binds its state itself
        state = default.fresh()
        trace_id = span.get_span_context().trace_id
        binding.bind_trace(trace_id, state)
        with self._lock:
            self._roots.add(trace_id)
        attrs: dict[str, Any] = {A.SEED: state.seed, A.FAULT_EXPERIMENT: state.experiment.name,
                                 A.CONDITION: state.condition or state.plan.name}
        if state.task_id is not None:
            attrs[A.TASK_ID] = state.task_id
        span.set_attributes(attrs)

    def on_end(self, span: ReadableSpan) -> None:
        ctx = span.get_span_context()
        if span.parent is None or span.parent.is_remote:
            with self._lock:
                bound = ctx.trace_id in self._roots
                self._roots.discard(ctx.trace_id)
            if bound:
                binding.unbind_trace(ctx.trace_id)
        with self._lock:
            enclosing = self._wrapper_of.pop(ctx.span_id, None)
            siblings = self._foreign_open.get(_sibling_key(span))
            if siblings is not None and span in siblings:
                siblings.remove(span)
                if not siblings:
                    del self._foreign_open[_sibling_key(span)]
        if enclosing is not None and enclosing.is_recording():
            enclosing.set_attributes(self._mirror(span.attributes or {}, enclosing.attributes or {}))

    @staticmethod
    def _mirror(inner: Any, outer: Any) -> dict[str, Any]:
        keep_outer_fault = bool(outer.get(A.FAULT_INJECTED)) and not inner.get(A.FAULT_INJECTED)
        return {k: v for k, v in inner.items() if k.startswith("agentchaos.") and k not in _NOT_MIRRORED
                and not (keep_outer_fault and k.startswith(A.FAULT_PREFIX))}

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
