"""The OTel instrumentor: ``AgentChaosInstrumentor().instrument()`` or zero-code via entry point.

Under ``opentelemetry-instrument`` the SDK tracer provider is configured before instrumentors
run, so ``_instrument`` adds our span processor to that provider rather than creating one. The
plan and seed come from keyword arguments or, for zero-code use, from ``AGENTCHAOS_PLAN`` and
``AGENTCHAOS_SEED``. Arguments given in code that are wrong raise (the caller can fix them);
environment settings that are wrong are refused the OTel way, never breaking the application:
one line on stderr, the application runs traced but without faults, and the refusal is recorded
on the first span that starts (``agentchaos.injector.refused``).
"""

from __future__ import annotations

import importlib.util
import weakref
from collections.abc import Collection
from typing import Any

from opentelemetry import trace
from opentelemetry.instrumentation.instrumentor import BaseInstrumentor

from agentchaos_otel import redact, settings
from agentchaos_otel.inject import install, threads
from agentchaos_otel.mcp import hooks as mcp_hooks
from agentchaos_otel.plans import binding
from agentchaos_otel.plans.binding import EpisodeState
from agentchaos_otel.plans.plan import NO_FAULTS, Plan, PlanError, resolve_plan
from agentchaos_otel.trace.processors import EpisodeSpanProcessor

# The HTTP clients the transports wrap, with the oldest version they were tested with.
_CLIENT_LIBRARIES = {"httpx": "0.23", "httpx2": "0.1"}

_log = redact.get_logger(__name__)
# Per provider object, not per id(): a provider built where a collected one was must get its own.
_processors: weakref.WeakKeyDictionary[Any, EpisodeSpanProcessor] = weakref.WeakKeyDictionary()


def add_episode_processor(provider: Any) -> EpisodeSpanProcessor | None:
    """Add our step-numbering processor to an SDK provider once; None if it cannot take one."""
    if not hasattr(provider, "add_span_processor"):
        return None
    if provider not in _processors:
        _processors[provider] = processor = EpisodeSpanProcessor()
        provider.add_span_processor(processor)
    return _processors[provider]


def _plan_and_seed(kwargs: dict[str, Any]) -> tuple[Plan, int, str | None]:
    """The plan and seed given in code, else those the environment asks for (``settings``).

    A plan or seed given in code that is wrong raises (the caller can fix it); a variable that is
    wrong gives no faults and the line saying why it was refused.
    """
    plan = resolve_plan(kwargs["plan"]) if "plan" in kwargs else None
    seed = int(kwargs["seed"]) if kwargs.get("seed") is not None else None
    try:
        seed = settings.SEED.value() if seed is None else seed
        return (resolve_plan(settings.PLAN.value()) if plan is None else plan), seed, None
    except (PlanError, ValueError) as exc:
        text = " ".join(str(exc).split())
        where = settings.PLAN.name if isinstance(exc, PlanError) else settings.SEED.name
        return NO_FAULTS, 0, (text if where in text else f"{where} refused: {text}")


class AgentChaosInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Installs the fault-injecting transport under every httpx/httpx2 client of the process.

    ``instrument(threads=True)`` also carries episodes into worker threads (``inject.threads``);
    without it that is left to OTel's threading instrumentation. MCP client sessions of the
    official ``mcp`` SDK are traced and faulted too (``agentchaos_otel.mcp``) unless
    ``instrument(mcp=False)`` (zero-code: ``AGENTCHAOS_MCP=off``).
    """

    def instrumentation_dependencies(self) -> Collection[str]:
        """The HTTP client libraries this process has, or httpx when it has neither.

        Either httpx or httpx2 is enough and ``BaseInstrumentor`` can only express "all of", so
        the list names the installed ones; with none, OTel's dependency check reports httpx as
        missing and skips the instrumentor, as for any contrib instrumentor.
        """
        found = [name for name in _CLIENT_LIBRARIES if importlib.util.find_spec(name) is not None]
        return tuple(f"{name} >= {_CLIENT_LIBRARIES[name]}" for name in found or ["httpx"])

    def _instrument(self, **kwargs: Any) -> None:
        provider = kwargs.get("tracer_provider") or trace.get_tracer_provider()
        processor = add_episode_processor(provider)
        plan, seed, refusal = _plan_and_seed(kwargs)
        if refusal is not None:
            _log.error("agentchaos: %s; the application runs without injected faults", refusal)
            if processor is not None:
                processor.refuse(refusal)
        binding.set_process_default(EpisodeState(task_id=kwargs.get("task_id", settings.TASK_ID.value()),
                                                 plan=plan, seed=seed))
        install.install(tracer_provider=kwargs.get("tracer_provider"))
        if kwargs.get("threads"):
            threads.install()
        if kwargs.get("mcp", settings.MCP.value()):  # MCP client sessions: hooked once the mcp SDK is imported
            mcp_hooks.install(tracer_provider=kwargs.get("tracer_provider"))

    def _uninstrument(self, **kwargs: Any) -> None:
        mcp_hooks.uninstall()
        install.uninstall()
        threads.uninstall()
        binding.set_process_default(None)
