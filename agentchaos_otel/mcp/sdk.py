"""The parts of the official ``mcp`` SDK that differ between its majors, in one place.

Imported only once ``mcp`` is (the hooks install from an import hook), so the core never needs
the SDK. 1.x: ``ClientSession`` inherits ``send_request`` from ``mcp.shared.session.BaseSession``,
request ids are the session's ``_request_id`` counter, models are camelCase and timeouts
``timedelta``; errors are ``McpError(ErrorData)`` and no trace context is sent. 2.x: the session
runs on a ``JSONRPCDispatcher`` (ids from ``_allocate_id``), models are snake_case with camelCase
aliases, timeouts are seconds, errors are ``MCPError(code=, message=)`` and the dispatcher puts
W3C trace context into ``params._meta`` itself.

Results are built from their wire form (``model_validate`` of the camelCase JSON) in both: 1.x
models silently accept unknown snake_case fields, so ``CallToolResult(is_error=True)`` would
leave ``isError`` false there.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import mcp.types as mt
from mcp.client.session import ClientSession
from opentelemetry import propagate

try:  # 2.x
    from mcp.shared.exceptions import MCPError as RpcError

    MAJOR = 2
except ImportError:  # 1.x
    from mcp.shared.exceptions import McpError as RpcError  # type: ignore[no-redef,attr-defined]

    MAJOR = 1

REQUEST_TIMEOUT_CODE = -32001 if MAJOR == 2 else 408


def make_rpc_error(code: int, message: str) -> Exception:
    """The exception the SDK raises when the server answers with a JSON-RPC error."""
    if MAJOR == 2:
        return RpcError(code=code, message=message)
    return RpcError(mt.ErrorData(code=code, message=message))  # type: ignore[call-arg]


def make_timeout_error(method: str, seconds: float) -> Exception:
    """What the SDK raises when no response came within the read timeout."""
    if MAJOR == 2:
        return make_rpc_error(REQUEST_TIMEOUT_CODE, f"Request {method!r} timed out")
    return make_rpc_error(REQUEST_TIMEOUT_CODE, f"Timed out while waiting for response to ClientRequest. "
                                                f"Waited {seconds} seconds.")


def rpc_error_parts(exc: BaseException) -> tuple[int, str] | None:
    """(code, message) of a JSON-RPC error the SDK raised, else None."""
    if not isinstance(exc, RpcError):
        return None
    error = getattr(exc, "error", None)
    code = getattr(error, "code", None)
    return (int(code), str(getattr(error, "message", "") or "")) if isinstance(code, int) else None


def seconds_of(timeout: Any) -> float | None:
    """A read timeout as seconds (``timedelta`` in 1.x, a number in 2.x)."""
    if timeout is None:
        return None
    if isinstance(timeout, dt.timedelta):
        return timeout.total_seconds()
    try:
        return float(timeout)
    except (TypeError, ValueError):
        return None


def wire(model: Any) -> dict[str, Any]:
    """The JSON object a model is on the wire (camelCase, no unset optionals)."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)  # type: ignore[no-any-return]


def result_from_wire(like: Any, data: dict[str, Any]) -> Any:
    """A ``CallToolResult`` (of ``like``'s class) from its wire form."""
    cls = type(like) if isinstance(like, mt.CallToolResult) else mt.CallToolResult
    return cls.model_validate(data)


def is_call_tool_result(value: Any) -> bool:
    return isinstance(value, mt.CallToolResult)


def request_parts(request: Any) -> tuple[str | None, Any]:
    """(method, params) of a client request (1.x wraps it in a ``ClientRequest`` root model)."""
    inner = getattr(request, "root", request)
    return getattr(inner, "method", None), getattr(inner, "params", None)


def param(params: Any, name: str) -> Any:
    if params is None:
        return None
    if isinstance(params, dict):
        return params.get(name)
    return getattr(params, name, None)


def with_trace_context(request: Any) -> Any:
    """1.x: a copy of ``request`` whose ``params._meta`` carries the current W3C trace context.

    2.x sends the context itself; the request object the caller built is never changed.
    """
    if MAJOR == 2:
        return request
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    if not carrier:
        return request
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    params = data.setdefault("params", {})
    meta = params.setdefault("_meta", {})
    for key, value in carrier.items():
        meta.setdefault(key, value)
    return type(request).model_validate(data)


def is_client_session(obj: Any) -> bool:
    return isinstance(obj, ClientSession)


def unwrapped(obj: Any) -> Any:
    """The object under proxies other instrumentations put around a stream (``__wrapped__`` chains)."""
    seen = 0
    while seen < 16:
        inner = getattr(obj, "__wrapped__", None)
        if inner is None:
            inner = getattr(obj, "_agentchaos_inner", None)
        if inner is None:
            return obj
        obj = inner
        seen += 1
    return obj


def write_stream_of(session: Any) -> Any:
    """The raw stream a session writes its messages to (1.x on the session, 2.x on its dispatcher)."""
    stream = getattr(session, "_write_stream", None)
    if stream is None:
        stream = getattr(getattr(session, "_dispatcher", None), "_write_stream", None)
    return unwrapped(stream) if stream is not None else None


def session_protocol_version(session: Any) -> str | None:
    """The negotiated protocol version when the SDK keeps it (2.x)."""
    try:
        value = getattr(session, "protocol_version", None)
    except Exception:
        return None
    return value if isinstance(value, str) else None


def response_id(item: Any) -> Any:
    """The id of a JSON-RPC response or error arriving on a read stream, else None."""
    message = getattr(item, "message", None)
    inner = getattr(message, "root", message)
    if isinstance(inner, mt.JSONRPCResponse | mt.JSONRPCError):
        return inner.id
    return None


def request_timeout(session: Any, kwargs: dict[str, Any]) -> float | None:
    """The read timeout that applies to a call: the call's own, else the session's."""
    own = seconds_of(kwargs.get("read_timeout_seconds"))
    if own is not None:
        return own
    return seconds_of(getattr(session, "_session_read_timeout_seconds", None))


def tool_annotations(tool: Any) -> dict[str, bool]:
    """The hints a tool's annotations declare, camelCase, only those the server set."""
    annotations = getattr(tool, "annotations", None)
    if annotations is None:
        return {}
    data = wire(annotations)
    return {k: v for k, v in data.items() if k.endswith("Hint") and isinstance(v, bool)}
