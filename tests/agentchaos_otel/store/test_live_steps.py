"""Live analysis counts the steps the store's ``steps`` view counts, an in-process MCP server included.

An MCP server running in the agent's process writes a SERVER span with ``mcp.method.name`` (the
``mcp`` SDK 2.x marks it ``execute_tool``) under the agent's client span of the same call. The
view leaves it out by its stored span kind; ``step_from_span`` must read the kind too, or a live
verdict or score would see two steps where the store has one.
"""

from __future__ import annotations

from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import Episode
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.store.read.episodes import load_episodes
from agentchaos_otel.store.read.live_steps import span_step_kind, step_from_span
from agentchaos_otel.trace.processors import EpisodeSpanProcessor

TOOL_CALL = {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: "lookup",
             A.MCP_METHOD_NAME: "tools/call"}


def test_an_mcp_server_span_is_no_step_live_or_stored(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(EpisodeSpanProcessor())
    provider.add_span_processor(SimpleSpanProcessor(memory))
    provider.add_span_processor(SimpleSpanProcessor(DuckDBSpanExporter(str(db))))
    tracer = provider.get_tracer("test")
    with Episode("t0", seed=0, condition="none", tracer_provider=provider, simulated=True) as run:
        with tracer.start_as_current_span("tools/call lookup", kind=SpanKind.CLIENT, attributes=TOOL_CALL), \
                tracer.start_as_current_span("tools/call lookup", kind=SpanKind.SERVER, attributes=TOOL_CALL):
            pass
        run.set_outcome(success=True)
    provider.shutdown()

    spans = [s for s in memory.get_finished_spans() if s.name == "tools/call lookup"]
    assert {s.kind for s in spans} == {SpanKind.CLIENT, SpanKind.SERVER}
    live = [r for s in spans if (r := step_from_span(s, 0)) is not None]
    (stored,) = load_episodes(db)
    assert [(r.kind, r.span_id) for r in live] == [(s.kind, s.span_id) for s in stored.steps]
    assert len(live) == 1
    server = next(s for s in spans if s.kind == SpanKind.SERVER)
    assert span_step_kind(server.attributes) == "tool"  # by attributes alone it looks like a step
    assert span_step_kind(server.attributes, server.kind) is None
    assert span_step_kind(server.attributes, "SERVER") is None
