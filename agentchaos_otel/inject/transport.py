"""Fault-injecting transports for httpx and httpx2 clients, sync and async.

The injector wraps whatever transport a client already has (the default connection pool, a
custom transport, a mount, OTel's instrumented transport) instead of patching ``Client.send``:
hooks cannot replace a response, and wrapping keeps custom transports working. LLM calls are
recognised by path; every other request goes straight to the wrapped transport.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from functools import cache
from types import ModuleType
from typing import Any

from opentelemetry import trace

from agentchaos_otel.faults.stream import Stall
from agentchaos_otel.inject.call import (
    BUFFER_JSON,
    BUFFER_SSE,
    MAX_INSPECT_BYTES,
    PASSTHROUGH,
    LLMCall,
    Rewrite,
    StreamProcessor,
    http_module,
)

TRACER_NAME = "agentchaos_otel"


def _tracer(tracer_provider: trace.TracerProvider | None) -> trace.Tracer:
    from agentchaos_otel import __version__

    return trace.get_tracer(TRACER_NAME, __version__, tracer_provider=tracer_provider)


@cache
def _sync_stream_class(module: ModuleType) -> type:
    class _ChaosSyncStream(module.SyncByteStream):  # type: ignore[name-defined,misc]
        """Yields what the agent should see and ends the LLM span when the stream ends or closes."""

        def __init__(self, upstream: Any, proc: StreamProcessor, source: Iterator[bytes] | None = None):
            self._upstream = upstream
            self._proc = proc
            self._source = source

        def __iter__(self) -> Iterator[bytes]:
            source = self._source if self._source is not None else iter(self._upstream)
            try:
                for chunk in source:
                    yield from _emit_sync(self._proc.feed(chunk))
                yield from _emit_sync(self._proc.end_of_upstream())
            except BaseException as exc:
                self._proc.close(error=exc if isinstance(exc, Exception) else None)
                raise
            self._proc.close()

        def close(self) -> None:
            try:
                self._upstream.close()
            finally:
                self._proc.close()

    return _ChaosSyncStream


@cache
def _async_stream_class(module: ModuleType) -> type:
    class _ChaosAsyncStream(module.AsyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, upstream: Any, proc: StreamProcessor, source: list[bytes] | None = None):
            self._upstream = upstream
            self._proc = proc
            self._source = source

        async def __aiter__(self) -> AsyncIterator[bytes]:
            try:
                if self._source is not None:
                    for chunk in self._source:
                        for out in await _emit_async(self._proc.feed(chunk)):
                            yield out
                else:
                    async for chunk in self._upstream:
                        for out in await _emit_async(self._proc.feed(chunk)):
                            yield out
                for out in await _emit_async(self._proc.end_of_upstream()):
                    yield out
            except BaseException as exc:
                self._proc.close(error=exc if isinstance(exc, Exception) else None)
                raise
            self._proc.close()

        async def aclose(self) -> None:
            try:
                await self._upstream.aclose()
            finally:
                self._proc.close()

    return _ChaosAsyncStream


def _emit_sync(items: list[bytes | Stall]) -> Iterator[bytes]:
    for item in items:
        if isinstance(item, Stall):
            time.sleep(item.seconds)
        elif item:
            yield item


async def _emit_async(items: list[bytes | Stall]) -> list[bytes]:
    out: list[bytes] = []
    for item in items:
        if isinstance(item, Stall):
            await asyncio.sleep(item.seconds)
        elif item:
            out.append(item)
    return out


def _rebuilt(call: LLMCall, response: Any, rewrite: Rewrite, body_stream: Any) -> Any:
    module = call.module
    headers = rewrite.headers if rewrite.headers is not None else response.headers.raw
    return module.Response(response.status_code, headers=headers, stream=body_stream,
                           request=call.request, extensions=response.extensions)


def _unread(call: LLMCall, response: Any) -> Any:
    """A response a custom transport built with ``content=`` is already read, and clients then
    ignore its stream; give it an unread stream over the same bytes so our wrapper sees them."""
    if getattr(response, "_content", None) is None:
        return response
    return _rebuilt(call, response, Rewrite(None, b""), call.module.ByteStream(response.content))


def _too_large(call: LLMCall, response: Any) -> None:
    call.skip(f"body exceeds the {MAX_INSPECT_BYTES}-byte inspection limit")
    call.finish_passthrough(response)


def _process_buffered(call: LLMCall, response: Any, raw: bytes,
                      mode: str) -> tuple[Rewrite, StreamProcessor | None]:
    """A whole body read up front: JSON is rewritten in place; SSE also gets an observing processor."""
    if mode == BUFFER_JSON:
        return call.process_json(response, raw), None
    return call.process_sse_buffer(response, raw), call.stream_processor(observe_original=False)


class ChaosTransport:
    """Sync transport wrapper: ``httpx.Client(transport=ChaosTransport(httpx.HTTPTransport()))``."""

    def __init__(self, transport: Any = None, *, tracer_provider: trace.TracerProvider | None = None,
                 module: ModuleType | None = None) -> None:
        if transport is None:
            import httpx

            transport = (module or httpx).HTTPTransport()
        self.wrapped = transport
        self._tracer = _tracer(tracer_provider)

    def handle_request(self, request: Any) -> Any:
        call = LLMCall.start(request, self._tracer)
        if call is None:
            return self.wrapped.handle_request(request)
        call.activate()
        try:
            pre = call.pre_request()
            if pre.delay:
                time.sleep(pre.delay)
            if pre.exception is not None:
                call.fail(pre.exception)
                raise pre.exception
            if pre.response is not None:
                return pre.response
            try:
                response = self.wrapped.handle_request(request)
            except BaseException as exc:
                call.fail(exc)
                raise
        finally:
            call.deactivate()
        return self._respond(call, response)

    def _respond(self, call: LLMCall, response: Any) -> Any:
        mode = call.mode_for(response)
        module = http_module(call.request)
        if mode == PASSTHROUGH:
            call.finish_passthrough(response)
            return response
        if mode in (BUFFER_JSON, BUFFER_SSE):
            chunks, rest = _read_sync(response, MAX_INSPECT_BYTES)
            if rest is not None:
                _too_large(call, response)
                return _rebuilt(call, response, Rewrite(None, b""),
                                _sync_stream_class(module)(response.stream, _NullProc(),
                                                          _chain(chunks, rest)))
            rewrite, proc = _process_buffered(call, response, b"".join(chunks), mode)
            if rewrite.delay:
                time.sleep(rewrite.delay)
            body = (module.ByteStream(rewrite.body) if proc is None
                    else _sync_stream_class(module)(response.stream, proc, iter([rewrite.body])))
            return _rebuilt(call, response, rewrite, body)
        response = _unread(call, response)
        proc = call.stream_processor(observe_original=True)
        response.stream = _sync_stream_class(module)(response.stream, proc)
        return response

    def close(self) -> None:
        self.wrapped.close()

    def __enter__(self) -> ChaosTransport:
        if hasattr(self.wrapped, "__enter__"):
            self.wrapped.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if hasattr(self.wrapped, "__exit__"):
            self.wrapped.__exit__(*exc)


class AsyncChaosTransport:
    """Async transport wrapper for ``httpx.AsyncClient`` / ``httpx2.AsyncClient``."""

    def __init__(self, transport: Any = None, *, tracer_provider: trace.TracerProvider | None = None,
                 module: ModuleType | None = None) -> None:
        if transport is None:
            import httpx

            transport = (module or httpx).AsyncHTTPTransport()
        self.wrapped = transport
        self._tracer = _tracer(tracer_provider)

    async def handle_async_request(self, request: Any) -> Any:
        call = LLMCall.start(request, self._tracer)
        if call is None:
            return await self.wrapped.handle_async_request(request)
        call.activate()
        try:
            pre = call.pre_request()
            if pre.delay:
                await asyncio.sleep(pre.delay)
            if pre.exception is not None:
                call.fail(pre.exception)
                raise pre.exception
            if pre.response is not None:
                return pre.response
            try:
                response = await self.wrapped.handle_async_request(request)
            except BaseException as exc:
                call.fail(exc)
                raise
        finally:
            call.deactivate()
        return await self._respond(call, response)

    async def _respond(self, call: LLMCall, response: Any) -> Any:
        mode = call.mode_for(response)
        module = http_module(call.request)
        if mode == PASSTHROUGH:
            call.finish_passthrough(response)
            return response
        if mode in (BUFFER_JSON, BUFFER_SSE):
            chunks, rest = await _read_async(response, MAX_INSPECT_BYTES)
            if rest is not None:
                _too_large(call, response)
                return _rebuilt(call, response, Rewrite(None, b""),
                                _async_stream_class(module)(_AsyncChain(chunks, rest, response.stream), _NullProc()))
            rewrite, proc = _process_buffered(call, response, b"".join(chunks), mode)
            if rewrite.delay:
                await asyncio.sleep(rewrite.delay)
            body = (module.ByteStream(rewrite.body) if proc is None
                    else _async_stream_class(module)(response.stream, proc, [rewrite.body]))
            return _rebuilt(call, response, rewrite, body)
        response = _unread(call, response)
        proc = call.stream_processor(observe_original=True)
        response.stream = _async_stream_class(module)(response.stream, proc)
        return response

    async def aclose(self) -> None:
        await self.wrapped.aclose()

    async def __aenter__(self) -> AsyncChaosTransport:
        if hasattr(self.wrapped, "__aenter__"):
            await self.wrapped.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if hasattr(self.wrapped, "__aexit__"):
            await self.wrapped.__aexit__(*exc)


class _NullProc:
    """Stands in for a StreamProcessor when a body is passed through unread."""

    def feed(self, chunk: bytes) -> list[bytes]:
        return [chunk]

    def end_of_upstream(self) -> list[bytes]:
        return []

    def close(self, **_: Any) -> None:
        return None


def _read_sync(response: Any, limit: int) -> tuple[list[bytes], Iterator[bytes] | None]:
    """Read the raw body; past ``limit`` bytes stop and hand back the rest of the iterator."""
    chunks: list[bytes] = []
    total = 0
    iterator = iter(response.stream)
    for chunk in iterator:
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            return chunks, iterator
    response.stream.close()
    return chunks, None


def _chain(head: list[bytes], rest: Iterator[bytes]) -> Iterator[bytes]:
    yield from head
    yield from rest


async def _read_async(response: Any, limit: int) -> tuple[list[bytes], AsyncIterator[bytes] | None]:
    chunks: list[bytes] = []
    total = 0
    iterator = response.stream.__aiter__()
    async for chunk in iterator:
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            return chunks, iterator
    await response.stream.aclose()
    return chunks, None


class _AsyncChain:
    def __init__(self, head: list[bytes], rest: AsyncIterator[bytes], stream: Any) -> None:
        self._head = head
        self._rest = rest
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._head:
            yield chunk
        async for chunk in self._rest:
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()
