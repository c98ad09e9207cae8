"""Property-based fuzzing of the injector: random and malformed response bodies, SSE streams and
request bodies.

Properties, for every generated case:
- when no fault fires, the client receives exactly what it receives without the injector: the
  same bytes, status and headers, and the same exception (class, message) at the same call;
- the injector never raises an exception of its own into the agent (any such exception would
  differ from the bare client's outcome);
- every request gets exactly one ended ``chat`` span, ERROR when the body read failed;
- the SSE parser gives back every byte it was fed, however the bytes were split.

The upstream is an in-process ``MockTransport`` whose body stream yields the generated chunks and
then, optionally, raises a read error: the properties are about our wrapper, and the item-by-item
loopback-socket checks live in ``test_reliability_inject_broken_reads``. A smaller property runs
through the real ``DuckDBSpanExporter`` on a temporary file.

Bounded for the normal test run (a fixed number of examples, derandomized, no example database);
``AGENTCHAOS_FUZZ_EXAMPLES=5000`` raises every property to that many examples.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import zlib
from collections.abc import Callable
from typing import Any

import duckdb
import httpx
import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from agentchaos_otel import attributes as A
from agentchaos_otel.content_encoding import TooLarge, bounded_decompress
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.call import http_module
from agentchaos_otel.inject.transport import AsyncChaosTransport, ChaosTransport
from agentchaos_otel.sse import SSEParser
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.trace import annotate
from agentchaos_otel.trace.processors import EpisodeSpanProcessor
from tests.support.inject_harness import JSON_BODY, Outcome, run_async, run_sync

URL = "http://llm.test/v1/chat/completions"
_LONG = int(os.environ.get("AGENTCHAOS_FUZZ_EXAMPLES", "0") or 0)


def fuzz(examples: int, *, long_cap: int | None = None) -> Callable[[Any], Any]:
    """Bounded settings for the normal run; ``AGENTCHAOS_FUZZ_EXAMPLES`` for the long mode."""
    long = min(_LONG, long_cap) if _LONG and long_cap else _LONG
    return settings(max_examples=long or examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# One SDK pipeline for the module: hypothesis runs many examples per test function, and
# function-scoped fixtures would be shared across them anyway.
PROVIDER = TracerProvider()
EXPORTER = InMemorySpanExporter()
PROVIDER.add_span_processor(EpisodeSpanProcessor())
PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))

# -- strategies --------------------------------------------------------------------------------
_SURROGATES = st.sampled_from(["\ud800", "x\udfffy", "\udbff\udc00"])
_TEXT = st.one_of(st.text(max_size=40), _SURROGATES)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10 ** 30), max_value=10 ** 30) | st.floats() | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=16)


@st.composite
def completions(draw: st.DrawFn) -> dict[str, Any]:
    """Chat completions, some well formed, some with odd field types."""
    message: dict[str, Any] = {"role": "assistant", "content": draw(st.one_of(_TEXT, st.none(), JSON_VALUES))}
    if draw(st.booleans()):
        message["tool_calls"] = draw(st.one_of(
            st.lists(st.fixed_dictionaries({"id": st.text(max_size=6), "type": st.just("function"),
                                            "function": st.fixed_dictionaries({
                                                "name": st.text(max_size=10),
                                                "arguments": st.one_of(_TEXT, JSON_VALUES)})}), max_size=2),
            JSON_VALUES))
    choice = {"index": 0, "message": draw(st.one_of(st.just(message), JSON_VALUES)),
              "finish_reason": draw(st.sampled_from(["stop", "length", "tool_calls", None]))}
    body: dict[str, Any] = {"id": "chatcmpl-f", "object": "chat.completion", "model": "m",
                            "choices": draw(st.one_of(st.just([choice]), JSON_VALUES))}
    if draw(st.booleans()):
        body["usage"] = draw(st.one_of(st.fixed_dictionaries({"prompt_tokens": st.integers(),
                                                              "completion_tokens": st.integers()}), JSON_VALUES))
    return body


def _dumps(value: Any) -> bytes:
    return json.dumps(value).encode()  # ensure_ascii: lone surrogates become \\u escapes


RESPONSE_BODIES = st.one_of(
    completions().map(_dumps),
    JSON_VALUES.map(_dumps),
    st.binary(max_size=300),
    st.tuples(completions().map(_dumps), st.integers(min_value=0, max_value=400)).map(lambda t: t[0][:t[1]]),
)


def _encode(body: bytes, encoding: str, corrupt: int | None) -> bytes:
    data = {"gzip": gzip.compress, "deflate": zlib.compress}.get(encoding, lambda b: b)(body)
    if corrupt is not None and data:
        data = data[: corrupt % (len(data) + 1)]
    return data


@st.composite
def upstream_bodies(draw: st.DrawFn, body: st.SearchStrategy[bytes], content_types: list[str]) -> dict[str, Any]:
    encoding = draw(st.sampled_from(["", "", "gzip", "deflate", "br", "identity"]))
    raw = _encode(draw(body), encoding, draw(st.none() | st.integers(min_value=0)))
    cuts = sorted(draw(st.lists(st.integers(min_value=0, max_value=len(raw)), max_size=6)))
    chunks = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    headers = [("content-type", draw(st.sampled_from(content_types))), ("x-request-id", "req-fuzz")]
    if encoding:
        headers.append(("content-encoding", encoding))
    if draw(st.booleans()):
        headers.append(("content-length", str(len(raw) + draw(st.sampled_from([0, 0, 7])))))
    return {"chunks": [c for c in chunks if c] if draw(st.booleans()) else chunks, "headers": headers,
            "status": draw(st.sampled_from([200, 200, 200, 201, 400, 429, 500])),
            "error": draw(st.sampled_from([None, None, "ReadError", "RemoteProtocolError", "ReadTimeout"]))}


def _sse_chunk(delta: Any, finish: Any = None) -> bytes:
    return b"data: " + _dumps({"id": "c", "object": "chat.completion.chunk", "model": "m",
                               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + b"\n\n"


SSE_EVENTS = st.one_of(
    _TEXT.map(lambda t: _sse_chunk({"content": t})),
    st.just(_sse_chunk({"role": "assistant", "content": ""})),
    st.sampled_from(["stop", "length", "tool_calls"]).map(lambda f: _sse_chunk({}, f)),
    st.text(max_size=8).map(lambda n: _sse_chunk({"tool_calls": [{"index": 0, "id": "t", "type": "function",
                                                                   "function": {"name": n, "arguments": "{}"}}]})),
    JSON_VALUES.map(lambda v: b"data: " + _dumps(v) + b"\n\n"),
    st.just(b": keep-alive\n\n"),
    st.just(b"event: ping\ndata: {}\n\n"),
    st.text(max_size=20).map(lambda t: b"data: " + t.encode("utf-8", "surrogatepass") + b"\n\n"),
    st.binary(max_size=30),
    st.just(b"data: [DONE]\n\n"),
)


@st.composite
def sse_streams(draw: st.DrawFn) -> bytes:
    stream = b"".join(draw(st.lists(SSE_EVENTS, max_size=10)))
    if draw(st.booleans()):
        stream += b"data: [DONE]\n\n"
    if draw(st.booleans()):
        stream = stream.replace(b"\n", b"\r\n")
    if stream and draw(st.booleans()):
        stream = stream[: draw(st.integers(min_value=0, max_value=len(stream)))]
    return stream


# -- running one case --------------------------------------------------------------------------
def _handler(case: dict[str, Any]) -> Callable[[Any], Any]:
    def handle(request: Any) -> Any:
        module = http_module(request)
        error = case["error"]

        class Body(module.SyncByteStream, module.AsyncByteStream):  # type: ignore[misc,name-defined]
            def __iter__(self) -> Any:
                yield from case["chunks"]
                if error:
                    raise getattr(module, error)("upstream broke mid-body", request=request)

            async def __aiter__(self) -> Any:
                for chunk in case["chunks"]:
                    yield chunk
                if error:
                    raise getattr(module, error)("upstream broke mid-body", request=request)

        return module.Response(case["status"], headers=case["headers"], stream=Body())

    return handle


def _run(module: Any, case: dict[str, Any], *, streamed: bool, is_async: bool, plan: str | None | bool,
         request: Any = None) -> Outcome:
    """``plan=False``: the bare client; otherwise the injector under an episode with that plan."""
    if is_async:
        async def go() -> Outcome:
            transport: Any = module.MockTransport(_handler(case))
            if plan is False:
                return await run_async(module, transport, URL, streamed, request)
            async with episode("fuzz", plan=plan or None, tracer_provider=PROVIDER):
                return await run_async(module, AsyncChaosTransport(transport, tracer_provider=PROVIDER),
                                       URL, streamed, request)

        return asyncio.run(go())
    transport = module.MockTransport(_handler(case))
    if plan is False:
        return run_sync(module, transport, URL, streamed, request)
    with episode("fuzz", plan=plan or None, tracer_provider=PROVIDER):
        return run_sync(module, ChaosTransport(transport, tracer_provider=PROVIDER), URL, streamed, request)


def _one_chat_span() -> Any:
    spans = [s for s in EXPORTER.get_finished_spans() if s.name.startswith(A.OP_CHAT)]
    assert len(spans) == 1, f"{len(spans)} chat spans"
    return spans[0]


def _check_same_as_bare(module: Any, case: dict[str, Any], *, streamed: bool, is_async: bool,
                        plans: tuple[str | None, ...]) -> None:
    bare = _run(module, case, streamed=streamed, is_async=is_async, plan=False)
    for plan in plans:
        EXPORTER.clear()
        ours = _run(module, case, streamed=streamed, is_async=is_async, plan=plan)
        span = _one_chat_span()
        if span.attributes[A.FAULT_INJECTED]:
            assert ours.exc_type is None or ours.exc_type == bare.exc_type
            continue
        assert ours == bare, plan
        if case["error"] and bare.exc_type == case["error"]:
            assert span.status.status_code == StatusCode.ERROR
            assert span.attributes[A.ERROR_TYPE] == case["error"]
        elif case["status"] < 400 and bare.exc_type is None:
            assert span.status.status_code != StatusCode.ERROR


# -- properties --------------------------------------------------------------------------------
JSON_TYPES = ["application/json", "application/json; charset=utf-8", "text/plain", ""]


@fuzz(120)
@given(case=upstream_bodies(RESPONSE_BODIES, JSON_TYPES), streamed=st.booleans(),
       module=st.sampled_from([httpx, httpx2]))
def test_response_bodies_reach_the_client_unchanged(case: dict[str, Any], streamed: bool, module: Any) -> None:
    _check_same_as_bare(module, case, streamed=streamed, is_async=False, plans=(None, "llm_error_persistent"))


@fuzz(40)
@given(case=upstream_bodies(RESPONSE_BODIES, JSON_TYPES), streamed=st.booleans())
def test_response_bodies_reach_the_async_client_unchanged(case: dict[str, Any], streamed: bool) -> None:
    _check_same_as_bare(httpx2, case, streamed=streamed, is_async=True, plans=(None, "llm_error_persistent"))


@fuzz(120)
@given(case=upstream_bodies(sse_streams(), ["text/event-stream", "text/event-stream; charset=utf-8"]),
       module=st.sampled_from([httpx, httpx2]), is_async=st.booleans())
def test_sse_streams_reach_the_client_unchanged(case: dict[str, Any], module: Any, is_async: bool) -> None:
    # streaming requests: the plan that can fire forces a buffered read of the stream
    _check_same_as_bare(module, case, streamed=True, is_async=is_async and module is httpx2,
                        plans=(None, "llm_error_persistent"))


REQUEST_BODIES = st.one_of(
    st.fixed_dictionaries({}, optional={k: JSON_VALUES for k in (
        "model", "messages", "tools", "stream", "max_tokens", "max_completion_tokens", "temperature")}),
    JSON_VALUES,
).map(lambda v: json.dumps(v).encode()) | st.binary(max_size=100)

pytestmark = pytest.mark.reliability


@fuzz(150)
@given(body=REQUEST_BODIES, module=st.sampled_from([httpx, httpx2]),
       plan=st.sampled_from([None, "llm_error_persistent", "http_500", "stream_cut"]))
def test_any_request_body_leaves_untouched_and_gets_a_span(body: bytes, module: Any, plan: str | None) -> None:
    seen: list[bytes] = []

    def handle(request: Any) -> Any:
        seen.append(request.content)
        return http_module(request).Response(200, headers={"content-type": "application/json"}, content=JSON_BODY)

    EXPORTER.clear()
    with module.Client(transport=ChaosTransport(module.MockTransport(handle), tracer_provider=PROVIDER)) as client:
        with episode("fuzz-req", plan=plan, tracer_provider=PROVIDER):
            r = client.post(URL, content=body)
    assert seen in ([body], [])  # [] only when an HTTP fault answered instead of the provider
    assert r.status_code in (200, 500)
    _one_chat_span()


@fuzz(100)
@given(body=st.fixed_dictionaries({}, optional={k: JSON_VALUES for k in (
    "model", "messages", "tools", "stream", "max_tokens", "temperature")}) | JSON_VALUES)
def test_request_annotation_takes_any_json(body: Any) -> None:
    """Normalising is idempotent, and the attributes only hold types a span attribute takes."""
    once = annotate.normalise_request(body)
    assert annotate.normalise_request(once) == once
    for value in annotate.request_attributes(A.PROVIDER_OPENAI, body).values():
        assert isinstance(value, str | bool | int | float)
        if isinstance(value, int) and not isinstance(value, bool):
            assert -2 ** 63 <= value < 2 ** 63


@fuzz(60)
@given(data=st.binary(max_size=2000), encoding=st.sampled_from(["gzip", "deflate", "identity"]),
       limit=st.integers(min_value=0, max_value=3000), cut=st.none() | st.integers(min_value=0))
def test_bounded_decompress_agrees_with_zlib_or_refuses(data: bytes, encoding: str, limit: int,
                                                        cut: int | None) -> None:
    encoded = _encode(data, encoding, cut)
    try:
        out = bounded_decompress(encoded, encoding, limit)
    except TooLarge:
        assert len(data) > limit or cut is not None
        return
    except ValueError:
        assert cut is not None  # only a cut body is corrupt
        return
    assert len(out) <= limit
    assert out == data or (cut is not None and data.startswith(out))


@fuzz(150)
@given(stream=sse_streams(), cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=8))
def test_sse_parser_keeps_every_byte_whatever_the_split(stream: bytes, cuts: list[int]) -> None:
    points = sorted({min(c, len(stream)) for c in cuts})
    pieces = [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]
    split, whole = SSEParser(), SSEParser()
    events = [e for p in pieces for e in split.feed(p)] + split.close()
    reference = whole.feed(stream) + whole.close()
    assert b"".join(e.raw for e in events) == stream
    assert [(e.data, e.event, e.complete) for e in events] == [(e.data, e.event, e.complete) for e in reference]


_NO_SURROGATES = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)


@fuzz(12, long_cap=250)  # each example writes a DuckDB file
@given(bodies=st.lists(st.tuples(
    st.fixed_dictionaries({}, optional={"model": _NO_SURROGATES, "tools": st.integers() | st.booleans(),
                                        "messages": st.lists(st.fixed_dictionaries({"content": _NO_SURROGATES}))}),
    st.binary(max_size=50) | st.just(JSON_BODY)), min_size=1, max_size=4))
def test_every_request_reaches_the_duckdb_store(bodies: list[tuple[dict[str, Any], bytes]], tmp_path_factory: Any
                                                ) -> None:
    db = tmp_path_factory.mktemp("fuzzdb") / "traces.duckdb"
    provider = TracerProvider()
    provider.add_span_processor(EpisodeSpanProcessor())
    provider.add_span_processor(BatchSpanProcessor(DuckDBSpanExporter(str(db))))  # written at shutdown
    for request, response in bodies:
        transport = ChaosTransport(httpx2.MockTransport(
            lambda r, body=response: httpx2.Response(200, headers={"content-type": "application/json"}, content=body)),
            tracer_provider=provider)
        with httpx2.Client(transport=transport) as client, episode("db", plan="llm_error_persistent",
                                                                  tracer_provider=provider):
            client.post(URL, json=request)
    provider.shutdown()
    with duckdb.connect(str(db), read_only=True) as conn:
        stored = conn.execute("SELECT count(*) FROM spans WHERE name LIKE 'chat%'").fetchone()[0]
    assert stored == len(bodies)
