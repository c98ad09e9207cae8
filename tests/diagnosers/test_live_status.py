"""Live diagnosis words a failed root's status message as ``traces export`` does.

Trace lists (Jaeger's, Tempo's, Phoenix's) show a root's status message where they show no
attribute; the live processor puts the verdict in front of the episode's own error through
``trace.verdicts.root_status``, the one place that wording lives, and exporting the stored root
again does not repeat it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import END_HOOKS, Episode
from agentchaos_otel.trace import verdicts
from agentchaos_otel.trace.processors import EpisodeSpanProcessor
from diagnosers.live import LiveDiagnosisProcessor


@pytest.fixture
def pipeline() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    live = LiveDiagnosisProcessor()
    provider.add_span_processor(EpisodeSpanProcessor())
    provider.add_span_processor(live)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    END_HOOKS.append(live.on_episode_end)
    yield provider, exporter
    END_HOOKS.remove(live.on_episode_end)
    provider.shutdown()


def test_a_failed_root_status_leads_with_the_live_verdict(
        pipeline: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = pipeline
    tracer = provider.get_tracer("test")
    with Episode("t0", seed=0, condition="none", tracer_provider=provider, simulated=True) as run:
        tracer.start_span("chat m", attributes={A.GEN_AI_OPERATION_NAME: "chat"}).end()
        tool = tracer.start_span("execute_tool lookup", attributes={A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
                                                                    A.GEN_AI_TOOL_NAME: "lookup",
                                                                    A.ERROR_TYPE: "500"})
        tool.set_status(StatusCode.ERROR, "HTTP 500 from the tool")
        tool.end()
        run.set_outcome(success=False, error="gave up after the tool failed")
    (root,) = [s for s in exporter.get_finished_spans() if s.parent is None]
    verdict = {"fault_type": root.attributes[A.DIAGNOSIS_TYPE],
               "evidence": root.attributes[A.DIAGNOSIS_EVIDENCE],
               "step": root.attributes.get(A.DIAGNOSIS_STEP)}
    assert root.status.status_code == StatusCode.ERROR
    assert root.status.description == verdicts.root_status(verdict, "gave up after the tool failed")
    assert root.status.description.startswith(verdicts.verdict_line(verdict) + "; ")
    # exported again with the same verdict, the message keeps one copy of it
    assert verdicts.root_status(verdict, root.status.description) == root.status.description
