"""When tool-result faults fire: the four temporal structures of the tool-response study, plus
single-fault conditions for diagnosis corpora.

A schedule is a pure, seeded sequence over the tool-call steps of one episode: ``next_step()``
is called once per tool call and says which fault kind (if any) that call gets. Keeping it free
of I/O and spans lets the statistical properties (rate per step, length of fault runs) be tested
over 100k steps in milliseconds, and lets equal seeds give equal fault logs by construction.

``independent`` and ``bursty`` inject at the same rate per step (0.16), so a difference in agent
success between them is due to the clustering of faults, not to their number (the study's
reason for matching them). The bursty chain starts from its stationary distribution; started in
the gap state, short episodes would mostly end before the first burst arrives.

``once_<kind>`` (one per fault kind, e.g. ``once_timeout``) fires that kind exactly once, at a
tool-call step drawn uniformly from ``ONCE_STEP_RANGE`` (0-based, inclusive: the first four tool
calls), and nothing else. An episode then has a single known root cause, which is what a
diagnosis corpus needs as ground truth. An episode that makes fewer tool calls than the drawn
step is never faulted (it is "not triggered" in the report, like any condition whose fault missed).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from agentchaos_otel.faults.tool_result import TOOL_FAULT_KINDS

# The study's four temporal structures.
TEMPORAL_CONDITIONS = ("none", "independent", "bursty", "persistent")
ONCE_PREFIX = "once_"
ONCE_CONDITIONS = tuple(f"{ONCE_PREFIX}{kind}" for kind in TOOL_FAULT_KINDS)
TOOL_CONDITIONS = TEMPORAL_CONDITIONS + ONCE_CONDITIONS

INDEPENDENT_RATE = 0.16
BURST_MEAN_STEPS = 5.0
GAP_MEAN_STEPS = 20.0
BURST_INJECT_P = 0.8
PERSISTENT_KIND = "key_rename"
# persistent: the first faulted tool call is drawn uniformly from these (0-based, inclusive)
# tool-call indices. The study's episodes average 6.1 tool calls, so starting at 1..5 leaves
# the first call clean ("from some step on") and still faults most episodes for several steps.
PERSISTENT_START_RANGE = (1, 5)
# once_<kind>: the single faulted tool call is drawn uniformly from these (0-based, inclusive)
# tool-call indices. Early enough that nearly every episode reaches it (so the corpus is not mostly
# untriggered), spread enough that the fault is not always on the agent's first call.
ONCE_STEP_RANGE = (0, 3)


def once_kind(condition: str) -> str | None:
    """The fault kind of a ``once_<kind>`` condition, else None."""
    return condition[len(ONCE_PREFIX):] if condition in ONCE_CONDITIONS else None


class UnknownCondition(ValueError):
    """A temporal structure outside TOOL_CONDITIONS."""


def stationary_burst_share(mean_burst: float = BURST_MEAN_STEPS, mean_gap: float = GAP_MEAN_STEPS) -> float:
    """Long-run share of steps spent inside a burst: (1/gap) / (1/gap + 1/burst)."""
    enter, leave = 1.0 / mean_gap, 1.0 / mean_burst
    return enter / (enter + leave)


class ToolFaultSchedule:
    """Per-episode decisions: ``next_step()`` -> fault kind for this tool call, or None.

    Two random streams are derived from the given ``rng``: one decides *whether* a step is
    faulted, the other *which kind*. Restricting ``kinds`` therefore leaves the faulted steps
    exactly where they were. A ``once_<kind>`` condition names its kind, so ``kinds`` does not
    apply to it.
    """

    def __init__(self, condition: str, rng: random.Random, *, kinds: Sequence[str] = TOOL_FAULT_KINDS,
                 rate: float = INDEPENDENT_RATE, mean_burst: float = BURST_MEAN_STEPS,
                 mean_gap: float = GAP_MEAN_STEPS, burst_inject_p: float = BURST_INJECT_P,
                 persistent_start: tuple[int, int] = PERSISTENT_START_RANGE,
                 once_steps: tuple[int, int] = ONCE_STEP_RANGE) -> None:
        if condition not in TOOL_CONDITIONS:
            raise UnknownCondition(f"unknown tool condition {condition!r}; expected one of "
                                   f"{', '.join(TOOL_CONDITIONS)}")
        unknown = [k for k in kinds if k not in TOOL_FAULT_KINDS]
        if unknown or not kinds:
            raise ValueError(f"tool fault kinds must be a non-empty subset of {', '.join(TOOL_FAULT_KINDS)}; "
                             f"got {list(kinds)!r}")
        if not 0.0 <= rate <= 1.0 or not 0.0 <= burst_inject_p <= 1.0:
            raise ValueError("rates must lie in [0, 1]")
        if mean_burst < 1.0 or mean_gap < 1.0:
            raise ValueError("mean burst and gap lengths must be at least one step")
        lo, hi = persistent_start
        if lo < 0 or hi < lo:
            raise ValueError(f"persistent start range must be 0 <= lo <= hi, got {persistent_start!r}")
        if once_steps[0] < 0 or once_steps[1] < once_steps[0]:
            raise ValueError(f"once step range must be 0 <= lo <= hi, got {once_steps!r}")
        self.condition = condition
        self.kinds = tuple(kinds)
        self.rate = rate
        self.burst_inject_p = burst_inject_p
        self._leave_burst = 1.0 / mean_burst
        self._enter_burst = 1.0 / mean_gap
        self._timing = random.Random(rng.getrandbits(64))
        self._kind_rng = random.Random(rng.getrandbits(64))
        self.step = 0  # tool-call steps decided so far
        self.in_burst = False
        self.persistent_start: int | None = None
        self.once_kind = once_kind(condition)
        self.once_step: int | None = None
        if condition == "bursty":
            self.in_burst = self._timing.random() < stationary_burst_share(mean_burst, mean_gap)
        elif condition == "persistent":
            self.persistent_start = self._timing.randint(lo, hi)
        elif self.once_kind is not None:
            self.once_step = self._timing.randint(*once_steps)

    @property
    def expected_rate(self) -> float | None:
        """Long-run share of faulted steps (None for persistent and once_*, which have no fixed rate)."""
        if self.condition == "none":
            return 0.0
        if self.condition == "independent":
            return self.rate
        if self.condition == "bursty":
            share = self._enter_burst / (self._enter_burst + self._leave_burst)
            return share * self.burst_inject_p
        return None

    def next_step(self) -> str | None:
        """Decide the next tool-call step and advance the schedule."""
        step = self.step
        self.step += 1
        if self.condition == "none":
            return None
        if self.condition == "persistent":
            assert self.persistent_start is not None
            return PERSISTENT_KIND if step >= self.persistent_start else None
        if self.once_kind is not None:
            return self.once_kind if step == self.once_step else None
        if self.condition == "independent":
            fire = self._timing.random() < self.rate
        else:
            fire = self.in_burst and self._timing.random() < self.burst_inject_p
            switch = self._leave_burst if self.in_burst else self._enter_burst
            if self._timing.random() < switch:
                self.in_burst = not self.in_burst
        return self._kind_rng.choice(self.kinds) if fire else None

    def run(self, steps: int) -> list[str | None]:
        """The next ``steps`` decisions, for tests and dry runs of a plan."""
        return [self.next_step() for _ in range(steps)]


def run_lengths(marks: Sequence[str | bool | None]) -> list[int]:
    """Lengths of maximal runs of consecutive faulted steps (the study's clustering measure).

    A step is faulted when its mark is a decision (a fault kind) or True; None and False are
    clean steps. The schedule's decisions and the report's per-step flags both go through here.
    """
    runs: list[int] = []
    current = 0
    for d in marks:
        if d is not None and d is not False:
            current += 1
        elif current:
            runs.append(current)
            current = 0
    if current:
        runs.append(current)
    return runs
