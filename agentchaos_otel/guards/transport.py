"""The response guard as an httpx / httpx2 transport wrapper, sync and async.

It sits outside whatever transport the client has. Put outside the fault injector
(``GuardTransport(ChaosTransport(...))``, which ``guard_client`` and ``install`` do when the
injector is already installed), it sees the faults the injector made, exactly as the agent
would. Each non-streaming LLM response is read whole, checked against its request
(``checks.check_response``) and then passed on, retried or turned into a typed exception.

Every decision is recorded on the ``chat`` span of the attempt: the injector's span is held
open until the guard has decided (``inject.hold``). Without the injector underneath there is
no chat span of ours, and the decision goes as an ``agentchaos.guard.decision`` event on the
current span.

Streaming responses are annotate-only, whatever the policy: the agent consumes the events as
they arrive, so by the time the end shows a problem there is nothing left to retry or refuse.
The guard passes every chunk on untouched, keeps a bounded copy (``MAX_STREAM_BYTES``), and when
the stream ends assembles the answer (``faults.stream.assemble_chat_completion`` /
``faults.messages_stream.assemble_message``) and records the findings on the chat span with
action ``annotate``. A stream the agent stops reading early is recorded as skipped.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace

from agentchaos_otel import attributes as A
from agentchaos_otel.guards import checks as C
from agentchaos_otel.guards.errors import error_for
from agentchaos_otel.guards.policy import ANNOTATE, RAISE, RETRY, GuardPolicy
from agentchaos_otel.inject import hold, wire
from agentchaos_otel.inject.call import http_module, recognise
from agentchaos_otel.inject.delegate import WrapsAsyncTransport, WrapsTransport
from agentchaos_otel.inject.hold import holding

PASS = "pass"
MAX_STREAM_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class Decision:
    action: str  # pass | raise | retry | annotate
    findings: tuple[C.Finding, ...] = ()
    skipped: str | None = None
    backoff: float = 0.0


def _request_body(request: Any) -> dict[str, Any] | None:
    try:
        body = json.loads(request.content or b"{}")
    except (ValueError, UnicodeDecodeError, RuntimeError):
        return None
    return body if isinstance(body, dict) else None


def decide(policy: GuardPolicy, provider: str, request_body: dict[str, Any], status: int, raw: bytes,
           attempt: int, key: bytes = b"") -> Decision:
    """The guard's decision on one response (pure: the transports only do the I/O around it)."""
    if not 200 <= status < 300:
        return Decision(PASS, skipped=f"status {status}")  # the SDK's own error handling applies
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return Decision(PASS, skipped="response body is not JSON")
    if not isinstance(body, dict):
        return Decision(PASS, skipped="response body is not a JSON object")
    findings = tuple(C.check_response(provider, request_body, body, policy.checks))
    if not findings:
        return Decision(PASS)
    if policy.action == RETRY and attempt < policy.max_retries:
        return Decision(RETRY, findings, backoff=policy.delay(attempt + 1, key))
    if policy.action == ANNOTATE or (policy.action == RETRY and policy.then == ANNOTATE):
        return Decision(ANNOTATE, findings)
    return Decision(RAISE, findings)


def stream_decision(policy: GuardPolicy, provider: str, request_body: dict[str, Any], raw: bytes,
                    complete: bool) -> Decision:
    """Findings on a streamed answer, assembled from its events; never more than ``annotate``.

    The SDKs stop reading at the end event (``[DONE]``, ``message_stop``) without draining the
    body, so a stream counts as read to the end when that event arrived (or the body ran out).
    """
    from agentchaos_otel.faults.messages_stream import is_end
    from agentchaos_otel.sse import SSEParser

    parser = SSEParser()
    events = parser.feed(raw) + parser.close()
    if not complete and not any((e.is_done and e.complete) or is_end(e) for e in events):
        return Decision(PASS, skipped="stream not read to the end")
    body = wire.for_provider(provider).assemble_stream(events)
    findings = tuple(C.check_response(provider, request_body, body, policy.checks))
    return Decision(ANNOTATE if findings else PASS, findings)


@functools.cache
def _sync_stream_class(module: Any) -> type:
    class _GuardedSyncStream(module.SyncByteStream):  # type: ignore[misc,name-defined]
        """Passes chunks through; checks the assembled answer when the stream ends."""

        def __init__(self, upstream: Any, finish: Callable[[bytes, bool], Decision], policy: GuardPolicy) -> None:
            self._upstream, self._finish, self._policy = upstream, finish, policy

        def __iter__(self) -> Any:
            spans, token = hold.begin()
            buf, complete = bytearray(), False
            try:
                for chunk in self._upstream:
                    if len(buf) < MAX_STREAM_BYTES:
                        buf.extend(chunk)
                    yield chunk
                complete = len(buf) < MAX_STREAM_BYTES
            finally:
                hold.release(token)
                _finish_stream(spans, self._finish, bytes(buf), complete, self._policy)

        def close(self) -> None:
            self._upstream.close()

    return _GuardedSyncStream


@functools.cache
def _async_stream_class(module: Any) -> type:
    class _GuardedAsyncStream(module.AsyncByteStream):  # type: ignore[misc,name-defined]
        def __init__(self, upstream: Any, finish: Callable[[bytes, bool], Decision], policy: GuardPolicy) -> None:
            self._upstream, self._finish, self._policy = upstream, finish, policy

        async def __aiter__(self) -> Any:
            spans, token = hold.begin()
            buf, complete = bytearray(), False
            try:
                async for chunk in self._upstream:
                    if len(buf) < MAX_STREAM_BYTES:
                        buf.extend(chunk)
                    yield chunk
                complete = len(buf) < MAX_STREAM_BYTES
            finally:
                hold.release(token)
                _finish_stream(spans, self._finish, bytes(buf), complete, self._policy)

        async def aclose(self) -> None:
            await self._upstream.aclose()

    return _GuardedAsyncStream


def _finish_stream(spans: list[Any], finish: Callable[[bytes, bool], Decision], raw: bytes, complete: bool,
                   policy: GuardPolicy) -> None:
    try:
        decision = finish(raw, complete)
    except Exception:  # fail open
        decision = Decision(PASS, skipped="guard error")
    record(spans, decision, policy, 0)


def record(spans: list[Any], decision: Decision, policy: GuardPolicy, attempt: int) -> None:
    """Put the decision on the attempt's chat span (or an event on the current span); end held spans."""
    attrs: dict[str, Any] = {A.GUARD_CHECKED: decision.skipped is None, A.GUARD_ACTION: decision.action,
                             A.GUARD_POLICY: policy.action, A.GUARD_ATTEMPT: attempt,
                             A.GUARD_FINDINGS: [f.kind for f in decision.findings]}
    if decision.skipped:
        attrs[A.GUARD_SKIPPED] = decision.skipped
    lead = C.first(decision.findings)
    if lead is not None:
        attrs[A.GUARD_DETAIL] = lead.line()
    if decision.action == RETRY:
        attrs[A.GUARD_BACKOFF] = decision.backoff
    try:
        if spans:
            spans[-1].set_attributes(attrs)
        elif decision.skipped is None or not decision.skipped.startswith("stream"):
            current = trace.get_current_span()
            if current.is_recording():
                current.add_event(A.EVENT_GUARD_DECISION, attrs)
    except Exception:  # recording must never change what the agent gets
        pass
    finally:
        end_all(spans)


def end_all(spans: list[Any]) -> None:
    for span in spans:
        try:
            span.end()
        except Exception:
            pass
    spans.clear()


class _Base:
    def __init__(self, transport: Any, policy: GuardPolicy | str | None) -> None:
        self.wrapped = transport
        self.policy = GuardPolicy.of(policy)

    def _plan(self, request: Any) -> tuple[str, dict[str, Any]] | None:
        provider = recognise(request)
        if provider is None:
            return None
        body = _request_body(request)
        if body is None:
            return None
        return provider, body

    def _stream(self, request: Any, provider: str, body: dict[str, Any], response: Any,
                classes: Callable[[Any], type]) -> Any:
        """The streamed response with its chunks passed through and checked at the end (annotate only)."""
        if not 200 <= response.status_code < 300:
            return response
        try:
            def finish(raw: bytes, complete: bool) -> Decision:
                return stream_decision(self.policy, provider, body, raw, complete)
            response.stream = classes(http_module(request))(response.stream, finish, self.policy)
        except Exception:  # fail open: the agent reads the stream unguarded
            pass
        return response

    def _outcome(self, request: Any, response: Any, raw: bytes, decision: Decision, attempt: int,
                 provider: str) -> Any:
        if decision.action == RAISE:
            response.request = request
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = None
            raise error_for(decision.findings, response, body, attempts=attempt + 1, provider=provider)
        return response


class GuardTransport(_Base, WrapsTransport):
    """Sync guard: ``httpx2.Client(transport=GuardTransport(inner, policy="retry"))``."""

    def __init__(self, transport: Any = None, *, policy: GuardPolicy | str | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if transport is None:
            import httpx

            transport = httpx.HTTPTransport()
        super().__init__(transport, policy)
        self._sleep = sleep

    def handle_request(self, request: Any) -> Any:
        plan = self._plan(request)
        if plan is None:
            return self.wrapped.handle_request(request)
        provider, body = plan
        if body.get("stream"):
            return self._stream(request, provider, body, self.wrapped.handle_request(request), _sync_stream_class)
        attempt = 0
        while True:
            with holding() as spans:
                try:
                    response = self.wrapped.handle_request(request)
                    raw = response.read()
                except BaseException:
                    end_all(spans)
                    raise
            try:
                decision = decide(self.policy, provider, body, response.status_code, raw, attempt, request.content)
            except Exception:  # a guard bug fails open
                decision = Decision(PASS, skipped="guard error")
            record(spans, decision, self.policy, attempt)
            if decision.action != RETRY:
                return self._outcome(request, response, raw, decision, attempt, provider)
            response.close()
            self._sleep(decision.backoff)
            attempt += 1


class AsyncGuardTransport(_Base, WrapsAsyncTransport):
    """Async guard for ``httpx.AsyncClient`` / ``httpx2.AsyncClient``."""

    def __init__(self, transport: Any = None, *, policy: GuardPolicy | str | None = None,
                 sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        if transport is None:
            import httpx

            transport = httpx.AsyncHTTPTransport()
        super().__init__(transport, policy)
        self._sleep = sleep

    async def handle_async_request(self, request: Any) -> Any:
        plan = self._plan(request)
        if plan is None:
            return await self.wrapped.handle_async_request(request)
        provider, body = plan
        if body.get("stream"):
            response = await self.wrapped.handle_async_request(request)
            return self._stream(request, provider, body, response, _async_stream_class)
        attempt = 0
        while True:
            with holding() as spans:
                try:
                    response = await self.wrapped.handle_async_request(request)
                    raw = await response.aread()
                except BaseException:
                    end_all(spans)
                    raise
            try:
                decision = decide(self.policy, provider, body, response.status_code, raw, attempt, request.content)
            except Exception:
                decision = Decision(PASS, skipped="guard error")
            record(spans, decision, self.policy, attempt)
            if decision.action != RETRY:
                return self._outcome(request, response, raw, decision, attempt, provider)
            await response.aclose()
            await self._sleep(decision.backoff)
            attempt += 1


__all__ = ["ANNOTATE", "RAISE", "RETRY", "AsyncGuardTransport", "Decision", "GuardTransport", "decide"]
