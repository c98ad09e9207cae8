"""Tool-result faults on MCP tool calls with no ``wrap_tools``: the tool runs, the agent sees the fault.

Every kind is checked where the agent reads it (the ``CallToolResult`` the SDK hands back) and where
the store keeps the ground truth (``injected_faults``, ``tool_calls`` of a real DuckDB file). The
same plan and seed fault the same calls, with the same values, as the same tool behind
``wrap_tools``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.faults.tool_result import TOOL_FAULT_KINDS
from agentchaos_otel.plans.schedule import ONCE_CONDITIONS
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from tests.support.mcp_harness import HTTP, STDIO, ledger_count, session, wire, wire_bytes

CALLS = 4  # a once_<kind> condition faults one of the first four tool calls


def _store(exporter: Any, path: Path) -> duckdb.DuckDBPyConnection:
    DuckDBSpanExporter(str(path)).export(list(exporter.get_finished_spans()))
    return duckdb.connect(str(path), read_only=True)


def _check_shape(kind: str, clean: dict[str, Any], shown: dict[str, Any]) -> None:
    """What the agent reads under each kind, against the clean result of the same call."""
    text = "".join(c.get("text", "") for c in shown["content"])
    structured = shown.get("structuredContent")
    real = clean["structuredContent"]
    if kind in ("timeout", "rate_limit"):
        assert shown["isError"] is True and structured is None
        assert json.loads(text)["error"] == kind
    elif kind == "empty":
        assert shown["content"] == [] and structured == {}
    elif kind == "malformed_json":
        assert structured is None and clean["content"][0]["text"].startswith(text) and text
        with pytest.raises(ValueError):
            json.loads(text)
    else:
        assert json.loads(text) == structured, "the text says what the structured content says"
        if kind == "truncated":
            assert set(structured) < set(real)
        elif kind == "key_rename":
            assert len(structured) == len(real) and set(structured) != set(real)
        else:
            assert set(structured) == set(real) and structured != real


@pytest.mark.parametrize("transport", [STDIO, HTTP])
async def test_every_kind_reaches_the_agent_and_is_recorded(transport: str, tracing: Any, http: tuple[str, Path],
                                                            tmp_path: Path) -> None:
    provider, exporter = tracing
    seen: dict[str, list[dict[str, Any]]] = {}
    async with session(transport, url=http[0] if transport == HTTP else None) as s:
        clean = wire(await s.call_tool("get_quote", {"symbol": "NVDA"}))
        exporter.clear()
        for kind in TOOL_FAULT_KINDS:
            with episode(f"mcp-{kind}", plan=f"once_{kind}", seed=1, tracer_provider=provider):
                seen[kind] = [wire(await s.call_tool("get_quote", {"symbol": "NVDA"})) for _ in range(CALLS)]
    con = _store(exporter, tmp_path / "faults.duckdb")
    rows = con.execute("select task_id, step, fault_type, target, changed, span_name from injected_faults "
                       "order by task_id").fetchall()
    steps = dict(con.execute("select task_id, count(*) from tool_calls group by task_id").fetchall())
    con.close()
    assert sorted(r[2] for r in rows) == sorted(TOOL_FAULT_KINDS), "one recorded firing per kind"
    for task_id, step, kind, target, changed, span_name in rows:
        assert task_id == f"mcp-{kind}" and target == A.TARGET_TOOL_RESULT and changed is True
        assert span_name == "tools/call get_quote" and steps[task_id] == CALLS
        faulted = [i for i, got in enumerate(seen[kind]) if got != clean]
        assert faulted == [step], f"{kind}: exactly the recorded call differs from the clean result"
        _check_shape(kind, clean, seen[kind][step])


@pytest.mark.parametrize("transport", [STDIO, HTTP])
async def test_without_a_plan_results_are_byte_identical(transport: str, tracing: Any, http: tuple[str, Path]) -> None:
    from agentchaos_otel import mcp as chaos_mcp

    provider, exporter = tracing
    calls = [("get_quote", {"symbol": "NVDA"}), ("echo", {"text": "plain"}), ("numbers", {"n": 3}),
             ("set_limit", {"symbol": "NVDA", "limit": 100.5}), ("fail_plain", {})]
    async with session(transport, url=http[0] if transport == HTTP else None) as s:
        traced = [wire_bytes(await s.call_tool(name, args)) for name, args in calls]
        with episode("no-faults", tracer_provider=provider):
            in_episode = [wire_bytes(await s.call_tool(name, args)) for name, args in calls]
        chaos_mcp.uninstrument()
        bare = [wire_bytes(await s.call_tool(name, args)) for name, args in calls]
    assert traced == bare == in_episode
    assert len([s for s in exporter.get_finished_spans() if s.name.startswith("tools/call")]) == 2 * len(calls)
    assert not any((s.attributes or {}).get(A.FAULT_INJECTED) for s in exporter.get_finished_spans())


@pytest.mark.parametrize("condition", ["independent", "bursty", "persistent", *ONCE_CONDITIONS])
async def test_same_plan_and_seed_fault_the_same_calls_as_wrap_tools(condition: str, tracing: Any,
                                                                    http: tuple[str, Path]) -> None:
    provider, _ = tracing
    n = 14
    async with session(HTTP, url=http[0]) as s:
        quote = wire(await s.call_tool("get_quote", {"symbol": "NVDA"}))["structuredContent"]

        def get_quote(symbol: str) -> dict[str, Any]:  # the same tool, local: returns what the server returns
            return copy.deepcopy(quote)

        for seed in (0, 1, 2):
            with episode("same-calls", plan=condition, seed=seed, tracer_provider=provider) as local:
                tools = local.wrap_tools({"get_quote": get_quote})
                wrapped = [tools["get_quote"](symbol="NVDA") for _ in range(n)]
            with episode("same-calls", plan=condition, seed=seed, tracer_provider=provider) as remote:
                over_mcp = [wire(await s.call_tool("get_quote", {"symbol": "NVDA"})) for _ in range(n)]
            assert [(r.call, r.fault_type) for r in remote.fault_log] == \
                   [(r.call, r.fault_type) for r in local.fault_log], f"{condition} seed {seed}"
            for record in remote.fault_log:
                got, expected = over_mcp[record.call], wrapped[record.call]
                if record.fault_type in ("timeout", "rate_limit"):
                    assert json.loads(got["content"][0]["text"]) == expected
                elif record.fault_type != "malformed_json":  # the cut falls in differently rendered text
                    assert got.get("structuredContent") == expected, f"{condition} seed {seed}: same value"


async def test_the_tool_runs_under_every_kind(tracing: Any, http: tuple[str, Path]) -> None:
    provider, _ = tracing
    url, ledger = http
    before = ledger_count(ledger)
    async with session(HTTP, url=url) as s:
        for kind in TOOL_FAULT_KINDS:
            with episode(f"runs-{kind}", plan=f"once_{kind}", seed=2, tracer_provider=provider) as ep:
                for _ in range(CALLS):
                    await s.call_tool("place_order", {"symbol": "NVDA", "qty": 1})
            assert [r.fault_type for r in ep.fault_log] == [kind]
    assert ledger_count(ledger) - before == CALLS * len(TOOL_FAULT_KINDS), "every call reached the server"


async def test_a_fault_that_cannot_be_made_leaves_the_real_result(tracing: Any, http: tuple[str, Path],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from agentchaos_otel.mcp import results

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug of ours")

    provider, exporter = tracing
    monkeypatch.setattr(results, "shape_fault", broken)
    async with session(HTTP, url=http[0]) as s:
        clean = wire(await s.call_tool("get_quote", {"symbol": "NVDA"}))
        with episode("fail-open", plan="once_truncated", seed=1, tracer_provider=provider):
            got = [wire(await s.call_tool("get_quote", {"symbol": "NVDA"})) for _ in range(CALLS)]
    assert got == [clean] * CALLS, "the agent gets the real result"
    skips = [e for s in exporter.get_finished_spans() for e in s.events if e.name == A.EVENT_INJECTOR_SKIP]
    assert len(skips) == 1 and "a bug of ours" in skips[0].attributes[A.SKIP_REASON]
