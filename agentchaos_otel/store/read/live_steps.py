"""A finished span as the step the store's ``steps`` view would give, for analysis that runs live.

Live diagnosis and live prediction see spans before they reach the store; both turn them into
``StepRecord`` here, by the view's own rules (which spans are steps, from their final attributes;
a span paired with ours as the same call is not; ``error_type`` from ``error.type`` or else the
exception event of a failed span; a step's number is its rank in start order, ``in_start_order``),
so a live verdict or score equals what the same analysis says later from ``traces.duckdb``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan

from agentchaos_otel import attributes as A
from agentchaos_otel.records import StepRecord
from agentchaos_otel.store.exporter import clean_attributes
from agentchaos_otel.trace.kinds import AGENT, span_role, step_kind
from agentchaos_otel.trace.processors import is_duplicate


def span_step_kind(attributes: Mapping[str, Any] | None, span_kind: Any = None) -> str | None:
    """'llm', 'tool' or None, by the ``steps`` view's rule.

    A span that encloses our span of the same step (another instrumentation's span around the
    SDK call, see ``trace.processors``) is not a step of its own: the span under it is. Neither
    is an MCP server's span of a request (``span_kind`` SERVER, as the view reads the stored
    kind): an in-process server's ``execute_tool`` span is the tool as the server sees it, and
    without the kind it would be counted live as a second step of the same call.
    """
    if attributes and attributes.get(A.STEP_WRAPPED_ATTEMPTS):
        return None
    return step_kind(attributes, span_kind)


def is_episode_root(attributes: Mapping[str, Any] | None) -> bool:
    """An agent span by the views' rule (``agentchaos.episode.root`` first, whatever else it carries)."""
    return span_role(attributes) == AGENT


def in_start_order(records: list[StepRecord]) -> list[StepRecord]:
    """An episode's step records numbered by their rank in start order, as the ``steps`` view does.

    The ``agentchaos.step`` written at span start equals that rank except for a span whose kind
    was known only after a later step had started (a step nested in a span classified late);
    analysis that collects an episode's steps live renumbers them here to agree with the store.
    """
    ordered = sorted(records, key=lambda r: (r.start_ns, r.span_id))
    return [r if r.step == i else dataclasses.replace(r, step=i) for i, r in enumerate(ordered)]


def _error_type(span: ReadableSpan, attrs: Mapping[str, Any]) -> str | None:
    if attrs.get(A.ERROR_TYPE):
        return str(attrs[A.ERROR_TYPE])
    if span.status.status_code.name == "ERROR":
        for e in span.events:
            if (e.attributes or {}).get(A.EXCEPTION_TYPE):
                return str(e.attributes[A.EXCEPTION_TYPE])
    return None


def step_from_span(span: ReadableSpan, default_step: int, *,
                   keys: Collection[str] | None = None) -> StepRecord | None:
    """The step record of a finished LLM or tool span (None for other spans and wrappers).

    ``keys`` keeps only those attributes and no events: cheaper, and blind at once when no
    ground-truth key is among them. Without it every storable attribute and event is kept.
    """
    raw = span.attributes or {}
    kind = span_step_kind(raw, span.kind)
    if kind is None or (span.context is not None and is_duplicate(span.context.span_id)):
        return None
    if keys is None:
        attrs = clean_attributes(raw)
        events = [{"name": e.name, "time_ns": e.timestamp, "attributes": clean_attributes(e.attributes)}
                  for e in span.events]
    else:
        every = dict(raw)  # one pass over the SDK mapping is cheaper than a lookup per key
        attrs = {key: every[key] for key in keys if key in every}
        events = []
    step = raw.get(A.STEP)
    ctx = span.context
    return StepRecord(
        step=step if isinstance(step, int) and not isinstance(step, bool) else default_step,
        span_id=format(ctx.span_id, "016x") if ctx is not None else "", kind=kind, name=span.name,
        start_ns=int(span.start_time or 0), end_ns=int(span.end_time or span.start_time or 0),
        status_code=span.status.status_code.name, error_type=_error_type(span, raw), attributes=attrs,
        events=events,
    )
