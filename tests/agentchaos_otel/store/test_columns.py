"""The exporter's column path: the same rows as span by span, a redaction gate that misses nothing,
dedup by the primary key, and the GIL handed over quickly while a batch is converted."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from agentchaos_otel import redact
from agentchaos_otel.store.database.connect import open_store
from agentchaos_otel.store.database.repair import repair_row
from agentchaos_otel.store.exporter import DuckDBSpanExporter, span_to_row, spans_to_batch

M = redact.MARKER
LONE = "\ud800"
_EXAMPLES = int(os.environ.get("AGENTCHAOS_FUZZ_EXAMPLES", "150"))


@pytest.fixture(autouse=True)
def _empty_registry() -> Iterator[None]:
    redact.forget_all()
    yield
    redact.forget_all()


def _spans(extra: list[tuple[str, dict, str | None, list[tuple[str, dict]]]] | None = None) -> list[ReadableSpan]:
    """Ordinary spans plus spans carrying credentials in every place a row can hold one."""
    tp = TracerProvider(resource=Resource({"service.name": "svc", "deployment.environment": "test",
                                           "db.password": "hunter2-resource", "note": "token=res-abcdef12"}))
    mem = InMemorySpanExporter()
    tp.add_span_processor(SimpleSpanProcessor(mem))
    tracer = tp.get_tracer("columns-test")
    cases: list[tuple[str, dict, str | None, list[tuple[str, dict]]]] = [
        ("chat m", {"gen_ai.usage.input_tokens": 10, "gen_ai.request.model": "m", "f": 0.5,
                    "seq": ("stop",), "b": True}, None, []),
        ("execute_tool search", {"gen_ai.tool.call.arguments": json.dumps({"query": "q1", "limit": 2}),
                                 "gen_ai.tool.call.result": json.dumps({"ok": True})}, None, []),
        ("chat sk-proj-abcdefghijklmnop1234567890", {"x-api-key": "drop-me-1234", "ok": "yes"}, None, []),
        ("call", {"url.full": "https://user:pa55word@host.example/v1?key=AIzaSecretValue&alt=sse"}, None, []),
        ("call", {"url.query": "alt=sse&api_key=abcd1234efgh"}, "401: Bearer abcdefghijklmnop", []),
        ("tool", {"gen_ai.tool.call.arguments": json.dumps({"api_key": "nested-secret-99", "q": "x"})}, None, []),
        ("tool", {"gen_ai.tool.call.arguments": json.dumps({"auth": "o-1", "n": [1]}, ensure_ascii=True)}, None, []),
        ("evt", {"k": 1}, None, [("exception", {"exception.message": "token=evt-secret-123456"})]),
        ("unicode", {"s": "héllo ✓", "t": "naïve"}, "fehlgeschlagen ✗", []),
        ("nan", {"x": float("nan"), "y": float("inf")}, None, []),
        ("bytes", {"b": b"raw-bytes"}, None, []),
        ("lone" + LONE, {"s": "bad" + LONE}, None, []),
        ("escaped", {"doc": '{"a": "\\ud83d"}'}, None, []),
        *(extra or []),
    ]
    for i, (name, attrs, error, events) in enumerate(cases):
        kind = SpanKind.CLIENT if i % 2 else SpanKind.INTERNAL
        with tracer.start_as_current_span("root") as root:
            root.set_attribute("agentchaos.task.id", f"t{i}")
            with tracer.start_as_current_span(name, kind=kind) as sp:
                for k, v in attrs.items():
                    sp._attributes[k] = v  # noqa: SLF001 - values the SDK would refuse, as a foreign producer sets them
                for ev_name, ev_attrs in events:
                    sp.add_event(ev_name, ev_attrs)
                if error is not None:
                    sp.set_status(Status(StatusCode.ERROR, error))
    tp.shutdown()
    return list(mem.get_finished_spans())


def test_batch_rows_equal_span_to_row_then_repair() -> None:
    spans = _spans()
    batch = spans_to_batch(spans, 123)
    expected = [repair_row(span_to_row(s, 123)) for s in spans]
    assert batch.rows() == expected
    flat = json.dumps(batch.rows(), ensure_ascii=False)
    for secret in ("drop-me-1234", "pa55word", "AIzaSecretValue", "abcd1234efgh", "abcdefghijklmnop",
                   "nested-secret-99", "o-1", "evt-secret-123456", "hunter2-resource", "res-abcdef12",
                   "sk-proj-abcdefghijklmnop1234567890"):
        assert secret not in flat


def test_remembered_credentials_are_redacted_in_batches_too() -> None:
    redact.remember("Bearer opaque-credential-XYZ")
    redact.remember("weird\\E.+(value")
    spans = _spans([("chat", {"echo": "the server said opaque-credential-XYZ back"},
                     "got weird\\E.+(value", [])])
    batch = spans_to_batch(spans, 1)
    assert batch.rows() == [repair_row(span_to_row(s, 1)) for s in spans]
    flat = json.dumps(batch.rows(), ensure_ascii=False)
    assert "opaque-credential-XYZ" not in flat and "weird\\\\E.+(value" not in flat and M in flat


@pytest.mark.parametrize("name", sorted({*redact.SECRET_HEADER_NAMES, *redact.SECRET_ATTRIBUTE_NAMES}))
def test_gate_flags_every_secret_name_as_a_key(name: str) -> None:
    for spelling in (name, name.replace("-", "_"), name.upper(), f"http.request.header.{name}"):
        text = json.dumps({spelling: "v", "other": 1})
        nested = json.dumps({"args": text})
        assert redact.candidates([text, nested, "plain text"]) == [0, 1], spelling


def test_gate_lets_ordinary_rows_through() -> None:
    ordinary = [json.dumps({"gen_ai.usage.input_tokens": 3, "gen_ai.request.max_tokens": 9,
                            "llm.token_count.prompt": 4, "agentchaos.task.id": "task-00001",
                            "gen_ai.response.id": "chatcmpl-0c5c7fd0a6a3a450", "server.address": "127.0.0.1"}),
                "chat gpt-4o-mini", "execute_tool lookup_order", "[]", None]
    assert redact.candidates(ordinary) == []


_PIECES = st.sampled_from([
    "token", "tokens", "_token", "x-auth-token", "api_key", "Api-Key", "apikey", "secret", "Password",
    "passwd", "pwd", "cookie", "auth", "Authorization", "Bearer ", "Basic ", "sk-", "_sk-", "AIza", "eyJ", "ghp_",
    "xoxb-", "hf_", "AKIA", "gsk_", "://", "@", "?", "&", "=", ":", " ", "\"", "'", "\\", "\\u0074", "\\/", "{", "}",
    "[", "]", ",", "query", "url.query", "abcdefghij0123456789", "ABCDEFGHIJKLMNOP", "é", "✓", "-", "_", ".",
    "access_key", "connection_string", "subscription", "private", "functions", "credential", "x", "key", "sig",
    "code", "jwt", "https://h.example/p", "?", "user:pw", "0123456789abcdefghijKLMN"])
_STRINGS = st.lists(_PIECES, max_size=14).map("".join)


@settings(max_examples=_EXAMPLES * 4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(_STRINGS, min_size=1, max_size=6), as_doc=st.booleans(), remembered=st.booleans())
@example(texts=["x_sk-0123456789abcdefghijKLMN"], as_doc=False, remembered=False)
@example(texts=["https://h.example/p?sig=0123456789abcdefghijKLMN"], as_doc=True, remembered=False)
@example(texts=["?code=x"], as_doc=False, remembered=False)
@example(texts=["https://user:pw@h.example/p"], as_doc=True, remembered=False)
@example(texts=["my token: abcdefghij0123456789"], as_doc=False, remembered=False)
def test_gate_never_misses_a_text_redaction_would_change(texts: list[str], as_doc: bool, remembered: bool) -> None:
    redact.forget_all()
    if remembered:
        redact.remember("abcdefghij0123456789")
    column = [json.dumps({t: t, "n": json.dumps({"k": t})}, ensure_ascii=False) for t in texts] if as_doc else texts
    flagged = set(redact.candidates(column))
    for i, text in enumerate(column):
        changed = redact.redact_json_text(text) != text if as_doc else (
            redact.redact_text(text) != text or redact.redact_json_text(text) != text)
        row = {"name": text, "status_message": text, "attributes": text, "resource": "{}", "events": text}
        changed = changed or redact.redact_row(dict(row)) != row
        if changed:
            assert i in flagged, text


@pytest.mark.parametrize("text", ["sk-proj-0123456789abcdefghijKLMN", "my token", "TOKEN", "a://b@c", "x@y://z",
                                  "?code=x", "\\u0041", "Bearer abc"])
def test_one_candidate_among_many_clean_texts_is_found_wherever_it_stands(text: str) -> None:
    # The batch is first checked as one joined text: a text whose match needs the start or the
    # end of a text (``^sk-``, ``token$``) must still be found between two others.
    clean = [json.dumps({"gen_ai.usage.input_tokens": i, "step": i}) for i in range(3000)]
    for at in (0, 1500, 3000):
        column = [*clean[:at], text, *clean[at:]]
        assert redact.candidates(column) == [at], (text, at)
    assert redact.candidates(clean) == []


def test_python_gate_agrees_with_the_arrow_gate() -> None:
    column = ["plain", "token=1", "input_tokens", "x_sk-abc", "a://b@c", "\\u0041", "Authorization: x",
              "author", "TOKEN", "tokens", "my token", "sk-x", "task-1", None]
    python = [i for i, t in enumerate(column) if t is not None and redact._could_change(t, None)]
    assert redact.candidates(column) == python == [1, 3, 4, 5, 6, 7, 8, 10, 11]
    # a lone surrogate makes Arrow refuse the column: the per-text scan answers instead
    assert redact.candidates([*column, "token=" + LONE, LONE]) == [*python, len(column)]


def _stored(path: Path) -> list[tuple]:
    with open_store(path) as conn:
        return conn.execute("SELECT trace_id, span_id, exported_ns FROM spans ORDER BY trace_id, span_id").fetchall()


def test_dedup_keeps_first_export_for_full_partial_and_repeated_batches(tmp_path: Path) -> None:
    spans = _spans()
    db = tmp_path / "d.duckdb"
    exp = DuckDBSpanExporter(db)
    half = len(spans) // 2
    assert exp.export(spans[:half]) == SpanExportResult.SUCCESS
    first = {r[:2]: r[2] for r in _stored_after(exp, db)}
    assert exp.export(spans) == SpanExportResult.SUCCESS  # half stored already, half new
    assert exp.export(spans[:half]) == SpanExportResult.SUCCESS  # all stored already
    assert exp.export([*spans[-2:], *spans[-2:]]) == SpanExportResult.SUCCESS  # repeats inside one batch
    exp.shutdown()
    rows = _stored(db)
    keys = {(format(s.context.trace_id, "032x"), format(s.context.span_id, "016x")) for s in spans}
    assert len(rows) == len(keys) and {r[:2] for r in rows} == keys
    assert all(r[2] == first[r[:2]] for r in rows if r[:2] in first)  # re-exports keep the first row


def _stored_after(exp: DuckDBSpanExporter, db: Path) -> list[tuple]:
    exp.force_flush()
    return _stored(db)


def test_a_stored_copy_without_a_start_time_is_still_skipped(tmp_path: Path) -> None:
    spans = _spans()[:4]
    db = tmp_path / "r.duckdb"
    row = {**span_to_row(spans[0], 5), "start_ns": None}  # stored without a start time
    exp = DuckDBSpanExporter(db)
    assert exp.export_rows([row]) == SpanExportResult.SUCCESS
    assert exp.export(spans) == SpanExportResult.SUCCESS  # the key refuses the batch; ON CONFLICT skips it
    exp.shutdown()
    with open_store(db) as conn:
        assert conn.execute("SELECT count(*) FROM spans").fetchone()[0] == 4
        assert conn.execute("SELECT start_ns FROM spans WHERE span_id = ?", [row["span_id"]]).fetchone()[0] is None


def test_switch_interval_is_left_as_the_user_set_it_during_an_export(tmp_path: Path) -> None:
    seen: list[float] = []
    exp = DuckDBSpanExporter(tmp_path / "s.duckdb")
    inner = exp._write_or_spool

    def spy(rows: object) -> object:
        seen.append(sys.getswitchinterval())
        return inner(rows)  # type: ignore[arg-type]

    exp._write_or_spool = spy  # type: ignore[method-assign]
    before = sys.getswitchinterval()
    assert exp.export(_spans()[:3]) == SpanExportResult.SUCCESS
    exp.shutdown()
    assert seen == [before]  # the agent's interpreter, its setting: untouched while spans are written
    assert sys.getswitchinterval() == before


def test_concurrent_exports_restore_the_interval_once(tmp_path: Path) -> None:
    before = sys.getswitchinterval()
    spans = _spans()
    exps = [DuckDBSpanExporter(tmp_path / f"c{i}.duckdb") for i in range(3)]
    threads = [threading.Thread(target=lambda e=e: [e.export(spans) for _ in range(5)]) for e in exps]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in exps:
        e.shutdown()
    assert sys.getswitchinterval() == before


def _otlp_json(texts: list[str]) -> bytes:
    """One OTLP/JSON request whose spans carry ``texts`` in every place a credential could be."""
    spans = [{
        "traceId": f"{i + 1:032x}", "spanId": f"{i + 1:016x}", "name": t, "kind": 3,
        "startTimeUnixNano": "1", "endTimeUnixNano": "2", "status": {"code": 2, "message": t},
        "attributes": [{"key": "k", "value": {"stringValue": t}},
                       {"key": "url.full", "value": {"stringValue": f"https://h.example/p?{t}"}}],
        "events": [{"name": "exception", "timeUnixNano": "1",
                    "attributes": [{"key": "exception.message", "value": {"stringValue": t}}]}],
    } for i, t in enumerate(texts)]
    doc = {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "s"}},
                                                           {"key": "k", "value": {"stringValue": texts[0]}}]},
                              "scopeSpans": [{"scope": {"name": "x"}, "spans": spans}]}]}
    return json.dumps(doc).encode()


@settings(max_examples=_EXAMPLES * 2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(_STRINGS, min_size=1, max_size=6), remembered=st.booleans())
@example(texts=["Bearer abcdefghij0123456789", "plain"], remembered=False)
def test_received_rows_are_redacted_as_redact_row_alone_would(texts: list[str], remembered: bool) -> None:
    """The receiver redacts only the rows the gate flags; every row must come out as redact_row leaves it."""
    from agentchaos_otel.store.receivers import otlp_http as otlp_receiver

    redact.forget_all()
    if remembered:
        redact.remember("abcdefghij0123456789")
    body = _otlp_json(texts)
    gated = otlp_receiver.parse_json(body, exported_ns=5).rows
    with pytest.MonkeyPatch.context() as m:  # the gate open: every row through redact_row
        m.setattr(redact, "candidates", lambda values: list(range(len(values))))
        every = otlp_receiver.parse_json(body, exported_ns=5).rows
    assert gated == every


def test_a_received_bearer_token_is_gone_from_every_column() -> None:
    from agentchaos_otel.store.receivers import otlp_http as otlp_receiver

    rows = otlp_receiver.parse_json(_otlp_json(["Bearer abcdefghij0123456789", "plain"])).rows
    assert len(rows) == 2
    assert not any("abcdefghij0123456789" in str(v) for r in rows for v in r.values())
    assert rows[1]["name"] == "plain"
