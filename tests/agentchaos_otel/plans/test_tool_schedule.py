"""Temporal structures of tool-result faults: rates, clustering, persistence, determinism."""

from __future__ import annotations

import random
import statistics
from collections import Counter

import pytest

from agentchaos_otel.faults.tool_result import TOOL_FAULT_KINDS
from agentchaos_otel.plans.schedule import (
    ONCE_CONDITIONS,
    ONCE_STEP_RANGE,
    PERSISTENT_START_RANGE,
    TEMPORAL_CONDITIONS,
    TOOL_CONDITIONS,
    ToolFaultSchedule,
    UnknownCondition,
    run_lengths,
    stationary_burst_share,
)

STEPS = 100_000


def decisions(condition: str, seed: int, steps: int = STEPS, **kwargs: object) -> list[str | None]:
    return ToolFaultSchedule(condition, random.Random(seed), **kwargs).run(steps)  # type: ignore[arg-type]


def rate(ds: list[str | None]) -> float:
    return sum(d is not None for d in ds) / len(ds)


def test_none_never_faults() -> None:
    assert rate(decisions("none", 1, 10_000)) == 0.0


def test_independent_rate_and_run_length() -> None:
    ds = decisions("independent", 7)
    # Binomial sd over 100k steps is 0.00116; 0.005 is > 4 sd.
    assert rate(ds) == pytest.approx(0.16, abs=0.005)
    # Geometric runs with continuation 0.16: mean 1 / 0.84 = 1.19 (the study measured 1.18).
    assert statistics.mean(run_lengths(ds)) == pytest.approx(1 / 0.84, abs=0.02)


def test_bursty_matches_the_independent_rate_but_clusters() -> None:
    assert stationary_burst_share() == pytest.approx(0.2)
    ds = decisions("bursty", 7)
    # The chain is autocorrelated: across seeds the 100k-step rate has sd ~0.0027; 0.012 is > 4 sd.
    assert rate(ds) == pytest.approx(0.16, abs=0.012)
    runs = statistics.mean(run_lengths(ds))
    # Inside a burst the next step is faulted with 0.8 (stay) x 0.8 (inject) = 0.64, so runs
    # average 1 / 0.36 = 2.78 (the study measured 2.72 on finite episodes); sd across seeds ~0.03.
    assert runs == pytest.approx(1 / 0.36, abs=0.12)
    independent = statistics.mean(run_lengths(decisions("independent", 7)))
    assert runs > 2 * independent


def test_bursty_chain_starts_from_its_stationary_distribution() -> None:
    starts = [ToolFaultSchedule("bursty", random.Random(seed)) for seed in range(10_000)]
    in_burst = sum(s.in_burst for s in starts) / len(starts)
    # Binomial sd over 10k chains is 0.004 (0.0037 for the first-step rate); 0.02 is 5 sd.
    assert in_burst == pytest.approx(0.2, abs=0.02)
    # Hence the very first tool call is already faulted at the long-run rate, not at 0.
    first = rate([s.next_step() for s in starts])
    assert first == pytest.approx(0.16, abs=0.02)


def test_expected_rates() -> None:
    rng = random.Random(0)
    assert ToolFaultSchedule("none", rng).expected_rate == 0.0
    assert ToolFaultSchedule("independent", rng).expected_rate == pytest.approx(0.16)
    assert ToolFaultSchedule("bursty", rng).expected_rate == pytest.approx(0.16)
    assert ToolFaultSchedule("persistent", rng).expected_rate is None
    assert ToolFaultSchedule("once_timeout", rng).expected_rate is None


@pytest.mark.parametrize("condition", ["independent", "bursty"])
def test_kind_per_faulted_step_is_uniform_over_the_seven(condition: str) -> None:
    counts = Counter(d for d in decisions(condition, 3) if d is not None)
    assert set(counts) == set(TOOL_FAULT_KINDS)
    total = sum(counts.values())
    for kind in TOOL_FAULT_KINDS:
        # ~16k faulted steps: each share's sd is ~0.0027 around 1/7.
        assert counts[kind] / total == pytest.approx(1 / 7, abs=0.015)


def test_persistent_key_rename_on_every_step_from_the_start_on() -> None:
    seen_starts = set()
    for seed in range(200):
        sched = ToolFaultSchedule("persistent", random.Random(seed))
        start = sched.persistent_start
        assert start is not None and PERSISTENT_START_RANGE[0] <= start <= PERSISTENT_START_RANGE[1]
        seen_starts.add(start)
        ds = sched.run(40)
        assert ds[:start] == [None] * start
        assert ds[start:] == ["key_rename"] * (40 - start)
    assert seen_starts == set(range(PERSISTENT_START_RANGE[0], PERSISTENT_START_RANGE[1] + 1))


def test_persistent_start_range_is_configurable() -> None:
    sched = ToolFaultSchedule("persistent", random.Random(1), persistent_start=(0, 0))
    assert sched.run(3) == ["key_rename"] * 3


@pytest.mark.parametrize("condition", TOOL_CONDITIONS)
def test_equal_seeds_give_equal_decisions(condition: str) -> None:
    assert decisions(condition, 42, 5_000) == decisions(condition, 42, 5_000)


@pytest.mark.parametrize("condition", ["independent", "bursty", "persistent"])
def test_different_seeds_give_different_decisions(condition: str) -> None:
    runs = {tuple(decisions(condition, seed, 500)) for seed in range(10)}
    assert len(runs) > 1


def test_sanity_rates_zero_and_one() -> None:
    assert rate(decisions("independent", 5, 2_000, rate=0.0)) == 0.0
    assert rate(decisions("independent", 5, 2_000, rate=1.0)) == 1.0


def test_restricting_kinds_keeps_the_faulted_steps() -> None:
    full = decisions("bursty", 9, 3_000)
    only = decisions("bursty", 9, 3_000, kinds=("timeout",))
    assert [d is None for d in full] == [d is None for d in only]
    assert set(only) == {None, "timeout"}


def test_run_lengths() -> None:
    assert run_lengths([None, "a", "b", None, "c", None, None, "d", "e", "f"]) == [2, 1, 3]
    assert run_lengths([]) == []


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(UnknownCondition):
        ToolFaultSchedule("sometimes", random.Random(0))
    with pytest.raises(ValueError):
        ToolFaultSchedule("independent", random.Random(0), kinds=("corrupt",))
    with pytest.raises(ValueError):
        ToolFaultSchedule("independent", random.Random(0), rate=1.5)
    with pytest.raises(ValueError):
        ToolFaultSchedule("persistent", random.Random(0), persistent_start=(3, 1))


def test_conditions_match_what_plans_accept() -> None:
    from agentchaos_otel.plans import plan

    assert TOOL_CONDITIONS == plan.TOOL_CONDITIONS


def test_once_conditions_are_one_per_kind_and_accepted_by_plans() -> None:
    from agentchaos_otel.plans.plan import resolve_plan

    assert ONCE_CONDITIONS == tuple(f"once_{k}" for k in TOOL_FAULT_KINDS) and len(ONCE_CONDITIONS) == 7
    assert TOOL_CONDITIONS == TEMPORAL_CONDITIONS + ONCE_CONDITIONS
    assert ONCE_STEP_RANGE == (0, 3)
    for cond in ONCE_CONDITIONS:
        plan = resolve_plan(cond)
        assert (plan.name, plan.tool_condition) == (cond, cond)


@pytest.mark.parametrize("kind", TOOL_FAULT_KINDS)
def test_once_fires_its_kind_exactly_once_within_the_first_four_steps(kind: str) -> None:
    steps = Counter()
    for seed in range(400):
        sched = ToolFaultSchedule(f"once_{kind}", random.Random(seed))
        ds = sched.run(30)
        fired = [(i, d) for i, d in enumerate(ds) if d is not None]
        assert len(fired) == 1 and fired[0][1] == kind, (seed, fired)
        assert fired[0][0] == sched.once_step and 0 <= fired[0][0] <= 3
        steps[fired[0][0]] += 1
    # Uniform over 0..3: 100 expected per step, binomial sd ~8.7; 40 is > 4 sd.
    assert set(steps) == {0, 1, 2, 3}
    assert all(abs(n - 100) < 40 for n in steps.values()), steps


@pytest.mark.parametrize("kind", TOOL_FAULT_KINDS)
def test_once_is_deterministic_per_seed_and_the_seed_moves_it(kind: str) -> None:
    cond = f"once_{kind}"
    for seed in range(20):
        assert decisions(cond, seed, 12) == decisions(cond, seed, 12)
    assert len({tuple(decisions(cond, seed, 12)) for seed in range(20)}) > 1


def test_once_ignores_kinds_and_takes_a_step_range() -> None:
    ds = decisions("once_wrong_value", 1, 10, kinds=("timeout",))
    assert [d for d in ds if d] == ["wrong_value"]
    assert decisions("once_empty", 5, 8, once_steps=(6, 6)) == [None] * 6 + ["empty", None]
    with pytest.raises(ValueError, match="once step range"):
        ToolFaultSchedule("once_empty", random.Random(0), once_steps=(2, 1))
