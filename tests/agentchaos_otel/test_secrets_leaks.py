"""No credential reaches any byte we write: the DuckDB file, the spool, the rejected file, OTLP, logs.

Each channel by which a key can slip into a trace is sent for real: a provider's 401 answer that
quotes the key the agent sent (and that the agent raises out of its episode), a Gemini-style
``?key=`` query parameter with OTel's httpx instrumentation composed beside ours as the README
shows, an ``Ocp-Apim-Subscription-Key`` header captured by that instrumentation, and spans from
another process received over OTLP with ``url.full?key=``, ``auth.token`` and keys inside
JSON-string attributes. None of the keys has a well-known shape (no ``sk-``), so what removes
them is the rule for the channel, not the shape fallback. Then every byte is searched.
"""

from __future__ import annotations

import gzip
import json
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
import httpx
import pytest

from agentchaos_otel.store.durability.spool import Spool
from agentchaos_otel.store.receivers.otlp_http import OTLPReceiver

pytestmark = pytest.mark.secrets

ECHOED_KEY = "echoKey-7Hq2Lw9Zx4Rb"  # sent as the API key; the provider quotes it in its 401
QUERY_KEY = "queryKey-3Mf8Tn1Vc6Yd"  # ?key=
APIM_KEY = "apimKey-5Pj0Ks7Gu2Wa"  # Ocp-Apim-Subscription-Key header
IN_PROCESS = (ECHOED_KEY, QUERY_KEY, APIM_KEY)

_COMPLETION = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
               "choices": [{"index": 0, "finish_reason": "stop",
                            "message": {"role": "assistant", "content": "fine"}}],
               "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}


class _Provider(BaseHTTPRequestHandler):
    """A loopback provider (401 quoting a wrong key, else a completion) and OTLP collector in one."""

    otlp: list[bytes] = []

    def log_message(self, *args: Any) -> None:
        return None

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path.startswith("/v1/traces"):
            if self.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            type(self).otlp.append(body)
            self._send(200, b"", "application/x-protobuf")
            return
        if self.headers.get("authorization") == f"Bearer {ECHOED_KEY}":
            error = {"error": {"message": f"Incorrect API key provided: {ECHOED_KEY}. You can find your "
                                          "API key at https://example.invalid/api-keys.",
                               "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}}
            self._send(401, json.dumps(error).encode())
            return
        self._send(200, json.dumps(_COMPLETION).encode())


@pytest.fixture
def provider() -> Iterator[str]:
    _Provider.otlp = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Provider)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


AGENT = textwrap.dedent("""
    import os, sys, openai, agentchaos_otel
    from opentelemetry.instrumentation.httpx import HTTPX2ClientInstrumentor
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from agentchaos_otel.store.exporter import DuckDBSpanExporter

    handle = agentchaos_otel.configure(db=os.environ["DB"], service_name="leaky-agent")
    HTTPX2ClientInstrumentor().instrument(tracer_provider=handle.provider)  # as the README composes it
    # The same spans also go to a store that cannot be opened (a directory), so they are spooled.
    handle.provider.add_span_processor(SimpleSpanProcessor(DuckDBSpanExporter(os.environ["LOCKED_DB"])))
    base = os.environ["BASE_URL"]
    try:
        with agentchaos_otel.episode("echo", plan="none") as ep:
            c = openai.OpenAI(base_url=base, api_key=os.environ["ECHOED_KEY"], max_retries=0)
            c.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    except openai.AuthenticationError as exc:
        assert os.environ["ECHOED_KEY"] in str(exc), "the provider echoed the key: the test means something"
        print("401 raised", file=sys.stderr)
    with agentchaos_otel.episode("query", plan="llm_error_single") as ep:
        c = openai.OpenAI(base_url=base, api_key="placeholder", max_retries=0,
                          default_query={"key": os.environ["QUERY_KEY"]},
                          default_headers={"Ocp-Apim-Subscription-Key": os.environ["APIM_KEY"]})
        c.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        ep.set_outcome(success=True)
    handle.shutdown()
""")


def _all_bytes(directory: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in directory.rglob("*") if p.is_file()}


def test_keys_sent_by_the_agent_reach_no_file_and_no_otlp_payload(tmp_path: Path, provider: str) -> None:
    store = tmp_path / "store"
    store.mkdir()
    locked = store / "locked.duckdb"
    locked.mkdir()  # not a database: every write to it goes to the spool
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCHAOS_"))}
    env.update({"DB": str(store / "t.duckdb"), "LOCKED_DB": str(locked), "BASE_URL": f"{provider}/v1",
                "ECHOED_KEY": ECHOED_KEY, "QUERY_KEY": QUERY_KEY, "APIM_KEY": APIM_KEY,
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{provider}/v1/traces",
                "OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_CLIENT_REQUEST": ".*",
                "OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_CLIENT_RESPONSE": ".*",
                "OTEL_SEMCONV_STABILITY_OPT_IN": "http/dup"})
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "401 raised" in result.stderr

    files = _all_bytes(store)
    spool = Spool(locked).path
    assert str(spool) in files and b"invoke_agent" in files[str(spool)], "the spool channel was exercised"
    con = duckdb.connect(str(store / "t.duckdb"), read_only=True)
    assert con.execute("select count(*) from spans where name = 'POST'").fetchone()[0] == 2
    con.close()
    payloads = b"".join(_Provider.otlp)
    assert b"invoke_agent" in payloads and b"POST" in payloads, "the OTLP channel was exercised"
    # The trace still says what happened, without the key.
    stored = json.loads("[" + ",".join(files[str(spool)].decode().splitlines()) + "]")
    roots = {a["agentchaos.task.id"]: a for r in stored if r["name"].startswith("invoke_agent")
             for a in [json.loads(r["attributes"])]}
    echo = roots["echo"]
    assert "AuthenticationError" in echo["agentchaos.episode.error"]
    assert "[REDACTED]" in echo["agentchaos.episode.error"]
    assert any("url.full" in json.loads(r["attributes"]) or "http.url" in json.loads(r["attributes"])
               for r in stored if r["name"] == "POST"), "the HTTP span recorded the URL"

    for secret in IN_PROCESS:
        for path, data in files.items():
            assert secret.encode() not in data, (secret, path)
        assert secret.encode() not in payloads, secret
        assert secret not in result.stdout and secret not in result.stderr


RECEIVED_QUERY_KEY = "rcvQuery-8Bn4Xe2Kd9Ls"
RECEIVED_TOKEN = "rcvToken-1Vw6Hy3Qa7Zm"
RECEIVED_JSON_KEY = "rcvJson-4Gt9Pc5Ur0Nf"
RECEIVED_HEADER_KEY = "rcvHeader-6Dk2Jm8Eo3Wi"
RECEIVED = (RECEIVED_QUERY_KEY, RECEIVED_TOKEN, RECEIVED_JSON_KEY, RECEIVED_HEADER_KEY)


def _kv(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def _otlp_json() -> bytes:
    """Spans of another process, whose keys this process never saw."""
    attrs = [
        _kv("url.full", f"https://generativelanguage.example/v1beta/models/g:generateContent?key={RECEIVED_QUERY_KEY}"),
        _kv("auth.token", RECEIVED_TOKEN),
        _kv("llm.invocation_parameters", json.dumps({"model": "m", "api_key": RECEIVED_JSON_KEY})),
        _kv("input.value", json.dumps({"headers": {"x-api-key": RECEIVED_HEADER_KEY}, "q": "hi"})),
        _kv("http.request.header.ocp-apim-subscription-key", RECEIVED_HEADER_KEY),
    ]
    span = {"traceId": "1" * 32, "spanId": "2" * 16, "name": "POST", "kind": 3,
            "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001000000000",
            "attributes": attrs, "status": {"code": 2, "message": f"401 for ?key={RECEIVED_QUERY_KEY}"},
            "events": [{"name": "exception", "timeUnixNano": "1700000000500000000",
                        "attributes": [_kv("exception.message", f"token={RECEIVED_TOKEN} refused")]}]}
    doc = {"resourceSpans": [{"resource": {"attributes": [_kv("service.name", "other")]},
                              "scopeSpans": [{"scope": {"name": "x"}, "spans": [span]}]}]}
    return json.dumps(doc).encode()


def test_received_spans_keep_no_key(tmp_path: Path) -> None:
    db = tmp_path / "received.duckdb"
    with OTLPReceiver(str(db)) as receiver:
        r = httpx.post(receiver.endpoint, content=_otlp_json(), headers={"content-type": "application/json"})
        assert r.status_code == 200
    con = duckdb.connect(str(db), read_only=True)
    attrs, status = con.execute("select attributes, status_message from spans").fetchone()
    con.close()
    attrs = json.loads(attrs)
    assert attrs["url.full"].endswith("?key=[REDACTED]") and "auth.token" not in attrs
    assert json.loads(attrs["llm.invocation_parameters"]) == {"model": "m"}  # the key's entry is dropped
    assert status == "401 for ?key=[REDACTED]"
    for secret in RECEIVED:
        for path, data in _all_bytes(tmp_path).items():
            assert secret.encode() not in data, (secret, path)


def test_spooled_and_rejected_rows_keep_no_key(tmp_path: Path) -> None:
    """Rows reach the spool (and from there the rejected file) only through redaction."""
    spool = Spool(tmp_path / "t.duckdb")
    row = {"trace_id": "1" * 32, "span_id": "3" * 16, "name": "POST", "status_message": f"Bearer {RECEIVED_TOKEN}",
           "attributes": json.dumps({"url.full": f"http://h/p?api_key={RECEIVED_QUERY_KEY}",
                                     "x-api-key": RECEIVED_HEADER_KEY}),
           "resource": "{}", "events": "[]"}
    spool.append([row])
    spooled = spool.path.read_bytes()
    assert b"[REDACTED]" in spooled
    assert spool.reject_all() == 1
    for secret in RECEIVED:
        assert secret.encode() not in spool.rejected_path.read_bytes()
        assert secret.encode() not in spooled


def test_campaign_runs_keep_no_key_from_the_endpoint_url(tmp_path: Path) -> None:
    from datetime import datetime

    from agentchaos_otel.campaign.runner import campaign_runs, record_run_start

    db = tmp_path / "campaign.duckdb"
    url = f"https://gateway.example/v1?api-key={RECEIVED_QUERY_KEY}"
    record_run_start(db, "run-1", datetime(2026, 1, 1), {"base_url": url, "model": "m"}, simulated=False)
    (run,) = campaign_runs(db)
    assert "api-key=[REDACTED]" in str(run["args"])
    for path, data in _all_bytes(tmp_path).items():
        assert RECEIVED_QUERY_KEY.encode() not in data, path
