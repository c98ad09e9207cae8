"""Who may add spans to a receiver: the Host it was asked for, and the bearer token when one is set.

A web page can reach a loopback receiver through DNS rebinding (its own name resolving to
127.0.0.1): the browser then sends ``Host: the-page's-name``, which a receiver that checks ``Host``
against its bound address refuses. A receiver given a token (``--token`` or
``AGENTCHAOS_RECEIVER_TOKEN``) answers 401 to a request without ``Authorization: Bearer TOKEN``,
and one asked to listen beyond loopback refuses to start without a token. The real OTLP exporters
send the token as a header; the token is never stored.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from agentchaos_otel.cli.errors import run_app
from agentchaos_otel.cli.main import app
from agentchaos_otel.store.receivers.otlp_http import OTLPReceiver
from tests.support import ecosystem as B
from tests.support.otlp import PB, pb_request, stored_ids

pytestmark = pytest.mark.secrets

TOKEN = "rcv-token-4b1d9c"


def _post(url: str, host: str | None = None, token: str | None = None, trace_byte: int = 0x41) -> int:
    headers = dict(PB)
    if host is not None:
        headers["Host"] = host
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.post(url, content=pb_request(3, trace_byte=trace_byte), headers=headers, timeout=30).status_code


@pytest.mark.parametrize("workers", [0, 1])
def test_a_request_for_another_host_is_refused(tmp_path: Path, workers: int) -> None:
    db = tmp_path / "h.duckdb"
    with OTLPReceiver(db, workers=workers) as r:
        assert _post(r.endpoint, host=f"rebound.example:{r.port}", trace_byte=0x41) == 403
        assert _post(r.endpoint, host="rebound.example", trace_byte=0x42) == 403
        assert _post(r.endpoint, host=f"127.0.0.1:{r.port}", trace_byte=0x43) == 200
        assert _post(r.endpoint, host=f"localhost:{r.port}", trace_byte=0x44) == 200
        assert _post(r.endpoint, host=f"LOCALHOST:{r.port}", trace_byte=0x45) == 200
        assert _post(r.endpoint, host=f"localhost:{r.port + 1}", trace_byte=0x46) == 403
    assert {t[:2] for t, _ in stored_ids(db)} == {"43", "44", "45"}


def test_a_token_is_required_when_set_and_never_stored(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    with OTLPReceiver(db, token=TOKEN) as r:
        assert _post(r.endpoint, trace_byte=0x51) == 401
        assert _post(r.endpoint, token="wrong", trace_byte=0x52) == 401
        assert _post(r.endpoint, token=TOKEN, trace_byte=0x53) == 200
        # The SDK's OTLP exporter with the header, as a user configures it.
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=r.endpoint, headers={"Authorization": f"Bearer {TOKEN}"})
        assert exporter.export(B.sdk_spans("with-token")).name == "SUCCESS"
        exporter.shutdown()
    assert {t[:2] for t, _ in stored_ids(db)} >= {"53"}
    assert len(stored_ids(db)) == 3 + len(B.sdk_spans("x"))
    assert all(TOKEN.encode() not in p.read_bytes() for p in tmp_path.iterdir() if p.is_file())


def test_beyond_loopback_needs_a_token(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTCHAOS_RECEIVER_TOKEN", raising=False)
    db = tmp_path / "b.duckdb"
    for command in (["traces", "receive"], ["traces", "receive-grpc"]):
        code = run_app(app, "agentchaos", [*command, "--db", str(db), "--host", "0.0.0.0", "--port", "0",
                                           "--seconds", "0"])
        err = capsys.readouterr().err
        assert code == 2 and "--host 0.0.0.0" in err and "--token" in err and err.count("\n") == 1, err
    with pytest.raises(ValueError, match="token"):
        OTLPReceiver(db, host="0.0.0.0")
    monkeypatch.setenv("AGENTCHAOS_RECEIVER_TOKEN", TOKEN)
    assert run_app(app, "agentchaos", ["traces", "receive", "--db", str(db), "--host", "0.0.0.0", "--port", "0",
                                       "--seconds", "0", "--workers", "0"]) == 0
    out = capsys.readouterr().out
    assert "bearer token" in out and TOKEN not in out


def test_the_grpc_receiver_checks_the_token(tmp_path: Path) -> None:
    """In a child process: gRPC's own threads are left to the process that made them."""
    code = f"""
import sys
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from agentchaos_otel.store.receivers.otlp_grpc import OTLPGrpcReceiver
from tests.support import ecosystem as B
with OTLPGrpcReceiver(sys.argv[1], port=0, token={TOKEN!r}) as r:
    bare = OTLPSpanExporter(endpoint=r.endpoint, insecure=True, timeout=5)
    signed = OTLPSpanExporter(endpoint=r.endpoint, insecure=True, timeout=5,
                              headers={{"authorization": "Bearer {TOKEN}"}})
    print(bare.export(B.sdk_spans("bare")).name, signed.export(B.sdk_spans("signed")).name, r.received)
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCHAOS_"))}
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "g.duckdb")], capture_output=True, text=True,
                          timeout=120, env={**env, "GRPC_VERBOSITY": "NONE"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["FAILURE", "SUCCESS", str(len(B.sdk_spans("x")))]
