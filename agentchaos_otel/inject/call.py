"""The I/O-free core of one intercepted LLM call: recognise, decide, rewrite, annotate.

The sync and async transports differ only in how they read bytes and sleep, so everything else
lives here, following httpx's own split between transports and protocol logic. Every method
that inspects provider data is written to fail open: on anything unexpected the agent gets the
provider's bytes unchanged and the span gets an ``agentchaos.injector.skipped`` event saying why.
"""

from __future__ import annotations

import gzip
import json
import sys
import time
import zlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from agentchaos_otel import attributes as A
from agentchaos_otel.faults import http as http_faults
from agentchaos_otel.faults import llm_response
from agentchaos_otel.faults import stream as sse
from agentchaos_otel.inject import wire
from agentchaos_otel.inject.binding import EpisodeState, FaultRecord, active_state
from agentchaos_otel.inject.plan import FaultRule
from agentchaos_otel.trace import annotate, metrics, signals

MAX_INSPECT_BYTES = 8 * 1024 * 1024
_DROP_ON_REWRITE = ("content-length", "content-encoding", "transfer-encoding")

PASSTHROUGH, BUFFER_JSON, BUFFER_SSE, STREAM = "passthrough", "buffer_json", "buffer_sse", "stream"


def http_module(request: Any) -> ModuleType:
    """httpx or httpx2, whichever the request came from."""
    return sys.modules[type(request).__module__.split(".")[0]]


def recognise(request: Any) -> str | None:
    """The provider wire format of an LLM call, or None for every other request."""
    if request.method != "POST":
        return None
    path = request.url.path.rstrip("/")
    if path.endswith("/chat/completions"):
        return A.PROVIDER_OPENAI
    if path.endswith("/messages") and ("anthropic-version" in request.headers or path.endswith("/v1/messages")):
        return A.PROVIDER_ANTHROPIC
    return None


@dataclass
class PreAction:
    delay: float = 0.0
    exception: BaseException | None = None
    response: Any = None


@dataclass
class Rewrite:
    headers: list[tuple[bytes, bytes]] | None  # None: keep the original response untouched
    body: bytes
    delay: float = 0.0


def _decode(raw: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return raw
    if encoding in ("gzip", "x-gzip"):
        return gzip.decompress(raw)
    if encoding == "deflate":
        try:
            return zlib.decompress(raw)
        except zlib.error:
            return zlib.decompress(raw, -zlib.MAX_WBITS)
    raise ValueError(f"unsupported content-encoding {encoding!r}")


def message_digest(provider: str, body: dict[str, Any]) -> str:
    """Digest of what the agent reads from a completion (see ``WireFormat.digest``)."""
    return wire.for_provider(provider).digest(body)


def _rewritten_headers(response: Any, body: bytes) -> list[tuple[bytes, bytes]]:
    """Original headers (request id, rate-limit headers...) minus those the new body invalidates."""
    kept = [(k, v) for k, v in response.headers.raw if k.decode("latin-1").lower() not in _DROP_ON_REWRITE]
    kept.append((b"content-length", str(len(body)).encode()))
    return kept


class LLMCall:
    """State of one intercepted call from request to the end of its (possibly streamed) response."""

    def __init__(self, request: Any, provider: str, req: dict[str, Any], state: EpisodeState | None,
                 tracer: trace.Tracer) -> None:
        self.request = request
        self.provider = provider
        self.wire = wire.for_provider(provider)
        self.req = req
        self.state = state
        self.module = http_module(request)
        self.streaming = bool(req.get("stream"))
        self.request_tools = req.get("tools") if isinstance(req.get("tools"), list) else None
        self.call_index = state.begin_call() if state is not None else 0
        self.rule: FaultRule | None = None
        self._ended = False
        self._token: object | None = None
        self._started = time.perf_counter()
        self.response_attrs: dict[str, Any] = {}
        self.status_code: int | None = None
        url = request.url
        start_attrs = annotate.request_attributes(provider, req)
        start_attrs[A.SERVER_ADDRESS] = url.host
        if url.port:
            start_attrs[A.SERVER_PORT] = url.port
        self.span = tracer.start_span(A.chat_span_name(req.get("model")), kind=SpanKind.CLIENT,
                                      attributes=start_attrs)
        self.span.set_attribute(A.FAULT_INJECTED, False)

    # -- lifecycle -------------------------------------------------------------------------------
    @classmethod
    def start(cls, request: Any, tracer: trace.Tracer) -> LLMCall | None:
        provider = recognise(request)
        if provider is None:
            return None
        try:
            req = json.loads(request.content or b"{}")
        except (ValueError, UnicodeDecodeError, RuntimeError):
            req = None
        if not isinstance(req, dict):
            return None
        return cls(request, provider, req, active_state(), tracer)

    def activate(self) -> None:
        self._token = otel_context.attach(trace.set_span_in_context(self.span))

    def deactivate(self) -> None:
        if self._token is not None:
            otel_context.detach(self._token)  # type: ignore[arg-type]
            self._token = None

    def skip(self, reason: str) -> None:
        self.span.add_event(A.EVENT_INJECTOR_SKIP, {A.SKIP_REASON: reason})

    def end(self, status_code: int | None = None, error_type: str | None = None) -> None:
        if self._ended:
            return
        self._ended = True
        if status_code is not None:
            self.span.set_attribute(A.RESPONSE_STATUS_CODE, status_code)
            if status_code >= 400 and error_type is None:
                error_type = str(status_code)
        if error_type:
            self.span.set_attribute(A.ERROR_TYPE, error_type)
            self.span.set_status(Status(StatusCode.ERROR, error_type))
        metrics.record_call(self.provider, self.req.get("model"), self.response_attrs,
                            time.perf_counter() - self._started, error_type)
        self.span.end()

    def fail(self, exc: BaseException) -> None:
        self.span.record_exception(exc)
        self.end(error_type=type(exc).__name__)

    # -- fault bookkeeping -----------------------------------------------------------------------
    def _record(self, rule: FaultRule, changed: bool, before: str, after: str, detail: str = "") -> None:
        spec = rule.spec
        exp = self.state.experiment.name if self.state is not None else ""
        self.span.set_attributes({
            A.FAULT_INJECTED: True, A.FAULT_TYPE: spec.fault_type, A.FAULT_TARGET: spec.target,
            A.FAULT_EXPERIMENT: exp, A.FAULT_STRATEGY: rule.strategy, A.FAULT_CHANGED: changed,
            A.FAULT_DIGEST_BEFORE: before, A.FAULT_DIGEST_AFTER: after, A.FAULT_DETAIL: spec.name,
        })
        self.span.add_event(A.EVENT_FAULT_APPLIED, {A.FAULT_DETAIL: spec.name, A.FAULT_CHANGED: changed})
        if self.state is not None:
            step = self.span.attributes.get(A.STEP) if hasattr(self.span, "attributes") else None
            self.state.log(FaultRecord(call=self.call_index, step=step, fault=spec.name,
                                       fault_type=spec.fault_type, target=spec.target,
                                       strategy=rule.strategy, changed=changed, digest_before=before,
                                       digest_after=after, detail=detail))

    def _delay(self, rule: FaultRule) -> float:
        scale = self.state.plan.delay_scale if self.state is not None else 1.0
        return max(0.0, float(rule.spec.delay_s) * scale)

    # -- before the request is sent --------------------------------------------------------------
    def pre_request(self) -> PreAction:
        """Decide request-stage faults: loop guard, HTTP status/exception/latency, stream faults."""
        state = self.state
        if state is None or not state.has_faults:
            return PreAction()
        if state.loop_guard_hit(self.call_index):
            exc = self.module.ReadTimeout("agentchaos loop guard: more than 100 intercepted calls in this task",
                                          request=self.request)
            self.skip("loop guard reached")
            return PreAction(exception=exc)
        if not state.wants_stage("request"):
            return PreAction()
        rule = state.choose("request", self.call_index, streaming=self.streaming)
        if rule is None:
            return PreAction()
        self.rule = rule
        spec = rule.spec
        if spec.target == "stream":
            return PreAction()  # applied while the response streams
        delay = self._delay(rule)
        exc_name = http_faults.exception_class_name(spec)
        if exc_name:
            exc = getattr(self.module, exc_name)(http_faults.exception_message(spec), request=self.request)
            self._record(rule, True, "", signals.digest(exc_name))
            return PreAction(delay=delay, exception=exc)
        err = http_faults.error_response(spec, self.provider, model=self.req.get("model"),
                                         rng=self.state.mutation_rng)
        if err is None:  # pure latency
            self._record(rule, delay > 0, "", "", detail=f"delay {delay:.3f}s")
            return PreAction(delay=delay)
        response = self.module.Response(err.status, headers=list(err.headers.items()), content=err.body,
                                        request=self.request)
        self._record(rule, True, "", signals.digest(err.body))
        self.span.set_attribute(A.RESPONSE_BODY_BYTES, len(err.body))
        self.response_attrs = {A.RESPONSE_ERROR_MARKER: signals.error_marker(err.body.decode("utf-8", "replace"))}
        self.span.set_attributes(self.response_attrs)
        self.end(status_code=err.status)
        return PreAction(delay=delay, response=response)

    # -- after the response headers arrive -------------------------------------------------------
    def mode_for(self, response: Any) -> str:
        self.status_code = response.status_code
        ctype = response.headers.get("content-type", "").lower()
        encoding = response.headers.get("content-encoding", "")
        if "text/event-stream" in ctype:
            if encoding and encoding.lower() != "identity":
                self.skip(f"streamed body with content-encoding {encoding}: passed through unread")
                return PASSTHROUGH
            if self.rule is None and self.state is not None and self.state.wants_stage("response"):
                return BUFFER_SSE
            return STREAM
        length = response.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_INSPECT_BYTES:
            self.skip(f"body of {length} bytes exceeds the {MAX_INSPECT_BYTES}-byte inspection limit")
            return PASSTHROUGH
        return BUFFER_JSON

    def finish_passthrough(self, response: Any) -> None:
        self.end(status_code=response.status_code)

    def process_json(self, response: Any, raw: bytes) -> Rewrite:
        """Inspect a complete non-streamed body; maybe rewrite it. Never raises."""
        self.span.set_attribute(A.RESPONSE_BODY_BYTES, len(raw))
        try:
            return self._process_json(response, raw)
        except Exception as exc:  # fail open: a bug of ours must not reach the agent
            self.skip(f"injector error: {type(exc).__name__}: {exc}")
            return Rewrite(None, raw)
        finally:
            self.end(status_code=response.status_code)

    def _process_json(self, response: Any, raw: bytes) -> Rewrite:
        if not raw:
            self.skip("empty body")
            return Rewrite(None, raw)
        try:
            decoded = _decode(raw, response.headers.get("content-encoding", ""))
        except (ValueError, OSError, EOFError, zlib.error) as exc:
            self.skip(f"undecodable body: {exc}")
            return Rewrite(None, raw)
        try:
            body = json.loads(decoded)
        except (ValueError, UnicodeDecodeError):
            self.skip("non-JSON body" if decoded.lstrip()[:1] not in (b"{", b"[") else "truncated or invalid JSON body")
            return Rewrite(None, raw)
        if not isinstance(body, dict):
            self.skip("JSON body is not an object")
            return Rewrite(None, raw)
        if response.status_code >= 400:
            text = decoded.decode("utf-8", "replace")
            self.response_attrs = {A.RESPONSE_ERROR_MARKER: signals.error_marker(text) or "provider_json"}
            self.span.set_attributes(self.response_attrs)
            return Rewrite(None, raw)
        original_view = self.wire.view(body)
        before = self.wire.digest(body)
        self.span.set_attributes(annotate.original_attributes(original_view, before))
        new_body, delay = self._apply_response_fault(body, before)
        seen = new_body if new_body is not None else body
        if self.state is not None:
            self.state.previous_body = seen
        seen_view = self.wire.view(seen)
        self.response_attrs = annotate.response_attributes(seen_view, self.request_tools)
        self.response_attrs.update(signals.argument_grounding(seen_view.tool_calls, self.req.get("messages")))
        self.span.set_attributes(self.response_attrs)
        if new_body is None:
            return Rewrite(None, raw, delay)
        out = json.dumps(new_body, ensure_ascii=False).encode("utf-8")
        return Rewrite(_rewritten_headers(response, out), out, delay)

    def _apply_response_fault(self, body: dict[str, Any], before: str) -> tuple[dict[str, Any] | None, float]:
        """Run the response-stage schedule on a parsed body; returns (new body or None, delay)."""
        state = self.state
        if state is None or not state.has_faults or self.rule is not None or not state.wants_stage("response"):
            return None, 0.0
        rule = state.choose("response", self.call_index, has_tool_calls=self.wire.has_tool_calls(body))
        if rule is None:
            return None, 0.0
        try:
            new_body = self.wire.apply_response_fault(rule.spec, body, rng=state.mutation_rng,
                                                      previous_body=state.previous_body)
        except llm_response.FaultNotApplicable as exc:
            state.release(rule)
            self.skip(f"{rule.spec.name} not applicable: {exc}")
            return None, 0.0
        after = self.wire.digest(new_body)
        delay = self._delay(rule)
        changed = after != before or (delay > 0 and rule.spec.fault_type == "latency")
        self._record(rule, changed, before, after)
        return (new_body if after != before else None), delay

    # -- streamed responses ----------------------------------------------------------------------
    def process_sse_buffer(self, response: Any, raw: bytes) -> Rewrite:
        """A whole SSE body read up front so a content/tool-call fault can rewrite it."""
        try:
            parser = sse.SSEParser()
            events = parser.feed(raw) + parser.close()
            body = self.wire.assemble_stream(events)
            before = self.wire.digest(body)
            self.span.set_attributes(annotate.original_attributes(self.wire.view(body), before))
            new_body, delay = self._apply_response_fault(body, before)
            if self.state is not None:
                self.state.previous_body = new_body if new_body is not None else body
            if new_body is None:
                return Rewrite(None, raw, delay)
            out = self.wire.render_stream(new_body, events)
            return Rewrite(_rewritten_headers(response, out)[:-1], out, delay)  # SSE: no content-length
        except Exception as exc:  # fail open
            self.skip(f"injector error on stream: {type(exc).__name__}: {exc}")
            return Rewrite(None, raw)

    def stream_processor(self, *, observe_original: bool) -> StreamProcessor:
        faulter = None
        if self.rule is not None and self.rule.spec.target == "stream" and self.state is not None:
            faulter = self.wire.stream_faulter(self.rule.spec, self.state.mutation_rng)
        return StreamProcessor(self, faulter, observe_original=observe_original)


class StreamProcessor:
    """Transforms and observes one SSE stream chunk by chunk; ends the span when the stream ends."""

    def __init__(self, call: LLMCall, faulter: Any, *, observe_original: bool) -> None:
        self.call = call
        self.delay_scale = call.state.plan.delay_scale if call.state is not None else 1.0
        self.faulter = faulter
        self.wire = call.wire
        self.up = sse.SSEParser() if (faulter is not None or observe_original) else None
        self.up_events: list[Any] = []
        self.seen = sse.SSEParser()
        self.seen_events: list[Any] = []
        self.chunks = 0
        self.last_chunk_at: float | None = None
        self.max_gap = 0.0
        self.broken = False
        self.finished = False

    def _observe(self, data: bytes) -> None:
        now = time.perf_counter()
        if self.last_chunk_at is not None:
            self.max_gap = max(self.max_gap, now - self.last_chunk_at)
        self.last_chunk_at = now
        self.chunks += 1
        self.seen_events.extend(self.seen.feed(data))

    def feed(self, chunk: bytes) -> list[bytes | sse.Stall]:
        if self.broken or (self.faulter is None and self.up is None):
            if not self.broken:
                self._guard(self._observe, chunk)
            return [chunk]
        try:
            events = self.up.feed(chunk) if self.up is not None else []
            self.up_events.extend(events)
            if self.faulter is None:
                self._observe(chunk)
                return [chunk]
            out: list[bytes | sse.Stall] = []
            for event in events:
                out.extend(self.faulter.process(event))
            return self._emitted(out)
        except Exception as exc:  # fail open: from here on the stream passes through unread
            self.broken = True
            self.call.skip(f"injector error on stream: {type(exc).__name__}: {exc}")
            return [chunk]

    def _emitted(self, out: list[bytes | sse.Stall]) -> list[bytes | sse.Stall]:
        """Observe what goes to the agent; stalls follow the plan's delay scale."""
        result: list[bytes | sse.Stall] = []
        for item in out:
            if isinstance(item, sse.Stall):
                result.append(sse.Stall(item.seconds * self.delay_scale))
            else:
                self._observe(item)
                result.append(item)
        return result

    def _guard(self, fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except Exception as exc:
            self.broken = True
            self.call.skip(f"stream observer error: {type(exc).__name__}: {exc}")

    def end_of_upstream(self) -> list[bytes | sse.Stall]:
        if self.broken or self.faulter is None:
            return []
        try:
            tail = self.up.close() if self.up is not None else []
            self.up_events.extend(tail)
            out: list[bytes | sse.Stall] = []
            for event in tail:
                out.extend(self.faulter.process(event))
            out.extend(self.faulter.finish())
            return self._emitted(out)
        except Exception as exc:
            self.broken = True
            self.call.skip(f"injector error on stream end: {type(exc).__name__}: {exc}")
            return []

    def close(self, *, error: BaseException | None = None) -> None:
        """Annotate from everything the agent received, record the fault, end the span."""
        if self.finished:
            return
        self.finished = True
        call = self.call
        try:
            self.seen_events.extend(self.seen.close())
            if self.faulter is not None and call.rule is not None:
                up_body = self.wire.assemble_stream(self.up_events)
                before = self.wire.digest(up_body)
                call.span.set_attributes(annotate.original_attributes(self.wire.view(up_body), before))
                changed = bool(getattr(self.faulter, "changed", True))
                seen_body = self.wire.assemble_stream(self.seen_events)
                call._record(call.rule, changed, before, self.wire.digest(seen_body))
            attrs: dict[str, Any] = {
                A.RESPONSE_STREAM_CHUNKS: self.chunks,
                A.RESPONSE_STREAM_DONE: any(self.wire.stream_ended(e) for e in self.seen_events),
                A.RESPONSE_MAX_CHUNK_GAP_MS: round(self.max_gap * 1000.0, 3),
            }
            if not self.broken:
                body = self.wire.assemble_stream(self.seen_events)
                if self.faulter is None and call.state is not None:
                    call.state.previous_body = body
                seen_view = self.wire.view(body)
                call.response_attrs = annotate.response_attributes(seen_view, call.request_tools)
                call.response_attrs.update(signals.argument_grounding(seen_view.tool_calls,
                                                                      call.req.get("messages")))
                attrs.update(call.response_attrs)
                if self.faulter is None and call.rule is None:
                    call.span.set_attributes(annotate.original_attributes(seen_view, self.wire.digest(body)))
            call.span.set_attributes(attrs)
        except Exception as exc:
            call.skip(f"stream annotation error: {type(exc).__name__}: {exc}")
        if error is not None:
            call.fail(error)
        else:
            call.end(status_code=call.status_code)
