"""OTLP exporters chosen the way the OpenTelemetry specification says, from the standard variables.

The SDK's exporters each read their own endpoint, headers, compression and timeout variables,
but nothing in the SDK picks the *protocol*: ``OTEL_EXPORTER_OTLP_PROTOCOL`` and
``OTEL_EXPORTER_OTLP_{TRACES,METRICS}_PROTOCOL`` are only honoured by auto-instrumentation.
Everything that builds an OTLP exporter in this project (``configure()``, ``agentchaos traces
export``, the metrics pipeline) goes through the functions here, so a process set up for gRPC
exports gRPC everywhere. Explicit arguments win over variables; variables win over defaults;
the signal-specific variable wins over the general one.

``http/json`` is refused with one line: the Python SDK (1.45) ships no OTLP/JSON exporter.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from agentchaos_otel import extras

GRPC = "grpc"
HTTP_PROTOBUF = "http/protobuf"
HTTP_JSON = "http/json"
PROTOCOLS = (GRPC, HTTP_PROTOBUF, HTTP_JSON)
DEFAULT_PROTOCOL = HTTP_PROTOBUF  # the specification's default

_SIGNAL_PATHS = {"traces": "/v1/traces", "metrics": "/v1/metrics"}
_COMPRESSIONS = ("none", "gzip", "deflate")


class OTLPConfigError(ValueError):
    """An OTLP setting the exporters cannot honour; the message is one line for the user."""


def _env(signal: str, name: str) -> str | None:
    """The signal-specific variable if set, else the general one (blank counts as unset)."""
    for key in (f"OTEL_EXPORTER_OTLP_{signal.upper()}_{name}", f"OTEL_EXPORTER_OTLP_{name}"):
        value = os.environ.get(key)
        if value is not None and value.strip():
            return value.strip()
    return None


def resolve_protocol(signal: str = "traces", protocol: str | None = None) -> str:
    chosen = (protocol or _env(signal, "PROTOCOL") or DEFAULT_PROTOCOL).strip().lower()
    if chosen not in PROTOCOLS:
        raise OTLPConfigError(f"OTLP protocol {chosen!r} is not one of {', '.join(PROTOCOLS)}")
    if chosen == HTTP_JSON:
        raise OTLPConfigError("OTLP protocol 'http/json' is not available: the OpenTelemetry Python SDK has no "
                              "OTLP/JSON exporter; use 'http/protobuf' or 'grpc'")
    return chosen


def otlp_configured(signal: str = "traces") -> bool:
    """Whether the environment names an OTLP endpoint for this signal."""
    return _env(signal, "ENDPOINT") is not None


def configured_endpoint(signal: str = "traces", endpoint: str | None = None,
                        protocol: str | None = None) -> str | None:
    """The endpoint an exporter built here would send to (None: the SDK's localhost default).

    For HTTP the general variable and a bare ``scheme://host:port`` get the signal's path, as the
    specification says; a gRPC endpoint is returned as given.
    """
    grpc = resolve_protocol(signal, protocol) == GRPC
    if endpoint:
        return endpoint if grpc else _http_endpoint(signal, endpoint)
    specific = os.environ.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT", "").strip()
    if specific:
        return specific
    general = _env(signal, "ENDPOINT")
    if general is None or grpc:
        return general
    return general.rstrip("/") + _SIGNAL_PATHS[signal]


def _compression(signal: str, value: str | None) -> str | None:
    chosen = value if value is not None else _env(signal, "COMPRESSION")
    if chosen is None:
        return None
    chosen = chosen.strip().lower()
    if chosen not in _COMPRESSIONS:
        raise OTLPConfigError(f"OTLP compression {chosen!r} is not one of {', '.join(_COMPRESSIONS)}")
    return chosen


def _http_endpoint(signal: str, endpoint: str) -> str:
    """An explicit base URL (``http://host:4318``) gets the signal path, as the general variable does."""
    parsed = urlparse(endpoint)
    if not parsed.scheme or not parsed.netloc:
        raise OTLPConfigError(f"OTLP endpoint {endpoint!r} is not a URL (expected http://host:port[/path])")
    if parsed.path in ("", "/"):
        return endpoint.rstrip("/") + _SIGNAL_PATHS[signal]
    return endpoint


def _timeout(signal: str, timeout: float | None) -> float | None:
    """Seconds. The variables hold milliseconds (specification); the SDK exporters take seconds."""
    if timeout is not None:
        return timeout
    raw = _env(signal, "TIMEOUT")
    if raw is None:
        return None
    try:
        ms = float(raw)
    except ValueError:
        raise OTLPConfigError(f"OTLP timeout {raw!r} is not a number of milliseconds") from None
    if ms <= 0:
        raise OTLPConfigError(f"OTLP timeout {raw!r} must be positive")
    return ms / 1000.0


def _kwargs(signal: str, protocol: str, endpoint: str | None, headers: Mapping[str, str] | None,
            timeout: float | None, compression: str | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    comp = _compression(signal, compression)
    if protocol == GRPC:
        grpc = extras.require("grpc", "OTLP over gRPC")
        if comp is not None:
            kwargs["compression"] = {"none": grpc.Compression.NoCompression, "gzip": grpc.Compression.Gzip,
                                     "deflate": grpc.Compression.Deflate}[comp]
        if endpoint:
            kwargs["endpoint"] = endpoint
    else:
        from opentelemetry.exporter.otlp.proto.http import Compression

        if comp is not None:
            kwargs["compression"] = Compression(comp)
        if endpoint:
            kwargs["endpoint"] = _http_endpoint(signal, endpoint)
    if headers:
        kwargs["headers"] = dict(headers)
    to = _timeout(signal, timeout)
    if to is not None:
        kwargs["timeout"] = to
    return kwargs


def span_exporter_from_env(*, endpoint: str | None = None, protocol: str | None = None,
                           headers: Mapping[str, str] | None = None, timeout: float | None = None,
                           compression: str | None = None) -> Any:
    """The OTLP span exporter the standard variables ask for (HTTP/protobuf unless told otherwise).

    ``endpoint`` is a full URL; for HTTP a bare ``scheme://host:port`` gets ``/v1/traces``.
    Certificates and credential providers are left to the SDK exporter, which reads their variables.
    """
    proto = resolve_protocol("traces", protocol)
    kwargs = _kwargs("traces", proto, endpoint, headers, timeout, compression)
    if proto == GRPC:
        grpc_traces = extras.require("opentelemetry.exporter.otlp.proto.grpc.trace_exporter", "OTLP over gRPC")
        return grpc_traces.OTLPSpanExporter(**kwargs)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

    return HttpExporter(**kwargs)


def metric_exporter_from_env(*, endpoint: str | None = None, protocol: str | None = None,
                             headers: Mapping[str, str] | None = None, timeout: float | None = None,
                             compression: str | None = None) -> Any:
    """The OTLP metric exporter the standard variables ask for, by the same rules as spans."""
    proto = resolve_protocol("metrics", protocol)
    kwargs = _kwargs("metrics", proto, endpoint, headers, timeout, compression)
    if proto == GRPC:
        grpc_metrics = extras.require("opentelemetry.exporter.otlp.proto.grpc.metric_exporter", "OTLP over gRPC")
        return grpc_metrics.OTLPMetricExporter(**kwargs)
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HttpMetrics

    return HttpMetrics(**kwargs)
