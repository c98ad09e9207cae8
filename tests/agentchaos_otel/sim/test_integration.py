"""The reference agent under the real injectors: every catalog fault and every tool condition.

The claim the simulated agent exists for is that faults change outcomes without crashing the
agent; here the actual fault-injecting transport and tool-result injector sit between it and the
simulated model, with a real OTel SDK recording the spans.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.faults.catalog import CATALOG, fault_names
from agentchaos_otel.inject.tools import ToolFaultInjector
from agentchaos_otel.inject.transport import ChaosTransport
from agentchaos_otel.plans.plan import from_fault_names
from agentchaos_otel.sim.reference_agent import AgentRun, ReferencePolicy, run_reference_agent
from agentchaos_otel.sim.reference_tasks import REFERENCE_TOOLS, RefTask, reference_tasks
from agentchaos_otel.sim.server import SimulatedModelServer

MODEL = "sim-reference"
TASK = reference_tasks(1, seed=5, min_subtasks=2, max_subtasks=2)[0]


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatedModelServer]:
    with SimulatedModelServer(ReferencePolicy(retry_on_error=0.5, give_up_rate=0.1), seed=3) as srv:
        yield srv


@pytest.fixture
def tracing(memory_tracing: tuple[TracerProvider, InMemorySpanExporter]) -> tuple[TracerProvider, InMemorySpanExporter]:
    return memory_tracing  # the shared fixture in conftest.py


@pytest.fixture
def client(server: SimulatedModelServer, tracing: Any) -> Iterator[openai.OpenAI]:
    """One client for many episodes: the transport keeps no state; episodes bind via contextvars."""
    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=tracing[0])
    with openai.OpenAI(base_url=server.base_url, api_key="sk-simulated", max_retries=0,
                       http_client=httpx2.Client(transport=transport)) as c:
        yield c


def _faulted_run(client: openai.OpenAI, provider: TracerProvider, name: str, task: RefTask,
                 tools: dict[str, Any] | None = None) -> AgentRun:
    plan = from_fault_names([name]).with_overrides(delay_scale=0.0) if name != "none" else None
    stream = CATALOG[name].target == "stream" if name in CATALOG else False
    with episode(task.task_id, plan=plan, seed=1, tracer_provider=provider, agent_name="reference",
                 simulated=True) as ep:
        run = run_reference_agent(client, task, model=MODEL, tools=tools, stream=stream, max_steps=12)
        ep.set_outcome(run.success, run.error)
    return run


def test_every_catalog_fault_leaves_the_agent_standing(client: openai.OpenAI, tracing: Any) -> None:
    provider, exporter = tracing
    outcomes: dict[str, bool] = {}
    for name in ["none", *fault_names()]:
        exporter.clear()
        run = _faulted_run(client, provider, name, TASK)  # raising here is the failure being tested
        outcomes[name] = run.success
        spans = exporter.get_finished_spans()
        llm = [s for s in spans if s.name.startswith("chat ")]
        assert len(llm) == run.llm_calls, name
        assert all(s.attributes.get(A.TASK_ID) == TASK.task_id for s in llm)
        if name == "none":
            continue
        if any(s.attributes.get(A.FAULT_INJECTED) and s.attributes.get(A.FAULT_CHANGED) for s in llm):
            assert run.error is not None or run.final_text is not None
    assert outcomes["none"] is True
    failed = {n for n, ok in outcomes.items() if not ok}
    # Faults must bite: errors replacing the answer, connection failures and empty streams.
    assert {"llm_error_persistent", "http_500", "http_connect_error", "compound_proxy_html"} <= failed
    assert 0.2 < len(failed) / len(outcomes) < 0.95


@pytest.mark.parametrize("condition", ["none", "independent", "bursty", "persistent"])
def test_tool_conditions_run_and_emit_tool_spans(client: openai.OpenAI, tracing: Any, condition: str) -> None:
    provider, exporter = tracing
    tasks = reference_tasks(4, seed=11, min_subtasks=6, max_subtasks=9)
    results = []
    for task in tasks:
        exporter.clear()
        injector = ToolFaultInjector(condition, seed=2, episode_key=task.task_id, rate=0.5 if condition ==
                                     "independent" else 0.16, tracer_provider=provider)
        run = _faulted_run(client, provider, "none", task, tools=injector.wrap(dict(REFERENCE_TOOLS)))
        tool_spans = [s for s in exporter.get_finished_spans() if s.name.startswith("execute_tool ")]
        assert len(tool_spans) == sum(1 for e in run.tool_log if e.executed or e.result.startswith("Error: "))
        assert len(tool_spans) >= 1
        results.append((run, tool_spans))
    if condition == "none":
        assert all(run.success for run, _ in results)
        assert not any(s.attributes.get(A.FAULT_INJECTED) for _, spans in results for s in spans)
    if condition == "independent":
        assert any(s.attributes.get(A.FAULT_INJECTED) for _, spans in results for s in spans)
        assert not all(run.success for run, _ in results)


def test_configured_process_stores_reference_episodes_in_duckdb(server: SimulatedModelServer,
                                                                 tmp_path: Any) -> None:
    """configure() instruments every client; the stored episodes must mirror what the agent did."""
    import agentchaos_otel
    from agentchaos_otel.store.read.episodes import load_episodes

    db = tmp_path / "traces.duckdb"
    provider = TracerProvider()
    handle = agentchaos_otel.configure(db=db, tracer_provider=provider)
    tasks = reference_tasks(3, seed=13, min_subtasks=3, max_subtasks=5)
    plans = [None, "llm_error_single", "http_500"]
    runs = []
    try:
        with openai.OpenAI(base_url=server.base_url, api_key="sk-simulated", max_retries=0) as client:
            for task, plan in zip(tasks, plans, strict=True):
                with agentchaos_otel.episode(task.task_id, plan=plan, seed=0, agent_name="reference",
                                             condition=plan or "clean", simulated=True,
                                             tracer_provider=provider) as ep:
                    tools = ToolFaultInjector("none", tracer_provider=provider).wrap(dict(REFERENCE_TOOLS))
                    run = run_reference_agent(client, task, model=MODEL, tools=tools)
                    ep.set_outcome(run.success, run.error)
                runs.append(run)
    finally:
        handle.shutdown()
        provider.shutdown()
    episodes = {e.task_id: e for e in load_episodes(db, blind=False)}
    assert set(episodes) == {t.task_id for t in tasks}
    for task, run, plan in zip(tasks, runs, plans, strict=True):
        ep = episodes[task.task_id]
        assert ep.success == run.success
        assert len(ep.llm_steps) == run.llm_calls
        assert len(ep.tool_steps) == len(run.tool_log)
        assert [s.step for s in ep.steps] == list(range(len(ep.steps)))
        assert ep.triggered == (plan is not None)
    assert runs[0].success and not runs[1].success and not runs[2].success
