"""What a campaign needs from an agent, and how agents are found.

The runner is generic over ``run_one``; an agent adapter says which tasks it has, which
simulated policy stands in for a model, and how an episode is started. Adapters plug in through
the ``agentchaos_otel.agents`` entry-point group (the bundled reference agent and the BFCL
harness register there, as any user's agent can), so the campaign layer imports no agent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from agentchaos_otel.campaign.runner import CLEAN, EpisodeSpec
from agentchaos_otel.errors import UsageError, unknown
from agentchaos_otel.plans.schedule import TOOL_CONDITIONS

ENTRY_POINT_GROUP = "agentchaos_otel.agents"
# Top-k token logprobs asked for when ``--logprobs`` is on: the entropy features of the failure
# predictors read them from the stored LLM spans.
TOP_LOGPROBS = 20
DEFAULT_SUBTASKS = (1, 6)


@dataclass(frozen=True)
class AgentOptions:
    """How the agents are run, beyond which tasks: shared by every agent adapter.

    ``logprobs`` asks every model call for the top-20 token logprobs (the predictors' entropy
    features); ``perfect`` takes the simulated model's own planned mistakes away, so every
    failure is the faults' doing; ``step_cap`` is the agent's step limit (BFCL: tool-calling
    steps per turn; reference agent: model calls per episode), None for the agent's default.
    """

    logprobs: bool = True
    subtasks: tuple[int, int] = DEFAULT_SUBTASKS
    perfect: bool = False
    step_cap: int | None = None
    guards: tuple[str, ...] = ()  # guards of the '+guarded' conditions (campaign/guarded.py)


@dataclass
class AgentSetup:
    """What a campaign needs from an agent: its task ids, a policy for the simulated model, and
    a factory making ``run_one`` once the model endpoint is known."""

    name: str
    task_ids: list[str]
    policy: Any
    make_run_one: Callable[[Any, str], Callable[[EpisodeSpec], Any]]
    opens_episode: bool


AgentFactory = Callable[[str, int, "list[str] | None", "AgentOptions | None"], AgentSetup]
Tools = dict[str, Callable[..., Any]]


def agent_names() -> list[str]:
    """Names of the installed agent adapters."""
    return sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))


def load_agent(name: str) -> AgentFactory:
    """The adapter factory registered under ``name``; ValueError naming the installed ones."""
    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    if not found:
        raise UsageError(unknown("agent", name, agent_names()))
    factory: AgentFactory = found[0].load()
    return factory


def count_tasks(tasks: str) -> int:
    """``--tasks`` as a positive count."""
    if not tasks.isdigit() or int(tasks) < 1:
        raise UsageError(f"--tasks must be a positive number or 'all', got {tasks!r}")
    return int(tasks)


def tool_injector_wrap(tools: Tools, spec: EpisodeSpec, guard: Any = None) -> Tools:
    """The agent's tools behind the tool-result injector, in every condition.

    Clean and LLM-fault episodes go through it too (condition ``none``) so their tool calls are
    traced like the faulted ones: the retry and abandonment baselines are measured on them.
    Keyed by task id so a (condition, seed) faults the same calls of the same task however the
    campaign schedules episodes.
    """
    from agentchaos_otel.campaign.guarded import split_label
    from agentchaos_otel.inject.tools import ToolFaultInjector

    base, _ = split_label(spec.condition)
    condition = base if base in TOOL_CONDITIONS else CLEAN
    injector = ToolFaultInjector(condition, seed=spec.seed, episode_key=spec.task_id)
    return injector.wrap(dict(tools)) if guard is None else guard.wrap(dict(tools), injector=injector)
