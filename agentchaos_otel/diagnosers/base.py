"""What every diagnoser returns, and the one entry point that guarantees it only sees blind traces.

Diagnosers are handed ``EpisodeTrace.blind()`` views by :func:`diagnose_episodes`, never the raw
episode, so ground truth cannot leak into a diagnosis through a forgotten attribute read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

from agentchaos_otel.diagnosers.taxonomy import NONE_FOUND
from agentchaos_otel.store.model import EpisodeTrace


@dataclass(frozen=True)
class Diagnosis:
    """The predicted root cause of one failed episode."""

    trace_id: str
    task_id: str | None
    method: str
    fault_type: str  # a taxonomy type or NONE_FOUND
    target: str | None  # content / tool_calls / http / stream / tool_result, or "llm" when unsure
    step: int | None
    span_id: str | None
    confidence: float
    evidence: str
    rule: str | None = None

    @property
    def found(self) -> bool:
        return self.fault_type != NONE_FOUND

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["confidence"] = round(float(self.confidence), 4)
        return out


def none_found(ep: EpisodeTrace, method: str, evidence: str = "no anomalous step observed") -> Diagnosis:
    return Diagnosis(ep.trace_id, ep.task_id, method, NONE_FOUND, None, None, None, 0.0, evidence)


@runtime_checkable
class Diagnoser(Protocol):
    """Names the fault type and the step that caused an episode to fail, from a blind view."""

    name: str

    def diagnose(self, episode: EpisodeTrace) -> Diagnosis: ...


def diagnose_episodes(diagnoser: Diagnoser, episodes: Iterable[EpisodeTrace]) -> list[Diagnosis]:
    """Diagnose each episode through its blind view; batch-capable diagnosers get all at once."""
    blind = [ep.blind() for ep in episodes]
    batch = getattr(diagnoser, "diagnose_many", None)
    if callable(batch):
        return list(batch(blind))
    return [diagnoser.diagnose(ep) for ep in blind]


def failed(episodes: Sequence[EpisodeTrace]) -> list[EpisodeTrace]:
    """Episodes whose outcome is a known failure (success is False)."""
    return [ep for ep in episodes if ep.success is False]
