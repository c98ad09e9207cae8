"""One agent task as an ``invoke_agent`` root span with its own plan, seed and step numbering."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from agentchaos_otel import attributes as A
from agentchaos_otel import redact
from agentchaos_otel.plans import binding
from agentchaos_otel.plans.binding import EpisodeState, FaultRecord
from agentchaos_otel.plans.plan import Plan, resolve_plan

TRACER_NAME = "agentchaos_otel"
_log = redact.get_logger(__name__)

# Called with the Episode once its outcome is set and before its root span ends (live diagnosis).
END_HOOKS: list[Callable[[Episode], None]] = []


class Episode:
    """Context manager (sync and async) binding a plan to every call made inside it.

    The root span starts a new trace so each episode is one trace in the store; if the caller
    was already inside a span, the root links to it instead of nesting under it.
    """

    def __init__(self, task_id: str, plan: Plan | str | Path | None = None, seed: int | None = None, *,
                 condition: str | None = None, agent_name: str = "agent", simulated: bool = False,
                 attributes: dict[str, Any] | None = None,
                 tracer_provider: trace.TracerProvider | None = None) -> None:
        self.plan = resolve_plan(plan)
        default = binding.active_state()
        if seed is None:
            seed = self.plan.seed if self.plan.seed is not None else (default.seed if default else 0)
        self.task_id = str(task_id)
        self.seed = int(seed)
        self.condition = condition or self.plan.name
        self.agent_name = agent_name
        self.simulated = simulated
        self.extra = dict(attributes or {})
        self._tracer_provider = tracer_provider  # the wrapped tools' spans go where the episode's do
        self._tracer = trace.get_tracer(TRACER_NAME, tracer_provider=tracer_provider)
        self.state = EpisodeState(task_id=self.task_id, plan=self.plan, seed=self.seed,
                                  condition=self.condition, agent_name=agent_name)
        self.success: bool | None = None
        self.error: str | None = None
        self.span: trace.Span | None = None
        self._token: object | None = None
        self._trace_id = 0

    @property
    def fault_log(self) -> list[FaultRecord]:
        return self.state.fault_log

    @property
    def experiment(self) -> str:
        return self.state.experiment.name

    def wrap_tools(self, tools: Any, guard: Any = None) -> Any:
        """The episode's tools behind the tool-result injector (plan's tool condition, episode seed).

        With ``guard`` (an ``agentchaos_otel.guards.IdempotencyGuard``) the injector goes between
        the guard's execution layer and its agent layer, so an injected timeout looks to the guard
        exactly like a real one: the tool ran, the agent was told it did not.
        """
        from agentchaos_otel.inject.tools import ToolFaultInjector

        injector = ToolFaultInjector.for_current_episode(tracer_provider=self._tracer_provider)
        return injector.wrap(tools) if guard is None else guard.wrap(tools, injector=injector)

    def set_outcome(self, success: bool, error: str | None = None) -> None:
        self.success = bool(success)
        if error is not None:
            self.error = redact.redact_text(str(error))

    def __enter__(self) -> Episode:
        current = trace.get_current_span()
        links = [Link(current.get_span_context())] if current.get_span_context().is_valid else []
        attrs: dict[str, Any] = {
            A.EPISODE_ROOT: True,
            A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT, A.GEN_AI_AGENT_NAME: self.agent_name,
            A.TASK_ID: self.task_id, A.CONDITION: self.condition, A.SEED: self.seed,
            A.FAULT_EXPERIMENT: self.state.experiment.name,
        }
        if self.simulated:
            attrs[A.SIMULATED] = True
        attrs.update(self.extra)
        self.span = self._tracer.start_span(A.agent_span_name(self.agent_name), kind=SpanKind.INTERNAL,
                                            attributes=attrs, links=links,
                                            context=otel_context.Context())
        # One context carries both the root span and the episode (``plans.binding``); the state is
        # also found by trace id, for calls in this trace from a context that lost the value.
        self._trace_id = self.span.get_span_context().trace_id
        binding.bind_trace(self._trace_id, self.state)
        self._token = otel_context.attach(binding.in_context(
            self.state, trace.set_span_in_context(self.span, otel_context.Context())))
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        assert self.span is not None and self._token is not None
        span = self.span
        if exc is not None:
            self.error = self.error or redact.redact_text(f"{type(exc).__name__}: {exc}")
            span.record_exception(exc, attributes=redact.exception_attributes(exc))
            if self.success is None:
                self.success = False
        if self.success is not None:
            span.set_attribute(A.EPISODE_SUCCESS, self.success)
        if self.error:
            span.set_attribute(A.EPISODE_ERROR, self.error[:500])
        if self.error or self.success is False:
            # A failed outcome is an error of the task the root span stands for: trace viewers
            # (Jaeger, Tempo, Phoenix) then mark the episode red without reading our attributes.
            span.set_status(Status(StatusCode.ERROR, (self.error or "the task's outcome is a failure")[:200]))
        if self.state.scratch.get("simulated"):
            span.set_attribute(A.SIMULATED, True)
        for hook in list(END_HOOKS):
            hook(self)
        _warn_if_unreached(self)
        span.end()
        binding.unbind_trace(self._trace_id)
        otel_context.detach(self._token)
        self._token = None

    async def __aenter__(self) -> Episode:
        return self.__enter__()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.__exit__(exc_type, exc, tb)


_warned_unreached = False


def _warn_if_unreached(ep: Episode) -> None:
    """One warning, the first time an episode with faults planned ends having made no LLM call.

    Most often the agent's HTTP client is one the injector cannot reach (not httpx or httpx2, or
    a transport that does not go through their transport classes); the episode would otherwise
    be stored as a clean run.
    """
    global _warned_unreached
    if _warned_unreached or not ep.state.has_faults or ep.state.calls:
        return
    _warned_unreached = True
    _log.warning("agentchaos: episode %r ended with a fault plan but no LLM call reached the injector; "
                 "is its HTTP client httpx or httpx2 (see docs/coexistence.md)?", ep.task_id)


def episode(task_id: str, plan: Plan | str | Path | None = None, seed: int | None = None,
            **kwargs: Any) -> Episode:
    """``with episode("t1", plan="llm_error_single") as ep: ...; ep.set_outcome(success=True)``."""
    return Episode(task_id, plan, seed, **kwargs)
