"""What the hooks know about each client session and the transport under it.

A ``ClientSession`` does not know its transport, so the transport hooks register what they
learn under the raw stream the session writes to (proxies of other instrumentations peeled off):
``tcp`` and the ``StreamableHTTPTransport`` (whose ``session_id`` is the MCP session id) for
Streamable HTTP, ``pipe`` and the read stream that can hold responses back for stdio. A session
whose transport was opened before instrumenting is traced without them.

Per session: the tools' annotations from ``tools/list`` (kept across listings, so a call after a
paginated or cached listing still finds them), the negotiated protocol version, and a stable key
that identifies a stdio session (which has no MCP session id).
"""

from __future__ import annotations

import threading
import uuid
import weakref
from dataclasses import dataclass, field
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel.mcp import sdk

# Hint -> the span attribute recording it (only hints the server declared are recorded).
ANNOTATION_ATTRIBUTES = {
    "readOnlyHint": A.MCP_TOOL_READ_ONLY, "destructiveHint": A.MCP_TOOL_DESTRUCTIVE,
    "idempotentHint": A.MCP_TOOL_IDEMPOTENT, "openWorldHint": A.MCP_TOOL_OPEN_WORLD,
}


@dataclass
class TransportInfo:
    """A transport opened after instrumenting: its kind and the objects faults are delivered through."""

    kind: str
    http: Any = None  # mcp.client.streamable_http.StreamableHTTPTransport
    reader: Any = None  # transports.HoldingReader (stdio)
    http_planned: dict[str, Any] = field(default_factory=dict)  # JSON-RPC id -> transports.Planned

    def session_id(self) -> str | None:
        value = getattr(self.http, "session_id", None) if self.http is not None else None
        return value if isinstance(value, str) and value else None


@dataclass
class SessionState:
    key: str = field(default_factory=lambda: uuid.uuid4().hex)
    annotations: dict[str, dict[str, bool]] = field(default_factory=dict)
    protocol_version: str | None = None
    injector: Any = None  # the session's own injector when no episode or plan is bound
    guard: Any = None  # an IdempotencyGuard switched on for this session alone
    scratch: dict[str, Any] = field(default_factory=dict)  # per-session state when no episode is bound


_lock = threading.Lock()
_states: weakref.WeakKeyDictionary[Any, SessionState] = weakref.WeakKeyDictionary()
# Keyed by id(): 2.x stream objects have __slots__ without __weakref__. Entries live exactly as
# long as the transport (the hooks remove them when it ends).
_by_stream: dict[int, TransportInfo] = {}
_by_transport: dict[int, TransportInfo] = {}


def state(session: Any) -> SessionState:
    found = _states.get(session)
    if found is None:
        with _lock:
            found = _states.get(session)
            if found is None:
                found = _states[session] = SessionState()
    return found


def register(write_stream: Any, info: TransportInfo) -> int:
    key = id(sdk.unwrapped(write_stream))
    _by_stream[key] = info
    if info.http is not None:
        _by_transport[id(info.http)] = info
    return key


def unregister(key: int, info: TransportInfo) -> None:
    if _by_stream.get(key) is info:
        del _by_stream[key]
    if info.http is not None and _by_transport.get(id(info.http)) is info:
        del _by_transport[id(info.http)]


def transport_of(session: Any) -> TransportInfo | None:
    stream = sdk.write_stream_of(session)
    return _by_stream.get(id(stream)) if stream is not None else None


def for_http_transport(transport: Any) -> TransportInfo | None:
    return _by_transport.get(id(transport))


def remember_tools(session: Any, tools: Any) -> None:
    """Keep the annotations of listed tools (a later listing of a tool replaces its entry)."""
    st = state(session)
    for tool in tools or ():
        name = getattr(tool, "name", None)
        if isinstance(name, str):
            st.annotations[name] = sdk.tool_annotations(tool)


def annotation_attributes(session: Any, tool: str) -> dict[str, bool]:
    hints = state(session).annotations.get(tool) or {}
    return {ANNOTATION_ATTRIBUTES[k]: v for k, v in hints.items() if k in ANNOTATION_ATTRIBUTES}


def protocol_version(session: Any) -> str | None:
    return sdk.session_protocol_version(session) or state(session).protocol_version


def session_attributes(session: Any) -> dict[str, Any]:
    """``network.transport``, ``mcp.session.id``, ``mcp.protocol.version`` as far as they are known."""
    attrs: dict[str, Any] = {}
    info = transport_of(session)
    if info is not None:
        attrs[A.NETWORK_TRANSPORT] = info.kind
        if info.kind == A.TRANSPORT_TCP:
            attrs[A.NETWORK_PROTOCOL_NAME] = "http"
        sid = info.session_id()
        if sid:
            attrs[A.MCP_SESSION_ID] = sid
    version = protocol_version(session)
    if version:
        attrs[A.MCP_PROTOCOL_VERSION] = version
    return attrs
