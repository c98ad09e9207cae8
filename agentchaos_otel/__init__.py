"""agentchaos-otel: break LLM agents on purpose, trace them with OpenTelemetry, find out why they fail.

Public names are imported lazily so that light modules (attribute names, signals) can be used
without pulling in OTel SDK, httpx and the fault catalog.

Layers, lowest first; a module imports only from its own layer's package or layers below
(``[tool.importlinter]`` in pyproject.toml holds this order and CI checks it):

0. names and pure helpers: ``attributes``; ``signals``, ``codecs``, ``sse``, ``seeds``, ``stats``,
   ``otlp``, ``cli_errors``, ``scale``, ``zero_code_launcher``; then ``tool_signals`` and ``redact``
1. ``faults``: the vocabulary, the catalog and the pure rewrites of bodies, streams and tool results
2. ``plans``: plans, schedules and the per-task binding of a plan to the calls it covers
3. ``trace``: span annotation, step numbering, content capture, GenAI metrics
4. ``inject``: the fault-injecting transports and the tool-result injector
5. ``episodes`` (the ``episode()`` scope) and ``store`` (DuckDB, spool, receivers, import)
6. ``instrumentor``; analysis: ``diagnosers``, ``predictors``; ``sim``; ``guards``; ``metrics_setup``
7. ``setup`` (``configure()``), ``zero_code`` and ``replay`` (``traces export``)
8. ``campaign`` (runner, measures, report)
9. ``cli`` and ``agents`` (agent adapters, found through the ``agentchaos_otel.agents`` entry points)
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "AgentChaosInstrumentor": "agentchaos_otel.instrumentor",
    "AsyncChaosTransport": "agentchaos_otel.inject.transport",
    "ChaosTransport": "agentchaos_otel.inject.transport",
    "Episode": "agentchaos_otel.episode_scope",
    "EpisodeSpanProcessor": "agentchaos_otel.trace.processors",
    "Handle": "agentchaos_otel.setup",
    "Plan": "agentchaos_otel.plans.plan",
    "ToolFaultInjector": "agentchaos_otel.inject.tools",
    "PlanError": "agentchaos_otel.plans.plan",
    "configure": "agentchaos_otel.setup",
    "episode": "agentchaos_otel.episode_scope",
    "instrument_client": "agentchaos_otel.inject.install",
    "load_plan_file": "agentchaos_otel.plans.plan",
    "resolve_plan": "agentchaos_otel.plans.plan",
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
