"""The idempotency guard on MCP tools, declared from the tools' own ``tools/list`` annotations.

The server's ledger counts how often ``place_order`` (destructiveHint, not idempotent) really ran;
``set_limit`` says idempotentHint. Nothing in the tests declares anything unless a test is about
the user's own declaration.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel import mcp as chaos_mcp
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.tools import ToolFaultInjector
from agentchaos_otel.mcp.idempotency import idempotent_from_annotations
from agentchaos_otel.mcp.protocol import ProtocolFault
from tests.support.mcp_harness import HTTP, MAJOR, STDIO, ledger_count, rpc_code, session, wire

ORDER = {"symbol": "NVDA", "qty": 1}
LIMIT = {"symbol": "NVDA", "limit": 99.5}
TIMEOUT_CODE = -32001 if MAJOR == 2 else 408


def _first_call_times_out(key: str) -> int:
    """A seed whose ``once_timeout`` schedule faults the episode's first tool call."""
    return next(seed for seed in range(200)
                if ToolFaultInjector("once_timeout", seed=seed, episode_key=key).schedule.next_step() == "timeout")


async def _call_twice(s: Any, name: str, args: dict[str, Any]) -> list[Any]:
    out = []
    for _ in range(2):
        try:
            out.append(wire(await s.call_tool(name, args)))
        except Exception as exc:
            out.append(exc)
    return out


def _suppressions(exporter: Any) -> list[Any]:
    return [s for s in exporter.get_finished_spans() if (s.attributes or {}).get(A.GUARD_SUPPRESSED)]


def test_annotations_say_which_tools_may_be_repeated() -> None:
    assert idempotent_from_annotations({"readOnlyHint": True})
    assert idempotent_from_annotations({"destructiveHint": False, "idempotentHint": True})
    assert not idempotent_from_annotations({"destructiveHint": True, "idempotentHint": False})
    assert not idempotent_from_annotations({"destructiveHint": True})
    assert not idempotent_from_annotations({}), "the specification's defaults: destructive, not idempotent"


@pytest.mark.parametrize("transport", [STDIO, HTTP])
async def test_a_repeat_after_a_timeout_is_applied_once_from_annotations_alone(
        transport: str, tracing: Any, http: tuple[str, Path], tmp_path: Path) -> None:
    provider, exporter = tracing
    url, shared = http
    ledger = tmp_path / "ledger.txt" if transport == STDIO else shared
    before = ledger_count(ledger)
    chaos_mcp.guard_idempotency()  # every session, declared from tools/list
    seed = _first_call_times_out("guarded")
    async with session(transport, url=url if transport == HTTP else None, ledger=ledger) as s:
        await s.list_tools()
        with episode("guarded", plan="once_timeout", seed=seed, tracer_provider=provider) as ep:
            first, repeat = await _call_twice(s, "place_order", ORDER)
    assert first["isError"] is True and json.loads(first["content"][0]["text"]) == {"error": "timeout"}
    assert repeat["isError"] is False and repeat["structuredContent"]["status"] == "filled", "the first real result"
    assert ledger_count(ledger) - before == 1, "the order was placed once"
    assert [r.fault_type for r in ep.fault_log] == ["timeout"]
    [suppressed] = _suppressions(exporter)
    assert suppressed.name == "execute_tool place_order" and suppressed.attributes[A.GUARD_IDEMPOTENT] is False
    assert suppressed.attributes[A.GEN_AI_OPERATION_NAME] == A.OP_EXECUTE_TOOL and A.STEP in suppressed.attributes


async def test_without_the_guard_the_repeat_applies_twice(tracing: Any, http: tuple[str, Path]) -> None:
    provider, _ = tracing
    url, ledger = http
    before = ledger_count(ledger)
    seed = _first_call_times_out("unguarded")
    async with session(HTTP, url=url) as s:
        with episode("unguarded", plan="once_timeout", seed=seed, tracer_provider=provider):
            await _call_twice(s, "place_order", ORDER)
    assert ledger_count(ledger) - before == 2


async def test_idempotent_tools_are_repeated(tracing: Any, http: tuple[str, Path]) -> None:
    provider, exporter = tracing
    chaos_mcp.guard_idempotency()
    seed = _first_call_times_out("idempotent")
    async with session(HTTP, url=http[0]) as s:
        await s.list_tools()
        with episode("idempotent", plan="once_timeout", seed=seed, tracer_provider=provider):
            first, repeat = await _call_twice(s, "set_limit", LIMIT)
    assert first["isError"] is True and repeat["isError"] is False
    assert _suppressions(exporter) == []
    assert len([s for s in exporter.get_finished_spans() if s.name == "tools/call set_limit"]) == 2


async def test_a_session_guard_after_a_protocol_timeout(tracing: Any, http: tuple[str, Path]) -> None:
    provider, _ = tracing
    url, ledger = http
    before = ledger_count(ledger)
    rule = ProtocolFault("rpc_error", code=TIMEOUT_CODE, tool="place_order", calls=(0,))
    async with session(HTTP, url=url) as s:
        guard = chaos_mcp.guard_idempotency(s)  # this session only
        with chaos_mcp.protocol_faults([rule]), episode("protocol", tracer_provider=provider):
            first, repeat = await _call_twice(s, "place_order", ORDER)
    assert rpc_code(first) == TIMEOUT_CODE and repeat["structuredContent"]["status"] == "filled"
    assert ledger_count(ledger) - before == 1 and guard.suppressed == 1


async def test_the_users_declaration_wins(tracing: Any, http: tuple[str, Path]) -> None:
    provider, exporter = tracing
    url, ledger = http
    before = ledger_count(ledger)
    chaos_mcp.guard_idempotency(idempotent={"place_order": True, "set_limit": False}, reply="already_applied")
    seed = _first_call_times_out("declared")
    async with session(HTTP, url=url) as s:
        await s.list_tools()
        for tool, args in (("place_order", ORDER), ("set_limit", LIMIT)):
            with episode("declared", plan="once_timeout", seed=seed, tracer_provider=provider):
                first, repeat = await _call_twice(s, tool, args)
            assert first["isError"] is True
            if tool == "set_limit":
                note = json.loads(repeat["content"][0]["text"])
                assert note["already_applied"] is True and note["result"].startswith("limit for NVDA")
    assert ledger_count(ledger) - before == 2, "declared idempotent: repeated"
    assert [s.name for s in _suppressions(exporter)] == ["execute_tool set_limit"]
