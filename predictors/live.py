"""Live failure warning: an OpenTelemetry span processor that scores each step as the agent runs.

It keeps one ``FeatureState`` per trace (one trace = one episode) and feeds it each LLM or tool
span in ``on_end`` through the same ``FeatureState.update`` the offline extraction uses, after
turning the span into a ``StepRecord`` holding the attributes the features read (never ground
truth), and both score through ``FailurePredictor.score_vector``, so live and offline scores are
bit-identical for the same steps.

Ended spans are read-only, so a score is written where a span is still open:

- on the next LLM or tool span of the episode, at its start: ``agentchaos.predictor.score`` is the
  score of the prefix the agent had when it began that step (``agentchaos.predictor.step`` names
  the last step of that prefix), plus ``agentchaos.predictor.alarm`` once the episode has alarmed;
- on the episode's root ``invoke_agent`` span, which stays open until the episode ends: the
  latest score (so the root ends with the score of the whole episode), ``agentchaos.predictor.alarm``
  (false until the threshold is crossed) and, at the crossing, one ``failure_predicted`` event
  carrying the score, step and threshold. The user callback is called at the same moment, once
  per episode.

Steps are taken in the order their spans end; for an agent that runs tools concurrently this can
differ from start order, and the retry window then follows end order.

The processor fails open: anything unexpected while scoring is logged and the span is left alone.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from agentchaos_otel import attributes as A
from agentchaos_otel import redact
from agentchaos_otel.store.read.live_steps import is_episode_root, span_step_kind, step_from_span
from predictors.features import OBSERVED_KEYS, FeatureState
from predictors.model import FailurePredictor

log = redact.get_logger(__name__)

@dataclass(frozen=True)
class Alarm:
    """What the callback receives when an episode first crosses the threshold."""

    trace_id: str
    task_id: str | None
    step: int
    score: float
    threshold: float


@dataclass
class _Episode:
    state: FeatureState = field(default_factory=FeatureState)
    root: Span | None = None
    root_span_id: int | None = None
    task_id: str | None = None
    seen: int = 0
    last_score: float | None = None
    last_step: int | None = None
    alarmed: bool = False
    history: list[tuple[int, float]] = field(default_factory=list)


class LivePredictorProcessor(SpanProcessor):
    """Scores every step prefix of every episode as its spans end; see the module docstring."""

    def __init__(self, predictor: FailurePredictor | str | Path,
                 on_alarm: Callable[[Alarm], None] | None = None, *,
                 max_open_traces: int = 10_000, keep_finished: int = 1_000) -> None:
        if not isinstance(predictor, FailurePredictor):
            predictor = FailurePredictor.load(predictor)
        self.predictor = predictor
        self.on_alarm = on_alarm
        self._open: OrderedDict[int, _Episode] = OrderedDict()
        self._finished: OrderedDict[int, list[tuple[int, float]]] = OrderedDict()
        self._max_open = max_open_traces
        self._keep_finished = keep_finished
        self._lock = threading.Lock()

    # --- SpanProcessor ------------------------------------------------------------------------
    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        try:
            self._on_start(span)
        except Exception:  # fail open: never break the agent's span
            log.exception("live predictor failed at span start")

    def on_end(self, span: ReadableSpan) -> None:
        try:
            self._on_end(span)
        except Exception:
            log.exception("live predictor failed at span end")

    def shutdown(self) -> None:
        with self._lock:
            self._open.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    # --- queries ------------------------------------------------------------------------------
    def history(self, trace_id: int | str) -> list[tuple[int, float]]:
        """(step, score) for every scored prefix of a running or recently finished episode."""
        key = int(trace_id, 16) if isinstance(trace_id, str) else trace_id
        with self._lock:
            if key in self._open:
                return list(self._open[key].history)
            return list(self._finished.get(key, []))

    # --- internals ----------------------------------------------------------------------------
    def _episode(self, trace_id: int) -> _Episode:
        ep = self._open.get(trace_id)
        if ep is None:
            ep = self._open[trace_id] = _Episode()
            while len(self._open) > self._max_open:
                old_id, old = self._open.popitem(last=False)
                self._retire(old_id, old)
        return ep

    def _retire(self, trace_id: int, ep: _Episode) -> None:
        self._finished[trace_id] = ep.history
        while len(self._finished) > self._keep_finished:
            self._finished.popitem(last=False)

    def _on_start(self, span: Span) -> None:
        ctx = span.get_span_context()
        attrs = span.attributes
        if is_episode_root(attrs) and (span.parent is None or span.parent.is_remote):
            with self._lock:
                ep = self._episode(ctx.trace_id)
                ep.root = span
                ep.root_span_id = ctx.span_id
                task = attrs.get(A.TASK_ID)
                ep.task_id = str(task) if task is not None else ep.task_id
            return
        if span_step_kind(attrs, span.kind) is None:
            return
        with self._lock:
            ep = self._open.get(ctx.trace_id)
            if ep is None or ep.last_score is None:
                return
            score, step, alarmed = ep.last_score, ep.last_step, ep.alarmed
        marks: dict[str, Any] = {A.PREDICTOR_SCORE: score, A.PREDICTOR_STEP: step if step is not None else -1}
        if alarmed:
            marks[A.PREDICTOR_ALARM] = True
        span.set_attributes(marks)

    def _on_end(self, span: ReadableSpan) -> None:
        ctx = span.context
        if ctx is None:
            return
        attrs = span.attributes or {}
        if is_episode_root(attrs):
            with self._lock:
                ep = self._open.get(ctx.trace_id)
                if ep is not None and ep.root_span_id == ctx.span_id:
                    del self._open[ctx.trace_id]
                    self._retire(ctx.trace_id, ep)
            return
        if span_step_kind(attrs, span.kind) is None:
            return
        with self._lock:
            ep = self._episode(ctx.trace_id)
            record = step_from_span(span, ep.seen, keys=OBSERVED_KEYS)
            if record is None:
                return
            ep.seen += 1
            ep.state.update(record)
            score = self.predictor.score_state(ep.state)
            ep.last_score, ep.last_step = score, record.step
            ep.history.append((record.step, score))
            if ep.task_id is None and attrs.get(A.TASK_ID) is not None:
                ep.task_id = str(attrs.get(A.TASK_ID))
            first = len(ep.history) == 1
            crossed = not ep.alarmed and self.predictor.alarms(score)
            ep.alarmed = ep.alarmed or crossed
            root, task_id = ep.root, ep.task_id
        if root is not None and root.is_recording():
            if first or crossed:
                root.set_attributes({A.PREDICTOR_SCORE: score, A.PREDICTOR_ALARM: crossed})
            else:
                root.set_attribute(A.PREDICTOR_SCORE, score)
            if crossed:
                root.add_event(A.EVENT_FAILURE_PREDICTED, {
                    A.PREDICTOR_SCORE: score, A.PREDICTOR_STEP: record.step,
                    A.PREDICTOR_THRESHOLD: self.predictor.threshold,
                    A.PREDICTOR_FEATURE_SET: self.predictor.feature_set})
        if crossed and self.on_alarm is not None:
            try:
                self.on_alarm(Alarm(format(ctx.trace_id, "032x"), task_id, record.step, score,
                                    self.predictor.threshold))
            except Exception:
                log.exception("failure-predicted callback raised")
