"""Delivering protocol faults where they happen: the HTTP POST of a call, the stdio read stream.

The decision is made in the caller's task when the call starts (``calls.py``); the request's
JSON-RPC id ties it to the transport, which may run elsewhere (1.x posts from the transport's own
task group, where the caller's context is not). Each fault waits for the real answer first, so
the tool has finished when the client is told otherwise:

- HTTP: the POST goes out through a proxy of the transport's httpx / httpx2 client; the real
  response is read in full, then replaced by a 429 / 503 response or by its own body cut before
  the response event. The client object itself is never changed.
- stdio: the session's read stream drops the response to a stalled request.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

import wrapt

from agentchaos_otel import signals
from agentchaos_otel.mcp import protocol, sdk
from agentchaos_otel.mcp.protocol import ProtocolFault

# Headers that describe a body the replacement no longer has.
_BODY_HEADERS = ("content-length", "content-encoding", "transfer-encoding")


@dataclass
class Planned:
    """A protocol fault planned for one request, filled in by the layer that delivers it."""

    fault: ProtocolFault
    applied: bool = False
    before: str | None = None  # digest of the real answer
    after: str | None = None  # digest of what the client got instead
    note: str | None = None  # why it could not be delivered


def digest_of(data: Any) -> str:
    if isinstance(data, bytes | bytearray):
        return signals.digest(bytes(data))
    return signals.canonical_json_digest(data)


# --- HTTP -----------------------------------------------------------------------------------------
def _sse_events(body: bytes) -> list[tuple[int, bytes]]:
    """(offset, event) of each server-sent event in a body with ``\\n`` line ends (events end with a blank line)."""
    events, start = [], 0
    while start < len(body):
        end = body.find(b"\n\n", start)
        end = len(body) if end < 0 else end + 2
        events.append((start, body[start:end]))
        start = end
    return events


def _answers(event: bytes, request_id: str) -> bool:
    data = b"\n".join(line[5:].lstrip() for line in event.split(b"\n") if line.startswith(b"data:"))
    try:
        message = json.loads(data)
    except ValueError:
        return False
    return isinstance(message, dict) and str(message.get("id")) == request_id and (
        "result" in message or "error" in message)


def cut_body(body: bytes, content_type: str, request_id: str) -> bytes:
    """The body without the request's answer: SSE up to the answering event, JSON cut in half."""
    if content_type.lower().startswith("text/event-stream"):
        normalised = body.replace(b"\r\n", b"\n")
        for offset, event in _sse_events(normalised):
            if _answers(event, request_id):
                return normalised[:offset]
        return b""
    return body[: len(body) // 2]


class FaultingClient(wrapt.ObjectProxy):  # type: ignore[misc]
    """The transport's HTTP client for one POST: the real exchange, then the planned replacement."""

    def __init__(self, client: Any, planned: Planned, request_id: str) -> None:
        super().__init__(client)
        self._self_planned = planned
        self._self_request_id = request_id

    async def send(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        response = await self.__wrapped__.send(request, *args, **kwargs)
        planned = self._self_planned
        if planned.applied or getattr(request, "method", None) != "POST":
            return response
        try:
            body = await response.aread()  # the whole real answer: the tool has run
        finally:
            await response.aclose()
        fault = planned.fault
        headers = {k: v for k, v in response.headers.items() if k.lower() not in _BODY_HEADERS}
        if fault.kind in protocol.HTTP_STATUS:
            content = protocol.HTTP_BODY[fault.kind].encode()
            replacement = type(response)(protocol.HTTP_STATUS[fault.kind], request=request, content=content,
                                         headers={"content-type": "text/plain; charset=utf-8",
                                                  "retry-after": str(fault.retry_after)})
        else:
            content = cut_body(body, response.headers.get("content-type", ""), self._self_request_id)
            replacement = type(response)(response.status_code, request=request, content=content, headers=headers)
        planned.before, planned.after, planned.applied = digest_of(body), digest_of(content), True
        return replacement


async def post_with_fault(wrapped: Any, transport: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                          info: Any) -> Any:
    """``StreamableHTTPTransport._handle_post_request`` with the planned fault of its request, if any."""
    ctx = args[0] if args else kwargs.get("ctx")
    message = getattr(getattr(ctx, "session_message", None), "message", None)
    inner = getattr(message, "root", message)
    rid = getattr(inner, "id", None)
    planned = info.http_planned.pop(str(rid), None) if rid is not None else None
    if planned is None or ctx is None:
        return await wrapped(*args, **kwargs)
    try:
        faulty = dataclasses.replace(ctx, client=FaultingClient(ctx.client, planned, str(rid)))
    except Exception as exc:  # fail open: an unknown context shape gets the real exchange
        planned.note = f"could not take the POST over: {type(exc).__name__}"
        return await wrapped(*args, **kwargs)
    rest = args[1:] if args else ()
    return await wrapped(faulty, *rest, **{k: v for k, v in kwargs.items() if k != "ctx"})


# --- stdio ----------------------------------------------------------------------------------------
class HoldingReader:
    """A stdio session's read stream that drops the responses to stalled requests.

    Iterates the stream it wraps (so a proxy of another instrumentation under it keeps working) and
    passes everything else through unchanged; attributes it does not define are the inner stream's.
    """

    def __init__(self, inner: Any) -> None:
        self._agentchaos_inner = inner
        self._agentchaos_held: dict[str, Planned] = {}
        self._agentchaos_iter: Any = None

    def hold(self, request_id: Any, planned: Planned) -> None:
        self._agentchaos_held[str(request_id)] = planned

    def _withheld(self, item: Any) -> bool:
        if not self._agentchaos_held:
            return False
        rid = sdk.response_id(item)
        planned = self._agentchaos_held.pop(str(rid), None) if rid is not None else None
        if planned is None:
            return False
        try:
            planned.before = digest_of(sdk.wire(item.message))
        except Exception:
            planned.before = None
        planned.applied = True
        return True

    def __aiter__(self) -> HoldingReader:
        return self

    async def __anext__(self) -> Any:
        if self._agentchaos_iter is None:
            self._agentchaos_iter = self._agentchaos_inner.__aiter__()
        while True:
            item = await self._agentchaos_iter.__anext__()
            if not self._withheld(item):
                return item

    async def receive(self) -> Any:
        while True:
            item = await self._agentchaos_inner.receive()
            if not self._withheld(item):
                return item

    async def __aenter__(self) -> HoldingReader:
        await self._agentchaos_inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._agentchaos_inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_agentchaos_"):
            raise AttributeError(name)
        return getattr(self._agentchaos_inner, name)
