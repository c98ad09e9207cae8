"""One BFCL episode as one traced agent run: agent loop, tool-result faults, official grade.

Each episode is an ``invoke_agent bfcl`` trace whose root carries task id, condition, seed and
the checker's verdict, so campaigns, diagnosers and predictors read BFCL outcomes from the store
like any other agent's. The tool-result injector is keyed by task id, so a (condition, seed)
pair faults the same steps of the same task however episodes are scheduled.

The condition on the root span is the episode's label in every measure and in a campaign's
resume keys: an episode under an LLM-response plan is labelled with that plan's name, so it can
never be mistaken for (or skip) the clean episode of the same task and seed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentchaos_otel.agents.bfcl.agent import DEFAULT_STEP_CAP, AgentRun, CallTool, run_agent
from agentchaos_otel.agents.bfcl.env import BfclEnv
from agentchaos_otel.agents.bfcl.grade import GradeResult, grade
from agentchaos_otel.agents.bfcl.tasks import BfclTask, get_task

AGENT_NAME = "bfcl"
NO_FAULT_CONDITIONS = (None, "", "none")


@dataclass(frozen=True)
class EpisodeResult:
    task_id: str
    condition: str
    seed: int
    success: bool
    n_steps: int  # model calls, the study's unit of "steps"
    n_tool_calls: int  # calls that executed on the API
    error: str | None = None
    grade_error_type: str | None = None
    n_bad_calls: int = 0
    force_quit: bool = False


def _episode_factory() -> Any:
    try:
        from agentchaos_otel import episode
    except (ImportError, AttributeError):
        from agentchaos_otel.episode_scope import episode
    return episode


def tool_caller(env: BfclEnv, condition: str, seed: int, task_id: str, *,
                tracer_provider: Any = None, guard: Any = None, **injector_options: Any) -> CallTool:
    """``call_tool`` that runs the API for real and lets the injector decide what is shown.

    Every call gets an ``execute_tool`` span, faulted or not, so clean episodes are traced too.
    With ``guard`` (an ``IdempotencyGuard``) the injector sits between the guard's two layers,
    where a real timeout would be, and the hook's ``suppressed_last()`` tells the agent loop
    when the guard answered a call without executing it.
    """
    from agentchaos_otel.inject.tools import ToolFaultInjector

    injector = ToolFaultInjector(condition, seed=seed, episode_key=task_id,
                                 tracer_provider=tracer_provider, **injector_options)
    functions = env.tool_functions()
    injector.wrap(guard.executions(functions) if guard is not None else functions)
    last = {"suppressed": False}

    def call(name: str, args: dict[str, Any], call_id: str | None) -> Any:
        if guard is None:
            return injector.call_tool(name, args, call_id=call_id)
        before = guard.suppressed
        try:
            return guard.call(name, args, lambda: injector.call_tool(name, args, call_id=call_id), call_id=call_id)
        finally:
            last["suppressed"] = guard.suppressed > before

    call.suppressed_last = lambda: last["suppressed"]  # type: ignore[attr-defined]
    return call


def make_client(base_url: str, api_key: str, *, max_retries: int = 2, timeout: float = 60.0) -> Any:
    import openai

    return openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=max_retries, timeout=timeout)


def episode_condition(condition: str | None, plan: Any) -> tuple[str, str, Any]:
    """(label, tool condition, resolved plan) of an episode from what the caller gave.

    A tool condition (``none``, ``independent``, ``bursty``, ``persistent``, ``once_<kind>``)
    drives the tool-result injector. Any other condition names an LLM-response plan, which is
    the plan when ``plan`` is not given. The label is the condition, else the plan's name, else
    ``none``. Unknown names raise ``ValueError`` (a ``PlanError``) before anything runs.
    """
    from agentchaos_otel.plans.plan import PlanError, resolve_plan
    from agentchaos_otel.plans.schedule import TOOL_CONDITIONS

    given = None if condition in NO_FAULT_CONDITIONS else str(condition)
    if plan is None and given is not None and given not in TOOL_CONDITIONS:
        try:
            resolved = resolve_plan(given)
        except PlanError as exc:
            raise PlanError(f"condition {given!r} is neither a tool-result condition "
                            f"({', '.join(TOOL_CONDITIONS)}) nor an LLM-fault plan: {exc}") from None
        plan = given
    else:
        resolved = resolve_plan(plan)
    if given in TOOL_CONDITIONS:
        tool_condition = str(given)
    else:
        tool_condition = resolved.tool_condition if resolved.tool_condition in TOOL_CONDITIONS else "none"
    label = given or (resolved.name if plan is not None else "none")
    return label, tool_condition, resolved


def run_bfcl_episode(task: BfclTask | str, *, condition: str | None, seed: int, base_url: str | None = None,
                     model: str, api_key: str = "sk-unused", temperature: float = 0.0,
                     step_cap: int = DEFAULT_STEP_CAP, logprobs: bool = False, plan: Any = None,
                     client: Any = None,
                     simulated: bool | None = None, tracer_provider: Any = None,
                     injector_options: dict[str, Any] | None = None,
                     on_run: Callable[[AgentRun], None] | None = None,
                     idempotency: Any = None, label: str | None = None,
                     guards: tuple[str, ...] = ()) -> EpisodeResult:
    """Run and grade one episode; never raises for anything the model or the faults do.

    ``condition`` is the episode's label: a tool-result condition (``none``, ``independent``,
    ``bursty``, ``persistent``, ``once_<kind>``) applied by the tool-result injector, or the name
    of an LLM-response plan. ``plan`` is the LLM-response fault plan applied by the transport
    injector (a catalog name, file or ``Plan``); left None, a non-tool ``condition`` is the plan.
    Bad names raise ``ValueError`` up front. Pass ``client`` to reuse one ``openai.OpenAI`` across episodes;
    ``injector_options`` go to ``ToolFaultInjector`` (``kinds``, ``rate``); ``on_run`` receives
    the finished :class:`AgentRun` (conversation and executed calls) for inspection.
    ``idempotency`` is an ``IdempotencyGuard`` (or a zero-argument factory of one) for the
    episode's tools; ``label`` overrides the stored condition (guarded campaign conditions) and
    ``guards`` names the guards on the root span. Every episode's root records how many calls
    took effect twice on the official backend's state (``agentchaos_otel.agents.bfcl.double``).
    """
    task = get_task(task) if isinstance(task, str) else task
    cond, tool_condition, resolved = episode_condition(condition, plan)
    if client is None:
        if base_url is None:
            raise ValueError("run_bfcl_episode needs base_url or client")
        with make_client(base_url, api_key) as own:
            return run_bfcl_episode(task, condition=cond, seed=seed, model=model, temperature=temperature,
                                    step_cap=step_cap, logprobs=logprobs, plan=resolved, client=own,
                                    simulated=simulated, tracer_provider=tracer_provider,
                                    injector_options=injector_options, on_run=on_run,
                                    idempotency=idempotency, label=label, guards=guards)
    sim = model.startswith("sim-") if simulated is None else simulated
    episode = _episode_factory()
    run = AgentRun()
    verdict = GradeResult(False, "not_run")
    stored = label or cond
    with episode(task_id=task.id, plan=resolved, seed=seed, condition=stored, agent_name=AGENT_NAME,
                 simulated=sim, tracer_provider=tracer_provider) as ep:
        try:
            env = BfclEnv(task)
            guard = idempotency() if callable(idempotency) and not hasattr(idempotency, "call") else idempotency
            call_tool = tool_caller(env, tool_condition, seed, task.id, tracer_provider=tracer_provider,
                                    guard=guard, **(injector_options or {}))
            run = run_agent(task, client, model, env=env, call_tool=call_tool,
                            temperature=temperature, step_cap=step_cap, logprobs=logprobs)
            verdict = grade(task, run.executed)
            _record_double(ep, task, run, guards)
        except Exception as exc:  # a harness bug is reported on the episode, not raised
            run.error = run.error or f"{type(exc).__name__}: {exc}"[:500]
            verdict = GradeResult(False, "harness_error", run.error)
        error = run.error
        ep.set_outcome(success=verdict.valid, error=error)
    if on_run is not None:
        on_run(run)
    return EpisodeResult(task_id=task.id, condition=stored, seed=seed, success=verdict.valid,
                         n_steps=run.n_llm_calls, n_tool_calls=run.n_tool_calls, error=error,
                         grade_error_type=None if verdict.valid else verdict.error_type,
                         n_bad_calls=run.n_bad_calls, force_quit=run.force_quit)


def _record_double(ep: Any, task: BfclTask, run: AgentRun, guards: tuple[str, ...]) -> None:
    """Double applications (official state) and guard suppressions on the episode's root span."""
    from agentchaos_otel import attributes as A
    from agentchaos_otel.agents.bfcl.double import double_applications

    span = getattr(ep, "span", None)
    if span is None:
        return
    try:
        span.set_attribute(A.EPISODE_DOUBLE_APPLIED, len(double_applications(task, run.executed)))
    except Exception as exc:  # a replay problem must not cost the episode its grade
        span.add_event(A.EVENT_INJECTOR_SKIP, {A.SKIP_REASON: f"double-application replay failed: {exc}"[:300]})
    if guards:
        span.set_attribute(A.EPISODE_GUARDS, list(guards))
