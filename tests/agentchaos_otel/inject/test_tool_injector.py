"""The tool-result injector: execute_tool spans, ground truth, wrapping, fail-open, episodes."""

from __future__ import annotations

import asyncio
import importlib
import json
import threading
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.trading_bot import TradingBot
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.tools import CALL_ID_KWARG, ToolFaultInjector
from agentchaos_otel.inject.transport import ChaosTransport
from agentchaos_otel.plans import binding
from agentchaos_otel.plans.plan import load_plan_file
from agentchaos_otel.signals import digest
from agentchaos_otel.sim.reference_agent import ReferencePolicy, run_reference_agent
from agentchaos_otel.sim.reference_tasks import REFERENCE_TOOLS, reference_tasks
from agentchaos_otel.sim.server import SimulatedModelServer
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.store.read.episodes import load_episodes
from agentchaos_otel.trace.processors import EpisodeSpanProcessor

Tracing = tuple[TracerProvider, InMemorySpanExporter]
# Tests that look only at what the injector returns and logs trace to a provider of their own with
# no processor: the process's global provider may carry processors left by earlier tests (an
# in-process campaign sets it), which would otherwise number these spans as steps.
UNTRACED = TracerProvider()

ORDER = {"order_id": 12345, "reference": "ORD-0042", "placed_on": "2024-03-15", "total": 149.99,
         "customer": {"name": "Ada Lovelace", "customer_id": "CUST-007"},
         "items": [{"sku": "SKU-100", "price": 19.99}, {"sku": "SKU-205", "price": 5.5}]}


def get_order(order_id: int, verbose: bool = False) -> dict[str, Any]:
    return {**ORDER, "order_id": order_id}


def tool_spans(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name.startswith(A.OP_EXECUTE_TOOL)]


@pytest.fixture(autouse=True)
def no_content_capture(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(A.CAPTURE_CONTENT_ENV, raising=False)


def test_unfaulted_call_gets_an_execute_tool_span(memory_tracing: Tracing) -> None:
    provider, exporter = memory_tracing
    inj = ToolFaultInjector("none", tracer_provider=provider)
    tool = inj.wrap(get_order)
    result = tool(7, verbose=True, **{CALL_ID_KWARG: "call_abc"})
    assert result == {**ORDER, "order_id": 7}
    [span] = tool_spans(exporter)
    assert span.name == "execute_tool get_order" and span.kind == SpanKind.INTERNAL
    attrs = span.attributes or {}
    assert attrs[A.GEN_AI_OPERATION_NAME] == "execute_tool"
    assert attrs[A.GEN_AI_TOOL_NAME] == "get_order"
    assert attrs[A.GEN_AI_TOOL_CALL_ID] == "call_abc"
    assert attrs[A.FAULT_INJECTED] is False and attrs[A.FAULT_STRATEGY] == "none"
    assert A.FAULT_TYPE not in attrs
    assert attrs[A.TOOL_CALL_INDEX] == 0
    # Positional and keyword arguments are digested by parameter name, as the model sends them.
    assert attrs[A.TOOL_ARGS_DIGEST] == digest(json.dumps({"order_id": 7, "verbose": True}, sort_keys=True,
                                                           separators=(",", ":")))
    assert attrs[A.TOOL_RESULT_DIGEST] == digest(json.dumps(result, ensure_ascii=False))
    assert attrs[A.TOOL_RESULT_IS_JSON] is True and attrs[A.TOOL_RESULT_IS_ERROR] is False
    assert list(attrs[A.TOOL_RESULT_KEYS]) == sorted(ORDER)
    assert inj.fault_log == []


def test_faulted_call_records_ground_truth_and_observable_signals(memory_tracing: Tracing) -> None:
    provider, exporter = memory_tracing
    ran: list[int] = []

    def cancel_order(order_id: int) -> dict[str, Any]:
        ran.append(order_id)
        return {"order_id": order_id, "status": "Cancelled"}

    inj = ToolFaultInjector("independent", seed=1, rate=1.0, kinds=("timeout",), tracer_provider=provider)
    shown = inj.wrap({"cancel_order": cancel_order})["cancel_order"](order_id=12446)
    assert shown == {"error": "timeout"}
    assert ran == [12446], "the tool really runs; only what the agent sees is replaced"
    [span] = tool_spans(exporter)
    attrs = span.attributes or {}
    real = json.dumps({"order_id": 12446, "status": "Cancelled"}, ensure_ascii=False)
    assert attrs[A.FAULT_INJECTED] is True
    assert attrs[A.FAULT_TYPE] == "timeout"
    assert attrs[A.FAULT_TARGET] == "tool_result"
    assert attrs[A.FAULT_STRATEGY] == "independent"
    assert attrs[A.FAULT_EXPERIMENT] == "tool_independent"
    assert attrs[A.FAULT_CHANGED] is True
    assert attrs[A.FAULT_DIGEST_BEFORE] == digest(real)
    assert attrs[A.FAULT_DIGEST_AFTER] == attrs[A.TOOL_RESULT_DIGEST] == digest('{"error": "timeout"}')
    assert attrs[A.TOOL_RESULT_IS_ERROR] is True and attrs[A.TOOL_RESULT_ERROR_MARKER] == "timeout"
    assert [e.name for e in span.events] == [A.EVENT_FAULT_APPLIED]
    assert inj.fault_log == [{"step": 0, "episode_step": None, "tool": "cancel_order", "call_id": None,
                              "kind": "timeout", "changed": True, "digest_before": digest(real),
                              "digest_after": digest('{"error": "timeout"}')}]


def test_a_fault_that_changes_nothing_is_recorded_as_unchanged(memory_tracing: Tracing) -> None:
    provider, exporter = memory_tracing
    inj = ToolFaultInjector("independent", rate=1.0, kinds=("key_rename",), tracer_provider=provider)
    tool = inj.wrap(lambda: "Directory created.")
    assert tool() == "Directory created."  # plain text has no keys and no numbers to touch
    attrs = tool_spans(exporter)[0].attributes or {}
    assert attrs[A.FAULT_INJECTED] is True and attrs[A.FAULT_CHANGED] is False
    assert attrs[A.FAULT_DIGEST_BEFORE] == attrs[A.FAULT_DIGEST_AFTER]
    assert inj.fault_log[0]["changed"] is False


@pytest.mark.parametrize("flag", ["true", "1"])
def test_content_is_recorded_only_under_the_env_flag(memory_tracing: Tracing, monkeypatch: pytest.MonkeyPatch,
                                                     flag: str) -> None:
    provider, exporter = memory_tracing
    inj = ToolFaultInjector("independent", rate=1.0, kinds=("truncated",), tracer_provider=provider)
    tool = inj.wrap(get_order)
    tool(order_id=1)
    monkeypatch.setenv(A.CAPTURE_CONTENT_ENV, flag)
    shown = tool(order_id=2)
    off, on = (s.attributes or {} for s in tool_spans(exporter))
    for key in (A.GEN_AI_TOOL_CALL_ARGUMENTS, A.GEN_AI_TOOL_CALL_RESULT, A.ORIGINAL_TOOL_RESULT):
        assert key not in off
    assert not any("Lovelace" in str(v) or "ORD-0042" in str(v) for v in off.values())
    assert json.loads(on[A.GEN_AI_TOOL_CALL_ARGUMENTS]) == {"order_id": 2}
    assert json.loads(on[A.GEN_AI_TOOL_CALL_RESULT]) == shown
    assert json.loads(on[A.ORIGINAL_TOOL_RESULT]) == {**ORDER, "order_id": 2}


def test_object_methods_are_wrapped_on_a_real_bfcl_api(memory_tracing: Tracing) -> None:
    provider, exporter = memory_tracing
    bot = TradingBot()
    bot._load_scenario({})
    inj = ToolFaultInjector("none", tracer_provider=provider)
    tools = inj.wrap(bot)
    assert isinstance(tools, TradingBot)
    assert tools.get_order_details(order_id=12345)["id"] == 12345
    assert tools.get_stock_info("AAPL")["price"] == bot.get_stock_info("AAPL")["price"]
    # State lives on the real instance, so a grader inspecting it sees what the tools did.
    tools.authenticated = True
    assert bot.authenticated is True
    order = {"order_type": "Buy", "symbol": "AAPL", "price": 150.0, "amount": 10}
    placed = inj.call_tool("place_order", order, call_id="call_9")
    assert placed["order_id"] in bot.orders
    assert tools.market_status == bot.market_status  # plain attributes pass through unwrapped
    names = [s.name for s in tool_spans(exporter)]
    # ``bot.get_stock_info`` on the real instance made no span; private methods are never tools.
    assert names == [f"execute_tool {n}" for n in ("get_order_details", "get_stock_info", "place_order")]
    assert "_load_scenario" not in inj.tool_names and "place_order" in inj.tool_names
    assert (tool_spans(exporter)[-1].attributes or {})[A.GEN_AI_TOOL_CALL_ID] == "call_9"


def test_unknown_tool_name_is_a_clear_error() -> None:
    inj = ToolFaultInjector("none")
    inj.wrap({"get_order": get_order})
    with pytest.raises(LookupError, match="unknown tool 'get_ordr'.*get_order"):
        inj.call_tool("get_ordr", {"order_id": 1})


def test_tool_exceptions_propagate_with_an_error_span(memory_tracing: Tracing) -> None:
    provider, exporter = memory_tracing

    def mkdir(dir_name: str) -> dict[str, Any]:
        raise FileExistsError(f"{dir_name} exists")

    inj = ToolFaultInjector("independent", rate=1.0, tracer_provider=provider)
    with pytest.raises(FileExistsError):
        inj.wrap(mkdir)(dir_name="docs")
    [span] = tool_spans(exporter)
    attrs = span.attributes or {}
    assert span.status.status_code == StatusCode.ERROR
    assert attrs[A.ERROR_TYPE] == "FileExistsError"
    assert attrs[A.FAULT_INJECTED] is False and A.FAULT_SKIPPED in attrs
    assert [e.name for e in span.events] == ["exception"]
    assert inj.fault_log == [] and inj.calls == 1


def test_injector_failure_fails_open_on_a_self_referencing_result(memory_tracing: Tracing) -> None:
    provider, exporter = memory_tracing
    loop: dict[str, Any] = {}
    loop["parent"] = loop  # first key, so truncation keeps it and walks into the cycle
    loop.update(name="root", size=3)
    inj = ToolFaultInjector("independent", rate=1.0, kinds=("truncated",), tracer_provider=provider)
    shown = inj.wrap(lambda: loop)()
    assert shown is loop
    [span] = tool_spans(exporter)
    [event] = [e for e in span.events if e.name == A.EVENT_INJECTOR_SKIP]
    assert "RecursionError" in str((event.attributes or {})[A.SKIP_REASON])
    attrs = span.attributes or {}
    assert attrs[A.FAULT_INJECTED] is False and A.FAULT_SKIPPED in attrs
    assert inj.fault_log == []


def test_injector_failure_fails_open_on_an_unprintable_result(memory_tracing: Tracing) -> None:
    provider, exporter = memory_tracing

    class Handle:
        def __str__(self) -> str:
            raise RuntimeError("handle closed")

    handle = Handle()
    inj = ToolFaultInjector("independent", rate=1.0, kinds=("timeout",), tracer_provider=provider)
    assert inj.wrap(lambda: handle)() is handle
    [span] = tool_spans(exporter)
    assert any(e.name == A.EVENT_INJECTOR_SKIP for e in span.events)
    assert span.status.status_code != StatusCode.ERROR


def _episode_results(condition: str, seed: int, key: str,
                     calls: int = 200) -> tuple[list[Any], list[dict[str, Any]]]:
    inj = ToolFaultInjector(condition, seed=seed, episode_key=key, tracer_provider=UNTRACED)
    tool = inj.wrap(get_order)
    return [tool(order_id=i) for i in range(calls)], inj.fault_log


@pytest.mark.parametrize("condition", ["independent", "bursty", "persistent"])
def test_equal_seeds_give_identical_fault_logs_and_results(condition: str) -> None:
    a = _episode_results(condition, 3, "task-1")
    b = _episode_results(condition, 3, "task-1")
    assert a == b and a[1], "same seed must reproduce the same firings and rewrites"
    assert _episode_results(condition, 3, "task-2")[1] != a[1]
    assert _episode_results(condition, 4, "task-1")[1] != a[1]


def test_rate_one_faults_every_call_and_rate_zero_none() -> None:
    results, log = _episode_results("independent", 0, "x")
    assert 0 < len(log) < 200
    always = ToolFaultInjector("independent", rate=1.0, tracer_provider=UNTRACED)
    never = ToolFaultInjector("independent", rate=0.0, tracer_provider=UNTRACED)
    for i in range(20):
        always.wrap_function(get_order)(order_id=i)
        never.wrap_function(get_order)(order_id=i)
    assert [r["step"] for r in always.fault_log] == list(range(20))
    assert never.fault_log == []


@pytest.mark.parametrize("kind", ["timeout", "rate_limit", "empty", "malformed_json", "truncated",
                                  "key_rename", "wrong_value"])
def test_once_condition_faults_one_early_call_and_shows_the_rest_unchanged(memory_tracing: Tracing,
                                                                          kind: str) -> None:
    provider, exporter = memory_tracing
    inj = ToolFaultInjector(f"once_{kind}", seed=11, episode_key="t", tracer_provider=provider)
    tool = inj.wrap(get_order)
    shown = [tool(order_id=i) for i in range(8)]
    [record] = inj.fault_log
    step = record["step"]
    assert 0 <= step <= 3 and record["kind"] == kind and record["changed"]
    assert [r for i, r in enumerate(shown) if i != step] == [{**ORDER, "order_id": i} for i in range(8) if i != step]
    assert shown[step] != {**ORDER, "order_id": step}
    spans = tool_spans(exporter)
    assert [(s.attributes or {})[A.FAULT_INJECTED] for s in spans] == [i == step for i in range(8)]
    assert (spans[step].attributes or {})[A.FAULT_TYPE] == kind
    assert all((s.attributes or {})[A.FAULT_STRATEGY] == f"once_{kind}" for s in spans)
    again = ToolFaultInjector(f"once_{kind}", seed=11, episode_key="t", tracer_provider=provider)
    assert [again.wrap(get_order)(order_id=i) for i in range(8)] == shown and again.fault_log == inj.fault_log


def test_once_condition_comes_from_the_episode(memory_tracing: Tracing) -> None:
    provider, _ = memory_tracing
    with episode("t", plan="once_truncated", seed=4, tracer_provider=provider) as ep:
        inj = ToolFaultInjector(tracer_provider=provider)
        assert (inj.condition, ep.condition) == ("once_truncated", "once_truncated")
        tool = inj.wrap(get_order)
        for i in range(6):
            tool(order_id=i)
    assert [r.fault_type for r in ep.fault_log if r.target == "tool_result"] == ["truncated"]


def test_persistent_key_rename_holds_across_calls(memory_tracing: Tracing) -> None:
    provider, exporter = memory_tracing
    inj = ToolFaultInjector("persistent", seed=2, episode_key="t", tracer_provider=provider)
    tool = inj.wrap(get_order)
    shown = [tool(order_id=i) for i in range(10)]
    start = inj.schedule.persistent_start
    assert start is not None and 1 <= start <= 5
    assert shown[:start] == [{**ORDER, "order_id": i} for i in range(start)]
    renamed = shown[start:]
    assert all(list(r) == list(renamed[0]) for r in renamed) and set(renamed[0]).isdisjoint(ORDER)
    assert [r[inj.state.renames["order_id"]] for r in renamed] == [str(i) for i in range(start, 10)]
    spans = tool_spans(exporter)
    assert [(s.attributes or {})[A.FAULT_INJECTED] for s in spans] == [False] * start + [True] * (10 - start)
    assert all((s.attributes or {})[A.TOOL_RESULT_NUMERIC_STRINGS] >= 3 for s in spans[start:])
    assert all((s.attributes or {})[A.FAULT_STRATEGY] == "persistent" for s in spans)


def test_async_tools_are_wrapped(memory_tracing: Tracing) -> None:
    provider, exporter = memory_tracing

    async def get_balance(account_id: str) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"account_id": account_id, "balance": 1023.5, "as_of": "2024-03-15"}

    inj = ToolFaultInjector("independent", rate=1.0, kinds=("rate_limit",), tracer_provider=provider)
    tool = inj.wrap(get_balance)

    async def main() -> tuple[Any, Any]:
        return await tool("ACC-1"), await inj.acall_tool("get_balance", {"account_id": "ACC-2"}, call_id="c2")

    first, second = asyncio.run(main())
    assert first == second == {"error": "rate_limit", "status": 429}
    spans = tool_spans(exporter)
    assert [s.name for s in spans] == ["execute_tool get_balance"] * 2
    assert (spans[1].attributes or {})[A.GEN_AI_TOOL_CALL_ID] == "c2"
    with pytest.raises(TypeError, match="acall_tool"):
        inj.call_tool("get_balance", {"account_id": "x"})


def test_episode_supplies_seed_key_condition_and_step_numbers(memory_tracing: Tracing) -> None:
    provider, exporter = memory_tracing
    with episode("task-7", seed=5, condition="independent", tracer_provider=provider) as ep:
        inj = ToolFaultInjector.for_current_episode(rate=1.0, tracer_provider=provider)
        assert ToolFaultInjector.for_current_episode() is inj
        assert (inj.condition, inj.seed, inj.episode_key) == ("independent", 5, "task-7")
        tool = inj.wrap(get_order)
        for i in range(4):
            tool(order_id=i)
    spans = tool_spans(exporter)
    [root] = [s for s in exporter.get_finished_spans() if s.name.startswith(A.OP_INVOKE_AGENT)]
    assert [(s.attributes or {})[A.STEP] for s in spans] == [0, 1, 2, 3]
    assert all((s.attributes or {})[A.TASK_ID] == "task-7" for s in spans)
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id for s in spans)
    assert [r["episode_step"] for r in inj.fault_log] == [0, 1, 2, 3]
    tool_records = [r for r in ep.fault_log if r.target == "tool_result"]
    assert [r.fault_type for r in tool_records] == [r["kind"] for r in inj.fault_log]
    # Outside an episode: a fresh injector with no faults.
    assert ToolFaultInjector.for_current_episode().condition == "none"


def test_plan_tool_condition_wins_over_the_episode_condition(tmp_path: Path, memory_tracing: Tracing) -> None:
    provider, _ = memory_tracing
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text('name = "tool-drift"\ntool_condition = "persistent"\n')
    with episode("t", plan=load_plan_file(plan_file), seed=1, condition="bursty", tracer_provider=provider):
        assert ToolFaultInjector().condition == "persistent"
    with episode("t", seed=1, condition="llm_error_single", tracer_provider=provider):
        assert ToolFaultInjector().condition == "none"  # not a tool condition: no tool faults


def test_reference_agent_end_to_end_interleaves_chat_and_tool_steps(memory_tracing: Tracing) -> None:
    provider, exporter = memory_tracing
    task = reference_tasks(1, seed=3, min_subtasks=3, max_subtasks=3)[0]
    with SimulatedModelServer(ReferencePolicy(), seed=0) as server:
        transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
        with openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0,
                           http_client=httpx2.Client(transport=transport)) as client, \
                episode(task.task_id, seed=0, condition="independent", tracer_provider=provider):
            inj = ToolFaultInjector.for_current_episode(rate=1.0, kinds=("timeout",),
                                                        tracer_provider=provider)
            run = run_reference_agent(client, task, model="sim-reference", tools=inj.wrap(REFERENCE_TOOLS),
                                      max_steps=12)
    spans = [s for s in exporter.get_finished_spans() if A.STEP in (s.attributes or {})]
    steps = sorted((s.attributes or {})[A.STEP] for s in spans)
    assert steps == list(range(len(spans)))
    kinds = {s.name.split(" ")[0] for s in spans}
    assert kinds == {"chat", "execute_tool"}
    tools = tool_spans(exporter)
    assert tools and all((s.attributes or {})[A.FAULT_TYPE] == "timeout" for s in tools)
    assert all(entry.result == '{"error": "timeout"}' for entry in run.tool_log if entry.executed)


def test_a_result_that_is_not_data_is_passed_through_with_the_reason(memory_tracing: Tracing) -> None:
    provider, exporter = memory_tracing
    rows = iter([{"id": 1}, {"id": 2}])
    inj = ToolFaultInjector("independent", rate=1.0, kinds=("wrong_value",), tracer_provider=provider)
    assert inj.wrap(lambda: rows)() is rows
    attrs = tool_spans(exporter)[0].attributes or {}
    assert attrs[A.FAULT_INJECTED] is False
    assert "wrong_value not applicable" in str(attrs[A.FAULT_SKIPPED])
    assert inj.fault_log == []


def test_async_callable_objects_are_recognised(memory_tracing: Tracing) -> None:
    provider, exporter = memory_tracing

    class Search:
        __name__ = "web_search"

        async def __call__(self, query: str) -> dict[str, Any]:
            return {"results": [{"title": query, "rank": 1}]}

    inj = ToolFaultInjector("none", tracer_provider=provider)
    tool = inj.wrap({"web_search": Search()})["web_search"]
    assert asyncio.run(tool(query="otel")) == {"results": [{"title": "otel", "rank": 1}]}
    assert [s.name for s in tool_spans(exporter)] == ["execute_tool web_search"]


def test_faults_round_trip_through_the_duckdb_store(tmp_path: Path) -> None:
    db = tmp_path / "traces.duckdb"
    provider = TracerProvider()
    provider.add_span_processor(EpisodeSpanProcessor())
    provider.add_span_processor(SimpleSpanProcessor(DuckDBSpanExporter(db)))
    with episode("bfcl-12", seed=2, condition="independent", agent_name="bfcl", tracer_provider=provider):
        inj = ToolFaultInjector.for_current_episode(rate=0.5, tracer_provider=provider)
        tool = inj.wrap(get_order)
        for i in range(12):
            tool(order_id=i)
    provider.shutdown()
    logged = [(r["episode_step"], r["kind"]) for r in inj.fault_log if r["changed"]]
    assert logged, "rate 0.5 over 12 calls fires for this seed"
    [ep] = load_episodes(db, blind=False)
    stored = [(f.step, f.fault_type, f.target) for f in ep.faults()]
    assert stored == [(s, k, "tool_result") for s, k in logged]
    assert [s.kind for s in ep.steps] == ["tool"] * 12
    [blind] = load_episodes(db, blind=True)
    assert not any(A.is_ground_truth(k) for s in blind.steps for k in s.attributes)
    assert all(A.TOOL_RESULT_DIGEST in s.attributes for s in blind.steps)


def test_concurrent_episodes_keep_their_own_injector_and_schedule(memory_tracing: Tracing) -> None:
    provider, exporter = memory_tracing

    async def one(i: int) -> list[dict[str, Any]]:
        async with episode(f"task-{i}", seed=i, condition="bursty", tracer_provider=provider):
            inj = ToolFaultInjector.for_current_episode(tracer_provider=provider)
            tool = inj.wrap(get_order)
            for j in range(40):
                tool(order_id=j)
                await asyncio.sleep(0)
            return inj.fault_log

    async def main() -> list[list[dict[str, Any]]]:
        return await asyncio.gather(*(one(i) for i in range(12)))

    logs = asyncio.run(main())
    for i, log in enumerate(logs):
        alone = _episode_results("bursty", i, f"task-{i}", calls=40)[1]
        assert [(r["step"], r["kind"], r["digest_after"]) for r in log] == [
            (r["step"], r["kind"], r["digest_after"]) for r in alone]
        assert [r["episode_step"] for r in log] == [r["step"] for r in log]
    spans = tool_spans(exporter)
    by_task: dict[str, list[int]] = {}
    for s in spans:
        by_task.setdefault(str((s.attributes or {})[A.TASK_ID]), []).append((s.attributes or {})[A.STEP])
    assert all(sorted(steps) == list(range(40)) for steps in by_task.values()) and len(by_task) == 12
    assert any(logs), "bursty over 12 x 40 calls fires somewhere"


def test_threads_sharing_one_injector_get_distinct_steps() -> None:
    inj = ToolFaultInjector("independent", rate=0.5, seed=1, tracer_provider=UNTRACED)
    tool = inj.wrap(get_order)
    threads = [threading.Thread(target=lambda: [tool(order_id=k) for k in range(50)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert inj.calls == 200
    steps = [r["step"] for r in inj.fault_log]
    assert len(steps) == len(set(steps)) and 60 < len(steps) < 140


@pytest.mark.parametrize("kind", ["truncated", "key_rename", "wrong_value"])
def test_faults_never_touch_the_tools_internal_state(kind: str) -> None:
    bot = TradingBot()
    bot._load_scenario({"authenticated": True, "watch_list": ["NVDA", "AAPL", "GOOG", "MSFT"]})
    before = list(bot.watch_list)
    inj = ToolFaultInjector("independent", rate=1.0, kinds=(kind,), tracer_provider=UNTRACED)
    shown = inj.wrap(bot).get_watchlist()  # BFCL hands out its own list object
    assert shown != {"watchlist": before}
    assert bot.watch_list == before


def test_a_module_of_tool_functions_is_wrapped(memory_tracing: Tracing) -> None:
    provider, exporter = memory_tracing
    module = importlib.import_module("agentchaos_otel.sim.reference_tasks")

    inj = ToolFaultInjector("none", tracer_provider=provider)
    tools = inj.wrap(module)
    assert tools.get_population(city="Lisbon") == module.get_population(city="Lisbon")
    assert tools.CITIES == module.CITIES
    assert [s.name for s in tool_spans(exporter)] == ["execute_tool get_population"]
    assert set(module.REFERENCE_TOOLS) <= set(inj.tool_names)


def test_process_wide_plan_applies_outside_episodes(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text('name = "drift"\ntool_condition = "bursty"\n')
    binding.set_process_default(binding.EpisodeState(task_id=None, plan=load_plan_file(plan_file), seed=9))
    try:
        inj = ToolFaultInjector()
        assert (inj.condition, inj.seed, inj.episode_key) == ("bursty", 9, "")
        assert ToolFaultInjector("none").condition == "none"  # an explicit condition wins
    finally:
        binding.set_process_default(None)
    assert ToolFaultInjector().condition == "none"


def test_bad_condition_and_non_callable_tools_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown tool condition 'sometimes'"):
        ToolFaultInjector("sometimes")
    with pytest.raises(TypeError):
        ToolFaultInjector("none").wrap(TradingBot)
    assert ToolFaultInjector("none").wrap({"version": "1.0"}) == {"version": "1.0"}
