"""One cell of the framework matrix, run in a process of its own: ``python -m tests.support.framework_case``.

Arguments: framework, mode, store path, base URL of the simulated server. Prints one JSON line:
what the agent really did (tool runs, final texts per task), for the test to hold the store to.

Modes (each task is one episode; ``TASKS`` gives each its plan):

- ``episode``: ``configure()`` then the agent, each task inside ``episode()``;
- ``own-tracing``: as ``episode``, with the framework's own tracing on;
- ``early``: the agent (and its SDK client) built before ``configure()``;
- ``zero-code``: no code of ours at all: the launcher ``opentelemetry-instrument`` with
  ``AGENTCHAOS_*`` variables, each task under the application's own root span, whose status
  (OK or ERROR) is the outcome. The process plan applies to every task: ``AGENTCHAOS_PLAN``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tests.support.framework_agents import TOOL_CALLS, build

# (task id, plan): a rate limit the SDK's retry recovers from, then an empty final answer.
TASKS = (("t-429", "http_429"), ("t-empty", "llm_empty_single"))
ZERO_CODE_PLAN = "http_429"  # every task of the process: the rate limit the SDK retries


def succeeded(text: str, runs_before: int, runs_after: int) -> bool:
    """The task's own check: the answer came and both tools ran."""
    return "DONE" in text and runs_after - runs_before == TOOL_CALLS


def main(framework: str, mode: str, db: str, base_url: str) -> dict[str, Any]:
    out: dict[str, Any] = {"tasks": []}
    if mode == "zero-code":
        from opentelemetry import trace
        from opentelemetry.trace import Status, StatusCode

        agent = build(framework, base_url, own_tracing=False)
        tracer = trace.get_tracer("framework-matrix")
        for task, _ in TASKS:
            with tracer.start_as_current_span(f"task {task}") as root:
                before = len(agent.tool_runs)
                text = _run(agent, task)
                ok = succeeded(text, before, len(agent.tool_runs))
                root.set_status(Status(StatusCode.OK if ok else StatusCode.ERROR))
            out["tasks"].append({"task": task, "success": ok, "tools": len(agent.tool_runs) - before})
        trace.get_tracer_provider().force_flush()  # type: ignore[attr-defined]
        return out
    import agentchaos_otel

    agent = build(framework, base_url, own_tracing=mode == "own-tracing") if mode == "early" else None
    handle = agentchaos_otel.configure(db=db, metrics=False)
    if agent is None:
        agent = build(framework, base_url, own_tracing=mode == "own-tracing")
    for task, plan in TASKS:
        with agentchaos_otel.episode(task, plan=plan, simulated=True) as ep:
            before = len(agent.tool_runs)
            text = _run(agent, task)
            ok = succeeded(text, before, len(agent.tool_runs))
            ep.set_outcome(ok)
        out["tasks"].append({"task": task, "success": ok, "tools": len(agent.tool_runs) - before})
    handle.shutdown()
    return out


def _run(agent: Any, task: str) -> str:
    try:
        return agent.run(f"What is the weather in Paris and Rome? ({task})")
    except Exception as exc:  # a framework that raises on an empty answer: the task failed
        return f"error: {type(exc).__name__}"


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:5])))
