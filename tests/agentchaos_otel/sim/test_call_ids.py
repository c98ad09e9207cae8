"""The reference agent hands the model's tool-call ids to injector-wrapped tools, and only to them."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentchaos_otel import attributes as A
from agentchaos_otel.inject.tools import CALL_ID_KWARG, ToolFaultInjector
from agentchaos_otel.sim.reference_agent import AgentRun, run_reference_agent, run_reference_agent_async
from agentchaos_otel.sim.reference_policy import ReferencePolicy
from agentchaos_otel.sim.reference_tasks import REFERENCE_TOOLS, reference_tasks
from agentchaos_otel.sim.server import SimulatedModelServer

MODEL = "sim-reference"
TASK = reference_tasks(1, seed=11, min_subtasks=3, max_subtasks=3)[0]


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatedModelServer]:
    with SimulatedModelServer(ReferencePolicy(), seed=0) as srv:
        yield srv


@pytest.fixture
def tracing() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def _tool_spans(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    spans = [s for s in exporter.get_finished_spans()
             if (s.attributes or {}).get(A.GEN_AI_OPERATION_NAME) == A.OP_EXECUTE_TOOL]
    return sorted(spans, key=lambda s: s.start_time or 0)


def _model_call_ids(run: AgentRun) -> list[str]:
    """The ids the model gave its tool calls, in the order the agent received them."""
    return [str(call["id"]) for m in run.messages if m.get("role") == "assistant"
            for call in m.get("tool_calls") or []]


def _run(server: SimulatedModelServer, tools: dict[str, Callable[..., Any]]) -> AgentRun:
    with openai.OpenAI(base_url=server.base_url, api_key="sk-simulated", max_retries=0) as client:
        return run_reference_agent(client, TASK, model=MODEL, tools=tools, max_steps=12)


def test_wrapped_tools_label_their_spans_with_the_models_call_ids(
        server: SimulatedModelServer, tracing: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = tracing
    injector = ToolFaultInjector("none", seed=0, tracer_provider=provider)
    run = _run(server, injector.wrap(REFERENCE_TOOLS))
    assert run.success, run.final_text
    model_ids = _model_call_ids(run)
    assert len(model_ids) >= 3 and len(set(model_ids)) == len(model_ids)
    assert not any(i.startswith("call_local_") for i in model_ids)  # the server's ids, not fallbacks
    spans = _tool_spans(exporter)
    assert [(s.attributes or {}).get(A.GEN_AI_TOOL_CALL_ID) for s in spans] == model_ids
    assert [(s.attributes or {}).get(A.GEN_AI_TOOL_NAME) for s in spans] == [e.name for e in run.tool_log]


def test_call_ids_reach_faulted_spans_and_the_fault_log(
        server: SimulatedModelServer, tracing: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = tracing
    injector = ToolFaultInjector("independent", seed=0, rate=1.0, kinds=("timeout",),
                                 tracer_provider=provider)
    run = _run(server, injector.wrap(REFERENCE_TOOLS))
    ids = [(s.attributes or {}).get(A.GEN_AI_TOOL_CALL_ID) for s in _tool_spans(exporter)]
    assert ids and ids == _model_call_ids(run)
    assert [record["call_id"] for record in injector.fault_log] == ids


def test_async_agent_passes_call_ids_to_wrapped_async_tools(
        server: SimulatedModelServer, tracing: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = tracing

    def make_async(fn: Callable[..., Any]) -> Callable[..., Any]:
        async def tool(**kwargs: Any) -> Any:
            return fn(**kwargs)
        tool.__name__ = fn.__name__
        return tool

    injector = ToolFaultInjector("none", seed=0, tracer_provider=provider)
    tools = injector.wrap({name: make_async(fn) for name, fn in REFERENCE_TOOLS.items()})

    async def main() -> AgentRun:
        async with openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-simulated",
                                      max_retries=0) as client:
            return await run_reference_agent_async(client, TASK, model=MODEL, tools=tools, max_steps=12)

    run = asyncio.run(main())
    assert run.success, run.final_text
    ids = [(s.attributes or {}).get(A.GEN_AI_TOOL_CALL_ID) for s in _tool_spans(exporter)]
    assert ids and ids == _model_call_ids(run)


def test_plain_and_otherwise_decorated_tools_get_only_the_models_arguments(
        server: SimulatedModelServer) -> None:
    seen: list[dict[str, Any]] = []

    def recording(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)  # looks like the injector's wrappers from outside: same name, __wrapped__
        def tool(**kwargs: Any) -> Any:
            seen.append(dict(kwargs))
            return fn(**kwargs)
        return tool

    run = _run(server, {name: recording(fn) for name, fn in REFERENCE_TOOLS.items()})
    assert run.success, run.final_text
    assert seen and all(CALL_ID_KWARG not in kwargs for kwargs in seen)
    assert seen == [e.arguments for e in run.tool_log]
    # Strict signatures (REFERENCE_TOOLS itself) would reject an unknown keyword: the run succeeding
    # with every call executed shows nothing extra reached them either.
    strict = _run(server, dict(REFERENCE_TOOLS))
    assert strict.success and all(e.executed for e in strict.tool_log)


def test_a_decorator_over_an_injector_wrapper_is_not_mistaken_for_one(
        server: SimulatedModelServer, tracing: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    """Only the injector's own wrapper takes the id; an outer decorator's signature is unknown."""
    provider, exporter = tracing
    injector = ToolFaultInjector("none", seed=0, tracer_provider=provider)
    seen: list[dict[str, Any]] = []

    def outer(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def tool(**kwargs: Any) -> Any:
            seen.append(dict(kwargs))
            return fn(**kwargs)
        return tool

    tools = {name: outer(fn) for name, fn in injector.wrap(REFERENCE_TOOLS).items()}
    run = _run(server, tools)
    assert run.success and seen and all(CALL_ID_KWARG not in kwargs for kwargs in seen)
    spans = _tool_spans(exporter)
    assert spans and all(A.GEN_AI_TOOL_CALL_ID not in (s.attributes or {}) for s in spans)
