"""Installation paths: instrumentor, per client, explicit transport, zero-code, and composition."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx
import httpx2
import openai
import pytest
from opentelemetry.instrumentation.httpx import HTTPX2ClientInstrumentor

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.install import instrument_client, uninstrument_client
from agentchaos_otel.inject.transport import ChaosTransport
from agentchaos_otel.instrumentor import AgentChaosInstrumentor

MSG = [{"role": "user", "content": "TEXT 1"}]


def _content(client: openai.OpenAI) -> str:
    return client.chat.completions.create(model="sim-core-test", messages=MSG).choices[0].message.content or ""


def test_instrumentor_covers_clients_built_by_the_sdk(mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    inst = AgentChaosInstrumentor()
    inst.instrument(tracer_provider=provider, plan="llm_error_persistent", seed=3)
    try:
        with openai.OpenAI(base_url=mode_server.base_url, api_key="sk-test", max_retries=0) as client:
            assert _content(client).startswith("[API ERROR]")
            with episode("inner", plan=None, tracer_provider=provider):
                assert "weather" in _content(client), "an episode's own plan wins over the process plan"
    finally:
        inst.uninstrument()
    with openai.OpenAI(base_url=mode_server.base_url, api_key="sk-test", max_retries=0) as client:
        assert "weather" in _content(client)
    chats = [s for s in exporter.get_finished_spans() if s.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT]
    assert len(chats) == 2 and chats[0].attributes[A.FAULT_INJECTED] is True


def test_instrument_client_wraps_transport_and_mounts(mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    client = httpx.Client(mounts={"http://127.0.0.1": httpx.HTTPTransport()})
    instrument_client(client, tracer_provider=provider)
    assert isinstance(client._transport, ChaosTransport)
    assert all(isinstance(t, ChaosTransport) for t in client._mounts.values())
    instrument_client(client, tracer_provider=provider)  # idempotent
    assert not isinstance(client._transport.wrapped, ChaosTransport)
    with episode("m", plan="llm_empty_single", tracer_provider=provider):
        r = client.post(f"{mode_server.base_url}/chat/completions", json={"model": "sim-core-test", "messages": MSG})
        other = client.get(f"{mode_server.base_url}/models")
    assert r.json()["choices"][0]["message"]["content"] == ""
    assert other.status_code == 200 and other.json()["data"]
    uninstrument_client(client)
    assert not isinstance(client._transport, ChaosTransport)
    client.close()
    assert len([s for s in exporter.get_finished_spans() if s.name.startswith("chat")]) == 1


@pytest.mark.parametrize("otel_first", [True, False])
def test_composes_with_otel_httpx_instrumentation(otel_first: bool, mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    otel = HTTPX2ClientInstrumentor()
    ours = AgentChaosInstrumentor()
    steps = [lambda: otel.instrument(tracer_provider=provider),
             lambda: ours.instrument(tracer_provider=provider, plan="llm_timeout_persistent")]
    for step in steps if otel_first else reversed(steps):
        step()
    try:
        with openai.OpenAI(base_url=mode_server.base_url, api_key="sk-test", max_retries=0) as client:
            assert _content(client).startswith("[TIMEOUT]")
    finally:
        otel.uninstrument()
        ours.uninstrument()
    spans = exporter.get_finished_spans()
    chat = next(s for s in spans if s.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT)
    http = next(s for s in spans if s.name == "POST")
    assert http.parent is not None and http.parent.span_id == chat.context.span_id
    assert http.attributes.get("http.response.status_code", http.attributes.get("http.status_code")) == 200


def _run_script(code: str, env: dict[str, str], cwd: Path, *prefix: str) -> subprocess.CompletedProcess[str]:
    script = cwd / "agent.py"
    script.write_text(textwrap.dedent(code))
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCHAOS_"))}
    full_env.update(env)
    bindir = Path(sys.executable).parent
    cmd = [*([str(bindir / prefix[0]), *prefix[1:]] if prefix else []), sys.executable, str(script)]
    return subprocess.run(cmd, env=full_env, cwd=cwd, capture_output=True, text=True, timeout=120)


AGENT = """
import os, openai
client = openai.OpenAI(base_url=os.environ["BASE_URL"], api_key="sk-zero-code-secret", max_retries=0)
out = client.chat.completions.create(model="sim-core-test", messages=[{"role": "user", "content": "TEXT 9"}])
print(out.choices[0].message.content)
"""


def test_zero_code_under_opentelemetry_instrument(tmp_path: Path, mode_server: Any) -> None:
    db = tmp_path / "zero.duckdb"
    result = _run_script(AGENT, {
        "BASE_URL": mode_server.base_url, "OTEL_TRACES_EXPORTER": "agentchaos_duckdb",
        "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none", "OTEL_SERVICE_NAME": "zero",
        "AGENTCHAOS_DB": str(db), "AGENTCHAOS_PLAN": "llm_schema_persistent", "AGENTCHAOS_SEED": "5",
    }, tmp_path, "opentelemetry-instrument")
    assert result.returncode == 0, result.stderr
    assert "content_policy_violation" in result.stdout
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("select fault_type, fault_injected from llm_calls").fetchall()
    con.close()
    assert rows == [("schema", True)]
    assert b"sk-zero-code-secret" not in db.read_bytes()


def test_configure_keeps_an_existing_tracer_provider(tmp_path: Path, mode_server: Any) -> None:
    code = """
    import json, os, openai
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    mine = TracerProvider()
    trace.set_tracer_provider(mine)
    import agentchaos_otel
    handle = agentchaos_otel.configure(db=os.environ["DB"], plan="llm_empty_single")
    same = trace.get_tracer_provider() is mine and handle.provider is mine
    with agentchaos_otel.episode("t1") as ep:
        c = openai.OpenAI(base_url=os.environ["BASE_URL"], api_key="k", max_retries=0)
        text = c.chat.completions.create(model="sim-core-test", messages=[{"role": "user", "content": "TEXT 1"}])
        ep.set_outcome(success=True)
    handle.shutdown()
    print(json.dumps({"same": same, "content": text.choices[0].message.content}))
    """
    db = tmp_path / "kept.duckdb"
    result = _run_script(code, {"BASE_URL": mode_server.base_url, "DB": str(db)}, tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["same"] is True
    assert "weather" in out["content"], "the episode had no plan, so no fault"
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("select count(*) from episodes where success").fetchone() == (1,)
    con.close()


def test_explicit_transport_object_with_plain_httpx(mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    with httpx2.Client(transport=ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)) as client:
        with episode("x", plan="llm_truncate_single", tracer_provider=provider):
            r = client.post(f"{mode_server.base_url}/chat/completions",
                            json={"model": "sim-core-test", "messages": MSG})
    assert r.json()["choices"][0]["finish_reason"] == "length"
    assert r.headers["x-agentchaos-simulated"] == "1", "original headers are kept on a rewrite"
