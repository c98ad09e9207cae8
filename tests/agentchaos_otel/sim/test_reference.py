"""The reference agent against the simulated server: clean runs, long runs, and reactions to faults."""

from __future__ import annotations

import json
import math
import random
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import openai
import pytest

from agentchaos_otel.sim.policy import ScriptedPolicy, Turn
from agentchaos_otel.sim.reference_agent import (
    EMPTY_NUDGE,
    ReferencePolicy,
    run_reference_agent,
    run_reference_agent_async,
)
from agentchaos_otel.sim.reference_tasks import (
    REFERENCE_TOOLS,
    TOOL_SPECS,
    RefTask,
    SubQuery,
    ToolLogEntry,
    book_flight,
    get_population,
    get_weather,
    parse_prompt,
    reference_tasks,
    search_flights,
    subquery_text,
)
from agentchaos_otel.sim.server import SimulatedModelServer

MODEL = "sim-reference"


def make_task(*subs: SubQuery, task_id: str = "hand-1") -> RefTask:
    """A hand-built task through the same prompt/expectation code the generator uses."""
    from agentchaos_otel.sim.reference_tasks import expected_answer

    prompt = "Answer these.\n" + "\n".join(f"{i + 1}. {subquery_text(q)}" for i, q in enumerate(subs))
    return RefTask(task_id, prompt, {str(i + 1): expected_answer(q) for i, q in enumerate(subs)}, tuple(subs))


WEATHER_LISBON = SubQuery("temp_c", (("city", "Lisbon"),))
POP_OSAKA = SubQuery("population", (("city", "Osaka"),))
BOOKING = SubQuery("booking", (("origin", "Oslo"), ("destination", "Rome"), ("date", "2026-03-03")))


@pytest.fixture(scope="module")
def clean_server() -> Iterator[SimulatedModelServer]:
    with SimulatedModelServer(ReferencePolicy(), seed=0) as srv:
        yield srv


def client_for(server: SimulatedModelServer) -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-simulated", base_url=server.base_url, max_retries=0)


def erroring(fn: Callable[..., Any], error: Any, times: int = 1, *, run_first: bool = False
             ) -> tuple[Callable[..., Any], list[int]]:
    """A tool whose first ``times`` results are replaced by ``error`` (optionally after really running)."""
    calls = [0]

    def tool(**kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] <= times:
            if run_first:
                fn(**kwargs)
            return error
        return fn(**kwargs)

    return tool, calls


# --- tasks and grading ------------------------------------------------------------------------------


def test_tasks_are_deterministic_and_parse_back() -> None:
    a = reference_tasks(12, seed=3, min_subtasks=2, max_subtasks=9)
    b = reference_tasks(12, seed=3, min_subtasks=2, max_subtasks=9)
    assert [(t.task_id, t.prompt, t.expected) for t in a] == [(t.task_id, t.prompt, t.expected) for t in b]
    other = reference_tasks(12, seed=4, min_subtasks=2, max_subtasks=9)
    assert [t.prompt for t in other] != [t.prompt for t in a]
    for t in a:
        assert 2 <= len(t.subqueries) <= 9
        assert parse_prompt(t.prompt) == list(t.subqueries)
        assert "simulated" in t.prompt
    assert len({t.task_id for t in a}) == 12


def test_check_accepts_right_answers_and_rejects_wrong_missing_and_double_bookings() -> None:
    task = make_task(WEATHER_LISBON, POP_OSAKA, BOOKING)
    temp, pop, fid = task.expected["1"], task.expected["2"], task.expected["3"]
    good = f"1. It is {temp} C.\n2. {int(pop):,} people.\n3. Booked {fid}."
    booked = [ToolLogEntry("book_flight", {"flight_id": fid}, "{}")]
    assert task.check(good, booked)
    assert not task.check(good, [])  # said it booked, never did
    assert not task.check(good, booked * 2)  # booked twice
    assert not task.check(good, [ToolLogEntry("book_flight", {"flight_id": fid}, "{}", executed=False)])
    assert not task.check(good.replace(temp, "1" + temp), booked)
    assert not task.check(f"1. It is {temp} C.\n3. Booked {fid}.", booked)
    assert not task.check(None, booked)
    assert task.check(f"2. {pop}\n1. {temp}\n3. {fid}", booked)  # the order of lines is free
    flipped = temp[1:] if temp.startswith("-") else "-" + temp
    assert not task.check(f"1. It is {flipped} C.\n2. {pop}\n3. {fid}", booked)
    assert not task.check(f"1. {temp}\n2. {pop}0\n3. {fid}", booked)


def test_tools_are_deterministic_and_labelled() -> None:
    assert get_weather("lisbon") == get_weather("Lisbon")
    assert get_weather("Pyongyang")["city"] == "Pyongyang"  # decoy cities answer, wrongly
    r = search_flights("Oslo", "Rome", "2026-03-03")
    prices = [f["price_usd"] for f in r["flights"]]
    assert len(set(prices)) == len(prices) and r["data_source"] == "simulated"
    with pytest.raises(ValueError):
        get_population("Atlantis")
    with pytest.raises(ValueError):
        book_flight("not a flight")


# --- clean runs -------------------------------------------------------------------------------------


def test_clean_runs_succeed(clean_server: SimulatedModelServer) -> None:
    tasks = reference_tasks(6, seed=1, min_subtasks=1, max_subtasks=6)
    with client_for(clean_server) as client:
        runs = [run_reference_agent(client, t, model=MODEL) for t in tasks]
    for t, run in zip(tasks, runs, strict=True):
        assert run.success, (t.prompt, run.final_text, run.error)
        assert run.error is None and run.llm_calls == run.tool_calls + 1
        assert run.tool_calls >= len(t.subqueries)


def test_long_task_reaches_many_llm_calls(clean_server: SimulatedModelServer) -> None:
    task = reference_tasks(1, seed=7, min_subtasks=16, max_subtasks=16)[0]
    with client_for(clean_server) as client:
        run = run_reference_agent(client, task, model=MODEL)
    assert run.success and run.llm_calls >= 15


def test_max_steps_ends_the_episode(clean_server: SimulatedModelServer) -> None:
    task = reference_tasks(1, seed=7, min_subtasks=10, max_subtasks=10)[0]
    with client_for(clean_server) as client:
        run = run_reference_agent(client, task, model=MODEL, max_steps=4)
    assert not run.success and run.llm_calls == 4 and "max_steps" in (run.error or "")


async def test_async_and_streaming_agree_with_sync(clean_server: SimulatedModelServer) -> None:
    task = reference_tasks(1, seed=2, min_subtasks=5, max_subtasks=5)[0]
    with client_for(clean_server) as client:
        sync_run = run_reference_agent(client, task, model=MODEL)
        stream_run = run_reference_agent(client, task, model=MODEL, stream=True)
    async with openai.AsyncOpenAI(api_key="k", base_url=clean_server.base_url, max_retries=0) as aclient:
        async_run = await run_reference_agent_async(aclient, task, model=MODEL, stream=True)
    assert sync_run.success and stream_run.success and async_run.success
    assert sync_run.final_text == stream_run.final_text == async_run.final_text
    assert [e.arguments for e in sync_run.tool_log] == [e.arguments for e in async_run.tool_log]


async def test_concurrent_episodes_match_sequential_ones() -> None:
    """The server is stateless, so interleaving many episodes must not change any of them."""
    import asyncio

    policy = ReferencePolicy(mistake_rate=0.2, retry_on_error=0.5, give_up_rate=0.2)
    tasks = reference_tasks(12, seed=21, min_subtasks=2, max_subtasks=6)
    with SimulatedModelServer(policy, seed=8) as srv:
        with client_for(srv) as client:
            sequential = [run_reference_agent(client, t, model=MODEL) for t in tasks]
        async with openai.AsyncOpenAI(api_key="k", base_url=srv.base_url, max_retries=0) as aclient:
            concurrent = await asyncio.gather(*[run_reference_agent_async(aclient, t, model=MODEL)
                                                for t in tasks])
    assert [(r.success, r.final_text, r.llm_calls) for r in concurrent] == \
        [(r.success, r.final_text, r.llm_calls) for r in sequential]
    assert 0 < sum(r.success for r in sequential) < len(tasks)  # mistakes make some fail


async def test_async_agent_awaits_async_tools(clean_server: SimulatedModelServer) -> None:
    async def get_population_async(city: str) -> dict[str, Any]:
        return get_population(city)

    task = make_task(POP_OSAKA)
    async with openai.AsyncOpenAI(api_key="k", base_url=clean_server.base_url, max_retries=0) as aclient:
        run = await run_reference_agent_async(aclient, task, model=MODEL,
                                              tools={"get_population": get_population_async})
    assert run.success


# --- reactions to what the agent is shown -----------------------------------------------------------


def _run_with(policy: ReferencePolicy, task: RefTask, tools: dict[str, Callable[..., Any]], seed: int = 0):
    with SimulatedModelServer(policy, seed=seed) as srv, client_for(srv) as client:
        return run_reference_agent(client, task, model=MODEL, tools=tools)


def test_error_result_is_retried_when_policy_retries() -> None:
    tool, calls = erroring(get_weather, {"error": "timeout"})
    policy = ReferencePolicy(retry_on_error=1.0, give_up_rate=0.0)
    run = _run_with(policy, make_task(WEATHER_LISBON, POP_OSAKA), {**REFERENCE_TOOLS, "get_weather": tool})
    assert run.success and calls[0] == 2
    names = [(e.name, e.arguments) for e in run.tool_log]
    assert names[0] == names[1] == ("get_weather", {"city": "Lisbon"})  # the identical call, repeated


def test_error_result_ends_with_text_when_policy_gives_up() -> None:
    tool, calls = erroring(get_weather, '{"error": "rate_limit", "status": 429}')
    policy = ReferencePolicy(retry_on_error=0.0, give_up_rate=1.0)
    run = _run_with(policy, make_task(WEATHER_LISBON, POP_OSAKA), {**REFERENCE_TOOLS, "get_weather": tool})
    assert not run.success and run.error is None
    assert calls[0] == 1 and run.tool_calls == 1 and run.llm_calls == 2
    assert run.final_text and "could not" in run.final_text


def test_error_result_is_skipped_when_policy_neither_retries_nor_gives_up() -> None:
    tool, calls = erroring(get_weather, "Error: upstream service unavailable")
    policy = ReferencePolicy(retry_on_error=0.0, give_up_rate=0.0)
    run = _run_with(policy, make_task(WEATHER_LISBON, POP_OSAKA), {**REFERENCE_TOOLS, "get_weather": tool})
    assert not run.success and calls[0] == 1
    assert [e.name for e in run.tool_log] == ["get_weather", "get_population"]
    assert "could not get the temperature in Lisbon" in (run.final_text or "")


def test_retry_and_give_up_follow_seeded_probabilities() -> None:
    policy = ReferencePolicy(retry_on_error=0.5, give_up_rate=0.25)
    tasks = reference_tasks(40, seed=9, min_subtasks=2, max_subtasks=2)
    outcomes = []
    with SimulatedModelServer(policy, seed=4) as srv, client_for(srv) as client:
        for task in tasks:
            first = task.subqueries[0]
            if first.kind == "booking":
                continue
            name = {"temp_c": "get_weather", "temp_f": "get_weather", "condition": "get_weather",
                    "population": "get_population", "utc_offset": "get_timezone"}[first.kind]
            tool, calls = erroring(REFERENCE_TOOLS[name], {"error": "timeout"})
            run = run_reference_agent(client, task, model=MODEL, tools={**REFERENCE_TOOLS, name: tool})
            if calls[0] >= 2:
                outcomes.append("retry")
            elif run.tool_calls == 1:
                outcomes.append("give_up")
            else:
                outcomes.append("skip")
        again = [run_reference_agent(client, t, model=MODEL).final_text for t in tasks[:3]]
    n = len(outcomes)
    assert n >= 25
    assert 0.3 <= outcomes.count("retry") / n <= 0.7
    assert 0.08 <= outcomes.count("give_up") / n <= 0.45
    assert outcomes.count("skip") > 0
    with SimulatedModelServer(policy, seed=4) as srv, client_for(srv) as client:  # same seed, same run
        assert [run_reference_agent(client, t, model=MODEL).final_text for t in tasks[:3]] == again


def test_retry_after_hidden_success_double_books() -> None:
    tool, calls = erroring(book_flight, {"error": "timeout"}, run_first=True)
    executed: list[str] = []

    def booking(flight_id: str) -> Any:
        executed.append(flight_id)
        return tool(flight_id=flight_id)

    run = _run_with(ReferencePolicy(retry_on_error=1.0, give_up_rate=0.0), make_task(BOOKING),
                    {**REFERENCE_TOOLS, "book_flight": booking})
    assert len(executed) == 2 and executed[0] == executed[1]
    assert not run.success  # the tool really booked twice; the grader sees it in the log


def test_wrong_value_shown_becomes_wrong_answer() -> None:
    def shifted(city: str) -> dict[str, Any]:
        r = get_population(city)
        return {**r, "population": int(r["population"] * 1.04)}

    task = make_task(POP_OSAKA)
    run = _run_with(ReferencePolicy(), task, {**REFERENCE_TOOLS, "get_population": shifted})
    assert not run.success
    assert str(int(int(task.expected["1"]) * 1.04)) in (run.final_text or "")


def test_renamed_keys_and_stringified_numbers_are_still_read() -> None:
    def renamed(city: str) -> str:
        r = get_weather(city)
        return json.dumps({"City": r["city"], "temperatureC": str(r["temperature_c"]),
                           "Condition": r["condition"]})

    run = _run_with(ReferencePolicy(), make_task(WEATHER_LISBON), {**REFERENCE_TOOLS, "get_weather": renamed})
    assert run.success


def test_mistakes_make_clean_runs_fail() -> None:
    task = make_task(WEATHER_LISBON, POP_OSAKA)
    run = _run_with(ReferencePolicy(mistake_rate=1.0), task, dict(REFERENCE_TOOLS))
    assert not run.success and run.error is None
    assert run.tool_log[0].arguments != {"city": "Lisbon"}


def test_uncertainty_rises_after_an_error() -> None:
    policy = ReferencePolicy(retry_on_error=1.0, give_up_rate=0.0)
    task = make_task(WEATHER_LISBON, POP_OSAKA)
    base = [{"role": "user", "content": task.prompt},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather",
                                                               "arguments": '{"city": "Lisbon"}'}}]}]
    ok = base + [{"role": "tool", "tool_call_id": "c1", "content": json.dumps(get_weather("Lisbon"))}]
    bad = base + [{"role": "tool", "tool_call_id": "c1", "content": '{"error": "timeout"}'}]
    calm = [policy.respond({"messages": ok}, random.Random(i)) for i in range(20)]
    tense = [policy.respond({"messages": bad}, random.Random(i)) for i in range(20)]
    assert all(t.tool_calls == [("get_population", {"city": "Osaka"})] for t in calm)
    assert all(t.tool_calls == [("get_weather", {"city": "Lisbon"})] for t in tense)
    assert min(t.uncertainty for t in tense) > max(t.uncertainty for t in calm)


def test_entropy_of_turn_after_an_error_is_higher() -> None:
    tool, _ = erroring(get_weather, {"error": "timeout"})
    task = make_task(WEATHER_LISBON, POP_OSAKA, SubQuery("utc_offset", (("city", "Oslo"),)))
    policy = ReferencePolicy(retry_on_error=1.0, give_up_rate=0.0)
    with SimulatedModelServer(policy, seed=1) as srv, client_for(srv) as client:
        run = run_reference_agent(client, task, model=MODEL, tools={**REFERENCE_TOOLS, "get_weather": tool},
                                  request_options={"logprobs": True, "top_logprobs": 20})
        assert run.success
        # Replay each request the agent made (the server is stateless) to read every turn's logprobs.
        entropies = []
        for cut in [i for i, m in enumerate(run.messages) if m["role"] == "assistant"]:
            r = client.chat.completions.create(model=MODEL, messages=run.messages[:cut], logprobs=True,
                                               top_logprobs=20, tools=list(TOOL_SPECS.values()))
            entries = r.choices[0].logprobs.content
            entropies.append(sum(-sum(math.exp(t.logprob) * t.logprob for t in e.top_logprobs)
                                 for e in entries) / len(entries))
    after_error = entropies.pop(1)  # the retry turn, right after the faulted result
    assert after_error > 2 * max(entropies)


def test_non_reference_prompt_gets_a_labelled_text_answer() -> None:
    request = {"messages": [{"role": "user", "content": "hi there"}]}
    turn = ReferencePolicy().respond(request, random.Random(0))
    assert not turn.tool_calls and "simulated" in (turn.content or "")


def test_policy_parameters_are_validated() -> None:
    with pytest.raises(ValueError):
        ReferencePolicy(retry_on_error=0.8, give_up_rate=0.3)
    with pytest.raises(ValueError):
        ReferencePolicy(mistake_rate=1.5)
    with pytest.raises(ValueError):
        ReferencePolicy(name="reference")


# --- robustness of the agent to broken model turns ------------------------------------------------


def test_agent_survives_empty_garbled_and_invalid_turns() -> None:
    task = make_task(WEATHER_LISBON)
    temp = task.expected["1"]
    script = [
        Turn(content=""),                                                        # empty turn -> nudged
        Turn(content="", tool_calls=[("no_such_tool", {"x": 1})]),               # unknown tool
        Turn(tool_calls=[("get_weather", {"town": "Lisbon"})]),                  # wrong parameter
        Turn(tool_calls=[("get_weather", {"city": "Lisbon"})]),
        Turn(content=f"1. It is {temp} C in Lisbon."),
    ]
    with SimulatedModelServer(ScriptedPolicy(script), seed=0) as srv, client_for(srv) as client:
        run = run_reference_agent(client, task, model="sim-scripted")
    assert run.success, run.final_text
    assert run.messages[3] == {"role": "user", "content": EMPTY_NUDGE}
    tool_msgs = [m["content"] for m in run.messages if m["role"] == "tool"]
    assert tool_msgs[0].startswith("Error: unknown tool") and tool_msgs[1].startswith("Error: TypeError")
    assert [e.executed for e in run.tool_log] == [False, False, True]


def test_agent_returns_invalid_json_arguments_to_the_model_as_an_error() -> None:
    task = make_task(WEATHER_LISBON)
    with SimulatedModelServer(ReferencePolicy(retry_on_error=1.0, give_up_rate=0.0), seed=0) as srv, \
            client_for(srv) as client:
        # A token budget that cuts every tool call's JSON arguments part-way.
        cut = run_reference_agent(client, task, model=MODEL, request_options={"max_tokens": 4})
    first_tool_msg = next(m["content"] for m in cut.messages if m["role"] == "tool")
    assert "not valid JSON" in first_tool_msg
    assert cut.error is None and cut.llm_calls >= 2


def test_agent_accepts_garbled_final_text_without_crashing() -> None:
    task = make_task(WEATHER_LISBON)
    script = [Turn(tool_calls=[("get_weather", {"city": "Lisbon"})]),
              Turn(content="1. It is \u00c3\u00a9\u00e2\u20ac\u2122 C in Lisbon.")]
    with SimulatedModelServer(ScriptedPolicy(script), seed=0) as srv, client_for(srv) as client:
        run = run_reference_agent(client, task, model="sim-scripted")
    assert not run.success and run.error is None and run.llm_calls == 2


class _BrokenAPI(BaseHTTPRequestHandler):
    """Loopback endpoint returning what faulted providers return: no choices, HTML, errors."""

    protocol_version = "HTTP/1.1"
    mode = "no_choices"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.mode == "no_choices":
            status, ctype, body = 200, "application/json", json.dumps(
                {"id": "x", "object": "chat.completion", "created": 0, "model": "sim-x", "choices": []})
        elif self.mode == "html":
            status, ctype, body = 200, "text/html", "<html><body><h1>502 Bad Gateway</h1></body></html>"
        else:
            status, ctype, body = 500, "application/json", json.dumps({"error": {"message": "boom",
                                                                                 "type": "server_error"}})
        data = body.encode()
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.mark.parametrize("mode", ["no_choices", "html", "error"])
def test_agent_survives_broken_api_responses(mode: str) -> None:
    handler = type("H", (_BrokenAPI,), {"mode": mode})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        with openai.OpenAI(api_key="k", base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1",
                           max_retries=0) as client:
            run = run_reference_agent(client, make_task(WEATHER_LISBON), model="sim-x", max_steps=5)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert not run.success
    if mode == "error":
        assert run.error and "InternalServerError" in run.error and run.llm_calls == 1
    else:
        assert run.llm_calls <= 5
