"""``configure()``: tracing, the DuckDB store and the injector for a process in one call."""

from __future__ import annotations

import enum
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agentchaos_otel import plugins, settings
from agentchaos_otel.instrumentor import (
    AgentChaosInstrumentor,
    add_episode_processor,
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
    metrics: Any = None  # metrics_setup.MetricsHandle when metrics were set up
    end_hooks: list[Callable[[Any], None]] = field(default_factory=list)

    @property
    def prometheus_port(self) -> int | None:
        """Port of the Prometheus /metrics endpoint this process serves, if any."""
        return getattr(self.metrics, "prometheus_port", None)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return all(p.force_flush(timeout_millis) for p in self.processors)

    def shutdown(self) -> None:
        from agentchaos_otel.episode_scope import END_HOOKS

        for hook in self.end_hooks:
            if hook in END_HOOKS:
                END_HOOKS.remove(hook)
        if self.instrumentor is not None and self.instrumentor.is_instrumented_by_opentelemetry:
            self.instrumentor.uninstrument()
        if self.metrics is not None:
            self.metrics.shutdown()
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


class FromEnvironment(enum.Enum):
    """The default of ``configure(db=...)``: the ``AGENTCHAOS_DB`` variable, else ``traces.duckdb``.

    A sentinel rather than None, because ``db=None`` keeps its meaning: no store.
    """

    DB = "AGENTCHAOS_DB, else traces.duckdb"

    def __repr__(self) -> str:
        return f"<{self.value}>"


FROM_ENVIRONMENT = FromEnvironment.DB


def configure(db: str | os.PathLike[str] | None | FromEnvironment = FROM_ENVIRONMENT,
              plan: Plan | str | Path | None = None, seed: int | None = None, *,
              service_name: str | None = None, otlp: bool | None = None,
              tracer_provider: TracerProvider | None = None, instrument: bool = True,
              predictor: str | os.PathLike[str] | None = None,
              on_alarm: Callable[[Any], None] | None = None, diagnose_live: bool = False,
              metrics: bool = True, prometheus_port: int | None = None,
              prometheus_host: str | None = None, threads: bool = True, mcp: bool = True) -> Handle:
    """Set up tracing for a process that has none, or add to the provider it already has.

    ``db``, ``plan`` and ``seed`` default to the environment (``agentchaos_otel.settings``):
    ``AGENTCHAOS_DB`` (else ``traces.duckdb``; ``db=None``: no store), ``AGENTCHAOS_PLAN`` (else
    no faults) and ``AGENTCHAOS_SEED`` (else 0). An argument given in code wins; a variable that
    is wrong is refused as under zero-code: one line on stderr, the process runs without faults.

    A tracer provider set by the user (or by ``opentelemetry-instrument``) is never replaced: our
    processors and exporter are added to it. OTLP export is added when we create the provider and
    an ``OTEL_EXPORTER_OTLP_*ENDPOINT`` variable is set (or ``otlp=True``); every other
    ``OTEL_*`` variable is honoured by the standard exporter itself. With ``predictor`` (a file
    written by ``agentchaos predict train``) every step is scored live and ``on_alarm`` is called
    when an episode crosses the predictor's threshold.

    ``diagnose_live=True`` runs the rule diagnoser when a failed episode ends and puts the verdict
    on its root span before export. Metrics (``metrics=True``): the GenAI histograms and our
    counters go to the process's meter provider, or to one created here when the OTLP metrics
    variables or ``prometheus_port`` / ``AGENTCHAOS_PROMETHEUS_PORT`` ask for it (the Prometheus
    endpoint binds ``prometheus_host``, default 127.0.0.1).

    ``threads=True`` carries each episode (the OTel context) into ``ThreadPoolExecutor`` and
    ``threading.Thread`` work started inside it, until ``Handle.shutdown``; ``threads=False``
    leaves that to OTel's threading instrumentation (or to no one). ``mcp=True`` traces and faults
    the MCP client sessions of the official ``mcp`` SDK too (``agentchaos_otel.mcp``, docs/mcp.md).
    """
    from agentchaos_otel.store.exporter import DuckDBSpanExporter, batch_processor_sizes

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
        live_predictor = plugins.load(plugins.LIVE, "prediction")
        provider.add_span_processor(live_predictor(predictor, on_alarm=on_alarm))
    if db is FROM_ENVIRONMENT:
        db = settings.DB.value()
    handle = Handle(provider=provider, db=Path(db) if db is not None else None, owns_provider=owns)
    if metrics:
        from agentchaos_otel.metrics_setup import MetricsSpanProcessor, setup_metrics

        handle.metrics = setup_metrics(otlp=otlp, prometheus_port=prometheus_port,
                                       prometheus_host=prometheus_host, resource=getattr(provider, "resource", None))
        if handle.metrics is not None:
            provider.add_span_processor(MetricsSpanProcessor())
    if diagnose_live:
        from agentchaos_otel.episode_scope import END_HOOKS

        live = plugins.load(plugins.LIVE, "diagnosis")()
        provider.add_span_processor(live)
        END_HOOKS.append(live.on_episode_end)
        handle.end_hooks.append(live.on_episode_end)
    if db is not None:
        proc = BatchSpanProcessor(DuckDBSpanExporter(str(db)), **batch_processor_sizes())
        provider.add_span_processor(proc)
        handle.processors.append(proc)
        from agentchaos_otel.store.durability.episode_flush import add_episode_flush

        # Every ended episode is on disk before episode() returns.
        handle.processors.append(add_episode_flush(provider, proc))
    if otlp or (otlp is None and owns and any(os.environ.get(v) for v in _OTLP_ENV)):
        from agentchaos_otel.otlp_exporters import span_exporter_from_env
        from agentchaos_otel.trace.redacting import RedactingSpanExporter

        proc = BatchSpanProcessor(RedactingSpanExporter(span_exporter_from_env()))
        provider.add_span_processor(proc)
        handle.processors.append(proc)
    if instrument:
        instrumentor = AgentChaosInstrumentor()
        if instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.uninstrument()
        chosen: dict[str, Any] = {"plan": plan} if plan is not None else {}  # else the environment's
        instrumentor.instrument(tracer_provider=provider, seed=seed, threads=threads, mcp=mcp, **chosen)
        handle.instrumentor = instrumentor
    return handle
