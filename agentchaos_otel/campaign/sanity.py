"""Sanity checks that must hold before a campaign's episodes count (docs/design.md section 6).

A campaign whose injector silently never fires, or fires on a different schedule every run,
produces numbers that look like results. These checks use deliberately extreme settings with
known answers: injection rate 1 must fault every step, rate 0 none, and equal seeds must give
identical fault logs (and different seeds different ones, so the seed is actually used). They run
the real schedulers and, for tool results, the real injector on a real tool function.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentchaos_otel.plans.binding import STAGE_OF_TARGET, EpisodeState
from agentchaos_otel.plans.plan import TOOL_CONDITIONS, Plan, resolve_plan
from agentchaos_otel.plans.schedule import ONCE_CONDITIONS

PROBE_STEPS = 60
DEFAULT_LLM_PROBE = "llm_error_intermittent"


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str = ""


@dataclass
class SanityReport:
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    def add(self, name: str, fn: Callable[[], tuple[bool, str]]) -> None:
        """Run one check; a check that raises has failed, with the exception as its detail."""
        try:
            passed, detail = fn()
        except Exception as exc:  # a broken injector is exactly what these checks exist to catch
            passed, detail = False, f"{type(exc).__name__}: {exc}"
        self.checks.append(Check(name, passed, detail))


# --- Tool-result faults -------------------------------------------------------------------------

def _schedule_decisions(condition: str, seed: int, *, rate: float | None = None,
                        steps: int = PROBE_STEPS) -> list[str | None]:
    from agentchaos_otel.plans.schedule import ToolFaultSchedule

    kwargs: dict[str, Any] = {} if rate is None else {"rate": rate}
    return ToolFaultSchedule(condition, random.Random(seed), **kwargs).run(steps)


def _probe_tool(city: str, day: int) -> dict[str, Any]:
    """A deterministic tool with numbers, strings and a list, so every fault kind has material."""
    return {"city": city, "day": day, "temps": [day + i for i in range(6)], "unit": "C",
            "station_id": 1000 + day}


def _injector_run(condition: str, seed: int, *, rate: float | None = None,
                  steps: int = PROBE_STEPS) -> tuple[list[dict[str, Any]], list[str]]:
    """(fault log, what the agent was shown) for a real tool called through the real injector.

    Spans go to a provider with no processors: sanity probes must not land in the campaign's
    trace file as if they were episodes.
    """
    from opentelemetry.sdk.trace import TracerProvider

    from agentchaos_otel.inject.tools import ToolFaultInjector

    kwargs: dict[str, Any] = {} if rate is None else {"rate": rate}
    injector = ToolFaultInjector(condition, seed=seed, episode_key="sanity", tracer_provider=TracerProvider(),
                                 **kwargs)
    injector.wrap({"probe": _probe_tool})
    shown = [repr(injector.call_tool("probe", {"city": "Kyoto", "day": i % 28}, call_id=f"c{i}"))
             for i in range(steps)]
    return [dict(r) for r in injector.fault_log], shown


def _injector_available() -> bool:
    try:
        import agentchaos_otel.inject.tools  # noqa: F401
    except ImportError:
        return False
    return True


def _once_check(condition: str, seed: int) -> tuple[bool, str]:
    """A ``once_<kind>`` schedule fires its kind exactly once, inside ONCE_STEP_RANGE, and the
    seed chooses where: one seed alone may land on any step, so eight seeds are compared."""
    from agentchaos_otel.plans.schedule import ONCE_STEP_RANGE, once_kind

    kind = once_kind(condition)
    lo, hi = ONCE_STEP_RANGE
    steps = set()
    for s in range(seed, seed + 8):
        fired = [(i, k) for i, k in enumerate(_schedule_decisions(condition, s)) if k is not None]
        if len(fired) != 1 or fired[0][1] != kind or not lo <= fired[0][0] <= hi:
            return False, f"seed {s}: fired {fired[:5]}, expected one {kind} at a step in {lo}..{hi}"
        steps.add(fired[0][0])
    if len(steps) < 2:
        return False, f"eight seeds all chose step {steps.pop()}: the seed is not used"
    return True, f"one {kind} per episode at steps {sorted(steps)} over eight seeds"


def tool_checks(report: SanityReport, conditions: Iterable[str], seed: int) -> None:
    def rate_one() -> tuple[bool, str]:
        d = _schedule_decisions("independent", seed, rate=1.0)
        missed = sum(x is None for x in d)
        return missed == 0, f"{len(d) - missed}/{len(d)} tool steps faulted"

    def rate_zero() -> tuple[bool, str]:
        fired = [sum(x is not None for x in _schedule_decisions("independent", seed, rate=0.0))]
        fired.append(sum(x is not None for x in _schedule_decisions("none", seed)))
        return sum(fired) == 0, f"{sum(fired)} faulted steps (rate 0 and condition none)"

    report.add("tool schedule: rate 1 faults every step", rate_one)
    report.add("tool schedule: rate 0 faults no step", rate_zero)
    injector = _injector_available()
    if injector:
        def injector_rate_one() -> tuple[bool, str]:
            log, shown = _injector_run("independent", seed, rate=1.0)
            faulted = {r.get("step") for r in log}
            return len(faulted) == len(shown), f"{len(faulted)}/{len(shown)} tool calls faulted"

        def injector_rate_zero() -> tuple[bool, str]:
            log, shown = _injector_run("independent", seed, rate=0.0)
            clean = [repr(_probe_tool("Kyoto", i % 28)) for i in range(len(shown))]
            ok = not log and shown == clean
            return ok, "no faults, every result shown unchanged" if ok else f"{len(log)} faults logged"

        report.add("tool injector: rate 1 faults every call", injector_rate_one)
        report.add("tool injector: rate 0 faults no call and shows the real result", injector_rate_zero)
    for cond in [c for c in conditions if c in TOOL_CONDITIONS and c != "none"]:
        def same_seed(cond: str = cond) -> tuple[bool, str]:
            a, b = _schedule_decisions(cond, seed), _schedule_decisions(cond, seed)
            c = _schedule_decisions(cond, seed + 1)
            if a != b:
                return False, "equal seeds gave different schedules"
            if cond != "persistent" and cond not in ONCE_CONDITIONS and a == c and any(a):
                return False, "a different seed gave the same schedule: the seed is not used"
            return True, f"{sum(x is not None for x in a)} faults in {len(a)} steps, reproducible"

        report.add(f"tool schedule '{cond}': equal seeds give identical fault logs", same_seed)
        if cond in ONCE_CONDITIONS:
            report.add(f"tool schedule '{cond}': one fault within the first tool calls, seed moves it",
                       lambda cond=cond: _once_check(cond, seed))
        if not injector:
            continue

        def injector_same_seed(cond: str = cond) -> tuple[bool, str]:
            a, b = _injector_run(cond, seed), _injector_run(cond, seed)
            if a != b:
                return False, "equal seeds gave different fault logs or shown results"
            return True, f"{len(a[0])} faults in {len(a[1])} calls, identical logs and shown results"

        report.add(f"tool injector '{cond}': equal seeds give identical fault logs", injector_same_seed)


# --- LLM response faults -----------------------------------------------------------------------

def _llm_decisions(plan: Plan, seed: int, steps: int = PROBE_STEPS) -> list[tuple[int, str] | None]:
    """Which calls of a fresh episode the plan's scheduler fires on, every call eligible."""
    state = EpisodeState(task_id="sanity", plan=plan, seed=seed)
    out: list[tuple[int, str] | None] = []
    stages = sorted({STAGE_OF_TARGET.get(r.spec.target, "response") for r in state.experiment.rules})
    for _ in range(steps):
        call = state.begin_call()
        fired = None
        for stage in stages:
            for has_tools in (False, True):  # satisfy whichever field guard the fault has
                rule = state.choose(stage, call, has_tool_calls=has_tools, streaming=True)
                if rule is not None:
                    fired = (call, rule.spec.name)
                    break
            if fired:
                break
        out.append(fired)
    return out


def llm_checks(report: SanityReport, conditions: Sequence[str], seed: int) -> None:
    names = [c for c in conditions if c not in TOOL_CONDITIONS]
    probes = names or [DEFAULT_LLM_PROBE]
    for name in probes:
        try:
            plan = resolve_plan(name)
        except ValueError as exc:
            report.checks.append(Check(f"LLM plan '{name}': resolves", False, str(exc)))
            continue

        def rate_one(plan: Plan = plan) -> tuple[bool, str]:
            d = _llm_decisions(plan.with_overrides(probability=1.0, count=10**9), seed)
            positional = any(r.on_call is not None for e in plan.experiments for r in e.rules)
            fired = sum(x is not None for x in d)
            expected = 1 if positional else len(d)
            return fired >= expected, f"{fired}/{len(d)} calls faulted (expected {expected})"

        def rate_zero(plan: Plan = plan) -> tuple[bool, str]:
            fired = sum(x is not None for x in _llm_decisions(plan.with_overrides(probability=0.0), seed))
            return fired == 0, f"{fired} calls faulted"

        def same_seed(plan: Plan = plan) -> tuple[bool, str]:
            a, b = _llm_decisions(plan, seed), _llm_decisions(plan, seed)
            return a == b, f"{sum(x is not None for x in a)} firings, reproducible" if a == b \
                else "equal seeds gave different firings"

        report.add(f"LLM plan '{name}': probability 1 faults every eligible call", rate_one)
        report.add(f"LLM plan '{name}': probability 0 faults no call", rate_zero)
        report.add(f"LLM plan '{name}': equal seeds give identical fault logs", same_seed)
    if not names:
        return

    def seed_used() -> tuple[bool, str]:
        plan = resolve_plan(DEFAULT_LLM_PROBE)
        differs = any(_llm_decisions(plan, seed) != _llm_decisions(plan, seed + k) for k in range(1, 4))
        return differs, "seed changes intermittent firings" if differs else "the seed is not used"

    report.add("LLM scheduler: a different seed changes intermittent firings", seed_used)


def run_sanity(conditions: Sequence[str], seed: int = 0) -> SanityReport:
    """Every check relevant to a campaign over ``conditions`` (tool conditions and/or plan names)."""
    report = SanityReport()
    tool_checks(report, conditions, seed)
    llm_checks(report, conditions, seed)
    return report
