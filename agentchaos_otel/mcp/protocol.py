"""Faults at the MCP protocol: what a broken server or network does to a tool call, with the tool run.

The seven tool-result faults change what a result says; these change whether a result arrives:

- ``rpc_error``: the server answers with a JSON-RPC error (``code``, default -32603 Internal
  error; servers also send -32602 Invalid params, -32601 Method not found, -32000 and the SDK's
  own -32001 / 408 request timeout);
- ``http_429`` / ``http_503``: the Streamable HTTP POST that carried the call comes back
  429 Too Many Requests / 503 Service Unavailable (with ``Retry-After``);
- ``stream_cut``: the call's SSE event stream ends before the response event (a JSON body is
  cut in half);
- ``stall``: a stdio server that stops answering: the response never reaches the client; the
  SDK's read timeout fires, or, when the caller set none, the call fails as if it had been
  ``seconds``.

In every case the request reaches the server and the tool runs; only what comes back is
replaced, after the real response was read in full. The HTTP kinds need a Streamable HTTP
session and ``stall`` a stdio one, both opened after instrumenting; elsewhere a scheduled firing
is skipped and says why on the span.

A ``ProtocolFault`` rule says which calls may get a fault: one tool or any (``tool``), given
0-based tool-call indices of the episode or any (``calls``), with a probability drawn from a
stream seeded by (episode seed, task id, rule position), at most ``count`` times per episode.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from agentchaos_otel import attributes as A
from agentchaos_otel.seeds import derive_seed

RPC_ERROR, HTTP_429, HTTP_503, STREAM_CUT, STALL = "rpc_error", "http_429", "http_503", "stream_cut", "stall"
PROTOCOL_FAULT_KINDS = (RPC_ERROR, HTTP_429, HTTP_503, STREAM_CUT, STALL)
HTTP_KINDS = (HTTP_429, HTTP_503, STREAM_CUT)

# JSON-RPC 2.0 and MCP error codes (the messages servers send with them).
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
CONNECTION_CLOSED, REQUEST_TIMEOUT, LEGACY_REQUEST_TIMEOUT = -32000, -32001, 408
RPC_MESSAGES = {
    PARSE_ERROR: "Parse error", INVALID_REQUEST: "Invalid request", METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params", INTERNAL_ERROR: "Internal error", CONNECTION_CLOSED: "Connection closed",
    REQUEST_TIMEOUT: "Request timed out", LEGACY_REQUEST_TIMEOUT: "Request timed out",
}
HTTP_STATUS = {HTTP_429: 429, HTTP_503: 503}
HTTP_BODY = {HTTP_429: "Too Many Requests", HTTP_503: "Service Unavailable"}
DEFAULT_STALL_SECONDS = 30.0
DEFAULT_RETRY_AFTER = 1


class ProtocolFaultError(ValueError):
    """A protocol fault rule that cannot be used; the message is one readable line."""


@dataclass(frozen=True)
class ProtocolFault:
    """One rule: ``kind`` on the calls it matches (see the module docstring)."""

    kind: str
    tool: str | None = None
    calls: tuple[int, ...] | None = None
    probability: float = 1.0
    count: int | None = 1
    code: int = INTERNAL_ERROR
    message: str | None = None
    seconds: float = DEFAULT_STALL_SECONDS
    retry_after: int = DEFAULT_RETRY_AFTER

    def __post_init__(self) -> None:
        if self.kind not in PROTOCOL_FAULT_KINDS:
            raise ProtocolFaultError(f"unknown MCP protocol fault {self.kind!r}; expected one of "
                                     f"{', '.join(PROTOCOL_FAULT_KINDS)}")
        if not 0.0 <= float(self.probability) <= 1.0:
            raise ProtocolFaultError(f"probability must be within [0, 1], got {self.probability!r}")
        if self.count is not None and self.count < 0:
            raise ProtocolFaultError(f"count must be >= 0 or None, got {self.count!r}")
        if self.seconds <= 0:
            raise ProtocolFaultError(f"seconds must be positive, got {self.seconds!r}")
        if self.calls is not None:
            object.__setattr__(self, "calls", tuple(int(c) for c in self.calls))

    @property
    def fault_type(self) -> str:
        """The ground-truth label: what the agent experiences."""
        if self.kind == HTTP_429:
            return "rate_limit"
        if self.kind == HTTP_503:
            return "http_error"
        if self.kind == STREAM_CUT:
            return "stream_cut"
        if self.kind == STALL or self.code in (REQUEST_TIMEOUT, LEGACY_REQUEST_TIMEOUT):
            return "timeout"
        return "error"

    @property
    def strategy(self) -> str:
        """How often the rule fires, in the catalog's strategy words."""
        if self.count == 1:
            return "single"
        return "intermittent" if self.probability < 1.0 else "persistent"

    @property
    def detail(self) -> str:
        return f"mcp_{self.kind}" + (f"_{self.code}" if self.kind == RPC_ERROR else "")

    @property
    def rpc_message(self) -> str:
        return self.message or RPC_MESSAGES.get(self.code, "Server error")

    def applies_to(self, transport: str | None) -> str | None:
        """None when the fault can be delivered over ``transport``, else why not."""
        if self.kind in HTTP_KINDS and transport != A.TRANSPORT_TCP:
            return f"{self.kind} needs a Streamable HTTP session opened after instrumenting"
        if self.kind == STALL and transport != A.TRANSPORT_PIPE:
            return "stall needs a stdio session opened after instrumenting"
        return None


class ProtocolSchedule:
    """One episode's decisions over its rules; equal (rules, seed, episode key) give equal decisions."""

    def __init__(self, rules: Sequence[ProtocolFault], *, seed: int = 0, episode_key: str = "") -> None:
        self.rules = tuple(rules)
        self._rngs = [random.Random(derive_seed("mcp-protocol", seed, episode_key, i, r.kind))
                      for i, r in enumerate(self.rules)]
        self._fired = [0] * len(self.rules)
        self._lock = threading.Lock()

    def decide(self, index: int, tool: str) -> ProtocolFault | None:
        """The fault for tool call ``index`` (0-based in the episode) of ``tool``, advancing the streams."""
        with self._lock:
            for i, rule in enumerate(self.rules):
                if rule.tool is not None and rule.tool != tool:
                    continue
                if rule.calls is not None and index not in rule.calls:
                    continue
                if rule.count is not None and self._fired[i] >= rule.count:
                    continue
                if rule.probability < 1.0 and self._rngs[i].random() >= rule.probability:
                    continue
                self._fired[i] += 1
                return rule
        return None

    def release(self, rule: ProtocolFault) -> None:
        """A chosen fault could not be delivered: give its firing back."""
        with self._lock:
            for i, r in enumerate(self.rules):
                if r is rule and self._fired[i] > 0:
                    self._fired[i] -= 1
                    return
