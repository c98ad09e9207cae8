"""No secret leaves: an API key given to the client appears nowhere in spans or the DuckDB file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from opentelemetry.instrumentation.httpx import HTTPX2ClientInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.transport import ChaosTransport
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.trace.processors import EpisodeSpanProcessor

pytestmark = pytest.mark.secrets

SECRET = "sk-proj-SECRETc0ffee9f8e7d6c5b4a3"


def _dump(span: Any) -> str:
    return json.dumps({"attrs": dict(span.attributes), "events": [(e.name, dict(e.attributes)) for e in span.events],
                       "resource": dict(span.resource.attributes), "name": span.name,
                       "status": span.status.description}, default=str)


@pytest.mark.parametrize("capture", ["false", "true"])
def test_api_key_never_reaches_spans_or_duckdb(capture: str, tmp_path: Path, mode_server: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", capture)
    # Even a user who asks OTel's httpx instrumentation to capture every request header keeps the
    # key out of the trace store.
    monkeypatch.setenv("OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_CLIENT_REQUEST", ".*")
    db = tmp_path / "secret.duckdb"
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(EpisodeSpanProcessor())
    provider.add_span_processor(SimpleSpanProcessor(memory))
    provider.add_span_processor(SimpleSpanProcessor(DuckDBSpanExporter(str(db))))
    # Nothing is written to the environment: our span processor redacts credential headers the
    # moment a span starts, so no exporter of the process (ours or the user's) ever sees them.
    monkeypatch.delenv("OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_SANITIZE_FIELDS", raising=False)
    otel = HTTPX2ClientInstrumentor()
    otel.instrument(tracer_provider=provider)
    try:
        transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
        with openai.OpenAI(base_url=mode_server.base_url, api_key=SECRET, max_retries=0,
                           http_client=httpx2.Client(transport=transport)) as client:
            with episode("secret", plan="llm_error_single", tracer_provider=provider) as ep:
                for i in range(2):
                    client.chat.completions.create(model="sim-core-test",
                                                   messages=[{"role": "user", "content": f"TEXT {i}"}])
                ep.set_outcome(success=True)
    finally:
        otel.uninstrument()
        provider.shutdown()
    spans = memory.get_finished_spans()
    assert any(s.name == "POST" for s in spans), "the OTel httpx span is part of the test"
    header_keys = [k for s in spans if s.name == "POST" for k in s.attributes if "header" in k]
    assert header_keys, "headers were captured on the HTTP span, so the check below means something"
    auth = [s.attributes[k] for s in spans for k in header_keys if k.endswith("authorization") and k in s.attributes]
    assert auth and all(v == ("[REDACTED]",) for v in auth)
    raw_spans = "".join(_dump(s) for s in spans)
    assert SECRET not in raw_spans
    assert SECRET.encode() not in db.read_bytes()
    for extra in tmp_path.iterdir():
        assert SECRET.encode() not in extra.read_bytes(), extra
    if capture == "true":
        assert "TEXT 0" in raw_spans, "content capture is on, so message content is recorded"
    else:
        assert "TEXT 0" not in raw_spans
