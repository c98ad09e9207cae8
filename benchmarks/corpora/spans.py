"""Writing EpisodeTrace objects out as real OpenTelemetry spans into a trace store.

Simulated corpora, the benchmark and the tests go through the same path as a live agent: the OTel
SDK creates the spans, the project's DuckDB exporter stores them, the store loader reads them
back. Only timings and attributes come from the episode; span and trace ids are the SDK's own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

from agentchaos_otel import attributes as A
from agentchaos_otel.records import EpisodeTrace
from agentchaos_otel.store.exporter import DuckDBSpanExporter


def write_episodes(episodes: Iterable[EpisodeTrace], path: str | os.PathLike[str], *,
                   agent_name: str = "sim-agent") -> int:
    """Export episodes as spans into ``path``; returns the number of episodes written."""
    provider = TracerProvider()
    exporter = DuckDBSpanExporter(path)
    provider.add_span_processor(BatchSpanProcessor(exporter, max_export_batch_size=2048,
                                                   max_queue_size=1 << 20, schedule_delay_millis=60_000))
    tracer = provider.get_tracer("benchmarks.corpora.spans")
    n = 0
    try:
        for ep in episodes:
            start = ep.steps[0].start_ns - 1000 if ep.steps else 1
            end = ep.steps[-1].end_ns + 1000 if ep.steps else 2
            root_attrs = {A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT, A.GEN_AI_AGENT_NAME: agent_name,
                          **{k: v for k, v in ep.attributes.items() if v is not None}}
            if ep.task_id is not None:
                root_attrs[A.TASK_ID] = ep.task_id
            if ep.condition is not None:
                root_attrs[A.CONDITION] = ep.condition
            if ep.seed is not None:
                root_attrs[A.SEED] = ep.seed
            if ep.success is not None:
                root_attrs[A.EPISODE_SUCCESS] = ep.success
            root = tracer.start_span(A.agent_span_name(agent_name), kind=SpanKind.INTERNAL,
                                     attributes=root_attrs, start_time=start)
            ctx = trace.set_span_in_context(root)
            for s in ep.steps:
                kind = SpanKind.CLIENT if s.kind == "llm" else SpanKind.INTERNAL
                span = tracer.start_span(s.name, context=ctx, kind=kind, start_time=s.start_ns,
                                         attributes={k: v for k, v in s.attributes.items() if v is not None})
                if s.status_code == "ERROR":
                    span.set_status(Status(StatusCode.ERROR, s.error_type or ""))
                span.end(end_time=s.end_ns)
            root.end(end_time=end)
            n += 1
    finally:
        provider.force_flush()
        provider.shutdown()
    return n
