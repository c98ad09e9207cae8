"""GenAI client metrics and our own counters: tokens, durations, injected faults, episodes, diagnoses.

Instruments come from the global meter provider, so they cost nothing unless the process has
configured metrics (``configure(metrics=...)`` sets one up, see ``agentchaos_otel.metrics_setup``);
they are created once and reused on every call. The two histograms carry the GenAI conventions'
advisory bucket boundaries, so a sub-second call does not land in the SDK's first default bucket
(0-5 s) and a 300-token reply not in its last.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from opentelemetry import metrics

from agentchaos_otel import attributes as A

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


@lru_cache(maxsize=1)
def _counters() -> tuple[Any, Any, Any]:
    meter = metrics.get_meter(METER_NAME)
    faults = meter.create_counter(A.METRIC_FAULTS_INJECTED, unit="{fault}",
                                  description="Faults injected, by type, target and whether they changed the response")
    episodes = meter.create_counter(A.METRIC_EPISODES, unit="{episode}",
                                    description="Episodes ended, by outcome and condition")
    diagnoses = meter.create_counter(A.METRIC_DIAGNOSES, unit="{diagnosis}",
                                     description="Diagnoses made while the agent runs, by fault type")
    return faults, episodes, diagnoses


def record_fault(fault_type: str | None, target: str | None, changed: bool | None) -> None:
    _counters()[0].add(1, {A.METRIC_ATTR_TYPE: str(fault_type or "unknown"),
                           A.METRIC_ATTR_TARGET: str(target or "unknown"),
                           A.METRIC_ATTR_CHANGED: "unknown" if changed is None else str(bool(changed)).lower()})


def record_episode(success: bool | None, condition: str | None) -> None:
    outcome = "unknown" if success is None else "success" if success else "failure"
    _counters()[1].add(1, {A.METRIC_ATTR_OUTCOME: outcome, A.METRIC_ATTR_CONDITION: str(condition or "none")})


def record_diagnosis(fault_type: str, method: str) -> None:
    _counters()[2].add(1, {A.METRIC_ATTR_TYPE: fault_type, A.METRIC_ATTR_METHOD: method})


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
