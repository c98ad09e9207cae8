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
from agentchaos_otel.inject import hook
from agentchaos_otel.inject.call import BUFFERED, MAX_INSPECT_BYTES, LLMCall
from agentchaos_otel.inject.delegate import WrapsAsyncTransport, WrapsTransport

TRACER_NAME = "agentchaos_otel"


def _tracer(tracer_provider: trace.TracerProvider | None) -> trace.Tracer:
    from agentchaos_otel import __version__

    return trace.get_tracer(TRACER_NAME, __version__, tracer_provider=tracer_provider)


@cache
def _sync_stream_class(module: ModuleType) -> type:
    class _ChaosSyncStream(module.SyncByteStream):  # type: ignore[name-defined,misc]
        """Yields what the agent should see and ends the LLM span when the stream ends or closes."""

        def __init__(self, upstream: Any, proc: Any, source: Iterator[bytes]):
            self._upstream = upstream
            self._proc = proc
            self._source = source

        def __iter__(self) -> Iterator[bytes]:
            try:
                for chunk in self._source:
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
        def __init__(self, upstream: Any, proc: Any, source: AsyncIterator[bytes]):
            self._upstream = upstream
            self._proc = proc
            self._source = source

        async def __aiter__(self) -> AsyncIterator[bytes]:
            try:
                async for chunk in self._source:
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


def _rebuilt(call: LLMCall, response: Any, headers: list[tuple[bytes, bytes]] | None, stream: Any) -> Any:
    return call.module.Response(response.status_code,
                                headers=headers if headers is not None else response.headers.raw,
                                stream=stream, request=call.request, extensions=response.extensions)


def _unread(call: LLMCall, response: Any) -> Any:
    """A response whose stream can be read (again) by our wrapper, or None.

    A custom transport that built its response with ``content=`` hands back a response already
    read (``_content`` set, decoded) whose ``ByteStream`` still holds the raw bytes: a fresh
    response over that stream lets us see them, still encoded as the headers say. A response
    whose stream was consumed some other way holds only the decoded bytes: they stand for the
    body when it was not encoded; an encoded one must reach the agent as it is.
    """
    if getattr(response, "_content", None) is None:
        return response
    if isinstance(response.stream, call.module.ByteStream):
        return _rebuilt(call, response, None, response.stream)
    if response.headers.get("content-encoding", "identity").strip().lower() in ("", "identity"):
        return _rebuilt(call, response, None, call.module.ByteStream(response.content))
    return None


class ChaosTransport(WrapsTransport):
    """Sync transport wrapper: ``httpx.Client(transport=ChaosTransport(httpx.HTTPTransport()))``."""

    def __init__(self, transport: Any = None, *, tracer_provider: trace.TracerProvider | None = None,
                 module: ModuleType | None = None) -> None:
        if transport is None:
            import httpx

            transport = (module or httpx).HTTPTransport()
        self.wrapped = transport
        self._tracer = _tracer(tracer_provider)

    def handle_request(self, request: Any) -> Any:
        token = hook.enter(request)
        try:
            return self._handle(request)
        finally:
            hook.leave(token)

    def _handle(self, request: Any) -> Any:
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
        readable = _unread(call, response)
        if readable is None:
            return call.already_read(response)
        response = readable
        mode = call.mode_for(response)
        stream_class = _sync_stream_class(call.module)
        if mode in BUFFERED:
            chunks, rest, error = _read_sync(call, response, MAX_INSPECT_BYTES)
            out = call.buffered(response, chunks, mode, truncated=rest is not None, error=error)
            if out.delay:
                time.sleep(out.delay)
            if out.proc is None:
                return _rebuilt(call, response, out.headers, call.module.ByteStream(b"".join(out.head)))
            source = _replay_sync(out.head, rest, error)
            return _rebuilt(call, response, out.headers, stream_class(response.stream, out.proc, source))
        proc = call.observer(response, mode)
        response.stream = stream_class(response.stream, proc, _counted_sync(call, iter(response.stream)))
        return response


class AsyncChaosTransport(WrapsAsyncTransport):
    """Async transport wrapper for ``httpx.AsyncClient`` / ``httpx2.AsyncClient``."""

    def __init__(self, transport: Any = None, *, tracer_provider: trace.TracerProvider | None = None,
                 module: ModuleType | None = None) -> None:
        if transport is None:
            import httpx

            transport = (module or httpx).AsyncHTTPTransport()
        self.wrapped = transport
        self._tracer = _tracer(tracer_provider)

    async def handle_async_request(self, request: Any) -> Any:
        token = hook.enter(request)
        try:
            return await self._handle(request)
        finally:
            hook.leave(token)

    async def _handle(self, request: Any) -> Any:
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
        readable = _unread(call, response)
        if readable is None:
            return call.already_read(response)
        response = readable
        mode = call.mode_for(response)
        stream_class = _async_stream_class(call.module)
        if mode in BUFFERED:
            chunks, rest, error = await _read_async(call, response, MAX_INSPECT_BYTES)
            out = call.buffered(response, chunks, mode, truncated=rest is not None, error=error)
            if out.delay:
                await asyncio.sleep(out.delay)
            if out.proc is None:
                return _rebuilt(call, response, out.headers, call.module.ByteStream(b"".join(out.head)))
            source = _replay_async(out.head, rest, error)
            return _rebuilt(call, response, out.headers, stream_class(response.stream, out.proc, source))
        proc = call.observer(response, mode)
        response.stream = stream_class(response.stream, proc,
                                       _counted_async(call, response.stream.__aiter__()))
        return response


def _read_sync(call: LLMCall, response: Any,
               limit: int) -> tuple[list[bytes], Iterator[bytes] | None, Exception | None]:
    """Read the raw body: (chunks, the rest of the iterator if ``limit`` was passed, read error).

    A read error is kept, not raised: the agent meets it later, after the same bytes, at the
    same point of its own reading. Anything that is not an ``Exception`` (an interrupt, a
    cancellation) ends the span and propagates at once.
    """
    chunks: list[bytes] = []
    total = 0
    iterator = iter(response.stream)
    try:
        for chunk in iterator:
            call.count_received(chunk)
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                return chunks, _counted_sync(call, iterator), None
    except Exception as exc:
        try:
            response.stream.close()
        except Exception:
            pass  # the connection already failed; closing it is only tidying up
        return chunks, None, exc
    except BaseException as exc:
        call.fail(exc)
        raise
    response.stream.close()
    return chunks, None, None


def _counted_sync(call: LLMCall, iterator: Iterator[bytes]) -> Iterator[bytes]:
    for chunk in iterator:
        call.count_received(chunk)
        yield chunk


def _replay_sync(head: list[bytes], rest: Iterator[bytes] | None, error: Exception | None) -> Iterator[bytes]:
    yield from head
    if rest is not None:
        yield from rest
    if error is not None:
        raise error


async def _read_async(call: LLMCall, response: Any,
                      limit: int) -> tuple[list[bytes], AsyncIterator[bytes] | None, Exception | None]:
    chunks: list[bytes] = []
    total = 0
    iterator = response.stream.__aiter__()
    try:
        async for chunk in iterator:
            call.count_received(chunk)
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                return chunks, _counted_async(call, iterator), None
    except Exception as exc:
        try:
            await response.stream.aclose()
        except Exception:
            pass  # as in _read_sync
        return chunks, None, exc
    except BaseException as exc:
        call.fail(exc)
        raise
    await response.stream.aclose()
    return chunks, None, None


async def _counted_async(call: LLMCall, iterator: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    async for chunk in iterator:
        call.count_received(chunk)
        yield chunk


async def _replay_async(head: list[bytes], rest: AsyncIterator[bytes] | None,
                        error: Exception | None) -> AsyncIterator[bytes]:
    for chunk in head:
        yield chunk
    if rest is not None:
        async for chunk in rest:
            yield chunk
    if error is not None:
        raise error
