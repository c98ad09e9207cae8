"""The robustness measures of the tool-response study, as pure functions of stored episodes.

Every function takes a list of ``EpisodeTrace`` (unblinded: the measures need ground truth) and,
where resampling is involved, an explicit seed, so the same corpus and seed always give the same
report and every measure can be tested on hand-built traces. Definitions follow docs/design.md
section 6; where the study left a detail open the choice is stated in the function's docstring.

Episodes of a faulted condition whose faults never changed what the agent saw ("not triggered")
are left out of the fault-impact measures (contributions, single-fault success, retry,
abandonment) but kept in the condition-level success rates, which measure the condition as run.
Faults on the LLM response are reported as ``llm/<type>`` beside the tool-result kinds.

The statistics (bootstrap and Wilson intervals, the batched logistic fit) live in
``agentchaos_otel.stats``; this module says what is counted and compared. Episode-level facts
are put in one polars frame (``episode_frame``), from which the grouping by condition, the
per-(agent, task, seed) pairing and the single-fault success are read; rates that need an
episode's step sequence (retry, abandonment) are collected as (key, hit) observations and
tabulated through a frame as well (``_rates``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import polars as pl

from agentchaos_otel import attributes as A
from agentchaos_otel import stats
from agentchaos_otel.campaign.guarded import GUARDED_SUFFIX
from agentchaos_otel.plans.schedule import ONCE_CONDITIONS, run_lengths
from agentchaos_otel.records import EpisodeTrace, StepRecord
from agentchaos_otel.stats import Estimate, Rate, fit_logistic

CLEAN = "none"
DEFAULT_RESAMPLES = 2000
RETRY_WINDOW = 3

# Every step attribute the measures read: here, in guard_report.py (the GUARD_* ones; it imports
# this module, so its keys are listed here too) and through EpisodeTrace.faults() (which alone
# reads FAULT_EXPERIMENT). The report holds the whole corpus in memory and loads only these per
# step (``load_episodes(step_keys=...)``): a full step is kilobytes of attributes and events the
# measures never look at. A measure that reads another step attribute must add it here, or it
# sees it missing; tests/agentchaos_otel/campaign/test_report_projection.py checks the list against what is read.
STEP_KEYS: frozenset[str] = frozenset({
    A.FAULT_INJECTED, A.FAULT_CHANGED, A.FAULT_TYPE, A.FAULT_TARGET, A.FAULT_EXPERIMENT,
    A.GEN_AI_TOOL_NAME, A.TOOL_ARGS_DIGEST, A.RESPONSE_TOOL_CALL_COUNT,
    A.GUARD_ACTION, A.GUARD_ATTEMPT, A.GUARD_FINDINGS, A.GUARD_SUPPRESSED,
})


# --- Per-episode facts ------------------------------------------------------------------------

def is_clean(ep: EpisodeTrace, clean: str = CLEAN) -> bool:
    return (ep.condition or CLEAN) == clean


def has_root(ep: EpisodeTrace) -> bool:
    """The episode's root span was stored: it carries attributes or an outcome.

    A trace whose steps reached the store while its root never ended (the agent was killed
    mid-episode, or the root is not exported yet) has neither: no condition, no outcome, no
    simulated label. Counted as an episode of ``none`` it would inflate the clean baseline.
    """
    return bool(ep.attributes) or ep.success is not None


def condition_of(ep: EpisodeTrace) -> str:
    return ep.condition or CLEAN


def crashed(ep: EpisodeTrace) -> bool:
    """The harness ended the episode: ``run_one`` raised (the study counted 0 of these)."""
    return bool(ep.attributes.get(A.EPISODE_CRASHED))


def errored(ep: EpisodeTrace) -> bool:
    """An error is recorded on the episode: a crash, or an error the agent met and reported."""
    return bool(ep.attributes.get(A.EPISODE_ERROR)) or crashed(ep)


def fired_steps(ep: EpisodeTrace) -> list[StepRecord]:
    """Steps where a fault fired, whether or not it changed anything."""
    return [s for s in ep.steps if s.get(A.FAULT_INJECTED)]


def is_faulted(step: StepRecord) -> bool:
    """A fault fired here and changed what the agent saw (the ground truth of ``faults()``)."""
    return bool(step.get(A.FAULT_INJECTED)) and bool(step.get(A.FAULT_CHANGED, True))


LLM_PREFIX = "llm/"
MCP_PREFIX = "mcp/"


def fault_key(fault_type: str, target: str | None) -> str:
    """The name a fault is reported under.

    LLM-response, MCP-protocol and tool-result faults share type labels (``timeout``, ``empty``)
    but are different interventions, so faults on the LLM response are reported as
    ``llm/<type>`` and faults on an MCP session's protocol as ``mcp/<type>``; tool-result faults
    keep the study's plain names, which the published figures use.
    """
    if target in (None, A.TARGET_TOOL_RESULT):
        return fault_type
    if target == A.TARGET_MCP:
        return f"{MCP_PREFIX}{fault_type}"
    return f"{LLM_PREFIX}{fault_type}"


def family(key: str) -> str:
    """The intervention family a fault key belongs to (each is fitted on its own)."""
    if key.startswith(LLM_PREFIX):
        return "llm"
    return "mcp" if key.startswith(MCP_PREFIX) else "tool"


def episode_fault_keys(ep: EpisodeTrace) -> list[str]:
    return [fault_key(f.fault_type, f.target) for f in ep.faults()]


def n_moves(ep: EpisodeTrace) -> int:
    """The study's "steps": model calls (each with the tool calls it asked for).

    Traces holding only tool spans count each tool call as a move.
    """
    return len(ep.llm_steps) or len(ep.steps)


def fault_counts(ep: EpisodeTrace) -> Counter[str]:
    return Counter(episode_fault_keys(ep))


def in_impact_set(ep: EpisodeTrace, clean: str = CLEAN) -> bool:
    """Clean episodes plus triggered faulted ones: the population of the fault-impact measures."""
    return is_clean(ep, clean) or ep.triggered


def canonical(episodes: Iterable[EpisodeTrace]) -> list[EpisodeTrace]:
    """A fixed order, so resampling by index gives the same draws however the corpus was loaded."""
    return sorted(episodes, key=lambda e: (condition_of(e), _agent(e), str(e.task_id),
                                           -1 if e.seed is None else e.seed, e.trace_id))


def scored(episodes: Iterable[EpisodeTrace]) -> list[EpisodeTrace]:
    return [e for e in canonical(episodes) if e.success is not None]


def _agent(ep: EpisodeTrace) -> str:
    return str(ep.attributes.get(A.GEN_AI_AGENT_NAME) or "")


def pair_key(ep: EpisodeTrace) -> tuple[str, str, int | None]:
    return (_agent(ep), str(ep.task_id), ep.seed)


EPISODE_SCHEMA = {
    "condition": pl.String, "pair": pl.String, "success": pl.Float64, "crashed": pl.Boolean,
    "errored": pl.Boolean, "fired": pl.Boolean, "triggered": pl.Boolean, "moves": pl.Int64,
    "tool_calls": pl.Int64, "single_fault": pl.String,
}


def episode_frame(episodes: Iterable[EpisodeTrace]) -> pl.DataFrame:
    """One row per episode in ``canonical`` order: the facts the condition-level measures read.

    ``pair`` is the episode's (agent, task, seed) key as text (its ``repr``, the order pairs are
    resampled in); ``success`` is 1.0, 0.0 or null when unscored; ``single_fault`` is the key of
    the one fault that changed something, null with none or several. Rows keep the canonical
    order inside every group, so a bootstrap reads its values in the same order however the
    corpus was loaded.
    """
    rows = []
    for ep in canonical(episodes):
        faults = ep.faults()
        single = fault_key(faults[0].fault_type, faults[0].target) if len(faults) == 1 else None
        rows.append((condition_of(ep), repr(pair_key(ep)), None if ep.success is None else float(bool(ep.success)),
                     crashed(ep), errored(ep), bool(fired_steps(ep)), bool(faults), n_moves(ep),
                     len(ep.tool_steps), single))
    return pl.DataFrame(rows, schema=EPISODE_SCHEMA, orient="row")


def _frame(episodes: Iterable[EpisodeTrace], frame: pl.DataFrame | None) -> pl.DataFrame:
    return episode_frame(episodes) if frame is None else frame


def _rates(observations: Iterable[tuple[str, bool | int]], order: Callable[[str], Any]) -> dict[str, Rate]:
    """Hits out of total per key from (key, hit) observations, keys in ``order``."""
    frame = pl.DataFrame(list(observations), schema={"key": pl.String, "hit": pl.Int64}, orient="row")
    table = frame.group_by("key").agg(hits=pl.col("hit").sum(), total=pl.len())
    return {key: Rate(hits, total) for key, hits, total in sorted(table.iter_rows(), key=lambda r: order(r[0]))}


# --- Success per condition and paired differences --------------------------------------------

@dataclass(frozen=True)
class ConditionSummary:
    condition: str
    episodes: int
    scored: int
    successes: int
    success: Estimate
    crashes: int
    errors: int
    triggered: int
    fired_not_changed: int
    no_fault: int
    steps_per_episode: float
    tool_calls_per_episode: float


def condition_summaries(episodes: Sequence[EpisodeTrace], *, seed: int = 0, resamples: int = DEFAULT_RESAMPLES,
                        frame: pl.DataFrame | None = None) -> dict[str, ConditionSummary]:
    """Success with bootstrap interval, crashes and trigger status, per condition.

    ``frame``: ``episode_frame(episodes)`` when the caller has it (it is a pass over every step).
    """
    table = _frame(episodes, frame).group_by("condition", maintain_order=True).agg(
        episodes=pl.len(), outcomes=pl.col("success").drop_nulls(), crashes=pl.col("crashed").sum(),
        errors=pl.col("errored").sum(), triggered=pl.col("triggered").sum(),
        fired_not_changed=(pl.col("fired") & ~pl.col("triggered")).sum(), no_fault=(~pl.col("fired")).sum(),
        steps_per_episode=pl.col("moves").mean(), tool_calls_per_episode=pl.col("tool_calls").mean(),
    )
    out = {}
    for row in sorted(table.iter_rows(named=True), key=lambda r: _condition_order(r["condition"])):
        cond, outcomes = row.pop("condition"), row.pop("outcomes")
        out[cond] = ConditionSummary(
            condition=cond, scored=len(outcomes), successes=int(sum(outcomes)),
            success=Estimate.bootstrap(outcomes, seed=seed, labels=("mean", f"success:{cond}"), resamples=resamples),
            **row,
        )
    return out


# The study's conditions first, then the single-fault ones in kind order, then LLM plans by name.
_ORDER = {"none": 0, "persistent": 1, "bursty": 2, "independent": 3,
          **{cond: 4 + i for i, cond in enumerate(ONCE_CONDITIONS)}}


def _condition_order(cond: str) -> tuple[int, str]:
    return (_ORDER.get(cond, 10), cond)


@dataclass(frozen=True)
class PairedDifference:
    condition: str
    pairs: int
    faulted_success: float | None
    clean_success: float | None
    difference: Estimate


def paired_differences(episodes: Sequence[EpisodeTrace], *, clean: str = CLEAN, seed: int = 0,
                       resamples: int = DEFAULT_RESAMPLES, triggered_only: bool = False,
                       frame: pl.DataFrame | None = None) -> dict[str, PairedDifference]:
    """Faulted minus clean success on the same (agent, task, seed), resampling pairs.

    With ``triggered_only`` the faulted episodes whose faults changed nothing are dropped, which
    answers "what does a fault that lands cost" rather than "what does running this condition cost".
    Duplicate episodes of one key (a re-run) are averaged so a pair counts once.
    """
    frame = _frame(episodes, frame).filter(pl.col("success").is_not_null())
    if triggered_only:
        frame = frame.filter((pl.col("condition") == clean) | pl.col("triggered"))
    per_pair = frame.group_by("condition", "pair", maintain_order=True).agg(pl.col("success").mean())
    base = per_pair.filter(pl.col("condition") == clean).select("pair", clean_success="success")
    out = {}
    for cond in sorted(set(per_pair["condition"]) - {clean}, key=_condition_order):
        pairs = (per_pair.filter(pl.col("condition") == cond).join(base, on="pair", how="inner")
                 .sort("pair"))
        if pairs.is_empty():
            out[cond] = PairedDifference(cond, 0, None, None, Estimate(None))
            continue
        f, c = pairs["success"].to_numpy(), pairs["clean_success"].to_numpy()
        out[cond] = PairedDifference(cond, len(pairs), float(f.mean()), float(c.mean()),
                                     Estimate.bootstrap(f - c, seed=seed, resamples=resamples,
                                                        labels=("paired", cond, str(triggered_only))))
    return out


# --- Per-type contributions (logistic regression) ---------------------------------------------

@dataclass(frozen=True)
class Contributions:
    """Change in success probability per added fault of each type, at the mean of the data."""

    types: tuple[str, ...]
    effects: dict[str, Estimate]  # n = episodes in the fit that estimated the effect
    episodes: int
    resamples_used: int
    note: str = ""
    with_type: dict[str, int] = field(default_factory=dict)  # episodes containing each type


def _design(eps: Sequence[EpisodeTrace], types: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    counts = [fault_counts(e) for e in eps]
    x = np.array([[c.get(t, 0) for t in types] + [n_moves(e)] for c, e in zip(counts, eps, strict=True)],
                 dtype=float)
    y = np.array([1 if e.success else 0 for e in eps], dtype=int)
    return x, y


def _standardise_steps(x: np.ndarray) -> np.ndarray:
    """The step count, standardised so the penalty treats every column alike."""
    x = x.copy()
    sd = x[:, -1].std()
    if sd > 0:
        x[:, -1] = (x[:, -1] - x[:, -1].mean()) / sd
    return x


def type_contributions(episodes: Sequence[EpisodeTrace], *, clean: str = CLEAN, seed: int = 0,
                       resamples: int = DEFAULT_RESAMPLES) -> Contributions:
    """Logistic regression of success on per-type fault counts plus the number of moves.

    Fault types mix within an episode, so the condition-level drop is an average over types; the
    regression separates them. Tool-result and LLM-response faults are fitted separately (each
    with the clean episodes): pooled, the near-certain failures of some LLM faults would move the
    mean at which every effect is read. The interval comes from resampling episodes and
    refitting; resamples in which one outcome is absent cannot be fitted and are skipped.
    """
    pool = [e for e in scored(episodes) if in_impact_set(e, clean)]
    keys = {k for e in pool for k in fault_counts(e)}
    if not keys:
        return Contributions((), {}, len(pool), 0, "no triggered faults: nothing to attribute")
    effects: dict[str, Estimate] = {}
    with_type: dict[str, int] = {}
    notes, used, n_eps = [], [], 0
    families = sorted({family(k) for k in keys}, key=lambda f: f != "tool")
    for fam in families:
        eps = [e for e in pool if all(family(k) == fam for k in fault_counts(e))]
        types = tuple(sorted(k for k in keys if family(k) == fam))
        part = _fit_family(eps, types, seed=seed, resamples=resamples, label=fam)
        effects.update(part.effects)
        with_type.update(part.with_type)
        n_eps += part.episodes
        used.append(part.resamples_used)
        if part.note:
            notes.append(f"{fam} faults: {part.note}" if len(families) > 1 else part.note)
    return Contributions(tuple(sorted(keys)), effects, n_eps, min(used), "; ".join(notes), with_type)


def _fit_family(eps: Sequence[EpisodeTrace], types: tuple[str, ...], *, seed: int, resamples: int,
                label: str) -> Contributions:
    x, y = _design(eps, types)
    with_type = {t: int((x[:, k] > 0).sum()) for k, t in enumerate(types)}
    if len(np.unique(y)) < 2:
        return Contributions(types, {}, len(eps), 0,
                             "every episode has the same outcome: the regression is not identified", with_type)
    xs, yf = _standardise_steps(x), y.astype(float)
    # Effects are evaluated at the full sample's mean covariates in every resample, so the
    # interval reflects the uncertainty of the coefficients, not of where the mean lies.
    x_mean = xs.mean(axis=0)
    full = fit_logistic(xs, yf)
    point = stats.effects_at_mean(full, x_mean, len(types))[0]
    rng = stats.rng_for(seed, "contributions", label)
    draws = [np.empty((0, len(types)))]
    # Each batched Newton step holds a few (block x episodes) arrays: size blocks by that.
    rows = max(1, stats.BLOCK_CELLS // (4 * len(eps)))
    for counts in stats.resample_counts(len(eps), resamples, rng, rows=rows):
        # A resample holding one outcome only cannot be fitted; it is skipped and reported.
        has_both = (counts @ yf > 0) & (counts @ (1 - yf) > 0)
        if has_both.any():
            fits = fit_logistic(xs, yf, weights=counts[has_both], start=full)
            draws.append(stats.effects_at_mean(fits, x_mean, len(types)))
    boot = np.concatenate(draws)
    used = len(boot)
    effects = {}
    for k, t in enumerate(types):
        lo, hi = stats.percentile_interval(boot[:, k]) if used else (None, None)
        effects[t] = Estimate(float(point[k]), lo, hi, len(eps))
    note = "" if used == resamples else f"{resamples - used} resamples had one outcome only"
    return Contributions(types, effects, len(eps), used, note, with_type)


# --- Single-fault success, retry, abandonment --------------------------------------------------

def single_fault_success(episodes: Sequence[EpisodeTrace], *, clean: str = CLEAN, seed: int = 0,
                         resamples: int = DEFAULT_RESAMPLES, frame: pl.DataFrame | None = None
                         ) -> dict[str, Estimate]:
    """Success of episodes with exactly one fault that changed something, by its type.

    The regression-free cross-check of the contributions: no model assumption, fewer episodes.
    The clean reference is returned under the key ``clean``.
    """
    group = pl.when(pl.col("condition") == clean).then(pl.lit("clean")).otherwise(pl.col("single_fault"))
    table = (_frame(episodes, frame).filter(pl.col("success").is_not_null())
             .group_by(group.alias("group"), maintain_order=True).agg(pl.col("success"))
             .filter(pl.col("group").is_not_null()))
    return {t: Estimate.bootstrap(v, seed=seed, labels=("mean", f"single:{t}"), resamples=resamples)
            for t, v in sorted(table.iter_rows(), key=lambda kv: (kv[0] == "clean", kv[0]))}


def _tool_identity(step: StepRecord) -> tuple[str, str] | None:
    digest = step.get(A.TOOL_ARGS_DIGEST)
    if digest is None:
        return None
    return (str(step.get(A.GEN_AI_TOOL_NAME) or step.name), str(digest))


def step_moves(ep: EpisodeTrace) -> list[int]:
    """Agent move of each step: an LLM call opens a move, its tool calls belong to it.

    Traces without LLM spans (tools traced alone) treat every tool call as its own move.
    """
    if not ep.llm_steps:
        return list(range(len(ep.steps)))
    moves, m = [], -1
    for s in ep.steps:
        if s.kind == "llm":
            m += 1
        moves.append(max(m, 0))
    return moves


def retried(ep: EpisodeTrace, index: int, window: int = RETRY_WINDOW,
            moves: Sequence[int] | None = None) -> bool | None:
    """Whether the identical tool call of step ``index`` reappears within the next ``window`` moves.

    Identical means the same tool name and argument digest. Calls later in the same move are
    not counted: the agent issued them before it saw this step's result. None when the step
    carries no argument digest and so cannot be compared. ``moves`` is ``step_moves(ep)``, passed by
    callers that ask about several steps of one episode (it is a pass over all its steps).
    """
    step = ep.steps[index]
    ident = _tool_identity(step)
    if ident is None:
        return None
    if moves is None:
        moves = step_moves(ep)
    m = moves[index]
    for j in range(index + 1, len(ep.steps)):
        if moves[j] <= m:
            continue
        if moves[j] > m + window:
            break
        if ep.steps[j].kind == "tool" and _tool_identity(ep.steps[j]) == ident:
            return True
    return False


def retry_rates(episodes: Sequence[EpisodeTrace], *, clean: str = CLEAN,
                window: int = RETRY_WINDOW) -> dict[str, Rate]:
    """Retry rate after faulted tool steps per fault type, and after unfaulted tool steps.

    Faulted steps come from the fault-impact population; the ``unfaulted`` reference uses every
    tool step on which nothing fired, from all episodes, as the study did.
    """
    observed: list[tuple[str, bool]] = []
    for ep in episodes:
        impact = in_impact_set(ep, clean)
        moves = step_moves(ep)
        for i, s in enumerate(ep.steps):
            if s.kind != "tool":
                continue
            if is_faulted(s):
                if not impact:
                    continue
                key = fault_key(str(s.get(A.FAULT_TYPE)), s.get(A.FAULT_TARGET))
            elif s.get(A.FAULT_INJECTED):
                continue  # fired without effect: neither a faulted nor a clean observation
            else:
                key = "unfaulted"
            r = retried(ep, i, window, moves)
            if r is not None:
                observed.append((key, r))
    return _rates(observed, lambda k: (k == "unfaulted", k))


def success_by_retry(episodes: Sequence[EpisodeTrace], *, clean: str = CLEAN,
                     window: int = RETRY_WINDOW) -> dict[str, Rate]:
    """Success of triggered faulted episodes with and without a retry after a faulted tool step.

    The study's link from behaviour to outcome: a retry re-applies an operation that had in fact
    succeeded, so episodes with one should succeed less often.
    """
    observed: list[tuple[str, bool]] = []
    for ep in scored(episodes):
        if is_clean(ep, clean) or not ep.triggered:
            continue
        moves = step_moves(ep)
        any_retry = any(s.kind == "tool" and is_faulted(s) and retried(ep, i, window, moves)
                        for i, s in enumerate(ep.steps))
        observed.append(("with_retry" if any_retry else "without_retry", bool(ep.success)))
    return _rates(observed, lambda k: k != "with_retry")


def stopped_after(ep: EpisodeTrace, index: int) -> bool:
    """The agent made no tool call after step ``index`` and the episode ended on a text reply."""
    later = ep.steps[index + 1:]
    if any(s.kind == "tool" for s in later):
        return False
    llm_later = [s for s in later if s.kind == "llm"]
    if not llm_later:
        return False
    return int(llm_later[-1].get(A.RESPONSE_TOOL_CALL_COUNT, 0) or 0) == 0


def _tool_ordinal(ep: EpisodeTrace, index: int) -> int:
    return sum(1 for s in ep.steps[:index + 1] if s.kind == "tool")


def _stopped_after_tool_call(ep: EpisodeTrace, ordinal: int) -> bool:
    tools = [i for i, s in enumerate(ep.steps) if s.kind == "tool"]
    if ordinal < 1 or ordinal > len(tools):
        return False
    return stopped_after(ep, tools[ordinal - 1])


def abandonment(episodes: Sequence[EpisodeTrace], *, clean: str = CLEAN) -> dict[str, Rate]:
    """Share of single-fault episodes that fail by ending with text and no further tool call.

    Anchored on the fault: the episode failed, made no tool call after the faulted step and
    ended on a text reply. Every agent loop ends on text, so the clean reference is paired: the
    clean episode of the same (agent, task, seed) counts when it also failed and stopped calling
    tools at the same tool-call position. Reported under ``clean``.
    """
    clean_by_key = {pair_key(e): e for e in scored(episodes) if is_clean(e, clean)}
    observed: list[tuple[str, bool]] = []
    for ep in scored(episodes):
        if is_clean(ep, clean):
            continue
        faults = ep.faults()
        if len(faults) != 1:
            continue
        index = next(i for i, s in enumerate(ep.steps) if s.span_id == faults[0].span_id)
        observed.append((fault_key(faults[0].fault_type, faults[0].target),
                         not ep.success and stopped_after(ep, index)))
        partner = clean_by_key.get(pair_key(ep))
        if partner is not None:
            ordinal = _tool_ordinal(ep, index)
            observed.append(("clean", not partner.success and ordinal > 0
                             and _stopped_after_tool_call(partner, ordinal)))
    return _rates(observed, _clean_last)


def turn_abandonment(episodes: Sequence[EpisodeTrace], *, clean: str = CLEAN) -> dict[str, Rate]:
    """Share of faulted tool steps whose next model reply is text with no tool call.

    The turn-level reading of abandonment: on multi-turn tasks every episode ends with text, so
    the episode-level reading cannot tell giving up from finishing; the reply right after the
    fault can. Step unit: tool spans (the faulted one) and the next LLM span after it. Faulted
    tool steps come from single-fault episodes; the ``clean`` reference is every tool step of the
    clean episodes, which shows how often a text reply follows a tool result anyway (a turn's
    natural end).
    """
    observed: list[tuple[str, bool]] = []

    def next_reply_is_text(ep: EpisodeTrace, index: int) -> bool | None:
        later = [s for s in ep.steps[index + 1:] if s.kind == "llm"]
        if not later:
            return None
        return int(later[0].get(A.RESPONSE_TOOL_CALL_COUNT, 0) or 0) == 0

    for ep in scored(episodes):
        if is_clean(ep, clean):
            for i, s in enumerate(ep.steps):
                if s.kind == "tool" and not s.get(A.FAULT_INJECTED):
                    r = next_reply_is_text(ep, i)
                    if r is not None:
                        observed.append(("clean", r))
            continue
        faults = ep.faults()
        if len(faults) != 1 or faults[0].target not in (None, A.TARGET_TOOL_RESULT):
            continue
        index = next(i for i, s in enumerate(ep.steps) if s.span_id == faults[0].span_id)
        r = next_reply_is_text(ep, index)
        if r is not None:
            observed.append((fault_key(faults[0].fault_type, faults[0].target), r))
    return _rates(observed, _clean_last)


def _clean_last(key: str) -> tuple[bool, str]:
    """Fault types in name order, the clean reference last."""
    return (key == "clean", key)


# What each measure counts as a step; printed with the report so readers need not guess.
STEP_UNITS = {
    "moves/ep": "LLM calls per episode (a move = one LLM call and the tool calls it issued; traces "
                "without LLM spans count tool calls)",
    "tool calls/ep": "execute_tool spans per episode",
    "retry": "faulted tool spans; a retry is the identical call (tool + argument digest) within the "
             f"next {RETRY_WINDOW} moves",
    "abandonment (episode)": "single-fault episodes that failed with no tool span after the fault "
                             "and ended on a text reply",
    "abandonment (turn)": "faulted tool spans whose next LLM span is a text reply with no tool call",
    "burst runs": "consecutive faulted steps within each kind's own sequence (tool spans for tool "
                  "conditions, LLM spans for LLM plans)",
    "contribution n": "episodes in the logistic fit (tool-result and LLM faults are fitted apart)",
}


# --- Burst structure, crashes -------------------------------------------------------------------

@dataclass(frozen=True)
class RunLengths:
    condition: str
    runs: int
    mean: float | None
    longest: int
    faulted_steps: int
    eligible_steps: int

    @property
    def rate(self) -> float | None:
        return self.faulted_steps / self.eligible_steps if self.eligible_steps else None


def burst_run_lengths(episodes: Sequence[EpisodeTrace]) -> dict[str, RunLengths]:
    """Consecutive faulted steps per condition, measured on what was fired.

    Tool-result conditions schedule per tool call and LLM plans per LLM call, so runs are
    counted within each kind's own sequence: a tool fault followed by the next tool call's
    fault is a run of two even though an LLM step lies between them.
    """
    runs: dict[str, list[int]] = defaultdict(list)
    faulted: Counter[str] = Counter()
    eligible: Counter[str] = Counter()
    for ep in episodes:
        cond = condition_of(ep)
        for kind in ("tool", "llm"):
            flags = [bool(s.get(A.FAULT_INJECTED)) for s in ep.steps if s.kind == kind]
            if kind == "llm" and not any(flags):
                continue  # no LLM faults here: LLM steps are not part of this condition's schedule
            if kind == "tool" and not any(flags) and any(s.get(A.FAULT_INJECTED) for s in ep.llm_steps):
                continue
            runs[cond].extend(run_lengths(flags))
            faulted[cond] += sum(flags)
            eligible[cond] += len(flags)
    out = {}
    for cond in sorted(set(eligible) | set(runs), key=_condition_order):
        r = runs[cond]
        out[cond] = RunLengths(cond, len(r), float(np.mean(r)) if r else None, max(r, default=0),
                               faulted[cond], eligible[cond])
    return out


@dataclass(frozen=True)
class Crash:
    trace_id: str
    task_id: str | None
    condition: str
    seed: int | None
    error: str


def crashes(episodes: Sequence[EpisodeTrace]) -> list[Crash]:
    return [Crash(e.trace_id, e.task_id, condition_of(e), e.seed, str(e.attributes.get(A.EPISODE_ERROR)))
            for e in episodes if crashed(e)]


def is_simulated(episodes: Sequence[EpisodeTrace]) -> bool:
    return any(bool(e.attributes.get(A.SIMULATED)) for e in episodes)


# --- Everything at once -------------------------------------------------------------------------

@dataclass
class StudyMeasures:
    episodes: int
    simulated: bool
    clean: str
    seed: int
    resamples: int
    conditions: dict[str, ConditionSummary]
    paired: dict[str, PairedDifference]
    paired_triggered: dict[str, PairedDifference]
    contributions: Contributions
    single_fault: dict[str, Estimate]
    retry: dict[str, Rate]
    retry_success: dict[str, Rate]
    abandonment: dict[str, Rate]
    bursts: dict[str, RunLengths]
    crashes: list[Crash]
    warnings: list[str] = field(default_factory=list)
    episodes_without_root: int = 0  # traces with steps but no ended root: left out of every measure
    turn_abandonment: dict[str, Rate] = field(default_factory=dict)
    guards: Any = None  # campaign.guard_report.GuardMeasures when guarded conditions were run
    units: dict[str, str] = field(default_factory=lambda: dict(STEP_UNITS))

    def as_dict(self) -> dict[str, Any]:
        def conv(v: Any) -> Any:
            if isinstance(v, Rate):
                return v.as_dict()
            if isinstance(v, RunLengths):
                return {**asdict(v), "rate": v.rate}
            if hasattr(v, "__dataclass_fields__"):
                return {k: conv(getattr(v, k)) for k in v.__dataclass_fields__}
            if isinstance(v, dict):
                return {str(k): conv(x) for k, x in v.items()}
            if isinstance(v, list | tuple):
                return [conv(x) for x in v]
            return v

        return conv(self)


def compute_all(episodes: Sequence[EpisodeTrace], *, clean: str = CLEAN, seed: int = 0,
                resamples: int = DEFAULT_RESAMPLES) -> StudyMeasures:
    notes: list[str] = []
    everything = list(episodes)
    episodes = [e for e in everything if has_root(e)]
    unended = len(everything) - len(episodes)
    if unended:
        notes.append(f"{unended} trace(s) have steps but no ended episode root (an agent killed mid-episode, or "
                     "a root not exported yet): left out of every measure")
    frame = episode_frame(episodes)  # once: every condition-level measure reads it
    conds = condition_summaries(episodes, seed=seed, resamples=resamples, frame=frame)
    if not episodes:
        notes.append("no episodes in the corpus")
    elif clean not in conds:
        notes.append(f"no clean ('{clean}') episodes: paired differences cannot be computed")
    elif len(conds) == 1:
        notes.append(f"only the '{clean}' condition was run: no fault measures")
    sim = sum(bool(e.attributes.get(A.SIMULATED)) for e in episodes)
    if 0 < sim < len(episodes):
        notes.append(f"{sim} of {len(episodes)} episodes are simulated: the corpus mixes simulated and "
                     "real-model episodes, so everything is labelled SIMULATED")
    if episodes and not scored(episodes):
        notes.append("no episode has a recorded outcome: success measures are empty")
    if episodes and not any(e.triggered for e in episodes):
        notes.append("no fault changed what an agent saw: fault-impact measures are empty")
    # Guarded episodes ('<condition>+guarded') have their own section; the study's measures of
    # how the agent reacts to faults read the unguarded ones only.
    study = [e for e in episodes if not condition_of(e).endswith(GUARDED_SUFFIX)]
    # The same rows as episode_frame(study), in the same order: canonical order is a stable sort.
    study_frame = frame.filter(~pl.col("condition").str.ends_with(GUARDED_SUFFIX))
    if len(study) < len(episodes):
        notes.append(f"{len(episodes) - len(study)} guarded episodes are left out of contributions, single-fault "
                     "success, retry and abandonment (see the guards tables)")
    contrib = type_contributions(study, clean=clean, seed=seed, resamples=resamples)
    if contrib.note:
        notes.append(f"contributions: {contrib.note}")
    paired = paired_differences(episodes, clean=clean, seed=seed, resamples=resamples, frame=frame)
    for cond, pd in paired.items():
        if stats.zero_width(pd.difference.low, pd.difference.high, pd.pairs):
            notes.append(f"paired Δ of '{cond}': {stats.ZERO_WIDTH_CAVEAT} (n={pd.pairs})")
    small = [c for c, s in conds.items() if stats.is_small(s.scored)]
    if small:
        notes.append(f"fewer than {stats.SMALL_N} scored episodes in {', '.join(small)}: their intervals are "
                     f"marked '{stats.SMALL_N_MARK}' and should not be read as precise")
    from agentchaos_otel.campaign.guard_report import guard_measures

    guards = guard_measures(episodes, seed=seed, resamples=resamples)
    if guards is not None:
        notes.extend(f"guards: {n}" for n in guards.notes)
    return StudyMeasures(
        episodes=len(episodes), simulated=is_simulated(episodes), clean=clean, seed=seed,
        resamples=resamples, conditions=conds,
        paired=paired,
        paired_triggered=paired_differences(episodes, clean=clean, seed=seed, resamples=resamples,
                                            triggered_only=True, frame=frame),
        contributions=contrib,
        single_fault=single_fault_success(study, clean=clean, seed=seed, resamples=resamples, frame=study_frame),
        retry=retry_rates(study, clean=clean), retry_success=success_by_retry(study, clean=clean),
        abandonment=abandonment(study, clean=clean), turn_abandonment=turn_abandonment(study, clean=clean),
        bursts=burst_run_lengths(episodes), crashes=crashes(episodes), warnings=notes, guards=guards,
        episodes_without_root=unended,
    )
