"""OTLP by the specification: protocol, per-signal variables, and the gRPC receiver."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import duckdb
import grpc
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agentchaos_otel.otlp_exporters import OTLPConfigError, resolve_protocol, span_exporter_from_env
from agentchaos_otel.store.receivers.otlp_grpc import OTLPGrpcReceiver
from agentchaos_otel.store.receivers.otlp_http import OTLPReceiver

pytestmark = pytest.mark.ecosystem

_VARS = ("OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_ENDPOINT",
         "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
         "OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_HEADERS")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for v in _VARS:
        monkeypatch.delenv(v, raising=False)


def test_protocol_follows_general_then_signal_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_protocol() == "http/protobuf"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    assert resolve_protocol() == "grpc"
    assert isinstance(span_exporter_from_env(), GrpcSpanExporter)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
    assert isinstance(span_exporter_from_env(), HttpSpanExporter)
    assert isinstance(span_exporter_from_env(protocol="grpc"), GrpcSpanExporter)


def test_http_json_and_unknown_values_are_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json")
    with pytest.raises(OTLPConfigError, match="no OTLP/JSON exporter"):
        span_exporter_from_env()
    with pytest.raises(OTLPConfigError, match="not one of"):
        resolve_protocol(protocol="thrift")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "brotli")
    with pytest.raises(OTLPConfigError, match="compression 'brotli'"):
        span_exporter_from_env()


def test_http_endpoint_and_timeout_in_milliseconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "2500")
    exp = span_exporter_from_env(endpoint="http://127.0.0.1:9/")
    assert exp._endpoint == "http://127.0.0.1:9/v1/traces"
    # where the SDK keeps it: the exporter up to 1.44, its HTTP client from 1.45 on
    timeout = exp._client._timeout if hasattr(exp, "_client") else exp._timeout
    assert timeout == pytest.approx(2.5)
    with pytest.raises(OTLPConfigError, match="not a URL"):
        span_exporter_from_env(endpoint="localhost:4318")


def test_headers_and_gzip_from_variables_and_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.collector import otlp_collector

    with otlp_collector() as (url, posts):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url + "/v1/traces")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=from-env")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip")
        _emit(span_exporter_from_env(), n=1)
        _emit(span_exporter_from_env(endpoint=url, headers={"x-tenant": "from-arg"}, compression="none"), n=1)
    seen = [(p.headers.get("x-tenant"), p.headers.get("content-encoding"), len(p.body)) for p in posts]
    assert [(t, enc) for t, enc, _ in seen] == [("from-env", "gzip"), ("from-arg", None)]
    assert all(n > 0 for _, _, n in seen)


def _emit(exporter: object, n: int = 3) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "grpc-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))  # type: ignore[arg-type]
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("invoke_agent a", attributes={"agentchaos.task.id": "g1"}):
        for i in range(n - 1):
            with tracer.start_as_current_span(f"chat m{i}", attributes={"gen_ai.operation.name": "chat"}):
                pass
    provider.shutdown()


def test_grpc_exporter_from_env_lands_spans_in_the_grpc_receiver(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "g.duckdb"
    with OTLPGrpcReceiver(str(db), port=0) as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", receiver.endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
        _emit(span_exporter_from_env(), n=3)
        assert receiver.received == 3
    with duckdb.connect(str(db), read_only=True) as conn:
        rows = conn.execute("SELECT name, service_name, json_extract_string(attributes, '$.\"agentchaos.task.id\"') "
                            "FROM spans ORDER BY name").fetchall()
    assert rows == [("chat m0", "grpc-agent", None), ("chat m1", "grpc-agent", None),
                    ("invoke_agent a", "grpc-agent", "g1")]


def test_grpc_receiver_refuses_metrics_with_a_reason(tmp_path: Path) -> None:
    with OTLPGrpcReceiver(str(tmp_path / "m.duckdb"), port=0) as receiver:
        with grpc.insecure_channel(f"127.0.0.1:{receiver.port}") as channel:
            stub = metrics_service_pb2_grpc.MetricsServiceStub(channel)
            with pytest.raises(grpc.RpcError) as info:
                stub.Export(metrics_service_pb2.ExportMetricsServiceRequest(), timeout=5)
    assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert "traces only" in info.value.details()


def test_http_receiver_answers_metrics_and_logs_with_a_reason(tmp_path: Path) -> None:
    with OTLPReceiver(str(tmp_path / "h.duckdb"), port=0) as receiver:
        for path in ("/v1/metrics", "/v1/logs"):
            req = urllib.request.Request(f"http://127.0.0.1:{receiver.port}{path}", data=b"{}", method="POST",
                                         headers={"Content-Type": "application/json"})
            with pytest.raises(urllib.error.HTTPError) as info:
                urllib.request.urlopen(req, timeout=5)
            assert info.value.code == 404
            assert "not metrics or logs" in json.loads(info.value.read())["message"]


def test_prometheus_port_variable_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentchaos_otel.settings import PROMETHEUS_PORT

    monkeypatch.setenv("AGENTCHAOS_PROMETHEUS_PORT", "9464")
    assert PROMETHEUS_PORT.value() == 9464
    monkeypatch.setenv("AGENTCHAOS_PROMETHEUS_PORT", "http")
    with pytest.raises(ValueError, match="not a port number"):
        PROMETHEUS_PORT.value()
