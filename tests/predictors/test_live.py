"""The live span processor on a real OTel SDK pipeline: agreement with offline scoring, alarms."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import Episode
from agentchaos_otel.records import EpisodeTrace, StepRecord
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.store.read.episodes import load_episodes
from agentchaos_otel.store.read.live_steps import span_step_kind
from agentchaos_otel.trace.processors import EpisodeSpanProcessor
from predictors.estimator import train
from predictors.features import EXTERNAL_FEATURES
from predictors.live import Alarm, LivePredictorProcessor
from predictors.model import FailurePredictor
from tests.predictors.test_synth import synthetic_corpus, synthetic_episode


def error_count_predictor(threshold: float = 0.5) -> FailurePredictor:
    """score = sigmoid(2 * tool_errors - 3): 0.05, 0.27, 0.73 after 0, 1, 2 errors."""
    n = len(EXTERNAL_FEATURES)
    coef = [2.0 if name == "tool_errors" else 0.0 for name in EXTERNAL_FEATURES]
    return FailurePredictor("external", EXTERNAL_FEATURES, [0.0] * n, [1.0] * n, coef, -3.0, threshold)


@pytest.fixture(scope="module")
def trained() -> FailurePredictor:
    predictor, _ = train(synthetic_corpus(40, 1), "both", seed=0)
    return predictor


class Pipeline:
    def __init__(self, predictor: FailurePredictor, db: Path | None = None) -> None:
        self.alarms: list[Alarm] = []
        self.provider = TracerProvider()
        self.exporter = InMemorySpanExporter()
        self.live = LivePredictorProcessor(predictor, on_alarm=self.alarms.append)
        self.provider.add_span_processor(EpisodeSpanProcessor())
        self.provider.add_span_processor(self.live)
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        if db is not None:
            self.provider.add_span_processor(BatchSpanProcessor(DuckDBSpanExporter(str(db))))
        self.tracer = self.provider.get_tracer("test")

    def replay(self, ep: EpisodeTrace, task_id: str | None = None) -> str:
        """Emit the episode's steps as real spans (step numbers come from the episode processor)."""
        with Episode(task_id or str(ep.task_id), seed=ep.seed or 0, condition=ep.condition,
                     tracer_provider=self.provider, simulated=True, agent_name="sim") as run:
            for s in sorted(ep.steps, key=lambda s: s.step):
                self.emit(s)
            run.set_outcome(success=bool(ep.success))
        return format(run.span.get_span_context().trace_id, "032x")

    def emit(self, s: StepRecord) -> None:
        attrs = {k: v for k, v in s.attributes.items() if k != A.STEP}
        span = self.tracer.start_span(s.name, attributes=attrs, start_time=s.start_ns)
        if s.status_code == "ERROR":
            span.set_status(Status(StatusCode.ERROR))
        span.end(end_time=s.end_ns)

    def spans(self, name_prefix: str) -> list[Any]:
        return [sp for sp in self.exporter.get_finished_spans() if sp.name.startswith(name_prefix)]


@pytest.fixture
def pipeline_factory() -> Iterator[Any]:
    made: list[Pipeline] = []

    def make(predictor: FailurePredictor, db: Path | None = None) -> Pipeline:
        made.append(Pipeline(predictor, db))
        return made[-1]

    yield make
    for p in made:
        p.provider.shutdown()


def test_live_scores_equal_offline_scores_through_the_store(tmp_path: Path, trained: FailurePredictor,
                                                             pipeline_factory: Any) -> None:
    db = tmp_path / "traces.duckdb"
    pipe = pipeline_factory(trained, db)
    episodes = [synthetic_episode(t, 0, c) for t in range(4) for c in ("independent", "bursty")]
    trace_ids = [pipe.replay(ep) for ep in episodes]
    pipe.provider.force_flush()
    stored = {e.trace_id: e for e in load_episodes(db)}
    assert set(stored) == set(trace_ids)
    for ep, tid in zip(episodes, trace_ids, strict=True):
        live = pipe.live.history(tid)
        offline = trained.score_prefixes(stored[tid])
        assert [step for step, _ in live] == [s.step for s in stored[tid].steps]
        assert [score for _, score in live] == offline                # bit-identical, not approximate
        # and the hand-built episode itself, before any span or store, scores the same
        assert trained.score_prefixes(ep) == offline


def test_each_step_span_carries_the_score_of_the_prefix_before_it(trained: FailurePredictor,
                                                                 pipeline_factory: Any) -> None:
    pipe = pipeline_factory(trained)
    tid = pipe.replay(synthetic_episode(7, 1, "bursty"))
    history = dict(pipe.live.history(tid))
    steps = sorted((sp for sp in pipe.exporter.get_finished_spans() if A.STEP in sp.attributes),
                   key=lambda sp: sp.attributes[A.STEP])
    assert A.PREDICTOR_SCORE not in steps[0].attributes       # nothing seen before the first step
    for sp in steps[1:]:
        prev = sp.attributes[A.PREDICTOR_STEP]
        assert prev == sp.attributes[A.STEP] - 1
        assert sp.attributes[A.PREDICTOR_SCORE] == history[prev]
    root = pipe.spans("invoke_agent")[0]
    assert root.attributes[A.PREDICTOR_SCORE] == history[max(history)]


def _errors_episode(n_errors: int, task: str = "t1") -> EpisodeTrace:
    steps = []
    for i in range(4):
        llm = {A.GEN_AI_OPERATION_NAME: A.OP_CHAT, A.RESPONSE_TOOL_CALL_COUNT: 1}
        tool = {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: "mkdir",
                A.TOOL_RESULT_IS_ERROR: i < n_errors}
        steps.append(StepRecord(2 * i, "", "llm", "chat m", 0, 10, attributes=llm))
        steps.append(StepRecord(2 * i + 1, "", "tool", "execute_tool mkdir", 10, 20, attributes=tool))
    return EpisodeTrace("x", task, tuple(steps), success=False)


def test_alarm_event_and_callback_fire_once_when_the_threshold_is_crossed(pipeline_factory: Any) -> None:
    pipe = pipeline_factory(error_count_predictor(0.5))
    tid = pipe.replay(_errors_episode(3), task_id="t-alarm")
    root = pipe.spans("invoke_agent")[0]
    events = [e for e in root.events if e.name == A.EVENT_FAILURE_PREDICTED]
    assert len(events) == 1
    assert events[0].attributes[A.PREDICTOR_STEP] == 3                 # second error is step 3
    assert events[0].attributes[A.PREDICTOR_SCORE] == pytest.approx(0.7310585786)
    assert events[0].attributes[A.PREDICTOR_THRESHOLD] == 0.5
    assert root.attributes[A.PREDICTOR_ALARM] is True
    assert pipe.alarms == [Alarm(tid, "t-alarm", 3, events[0].attributes[A.PREDICTOR_SCORE], 0.5)]
    flagged = [sp.attributes[A.STEP] for sp in pipe.spans("") if A.STEP in sp.attributes
               and sp.attributes.get(A.PREDICTOR_ALARM)]
    assert min(flagged) == 4                                          # the step after the crossing


def test_no_alarm_below_threshold(pipeline_factory: Any) -> None:
    pipe = pipeline_factory(error_count_predictor(0.5))
    pipe.replay(_errors_episode(1))
    root = pipe.spans("invoke_agent")[0]
    assert not [e for e in root.events if e.name == A.EVENT_FAILURE_PREDICTED]
    assert root.attributes[A.PREDICTOR_ALARM] is False
    assert pipe.alarms == []


def test_ground_truth_on_spans_does_not_change_live_scores(trained: FailurePredictor,
                                                           pipeline_factory: Any) -> None:
    ep = synthetic_episode(3, 0, "bursty")
    marked = replace(ep, steps=tuple(replace(s, attributes={**s.attributes, A.FAULT_INJECTED: True,
                                                            A.ORIGINAL_FINISH_REASONS: ["length"]})
                                     for s in ep.steps))
    pipe = pipeline_factory(trained)
    a = pipe.live.history(pipe.replay(ep))
    b = pipe.live.history(pipe.replay(marked))
    assert a == b


def test_a_raising_callback_does_not_reach_the_agent(pipeline_factory: Any) -> None:
    pipe = pipeline_factory(error_count_predictor(0.1))

    def boom(alarm: Alarm) -> None:
        raise RuntimeError("user callback bug")

    pipe.live.on_alarm = boom
    pipe.replay(_errors_episode(2))            # must not raise
    root = pipe.spans("invoke_agent")[0]
    assert [e.name for e in root.events].count(A.EVENT_FAILURE_PREDICTED) == 1


def test_concurrent_episodes_keep_separate_state(pipeline_factory: Any) -> None:
    pipe = pipeline_factory(error_count_predictor(0.5))
    results: dict[int, str] = {}

    def run(n: int) -> None:
        results[n] = pipe.replay(_errors_episode(n), task_id=f"t{n}")

    threads = [threading.Thread(target=run, args=(n,)) for n in (0, 1, 2, 3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for n, tid in results.items():
        final = pipe.live.history(tid)[-1][1]
        assert final == pytest.approx(1 / (1 + math.exp(-(2 * n - 3))))
    assert sorted(a.task_id for a in pipe.alarms) == ["t2", "t3", "t4"]


def test_processor_loads_a_model_file_and_ignores_other_spans(tmp_path: Path, pipeline_factory: Any) -> None:
    path = error_count_predictor().save(tmp_path / "m.json")
    live = LivePredictorProcessor(path)
    assert live.predictor == error_count_predictor()
    pipe = pipeline_factory(error_count_predictor())
    with pipe.tracer.start_as_current_span("GET /health", attributes={"http.method": "GET"}) as sp:
        tid = format(sp.get_span_context().trace_id, "032x")
    assert pipe.live.history(tid) == []
    assert span_step_kind({}) is None
    assert span_step_kind({A.OI_SPAN_KIND: "llm"}) == "llm"


def test_spans_outside_any_episode_are_still_scored(pipeline_factory: Any) -> None:
    pipe = pipeline_factory(error_count_predictor(0.5))
    ep = _errors_episode(2)
    with pipe.tracer.start_as_current_span("handler") as parent:
        for s in ep.steps:
            pipe.emit(s)
    tid = format(parent.get_span_context().trace_id, "032x")
    assert [step for step, _ in pipe.live.history(tid)] == list(range(8))   # numbered in end order
    assert [(a.trace_id, a.task_id, a.step) for a in pipe.alarms] == [(tid, None, 3)]


def test_open_trace_limit_retires_the_oldest(pipeline_factory: Any) -> None:
    pipe = pipeline_factory(error_count_predictor(0.5))
    pipe.live._max_open = 2
    tids = []
    for _ in range(3):
        with pipe.tracer.start_as_current_span("handler") as parent:
            pipe.emit(_errors_episode(0).steps[0])
        tids.append(format(parent.get_span_context().trace_id, "032x"))
    assert len(pipe.live._open) == 2
    assert all(len(pipe.live.history(t)) == 1 for t in tids)             # the retired one is still queryable


def test_live_matches_offline_on_the_reference_agent_with_real_faults(
        tmp_path: Path, trained: FailurePredictor, pipeline_factory: Any) -> None:
    """The openai SDK against the simulated model, tool-result faults, logprobs: live == stored."""
    import httpx2
    import openai

    from agentchaos_otel.inject.tools import ToolFaultInjector
    from agentchaos_otel.inject.transport import ChaosTransport
    from agentchaos_otel.sim.reference_agent import ReferencePolicy, run_reference_agent
    from agentchaos_otel.sim.reference_tasks import REFERENCE_TOOLS, reference_tasks
    from agentchaos_otel.sim.server import SimulatedModelServer

    db = tmp_path / "traces.duckdb"
    pipe = pipeline_factory(trained, db)
    live_ids = []
    with SimulatedModelServer(ReferencePolicy(), seed=0) as server:
        transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=pipe.provider)
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-sim", max_retries=0,
                               http_client=httpx2.Client(transport=transport))
        for i, task in enumerate(reference_tasks(4, seed=3)):
            with Episode(task.task_id, seed=i, condition="independent", tracer_provider=pipe.provider,
                         simulated=True) as ep:
                tools = ToolFaultInjector("independent", seed=i, episode_key=task.task_id, rate=0.5,
                                          tracer_provider=pipe.provider).wrap(dict(REFERENCE_TOOLS))
                run = run_reference_agent(client, task, model=ReferencePolicy().name, tools=tools,
                                          request_options={"logprobs": True, "top_logprobs": 20})
                ep.set_outcome(bool(run.success))
            live_ids.append(format(ep.span.get_span_context().trace_id, "032x"))
        client.close()
    pipe.provider.force_flush()
    stored = {e.trace_id: e for e in load_episodes(db)}
    assert set(live_ids) <= set(stored)
    some_logprobs = False
    for tid in live_ids:
        ep = stored[tid]
        assert len(ep.steps) >= 2
        some_logprobs |= any(s.get(A.LOGPROBS_ENTROPY_MEAN) is not None for s in ep.llm_steps)
        assert [score for _, score in pipe.live.history(tid)] == trained.score_prefixes(ep)
    assert some_logprobs
    assert any(e.faults() for e in load_episodes(db, blind=False))      # faults really were injected
    # Real LLM and tool spans are recognised at start, so each after the first carries a score.
    for tid in live_ids:
        spans = [sp for sp in pipe.exporter.get_finished_spans()
                 if format(sp.context.trace_id, "032x") == tid and A.STEP in sp.attributes]
        marked = sorted(sp.attributes[A.STEP] for sp in spans if A.PREDICTOR_SCORE in sp.attributes)
        assert marked == sorted(sp.attributes[A.STEP] for sp in spans)[1:]
