"""The redaction rules one by one: names, URL queries, credentials seen on requests, key shapes."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from importlib.metadata import entry_points

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from agentchaos_otel import redact
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.trace.redacting import RedactingOTLPSpanExporter, RedactingSpanExporter

pytestmark = pytest.mark.secrets

M = redact.MARKER


@pytest.fixture(autouse=True)
def _empty_registry() -> Iterator[None]:
    redact.forget_all()
    yield
    redact.forget_all()


@pytest.mark.parametrize("name", [
    "Authorization", "PROXY-AUTHORIZATION", "x-api-key", "X_Api_Key", "api-key", "Ocp-Apim-Subscription-Key",
    "x-goog-api-key", "anthropic-api-key", "openai-api-key", "Cookie", "set-cookie", "x-amz-security-token",
    "x-auth-token", "x-functions-key", "http.request.header.ocp_apim_subscription_key", "auth.token",
    "db.password", "github.client_secret", "x-portkey-api-key", "http.request.header.authorization",
])
def test_credential_names_in_any_spelling(name: str) -> None:
    assert redact.is_secret_name(name)


@pytest.mark.parametrize("name", [
    "gen_ai.usage.input_tokens", "gen_ai.request.max_tokens", "llm.token_count.prompt", "gen_ai.token.type",
    "content-type", "x-request-id", "openai-organization", "url.full", "agentchaos.task.id", "idempotency-key",
])
def test_ordinary_names_are_kept(name: str) -> None:
    assert not redact.is_secret_name(name)


@pytest.mark.parametrize("param", ["key", "api_key", "apikey", "token", "access_token", "sig", "signature",
                                   "X-Amz-Signature", "X-Amz-Credential", "code", "password", "secret",
                                   "client_secret", "subscription-key"])
def test_secret_query_parameters_in_urls(param: str) -> None:
    url = f"https://host.example/v1/x?alt=sse&{param}=v4lue-s3cret&model=m#frag"
    assert redact.redact_text(url) == f"https://host.example/v1/x?alt=sse&{param}={M}&model=m#frag"
    assert redact.redact_query(f"{param}=v4lue-s3cret&alt=sse") == f"{param}={M}&alt=sse"
    assert redact.redact_text(f"GET {url} failed") == f"GET {redact.redact_text(url)} failed"


def test_url_user_info_and_ordinary_queries() -> None:
    assert redact.redact_text("postgres://app:hunter2-pw@db:5432/x") == f"postgres://app:{M}@db:5432/x"
    plain = "https://host.example/search?q=tokens&page=2"
    assert redact.redact_text(plain) == plain


@pytest.mark.parametrize("text", [
    "sk-proj-abcdefghijklmnop1234567890", "sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWX",
    "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUv",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
])
def test_common_key_shapes_as_a_fallback(text: str) -> None:
    assert redact.redact_text(f"provider said: {text}.") == f"provider said: {M}."


def test_credentials_named_in_text_and_in_json_held_as_text() -> None:
    assert redact.redact_text("Authorization: Bearer opaque.value-1234") == f"Authorization: Bearer {M}"
    assert redact.redact_text("{'api_key': 'abcd1234efgh', 'n': 1}") == f"{{'api_key': '{M}', 'n': 1}}"
    nested = json.dumps({"p": json.dumps({"x-api-key": "abcd1234efgh", "max_tokens": 5})})
    assert json.loads(json.loads(redact.redact_text(nested))["p"]) == {"x-api-key": M, "max_tokens": 5}
    prose = "The model used 12 input_token: units and a max token count: 5"
    assert redact.redact_text(prose) == prose


def test_credentials_seen_on_a_request_are_redacted_everywhere() -> None:
    request = httpx.Request("POST", "https://api.example/v1/chat/completions?key=q-unshaped-1234",
                            headers={"Authorization": "Bearer b-unshaped-5678", "Ocp-Apim-Subscription-Key":
                                     "o-unshaped-9012", "x-request-id": "req-000000000001"})
    redact.remember_request(request)
    text = "echo b-unshaped-5678 / o-unshaped-9012 / q-unshaped-1234 / req-000000000001"
    assert redact.redact_text(text) == f"echo {M} / {M} / {M} / req-000000000001"
    redact.remember_request(object())  # a request it cannot read is ignored, never raised on


def test_registry_is_bounded_and_ignores_short_values() -> None:
    redact.remember("short")
    assert redact.remembered_count() == 0
    for i in range(redact.MAX_REMEMBERED + 100):
        redact.remember(f"credential-{i:06d}")
    assert redact.remembered_count() <= redact.MAX_REMEMBERED
    newest = f"credential-{redact.MAX_REMEMBERED + 99:06d}"
    assert redact.redact_text(newest) == M
    assert redact.redact_text("credential-000000") == "credential-000000"  # the oldest was let go


def test_rows_are_redacted_and_clean_rows_left_byte_identical() -> None:
    clean = {"name": "chat m", "status_message": None, "attributes": '{"gen_ai.usage.input_tokens":3}',
             "resource": '{"service.name":"s"}', "events": "[]"}
    assert redact.redact_row(dict(clean)) == clean
    dirty = {"name": "POST", "status_message": "401 sk-proj-abcdefghijklmnop1234",
             "attributes": json.dumps({"url.full": "http://h/x?key=abcdefgh12", "auth.token": "t0k3n-value",
                                       "input.value": json.dumps({"api_key": "abcdefgh34"})}),
             "resource": "{}", "events": json.dumps([{"name": "exception", "time_ns": 1,
                                                      "attributes": {"exception.message": "token=zzzzzzzz99"}}])}
    row = redact.redact_row(dirty)
    attrs = json.loads(row["attributes"])
    assert attrs == {"url.full": f"http://h/x?key={M}", "input.value": "{}"}  # JSON in a string: key dropped
    assert row["status_message"] == f"401 {M}"
    assert json.loads(row["events"])[0]["attributes"]["exception.message"] == f"token={M}"


def _span_with(provider: TracerProvider, secret: str) -> None:
    with provider.get_tracer("t").start_as_current_span("POST", attributes={
            "url.full": f"https://h/x?key={secret}", "x-api-key": secret, "keep": "yes"}) as span:
        span.add_event("exception", {"exception.message": f"denied {secret}"})
        span.set_status(Status(StatusCode.ERROR, f"bad key {secret}"))
    with provider.get_tracer("t").start_as_current_span("clean", attributes={"n": 1}):
        pass


def test_redacting_exporter_copies_only_spans_that_need_it() -> None:
    secret = "exp-unshaped-4321"
    redact.remember(secret)
    inner = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "s", "deploy.password": "pw-123456"}))
    provider.add_span_processor(SimpleSpanProcessor(RedactingSpanExporter(inner)))
    _span_with(provider, secret)
    provider.shutdown()
    dirty, clean = inner.get_finished_spans()
    assert dict(dirty.attributes) == {"url.full": f"https://h/x?key={M}", "keep": "yes"}
    assert dirty.events[0].attributes["exception.message"] == f"denied {M}"
    assert dirty.status.description == f"bad key {M}" and dirty.status.status_code == StatusCode.ERROR
    assert "deploy.password" not in dirty.resource.attributes
    assert dirty.context == dirty.context and clean.name == "clean" and dict(clean.attributes) == {"n": 1}
    assert secret not in repr([dirty.to_json(), clean.to_json()])


def test_zero_code_otlp_exporter_is_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:9/v1/traces")
    (ep,) = entry_points(group="opentelemetry_traces_exporter", name="agentchaos_otlp")
    exporter = ep.load()()
    assert isinstance(exporter, RedactingOTLPSpanExporter)
    exporter.shutdown()


def test_our_logs_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    redact.remember("log-unshaped-8765")
    log = redact.get_logger("agentchaos_otel.store.exporter")
    with caplog.at_level(logging.ERROR):
        log.error("write failed for %s (%s)", "log-unshaped-8765", "url http://h/?key=abcdef123")
        try:
            raise ValueError("log-unshaped-8765 refused")
        except ValueError:
            log.exception("oops")
    text = caplog.text
    assert "log-unshaped-8765" not in text and "abcdef123" not in text and "write failed for" in text


def test_episode_error_and_exception_are_redacted_on_the_span(memory_tracing: tuple) -> None:
    provider, memory = memory_tracing
    redact.remember("Bearer ep-unshaped-2468")
    with pytest.raises(RuntimeError):
        with episode("t", tracer_provider=provider):
            raise RuntimeError("401: Incorrect API key provided: ep-unshaped-2468")
    (root,) = memory.get_finished_spans()
    assert root.attributes["agentchaos.episode.error"] == f"RuntimeError: 401: Incorrect API key provided: {M}"
    assert "ep-unshaped-2468" not in root.to_json()
    with episode("u", tracer_provider=provider) as ep:
        ep.set_outcome(False, error="failed with ep-unshaped-2468")
    assert ep.error == f"failed with {M}"


_CRED = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=redact.MIN_SECRET_LEN,
                max_size=40).map(str.strip).filter(lambda s: len(s) >= redact.MIN_SECRET_LEN)
_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)
_EXAMPLES = int(os.environ.get("AGENTCHAOS_FUZZ_EXAMPLES", "150"))


@settings(max_examples=_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(secrets=st.lists(_CRED, min_size=1, max_size=4), pieces=st.lists(_TEXT, min_size=1, max_size=5),
       as_json=st.booleans())
def test_redacted_output_never_contains_a_registered_secret(secrets: list[str], pieces: list[str],
                                                              as_json: bool) -> None:
    redact.forget_all()
    for s in secrets:
        redact.remember(s)
    text = "".join(p + secrets[i % len(secrets)] for i, p in enumerate(pieces))
    if as_json:
        text = json.dumps({"message": text, "nested": json.dumps([text])}, ensure_ascii=False)
        out = redact.redact_json_text(text)
    else:
        out = redact.redact_text(text)
    for s in secrets:
        if s not in redact.MARKER:
            assert s not in out


def test_zero_code_distro_sends_otlp_through_redaction(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentchaos_otel.zero_code import AgentChaosDistro

    for var in ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        monkeypatch.setenv(var, "")  # recorded, so whatever the distro sets is undone afterwards
        monkeypatch.delenv(var)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    AgentChaosDistro()._configure()
    assert os.environ["OTEL_TRACES_EXPORTER"] == "agentchaos_duckdb,agentchaos_otlp"


def test_json_in_a_string_loses_every_secret_named_key() -> None:
    held = json.dumps({"auth": "opaque-value-1", "cookie": "sid=opaque-value-2", "q": "hi", "n": [1, 2]})
    assert json.loads(redact.redact_value(held, "input.value")) == {"q": "hi", "n": [1, 2]}
    assert redact.redact_value("[not json, token=abcd1234]", "x") == f"[not json, token={M}]"
    deep = "[" * 5000 + "]" * 5000 + " token=abcd1234"
    assert redact.redact_value(deep, "x").endswith(f"token={M}")
