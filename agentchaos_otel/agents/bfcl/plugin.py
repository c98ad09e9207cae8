"""The BFCL v4 multi-turn harness as a campaign adapter (entry point ``bfcl``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentchaos_otel.campaign.agents import AgentOptions, AgentSetup, count_tasks
from agentchaos_otel.campaign.runner import EpisodeSpec
from agentchaos_otel.errors import UsageError
from agentchaos_otel.plans.schedule import TOOL_CONDITIONS


def bfcl_agent(tasks: str, seed: int = 0, conditions: list[str] | None = None,
               options: AgentOptions | None = None) -> AgentSetup:
    from agentchaos_otel.agents.bfcl import UNAVAILABLE_REASON, bfcl_available

    if not bfcl_available():
        raise ValueError(UNAVAILABLE_REASON)
    from agentchaos_otel.agents.bfcl.agent import DEFAULT_STEP_CAP
    from agentchaos_otel.agents.bfcl.episode import run_bfcl_episode
    from agentchaos_otel.agents.bfcl.sim_policy import BfclSimPolicy, MistakeRates
    from agentchaos_otel.agents.bfcl.tasks import load_tasks, resolve_task_ids

    opts = options or AgentOptions()
    step_cap = opts.step_cap or DEFAULT_STEP_CAP

    every = [t.id for t in load_tasks()]
    ids = every if tasks == "all" else (every[:count_tasks(tasks)] if tasks.isdigit() else resolve_task_ids(tasks))
    unknown = sorted(set(ids) - set(every))
    if unknown:
        raise UsageError(f"unknown BFCL task id(s): {', '.join(unknown[:5])}")

    def make(client: Any, model: str) -> Callable[[EpisodeSpec], Any]:
        from agentchaos_otel.campaign.guarded import GuardedClients, idempotency_factory, split_label

        clients = GuardedClients(client, opts.guards)

        def run_one(spec: EpisodeSpec) -> Any:
            # Tool conditions go to the tool-result injector; anything else names the LLM plan.
            # The condition is passed as the episode's label either way, so an LLM-plan episode
            # is stored under its plan's name, never as the clean baseline.
            base, is_guarded = split_label(spec.condition)
            plan = None if base in TOOL_CONDITIONS else base
            use, _ = clients.for_label(spec.condition)
            extra: dict[str, Any] = {}
            if is_guarded:
                extra = {"label": spec.condition, "guards": opts.guards,
                         "idempotency": idempotency_factory() if "idempotency" in opts.guards else None}
            return run_bfcl_episode(spec.task_id, condition=base, plan=plan, seed=spec.seed,
                                    model=model, client=use, step_cap=step_cap, logprobs=opts.logprobs, **extra)
        return run_one

    policy = BfclSimPolicy(load_tasks(ids=ids), seed=seed, mistakes=MistakeRates() if opts.perfect else None)
    return AgentSetup("bfcl", ids, policy, make, opens_episode=True)
