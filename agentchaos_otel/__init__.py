"""agentchaos-otel: break LLM agents on purpose, trace them with OpenTelemetry, find out why they fail.

Public names are imported lazily so that light modules (attribute names, signals) can be used
without pulling in OTel SDK, httpx and the fault catalog.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "AgentChaosInstrumentor": "agentchaos_otel.trace.instrumentor",
    "AsyncChaosTransport": "agentchaos_otel.inject.transport",
    "ChaosTransport": "agentchaos_otel.inject.transport",
    "Episode": "agentchaos_otel.trace.episode",
    "EpisodeSpanProcessor": "agentchaos_otel.trace.processors",
    "Handle": "agentchaos_otel.setup",
    "Plan": "agentchaos_otel.inject.plan",
    "ToolFaultInjector": "agentchaos_otel.inject.tools",
    "PlanError": "agentchaos_otel.inject.plan",
    "configure": "agentchaos_otel.setup",
    "episode": "agentchaos_otel.trace.episode",
    "instrument_client": "agentchaos_otel.inject.install",
    "load_plan_file": "agentchaos_otel.inject.plan",
    "resolve_plan": "agentchaos_otel.inject.plan",
    "uninstrument_client": "agentchaos_otel.inject.install",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentchaos_otel' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
