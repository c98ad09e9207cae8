"""Nested tools: a tool called from inside another tool (an agent used as a tool) is a step of its own.

Both the enclosing tool and the one inside it are steps, numbered in the order they started;
neither takes the other's number, and the enclosing tool stays in ``steps``. The numbering a live
analysis computes (``store.read.live_steps``: ``step_from_span`` then ``in_start_order``, what the
live diagnoser uses) equals the stored ``steps`` view's, including for a framework's span whose
attributes say it is a tool only when it ends (OpenInference sets them late), which the
processor cannot number when it starts.

Real OTel SDK, the real openai SDK through the injecting transport against the loopback
simulated model (SIMULATED answers), our tool injector (``wrap_tools``), real DuckDB files.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import httpx2
import openai
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import END_HOOKS, episode
from agentchaos_otel.inject.transport import ChaosTransport
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.store.read.episodes import load_episodes
from agentchaos_otel.store.read.live_steps import in_start_order, step_from_span
from agentchaos_otel.trace.processors import EpisodeSpanProcessor
from diagnosers.live import LiveDiagnosisProcessor
from diagnosers.rules import RuleDiagnoser

pytestmark = pytest.mark.coexist

# Start order of what the agent below does, by (kind, name).
EXPECTED = [("llm", "chat sim-core-test"),            # the agent asks the model
            ("tool", "execute_tool research"),        # an agent used as a tool (ours, wrap_tools) ...
            ("llm", "chat sim-core-test"),            # ... asks the model itself ...
            ("tool", "execute_tool lookup"),          # ... and calls a tool from inside
            ("tool", "weather_agent"),                # a framework's agent-as-tool, a TOOL only at its end ...
            ("llm", "chat sim-core-test"),            # ... the third call: the fault fires here
            ("tool", "execute_tool lookup")]          # ... and the framework's own tool span inside it


@pytest.fixture
def tracing() -> Iterator[tuple[TracerProvider, InMemorySpanExporter, LiveDiagnosisProcessor]]:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    live = LiveDiagnosisProcessor()
    provider.add_span_processor(EpisodeSpanProcessor())
    provider.add_span_processor(live)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    END_HOOKS.append(live.on_episode_end)
    yield provider, exporter, live
    END_HOOKS.remove(live.on_episode_end)
    provider.shutdown()


def _run_agent(provider: TracerProvider, base_url: str) -> None:
    theirs = provider.get_tracer("framework.tracing")
    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
    with openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0,
                       http_client=httpx2.Client(transport=transport)) as client:
        def ask(i: int) -> None:
            client.chat.completions.create(model="sim-core-test",
                                           messages=[{"role": "user", "content": f"TEXT question {i}"}])

        with episode("nested", plan="llm_error_pos_late", seed=1, tracer_provider=provider) as ep:
            def lookup(city: str) -> dict[str, str]:
                return {"city": city, "sky": "sunny"}

            def research(topic: str) -> Any:
                ask(2)
                return tools["lookup"](city=topic)

            tools = ep.wrap_tools({"lookup": lookup, "research": research})
            ask(1)
            tools["research"](topic="Paris")
            outer = theirs.start_span("weather_agent")  # its kind comes with its last attributes
            with trace.use_span(outer, end_on_exit=False):
                ask(3)
                with theirs.start_as_current_span("execute_tool lookup", attributes={
                        A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: "lookup"}):
                    lookup("Rome")
            outer.set_attributes({A.OI_SPAN_KIND: A.OI_KIND_TOOL, A.OI_TOOL_NAME: "weather_agent"})
            outer.end()
            ep.set_outcome(False)


def _q(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_nested_tools_are_steps_in_start_order_live_and_stored(tracing: Any, mode_server: Any,
                                                               tmp_path: Path) -> None:
    provider, exporter, _ = tracing
    _run_agent(provider, mode_server.base_url)
    spans = exporter.get_finished_spans()
    db = tmp_path / "nested.duckdb"
    DuckDBSpanExporter(str(db)).export(list(spans))

    stored = _q(db, "SELECT step, kind, name, span_id FROM steps ORDER BY step")
    assert [(k, n) for _, k, n, _ in stored] == EXPECTED
    assert [s for s, *_ in stored] == list(range(len(EXPECTED))), "unique, dense, in start order"
    assert _q(db, "SELECT count(*) FROM tool_calls") == [(4,)], "the enclosing tools stay tool calls"
    assert _q(db, "SELECT n_steps, n_llm_calls, n_tool_calls FROM episodes") == [(7, 3, 4)]
    assert not any(A.STEP_WRAPPER_SPAN_ID in s.attributes or A.STEP_WRAPPED_ATTEMPTS in s.attributes
                   for s in spans), "a tool inside a tool is not the same call seen twice"
    at_start = {format(s.context.span_id, "016x"): s.attributes.get(A.STEP) for s in spans}
    assert at_start[stored[4][3]] is None, "the late-classified span could not be numbered at its start"

    # live: the records a live analysis makes from the same spans, in the order they ended
    records = []
    for span in sorted(spans, key=lambda s: s.end_time):
        record = step_from_span(span, len(records))
        if record is not None:
            records.append(record)
    live = [(r.step, r.span_id) for r in in_start_order(records)]
    assert live == [(s, span_id) for s, _, _, span_id in stored]

    (truth,) = _q(db, "SELECT fault_type, step FROM injected_faults WHERE changed")
    assert truth == ("error", 5)
    root = next(s for s in spans if s.attributes.get(A.EPISODE_ROOT))
    (event,) = [e for e in root.events if e.name == A.EVENT_DIAGNOSIS]
    (stored_episode,) = load_episodes(db)
    later = RuleDiagnoser().diagnose(stored_episode.blind())
    assert (event.attributes[A.DIAGNOSIS_STEP], later.step) == (truth[1], truth[1]), \
        "the live verdict names the step the stored one does"
    assert event.attributes[A.DIAGNOSIS_TYPE] == later.fault_type == truth[0]


def test_a_framework_tool_inside_a_framework_tool_is_two_steps(tracing: Any, tmp_path: Path) -> None:
    """Google ADK's AgentTool shape, all spans the framework's, attributes set after start."""
    provider, exporter, _ = tracing
    theirs = provider.get_tracer("gcp.vertex.agent")
    with episode("adk", tracer_provider=provider):
        with theirs.start_as_current_span("execute_tool research_agent") as outer:
            with theirs.start_as_current_span("invoke_agent research_agent"):
                with theirs.start_as_current_span("execute_tool lookup") as inner:
                    inner.set_attributes({A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: "lookup"})
            outer.set_attributes({A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: "research_agent"})
    spans = exporter.get_finished_spans()
    numbered = {s.name: s.attributes.get(A.STEP) for s in spans}
    assert numbered["execute_tool research_agent"] == 0 and numbered["execute_tool lookup"] == 1
    db = tmp_path / "adk.duckdb"
    DuckDBSpanExporter(str(db)).export(list(spans))
    assert _q(db, "SELECT step, name FROM steps ORDER BY step") == [
        (0, "execute_tool research_agent"), (1, "execute_tool lookup")]
