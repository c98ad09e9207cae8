"""Every ended episode is on disk before ``episode()`` returns.

A batch span processor holds spans in memory for up to five seconds (or a batch of them), so a process
that is killed (SIGKILL, OOM killer, a crashing native extension) loses every span of a short run,
and the crashed runs are exactly the ones a chaos tool exists to explain. ``EpisodeFlushProcessor``
sits right after the DuckDB batch processor: when an episode's root span ends (``span.end()`` runs
processors synchronously, inside ``Episode.__exit__``), it flushes that processor, whose exporter
writes the database or, when the file is locked or broken, appends to the fsynced spool within the
exporter's lock timeout. A crash then loses at most the episode in flight. Spans outside episodes
keep the batching, so the cost is one store write per episode, and none for a root span whose
trace has no LLM or tool step.
"""

from __future__ import annotations

import logging
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from agentchaos_otel import attributes as A

logger = logging.getLogger(__name__)

DEFAULT_FLUSH_TIMEOUT_MS = 30_000


def is_episode_root(span: ReadableSpan) -> bool:
    """The root of an episode: our ``invoke_agent`` span, or a local root we marked (zero-code).

    Only roots marked ``agentchaos.episode.root`` count: the episode processor marks an
    application root when its trace reaches its first LLM or tool step, so a root without steps
    (a web request, an HTTP call with no LLM in it) costs no store write.
    """
    parent = span.parent
    if parent is not None and not parent.is_remote:
        return False
    return bool((span.attributes or {}).get(A.EPISODE_ROOT))


class EpisodeFlushProcessor(SpanProcessor):
    """Flush ``target`` (a batch processor added before this one) when an episode root ends."""

    def __init__(self, target: SpanProcessor, timeout_millis: int = DEFAULT_FLUSH_TIMEOUT_MS) -> None:
        self.target: SpanProcessor | None = target
        self.timeout_millis = timeout_millis
        self.flushes = 0

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        if self.target is None or not is_episode_root(span):
            return
        try:
            if not self.target.force_flush(self.timeout_millis):
                logger.warning("episode %s: flush of its spans did not complete",
                               (span.attributes or {}).get(A.TASK_ID, "?"))
            self.flushes += 1
        except Exception:  # tracing must never break the agent's episode
            logger.exception("episode flush failed")

    def shutdown(self) -> None:
        # The target is shut down by whoever added it. A provider the user owns keeps its
        # processors after ``Handle.shutdown`` (the SDK cannot remove one), so from here on the
        # episodes of a later ``configure`` must not flush a dead processor.
        self.target = None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def __repr__(self) -> str:
        return f"EpisodeFlushProcessor({self.target!r})"


def add_episode_flush(provider: Any, target: SpanProcessor) -> EpisodeFlushProcessor:
    """Register the flush right after ``target`` on ``provider`` (processors run in order)."""
    proc = EpisodeFlushProcessor(target)
    provider.add_span_processor(proc)
    return proc
