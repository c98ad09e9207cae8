"""What the agent's code sets for the MCP calls it makes: protocol-fault rules and the tool-call id.

Process-wide values, or values for the current context only (an asyncio task and what it
starts, a thread), which win. Kept apart from the hooks so setting them never imports the SDK.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterable, Iterator

from agentchaos_otel.mcp.protocol import ProtocolFault, ProtocolFaultError

_process_rules: tuple[ProtocolFault, ...] = ()
_context_rules: contextvars.ContextVar[tuple[ProtocolFault, ...] | None] = contextvars.ContextVar(
    "agentchaos_mcp_protocol_rules", default=None)
_call_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("agentchaos_mcp_call_id", default=None)


def _rules(rules: ProtocolFault | Iterable[ProtocolFault] | None) -> tuple[ProtocolFault, ...]:
    if rules is None:
        return ()
    found = (rules,) if isinstance(rules, ProtocolFault) else tuple(rules)
    for rule in found:
        if not isinstance(rule, ProtocolFault):
            raise ProtocolFaultError(f"protocol faults are ProtocolFault rules, got {type(rule).__name__}")
    return found


def set_protocol_faults(rules: ProtocolFault | Iterable[ProtocolFault] | None) -> None:
    """The rules for every MCP tool call of the process (None or () for none)."""
    global _process_rules
    _process_rules = _rules(rules)


@contextlib.contextmanager
def protocol_faults(rules: ProtocolFault | Iterable[ProtocolFault] | None) -> Iterator[None]:
    """The rules for the MCP tool calls made in this context (instead of the process-wide ones)."""
    token = _context_rules.set(_rules(rules))
    try:
        yield
    finally:
        _context_rules.reset(token)


def current_rules() -> tuple[ProtocolFault, ...]:
    rules = _context_rules.get()
    return _process_rules if rules is None else rules


@contextlib.contextmanager
def tool_call_id(call_id: str | None) -> Iterator[None]:
    """Label the MCP tool call made in this block with the model's tool-call id (``gen_ai.tool.call.id``)."""
    token = _call_id.set(None if call_id is None else str(call_id))
    try:
        yield
    finally:
        _call_id.reset(token)


def current_call_id() -> str | None:
    return _call_id.get()
