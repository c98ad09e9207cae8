"""Hand-built episode corpora shared by the report tests, plus checks of the builder itself.

The measures are pure functions of EpisodeTrace lists, so tests build traces directly with a
known ground truth (which steps were faulted, which calls were retried) and check that each
measure recovers it.
"""

from __future__ import annotations

import random
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel.records import EpisodeTrace, StepRecord

TOOL_KINDS = ("timeout", "rate_limit", "empty", "malformed_json", "truncated", "key_rename", "wrong_value")


def llm(tool_calls: int = 1, **attrs: Any) -> dict[str, Any]:
    return {"kind": "llm", "tool_calls": tool_calls, **attrs}


def tool(name: str = "ls", args: str = "a", fault: str | None = None, changed: bool = True,
         **attrs: Any) -> dict[str, Any]:
    return {"kind": "tool", "name": name, "args": args, "fault": fault, "changed": changed, **attrs}


def episode(task: str, condition: str, seed: int, success: bool | None, steps: list[dict[str, Any]],
            *, error: str | None = None, crashed: bool | None = None, simulated: bool = False,
            agent: str = "ref") -> EpisodeTrace:
    records = []
    for i, s in enumerate(steps):
        attrs: dict[str, Any] = {A.STEP: i, A.TASK_ID: task}
        if s["kind"] == "llm":
            attrs[A.RESPONSE_TOOL_CALL_COUNT] = s["tool_calls"]
            name = "chat sim"
            if s.get("fault"):
                attrs.update({A.FAULT_INJECTED: True, A.FAULT_TYPE: s["fault"], A.FAULT_TARGET: "content",
                              A.FAULT_CHANGED: s.get("changed", True)})
        else:
            attrs[A.GEN_AI_TOOL_NAME] = s["name"]
            if s["args"] is not None:
                attrs[A.TOOL_ARGS_DIGEST] = f"d-{s['args']}"
            name = f"execute_tool {s['name']}"
            if s["fault"]:
                attrs.update({A.FAULT_INJECTED: True, A.FAULT_TYPE: s["fault"], A.FAULT_TARGET: "tool_result",
                              A.FAULT_CHANGED: s["changed"]})
        records.append(StepRecord(step=i, span_id=f"{task}-{condition}-{seed}-{i}", kind=s["kind"], name=name,
                                  start_ns=i * 1000, end_ns=i * 1000 + 500, attributes=attrs))
    ep_attrs: dict[str, Any] = {A.GEN_AI_AGENT_NAME: agent}
    if error:
        ep_attrs[A.EPISODE_ERROR] = error
    if crashed or (crashed is None and error):
        ep_attrs[A.EPISODE_CRASHED] = True
    if simulated:
        ep_attrs[A.SIMULATED] = True
    return EpisodeTrace(trace_id=f"t-{task}-{condition}-{seed}", task_id=task, steps=tuple(records),
                        success=success, condition=condition, seed=seed, attributes=ep_attrs)


# Per-fault drop in success probability the synthetic agent is built with (fractions).
HARM = {"rate_limit": 0.30, "timeout": 0.25, "empty": 0.2, "malformed_json": 0.0, "truncated": 0.0,
        "key_rename": 0.0, "wrong_value": 0.0}


def synthetic_study(n_tasks: int = 60, seeds: tuple[int, ...] = (0, 1), seed: int = 0,
                    simulated: bool = False) -> list[EpisodeTrace]:
    """A seeded corpus where only the content-free faults hurt, and timeouts trigger retries.

    Each episode is 5-12 moves (fixed per task) of (LLM call,
                                                    tool call); the task has a base success probability;
    faulted conditions fault a tool step with rate 0.3 (independent) or in a burst (bursty).
    """
    rng = random.Random(seed)
    base = {f"task{t}": (rng.uniform(0.5, 0.9), rng.randint(5, 12)) for t in range(n_tasks)}
    out = []
    for task, (p, moves) in base.items():
        for s in seeds:
            for cond in ("none", "independent", "bursty"):
                erng = random.Random(f"{seed}:{task}:{s}:{cond}")
                if cond == "none":
                    flags = [False] * moves
                elif cond == "independent":
                    flags = [erng.random() < 0.25 for _ in range(moves)]
                else:
                    start = erng.randrange(moves)
                    flags = [start <= i < start + 3 for i in range(moves)]
                steps: list[dict[str, Any]] = []
                prob = p
                for i, f in enumerate(flags):
                    kind = erng.choice(TOOL_KINDS) if f else None
                    steps.append(llm(1))
                    steps.append(tool("op", f"a{i}", fault=kind))
                    if kind:
                        prob -= HARM[kind]
                    if kind == "timeout":  # the agent retries the identical call
                        steps.append(llm(1))
                        steps.append(tool("op", f"a{i}"))
                steps.append(llm(0))
                success = erng.random() < max(prob, 0.02)
                out.append(episode(task, cond, s, success, steps, simulated=simulated))
    return out


def test_builder_ground_truth_round_trips() -> None:
    ep = episode("t", "independent", 0, False,
                 [llm(), tool("a", "x", fault="timeout"), llm(), tool("a", "x", fault="empty", changed=False),
                  llm(0)])
    assert [f.fault_type for f in ep.faults()] == ["timeout"]
    assert ep.triggered
    assert [s.kind for s in ep.steps] == ["llm", "tool", "llm", "tool", "llm"]


def test_synthetic_study_is_seeded() -> None:
    a, b = synthetic_study(n_tasks=5, seed=3), synthetic_study(n_tasks=5, seed=3)
    assert [(e.trace_id, e.success, len(e.steps)) for e in a] == [(e.trace_id, e.success,
                                                                   len(e.steps)) for e in b]
    c = synthetic_study(n_tasks=5, seed=4)
    assert [e.success for e in a] != [e.success for e in c]
