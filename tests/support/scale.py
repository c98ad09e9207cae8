"""A small trace store with the shapes chunked loading must keep apart, for the scale-out tests.

SIMULATED episodes (``benchmarks.corpora.synthetic``) through the real exporter, plus traces the views
treat specially: one with two agent roots (two episodes, one trace), one with no agent root (a
foreign LLM span alone), and one whose spans were exported in separate batches far apart in the
file.
"""

from __future__ import annotations

from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agentchaos_otel import attributes as A
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from benchmarks.corpora import synthetic
from benchmarks.corpora.spans import write_episodes


def odd_traces(path: Path) -> None:
    """Append the special traces to ``path`` through the OTel SDK and the DuckDB exporter."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(DuckDBSpanExporter(path)))
    tracer = provider.get_tracer("scale-test")
    t = 5_000_000_000
    # Two agent roots in one trace: a parent span that is never exported makes both roots.
    outer = tracer.start_span("not exported", start_time=t)
    ctx = trace.set_span_in_context(outer)
    for i in range(2):
        root = tracer.start_span(A.agent_span_name("twin"), context=ctx, start_time=t + i * 10**9, attributes={
            A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT, A.GEN_AI_AGENT_NAME: "twin", A.TASK_ID: f"twin-{i}",
            A.EPISODE_SUCCESS: False, A.CONDITION: "none"})
        rctx = trace.set_span_in_context(root)
        tracer.start_span("chat m", context=rctx, start_time=t + i * 10**9 + 1, attributes={
            A.GEN_AI_OPERATION_NAME: "chat", A.RESPONSE_CONTENT_LENGTH: 0,
            A.GEN_AI_RESPONSE_FINISH_REASONS: ["length"]}).end(end_time=t + i * 10**9 + 5)
        root.end(end_time=t + i * 10**9 + 10)
    # A foreign trace with one LLM span and no agent root.
    tracer.start_span("ChatCompletion", start_time=t + 7, attributes={
        A.OI_SPAN_KIND: "LLM", A.OI_LLM_MODEL_NAME: "gpt-x"}).end(end_time=t + 9)
    provider.shutdown()


def scale_store(path: Path, *, tasks: int = 1) -> Path:
    """SIMULATED episodes over every configuration, then the special traces, then more episodes."""
    eps = synthetic.make_corpus(tasks, 1, heldout=True)
    half = len(eps) // 2
    write_episodes(eps[:half], path)
    odd_traces(path)
    write_episodes(eps[half:], path)
    return path
