"""Protocol faults on MCP tool calls: what a broken server or network does, after the tool really ran.

Each fault is checked where the agent meets it (the SDK's own exception, or a session that ends,
as each major of the SDK reacts to that fault) and in the store's ground truth.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel import mcp as chaos_mcp
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.mcp.protocol import (
    PROTOCOL_FAULT_KINDS,
    ProtocolFault,
    ProtocolFaultError,
    ProtocolSchedule,
)
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from tests.support.mcp_harness import (
    HTTP,
    MAJOR,
    STDIO,
    http_server,
    ledger_count,
    rpc_code,
    session,
    timeout,
    wire,
)

TIMEOUT_CODE = -32001 if MAJOR == 2 else 408


def _faults(exporter: Any, path: Path) -> list[tuple[Any, ...]]:
    DuckDBSpanExporter(str(path)).export(list(exporter.get_finished_spans()))
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("select fault_type, target, changed, span_name, step from injected_faults").fetchall()
    finally:
        con.close()


async def _order(transport: str, url: str | None, ledger: Path, rule: ProtocolFault, provider: Any,
                 read_timeout: float | None = None,
                 call_timeout: float | None = None) -> tuple[BaseException | None, Any]:
    """One faulted place_order and one clean call after it; (what the agent got, the clean result)."""
    got: BaseException | None = None
    after = None
    try:
        with episode(f"protocol-{rule.kind}", tracer_provider=provider), chaos_mcp.protocol_faults([rule]):
            async with session(transport, url=url, ledger=ledger, read_timeout=read_timeout) as s:
                try:
                    await s.call_tool("place_order", {"symbol": "NVDA", "qty": 1},
                                      read_timeout_seconds=timeout(call_timeout))
                except Exception as exc:
                    got = exc
                after = await s.call_tool("get_quote", {"symbol": "NVDA"})
    except BaseException as exc:  # 1.x: an HTTP error status ends the transport, and the session with it
        if got is None:
            got = exc
    return got, after


@pytest.mark.parametrize("kind,code", [("rpc_error", -32602), ("rpc_error", -32603), ("http_429", None),
                                       ("http_503", None), ("stream_cut", None)])
async def test_http_protocol_faults(kind: str, code: int | None, tracing: Any, tmp_path: Path) -> None:
    provider, exporter = tracing
    ledger = tmp_path / "ledger.txt"
    rule = ProtocolFault(kind, code=code) if code is not None else ProtocolFault(kind)
    with http_server(ledger) as url:
        got, after = await _order(HTTP, url, ledger, rule, provider, read_timeout=3.0)
    assert ledger_count(ledger) == 1, "the tool ran once, whatever the agent was told"
    assert got is not None, "the agent sees the fault"
    if kind == "rpc_error":
        assert rpc_code(got) == code and after is not None
    elif MAJOR == 2:
        expected = {"http_429": -32603, "http_503": -32603, "stream_cut": -32000}[kind]
        assert rpc_code(got) == expected and after is not None, "2.x turns it into an error and goes on"
    elif kind == "stream_cut":
        assert rpc_code(got) == TIMEOUT_CODE, "1.x waits for the response until its read timeout"
    else:
        assert isinstance(got, BaseExceptionGroup), "1.x: the error status ends the transport"
    [(fault_type, target, changed, span_name, step)] = _faults(exporter, tmp_path / "f.duckdb")
    assert (target, changed, span_name, step) == (A.TARGET_MCP, True, "tools/call place_order", 0)
    assert fault_type == {"rpc_error": "error", "http_429": "rate_limit", "http_503": "http_error",
                          "stream_cut": "stream_cut"}[kind]


async def test_a_stalled_stdio_server(tracing: Any, tmp_path: Path) -> None:
    provider, exporter = tracing
    ledger = tmp_path / "ledger.txt"
    got, after = await _order(STDIO, None, ledger, ProtocolFault("stall", seconds=1.0), provider)
    assert rpc_code(got) == TIMEOUT_CODE, "no read timeout set: the stall's own seconds end the wait"
    assert after is not None and wire(after)["structuredContent"]["symbol"] == "NVDA", "the session goes on"
    got, _ = await _order(STDIO, None, ledger, ProtocolFault("stall", seconds=30.0), provider, call_timeout=0.5)
    assert rpc_code(got) == TIMEOUT_CODE, "the caller's shorter read timeout fires first"
    assert ledger_count(ledger) == 2
    rows = _faults(exporter, tmp_path / "f.duckdb")
    assert [(r[0], r[1], r[2]) for r in rows] == [("timeout", A.TARGET_MCP, True)] * 2


async def test_faults_a_transport_cannot_carry_are_skipped_and_say_why(tracing: Any, tmp_path: Path) -> None:
    provider, exporter = tracing
    ledger = tmp_path / "ledger.txt"
    got, after = await _order(STDIO, None, ledger, ProtocolFault("http_503"), provider)
    assert got is None and after is not None
    [call] = [s for s in exporter.get_finished_spans() if s.name == "tools/call place_order"]
    assert not call.attributes[A.FAULT_INJECTED]
    [skip] = [e for e in call.events if e.name == A.EVENT_INJECTOR_SKIP]
    assert "Streamable HTTP" in skip.attributes[A.SKIP_REASON]


async def test_rules_pick_tools_and_calls(tracing: Any, http: tuple[str, Path]) -> None:
    provider, _ = tracing
    rules = [ProtocolFault("rpc_error", tool="echo", calls=(1, 3), count=None)]
    outcomes = []
    with chaos_mcp.protocol_faults(rules), episode("rules", tracer_provider=provider) as ep:
        async with session(HTTP, url=http[0]) as s:
            for name, args in [("echo", {"text": "a"}), ("echo", {"text": "b"}), ("get_quote", {"symbol": "X"}),
                               ("echo", {"text": "c"})]:
                try:
                    await s.call_tool(name, args)
                    outcomes.append("ok")
                except Exception as exc:
                    outcomes.append(rpc_code(exc))
    assert outcomes == ["ok", -32603, "ok", -32603]
    assert [(r.call, r.fault, r.target) for r in ep.fault_log] == [(1, "mcp_rpc_error_-32603", A.TARGET_MCP),
                                                                   (3, "mcp_rpc_error_-32603", A.TARGET_MCP)]


def test_schedules_are_seeded() -> None:
    rules = (ProtocolFault("rpc_error", probability=0.3, count=None), ProtocolFault("http_503", probability=0.2))

    def run(seed: int) -> list[str | None]:
        schedule = ProtocolSchedule(rules, seed=seed, episode_key="task")
        return [getattr(schedule.decide(i, "t"), "kind", None) for i in range(200)]

    assert run(4) == run(4) and run(4) != run(5)
    assert 30 < run(4).count("rpc_error") < 90 and run(4).count("http_503") == 1


def test_bad_rules_are_refused_in_one_line() -> None:
    for bad in ({"kind": "http_418"}, {"kind": "rpc_error", "probability": 2}, {"kind": "stall", "seconds": 0}):
        with pytest.raises(ProtocolFaultError) as err:
            ProtocolFault(**bad)
        assert "\n" not in str(err.value)
    with pytest.raises(ProtocolFaultError):
        chaos_mcp.set_protocol_faults(["http_503"])  # type: ignore[list-item]
    assert set(PROTOCOL_FAULT_KINDS) == {"rpc_error", "http_429", "http_503", "stream_cut", "stall"}
