"""Determinism of schedules and isolation of concurrent episodes (asyncio tasks and threads)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx2
import openai

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.transport import AsyncChaosTransport, ChaosTransport
from agentchaos_otel.plans.plan import from_fault_names
from tests.conftest import WEATHER_TOOL


def _sync_client(base_url: str, provider: Any) -> openai.OpenAI:
    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
    return openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0,
                         http_client=httpx2.Client(transport=transport))


def _episode_log(base_url: str, provider: Any, plan: Any, seed: int, calls: int = 12) -> list[dict[str, Any]]:
    with _sync_client(base_url, provider) as client, episode("det", plan=plan, seed=seed,
                                                              tracer_provider=provider) as ep:
        for i in range(calls):
            client.chat.completions.create(model="sim-core-test", tools=[WEATHER_TOOL],
                                           messages=[{"role": "user", "content": f"TEXT q {i}"}])
    return [r.as_dict() for r in ep.fault_log]


def test_equal_seeds_give_identical_fault_logs(mode_server: Any, memory_tracing: Any) -> None:
    provider, _ = memory_tracing
    plan = from_fault_names(["llm_corrupt_intermittent"])
    a = _episode_log(mode_server.base_url, provider, plan, seed=7)
    b = _episode_log(mode_server.base_url, provider, plan, seed=7)
    c = _episode_log(mode_server.base_url, provider, plan, seed=8)
    assert a == b and a, "same seed must reproduce the same firings and rewrites"
    assert [r["call"] for r in a] != [r["call"] for r in c] or [r["digest_after"] for r in a] != [
        r["digest_after"] for r in c]


def test_probability_one_faults_every_eligible_call_and_zero_none(mode_server: Any, memory_tracing: Any) -> None:
    provider, _ = memory_tracing
    always = from_fault_names(["llm_error_intermittent"]).with_overrides(probability=1.0)
    never = from_fault_names(["llm_error_intermittent"]).with_overrides(probability=0.0)
    assert [r["call"] for r in _episode_log(mode_server.base_url, provider, always, 0)] == list(range(1, 13))
    assert _episode_log(mode_server.base_url, provider, never, 0) == []


def test_200_asyncio_tasks_with_different_plans_stay_isolated(mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    plans = ["llm_error_persistent", "llm_empty_persistent", "none", "llm_schema_persistent"]

    async def one(client: openai.AsyncOpenAI, i: int) -> tuple[str, list[str]]:
        plan = plans[i % len(plans)]
        async with episode(f"a{i}", plan=plan, seed=i, tracer_provider=provider):
            out = []
            for j in range(3):
                c = await client.chat.completions.create(model="sim-core-test", tools=[WEATHER_TOOL],
                                                         messages=[{"role": "user", "content": f"TEXT {i} {j}"}])
                out.append(c.choices[0].message.content or "")
                await asyncio.sleep(0)
            return plan, out

    async def main() -> list[tuple[str, list[str]]]:
        transport = AsyncChaosTransport(httpx2.AsyncHTTPTransport(limits=httpx2.Limits(max_connections=50)),
                                        tracer_provider=provider)
        async with openai.AsyncOpenAI(base_url=mode_server.base_url, api_key="sk-test", max_retries=0,
                                      http_client=httpx2.AsyncClient(transport=transport, timeout=60)) as client:
            return await asyncio.gather(*(one(client, i) for i in range(200)))

    results = asyncio.run(main())
    for plan, contents in results:
        for content in contents:
            if plan == "llm_error_persistent":
                assert content.startswith("[API ERROR]")
            elif plan == "llm_empty_persistent":
                assert content == ""
            elif plan == "llm_schema_persistent":
                assert "content_policy_violation" in content
            else:
                assert "weather in Paris" in content
    by_task: dict[str, list[int]] = {}
    for span in exporter.get_finished_spans():
        if span.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT:
            task = span.attributes[A.TASK_ID]
            by_task.setdefault(task, []).append(span.attributes[A.STEP])
            expected_exp = plans[int(task[1:]) % len(plans)]
            assert span.attributes.get(A.FAULT_EXPERIMENT, "none") in (expected_exp, "none")
            assert bool(span.attributes[A.FAULT_INJECTED]) is (expected_exp != "none")
    assert len(by_task) == 200
    assert all(sorted(steps) == [0, 1, 2] for steps in by_task.values())


def test_threads_with_different_plans_stay_isolated(mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    plans = ["llm_error_persistent", "none", "llm_timeout_persistent", "llm_empty_persistent"] * 2
    results: dict[int, list[str]] = {}
    barrier = threading.Barrier(8)

    def worker(i: int) -> None:
        with _sync_client(mode_server.base_url, provider) as client:
            barrier.wait()
            with episode(f"t{i}", plan=plans[i], seed=i, tracer_provider=provider):
                results[i] = [client.chat.completions.create(
                    model="sim-core-test", tools=[WEATHER_TOOL],
                    messages=[{"role": "user", "content": f"TEXT {i} {j}"}]).choices[0].message.content or ""
                    for j in range(5)]

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, contents in results.items():
        for c in contents:
            if plans[i] == "llm_error_persistent":
                assert c.startswith("[API ERROR]")
            elif plans[i] == "llm_timeout_persistent":
                assert c.startswith("[TIMEOUT]")
            elif plans[i] == "llm_empty_persistent":
                assert c == ""
            else:
                assert "weather in Paris" in c
    steps: dict[str, list[int]] = {}
    for span in exporter.get_finished_spans():
        if span.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT:
            steps.setdefault(span.attributes[A.TASK_ID], []).append(span.attributes[A.STEP])
    assert {k: sorted(v) for k, v in steps.items()} == {f"t{i}": [0, 1, 2, 3, 4] for i in range(8)}


def test_experiments_are_assigned_to_task_ids_deterministically() -> None:
    from agentchaos_otel.plans.plan import plan_from_mapping

    plan = plan_from_mapping({"name": "spread", "seed": 3, "experiment": [
        {"name": "a", "faults": ["llm_error_single"]}, {"name": "b", "faults": ["llm_empty_single"]},
        {"name": "c", "faults": ["tool_error_single"]}]})
    first = [plan.experiment_for(f"task-{i}").name for i in range(60)]
    assert first == [plan.experiment_for(f"task-{i}").name for i in range(60)]
    assert set(first) == {"a", "b", "c"}
