"""The official multi-turn checker behind ``grade``: verdicts and its instance cache."""

from __future__ import annotations

import pytest

from agentchaos_otel.agents.bfcl import UNAVAILABLE_REASON, bfcl_available

pytestmark = pytest.mark.skipif(not bfcl_available(), reason=UNAVAILABLE_REASON)

if bfcl_available():
    from agentchaos_otel.agents.bfcl.grade import cached_instance_count, grade
    from agentchaos_otel.agents.bfcl.tasks import get_task


def _gt(task_id: str) -> list[list[list[str]]]:
    return [[[c] for c in turn] for turn in get_task(task_id).ground_truth]


def test_ground_truth_passes_and_a_skipped_call_fails() -> None:
    task = get_task("multi_turn_base_0")
    assert grade(task, _gt(task.id)).valid
    executed = _gt(task.id)
    del executed[0][2]  # the mv of the first turn never happened
    verdict = grade(task, executed)
    assert not verdict.valid
    assert verdict.error_type == "multi_turn:instance_state_mismatch"


def test_a_state_changing_call_applied_twice_fails() -> None:
    task = get_task("multi_turn_base_4")  # posts a tweet
    executed = _gt(task.id)
    turn = next(i for i, t in enumerate(executed) if any("post_tweet" in c[0] for c in t))
    step = next(s for s in executed[turn] if "post_tweet" in s[0])
    executed[turn].append(list(step))
    assert not grade(task, executed).valid


def test_missing_turns_are_a_force_termination() -> None:
    task = get_task("multi_turn_base_1")
    verdict = grade(task, _gt(task.id)[:-1])
    assert not verdict.valid and verdict.error_type == "multi_turn:force_terminated"


def test_empty_turn_fails_and_empty_steps_are_ignored() -> None:
    task = get_task("multi_turn_base_1")
    executed = _gt(task.id)
    executed[1] = [[], *executed[1], []]
    assert grade(task, executed).valid
    executed[2] = [[]]
    assert grade(task, executed).error_type == "multi_turn:empty_turn_model_response"


def test_grading_twice_does_not_share_checker_state() -> None:
    """The checker caches instances by model name; a shared name would replay on old state."""
    task = get_task("multi_turn_base_4")
    executed = _gt(task.id)
    verdicts = [grade(task, executed).valid for _ in range(3)]
    assert verdicts == [True, True, True]
    assert cached_instance_count() == 0
