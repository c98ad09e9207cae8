"""BFCL episodes end to end: openai SDK -> simulated model server -> agent loop -> tool-result
injector -> official checker, with a real OTel SDK recording the spans.

The simulated model is labelled simulated; these runs say nothing about real models.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentchaos_otel import attributes as A
from agentchaos_otel.agents.bfcl import UNAVAILABLE_REASON, bfcl_available
from agentchaos_otel.sim.policy import Turn
from agentchaos_otel.sim.server import SimulatedModelServer

pytestmark = pytest.mark.skipif(not bfcl_available(), reason=UNAVAILABLE_REASON)

if bfcl_available():
    from agentchaos_otel.agents.bfcl.agent import AgentRun, run_agent
    from agentchaos_otel.agents.bfcl.episode import EpisodeResult, run_bfcl_episode
    from agentchaos_otel.agents.bfcl.grade import cached_instance_count, grade
    from agentchaos_otel.agents.bfcl.sim_policy import BfclSimPolicy, FaultReactions, MistakeRates
    from agentchaos_otel.agents.bfcl.tasks import get_task, load_tasks

MODEL = "sim-bfcl"
TASK_IDS = ["multi_turn_base_0", "multi_turn_base_4", "multi_turn_base_60", "multi_turn_base_120"]


class RecordingPolicy:
    """Passes through to a policy and keeps the tool messages the model was sent."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.tool_messages: list[str] = []
        self._lock = threading.Lock()

    def respond(self, request: dict[str, Any], rng: random.Random) -> Turn:
        with self._lock:
            msgs = request.get("messages") or []
            last_user = max((i for i, m in enumerate(msgs) if m.get("role") == "user"), default=-1)
            self.tool_messages.extend(str(m.get("content")) for m in msgs[last_user + 1:]
                                      if m.get("role") == "tool")
        return self.inner.respond(request, rng)


@pytest.fixture
def tracing(memory_tracing: tuple[TracerProvider, InMemorySpanExporter]) -> tuple[TracerProvider, InMemorySpanExporter]:
    return memory_tracing  # the shared fixture in conftest.py


def _client(server: SimulatedModelServer, provider: TracerProvider) -> openai.OpenAI:
    from agentchaos_otel.inject.transport import ChaosTransport

    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
    return openai.OpenAI(base_url=server.base_url, api_key="sk-simulated", max_retries=0,
                         http_client=httpx2.Client(transport=transport))


def _policy(**kwargs: Any) -> BfclSimPolicy:
    return BfclSimPolicy(load_tasks(ids=[*TASK_IDS, "multi_turn_base_1"]), **kwargs)


def test_ground_truth_following_policy_passes_and_is_traced(tracing: Any) -> None:
    provider, exporter = tracing
    with SimulatedModelServer(_policy(mistakes=MistakeRates()), seed=0) as server:
        client = _client(server, provider)
        results = [run_bfcl_episode(t, condition="none", seed=0, model=MODEL, client=client,
                                    tracer_provider=provider) for t in TASK_IDS]
    assert [r.success for r in results] == [True] * len(TASK_IDS), results
    assert all(r.error is None and r.n_tool_calls > 0 and r.n_steps > r.n_tool_calls for r in results)
    spans = exporter.get_finished_spans()
    roots = [s for s in spans if s.name == "invoke_agent bfcl"]
    assert [s.attributes[A.TASK_ID] for s in roots] == TASK_IDS
    for root, result in zip(roots, results, strict=True):
        assert root.attributes[A.EPISODE_SUCCESS] is True
        assert root.attributes[A.CONDITION] == "none" and root.attributes[A.SEED] == 0
        assert root.attributes[A.SIMULATED] is True
        inside = [s for s in spans if s.context.trace_id == root.context.trace_id and s is not root]
        chats = [s for s in inside if s.name.startswith("chat ")]
        tools = [s for s in inside if s.name.startswith("execute_tool ")]
        assert len(chats) == result.n_steps and len(tools) == result.n_tool_calls
        steps = sorted(s.attributes[A.STEP] for s in chats + tools)
        assert steps == list(range(len(steps)))
        assert not any(s.attributes.get(A.FAULT_INJECTED) for s in tools)


def test_a_policy_that_skips_calls_fails(tracing: Any) -> None:
    provider, exporter = tracing
    with SimulatedModelServer(_policy(mistakes=MistakeRates(skip=1.0)), seed=0) as server:
        client = _client(server, provider)
        result = run_bfcl_episode(TASK_IDS[0], condition="none", seed=0, model=MODEL, client=client,
                                  tracer_provider=provider)
    assert result.success is False
    assert result.n_tool_calls == 0
    assert result.grade_error_type == "multi_turn:empty_turn_model_response"
    root = next(s for s in exporter.get_finished_spans() if s.name == "invoke_agent bfcl")
    assert root.attributes[A.EPISODE_SUCCESS] is False


def test_episodes_of_the_same_task_do_not_share_state(tracing: Any) -> None:
    provider, _ = tracing
    with SimulatedModelServer(_policy(mistakes=MistakeRates()), seed=0) as server:
        client = _client(server, provider)
        runs: list[AgentRun] = []
        first = run_bfcl_episode("multi_turn_base_4", condition="none", seed=0, model=MODEL, client=client,
                                 tracer_provider=provider, on_run=runs.append)
        second = run_bfcl_episode("multi_turn_base_4", condition="none", seed=0, model=MODEL,
                                  client=client, tracer_provider=provider, on_run=runs.append)
    # The second episode posts the same tweet on fresh instances: same results, same verdict.
    assert first.success and second.success
    tool_results = [[m["content"] for m in r.messages if m["role"] == "tool"] for r in runs]
    assert tool_results[0] == tool_results[1]
    assert runs[0].executed == runs[1].executed
    assert cached_instance_count() == 0


def test_faulted_tool_results_reach_the_model(tracing: Any) -> None:
    provider, exporter = tracing
    policy = RecordingPolicy(_policy(mistakes=MistakeRates(), reactions=FaultReactions.none()))
    with SimulatedModelServer(policy, seed=0) as server:
        client = _client(server, provider)
        result = run_bfcl_episode(TASK_IDS[0], condition="independent", seed=1, model=MODEL, client=client,
                                  tracer_provider=provider,
                                  injector_options={"kinds": ("timeout",), "rate": 1.0})
    assert result.n_tool_calls > 0
    assert policy.tool_messages and all(json.loads(m) == {"error": "timeout"} for m in policy.tool_messages)
    tools = [s for s in exporter.get_finished_spans() if s.name.startswith("execute_tool ")]
    assert len(tools) == result.n_tool_calls
    assert all(s.attributes[A.FAULT_INJECTED] and s.attributes[A.FAULT_TYPE] == "timeout" for s in tools)
    # The tools really ran: a model that ignores the errors still leaves the right state.
    assert result.success is True


def test_logprob_entropy_rises_after_faulted_tool_results(tracing: Any) -> None:
    provider, exporter = tracing
    policy = _policy(mistakes=MistakeRates(), reactions=FaultReactions.none())
    entropies: dict[str, list[float]] = {}
    with SimulatedModelServer(policy, seed=0) as server:
        client = _client(server, provider)
        for cond, options in (("none", {}), ("independent", {"kinds": ("rate_limit",), "rate": 1.0})):
            exporter.clear()
            run_bfcl_episode(TASK_IDS[0], condition=cond, seed=0, model=MODEL, client=client,
                             tracer_provider=provider, logprobs=True, injector_options=options)
            chats = sorted((s for s in exporter.get_finished_spans() if s.name.startswith("chat ")),
                           key=lambda s: s.attributes[A.STEP])
            entropies[cond] = [s.attributes[A.LOGPROBS_ENTROPY_MEAN] for s in chats[1:]]
    clean = sum(entropies["none"]) / len(entropies["none"])
    faulted = sum(entropies["independent"]) / len(entropies["independent"])
    assert faulted > 3 * clean


def test_retrying_after_timeouts_breaks_state_changing_tasks(tracing: Any) -> None:
    """The study's mechanism: the tool had run, so a retried write is applied twice."""
    provider, _ = tracing
    reactions = FaultReactions(retry={"timeout": 1.0}, abandon={}, max_retries=1)
    with SimulatedModelServer(_policy(mistakes=MistakeRates(), reactions=reactions), seed=0) as server:
        client = _client(server, provider)
        clean = run_bfcl_episode("multi_turn_base_4", condition="none", seed=0, model=MODEL, client=client,
                                 tracer_provider=provider)
        faulted = run_bfcl_episode("multi_turn_base_4", condition="independent", seed=0, model=MODEL,
                                   client=client, tracer_provider=provider,
                                   injector_options={"kinds": ("timeout",), "rate": 1.0})
    assert clean.success is True
    assert faulted.success is False and faulted.n_tool_calls == 2 * clean.n_tool_calls


def test_an_unreachable_model_is_a_failed_episode_not_a_crash(tracing: Any) -> None:
    provider, exporter = tracing
    client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="sk-simulated", max_retries=0,
                           timeout=2.0)
    result = run_bfcl_episode(TASK_IDS[0], condition="none", seed=0, model=MODEL, client=client,
                              tracer_provider=provider)
    assert isinstance(result, EpisodeResult)
    assert result.success is False and result.error and "Connection" in result.error
    root = next(s for s in exporter.get_finished_spans() if s.name == "invoke_agent bfcl")
    assert root.attributes[A.EPISODE_SUCCESS] is False


def _scripted_client(replies: list[dict[str, Any]]) -> openai.OpenAI:
    """The real SDK over a transport that answers with fixed chat completions, in order."""
    queue = list(replies)

    def handler(request: httpx2.Request) -> httpx2.Response:
        message = queue.pop(0) if queue else {"role": "assistant", "content": "(simulated) done"}
        body = {"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": MODEL,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        return httpx2.Response(200, json=body)

    return openai.OpenAI(base_url="http://sim.invalid/v1", api_key="sk-simulated", max_retries=0,
                         http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))


def _call(name: str, arguments: str, cid: str = "c1") -> dict[str, Any]:
    function = {"name": name, "arguments": arguments}
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": cid, "type": "function", "function": function}]}


def test_bad_model_output_is_answered_with_errors_not_crashes() -> None:
    task = get_task("multi_turn_base_1")
    client = _scripted_client([
        _call("ls", '{"a": tru'),                 # invalid JSON
        _call("ls", "[1, 2]", "c2"),              # not an object
        _call("rm_everything", "{}", "c3"),       # unknown function
        _call("__import__", '{"name": "os"}', "c4"),
        _call("ls", '{"a": true}', "c5"),         # finally a good call
    ])
    run = run_agent(task, client, MODEL)
    errors = [m["content"] for m in run.messages if m["role"] == "tool"][:4]
    assert all(e.startswith("Error during execution: ") for e in errors)
    assert run.n_bad_calls == 4 and run.n_tool_calls == 1 and run.error is None
    assert run.executed[0] == [[], [], [], [], ["ls(a=True)"]]
    assert len(run.executed) == task.n_turns
    assert grade(task, run.executed).valid is False  # later turns did nothing


def test_step_cap_force_quits_like_bfcl() -> None:
    task = get_task("multi_turn_base_1")
    client = _scripted_client([_call("ls", '{"a": true}', f"c{i}") for i in range(10)])
    run = run_agent(task, client, MODEL, step_cap=3)
    assert run.force_quit and len(run.executed) == 1 and len(run.executed[0]) == 4
    assert grade(task, run.executed).error_type == "multi_turn:force_terminated"


LLM_FAULTS = ["llm_error_single", "llm_empty_single", "tool_error_persistent", "tool_corrupt_burst",
              "compound_stale_cache", "compound_wrong_entity", "http_500", "http_connect_error"]


def _llm_fault_episode(server: SimulatedModelServer, provider: TracerProvider, name: str) -> EpisodeResult:
    from agentchaos_otel.plans.plan import from_fault_names

    plan = from_fault_names([name]).with_overrides(delay_scale=0.0)
    return run_bfcl_episode("multi_turn_base_1", condition="none", seed=0, model=MODEL,
                            client=_client(server, provider), tracer_provider=provider, plan=plan,
                            step_cap=6)


@pytest.fixture(scope="module")
def perfect_server() -> Iterator[SimulatedModelServer]:
    with SimulatedModelServer(_policy(mistakes=MistakeRates()), seed=0) as server:
        yield server


@pytest.mark.parametrize("name", LLM_FAULTS)
def test_llm_response_faults_end_in_a_graded_episode(perfect_server: SimulatedModelServer, tracing: Any,
                                                     name: str) -> None:
    provider, exporter = tracing
    result = _llm_fault_episode(perfect_server, provider, name)
    assert isinstance(result, EpisodeResult) and result.task_id == "multi_turn_base_1"
    spans = exporter.get_finished_spans()
    root = next(s for s in spans if s.name == "invoke_agent bfcl")
    assert root.attributes[A.EPISODE_SUCCESS] is result.success
    # Labelled with the plan, never as the clean baseline, though condition="none" was passed.
    assert root.attributes[A.CONDITION] == result.condition == name
    chats = [s for s in spans if s.name.startswith("chat ")]
    assert any(s.attributes.get(A.FAULT_INJECTED) for s in chats), name
    if name in ("tool_error_persistent", "http_500", "http_connect_error"):
        assert result.success is False
    if name == "tool_error_persistent":  # every call loses its arguments: the turn never ends
        assert result.force_quit
    if name.startswith("http_"):
        assert result.error is not None


@pytest.mark.slow
def test_every_catalog_fault_leaves_the_harness_standing(perfect_server: SimulatedModelServer,
                                                         tracing: Any) -> None:
    from agentchaos_otel.faults.catalog import CATALOG, fault_names

    provider, _ = tracing
    for name in fault_names():
        if CATALOG[name].target == "stream":
            continue  # the agent does not stream
        result = _llm_fault_episode(perfect_server, provider, name)
        assert isinstance(result, EpisodeResult), name


def test_unknown_condition_is_a_caller_error() -> None:
    with pytest.raises(ValueError, match="neither a tool-result condition .* nor an LLM-fault plan"):
        run_bfcl_episode(TASK_IDS[0], condition="chaotic", seed=0, model=MODEL, base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match="did you mean llm_error_single"):
        run_bfcl_episode(TASK_IDS[0], condition=None, plan="llm_eror_single", seed=0, model=MODEL,
                         base_url="http://127.0.0.1:9/v1")


@pytest.mark.parametrize(("condition", "plan", "label", "tool_condition", "plan_name"), [
    (None, None, "none", "none", "none"),
    ("none", None, "none", "none", "none"),
    ("bursty", None, "bursty", "bursty", "none"),
    ("once_timeout", None, "once_timeout", "once_timeout", "none"),
    ("llm_error_single", None, "llm_error_single", "none", "llm_error_single"),
    ("llm_error_single", "llm_error_single", "llm_error_single", "none", "llm_error_single"),
    ("none", "http_500", "http_500", "none", "http_500"),
    (None, "http_500", "http_500", "none", "http_500"),
    ("persistent", "llm_empty_single", "persistent", "persistent", "llm_empty_single"),
])
def test_episode_label_tool_condition_and_plan(condition: str | None, plan: str | None, label: str,
                                              tool_condition: str, plan_name: str) -> None:
    from agentchaos_otel.agents.bfcl.episode import episode_condition

    got_label, got_tool, resolved = episode_condition(condition, plan)
    assert (got_label, got_tool, resolved.name) == (label, tool_condition, plan_name)


def test_catalog_plan_named_by_the_condition_faults_llm_calls_only(perfect_server: SimulatedModelServer,
                                                                   tracing: Any) -> None:
    provider, exporter = tracing
    result = run_bfcl_episode("multi_turn_base_1", condition="llm_error_single", seed=0, model=MODEL,
                              client=_client(perfect_server, provider), tracer_provider=provider)
    spans = exporter.get_finished_spans()
    root = next(s for s in spans if s.name == "invoke_agent bfcl")
    assert root.attributes[A.CONDITION] == result.condition == "llm_error_single"
    assert sum(bool(s.attributes.get(A.FAULT_INJECTED)) for s in spans if s.name.startswith("chat ")) == 1
    tools = [s for s in spans if s.name.startswith("execute_tool ")]
    assert tools and not any(s.attributes.get(A.FAULT_INJECTED) for s in tools)
    assert {s.attributes.get(A.FAULT_STRATEGY) for s in tools} == {"none"}


def test_once_condition_faults_one_of_the_first_four_tool_calls(perfect_server: SimulatedModelServer,
                                                                tracing: Any) -> None:
    provider, exporter = tracing
    result = run_bfcl_episode("multi_turn_base_0", condition="once_empty", seed=2, model=MODEL,
                              client=_client(perfect_server, provider), tracer_provider=provider)
    assert result.condition == "once_empty" and result.n_tool_calls > 4
    spans = exporter.get_finished_spans()
    faulted = [(s.attributes.get(A.TOOL_CALL_INDEX), s.attributes.get(A.FAULT_TYPE)) for s in spans
               if s.name.startswith("execute_tool ") and s.attributes.get(A.FAULT_INJECTED)]
    assert len(faulted) == 1 and faulted[0][1] == "empty" and 0 <= faulted[0][0] <= 3
    assert not any(s.attributes.get(A.FAULT_INJECTED) for s in spans if s.name.startswith("chat "))


def test_equal_seeds_give_identical_faulted_episodes(tracing: Any) -> None:
    provider, exporter = tracing
    runs: list[AgentRun] = []
    logs = []
    with SimulatedModelServer(_policy(), seed=0) as server:
        client = _client(server, provider)
        for _ in range(2):
            exporter.clear()
            run_bfcl_episode("multi_turn_base_60", condition="independent", seed=5, model=MODEL,
                             client=client, tracer_provider=provider, injector_options={"rate": 0.5},
                             on_run=runs.append)
            logs.append([(s.name, s.attributes.get(A.FAULT_TYPE)) for s in exporter.get_finished_spans()
                         if s.name.startswith("execute_tool ")])
    assert runs[0].messages == runs[1].messages
    assert logs[0] == logs[1] and any(kind for _, kind in logs[0])
