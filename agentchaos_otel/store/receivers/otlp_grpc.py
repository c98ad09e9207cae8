"""A loopback OTLP/gRPC trace receiver, beside the OTLP/HTTP one, landing spans in traces.duckdb.

Agents whose SDK exports gRPC (``OTEL_EXPORTER_OTLP_PROTOCOL=grpc``, the default of several
language SDKs and of the Collector's ``otlp`` exporter) point at this port. Requests are parsed
and stored by the same functions as the HTTP receiver, so the rows, the spool and secret
filtering are identical whichever transport delivered a span. Metrics and logs are answered
UNIMPLEMENTED with a reason instead of a bare "method not found".
"""

from __future__ import annotations

import logging
import os
import threading
from concurrent import futures
from typing import Any

import grpc
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2_grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.trace.export import SpanExportResult

from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.store.receivers.access import Access, needs_token
from agentchaos_otel.store.receivers.otlp_http import MAX_BODY, BadPayload, rows_from_protobuf

logger = logging.getLogger(__name__)

DEFAULT_GRPC_PORT = 4317
_ONLY_TRACES = "this receiver stores traces only; send metrics and logs to a collector or metrics backend"


class _TraceService(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, receiver: OTLPGrpcReceiver) -> None:
        self.receiver = receiver

    def Export(self, request: ExportTraceServiceRequest, context: Any) -> ExportTraceServiceResponse:  # noqa: N802
        metadata = dict(context.invocation_metadata() or ())
        if not self.receiver.access.authorized(metadata.get("authorization")):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "a bearer token is required (authorization: Bearer TOKEN)")
        try:
            rows = rows_from_protobuf(request.SerializeToString())
        except BadPayload as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        result = self.receiver.exporter.export_rows(rows) if rows else SpanExportResult.SUCCESS
        if result != SpanExportResult.SUCCESS:
            # UNAVAILABLE is retryable for OTLP clients: they resend rather than drop.
            context.abort(grpc.StatusCode.UNAVAILABLE, "spans could not be stored")
        with self.receiver.lock:
            self.receiver.received += len(rows)
        return ExportTraceServiceResponse()


class _MetricsService(metrics_service_pb2_grpc.MetricsServiceServicer):
    def Export(self, request: Any, context: Any) -> Any:  # noqa: N802
        context.abort(grpc.StatusCode.UNIMPLEMENTED, _ONLY_TRACES)


class _LogsService(logs_service_pb2_grpc.LogsServiceServicer):
    def Export(self, request: Any, context: Any) -> Any:  # noqa: N802
        context.abort(grpc.StatusCode.UNIMPLEMENTED, _ONLY_TRACES)


class OTLPGrpcReceiver:
    """`with OTLPGrpcReceiver("traces.duckdb") as r:` then export OTLP/gRPC to `r.endpoint`.

    Without TLS. Given a ``token``, every request must carry it as ``authorization: Bearer TOKEN``
    metadata; beyond loopback a token is required (``access.py``). Browsers cannot speak gRPC, so
    there is no ``Host`` check to make here.
    """

    def __init__(self, db: str | os.PathLike[str] | None = None, *, host: str = "127.0.0.1",
                 port: int = DEFAULT_GRPC_PORT, workers: int = 4, token: str | None = None) -> None:
        needs_token(host, token)
        self.access = Access(frozenset(), token or None)
        self.exporter = DuckDBSpanExporter(db)
        self.received = 0
        self.lock = threading.Lock()
        self.host = host
        options = [("grpc.max_receive_message_length", MAX_BODY), ("grpc.so_reuseport", 0)]
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="otlp-grpc"),
                                   options=options)
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(_TraceService(self), self._server)
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(_MetricsService(), self._server)
        logs_service_pb2_grpc.add_LogsServiceServicer_to_server(_LogsService(), self._server)
        try:
            self._port = self._server.add_insecure_port(f"{host}:{port}")
        except RuntimeError as exc:
            raise OSError(f"cannot listen on {host}:{port} for OTLP/gRPC ({exc})") from None
        if not self._port:
            raise OSError(f"cannot listen on {host}:{port} for OTLP/gRPC (port in use?)")

    @property
    def port(self) -> int:
        return int(self._port)

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> OTLPGrpcReceiver:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop(grace=5).wait(10)
        self.exporter.shutdown()

    def __enter__(self) -> OTLPGrpcReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
