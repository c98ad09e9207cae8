"""In-memory shape of a stored episode, as diagnosers and predictors consume it.

Diagnosers and predictors work on these objects rather than on SQL so they can be tested on
hand-built traces and so that blinding (removing ground truth) happens in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from agentchaos_otel import attributes as A

# Events the injector writes (firings, skipped firings) say where faults were scheduled.
_GROUND_TRUTH_EVENTS = (A.FAULT_PREFIX, A.EVENT_INJECTOR_SKIP)
# Key names seen so far, and the ground-truth ones among them. A store uses the same few dozen
# names on every span, so after its first spans the per-step check is two set comparisons in C
# (``keys <= known``, ``keys.isdisjoint(hidden)``) instead of a Python call per key. Replaced, never
# cleared in place, when it grows past the limit (foreign stores can flatten messages into many
# names), so a reader holding the old pair still sees every name it classified.
_KEYS_REMEMBERED = 1 << 16
_seen: tuple[set[str], set[str]] = (set(), set())


def ground_truth_keys(attributes: dict[str, Any]) -> list[str] | None:
    """The ground-truth keys of ``attributes`` (in no particular order); None when a key is not
    a string, which only the plain per-key filter can judge."""
    global _seen
    if not attributes:
        return []
    known, hidden = _seen
    if not attributes.keys() <= known:  # names not seen before
        if len(known) + len(attributes) > _KEYS_REMEMBERED:
            known, hidden = set(), set()
            _seen = (known, hidden)
        prefixes = A.GROUND_TRUTH_PREFIXES
        for k in attributes:
            if k in known:
                continue
            if not isinstance(k, str):
                return None
            if k.startswith(prefixes):
                hidden.add(k)
            known.add(k)  # after ``hidden``: a name is never known before it is classified
    if attributes.keys().isdisjoint(hidden):
        return []
    return list(hidden.intersection(attributes))


def drop_ground_truth(attributes: dict[str, Any]) -> dict[str, Any]:
    """``attributes`` without its ground-truth keys, removed in place (for a dict the caller owns)."""
    hidden = ground_truth_keys(attributes)
    if hidden is None:
        hidden = [k for k in attributes if isinstance(k, str) and A.is_ground_truth(k)]
    for k in hidden:
        del attributes[k]
    return attributes


@dataclass(frozen=True)
class StepRecord:
    """One LLM call or tool execution of an episode, in episode order."""

    step: int
    span_id: str
    kind: str  # "llm" or "tool"
    name: str
    start_ns: int
    end_ns: int
    status_code: str = "UNSET"  # "UNSET" | "OK" | "ERROR"
    error_type: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def duration_ms(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e6

    def get(self, key: str, default: Any = None) -> Any:
        return self.attributes.get(key, default)

    def blind(self) -> StepRecord:
        # Runs for every step of every episode a diagnoser or predictor reads, so the keys are
        # scanned in C (one join, one regex search) rather than one Python call per key.
        prefixes = A.GROUND_TRUTH_PREFIXES
        hidden = ground_truth_keys(self.attributes)
        if hidden is None:  # keys the scan cannot vouch for: the plain filter
            attrs = {k: v for k, v in self.attributes.items() if not k.startswith(prefixes)}
        elif hidden:
            attrs = dict(self.attributes)
            for k in hidden:
                del attrs[k]
        else:
            attrs = self.attributes
        if len(attrs) == len(self.attributes) and not (self.events and any(
                str(e.get("name", "")).startswith(_GROUND_TRUTH_EVENTS) for e in self.events)):
            return self  # frozen and already blind: nothing to copy
        events = [
            {**e, "attributes": {k: v for k, v in (e.get("attributes") or {}).items()
                                 if not k.startswith(prefixes)}}
            for e in self.events
            if not str(e.get("name", "")).startswith(_GROUND_TRUTH_EVENTS)
        ]
        return StepRecord(self.step, self.span_id, self.kind, self.name, self.start_ns, self.end_ns,
                          self.status_code, self.error_type, attrs, events)


@dataclass(frozen=True)
class FaultLabel:
    """Ground truth for one injected fault that changed what the agent saw."""

    step: int
    span_id: str
    fault_type: str
    target: str | None = None
    experiment: str | None = None


@dataclass(frozen=True)
class EpisodeTrace:
    """One agent task: the root `invoke_agent` span and its steps."""

    trace_id: str
    task_id: str | None
    steps: tuple[StepRecord, ...]
    success: bool | None = None
    condition: str | None = None
    seed: int | None = None
    attributes: dict[str, Any] = field(default_factory=dict)

    def blind(self) -> EpisodeTrace:
        """The episode as a diagnoser may see it: every ground-truth attribute removed."""
        attrs = {k: v for k, v in self.attributes.items() if not A.is_ground_truth(k)}
        return replace(self, steps=tuple(s.blind() for s in self.steps), attributes=attrs)

    def faults(self) -> list[FaultLabel]:
        """Injected faults that changed the response, in step order (needs an unblinded trace)."""
        return list(self._fault_labels)

    @cached_property
    def _fault_labels(self) -> tuple[FaultLabel, ...]:
        # Computed once per episode: the report asks each episode for its faults a dozen times.
        # The episode is frozen, so the answer cannot go stale (``blind`` makes a new episode).
        return tuple(FaultLabel(s.step, s.span_id, str(s.get(A.FAULT_TYPE)), s.get(A.FAULT_TARGET),
                                s.get(A.FAULT_EXPERIMENT))
                     for s in self.steps if s.get(A.FAULT_INJECTED) and s.get(A.FAULT_CHANGED, True))

    @property
    def triggered(self) -> bool:
        return bool(self._fault_labels)

    @property
    def llm_steps(self) -> list[StepRecord]:
        return [s for s in self.steps if s.kind == "llm"]

    @property
    def tool_steps(self) -> list[StepRecord]:
        return [s for s in self.steps if s.kind == "tool"]
