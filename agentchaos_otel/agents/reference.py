"""The bundled reference agent as a campaign adapter (entry point ``reference``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentchaos_otel.campaign.agents import (
    DEFAULT_SUBTASKS,
    TOP_LOGPROBS,
    AgentOptions,
    AgentSetup,
    count_tasks,
    tool_injector_wrap,
)
from agentchaos_otel.campaign.runner import EpisodeOutcome, EpisodeSpec

# The reference agent's own model-call limit when --step-cap is not given.
REFERENCE_MAX_STEPS = 30
REFERENCE_MISTAKE_RATE = 0.05


def reference_task_id(task_id: str, subtasks: tuple[int, int]) -> str:
    """The stored task id: generated ids say nothing of the sub-query range, so a non-default
    range is appended. Otherwise a long-task campaign written into a file that already holds
    the default short tasks would count them as finished (the resume key is the task id) and skip."""
    return task_id if subtasks == DEFAULT_SUBTASKS else f"{task_id}-k{subtasks[0]}-{subtasks[1]}"


def reference_agent(tasks: str, seed: int = 0, conditions: list[str] | None = None,
                    options: AgentOptions | None = None) -> AgentSetup:
    from agentchaos_otel.sim.reference_agent import ReferencePolicy, run_reference_agent
    from agentchaos_otel.sim.reference_tasks import REFERENCE_TOOLS, reference_tasks

    opts = options or AgentOptions()
    n = 200 if tasks == "all" else count_tasks(tasks)  # generated tasks: "all" = the study's 200
    lo, hi = opts.subtasks
    by_id = {reference_task_id(t.task_id, opts.subtasks): t
             for t in reference_tasks(n, seed, min_subtasks=lo, max_subtasks=hi)}
    request_options = {"logprobs": True, "top_logprobs": TOP_LOGPROBS} if opts.logprobs else None
    max_steps = opts.step_cap or max(REFERENCE_MAX_STEPS, 3 * hi)  # long tasks must not hit the cap clean

    def make(client: Any, model: str) -> Callable[[EpisodeSpec], Any]:
        from agentchaos_otel.campaign.guarded import GuardedClients, idempotency_factory

        clients = GuardedClients(client, opts.guards)

        def run_one(spec: EpisodeSpec) -> EpisodeOutcome:
            task = by_id[spec.task_id]
            use, is_guarded = clients.for_label(spec.condition)
            guard = idempotency_factory()() if is_guarded and "idempotency" in opts.guards else None
            run = run_reference_agent(use, task, model=model,
                                      tools=tool_injector_wrap(REFERENCE_TOOLS, spec, guard),
                                      max_steps=max_steps, request_options=request_options)
            return EpisodeOutcome(bool(run.success), run.error)
        return run_one

    policy = ReferencePolicy(mistake_rate=0.0 if opts.perfect else REFERENCE_MISTAKE_RATE)
    return AgentSetup("reference", list(by_id), policy, make, opens_episode=False)
