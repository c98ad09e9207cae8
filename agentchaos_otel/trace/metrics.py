"""GenAI client metrics: token usage and operation duration histograms.

Instruments come from the global meter provider, so they cost nothing unless the process has
configured metrics; they are created once and reused on every call.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from opentelemetry import metrics

from agentchaos_otel import attributes as A


@lru_cache(maxsize=1)
def _instruments() -> tuple[Any, Any]:
    meter = metrics.get_meter("agentchaos_otel")
    tokens = meter.create_histogram(A.METRIC_TOKEN_USAGE, unit="{token}",
                                    description="Number of input and output tokens used")
    duration = meter.create_histogram(A.METRIC_OPERATION_DURATION, unit="s",
                                      description="GenAI operation duration")
    return tokens, duration


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
