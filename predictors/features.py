"""Step-prefix features for failure prediction, computed one step at a time.

The live span processor and the offline extraction must produce the same numbers for the same
steps, otherwise a threshold chosen offline means nothing live. Both therefore go through one
incremental ``FeatureState``: offline extraction just replays an episode's steps into it.

Only what an observer outside the model could see is used: span status, the observable-derived
``agentchaos.response.*`` / ``agentchaos.tool.*`` signals, token counts, latency and, when the
provider returned them, per-call logprob entropy. Ground truth (``agentchaos.fault.*``,
``agentchaos.original.*``) is stripped before a step reaches the state.

Definitions worth knowing when reading coefficients:

- A *step* is one LLM or tool span (``agentchaos.step`` numbering), so an agent turn with one
  tool call is two steps.
- A tool call *changed state* when its span says so (``agentchaos.tool.state_changed``); spans
  without that attribute count as state-changing when the result was neither an error nor empty
  and the tool name does not look like a read-only getter (``READ_ONLY_TOOL``, matched on the
  last ``.``/``__``-separated part of the name).
- ``no_change_run`` counts steps since the last state-changing tool call (or since the start).
- A tool call is a *retry* when the same tool name with the same argument digest appears among
  the previous ``RETRY_WINDOW`` tool calls (the study's "within 3 steps", counted in tool calls
  because its steps were tool-call steps).
- Entropy features aggregate the per-call ``agentchaos.logprobs.*`` attributes: token-weighted
  mean, max, the latest call's mean, least-squares slope over the last ``TREND_WINDOW`` calls,
  and the mean / minimum covered top-k probability mass. ``logprob_coverage`` (share of LLM calls
  that carried logprobs) is computed for reports but kept out of every feature set: a call
  without logprobs is usually a failed call, so it would smuggle an external error signal into
  the entropy-only set.
"""

from __future__ import annotations

import math
import re
from array import array
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel.records import EpisodeTrace, StepRecord
from agentchaos_otel.signals import digest

RETRY_WINDOW = 3
TREND_WINDOW = 5

READ_ONLY_TOOL = re.compile(
    r"^(get|list|find|search|read|fetch|query|check|lookup|look_up|view|show|describe|display|count"
    r"|is|has|ls|pwd|cat|grep|du|wc|diff|tail|head|sort|estimate|compute|calculate|retrieve|verify)"
    r"(_|$|[A-Z])",
)

# Every step attribute the features read. The live processor copies only these from a span, so
# a feature reading anything else would silently differ live; a test records every key the
# features touch and checks it against this list. None of them is ground truth.
OBSERVED_KEYS: tuple[str, ...] = (
    A.GEN_AI_TOOL_NAME, A.OI_TOOL_NAME, A.GEN_AI_TOOL_CALL_ARGUMENTS, A.TOOL_ARGS_DIGEST,
    A.TOOL_RESULT_IS_ERROR, A.TOOL_RESULT_ERROR_MARKER, A.TOOL_RESULT_EMPTY, A.TOOL_STATE_CHANGED,
    A.TOOL_RESULT_JSON_LIKE, A.TOOL_RESULT_IS_JSON,
    A.RESPONSE_STATUS_CODE, A.HTTP_RESPONSE_STATUS_CODE, A.RESPONSE_ERROR_MARKER, A.RESPONSE_TOOL_CALL_COUNT,
    A.RESPONSE_CONTENT_LENGTH, A.RESPONSE_TOOL_ARGS_DIGEST, A.RESPONSE_TOOL_NAMES,
    A.GEN_AI_RESPONSE_FINISH_REASONS, A.GEN_AI_USAGE_INPUT_TOKENS, A.GEN_AI_USAGE_OUTPUT_TOKENS,
    A.LOGPROBS_ENTROPY_MEAN, A.LOGPROBS_ENTROPY_MAX, A.LOGPROBS_ENTROPY_LAST, A.LOGPROBS_TOP_MASS,
    A.LOGPROBS_TOKENS,
)
assert not any(A.is_ground_truth(k) for k in OBSERVED_KEYS)

EXTERNAL_FEATURES: tuple[str, ...] = (
    "steps",
    "llm_calls",
    "tool_calls",
    "tool_errors",
    "tool_error_rate",
    "tool_empty_results",
    "tool_malformed_results",
    "last_tool_error",
    "no_change_run",
    "max_no_change_run",
    "state_changes",
    "retries",
    "llm_repeat_calls",
    "text_answers",
    "last_text_answer",
    "empty_responses",
    "length_finishes",
    "llm_errors",
    "log_input_tokens_last",
    "log_output_tokens_mean",
    "log_llm_latency_ms_mean",
    "log_llm_latency_ms_last",
)

ENTROPY_FEATURES: tuple[str, ...] = (
    "entropy_mean",
    "entropy_max",
    "entropy_last",
    "entropy_last_token",
    "entropy_trend",
    "top_mass_mean",
    "top_mass_min",
)

FEATURE_SETS: dict[str, tuple[str, ...]] = {
    "external": EXTERNAL_FEATURES,
    "entropy": ENTROPY_FEATURES,
    "both": EXTERNAL_FEATURES + ENTROPY_FEATURES,
}


def feature_names(feature_set: str) -> tuple[str, ...]:
    try:
        return FEATURE_SETS[feature_set]
    except KeyError:
        raise ValueError(f"unknown feature set {feature_set!r}; choose one of "
                         f"{', '.join(FEATURE_SETS)}") from None


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    f = float(value)
    return f if math.isfinite(f) else None


def _base_tool_name(name: str) -> str:
    return re.split(r"\.|__", name)[-1]


def tool_name(step: StepRecord) -> str:
    name = step.get(A.GEN_AI_TOOL_NAME) or step.get(A.OI_TOOL_NAME)
    if isinstance(name, str) and name:
        return name
    prefix = A.OP_EXECUTE_TOOL + " "
    return step.name[len(prefix):] if step.name.startswith(prefix) else step.name


def tool_failed(step: StepRecord) -> bool:
    """An error the agent could see: failed span, or a result that reads as an error."""
    return (step.status_code == "ERROR" or bool(step.error_type)
            or bool(step.get(A.TOOL_RESULT_IS_ERROR)) or bool(step.get(A.TOOL_RESULT_ERROR_MARKER)))


def tool_changed_state(step: StepRecord) -> bool:
    declared = step.get(A.TOOL_STATE_CHANGED)
    if isinstance(declared, bool):
        return declared
    if tool_failed(step) or step.get(A.TOOL_RESULT_EMPTY):
        return False
    return READ_ONLY_TOOL.match(_base_tool_name(tool_name(step))) is None


def tool_call_key(step: StepRecord) -> tuple[str, str] | None:
    """Identity of a tool call for retry counting; None when the arguments are unknown."""
    args_digest = step.get(A.TOOL_ARGS_DIGEST)
    if not args_digest:
        raw = step.get(A.GEN_AI_TOOL_CALL_ARGUMENTS)
        args_digest = digest(raw) if isinstance(raw, str) else None
    return (tool_name(step), str(args_digest)) if args_digest else None


def llm_failed(step: StepRecord) -> bool:
    status = _num(step.get(A.RESPONSE_STATUS_CODE)) or _num(step.get(A.HTTP_RESPONSE_STATUS_CODE))
    return (step.status_code == "ERROR" or bool(step.error_type) or bool(step.get(A.RESPONSE_ERROR_MARKER))
            or (status is not None and status >= 400))


def _slope(values: Sequence[float]) -> float:
    n = len(values)
    if n < 2:
        return 0.0
    mx = (n - 1) / 2
    my = sum(values) / n
    sxx = sum((i - mx) ** 2 for i in range(n))
    return sum((i - mx) * (v - my) for i, v in enumerate(values)) / sxx


@dataclass
class FeatureState:
    """Running features of one episode; ``update`` with each finished step, read ``values``."""

    steps: int = 0
    llm_calls: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    tool_empty_results: int = 0
    tool_malformed_results: int = 0
    last_tool_error: bool = False
    no_change_run: int = 0
    max_no_change_run: int = 0
    state_changes: int = 0
    retries: int = 0
    llm_repeat_calls: int = 0
    text_answers: int = 0
    last_text_answer: bool = False
    empty_responses: int = 0
    length_finishes: int = 0
    llm_errors: int = 0
    input_tokens_last: float = 0.0
    output_tokens_sum: float = 0.0
    output_tokens_n: int = 0
    latency_sum_ms: float = 0.0
    latency_last_ms: float = 0.0
    logprob_calls: int = 0
    entropy_weighted_sum: float = 0.0
    entropy_weight: float = 0.0
    entropy_max: float = 0.0
    entropy_last: float = 0.0
    entropy_last_token: float = 0.0
    mass_sum: float = 0.0
    mass_n: int = 0
    mass_min: float = 0.0
    recent_tool_keys: deque[tuple[str, str] | object] = field(
        default_factory=lambda: deque(maxlen=RETRY_WINDOW))
    recent_llm_calls: deque[str | object] = field(default_factory=lambda: deque(maxlen=RETRY_WINDOW))
    recent_entropy: deque[float] = field(default_factory=lambda: deque(maxlen=TREND_WINDOW))

    def update(self, step: StepRecord) -> None:
        if step.kind == "tool":
            self._update_tool(step)
        elif step.kind == "llm":
            self._update_llm(step)
        else:
            return
        self.steps += 1
        self.max_no_change_run = max(self.max_no_change_run, self.no_change_run)

    def _update_tool(self, step: StepRecord) -> None:
        self.tool_calls += 1
        failed = tool_failed(step)
        self.tool_errors += failed
        self.last_tool_error = failed
        self.tool_empty_results += bool(step.get(A.TOOL_RESULT_EMPTY))
        # Looks like JSON but does not parse: a result cut part-way.
        self.tool_malformed_results += (step.get(A.TOOL_RESULT_JSON_LIKE) is True
                                        and step.get(A.TOOL_RESULT_IS_JSON) is False)
        if tool_changed_state(step):
            self.state_changes += 1
            self.no_change_run = 0
        else:
            self.no_change_run += 1
        key = tool_call_key(step)
        if key is not None and key in self.recent_tool_keys:
            self.retries += 1
        # An unknown call still occupies a slot of the window, so the window stays 3 tool calls.
        self.recent_tool_keys.append(key if key is not None else object())

    def _update_llm(self, step: StepRecord) -> None:
        self.llm_calls += 1
        self.no_change_run += 1
        failed = llm_failed(step)
        self.llm_errors += failed
        n_calls = _num(step.get(A.RESPONSE_TOOL_CALL_COUNT))
        length = _num(step.get(A.RESPONSE_CONTENT_LENGTH))
        text_only = False
        if n_calls == 0 and length is not None and not failed:
            if length > 0:
                self.text_answers += 1
                text_only = True
            else:
                self.empty_responses += 1
        self.last_text_answer = text_only
        args_digest = step.get(A.RESPONSE_TOOL_ARGS_DIGEST)
        if n_calls and args_digest:
            names = step.get(A.RESPONSE_TOOL_NAMES)
            key = f"{','.join(map(str, names)) if isinstance(names, list | tuple) else names}|{args_digest}"
            self.llm_repeat_calls += key in self.recent_llm_calls
            self.recent_llm_calls.append(key)
        finish = step.get(A.GEN_AI_RESPONSE_FINISH_REASONS)
        reasons = [finish] if isinstance(finish, str) else list(finish or [])
        self.length_finishes += "length" in reasons or "max_tokens" in reasons
        in_tok = _num(step.get(A.GEN_AI_USAGE_INPUT_TOKENS))
        if in_tok is not None:
            self.input_tokens_last = in_tok
        out_tok = _num(step.get(A.GEN_AI_USAGE_OUTPUT_TOKENS))
        if out_tok is not None:
            self.output_tokens_sum += out_tok
            self.output_tokens_n += 1
        self.latency_last_ms = step.duration_ms
        self.latency_sum_ms += step.duration_ms
        self._update_entropy(step)

    def _update_entropy(self, step: StepRecord) -> None:
        mean = _num(step.get(A.LOGPROBS_ENTROPY_MEAN))
        if mean is None:
            return
        self.logprob_calls += 1
        weight = _num(step.get(A.LOGPROBS_TOKENS)) or 1.0
        self.entropy_weighted_sum += mean * weight
        self.entropy_weight += weight
        peak = _num(step.get(A.LOGPROBS_ENTROPY_MAX))
        self.entropy_max = max(self.entropy_max, peak if peak is not None else mean)
        self.entropy_last = mean
        last_token = _num(step.get(A.LOGPROBS_ENTROPY_LAST))
        self.entropy_last_token = last_token if last_token is not None else mean
        self.recent_entropy.append(mean)
        mass = _num(step.get(A.LOGPROBS_TOP_MASS))
        if mass is not None:
            self.mass_min = mass if self.mass_n == 0 else min(self.mass_min, mass)
            self.mass_sum += mass
            self.mass_n += 1

    def values(self) -> dict[str, float]:
        """Every feature of the prefix seen so far (missing logprobs give zeros, coverage 0)."""
        llm = max(1, self.llm_calls)
        return {
            "steps": float(self.steps),
            "llm_calls": float(self.llm_calls),
            "tool_calls": float(self.tool_calls),
            "tool_errors": float(self.tool_errors),
            "tool_error_rate": self.tool_errors / max(1, self.tool_calls),
            "tool_empty_results": float(self.tool_empty_results),
            "tool_malformed_results": float(self.tool_malformed_results),
            "last_tool_error": float(self.last_tool_error),
            "no_change_run": float(self.no_change_run),
            "max_no_change_run": float(self.max_no_change_run),
            "state_changes": float(self.state_changes),
            "retries": float(self.retries),
            "llm_repeat_calls": float(self.llm_repeat_calls),
            "text_answers": float(self.text_answers),
            "last_text_answer": float(self.last_text_answer),
            "empty_responses": float(self.empty_responses),
            "length_finishes": float(self.length_finishes),
            "llm_errors": float(self.llm_errors),
            "log_input_tokens_last": math.log1p(self.input_tokens_last),
            "log_output_tokens_mean": math.log1p(self.output_tokens_sum / max(1, self.output_tokens_n)),
            "log_llm_latency_ms_mean": math.log1p(self.latency_sum_ms / llm),
            "log_llm_latency_ms_last": math.log1p(self.latency_last_ms),
            "entropy_mean": self.entropy_weighted_sum / self.entropy_weight if self.entropy_weight else 0.0,
            "entropy_max": self.entropy_max,
            "entropy_last": self.entropy_last,
            "entropy_last_token": self.entropy_last_token,
            "entropy_trend": _slope(list(self.recent_entropy)),
            "top_mass_mean": self.mass_sum / self.mass_n if self.mass_n else 0.0,
            "top_mass_min": self.mass_min,
            "logprob_coverage": self.logprob_calls / llm,
        }

    def vector(self, names: Sequence[str]) -> list[float]:
        vals = self.values()
        return [vals[n] for n in names]


def prefix_features(episode: EpisodeTrace) -> list[dict[str, float]]:
    """Features after each step of the episode (blinded first), one dict per step prefix."""
    state = FeatureState()
    out = []
    for step in sorted(episode.blind().steps, key=lambda s: s.step):
        state.update(step)
        out.append(state.values())
    return out


def has_logprobs(episodes: Iterable[EpisodeTrace]) -> bool:
    return any(_num(s.get(A.LOGPROBS_ENTROPY_MEAN)) is not None for e in episodes for s in e.llm_steps)


@dataclass(frozen=True, eq=False)
class PrefixTable:
    """Step-prefix rows of many episodes, keeping which episode and step each row came from.

    ``rows`` is one float64 array (a row per prefix, a column per name), not a list of lists: a
    fleet's trace file gives millions of prefixes, and as Python lists they were the largest
    live object graph of the process, which the garbage collector walked again and again (a
    third of the CPU time at 10k episodes, and a growing share beyond).
    """

    names: tuple[str, ...]
    rows: Any  # numpy.ndarray of shape (len(episode), len(names))
    episode: list[int]  # index into the episode list
    step: list[int]  # step number of the last step in the prefix

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PrefixTable):
            return NotImplemented
        return (self.names == other.names and self.episode == other.episode and self.step == other.step
                and self.rows.shape == other.rows.shape and bool((self.rows == other.rows).all()))

    __hash__ = None  # type: ignore[assignment]


def prefix_table(episodes: Iterable[EpisodeTrace], names: Sequence[str]) -> PrefixTable:
    """Feature rows of every step prefix of every episode (episodes may be streamed)."""
    import numpy as np

    flat = array("d")  # unboxed floats, invisible to the garbage collector
    ep_idx: list[int] = []
    step_idx: list[int] = []
    for i, ep in enumerate(episodes):
        steps = sorted(ep.steps, key=lambda s: s.step)
        for step, vals in zip(steps, prefix_features(ep), strict=True):
            flat.extend([vals[n] for n in names])
            ep_idx.append(i)
            step_idx.append(step.step)
    rows = np.frombuffer(flat, dtype=np.float64).reshape(len(ep_idx), len(names)) if flat else \
        np.zeros((len(ep_idx), len(names)))
    return PrefixTable(tuple(names), rows, ep_idx, step_idx)


def describe(values: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={v:.3g}" for k, v in values.items())
