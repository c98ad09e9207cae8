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
import os
import weakref
from collections.abc import Collection
from typing import Any

from opentelemetry import trace
from opentelemetry.instrumentation.instrumentor import BaseInstrumentor

from agentchaos_otel import redact
from agentchaos_otel.inject import install, threads
from agentchaos_otel.mcp import hooks as mcp_hooks
from agentchaos_otel.plans import binding
from agentchaos_otel.plans.binding import EpisodeState
from agentchaos_otel.plans.plan import NO_FAULTS, Plan, PlanError, resolve_plan
from agentchaos_otel.trace.processors import EpisodeSpanProcessor

# The HTTP clients the transports wrap, with the oldest version they were tested with.
_CLIENT_LIBRARIES = {"httpx": "0.23", "httpx2": "0.1"}

ENV_PLAN = "AGENTCHAOS_PLAN"
ENV_SEED = "AGENTCHAOS_SEED"
ENV_DB = "AGENTCHAOS_DB"
ENV_TASK = "AGENTCHAOS_TASK_ID"
ENV_MCP = "AGENTCHAOS_MCP"  # "off" (or 0/false/no): leave MCP client sessions alone

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


def seed_from_env(default: int = 0) -> int:
    raw = os.environ.get(ENV_SEED, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{ENV_SEED} must be an integer, got {raw!r}") from None


def _plan_from_env(seed: Any) -> tuple[Plan, int, str | None]:
    """The plan and seed the environment asks for, or no faults and why they were refused."""
    try:
        seed = seed_from_env() if seed is None else int(seed)
        return resolve_plan(os.environ.get(ENV_PLAN)), seed, None
    except (PlanError, ValueError) as exc:
        text = " ".join(str(exc).split())
        where = ENV_PLAN if isinstance(exc, PlanError) else ENV_SEED
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
        if "plan" in kwargs:
            plan, seed = resolve_plan(kwargs["plan"]), kwargs.get("seed")
            seed = seed_from_env() if seed is None else int(seed)
        else:
            plan, seed, refusal = _plan_from_env(kwargs.get("seed"))
            if refusal is not None:
                _log.error("agentchaos: %s; the application runs without injected faults", refusal)
                if processor is not None:
                    processor.refuse(refusal)
        binding.set_process_default(EpisodeState(task_id=kwargs.get("task_id", os.environ.get(ENV_TASK)),
                                                 plan=plan, seed=seed))
        install.install(tracer_provider=kwargs.get("tracer_provider"))
        if kwargs.get("threads"):
            threads.install()
        mcp_on = os.environ.get(ENV_MCP, "").strip().lower() not in ("off", "0", "false", "no")
        if kwargs.get("mcp", mcp_on):  # MCP client sessions: hooked when (and if) the mcp SDK is imported
            mcp_hooks.install(tracer_provider=kwargs.get("tracer_provider"))

    def _uninstrument(self, **kwargs: Any) -> None:
        mcp_hooks.uninstall()
        install.uninstall()
        threads.uninstall()
        binding.set_process_default(None)
