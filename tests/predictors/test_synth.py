"""Hand-built episodes for the predictor tests, and checks that the builder itself is sound.

The synthetic corpus is labelled simulated: outcomes come from a seeded logistic rule in which
visible tool errors and retries raise the failure probability and failing episodes carry slightly
higher token entropy. It exists to exercise the pipeline, never as evidence about a real agent.
"""

from __future__ import annotations

import math
import random
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel.records import EpisodeTrace, StepRecord

MS = 1_000_000


def llm_step(step: int, *, tool_calls: int = 1, content_length: int = 0, finish: str | None = None,
             input_tokens: int = 500, output_tokens: int = 30, duration_ms: float = 200.0,
             status: str = "UNSET", error_marker: str = "", tool_names: list[str] | None = None,
             args_digest: str | None = "d0", entropy: dict[str, float] | None = None,
             extra: dict[str, Any] | None = None) -> StepRecord:
    attrs: dict[str, Any] = {
        A.GEN_AI_OPERATION_NAME: A.OP_CHAT,
        A.RESPONSE_TOOL_CALL_COUNT: tool_calls,
        A.RESPONSE_CONTENT_LENGTH: content_length,
        A.RESPONSE_ERROR_MARKER: error_marker,
        A.GEN_AI_RESPONSE_FINISH_REASONS: [finish or ("tool_calls" if tool_calls else "stop")],
        A.GEN_AI_USAGE_INPUT_TOKENS: input_tokens,
        A.GEN_AI_USAGE_OUTPUT_TOKENS: output_tokens,
        A.STEP: step,
    }
    if tool_calls:
        attrs[A.RESPONSE_TOOL_NAMES] = tool_names or ["tool"]
        if args_digest is not None:
            attrs[A.RESPONSE_TOOL_ARGS_DIGEST] = args_digest
    if entropy:
        attrs.update(entropy)
    attrs.update(extra or {})
    start = step * 1000 * MS
    return StepRecord(step=step, span_id=f"{step:016x}", kind="llm", name="chat sim-model",
                      start_ns=start, end_ns=start + int(duration_ms * MS), status_code=status,
                      attributes=attrs)


def tool_step(step: int, name: str = "tool", args_digest: str | None = "d0", *, error: bool = False,
              empty: bool = False, state_changed: bool | None = None, duration_ms: float = 5.0,
              status: str = "UNSET", extra: dict[str, Any] | None = None) -> StepRecord:
    attrs: dict[str, Any] = {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: name,
                             A.TOOL_RESULT_IS_ERROR: error, A.TOOL_RESULT_EMPTY: empty, A.STEP: step}
    if args_digest is not None:
        attrs[A.TOOL_ARGS_DIGEST] = args_digest
    if state_changed is not None:
        attrs[A.TOOL_STATE_CHANGED] = state_changed
    attrs.update(extra or {})
    start = step * 1000 * MS
    return StepRecord(step=step, span_id=f"{step:016x}", kind="tool", name=A.tool_span_name(name),
                      start_ns=start, end_ns=start + int(duration_ms * MS), status_code=status,
                      attributes=attrs)


def entropy_attrs(mean: float, *, peak: float | None = None, last: float | None = None,
                  mass: float = 0.99997, tokens: int = 20) -> dict[str, float]:
    return {A.LOGPROBS_ENTROPY_MEAN: mean, A.LOGPROBS_ENTROPY_MAX: peak if peak is not None else mean * 3,
            A.LOGPROBS_ENTROPY_LAST: last if last is not None else mean, A.LOGPROBS_TOP_MASS: mass,
            A.LOGPROBS_TOKENS: tokens}


def episode(steps: list[StepRecord], success: bool | None = True, task_id: str = "t0", trace_id: str = "a",
            simulated: bool = True) -> EpisodeTrace:
    return EpisodeTrace(trace_id=trace_id, task_id=task_id, steps=tuple(steps), success=success,
                        attributes={A.SIMULATED: True} if simulated else {})


TOOLS = ("get_balance", "list_files", "mkdir", "post_tweet", "buy_ticket", "cd", "touch")
FAULT_RATE = {"none": 0.0, "independent": 0.16, "bursty": 0.16}
VISIBLE_FAULTS = ("timeout", "rate_limit", "empty")
ALL_FAULTS = VISIBLE_FAULTS + ("malformed_json", "truncated", "key_rename", "wrong_value")


def synthetic_episode(task: int, seed: int, condition: str, *, logprobs: bool = True) -> EpisodeTrace:
    """One simulated episode whose outcome depends on visible errors, retries and entropy."""
    rng = random.Random(f"{task}/{seed}/{condition}")
    difficulty = random.Random(f"task{task}").gauss(0.0, 0.8)
    turns = rng.randint(3, 8)
    steps: list[StepRecord] = []
    errors = retries = 0
    hesitation = max(0.0, rng.gauss(0.0, 1.0) + 0.6 * difficulty)
    burst = False
    prev_call: tuple[str, str] | None = None
    for turn in range(turns):
        if prev_call is not None and steps[-1].get(A.TOOL_RESULT_IS_ERROR) and rng.random() < 0.35:
            name, args = prev_call
            retries += 1
        else:
            name, args = rng.choice(TOOLS), f"a{rng.randrange(10_000)}"
        ent = None
        if logprobs:
            m = max(0.005, rng.gauss(0.05 + 0.02 * hesitation + 0.01 * errors, 0.015))
            ent = entropy_attrs(m, mass=1 - abs(rng.gauss(3e-5, 1e-5)), tokens=rng.randint(5, 40))
        steps.append(llm_step(len(steps), tool_names=[name], args_digest=args, entropy=ent,
                              input_tokens=400 + 150 * turn, duration_ms=rng.uniform(100, 400)))
        if condition == "bursty":
            burst = rng.random() < (0.8 if burst else 0.05)
            faulted = burst and rng.random() < 0.8
        else:
            faulted = rng.random() < FAULT_RATE[condition]
        kind = rng.choice(ALL_FAULTS) if faulted else None
        visible_error = kind in ("timeout", "rate_limit")
        errors += visible_error
        extra = {A.FAULT_INJECTED: True, A.FAULT_TYPE: kind, A.FAULT_CHANGED: True} if faulted else {}
        steps.append(tool_step(len(steps), name, args, error=visible_error, empty=kind == "empty",
                               extra=extra))
        prev_call = (name, args)
    z = -0.9 + difficulty + 0.9 * errors + 0.8 * retries + 0.7 * hesitation
    success = rng.random() >= 1.0 / (1.0 + math.exp(-z))
    ent = entropy_attrs(max(0.005, rng.gauss(0.05 + 0.02 * hesitation, 0.015))) if logprobs else None
    steps.append(llm_step(len(steps), tool_calls=0, content_length=rng.randint(20, 200), entropy=ent))
    return EpisodeTrace(trace_id=f"{task:04d}-{seed}-{condition}", task_id=f"task{task:03d}",
                        steps=tuple(steps), success=success, condition=condition, seed=seed,
                        attributes={A.SIMULATED: True})


def synthetic_corpus(n_tasks: int = 60, seeds: int = 2, *, logprobs: bool = True) -> list[EpisodeTrace]:
    return [synthetic_episode(t, s, c, logprobs=logprobs)
            for t in range(n_tasks) for s in range(seeds) for c in ("none", "independent", "bursty")]


def test_synthetic_corpus_is_deterministic_and_mixed() -> None:
    a = synthetic_corpus(10, 1)
    b = synthetic_corpus(10, 1)
    assert a == b
    outcomes = {e.success for e in a}
    assert outcomes == {True, False}
    assert all(e.steps[-1].get(A.RESPONSE_TOOL_CALL_COUNT) == 0 for e in a)


def test_synthetic_corpus_has_ground_truth_only_on_faulted_tool_steps() -> None:
    eps = synthetic_corpus(20, 1)
    faulted = [s for e in eps for s in e.steps if s.get(A.FAULT_INJECTED)]
    assert faulted and all(s.kind == "tool" for s in faulted)
    assert not any(A.is_ground_truth(k) for e in eps for s in e.blind().steps for k in s.attributes)
