"""A SpanExporter wrapper that redacts credentials before spans leave for another backend.

The DuckDB store redacts its rows itself, but an OTLP exporter sends the SDK's spans as they are:
wrapping it (``RedactingSpanExporter(OTLPSpanExporter())``) gives Jaeger, Tempo or a collector the
same guarantee as the local file. ``agentchaos_otlp`` (entry point ``opentelemetry_traces_exporter``)
is the standard OTLP/HTTP exporter behind this wrapper, for zero-code use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Link, Status

from agentchaos_otel import redact


def _attrs(attrs: Any) -> tuple[dict[str, Any], bool]:
    """Redacted attributes and whether anything changed."""
    original = dict(attrs or {})
    cleaned = redact.redact_attributes(original)
    return cleaned, cleaned != original


def redact_span(span: ReadableSpan) -> ReadableSpan:
    """``span`` itself when it holds nothing to redact, else a redacted copy."""
    attributes, changed = _attrs(span.attributes)
    events = []
    for e in span.events:
        ea, c = _attrs(e.attributes)
        name = redact.redact_text(e.name)
        changed |= c or name != e.name
        events.append(Event(name, ea, timestamp=e.timestamp, limit=None))
    links = []
    for link in span.links:
        la, c = _attrs(link.attributes)
        changed |= c
        links.append(Link(link.context, la))
    resource = span.resource
    if resource is not None:
        ra, c = _attrs(resource.attributes)
        if c:
            resource, changed = Resource(ra, resource.schema_url), True
    name = redact.redact_text(span.name)
    status = span.status
    if status.description:
        description = redact.redact_text(status.description)
        if description != status.description:
            status, changed = Status(status.status_code, description), True
    if not changed and name == span.name:
        return span
    return ReadableSpan(name=name, context=span.context, parent=span.parent, resource=resource,
                        attributes=attributes, events=events, links=links, kind=span.kind,
                        status=status, start_time=span.start_time, end_time=span.end_time,
                        instrumentation_scope=span.instrumentation_scope)


class RedactingSpanExporter(SpanExporter):
    """Hands ``exporter`` redacted copies of the spans (only those that need it are copied)."""

    def __init__(self, exporter: SpanExporter) -> None:
        self.exporter = exporter

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.exporter.export([redact_span(s) for s in spans])

    def shutdown(self) -> None:
        self.exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.exporter.force_flush(timeout_millis)


class RedactingOTLPSpanExporter(RedactingSpanExporter):
    """The OTLP span exporter the usual ``OTEL_EXPORTER_OTLP_*`` variables ask for (gRPC or
    HTTP/protobuf, see ``agentchaos_otel.otlp_exporters``), redacted."""

    def __init__(self, **kwargs: Any) -> None:
        from agentchaos_otel.otlp_exporters import span_exporter_from_env

        super().__init__(span_exporter_from_env(**kwargs))
