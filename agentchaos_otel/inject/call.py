"""The I/O-free core of one intercepted LLM call: recognise, decide, rewrite, annotate.

The sync and async transports differ only in how they read bytes and sleep, so everything else
lives here, following httpx's own split between transports and protocol logic. Every method
that inspects provider data is written to fail open: on anything unexpected the agent gets the
provider's bytes unchanged and the span gets an ``agentchaos.injector.skipped`` event saying why.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.trace import SpanKind, Status, StatusCode

from agentchaos_otel import attributes as A
from agentchaos_otel import redact, signals
from agentchaos_otel.content_encoding import TooLarge, bounded_decompress
from agentchaos_otel.faults import http as http_faults
from agentchaos_otel.faults import llm_response
from agentchaos_otel.faults.stream import Stall
from agentchaos_otel.inject import hold, wire
from agentchaos_otel.plans.binding import EpisodeState, FaultRecord, active_state
from agentchaos_otel.plans.plan import FaultRule
from agentchaos_otel.sse import SSEParser
from agentchaos_otel.trace import annotate, metrics
from agentchaos_otel.trace.processors import adoptable_parent

MAX_INSPECT_BYTES = 8 * 1024 * 1024
_DROP_ON_REWRITE = ("content-length", "content-encoding", "transfer-encoding")

# How the transport handles a response body. BUFFER_* read it whole first because a fault may
# rewrite it; every other mode lets the bytes flow to the agent as they arrive and only observes.
PASSTHROUGH, BUFFER_JSON, BUFFER_SSE, STREAM = "passthrough", "buffer_json", "buffer_sse", "stream"
OBSERVE_JSON = "observe_json"
BUFFERED = (BUFFER_JSON, BUFFER_SSE)


def http_module(request: Any) -> ModuleType:
    """httpx or httpx2, whichever the request came from."""
    return sys.modules[type(request).__module__.split(".")[0]]


def recognise(request: Any) -> str | None:
    """The provider wire format of an LLM call, or None for every other request."""
    adapter = wire.for_request(request)
    return None if adapter is None else adapter.provider


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


@dataclass
class Buffered:
    """What the transport sends after reading a body whole (sans I/O, so sync and async agree).

    ``head`` goes first; if the read stopped early, the rest of the upstream body follows, or the
    read error is raised exactly where the agent would have met it without us. With ``proc``
    None, ``head`` is the complete body and the span has already ended.
    """

    head: list[bytes]
    headers: list[tuple[bytes, bytes]] | None = None  # None: the original headers
    proc: Any = None
    delay: float = 0.0


def _sse_done(raw: bytes) -> bool:
    """The stream reached a complete ``[DONE]``: the SDKs stop reading there."""
    parser = SSEParser()
    return any(e.is_done and e.complete for e in parser.feed(raw) + parser.close())


def _conversation(state: EpisodeState | None) -> annotate.Conversation:
    """The episode's conversation memory (a fresh one outside an episode)."""
    if state is None:
        return annotate.Conversation()
    conv = state.scratch.get("conversation")
    if conv is None:
        conv = state.scratch.setdefault("conversation", annotate.Conversation())
    return conv


def message_digest(provider: str, body: dict[str, Any]) -> str:
    """Digest of what the agent reads from a completion (see ``WireFormat.digest``)."""
    return wire.for_provider(provider).digest(body)


_BODY_HEADERS = (b"content-type", b"content-encoding", b"content-length")


def body_headers(response: Any) -> dict[str, str]:
    """Content type, encoding and length of a response, read in one pass over its raw headers.

    Each value is what ``response.headers.get(name)`` gives (repeated headers joined by ", ",
    decoded as the headers are). httpx's ``get`` walks the header list once per name, after
    working out the list's encoding by decoding every header; an ASCII value reads the same in
    each encoding it may pick, so that is only asked for a value that is not ASCII.
    """
    found: dict[bytes, list[bytes]] = {}
    for key, value in response.headers.raw:
        low = key.lower()
        if low in _BODY_HEADERS:
            found.setdefault(low, []).append(value)
    out = {}
    for key, values in found.items():
        encoding = "ascii" if all(v.isascii() for v in values) else response.headers.encoding
        out[key.decode()] = ", ".join(v.decode(encoding) for v in values)
    return out


def _rewritten_headers(response: Any, body: bytes) -> list[tuple[bytes, bytes]]:
    """Original headers (request id, rate-limit headers...) minus those the new body invalidates."""
    kept = [(k, v) for k, v in response.headers.raw if k.decode("latin-1").lower() not in _DROP_ON_REWRITE]
    kept.append((b"content-length", str(len(body)).encode()))
    return kept


class LLMCall:
    """State of one intercepted call from request to the end of its (possibly streamed) response.

    ``req`` is the request as ``annotate.normalise_request`` reads it, never the raw body.
    """

    def __init__(self, request: Any, adapter: wire.WireFormat, req: dict[str, Any], state: EpisodeState | None,
                 tracer: trace.Tracer) -> None:
        self.request = request
        self.wire = adapter  # every provider-specific step of the call goes through it
        self.provider = adapter.provider
        self.req = req
        self.state = state
        self.module = http_module(request)
        self.streaming = req["stream"]
        self.request_tools = req.get("tools")
        self.call_index = state.begin_call() if state is not None else 0
        self.rule: FaultRule | None = None
        self._ended = False
        self._token: object | None = None
        self._started = time.perf_counter()
        self.response_attrs: dict[str, Any] = {}
        # Attributes of the response written with those of the end, in one write: each write takes
        # the span's lock and walks the SDK's attribute checks from the start.
        self._pending: dict[str, Any] = {}
        self.status_code: int | None = None
        self.content_encoding: str | None = None  # the response's, once its headers arrived
        self.received_bytes = 0
        self.received_chunks = 0
        url = request.url
        # Read once per call: request and response annotation agree even if it changes mid-call.
        self.capture = annotate.content_capture_enabled()
        start_attrs = adapter.request_attributes(req, capture=self.capture, conversation=_conversation(state))
        self.message_text: str | None = None
        start_attrs[A.SERVER_ADDRESS] = url.host
        if url.port:
            start_attrs[A.SERVER_PORT] = url.port
        start_attrs[A.FAULT_INJECTED] = False  # with the start attributes: one attribute write less per call
        self.span = tracer.start_span(A.chat_span_name(req.get("model")), kind=SpanKind.CLIENT,
                                      attributes=start_attrs)

    # -- lifecycle -------------------------------------------------------------------------------
    @classmethod
    def start(cls, request: Any, tracer: trace.Tracer) -> LLMCall | None:
        """An LLMCall for a request to an LLM endpoint, whatever its body; None for other requests.

        None as well while OTel instrumentation is suppressed (``suppress_instrumentation()``, an
        exporter's own requests): the request then passes untouched, with no span and no fault.
        """
        if not is_instrumentation_enabled():
            return None
        redact.remember_request(request)  # so an echo of its credentials is redacted from any span
        adapter = wire.for_request(request)
        if adapter is None:
            return None
        req, problem = adapter.parse_request(request)
        # another instrumentation may own this call without having made its span current
        # (trace.processors.adoptable_parent): the call joins that span, in the application's trace
        owner = adoptable_parent(req.get("model"))
        token = otel_context.attach(trace.set_span_in_context(owner)) if owner is not None else None
        try:
            call = cls(request, adapter, req, active_state(), tracer)
        finally:
            if token is not None:
                otel_context.detach(token)
        if problem:
            call.skip(problem)
        return call

    def activate(self) -> None:
        self._token = otel_context.attach(trace.set_span_in_context(self.span))

    def deactivate(self) -> None:
        if self._token is not None:
            otel_context.detach(self._token)  # type: ignore[arg-type]
            self._token = None

    def skip(self, reason: str) -> None:
        self.span.add_event(A.EVENT_INJECTOR_SKIP, {A.SKIP_REASON: reason})

    def not_fired(self, fault: str, reason: str) -> None:
        """A fault the plan put on this call that did not fire, and why."""
        self.span.add_event(A.EVENT_FAULT_NOT_FIRED, {A.FAULT_DETAIL: fault, A.SKIP_REASON: reason})

    def end(self, status_code: int | None = None, error_type: str | None = None) -> None:
        if self._ended:
            return
        self._ended = True
        attrs = self._pending  # written in one call: each write takes the span's lock
        if self.status_code is not None:  # a provider response arrived: say how much of its body
            attrs[A.RESPONSE_BODY_BYTES] = self.received_bytes
            attrs[A.RESPONSE_BODY_CHUNKS] = self.received_chunks
        if status_code is not None:
            attrs[A.RESPONSE_STATUS_CODE] = status_code
            if status_code >= 400 and error_type is None:
                error_type = str(status_code)
        if error_type:
            attrs[A.ERROR_TYPE] = error_type
        if attrs:
            self.span.set_attributes(attrs)
        if error_type:
            self.span.set_status(Status(StatusCode.ERROR, error_type))
        metrics.record_call(self.provider, self.req.get("model"), self.response_attrs,
                            time.perf_counter() - self._started, error_type)
        if not hold.hold(self.span):  # a response guard further out records its decision first
            self.span.end()

    def fail(self, exc: BaseException) -> None:
        self.span.record_exception(exc)
        self.end(status_code=self.status_code, error_type=type(exc).__name__)

    def grounding(self, tool_calls: list[dict[str, Any]]) -> dict[str, Any]:
        """Argument grounding against the request's messages, with their text folded once per episode."""
        messages = self.req.get("messages")
        if not tool_calls or not messages:
            return {}
        if self.message_text is None:
            self.message_text = _conversation(self.state).update(messages)[1]
        return signals.argument_grounding(tool_calls, messages, text=self.message_text)

    def count_received(self, chunk: bytes) -> None:
        """One read of the provider's body (called by the transport as bytes arrive)."""
        self.received_bytes += len(chunk)
        self.received_chunks += 1

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
        err = self.wire.error_response(spec, model=self.req.get("model"), rng=state.mutation_rng)
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
        headers = body_headers(response)
        ctype = headers.get("content-type", "").lower()
        encoding = self.content_encoding = headers.get("content-encoding", "")
        if "text/event-stream" in ctype:
            if encoding and encoding.lower() != "identity":
                self.skip(f"streamed body with content-encoding {encoding}: passed through unread")
                return PASSTHROUGH
            if self.response_fault_possible(streamed=True):
                return BUFFER_SSE
            return STREAM
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_INSPECT_BYTES:
            self.skip(f"body of {length} bytes exceeds the {MAX_INSPECT_BYTES}-byte inspection limit")
            return PASSTHROUGH
        return BUFFER_JSON if self.response_fault_possible(streamed=False) else OBSERVE_JSON

    def response_fault_possible(self, *, streamed: bool) -> bool:
        """Whether a response-stage fault can still fire on this call; else nothing is held back.

        A non-streamed JSON body is read whole anyway (for the span, and by the SDK before it
        parses), so it is held whenever a rule of the plan is still open for this call (not spent,
        not bound to another call, a probability above 0), and the guard is decided on the body
        itself: a model that returns tool calls the request never declared still gets tool-call
        faults. A stream is held back only for what can fire given what is known before its body:
        a tool-call fault counts only when the request declared tools; a tool-call fault ruled out
        that way is recorded (``agentchaos.fault.not_fired``) and the stream flows.
        """
        state = self.state
        if state is None or self.rule is not None or not state.has_faults:
            return False
        if not streamed or self.request_tools:
            return state.could_fire("response", self.call_index)
        rules = state.open_rules("response", self.call_index, has_tool_calls=False)
        if any(guard is None for _, guard in rules):
            return True
        for rule, _ in rules:
            self.not_fired(rule.spec.name, "the request declared no tools, and a stream is not held back to see "
                                           "whether its response calls one anyway")
        return False

    def finish_passthrough(self, response: Any) -> None:
        self.end(status_code=response.status_code)

    def already_read(self, response: Any) -> Any:
        """A response the wrapped transport consumed itself: it reaches the agent as it is."""
        self.skip("response already read by the wrapped transport: passed through uninspected")
        self.finish_passthrough(response)
        return response

    def buffered(self, response: Any, chunks: list[bytes], mode: str, *, truncated: bool,
                 error: Exception | None) -> Buffered:
        """Decide what the agent gets once a buffered read ended: whole, too large, or failed.

        A read that failed (reset, short body, bad chunk) is replayed as it was received and then
        fails the same way, so the agent meets the same exception after the same bytes as it
        would without us. A stream that failed only after a complete ``[DONE]`` is what the SDKs
        read as complete; it is treated as complete, and the error still follows the last byte.
        """
        raw = b"".join(chunks)
        sse_mode = mode == BUFFER_SSE
        if truncated:
            self.skip(f"body exceeds the {MAX_INSPECT_BYTES}-byte inspection limit")
            return Buffered(chunks, proc=self.observer(response, STREAM if sse_mode else PASSTHROUGH))
        if error is not None and not (sse_mode and _sse_done(raw)):
            self.skip(f"body read failed after {len(raw)} bytes: {type(error).__name__}")
            return Buffered(chunks, proc=self.observer(response, STREAM if sse_mode else OBSERVE_JSON))
        if not sse_mode:
            rewrite = self.process_json(response, raw)
            return Buffered([rewrite.body], rewrite.headers, None, rewrite.delay)
        rewrite = self.process_sse_buffer(response, raw)
        return Buffered([rewrite.body], rewrite.headers, self.stream_processor(observe_original=False),
                        rewrite.delay)

    def observer(self, response: Any, mode: str) -> Any:
        """The processor for a body that flows to the agent as it arrives."""
        if mode == STREAM:
            return self.stream_processor(observe_original=True)
        return BodyObserver(self, response, inspect=mode == OBSERVE_JSON)

    def process_json(self, response: Any, raw: bytes, *, allow_fault: bool = True) -> Rewrite:
        """Inspect a complete non-streamed body; maybe rewrite it. Never raises."""
        try:
            return self._process_json(response, raw, allow_fault)
        except Exception as exc:  # fail open: a bug of ours must not reach the agent
            self.skip(f"injector error: {type(exc).__name__}: {exc}")
            return Rewrite(None, raw)
        finally:
            self.end(status_code=response.status_code)

    def _process_json(self, response: Any, raw: bytes, allow_fault: bool) -> Rewrite:
        if not raw:
            self.skip("empty body")
            return Rewrite(None, raw)
        try:
            encoding = self.content_encoding
            if encoding is None:
                encoding = response.headers.get("content-encoding", "")
            decoded = bounded_decompress(raw, encoding, MAX_INSPECT_BYTES)
        except TooLarge as exc:
            self.skip(f"{exc}: passed through undecoded")
            return Rewrite(None, raw)
        except ValueError as exc:
            self.skip(f"undecodable body: {exc}")
            return Rewrite(None, raw)
        try:
            body = json.loads(decoded)
        except (ValueError, UnicodeDecodeError):
            self.skip("non-JSON body" if decoded.lstrip()[:1] not in (b"{", b"[") else "truncated or invalid JSON body")
            return Rewrite(None, raw)
        if not isinstance(body, dict):
            self.skip("JSON body is not an object")
            self.span.set_attributes(self.wire.body_signals(body))
            return Rewrite(None, raw)
        if response.status_code >= 400:
            text = decoded.decode("utf-8", "replace")
            self.response_attrs = {A.RESPONSE_ERROR_MARKER: signals.error_marker(text) or "provider_json",
                                   **signals.error_body_signals(body)}
            self.span.set_attributes(self.response_attrs)
            return Rewrite(None, raw)
        original_view = self.wire.view(body)
        before = self.wire.digest(body)
        pending = self._pending  # written by ``end``, which always follows (``process_json``)
        pending.update(annotate.original_attributes(original_view, before))
        new_body, delay = self._apply_response_fault(body, before) if allow_fault else (None, 0.0)
        seen = new_body if new_body is not None else body
        if self.state is not None:
            self.state.previous_body = seen
        seen_view = original_view if new_body is None else self.wire.view(seen)  # one view when unchanged
        if self.span.is_recording():
            self.response_attrs = annotate.response_attributes(seen_view, self.request_tools, capture=self.capture)
            self.response_attrs.update(self.grounding(seen_view.tool_calls))
            self.response_attrs.update(self.wire.body_signals(seen))
            pending.update(self.response_attrs)
        else:  # sampled out: nothing reads the signals; the GenAI metrics still count the tokens
            self.response_attrs = annotate.usage_attributes(seen_view)
        if new_body is None:
            return Rewrite(None, raw, delay)
        out = json.dumps(new_body, ensure_ascii=False).encode("utf-8")
        return Rewrite(_rewritten_headers(response, out), out, delay)

    def _apply_response_fault(self, body: dict[str, Any], before: str) -> tuple[dict[str, Any] | None, float]:
        """Run the response-stage schedule on a parsed body; returns (new body or None, delay)."""
        state = self.state
        if state is None or not state.has_faults or self.rule is not None or not state.wants_stage("response"):
            return None, 0.0
        why: list[tuple[str, str]] = []
        rule = state.choose("response", self.call_index, has_tool_calls=self.wire.has_tool_calls(body), why=why)
        if rule is None:
            for fault, reason in why:
                self.not_fired(fault, reason)
            return None, 0.0
        try:
            new_body = self.wire.apply_response_fault(rule.spec, body, rng=state.mutation_rng,
                                                      previous_body=state.previous_body)
        except llm_response.FaultNotApplicable as exc:
            state.release(rule)
            self.not_fired(rule.spec.name, f"not applicable: {exc}")
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
            parser = SSEParser()
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


class BodyObserver:
    """Lets a non-streamed body through as it arrives; annotates it once the upstream has ended.

    Used when no fault can fire on the call (``inspect``: the body is kept, up to the inspection
    limit, for the span) and for bodies passed through unread. The span ends when the body does,
    with the read error if the agent met one.
    """

    def __init__(self, call: LLMCall, response: Any, *, inspect: bool) -> None:
        self.call = call
        self.response = response
        self.kept: bytearray | None = bytearray() if inspect else None
        self.complete = False
        self.finished = False

    def feed(self, chunk: bytes) -> list[bytes | Stall]:
        if self.kept is not None:
            if len(self.kept) + len(chunk) > MAX_INSPECT_BYTES:
                self.kept = None
                self.call.skip(f"body exceeds the {MAX_INSPECT_BYTES}-byte inspection limit")
            else:
                self.kept += chunk
        return [chunk]

    def end_of_upstream(self) -> list[bytes | Stall]:
        self.complete = True
        return []

    def close(self, *, error: BaseException | None = None) -> None:
        if self.finished:
            return
        self.finished = True
        call = self.call
        if error is not None:
            call.fail(error)
        elif self.kept is None:
            call.finish_passthrough(self.response)
        elif not self.complete:
            call.skip("the agent closed the body before it ended")
            call.finish_passthrough(self.response)
        else:
            call.process_json(self.response, bytes(self.kept), allow_fault=False)


class StreamProcessor:
    """Transforms and observes one SSE stream chunk by chunk; ends the span when the stream ends."""

    def __init__(self, call: LLMCall, faulter: Any, *, observe_original: bool) -> None:
        self.call = call
        self.delay_scale = call.state.plan.delay_scale if call.state is not None else 1.0
        self.faulter = faulter
        self.wire = call.wire
        # Without a faulter the agent gets the upstream bytes unchanged, so the one parser of what
        # the agent saw also describes the original: no second parser on unfaulted streams.
        self.up = SSEParser() if faulter is not None else None
        self.up_events: list[Any] = []
        self.seen = SSEParser()
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

    def feed(self, chunk: bytes) -> list[bytes | Stall]:
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
            out: list[bytes | Stall] = []
            for event in events:
                out.extend(self.faulter.process(event))
            return self._emitted(out)
        except Exception as exc:  # fail open: from here on the stream passes through unread
            self.broken = True
            self.call.skip(f"injector error on stream: {type(exc).__name__}: {exc}")
            return [chunk]

    def _emitted(self, out: list[bytes | Stall]) -> list[bytes | Stall]:
        """Observe what goes to the agent; stalls follow the plan's delay scale."""
        result: list[bytes | Stall] = []
        for item in out:
            if isinstance(item, Stall):
                result.append(Stall(item.seconds * self.delay_scale))
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

    def end_of_upstream(self) -> list[bytes | Stall]:
        if self.broken or self.faulter is None:
            return []
        try:
            tail = self.up.close() if self.up is not None else []
            self.up_events.extend(tail)
            out: list[bytes | Stall] = []
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
                **signals.stream_event_signals(e.data for e in self.seen_events[-8:]),
            }
            if not self.broken:
                body = self.wire.assemble_stream(self.seen_events)
                if self.faulter is None and call.state is not None:
                    call.state.previous_body = body
                seen_view = self.wire.view(body)
                call.response_attrs = annotate.response_attributes(seen_view, call.request_tools,
                                                                   capture=call.capture)
                call.response_attrs.update(call.grounding(seen_view.tool_calls))
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
