"""OTLP export runs alongside the DuckDB store, configured by the standard OTEL_* variables."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import duckdb
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

pytestmark = pytest.mark.ecosystem


class _Collector(BaseHTTPRequestHandler):
    """A loopback OTLP/HTTP collector that keeps what it receives."""

    received: list[ExportTraceServiceRequest] = []

    def log_message(self, *args: Any) -> None:
        return None

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["content-length"]))
        if self.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        req = ExportTraceServiceRequest()
        req.ParseFromString(body)
        type(self).received.append(req)
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()


@pytest.fixture
def collector() -> Iterator[str]:
    _Collector.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_spans_reach_an_otlp_collector_and_duckdb(tmp_path: Path, collector: str, mode_server: Any) -> None:
    script = tmp_path / "agent.py"
    script.write_text(textwrap.dedent("""
        import os, openai, agentchaos_otel
        handle = agentchaos_otel.configure(db=os.environ["DB"])
        with agentchaos_otel.episode("otlp-task", plan="llm_error_single") as ep:
            c = openai.OpenAI(base_url=os.environ["BASE_URL"], api_key="sk-otlp", max_retries=0)
            c.chat.completions.create(model="sim-core-test", messages=[{"role": "user", "content": "TEXT 1"}])
            ep.set_outcome(success=False)
        handle.shutdown()
    """))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCHAOS_"))}
    env.update({"DB": str(tmp_path / "t.duckdb"), "BASE_URL": mode_server.base_url,
                "OTEL_EXPORTER_OTLP_ENDPOINT": collector, "OTEL_SERVICE_NAME": "otlp-agent"})
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    spans = [s for req in _Collector.received for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]
    names = sorted(s.name for s in spans)
    assert "invoke_agent agent" in names and "chat sim-core-test" in names
    chat = next(s for s in spans if s.name == "chat sim-core-test")
    attrs = {a.key: a.value for a in chat.attributes}
    assert attrs["gen_ai.operation.name"].string_value == "chat"
    assert attrs["agentchaos.fault.type"].string_value == "error"
    service = {a.key: a.value.string_value for req in _Collector.received for rs in req.resource_spans
               for a in rs.resource.attributes}
    assert service["service.name"] == "otlp-agent"
    con = duckdb.connect(str(tmp_path / "t.duckdb"), read_only=True)
    assert con.execute("select count(*) from spans").fetchone()[0] == len(spans)
    con.close()
