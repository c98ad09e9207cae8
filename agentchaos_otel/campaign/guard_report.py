"""What the guards are worth: guarded vs unguarded episodes of the same condition, task and seed.

A guarded condition ``c+guarded`` is paired with ``c`` on (agent, task, seed). For each pair the
measures are differences guarded minus unguarded, resampled over pairs (seeded bootstrap);
rates of counted events get Wilson intervals. Per fault type, a pair counts under every fault
type that changed something in its unguarded episode (the guarded episode may see different
faults once the agent's calls diverge; the unguarded one says what the condition did).

Costs: extra LLM calls per episode (guard retries appear as extra ``chat`` spans), extra
wall-clock time per episode (first step start to last step end), and what the guards did
(guard retries, raises, suppressed tool calls).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentchaos_otel import attributes as A
from agentchaos_otel import stats
from agentchaos_otel.campaign.guarded import GUARDED_SUFFIX, split_label
from agentchaos_otel.campaign.measures import (
    condition_of,
    fault_key,
    is_faulted,
    pair_key,
    retried,
    scored,
    step_moves,
)
from agentchaos_otel.records import EpisodeTrace
from agentchaos_otel.stats import Estimate, Rate


@dataclass(frozen=True)
class GuardedPair:
    """Paired comparison of one condition (or fault type) with and without the guards."""

    key: str
    pairs: int
    success_unguarded: Rate
    success_guarded: Rate
    delta: Estimate  # guarded minus unguarded success, fraction
    caveat: str = ""
    double_unguarded: Rate = Rate(0, 0)  # episodes with a double application (where the harness counts it)
    double_guarded: Rate = Rate(0, 0)


@dataclass(frozen=True)
class ArmRates:
    """Retry and double application in one arm (all guarded or all unguarded episodes of the pairs)."""

    retry: Rate  # faulted tool steps followed by the identical call within 3 moves
    double_applied: Rate  # episodes in which a state-changing call took effect twice
    double_applications: int  # their total count


@dataclass(frozen=True)
class GuardCost:
    extra_llm_calls: Estimate  # per episode, guarded minus unguarded (paired)
    extra_seconds: Estimate  # per episode, guarded minus unguarded (paired)
    guard_retries: int  # chat spans the response guard added (attempt > 0)
    guard_raises: int
    guard_annotated: int
    suppressed_tool_calls: int
    findings: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class GuardMeasures:
    guards: tuple[str, ...]
    by_condition: dict[str, GuardedPair]
    by_fault_type: dict[str, GuardedPair]
    unguarded: ArmRates
    guarded: ArmRates
    cost: GuardCost
    notes: list[str] = field(default_factory=list)


def has_guarded(episodes: Sequence[EpisodeTrace]) -> bool:
    return any(condition_of(e).endswith(GUARDED_SUFFIX) for e in episodes)


def _pairs(episodes: Sequence[EpisodeTrace]) -> dict[str, list[tuple[EpisodeTrace, EpisodeTrace]]]:
    """base condition -> [(unguarded, guarded)] on the same (agent, task, seed); first of duplicates."""
    arms: dict[tuple[str, bool], dict[tuple, EpisodeTrace]] = defaultdict(dict)
    for ep in scored(episodes):
        base, is_guarded = split_label(condition_of(ep))
        arms[(base, is_guarded)].setdefault(pair_key(ep), ep)
    out: dict[str, list[tuple[EpisodeTrace, EpisodeTrace]]] = {}
    for (base, is_guarded), guarded_eps in sorted(arms.items()):
        if not is_guarded:
            continue
        plain = arms.get((base, False), {})
        keys = sorted(set(plain) & set(guarded_eps), key=repr)
        out[base] = [(plain[k], guarded_eps[k]) for k in keys]
    return out


def _rate(eps: Sequence[EpisodeTrace]) -> Rate:
    return Rate(sum(bool(e.success) for e in eps), len(eps))


def _compare(key: str, pairs: Sequence[tuple[EpisodeTrace, EpisodeTrace]], *, seed: int,
             resamples: int) -> GuardedPair:
    d = [float(bool(g.success)) - float(bool(u.success)) for u, g in pairs]
    delta = Estimate.bootstrap(d, seed=seed, labels=("guard-delta", key), resamples=resamples)
    caveat = stats.ZERO_WIDTH_CAVEAT if stats.zero_width(delta.low, delta.high, delta.n) else ""
    return GuardedPair(key, len(pairs), _rate([u for u, _ in pairs]), _rate([g for _, g in pairs]),
                       delta, caveat, _double([u for u, _ in pairs])[0], _double([g for _, g in pairs])[0])


def _retry_rate(eps: Sequence[EpisodeTrace]) -> Rate:
    hits = total = 0
    for ep in eps:
        moves = step_moves(ep)
        for i, s in enumerate(ep.steps):
            if s.kind == "tool" and is_faulted(s):
                r = retried(ep, i, moves=moves)
                if r is not None:
                    total += 1
                    hits += int(r)
    return Rate(hits, total)


def _double(eps: Sequence[EpisodeTrace]) -> tuple[Rate, int]:
    counted = [int(e.attributes[A.EPISODE_DOUBLE_APPLIED]) for e in eps
               if e.attributes.get(A.EPISODE_DOUBLE_APPLIED) is not None]
    return Rate(sum(c > 0 for c in counted), len(counted)), sum(counted)


def _arm(eps: Sequence[EpisodeTrace]) -> ArmRates:
    double, total = _double(eps)
    return ArmRates(_retry_rate(eps), double, total)


def _seconds(ep: EpisodeTrace) -> float:
    if not ep.steps:
        return 0.0
    return (max(s.end_ns for s in ep.steps) - min(s.start_ns for s in ep.steps)) / 1e9


def _cost(pairs: Sequence[tuple[EpisodeTrace, EpisodeTrace]], *, seed: int, resamples: int) -> GuardCost:
    calls = [len(g.llm_steps) - len(u.llm_steps) for u, g in pairs]
    secs = [_seconds(g) - _seconds(u) for u, g in pairs]
    actions: Counter[str] = Counter()
    findings: Counter[str] = Counter()
    retries = suppressed = 0
    for _, g in pairs:
        for s in g.steps:
            if s.kind == "llm" and s.get(A.GUARD_ACTION) is not None:
                actions[str(s.get(A.GUARD_ACTION))] += 1
                retries += int((s.get(A.GUARD_ATTEMPT) or 0) > 0)
                findings.update(str(k) for k in (s.get(A.GUARD_FINDINGS) or []))
            if s.kind == "tool" and s.get(A.GUARD_SUPPRESSED):
                suppressed += 1
    return GuardCost(Estimate.bootstrap(calls, seed=seed, labels=("guard-calls",), resamples=resamples),
                     Estimate.bootstrap(secs, seed=seed, labels=("guard-seconds",), resamples=resamples),
                     retries, actions["raise"], actions["annotate"], suppressed, dict(sorted(findings.items())))


def guard_measures(episodes: Sequence[EpisodeTrace], *, seed: int = 0,
                   resamples: int = 2000) -> GuardMeasures | None:
    """None when the corpus has no guarded conditions."""
    if not has_guarded(episodes):
        return None
    by_base = _pairs(episodes)
    every = [p for ps in by_base.values() for p in ps]
    notes: list[str] = []
    if not every:
        notes.append("guarded episodes have no unguarded partner (same agent, task, seed): nothing to pair")
    by_condition = {base: _compare(base, ps, seed=seed, resamples=resamples) for base, ps in by_base.items() if ps}
    by_type_pairs: dict[str, list[tuple[EpisodeTrace, EpisodeTrace]]] = defaultdict(list)
    for u, g in every:
        for t in sorted({fault_key(f.fault_type, f.target) for f in u.faults()}):
            by_type_pairs[t].append((u, g))
    by_type = {t: _compare(f"type:{t}", ps, seed=seed, resamples=resamples) for t, ps in sorted(by_type_pairs.items())}
    guards = sorted({str(x) for _, g in every for x in (g.attributes.get(A.EPISODE_GUARDS) or [])})
    if every and not any(u.attributes.get(A.EPISODE_DOUBLE_APPLIED) is not None for u, _ in every):
        notes.append("double application is only counted where the agent's harness records it (BFCL)")
    return GuardMeasures(tuple(guards), by_condition, by_type, _arm([u for u, _ in every]),
                         _arm([g for _, g in every]), _cost(every, seed=seed, resamples=resamples), notes)
