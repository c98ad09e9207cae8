"""Where the official ``mcp`` SDK is hooked: class-level wrappers, so sessions made earlier are covered.

- ``ClientSession.call_tool``: the agent's tool call (its span, the guard, the faults);
- ``ClientSession.send_request`` (1.x: ``BaseSession.send_request``, passed through for server
  sessions): every other request's span; the ``tools/call`` request's id, trace context and
  transport attributes;
- 2.x ``JSONRPCDispatcher._allocate_id``: the JSON-RPC id of the request being sent;
- 2.x ``ClientSession._absorb_tool_listing``: tool annotations from cached listings too;
- ``StreamableHTTPTransport.post_writer`` / ``_handle_post_request``: which session runs over which
  HTTP transport, and the HTTP faults of a POST;
- ``stdio_client`` (in every ``mcp`` module that holds the name): marks stdio sessions and gives
  them a read stream that can hold a response back.

Nothing is imported from ``mcp`` until the application imports it: each module is patched by an
import hook when it loads (at once if it already has). The wrappers look the call-time code up
lazily, so patching during the SDK's own import never imports it again. ``uninstall`` restores
every attribute that still holds our wrapper (OTel's ``unwrap``); a wrapper another
instrumentation has since wrapped stays in place but passes every call straight through.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any

import wrapt
from opentelemetry.instrumentation.utils import unwrap

from agentchaos_otel import attributes as A

_lock = threading.Lock()
_active = False
_provider: Any = None
_hooks_registered: set[str] = set()
_patched: list[tuple[Any, str, Any]] = []  # (owner, attribute, our wrapper)
_swept: list[tuple[Any, str, Any, Any]] = []  # (module, attribute, original, our wrapper)


def active() -> bool:
    return _active


def _calls() -> Any:
    from agentchaos_otel.mcp import calls

    return calls


# --- wrappers ---------------------------------------------------------------------------------------
async def _call_tool(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if not _active:
        return await wrapped(*args, **kwargs)
    try:
        from agentchaos_otel.mcp import sdk

        name = args[0] if args else kwargs["name"]
        arguments = args[1] if len(args) > 1 else kwargs.get("arguments")
        own = args[2] if len(args) > 2 else kwargs.get("read_timeout_seconds")
        timeout = sdk.seconds_of(own) if own is not None else sdk.request_timeout(instance, {})
    except Exception:  # fail open: an unknown signature is the SDK's business
        return await wrapped(*args, **kwargs)
    return await _calls().run_tool_call(instance, str(name), arguments, lambda call: wrapped(*args, **kwargs),
                                        timeout=timeout)


async def _send_request(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if not _active:
        return await wrapped(*args, **kwargs)
    from agentchaos_otel.mcp import sdk

    if not sdk.is_client_session(instance):
        return await wrapped(*args, **kwargs)
    request = args[0] if args else kwargs.get("request")
    method, params = sdk.request_parts(request)
    if not isinstance(method, str):
        return await wrapped(*args, **kwargs)
    calls = _calls()
    call = calls.pending_call(instance, method, params)
    if call is not None:
        return await calls.send_tool_request(call, wrapped, instance, args, kwargs)
    name = sdk.param(params, "name")
    if method == A.MCP_TOOLS_CALL and isinstance(name, str):  # a tools/call sent without call_tool
        own = args[2] if len(args) > 2 else kwargs.get("request_read_timeout_seconds")
        timeout = sdk.seconds_of(own) if own is not None else sdk.request_timeout(instance, {})
        return await calls.run_tool_call(
            instance, name, sdk.param(params, "arguments"),
            lambda call: calls.send_tool_request(call, wrapped, instance, args, kwargs), timeout=timeout)
    return await calls.run_request(instance, method, params, wrapped, args, kwargs)


def _allocate_id(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    rid = wrapped(*args, **kwargs)
    if _active:
        _calls().note_request_id(rid)
    return rid


def _absorb_tool_listing(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    result = wrapped(*args, **kwargs)
    if _active:
        with contextlib.suppress(Exception):
            from agentchaos_otel.mcp import idempotency, sessions

            sessions.remember_tools(instance, getattr(result, "tools", None))
            idempotency.declare_for_session(instance)
    return result


async def _post_writer(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    write_stream = args[3] if len(args) > 3 else kwargs.get("write_stream")
    if not _active or write_stream is None:
        return await wrapped(*args, **kwargs)
    from agentchaos_otel.mcp import sessions

    info = sessions.TransportInfo(kind=A.TRANSPORT_TCP, http=instance)
    key = sessions.register(write_stream, info)
    try:
        return await wrapped(*args, **kwargs)
    finally:
        sessions.unregister(key, info)


async def _handle_post_request(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if _active:
        from agentchaos_otel.mcp import sessions, transports

        info = sessions.for_http_transport(instance)
        if info is not None and info.http_planned:
            return await transports.post_with_fault(wrapped, instance, args, kwargs, info)
    return await wrapped(*args, **kwargs)


def _stdio_client(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    manager = wrapped(*args, **kwargs)
    return _stdio_streams(manager) if _active else manager


@contextlib.asynccontextmanager
async def _stdio_streams(manager: Any) -> AsyncIterator[Any]:
    from agentchaos_otel.mcp import sessions, transports

    async with manager as streams:
        reader = transports.HoldingReader(streams[0])
        info = sessions.TransportInfo(kind=A.TRANSPORT_PIPE, reader=reader)
        key = sessions.register(streams[1], info)
        try:
            yield (reader, *streams[1:])
        finally:
            sessions.unregister(key, info)


# --- patching ---------------------------------------------------------------------------------------
def _wrap(owner: Any, attribute: str, wrapper: Any) -> Any | None:
    if owner is None or not hasattr(owner, attribute):
        return None
    current = vars(owner).get(attribute) if isinstance(owner, type) else getattr(owner, attribute)
    if any(o is owner and a == attribute and w is current for o, a, w in _patched):
        return current  # already ours
    wrapt.wrap_function_wrapper(owner, attribute, wrapper)
    ours = vars(owner)[attribute] if isinstance(owner, type) else getattr(owner, attribute)
    _patched.append((owner, attribute, ours))
    return ours


def _patch_session(module: Any) -> None:
    session_cls = getattr(module, "ClientSession", None)
    if session_cls is None:
        return
    _wrap(session_cls, "call_tool", _call_tool)
    if "_absorb_tool_listing" in vars(session_cls):
        _wrap(session_cls, "_absorb_tool_listing", _absorb_tool_listing)
    if "send_request" in vars(session_cls):  # 2.x
        _wrap(session_cls, "send_request", _send_request)
    else:  # 1.x: inherited; wrapping the base keeps other instrumentations of it in the chain
        base = sys.modules.get("mcp.shared.session")
        _wrap(getattr(base, "BaseSession", None), "send_request", _send_request)


def _patch_dispatcher(module: Any) -> None:
    _wrap(getattr(module, "JSONRPCDispatcher", None), "_allocate_id", _allocate_id)


def _patch_streamable_http(module: Any) -> None:
    transport = getattr(module, "StreamableHTTPTransport", None)
    _wrap(transport, "post_writer", _post_writer)
    _wrap(transport, "_handle_post_request", _handle_post_request)


def _patch_stdio(module: Any) -> None:
    original = getattr(module, "stdio_client", None)
    if original is None:
        return
    ours = _wrap(module, "stdio_client", _stdio_client)
    if ours is None or ours is original:
        return
    # Modules that bound the name before us (``from mcp.client.stdio import stdio_client``).
    for name, other in list(sys.modules.items()):
        if (name == "mcp" or name.startswith("mcp.")) and other is not module \
                and getattr(other, "stdio_client", None) is original:
            other.stdio_client = ours
            _swept.append((other, "stdio_client", original, ours))


_TARGETS = {
    "mcp.client.session": _patch_session,
    "mcp.shared.jsonrpc_dispatcher": _patch_dispatcher,
    "mcp.client.streamable_http": _patch_streamable_http,
    "mcp.client.stdio": _patch_stdio,
}


def _on_import(name: str) -> Any:
    def hook(module: Any) -> None:
        if _active:
            with _lock:
                with contextlib.suppress(Exception):  # a SDK shape we do not know is left untraced
                    _TARGETS[name](module)
    return hook


def tracer_provider() -> Any:
    """The provider MCP spans go to (None: the global one)."""
    return _provider


def install(tracer_provider: Any = None) -> None:
    """Hook the MCP SDK now if it is imported, else when it is. Idempotent."""
    global _active, _provider
    with _lock:
        _active = True
        _provider = tracer_provider
        for name, patch in _TARGETS.items():
            module = sys.modules.get(name)
            if module is not None:
                with contextlib.suppress(Exception):
                    patch(module)
            elif name not in _hooks_registered:
                wrapt.register_post_import_hook(_on_import(name), name)
                _hooks_registered.add(name)


def uninstall() -> None:
    """Undo ``install``: our wrappers are removed where they are outermost and pass through elsewhere."""
    global _active
    with _lock:
        _active = False
        while _patched:
            owner, attribute, ours = _patched.pop()
            current = vars(owner).get(attribute) if isinstance(owner, type) else getattr(owner, attribute, None)
            if current is ours:
                unwrap(owner, attribute)
        while _swept:
            module, attribute, original, ours = _swept.pop()
            if getattr(module, attribute, None) is ours:
                setattr(module, attribute, original)
