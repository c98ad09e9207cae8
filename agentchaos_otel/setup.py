"""``configure()``: tracing, the DuckDB store and the injector for a process in one call."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agentchaos_otel.instrumentor import (
    AgentChaosInstrumentor,
    add_episode_processor,
    protect_auth_headers,
)
from agentchaos_otel.plans.plan import Plan

_OTLP_ENV = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


@dataclass
class Handle:
    """What ``configure`` set up; ``shutdown()`` flushes every exporter it added."""

    provider: Any
    db: Path | None
    owns_provider: bool
    processors: list[SpanProcessor] = field(default_factory=list)
    instrumentor: AgentChaosInstrumentor | None = None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return all(p.force_flush(timeout_millis) for p in self.processors)

    def shutdown(self) -> None:
        if self.instrumentor is not None and self.instrumentor.is_instrumented_by_opentelemetry:
            self.instrumentor.uninstrument()
        if self.owns_provider:
            self.provider.shutdown()
        else:
            for p in self.processors:
                p.force_flush()
                p.shutdown()

    def __enter__(self) -> Handle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()


def configure(db: str | os.PathLike[str] | None = "traces.duckdb", plan: Plan | str | Path | None = None,
              seed: int = 0, *, service_name: str | None = None, otlp: bool | None = None,
              tracer_provider: TracerProvider | None = None, instrument: bool = True,
              predictor: str | os.PathLike[str] | None = None,
              on_alarm: Callable[[Any], None] | None = None) -> Handle:
    """Set up tracing for a process that has none, or add to the provider it already has.

    A tracer provider set by the user (or by ``opentelemetry-instrument``) is never replaced: our
    processors and exporter are added to it. OTLP export is added when we create the provider and
    an ``OTEL_EXPORTER_OTLP_*ENDPOINT`` variable is set (or ``otlp=True``); every other
    ``OTEL_*`` variable is honoured by the standard exporter itself. With ``predictor`` (a file
    written by ``agentchaos predict train``) every step is scored live and ``on_alarm`` is called
    when an episode crosses the predictor's threshold.
    """
    from agentchaos_otel.store.exporter import DuckDBSpanExporter

    protect_auth_headers()
    provider: Any = tracer_provider or trace.get_tracer_provider()
    owns = False
    if not hasattr(provider, "add_span_processor"):
        resource = Resource.create({"service.name": service_name or os.environ.get("OTEL_SERVICE_NAME")
                                    or "agentchaos-agent"})
        provider = TracerProvider(resource=resource)
        trace.set_tracer_provider(provider)
        owns = True
    add_episode_processor(provider)
    if predictor is not None:
        from agentchaos_otel.predictors.live import LivePredictorProcessor

        provider.add_span_processor(LivePredictorProcessor(predictor, on_alarm=on_alarm))
    handle = Handle(provider=provider, db=Path(db) if db is not None else None, owns_provider=owns)
    if db is not None:
        proc = BatchSpanProcessor(DuckDBSpanExporter(str(db)))
        provider.add_span_processor(proc)
        handle.processors.append(proc)
    if otlp or (otlp is None and owns and any(os.environ.get(v) for v in _OTLP_ENV)):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        proc = BatchSpanProcessor(OTLPSpanExporter())
        provider.add_span_processor(proc)
        handle.processors.append(proc)
    if instrument:
        instrumentor = AgentChaosInstrumentor()
        if instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.uninstrument()
        instrumentor.instrument(tracer_provider=provider, plan=plan, seed=seed)
        handle.instrumentor = instrumentor
    return handle
