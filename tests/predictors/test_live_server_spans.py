"""The live predictor scores the steps the store holds: an in-process MCP server's span is none.

``LivePredictorProcessor`` reads each span's kind, as the store's ``steps`` view does, so the
SERVER span an in-process MCP server writes under the agent's client span of the same call does
not add a step (or a score) live that the offline score would not have.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opentelemetry.trace import SpanKind

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import Episode
from agentchaos_otel.store.read.episodes import load_episodes
from tests.predictors.test_live import error_count_predictor, pipeline_factory  # noqa: F401

TOOL_CALL = {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: "lookup",
             A.MCP_METHOD_NAME: "tools/call"}


def test_an_mcp_server_span_adds_no_live_step(tmp_path: Path, pipeline_factory: Any) -> None:  # noqa: F811
    db = tmp_path / "t.duckdb"
    pipe = pipeline_factory(error_count_predictor(), db)
    with Episode("t0", seed=0, condition="none", tracer_provider=pipe.provider, simulated=True) as run:
        for _ in range(2):
            with pipe.tracer.start_as_current_span("tools/call lookup", kind=SpanKind.CLIENT, attributes=TOOL_CALL), \
                    pipe.tracer.start_as_current_span("tools/call lookup", kind=SpanKind.SERVER,
                                                      attributes=TOOL_CALL):
                pass
        run.set_outcome(success=True)
    tid = format(run.span.get_span_context().trace_id, "032x")
    pipe.provider.force_flush()
    (stored,) = load_episodes(db)
    assert len(stored.steps) == 2
    assert [step for step, _ in pipe.live.history(tid)] == [s.step for s in stored.steps]
    assert [score for _, score in pipe.live.history(tid)] == error_count_predictor().score_prefixes(stored)
    server = [s for s in pipe.spans("tools/call") if s.kind == SpanKind.SERVER]
    assert len(server) == 2 and not any(A.PREDICTOR_SCORE in (s.attributes or {}) for s in server)
