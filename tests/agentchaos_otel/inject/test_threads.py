"""Calls made from worker threads belong to the episode that started the work.

Agents fan tool calls and sub-queries out to ``ThreadPoolExecutor`` workers (and plain threads);
a new thread starts with an empty context, so without propagation those calls run with no plan,
no task id and no parent span. ``configure()`` turns propagation on (``threads=True``, its
default), as does ``instrument(threads=True)``; the instrumentor alone leaves it to OTel's
threading instrumentation, and ``uninstrument`` / ``Handle.shutdown`` turn it off.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai
import pytest
from opentelemetry import context as otel_context

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject import threads
from agentchaos_otel.instrumentor import AgentChaosInstrumentor
from agentchaos_otel.plans import binding
from agentchaos_otel.setup import configure

pytestmark = pytest.mark.reliability


@pytest.fixture
def instrumented(memory_tracing: Any) -> Iterator[tuple[Any, Any]]:
    provider, exporter = memory_tracing
    instrumentor = AgentChaosInstrumentor()
    instrumentor.instrument(tracer_provider=provider, threads=True)
    try:
        yield provider, exporter
    finally:
        instrumentor.uninstrument()


def _ask(base_url: str, n: int) -> str:
    with openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0) as client:
        r = client.chat.completions.create(model="sim-core-test", messages=[{"role": "user", "content": f"TEXT {n}"}])
    return r.choices[0].message.content or ""


def _chat_spans(exporter: Any, task: str) -> list[Any]:
    return [s for s in exporter.get_finished_spans()
            if s.name.startswith(A.OP_CHAT) and s.attributes.get(A.TASK_ID) == task]


def test_executor_worker_call_is_bound_to_the_episode(mode_server: Any, instrumented: Any) -> None:
    provider, exporter = instrumented
    with episode("threaded", plan="llm_error_single", tracer_provider=provider) as ep:
        with ThreadPoolExecutor(max_workers=2) as pool:
            first = pool.submit(_ask, mode_server.base_url, 1).result()
            second = pool.submit(_ask, mode_server.base_url, 2).result()
    assert first.startswith("[API ERROR]") and not second.startswith("[API ERROR]")
    assert [r.call for r in ep.fault_log] == [1]
    spans = sorted(_chat_spans(exporter, "threaded"), key=lambda s: s.attributes[A.STEP])
    assert [s.attributes[A.STEP] for s in spans] == [0, 1]
    assert all(s.parent is not None and s.parent.span_id == ep.span.get_span_context().span_id for s in spans)


def test_plain_thread_started_in_an_episode_is_bound(mode_server: Any, instrumented: Any) -> None:
    provider, exporter = instrumented
    out: list[str] = []
    with episode("plain-thread", plan="llm_error_persistent", tracer_provider=provider):
        worker = threading.Thread(target=lambda: out.append(_ask(mode_server.base_url, 3)))
        worker.start()
        worker.join()
    assert out[0].startswith("[API ERROR]")
    assert len(_chat_spans(exporter, "plain-thread")) == 1


def test_concurrent_episodes_with_their_own_executors_stay_apart(mode_server: Any, instrumented: Any) -> None:
    provider, exporter = instrumented
    barrier = threading.Barrier(2)
    results: dict[str, list[str]] = {}

    def run(task: str, plan: str | None) -> None:
        with episode(task, plan=plan, tracer_provider=provider), ThreadPoolExecutor(max_workers=2) as pool:
            barrier.wait()
            futures = [pool.submit(_ask, mode_server.base_url, n) for n in range(4)]
            results[task] = [f.result() for f in futures]

    threads = [threading.Thread(target=run, args=("faulted", "llm_error_persistent")),
               threading.Thread(target=run, args=("clean", None))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(text.startswith("[API ERROR]") for text in results["faulted"])
    assert not any(text.startswith("[API ERROR]") for text in results["clean"])
    assert len(_chat_spans(exporter, "faulted")) == len(_chat_spans(exporter, "clean")) == 4
    assert {s.attributes[A.FAULT_INJECTED] for s in _chat_spans(exporter, "clean")} == {False}


def test_a_pooled_worker_does_not_keep_an_earlier_episode(instrumented: Any) -> None:
    """The worker thread was created inside an episode; work submitted later from outside must
    not run in that episode."""
    provider, _ = instrumented
    with ThreadPoolExecutor(max_workers=1) as pool:
        with episode("first", tracer_provider=provider):
            inside = pool.submit(binding.current_episode).result()
        outside = pool.submit(binding.current_episode).result()
    assert inside is not None and inside.task_id == "first"
    assert outside is None


def test_configure_turns_propagation_on_and_shutdown_off(memory_tracing: Any) -> None:
    provider, _ = memory_tracing
    handle = configure(db=None, tracer_provider=provider)
    try:
        with episode("configured", tracer_provider=provider), ThreadPoolExecutor(max_workers=1) as pool:
            state = pool.submit(binding.current_episode).result()
        assert state is not None and state.task_id == "configured"
    finally:
        handle.shutdown()
    with episode("configured", tracer_provider=provider), ThreadPoolExecutor(max_workers=1) as pool:
        assert pool.submit(binding.current_episode).result() is None


def test_configure_threads_false_leaves_threads_alone(memory_tracing: Any) -> None:
    provider, _ = memory_tracing
    handle = configure(db=None, tracer_provider=provider, threads=False)
    try:
        assert not threads.installed()
        with episode("unthreaded", tracer_provider=provider), ThreadPoolExecutor(max_workers=1) as pool:
            assert pool.submit(binding.current_episode).result() is None
    finally:
        handle.shutdown()


def test_the_episode_rides_in_the_otel_context(memory_tracing: Any) -> None:
    """Whatever carries the OTel context into a thread carries the episode: what OTel's threading
    instrumentation does, done here by hand with the OTel context API alone."""
    provider, _ = memory_tracing
    with episode("carried", tracer_provider=provider):
        ctx = otel_context.get_current()
    seen: list[Any] = []

    def worker() -> None:
        token = otel_context.attach(ctx)
        try:
            seen.append(binding.current_episode())
        finally:
            otel_context.detach(token)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen[0] is not None and seen[0].task_id == "carried"


@pytest.mark.parametrize("threads_on", [False, True])
def test_uninstrument_stops_propagation(memory_tracing: Any, threads_on: bool) -> None:
    provider, _ = memory_tracing
    instrumentor = AgentChaosInstrumentor()
    instrumentor.instrument(tracer_provider=provider, threads=threads_on)
    assert threads.installed() is threads_on
    instrumentor.uninstrument()
    with episode("after", tracer_provider=provider), ThreadPoolExecutor(max_workers=1) as pool:
        assert pool.submit(binding.current_episode).result() is None
        seen: list[Any] = []
        worker = threading.Thread(target=lambda: seen.append(binding.current_episode()))
        worker.start()
        worker.join()
    assert seen == [None]
