"""Live diagnosis: the rule diagnoser runs when a failed episode ends, before its root is exported.

``configure(diagnose_live=True)`` adds this processor. It keeps the finished LLM and tool spans
of each open episode (as the same ``StepRecord`` the store would load, so the verdict equals what
``diagnose traces.duckdb`` says later), and ``Episode.__exit__`` calls :meth:`on_episode_end`
while the root span is still open: a failed episode's root then carries an
``agentchaos.diagnosis`` event and the ``agentchaos.diagnosis.*`` attributes, so a Jaeger or
Tempo user sees the root cause without running anything. Steps ended earlier cannot be changed
(ended spans are read-only); the root names the blamed span and step instead.

Fails open: any error while diagnosing is logged and the episode ends as it would have.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.trace import Status, StatusCode

from agentchaos_otel import attributes as A
from agentchaos_otel.records import EpisodeTrace, StepRecord
from agentchaos_otel.store.read.live_steps import in_start_order, step_from_span
from agentchaos_otel.trace import metrics as instruments
from agentchaos_otel.trace import verdicts

log = logging.getLogger(__name__)

MAX_OPEN_TRACES = 2048  # episodes whose root never ends must not grow memory without bound


def _status_message(span: Any) -> str | None:
    """The message a failed root already carries (the episode's error), kept after the verdict."""
    status = getattr(span, "status", None)
    return status.description if status is not None and status.status_code == StatusCode.ERROR else None


class LiveDiagnosisProcessor(SpanProcessor):
    def __init__(self) -> None:
        from diagnosers.rules import RuleDiagnoser

        self.diagnoser = RuleDiagnoser()
        self._steps: OrderedDict[int, list[StepRecord]] = OrderedDict()
        self._lock = threading.Lock()

    def on_end(self, span: ReadableSpan) -> None:
        try:
            ctx = span.context
            if ctx is None:
                return
            with self._lock:
                steps = self._steps.get(ctx.trace_id)
                record = step_from_span(span, len(steps or ()))
                if record is None:
                    if span.parent is None:  # a root ended: its episode is over
                        self._steps.pop(ctx.trace_id, None)
                    return
                if steps is None:
                    steps = self._steps[ctx.trace_id] = []
                    while len(self._steps) > MAX_OPEN_TRACES:
                        self._steps.popitem(last=False)
                steps.append(record)
        except Exception:  # fail open
            log.debug("live diagnosis skipped a span", exc_info=True)

    def on_episode_end(self, episode: Any) -> None:
        """Called by ``Episode.__exit__`` before the root span ends."""
        try:
            span = episode.span
            if span is None or episode.success is not False:
                return
            trace_id = span.get_span_context().trace_id
            with self._lock:
                steps = list(self._steps.get(trace_id, ()))
            from diagnosers.base import diagnose_episodes

            trace = EpisodeTrace(trace_id=format(trace_id, "032x"), task_id=episode.task_id,
                                 steps=tuple(in_start_order(steps)), success=False,
                                 condition=episode.condition, seed=episode.seed)
            (d,) = diagnose_episodes(self.diagnoser, [trace])
            row = d.to_dict()
            span.add_event(A.EVENT_DIAGNOSIS, {**verdicts.event_attributes(row), A.DIAGNOSIS_LIVE: True})
            span.set_attributes(verdicts.root_summary(row))
            # Trace lists show a status message, not attributes: the verdict leads it, worded as
            # ``traces export`` words it, in front of what the episode said.
            span.set_status(Status(StatusCode.ERROR, verdicts.root_status(row, _status_message(span))))
            instruments.record_diagnosis(d.fault_type, d.method)
        except Exception:  # fail open
            log.warning("live diagnosis failed; the episode is exported without a verdict", exc_info=True)
