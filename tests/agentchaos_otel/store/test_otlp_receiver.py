"""The loopback OTLP/HTTP receiver stores spans exactly as the in-process exporter does."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult

from agentchaos_otel import attributes as A
from agentchaos_otel.store.database.connect import open_store
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.store.receivers.otlp_http import OTLPReceiver
from tests.agentchaos_otel.store.test_support_builders import Step, emit_episode

COLS = ("trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns, status_code, status_message, "
        "service_name, scope_name, attributes::VARCHAR, resource::VARCHAR, events::VARCHAR")


def stored(db: Path) -> list[tuple[Any, ...]]:
    with open_store(db) as conn:
        return conn.execute(f"SELECT {COLS} FROM spans ORDER BY span_id").fetchall()


def run_agent(exporters: list[Any]) -> str:
    tp = TracerProvider(resource=Resource({A.SERVICE_NAME: "remote-agent", "api_key": "sk-res"}))
    for e in exporters:
        tp.add_span_processor(SimpleSpanProcessor(e))
    tracer = tp.get_tracer("remote")
    tid = emit_episode(tracer, "remote-1", [
        Step("llm", {A.GEN_AI_REQUEST_MODEL: "m", A.GEN_AI_RESPONSE_FINISH_REASONS: ("stop", "length"),
                     "http.request.header.authorization": ("Bearer sk-x",), A.LOGPROBS_ENTROPY_MEAN: 0.5}),
        Step("tool", {A.GEN_AI_TOOL_NAME: "f", A.FAULT_INJECTED: True, A.FAULT_TYPE: "empty"},
             events=[("note", {"n": 3, "flags": (True, False)})]),
        Step("llm", error="APIStatusError"),
    ], condition="independent", seed=9, success=False)
    tp.shutdown()
    return tid


def test_protobuf_matches_in_process_export(tmp_path: Path) -> None:
    via_otlp, direct = tmp_path / "otlp.duckdb", tmp_path / "direct.duckdb"
    with OTLPReceiver(via_otlp) as receiver:
        tid = run_agent([OTLPSpanExporter(endpoint=receiver.endpoint, compression=Compression.Gzip),
                         DuckDBSpanExporter(direct)])
        assert receiver.received == 4
    a, b = stored(via_otlp), stored(direct)
    assert len(a) == 4 and a == b
    assert "sk-" not in json.dumps(a)
    with open_store(via_otlp) as conn:
        ep = conn.execute("SELECT trace_id, task_id, condition, seed, success, n_steps, n_faults "
                          "FROM episodes").fetchall()
        fr = conn.execute("SELECT finish_reasons FROM llm_calls WHERE step = 0").fetchone()[0]
    assert ep == [(tid, "remote-1", "independent", 9, False, 3, 1)]
    assert fr == ["stop", "length"]


def otlp_json(attrs: list[dict[str, Any]], kind: int | str = 3) -> dict[str, Any]:
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "js-agent"}}]},
        "scopeSpans": [{"scope": {"name": "@arizeai/openinference"}, "spans": [{
            "traceId": "5B8EFFF798038103D269B633813FC60C", "spanId": "EEE19B7EC3C1B174",
            "name": "ChatCompletion", "kind": kind,
            "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000000500000000",
            "attributes": attrs, "status": {"code": 2, "message": "boom"},
            "events": [{"name": "exception", "timeUnixNano": "1700000000400000000",
                        "attributes": [{"key": "exception.type", "value": {"stringValue": "TimeoutError"}}]}],
        }]}],
    }]}


def test_json_openinference_payload(tmp_path: Path) -> None:
    db = tmp_path / "json.duckdb"
    attrs = [{"key": A.OI_SPAN_KIND, "value": {"stringValue": "LLM"}},
             {"key": A.OI_LLM_MODEL_NAME, "value": {"stringValue": "gpt-x"}},
             {"key": A.OI_LLM_TOKEN_COUNT_PROMPT, "value": {"intValue": "42"}},
             {"key": "llm.temperature", "value": {"doubleValue": 0.5}},
             {"key": "tags", "value": {"arrayValue": {"values": [{"stringValue": "a"},
                                                                  {"boolValue": True}]}}},
             {"key": "x-api-key", "value": {"stringValue": "sk-json"}}]
    with OTLPReceiver(db) as receiver:
        r = httpx.post(receiver.endpoint, json=otlp_json(attrs, kind="SPAN_KIND_CLIENT"))
        assert r.status_code == 200 and r.json() == {}
        body = gzip.compress(json.dumps(otlp_json(attrs)).encode())
        r = httpx.post(receiver.endpoint, content=body,
                       headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
        assert r.status_code == 200
    ((row,),) = [stored(db)]
    assert row[0] == "5b8efff798038103d269b633813fc60c" and row[4] == "CLIENT"
    assert (row[7], row[8], row[9], row[10]) == ("ERROR", "boom", "js-agent", "@arizeai/openinference")
    attributes = json.loads(row[11])
    assert attributes == {A.OI_SPAN_KIND: "LLM", A.OI_LLM_MODEL_NAME: "gpt-x",
                          A.OI_LLM_TOKEN_COUNT_PROMPT: 42, "llm.temperature": 0.5, "tags": ["a", True]}
    with open_store(db) as conn:
        llm = conn.execute("SELECT request_model, input_tokens, error_type, duration_ms "
                           "FROM llm_calls").fetchall()
    assert llm == [("gpt-x", 42, "TimeoutError", 500.0)]


def test_bad_requests(tmp_path: Path) -> None:
    db = tmp_path / "bad.duckdb"
    with OTLPReceiver(db) as receiver:
        base = receiver.endpoint.rsplit("/v1/", 1)[0]
        assert httpx.post(f"{base}/v1/metrics", content=b"x",
                          headers={"Content-Type": "application/x-protobuf"}).status_code == 404
        r = httpx.post(receiver.endpoint, content=b"x", headers={"Content-Type": "text/plain"})
        assert r.status_code == 415
        r = httpx.post(receiver.endpoint, content=b"{not json", headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and "OTLP JSON" in r.json()["message"]
        bad_id = otlp_json([])
        bad_id["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["spanId"] = "abc"
        assert httpx.post(receiver.endpoint, json=bad_id).status_code == 400
        assert httpx.post(receiver.endpoint, content=b"\xff\xff\xff",
                          headers={"Content-Type": "application/x-protobuf"}).status_code == 400
        assert receiver.received == 0
    assert not db.exists() or stored(db) == []


def test_export_rows_after_shutdown_fails(tmp_path: Path) -> None:
    exp = DuckDBSpanExporter(tmp_path / "x.duckdb")
    exp.shutdown()
    assert exp.export_rows([]) == SpanExportResult.FAILURE
