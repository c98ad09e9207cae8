from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentchaos_otel import attributes as A
from agentchaos_otel.campaign.runner import (
    CampaignConfig,
    CampaignRunner,
    EpisodeOutcome,
    EpisodeSpec,
    campaign_runs,
    expand,
    finished_episodes,
    run_campaign,
)
from agentchaos_otel.plans.binding import current_episode
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.store.read.episodes import load_episodes
from agentchaos_otel.trace.processors import EpisodeSpanProcessor

Memory = tuple[TracerProvider, InMemorySpanExporter]
Seen = list[tuple[str, str, str, int]]


@pytest.fixture
def memory(memory_tracing: Memory) -> Memory:
    return memory_tracing  # the shared fixture in conftest.py


def tool_agent(provider: TracerProvider, seen: Seen | None = None) -> Callable[[EpisodeSpec], EpisodeOutcome]:
    """A real (if tiny) agent: two traced tool calls; task 'boom' crashes; success by task parity."""
    tracer = trace.get_tracer("test-agent", tracer_provider=provider)

    def run_one(spec: EpisodeSpec) -> EpisodeOutcome:
        state = current_episode()
        assert state is not None
        if seen is not None:
            seen.append((spec.task_id, str(state.task_id), str(state.condition), state.seed))
        for name in ("ls", "cd"):
            with tracer.start_as_current_span(A.tool_span_name(name), attributes={
                    A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: name,
                    A.TOOL_ARGS_DIGEST: f"{spec.task_id}-{name}"}):
                pass
        if spec.task_id == "boom":
            raise RuntimeError("agent blew up")
        return EpisodeOutcome(success=int(spec.task_id[1:]) % 2 == 0)

    return run_one


def test_expand_orders_seed_then_task_then_condition() -> None:
    specs = expand("ref", ["a", "b"], ["none", "bursty"], [0, 1])
    assert len(specs) == 8
    assert [s.key for s in specs[:4]] == [("ref", "a", "none", 0), ("ref", "a", "bursty", 0),
                                         ("ref", "b", "none", 0), ("ref", "b", "bursty", 0)]
    assert specs[0].plan is None and specs[1].plan == "bursty"


def test_crash_is_recorded_on_its_root_span_and_the_campaign_goes_on(memory: Memory) -> None:
    provider, exporter = memory
    runner = CampaignRunner(tool_agent(provider), workers=3, tracer_provider=provider, progress=False,
                            simulated=True)
    specs = expand("ref", ["t0", "boom", "t1", "t2"], ["none", "bursty"], [0])
    result = runner.run(specs)
    assert result.counts == {"planned": 8, "skipped_finished": 0, "ran": 8, "succeeded": 4, "failed": 2,
                             "unscored": 0, "crashed": 2}
    roots = [s for s in exporter.get_finished_spans() if s.name == A.agent_span_name("ref")]
    assert len(roots) == 8
    crashed = [s for s in roots if s.attributes.get(A.TASK_ID) == "boom"]
    assert len(crashed) == 2
    for s in crashed:
        assert "agent blew up" in s.attributes[A.EPISODE_ERROR]
        assert s.attributes[A.EPISODE_SUCCESS] is False
        assert s.attributes[A.EPISODE_CRASHED] is True
        assert s.status.status_code.name == "ERROR"
    assert not any(s.attributes.get(A.EPISODE_CRASHED) for s in roots if s.attributes[A.TASK_ID] != "boom")
    assert all(s.attributes.get(A.SIMULATED) is True for s in roots)
    # Tool spans are numbered within their own episode, not across the campaign.
    tools = [s for s in exporter.get_finished_spans() if s.name.startswith("execute_tool")]
    assert sorted({s.attributes[A.STEP] for s in tools}) == [0, 1]


def test_parallel_episodes_see_only_their_own_binding(memory: Memory) -> None:
    provider, _ = memory
    seen: list[tuple[str, str, str, int]] = []
    runner = CampaignRunner(tool_agent(provider, seen), workers=4, tracer_provider=provider, progress=False)
    specs = expand("ref", [f"t{i}" for i in range(12)], ["none", "independent", "llm_error_single"], [0, 3])
    runner.run(specs)
    assert len(seen) == len(specs)
    by_task = {(s.task_id, s.condition, s.seed) for s in specs}
    assert {(t, c, seed) for _, t, c, seed in seen} == by_task
    assert all(spec_task == state_task for spec_task, state_task, _, _ in seen)


def test_agent_that_opens_its_own_episode_is_not_wrapped_twice(memory: Memory) -> None:
    from agentchaos_otel.episode_scope import Episode

    provider, exporter = memory

    def own(spec: EpisodeSpec) -> EpisodeOutcome:
        if spec.task_id == "boom":
            raise ValueError("before the episode opened")
        with Episode(spec.task_id, spec.plan, spec.seed, condition=spec.condition, agent_name=spec.agent,
                     tracer_provider=provider) as ep:
            ep.set_outcome(True)
        return EpisodeOutcome(True)

    runner = CampaignRunner(own, workers=2, tracer_provider=provider, progress=False, opens_episode=True)
    result = runner.run(expand("bfcl", ["t0", "boom"], ["none"], [0]))
    assert result.counts["crashed"] == 1 and result.counts["succeeded"] == 1
    roots = [s for s in exporter.get_finished_spans() if s.name == A.agent_span_name("bfcl")]
    assert sorted(s.attributes[A.TASK_ID] for s in roots) == ["boom", "t0"]  # one root each
    boom = next(s for s in roots if s.attributes[A.TASK_ID] == "boom")
    assert "before the episode opened" in boom.attributes[A.EPISODE_ERROR]
    assert boom.attributes[A.EPISODE_CRASHED] is True


def test_stop_finishes_running_episodes_and_starts_no_more(memory: Memory) -> None:
    provider, _ = memory
    started: list[str] = []
    lock = threading.Lock()
    runner: CampaignRunner

    def run_one(spec: EpisodeSpec) -> bool:
        with lock:
            started.append(spec.task_id)
            if len(started) == 3:
                runner.stop()
        return True

    runner = CampaignRunner(run_one, workers=1, tracer_provider=provider, progress=False)
    result = runner.run(expand("ref", [f"t{i}" for i in range(10)], ["none"], [0]))
    assert len(started) == 3 and len(result.results) == 3


def _duckdb_provider(db: Path) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(EpisodeSpanProcessor())
    provider.add_span_processor(BatchSpanProcessor(DuckDBSpanExporter(str(db))))
    return provider


def test_campaign_resumes_from_the_trace_file_and_records_each_invocation(tmp_path: Path) -> None:
    db = tmp_path / "traces.duckdb"
    provider = _duckdb_provider(db)
    try:
        first = CampaignConfig(agent="ref", tasks=["t0", "boom", "t1"], conditions=["none", "bursty"],
                               seeds=[0], workers=2, db=db, simulated=True)
        r1 = run_campaign(first, tool_agent(provider), tracer_provider=provider, progress=False,
                          flush=provider.force_flush)
        assert r1.counts["ran"] == 6 and r1.counts["crashed"] == 2
        assert finished_episodes(db) == {("ref", t, c, 0) for t in ("t0", "boom", "t1") for c in ("none",
                                                                                                  "bursty")}

        # A wider second invocation only runs what is missing (crashed episodes count as finished).
        second = CampaignConfig(agent="ref", tasks=["t0", "boom", "t1", "t2"], conditions=["none", "bursty"],
                                seeds=[0, 1], workers=2, db=db, simulated=True)
        seen: list[tuple[str, str, str, int]] = []
        r2 = run_campaign(second, tool_agent(provider, seen), tracer_provider=provider, progress=False,
                          flush=provider.force_flush)
        assert r2.counts["skipped_finished"] == 6 and r2.counts["ran"] == 10
        assert ("t0", "t0", "none", 0) not in seen and ("t2", "t2", "none", 0) in seen
    finally:
        provider.shutdown()

    runs = campaign_runs(db)
    assert [r["id"] for r in runs] == [r1.run_id, r2.run_id]
    assert all(r["status"] == "finished" and r["simulated"] is True and r["finished"] for r in runs)
    assert runs[1]["counts"]["skipped_finished"] == 6 and runs[1]["args"]["seeds"] == [0, 1]
    json.dumps(runs, default=str)

    episodes = load_episodes(str(db), blind=False)
    assert len(episodes) == 16
    boom = [e for e in episodes if e.task_id == "boom"]
    assert all(e.success is False and "agent blew up" in e.attributes[A.EPISODE_ERROR] for e in boom)
    from agentchaos_otel.campaign.measures import crashes

    assert [c.task_id for c in crashes(episodes)] == ["boom"] * 4  # 2 conditions x 2 seeds


def test_finished_episodes_of_missing_or_empty_files(tmp_path: Path) -> None:
    assert finished_episodes(tmp_path / "none.duckdb") == set()
    import duckdb

    duckdb.connect(str(tmp_path / "empty.duckdb")).close()
    assert finished_episodes(tmp_path / "empty.duckdb") == set()
    assert campaign_runs(tmp_path / "empty.duckdb") == []


def test_outcomes_may_be_bools_dicts_or_objects(memory: Memory) -> None:
    provider, _ = memory
    answers = {"a": True, "b": {"success": False, "error": "graded wrong"}, "c": None,
               "d": EpisodeOutcome(True)}
    runner = CampaignRunner(lambda spec: answers[spec.task_id], tracer_provider=provider, progress=False)
    result = runner.run(expand("ref", list(answers), ["none"], [0]))
    got = {r.spec.task_id: (r.success, r.error) for r in result.results}
    assert got == {"a": (True, None), "b": (False, "graded wrong"), "c": (None, None), "d": (True, None)}
    assert result.counts["unscored"] == 1


def test_workers_must_be_positive() -> None:
    with pytest.raises(ValueError):
        CampaignRunner(lambda spec: True, workers=0)


def test_an_episode_that_cannot_even_open_is_a_crash_not_a_stop(memory: Memory) -> None:
    provider, _ = memory
    runner = CampaignRunner(lambda spec: True, workers=2, tracer_provider=provider, progress=False)
    specs = [EpisodeSpec("ref", "t0", "llm_no_such_fault", 0), EpisodeSpec("ref", "t1", "none", 0)]
    result = runner.run(specs)
    by_task = {r.spec.task_id: r for r in result.results}
    assert by_task["t0"].crashed and "llm_no_such_fault" in (by_task["t0"].error or "")
    assert by_task["t1"].success is True


def test_resume_does_not_mix_simulated_and_real_episodes(tmp_path: Path) -> None:
    db = tmp_path / "traces.duckdb"
    provider = _duckdb_provider(db)
    try:
        sim = CampaignConfig(agent="ref", tasks=["t0", "t1"], conditions=["none"], seeds=[0], db=db,
                             simulated=True)
        run_campaign(sim, tool_agent(provider), tracer_provider=provider, progress=False,
                     flush=provider.force_flush)
        real = CampaignConfig(agent="ref", tasks=["t0", "t1"], conditions=["none"], seeds=[0], db=db,
                              simulated=False)
        again = run_campaign(real, tool_agent(provider), tracer_provider=provider, progress=False,
                             flush=provider.force_flush)
    finally:
        provider.shutdown()
    assert again.counts["skipped_finished"] == 0 and again.counts["ran"] == 2
    assert len(finished_episodes(db, simulated=True)) == 2 and len(finished_episodes(db,
                                                                                     simulated=False)) == 2
    assert len(finished_episodes(db)) == 2  # the same keys, once each
