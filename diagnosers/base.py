"""What every diagnoser returns, and the one entry point that guarantees it only sees blind traces.

Diagnosers are handed ``EpisodeTrace.blind()`` views by :func:`diagnose_episodes`, never the raw
episode, so ground truth cannot leak into a diagnosis through a forgotten attribute read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Protocol, runtime_checkable

from agentchaos_otel.records import EpisodeTrace
from diagnosers.taxonomy import NONE_FOUND


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
        # Every field is a scalar: no need for ``asdict``'s recursive deep copy (one per diagnosis).
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["confidence"] = round(float(self.confidence), 4)
        return out


def none_found(ep: EpisodeTrace, method: str, evidence: str = "no anomalous step observed") -> Diagnosis:
    return Diagnosis(ep.trace_id, ep.task_id, method, NONE_FOUND, None, None, None, 0.0, evidence)


@runtime_checkable
class Diagnoser(Protocol):
    """Names the fault type and the step that caused an episode to fail, from a blind view."""

    name: str

    def diagnose(self, episode: EpisodeTrace) -> Diagnosis: ...


# Below this confidence a verdict is not a root cause: the diagnosis says ``none_found`` and keeps
# the weak sign in its evidence. Chosen on development data (the misbehaving corpus's development
# split and the simulated catalog corpus) from the threshold sweep ``diagnose --evaluate`` prints:
# weak findings (0.25-0.45) and absorbed faults (0.3) sit under it, published codes and error
# reports (0.6-0.95) over it; lower thresholds buy a point or two of accuracy with false blame on
# failures that had no fault (docs/diagnosis.md has the sweep).
CONFIDENCE_MIN = 0.5


def abstain(d: Diagnosis, min_confidence: float = CONFIDENCE_MIN) -> Diagnosis:
    """``d`` itself when confident enough, else ``none_found`` that still says what was seen."""
    if not d.found or d.confidence >= min_confidence:
        return d
    return replace(d, fault_type=NONE_FOUND, target=None, step=None, span_id=None,
                   evidence=f"below confidence {min_confidence:.2f} ({d.confidence:.2f}): {d.evidence}")


def diagnose_episodes(diagnoser: Diagnoser, episodes: Iterable[EpisodeTrace], *,
                      min_confidence: float = CONFIDENCE_MIN) -> list[Diagnosis]:
    """Diagnose each episode through its blind view; batch-capable diagnosers get all at once.
    Verdicts below ``min_confidence`` become ``none_found`` (0 keeps every verdict)."""
    blind = [ep.blind() for ep in episodes]
    batch = getattr(diagnoser, "diagnose_many", None)
    raw = list(batch(blind)) if callable(batch) else [diagnoser.diagnose(ep) for ep in blind]
    return [abstain(d, min_confidence) for d in raw] if min_confidence > 0 else raw


def failed(episodes: Sequence[EpisodeTrace]) -> list[EpisodeTrace]:
    """Episodes whose outcome is a known failure (success is False)."""
    return [ep for ep in episodes if ep.success is False]
