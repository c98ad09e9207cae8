"""Shared builders for the trace-store tests: real SDK spans written by the real exporter."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

from agentchaos_otel import attributes as A
from agentchaos_otel.store.exporter import DuckDBSpanExporter


@dataclass
class Step:
    kind: str  # "llm" | "tool"
    attrs: dict[str, Any] = field(default_factory=dict)
    error: str | None = None  # error.type; sets status ERROR
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


@contextmanager
def provider(path: Path | None, service: str = "store-test",
             **exporter_kw: Any) -> Iterator[tuple[Tracer, InMemorySpanExporter, DuckDBSpanExporter | None]]:
    """A tracer whose spans go to memory and, in one batch at the end, to a DuckDB exporter."""
    tp = TracerProvider(resource=Resource({A.SERVICE_NAME: service}))
    mem = InMemorySpanExporter()
    tp.add_span_processor(SimpleSpanProcessor(mem))
    exp = None
    if path is not None:
        exp = DuckDBSpanExporter(path, **exporter_kw)
        tp.add_span_processor(BatchSpanProcessor(exp, schedule_delay_millis=60_000))
    try:
        yield tp.get_tracer("agentchaos-store-test"), mem, exp
    finally:
        tp.shutdown()


def emit_episode(tracer: Tracer, task_id: str, steps: list[Step], *, condition: str | None = "none",
                 seed: int = 0, success: bool | None = True, agent: str = "ref",
                 simulated: bool | None = None, error: str | None = None) -> str:
    """One agent episode the way the core API records it; returns the trace id (hex)."""
    attrs: dict[str, Any] = {A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT, A.GEN_AI_AGENT_NAME: agent,
                             A.TASK_ID: task_id, A.SEED: seed}
    if condition is not None:
        attrs[A.CONDITION] = condition
    if simulated is not None:
        attrs[A.SIMULATED] = simulated
    with tracer.start_as_current_span(A.agent_span_name(agent), attributes=attrs) as root:
        for i, st in enumerate(steps):
            base: dict[str, Any] = {A.STEP: i, A.TASK_ID: task_id}
            if st.kind == "llm":
                base[A.GEN_AI_OPERATION_NAME] = A.OP_CHAT
                name, kind = A.chat_span_name(st.attrs.get(A.GEN_AI_REQUEST_MODEL, "m")), SpanKind.CLIENT
            else:
                base[A.GEN_AI_OPERATION_NAME] = A.OP_EXECUTE_TOOL
                name, kind = A.tool_span_name(st.attrs.get(A.GEN_AI_TOOL_NAME, "t")), SpanKind.INTERNAL
            with tracer.start_as_current_span(name, kind=kind, attributes={**base, **st.attrs}) as sp:
                for ev_name, ev_attrs in st.events:
                    sp.add_event(ev_name, ev_attrs)
                if st.error:
                    sp.set_attribute(A.ERROR_TYPE, st.error)
                    sp.set_status(Status(StatusCode.ERROR, st.error))
        if success is not None:
            root.set_attribute(A.EPISODE_SUCCESS, success)
        if error is not None:
            root.set_attribute(A.EPISODE_ERROR, error)
        return format(root.get_span_context().trace_id, "032x")


def finished(mem: InMemorySpanExporter) -> tuple[ReadableSpan, ...]:
    return tuple(mem.get_finished_spans())
