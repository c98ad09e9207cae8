"""MCP: an agent's tools traced and broken at the protocol, with no change to its code.

The MCP client session is to tools what the HTTP transport is to LLM calls, so the official
``mcp`` SDK's ``ClientSession`` (1.x and 2.x, Streamable HTTP, stdio and any transport built on
its streams) is hooked at class level (``hooks.py``): every request becomes a CLIENT span of the
OTel MCP conventions, every ``tools/call`` a tool step with the tool-result signals, the tool
faults of the episode's plan (shared with ``wrap_tools``) and, on request, protocol faults
(``ProtocolFault``); the tools' own annotations declare to the idempotency guard which calls
may be repeated. ``configure()``, ``AgentChaosInstrumentor().instrument()`` and zero-code switch
the hooks on; nothing here imports the SDK before the application does.

    import agentchaos_otel
    from agentchaos_otel import mcp as chaos_mcp

    agentchaos_otel.configure(plan="bursty")                  # traced, tool faults per the plan
    chaos_mcp.set_protocol_faults([chaos_mcp.ProtocolFault("http_503", tool="place_order")])
    chaos_mcp.guard_idempotency()                             # every session, from annotations
"""

from __future__ import annotations

from typing import Any

from agentchaos_otel.mcp.context import current_rules, protocol_faults, set_protocol_faults, tool_call_id
from agentchaos_otel.mcp.protocol import PROTOCOL_FAULT_KINDS, ProtocolFault, ProtocolFaultError

__all__ = ["PROTOCOL_FAULT_KINDS", "ProtocolFault", "ProtocolFaultError", "current_rules", "guard_idempotency",
           "instrument", "is_instrumented", "protocol_faults", "set_protocol_faults", "tool_call_id",
           "unguard_idempotency", "uninstrument"]


def instrument(tracer_provider: Any = None) -> None:
    """Trace (and fault, per the bound plan) every MCP client session of the process."""
    from agentchaos_otel.mcp import hooks

    hooks.install(tracer_provider)


def uninstrument() -> None:
    from agentchaos_otel.mcp import hooks

    hooks.uninstall()


def is_instrumented() -> bool:
    from agentchaos_otel.mcp import hooks

    return hooks.active()


def _idempotency() -> Any:
    try:
        from agentchaos_otel.mcp import idempotency
    except ImportError as exc:
        raise ImportError("the MCP idempotency guard needs the mcp SDK: pip install 'agentchaos-otel[mcp]'") from exc
    return idempotency


def guard_idempotency(session: Any = None, **options: Any) -> Any:
    """The idempotency guard for one session, or (no session) for every MCP session of the process.

    Tools are declared from their ``tools/list`` annotations (``readOnlyHint`` or
    ``idempotentHint``: may be repeated); ``idempotent=`` (names, name -> bool, or a callable)
    overrides them. Other options: ``window``, ``reply`` (see ``IdempotencyGuard``).
    """
    return _idempotency().guard_idempotency(session, **options)


def unguard_idempotency(session: Any = None) -> None:
    _idempotency().unguard_idempotency(session)
