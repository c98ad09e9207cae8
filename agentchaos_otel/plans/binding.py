"""Per-task binding of plans, seeds, counters and step numbers through the OTel context.

One process can run many agent tasks at once (asyncio tasks, threads); each needs its own plan,
random stream, call counter and step numbering. The episode's state is a value of the OTel
context (itself a ``ContextVar``), which gives exactly that isolation: asyncio tasks copy the
context when created, new threads start from an empty one, so an episode opened in one task is
invisible to every other task. Keeping it in the OTel context rather than a private variable is
what lets it compose: whatever carries the OTel context carries the episode with it (OTel's
threading instrumentation into worker threads, a framework that captures the context where it
schedules work and attaches it where it runs it). ``inject.threads`` does the same for
``configure()`` users without that instrumentation.

An episode also registers its state under its trace id (``bind_trace``), so a call made in the
episode's trace from a context that lost the value (a framework that restores a context it
captured itself) still finds its episode.

Without ``episode()`` (zero-code), the process-wide plan is bound per root trace instead: the
episode processor registers a fresh state for each root span of the application
(``bind_trace``), found again from the OTel context of every call in that trace, so each root
trace has its own schedule and step numbering.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace

from agentchaos_otel.faults.catalog import LOOP_GUARD_CALLS
from agentchaos_otel.plans.plan import NO_FAULTS, FaultRule, Plan
from agentchaos_otel.seeds import derive_seed

# Which stage of a call a fault target is decided at. HTTP faults must be decided before the
# request is sent; stream faults once we know the call streams; the rest need the response.
STAGE_OF_TARGET = {"http": "request", "stream": "request", "content": "response", "tool_calls": "response"}



@dataclass
class _RuleState:
    eligible: int = 0
    fired: int = 0


@dataclass
class FaultRecord:
    """One firing: what was scheduled and whether it actually changed what the agent saw."""

    call: int
    step: int | None
    fault: str
    fault_type: str
    target: str
    strategy: str
    changed: bool
    digest_before: str = ""
    digest_after: str = ""
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class EpisodeState:
    """Everything one task's calls share: plan, experiment, counters, random streams, log."""

    task_id: str | None
    plan: Plan = NO_FAULTS
    seed: int = 0
    condition: str | None = None
    agent_name: str | None = None
    scratch: dict[str, Any] = field(default_factory=dict)
    fault_log: list[FaultRecord] = field(default_factory=list)
    previous_body: Any = None

    def fresh(self) -> EpisodeState:
        """A new state with the same plan, seed and task: counters, schedule and log start over."""
        return EpisodeState(task_id=self.task_id, plan=self.plan, seed=self.seed, condition=self.condition,
                            agent_name=self.agent_name)

    def __post_init__(self) -> None:
        self.experiment = self.plan.experiment_for(self.task_id, self.seed)
        self._lock = threading.Lock()
        self._step = 0
        self._calls = 0
        self._rules: tuple[FaultRule, ...] = self.experiment.rules
        self._rule_state = [_RuleState() for _ in self._rules]
        self._rngs = [random.Random(derive_seed("rule", self.seed, self.task_id, i, r.spec.name))
                      for i, r in enumerate(self._rules)]
        self.mutation_rng = random.Random(derive_seed("mutate", self.seed, self.task_id))

    @property
    def has_faults(self) -> bool:
        return bool(self._rules)

    @property
    def calls(self) -> int:
        return self._calls

    def next_step(self) -> int:
        with self._lock:
            step = self._step
            self._step += 1
            return step

    def begin_call(self) -> int:
        """Count an intercepted LLM call; returns its 1-based index."""
        with self._lock:
            self._calls += 1
            return self._calls

    def loop_guard_hit(self, call_index: int) -> bool:
        """AgentChaos stops a faulted task after 100 intercepted calls; so do we."""
        return self.has_faults and call_index > LOOP_GUARD_CALLS

    def wants_stage(self, stage: str) -> bool:
        return any(STAGE_OF_TARGET.get(r.spec.target) == stage for r in self._rules)

    @staticmethod
    def _scheduled(rule: FaultRule, stage: str, call_index: int, streaming: bool) -> bool:
        """Whether the plan puts ``rule`` on this call at this stage (stage, position, streaming)."""
        spec = rule.spec
        if STAGE_OF_TARGET.get(spec.target) != stage:
            return False
        if rule.on_call is not None and call_index != rule.on_call:
            return False
        return not (spec.target == "stream" and not streaming)

    @staticmethod
    def _guarded_out(rule: FaultRule, has_tool_calls: bool | None) -> str | None:
        """Why the fault's guard leaves this response alone, or None (``has_tool_calls=None``: not known yet).

        AgentChaos's guard: a content fault leaves a response with tool calls alone, a tool-call
        fault one without; it reads the response itself, whatever the request declared.
        """
        spec = rule.spec
        if spec.guard and spec.target == "content" and has_tool_calls:
            return "guarded out: the response has tool calls and the fault targets content"
        if spec.guard and spec.target == "tool_calls" and has_tool_calls is False:
            return "guarded out: the response has no tool calls"
        return None

    def _spent(self, i: int) -> bool:
        rule = self._rules[i]
        return rule.max_fires is not None and self._rule_state[i].fired >= rule.max_fires

    def open_rules(self, stage: str, call_index: int, *, has_tool_calls: bool | None = None,
                   streaming: bool = False) -> list[tuple[FaultRule, str | None]]:
        """The rules that may still fire on this call, each with why its guard rules it out given
        ``has_tool_calls`` (None: it does not). Spent rules, rules bound to another call and rules
        that can never fire (probability 0) are left out. Does not advance the schedule."""
        with self._lock:
            return [(rule, self._guarded_out(rule, has_tool_calls)) for i, rule in enumerate(self._rules)
                    if self._scheduled(rule, stage, call_index, streaming) and not self._spent(i)
                    and rule.probability > 0.0]

    def could_fire(self, stage: str, call_index: int, *, has_tool_calls: bool | None = None,
                   streaming: bool = False) -> bool:
        """Whether ``choose`` might pick a rule for this call, without advancing the schedule.

        The transport asks this before deciding to hold a response back: reading a body whole
        is only worth its cost (latency, memory) when a fault can still fire on it. A rule that is
        spent, bound to another call, or guarded out by what is already known cannot. A rule with
        a probability can, whatever its seeded draw will say.
        """
        return any(guard is None for _, guard in self.open_rules(stage, call_index, has_tool_calls=has_tool_calls,
                                                                 streaming=streaming))

    def choose(self, stage: str, call_index: int, *, has_tool_calls: bool | None = None,
               streaming: bool = False, why: list[tuple[str, str]] | None = None) -> FaultRule | None:
        """Pick at most one fault for this call at this stage, advancing the schedule.

        With ``why``, each rule the plan put on this call that did not fire because of this call
        (its guard, its seeded draw) is appended as (fault name, reason); spent rules and rules
        bound to other calls are not: nothing about this call kept them from firing.
        """
        with self._lock:
            for i, rule in enumerate(self._rules):
                if not self._scheduled(rule, stage, call_index, streaming):
                    continue
                guard = self._guarded_out(rule, has_tool_calls)
                if guard is not None:
                    if why is not None and not self._spent(i) and rule.probability > 0.0:
                        why.append((rule.spec.name, guard))
                    continue
                state = self._rule_state[i]
                state.eligible += 1
                if self._spent(i):
                    continue
                if rule.probability < 1.0:
                    draw = self._rngs[i].random()
                    if draw >= rule.probability:
                        if why is not None and rule.probability > 0.0:
                            why.append((rule.spec.name, f"seeded draw {draw:.3f} is not below the probability "
                                                        f"{rule.probability:g}"))
                        continue
                state.fired += 1
                return rule
        return None

    def release(self, rule: FaultRule) -> None:
        """A chosen fault could not apply (e.g. nothing to rewrite): give its firing back."""
        with self._lock:
            for i, r in enumerate(self._rules):
                if r is rule and self._rule_state[i].fired > 0:
                    self._rule_state[i].fired -= 1

    def log(self, record: FaultRecord) -> None:
        with self._lock:
            self.fault_log.append(record)


_EPISODE_KEY = otel_context.create_key("agentchaos-episode")
_process_default: EpisodeState | None = None
_by_trace: dict[int, EpisodeState] = {}


def current_episode() -> EpisodeState | None:
    """The episode bound to this task/thread (its OTel context), if any."""
    return otel_context.get_value(_EPISODE_KEY)  # type: ignore[return-value]


def active_state() -> EpisodeState | None:
    """The episode of this task, else of the current trace, else the process-wide plan.

    Under the process-wide plan, the current trace's own state is made on first use by the
    registered binder (the episode processor, which binds a root's trace lazily).
    """
    state = otel_context.get_value(_EPISODE_KEY)
    if state is not None:
        return state  # type: ignore[return-value]
    if _by_trace or (_binders and _process_default is not None):
        ctx = trace.get_current_span().get_span_context()
        if ctx.is_valid:
            state = _by_trace.get(ctx.trace_id)
            for binder in _binders if state is None and _process_default is not None else ():
                state = binder(ctx.trace_id)
                if state is not None:
                    break
    return state or _process_default


_binders: list[Callable[[int], EpisodeState | None]] = []


def add_trace_binder(binder: Callable[[int], EpisodeState | None]) -> None:
    """``binder(trace_id)`` gives the state of a trace not bound yet (None: not one it knows)."""
    if binder not in _binders:
        _binders.append(binder)


def remove_trace_binder(binder: Callable[[int], EpisodeState | None]) -> None:
    if binder in _binders:
        _binders.remove(binder)


def process_default() -> EpisodeState | None:
    return _process_default


def trace_state(trace_id: int) -> EpisodeState | None:
    return _by_trace.get(trace_id)


def bind_trace(trace_id: int, state: EpisodeState) -> None:
    _by_trace[trace_id] = state


def unbind_trace(trace_id: int) -> None:
    _by_trace.pop(trace_id, None)


def in_context(state: EpisodeState | None, context: otel_context.Context | None = None) -> otel_context.Context:
    """``context`` (default: the current one) with ``state`` as its episode."""
    return otel_context.set_value(_EPISODE_KEY, state, context)


def bind(state: EpisodeState | None) -> object:
    """Bind ``state`` (None: explicitly no episode, e.g. for a pooled worker thread's next task)."""
    return otel_context.attach(in_context(state))


def unbind(token: object) -> None:
    otel_context.detach(token)  # type: ignore[arg-type]


def set_process_default(state: EpisodeState | None) -> None:
    global _process_default
    _process_default = state
