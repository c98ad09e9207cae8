"""The metrics half of ``configure()``: a meter provider, its readers, and the span-fed counters.

A process that already has an SDK meter provider keeps it (our instruments report through the
user's pipeline). Otherwise one is created when something would read it: the user's OTLP metrics
pipeline (``OTEL_EXPORTER_OTLP_[METRICS_]ENDPOINT``, protocol by ``agentchaos_otel.otlp_exporters``) and/or
a Prometheus ``/metrics`` endpoint (``AGENTCHAOS_PROMETHEUS_PORT`` or ``prometheus_port=``).

Fault and episode counters are fed by a span processor from the attributes our spans carry,
so they count exactly what the trace store records, also for spans of other instrumentations
that carry our fault attributes; wrapper spans (another instrumentation's view of one of our
steps, carrying a mirror of its attributes) are skipped so nothing is counted twice.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from typing import Any

from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor

from agentchaos_otel import attributes as A
from agentchaos_otel.trace import metrics as instruments
from agentchaos_otel.trace.kinds import AGENT, span_role

log = logging.getLogger(__name__)

PROMETHEUS_PORT_ENV = "AGENTCHAOS_PROMETHEUS_PORT"
PROMETHEUS_HOST_ENV = "AGENTCHAOS_PROMETHEUS_HOST"

_prometheus_lock = threading.Lock()
_prometheus: dict[str, Any] = {}  # one registry collector and one HTTP server per process


class MetricsSpanProcessor(SpanProcessor):
    """Counts injected faults and ended episodes from the spans as they end."""

    def on_end(self, span: ReadableSpan) -> None:
        try:
            attrs = span.attributes or {}
            if attrs.get(A.STEP_WRAPPED_ATTEMPTS):
                return
            if attrs.get(A.FAULT_INJECTED) is True:
                changed = attrs.get(A.FAULT_CHANGED)
                instruments.record_fault(attrs.get(A.FAULT_TYPE), attrs.get(A.FAULT_TARGET),
                                         changed if isinstance(changed, bool) else None)
            if span.parent is None and span_role(attrs) == AGENT:
                success = attrs.get(A.EPISODE_SUCCESS)
                instruments.record_episode(success if isinstance(success, bool) else None,
                                           attrs.get(A.CONDITION))
        except Exception:  # fail open: metrics never break tracing
            log.debug("metrics processor skipped a span", exc_info=True)


def prometheus_port_from_env() -> int | None:
    raw = os.environ.get(PROMETHEUS_PORT_ENV, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) > 65535:
        raise ValueError(f"{PROMETHEUS_PORT_ENV}={raw!r} is not a port number")
    return int(raw)


def _prometheus_reader(port: int, host: str) -> tuple[Any, int]:
    """The process's Prometheus reader and the port its /metrics endpoint listens on."""
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from prometheus_client import start_http_server

    with _prometheus_lock:
        if "reader" not in _prometheus:
            try:
                server, _thread = start_http_server(port, addr=host)
            except OSError as exc:
                raise OSError(f"cannot serve Prometheus metrics on {host}:{port} ({exc.strerror or exc})") from None
            _prometheus["server"] = server
            _prometheus["reader"] = PrometheusMetricReader()
        return _prometheus["reader"], int(_prometheus["server"].server_port)


@dataclass
class MetricsHandle:
    provider: Any
    owns_provider: bool
    prometheus_port: int | None = None

    def shutdown(self) -> None:
        if self.owns_provider:
            self.provider.shutdown()


def setup_metrics(*, otlp: bool | None, prometheus_port: int | None, prometheus_host: str | None,
                  resource: Resource | None) -> MetricsHandle | None:
    """Use the process's meter provider, or create one when OTLP or Prometheus would read it."""
    current = metrics.get_meter_provider()
    port = prometheus_port if prometheus_port is not None else prometheus_port_from_env()
    if isinstance(current, MeterProvider):
        if port is not None:
            log.warning("the process already has a meter provider; add a Prometheus reader to it yourself "
                        "(%s is ignored)", PROMETHEUS_PORT_ENV)
        return MetricsHandle(current, owns_provider=False)
    from agentchaos_otel.otlp_exporters import otlp_configured

    readers: list[Any] = []
    exporters = os.environ.get("OTEL_METRICS_EXPORTER", "otlp").lower()
    if otlp or (otlp is None and otlp_configured("metrics") and "otlp" in exporters):
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

        from agentchaos_otel.otlp_exporters import metric_exporter_from_env

        readers.append(PeriodicExportingMetricReader(metric_exporter_from_env()))
    bound = None
    if port is not None:
        host = prometheus_host or os.environ.get(PROMETHEUS_HOST_ENV) or "127.0.0.1"
        reader, bound = _prometheus_reader(port, host)
        readers.append(reader)
    if not readers:
        return None
    provider = MeterProvider(resource=resource or Resource.create(), metric_readers=readers)
    metrics.set_meter_provider(provider)
    return MetricsHandle(provider, owns_provider=True, prometheus_port=bound)
