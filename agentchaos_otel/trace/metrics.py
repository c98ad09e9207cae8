"""GenAI client metrics and our own counters: tokens, durations, injected faults, episodes, diagnoses.

Instruments come from the global meter provider, so they cost nothing unless the process has
configured metrics (``configure(metrics=...)`` sets one up, see ``agentchaos_otel.metrics_setup``);
they are created once and reused on every call. ``diagnose`` and ``report`` record the same
counters with the same labels on a private meter (``create_counters``), so a dashboard reads
live agents and analysed trace files alike. The two histograms carry the GenAI conventions'
advisory bucket boundaries, so a sub-second call does not land in the SDK's first default bucket
(0-5 s) and a 300-token reply not in its last.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, NamedTuple

from opentelemetry import metrics

from agentchaos_otel import attributes as A
from agentchaos_otel.records import EpisodeTrace

# Advisory boundaries from the GenAI metrics conventions (gen_ai.client.token.usage and
# gen_ai.client.operation.duration).
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)

METER_NAME = "agentchaos_otel"


@lru_cache(maxsize=1)
def _instruments() -> tuple[Any, Any]:
    meter = metrics.get_meter(METER_NAME)
    tokens = meter.create_histogram(A.METRIC_TOKEN_USAGE, unit="{token}",
                                    description="Number of input and output tokens used",
                                    explicit_bucket_boundaries_advisory=list(TOKEN_BUCKETS))
    duration = meter.create_histogram(A.METRIC_OPERATION_DURATION, unit="s",
                                      description="GenAI operation duration",
                                      explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS))
    return tokens, duration


class Counters(NamedTuple):
    faults: Any
    episodes: Any
    diagnoses: Any


def create_counters(meter: Any) -> Counters:
    """Our three counters on ``meter`` (the process's, or a private one for ``diagnose``/``report``)."""
    return Counters(
        meter.create_counter(A.METRIC_FAULTS_INJECTED, unit="{fault}",
                             description="Faults injected, by type, target and whether they changed the response"),
        meter.create_counter(A.METRIC_EPISODES, unit="{episode}",
                             description="Episodes ended, by outcome and condition"),
        meter.create_counter(A.METRIC_DIAGNOSES, unit="{diagnosis}",
                             description="Diagnoses made, by fault type and method"),
    )


@lru_cache(maxsize=1)
def _counters() -> Counters:
    return create_counters(metrics.get_meter(METER_NAME))


def fault_labels(fault_type: str | None, target: str | None, changed: bool | None) -> dict[str, str]:
    return {A.METRIC_ATTR_TYPE: str(fault_type or "unknown"), A.METRIC_ATTR_TARGET: str(target or "unknown"),
            A.METRIC_ATTR_CHANGED: "unknown" if changed is None else str(bool(changed)).lower()}


def outcome(success: bool | None) -> str:
    return "unknown" if success is None else "success" if success else "failure"


def episode_labels(success: bool | None, condition: str | None) -> dict[str, str]:
    return {A.METRIC_ATTR_OUTCOME: outcome(success), A.METRIC_ATTR_CONDITION: str(condition or "none")}


def diagnosis_labels(fault_type: str, method: str) -> dict[str, str]:
    return {A.METRIC_ATTR_TYPE: str(fault_type), A.METRIC_ATTR_METHOD: str(method)}


def record_fault(fault_type: str | None, target: str | None, changed: bool | None, *, n: int = 1,
                 counters: Counters | None = None) -> None:
    (counters or _counters()).faults.add(n, fault_labels(fault_type, target, changed))


def record_episode(success: bool | None, condition: str | None, *, n: int = 1,
                   counters: Counters | None = None) -> None:
    """Count ended episodes; the condition's success and failure series both exist from its first one on.

    A success rate per condition divides successes by known outcomes: a condition with no success
    (or no failure) still needs that series at zero, or Prometheus drops the condition from the ratio.
    """
    episodes = (counters or _counters()).episodes
    for known in (True, False):
        episodes.add(0, episode_labels(known, condition))
    episodes.add(n, episode_labels(success, condition))


def record_diagnosis(fault_type: str, method: str, *, n: int = 1, counters: Counters | None = None) -> None:
    (counters or _counters()).diagnoses.add(n, diagnosis_labels(fault_type, method))


def record_call(provider: str, model: str | None, response_attrs: dict[str, Any], seconds: float,
                error_type: str | None) -> None:
    tokens, duration = _instruments()
    base: dict[str, Any] = {A.GEN_AI_OPERATION_NAME: A.OP_CHAT, A.GEN_AI_PROVIDER_NAME: provider}
    if model:
        base[A.GEN_AI_REQUEST_MODEL] = model
    attrs = dict(base)
    if error_type:
        attrs[A.ERROR_TYPE] = error_type
    duration.record(seconds, attrs)
    for key, kind in ((A.GEN_AI_USAGE_INPUT_TOKENS, "input"), (A.GEN_AI_USAGE_OUTPUT_TOKENS, "output")):
        value = response_attrs.get(key)
        if isinstance(value, int):
            tokens.record(value, {**base, A.GEN_AI_TOKEN_TYPE: kind})


def record_corpus(episodes: Iterable[EpisodeTrace], counters: Counters) -> None:
    """What the live processor would have counted for these stored episodes (``report --metrics-port``):
    episodes by outcome and condition, injected faults by type, target and whether they changed anything."""
    ended: Counter[tuple[bool | None, str | None]] = Counter()
    faults: Counter[tuple[str | None, str | None, bool | None]] = Counter()
    for ep in episodes:
        ended[(ep.success, ep.condition)] += 1
        for s in ep.steps:
            if s.get(A.FAULT_INJECTED) is True:
                changed = s.get(A.FAULT_CHANGED)
                key = (s.get(A.FAULT_TYPE), s.get(A.FAULT_TARGET), changed if isinstance(changed, bool) else None)
                faults[key] += 1
    for (success, condition), n in ended.items():
        record_episode(success, condition, n=n, counters=counters)
    for (fault_type, target, changed), n in faults.items():
        record_fault(fault_type, target, changed, n=n, counters=counters)


def record_diagnoses(verdicts: Iterable[tuple[str, str]], counters: Counters) -> None:
    """Diagnoses by (fault type, method), as ``diagnose --metrics-port`` publishes them."""
    for (fault_type, method), n in Counter(verdicts).items():
        record_diagnosis(fault_type, method, n=n, counters=counters)
