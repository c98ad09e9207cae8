"""The simulated BFCL policy on hand-built conversations (no server needed)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from agentchaos_otel.agents.bfcl import UNAVAILABLE_REASON, bfcl_available

pytestmark = pytest.mark.skipif(not bfcl_available(), reason=UNAVAILABLE_REASON)

if bfcl_available():
    from agentchaos_otel.agents.bfcl.sim_policy import BfclSimPolicy, FaultReactions, MistakeRates, classify_result
    from agentchaos_otel.agents.bfcl.tasks import BfclTask, get_task, load_tasks


def _request(task: BfclTask, turn: int, history: list[tuple[str, dict[str, Any], str]]) -> dict[str, Any]:
    """A request as the agent sends it: earlier turns answered, then this turn's calls so far."""
    messages: list[dict[str, Any]] = []
    for t in range(turn + 1):
        messages.extend(task.turn_messages(t))
        if t < turn:
            messages.append({"role": "assistant", "content": "(simulated) done"})
    for i, (name, args, result) in enumerate(history):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": result})
    return {"model": "sim-bfcl", "messages": messages, "tools": task.tools_at(turn)}


@pytest.fixture(scope="module")
def perfect() -> BfclSimPolicy:
    return BfclSimPolicy(load_tasks(), mistakes=MistakeRates(), reactions=FaultReactions.none())


def test_result_classification() -> None:
    assert classify_result('{"error": "timeout"}') == "timeout"
    assert classify_result('{"error": "rate_limit", "status": 429}') == "rate_limit"
    assert classify_result("{}") == "empty" and classify_result("") == "empty"
    assert classify_result('{"current_working_directory": "doc') == "malformed"
    assert classify_result('{"error": "cd: x: No such directory"}') == "error"
    assert classify_result("Error during execution: boom") == "error"
    assert classify_result("null") == "ok"  # a void call's normal answer
    assert classify_result("{'result': mpf('2.0')}") == "ok"  # BFCL's str() fallback, complete
    assert classify_result('{"current_working_directory": "document"}') == "ok"


def test_follows_the_turns_ground_truth_then_answers_with_text(perfect: BfclSimPolicy) -> None:
    task = get_task("multi_turn_base_0")
    rng = random.Random(0)
    history: list[tuple[str, dict[str, Any], str]] = []
    for call in task.ground_truth_calls(0):
        turn = perfect.respond(_request(task, 0, history), rng)
        assert turn.tool_calls == [(call.name, call.args)]
        history.append((call.name, call.args, '{"ok": true}'))
    final = perfect.respond(_request(task, 0, history), rng)
    assert not final.tool_calls and final.content and "(simulated)" in final.content
    second = perfect.respond(_request(task, 1, []), rng)
    assert second.tool_calls[0][0] == task.ground_truth_calls(1)[0].name


def test_tasks_sharing_an_opening_are_told_apart_by_later_turns(perfect: BfclSimPolicy) -> None:
    a, b = get_task("multi_turn_base_40"), get_task("multi_turn_base_43")
    assert a.turn_messages(0) == b.turn_messages(0)
    found_a = perfect.identify(_request(a, 1, []))
    found_b = perfect.identify(_request(b, 1, []))
    assert found_a is not None and found_b is not None
    assert (found_a[0].id, found_a[1]) == ("multi_turn_base_40", 1)
    assert (found_b[0].id, found_b[1]) == ("multi_turn_base_43", 1)
    unknown = {"model": "sim-bfcl", "messages": [{"role": "user", "content": "hello"}]}
    assert "(simulated)" in (perfect.respond(unknown, random.Random(0)).content or "")


def test_retries_a_timed_out_call_and_gives_up_after_an_empty_result() -> None:
    task = get_task("multi_turn_base_0")
    first = task.ground_truth_calls(0)[0]
    retrying = BfclSimPolicy([task], mistakes=MistakeRates(),
                             reactions=FaultReactions(retry={"timeout": 1.0}, abandon={}, max_retries=2))
    history = [(first.name, first.args, '{"error": "timeout"}')]
    turn = retrying.respond(_request(task, 0, history), random.Random(0))
    assert turn.tool_calls == [(first.name, first.args)]
    # Bounded: after max_retries identical calls it moves on to the next planned call.
    history = history * 3
    nxt = retrying.respond(_request(task, 0, history), random.Random(0))
    assert nxt.tool_calls and nxt.tool_calls[0][0] == task.ground_truth_calls(0)[1].name

    quitting = BfclSimPolicy([task], mistakes=MistakeRates(),
                             reactions=FaultReactions(retry={}, abandon={"empty": 1.0}))
    gave_up = quitting.respond(_request(task, 0, [(first.name, first.args, "{}")]), random.Random(0))
    assert not gave_up.tool_calls and "(simulated)" in (gave_up.content or "")


def test_content_carrying_faults_and_genuine_empty_answers_are_not_reacted_to() -> None:
    task = get_task("multi_turn_base_0")
    calls = task.ground_truth_calls(0)
    eager = BfclSimPolicy([task], mistakes=MistakeRates(),
                          reactions=FaultReactions(retry=dict.fromkeys(("timeout", "empty", "error"), 1.0)))
    renamed = [(calls[0].name, calls[0].args, '{"currentWorkingDirectory": "document"}')]
    assert eager.respond(_request(task, 0, renamed), random.Random(0)).tool_calls[0][0] == calls[1].name
    # mkdir answers null on success: that is what the API does, not an anomaly.
    genuine = renamed + [(calls[1].name, calls[1].args, "null")]
    assert eager.respond(_request(task, 0, genuine), random.Random(0)).tool_calls[0][0] == calls[2].name


def test_uncertainty_rises_after_an_anomaly_and_decays() -> None:
    task = get_task("multi_turn_base_0")
    calls = task.ground_truth_calls(0)
    policy = BfclSimPolicy([task], mistakes=MistakeRates(), reactions=FaultReactions(retry={}, abandon={}))
    rng = random.Random(0)
    calm = policy.respond(_request(task, 0, [(calls[0].name, calls[0].args, '{"ok": 1}')]), rng)
    hit = [(calls[0].name, calls[0].args, '{"error": "rate_limit", "status": 429}')]
    shaken = policy.respond(_request(task, 0, hit), rng)
    later = policy.respond(_request(task, 0, hit + [(calls[1].name, calls[1].args, "null")]), rng)
    assert calm.uncertainty < later.uncertainty < shaken.uncertainty


def test_mistakes_are_seeded_and_per_turn_stable() -> None:
    tasks = load_tasks()[:30]
    skipper = BfclSimPolicy(tasks, seed=3, mistakes=MistakeRates(skip=1.0))
    assert all(skipper.plan(t, 0) == [] for t in tasks)
    noisy = BfclSimPolicy(tasks, seed=3, mistakes=MistakeRates(skip=0.3, wrong_arg=0.3, extra=0.3))
    again = BfclSimPolicy(tasks, seed=3, mistakes=MistakeRates(skip=0.3, wrong_arg=0.3, extra=0.3))
    other = BfclSimPolicy(tasks, seed=4, mistakes=MistakeRates(skip=0.3, wrong_arg=0.3, extra=0.3))

    def sig(p: BfclSimPolicy) -> list[list[tuple[str, str]]]:
        return [[(c.name, json.dumps(c.args, sort_keys=True)) for c in p.plan(t, 0)] for t in tasks]

    assert sig(noisy) == sig(again)
    assert sig(noisy) != sig(other)
    gt = [[(c.name, json.dumps(c.args, sort_keys=True)) for c in t.ground_truth_calls(0)] for t in tasks]
    assert sig(noisy) != gt
    with pytest.raises(ValueError):
        BfclSimPolicy(tasks, name="bfcl")
