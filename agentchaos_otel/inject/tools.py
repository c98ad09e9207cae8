"""Tool-result fault injection around the agent's own tool callables, with ``execute_tool`` spans.

The injector sits where the tool-response study put it: between the tool's execution and the
agent's view of the result. The tool always really runs (its side effects happen), and only
what is handed back to the agent is replaced, so state-based graders see the true world and any
difference in success comes from how the agent reacts.

One injector per episode: the schedule's Markov state, the episode's key renames and the
tool-call counter live on the instance. Inside ``agentchaos_otel.episode(...)`` the seed, task
id and condition default to the episode's; ``ToolFaultInjector.for_current_episode()`` returns
the one injector stored on the episode.

Everything the injector adds is fail-open: if scheduling, transforming or annotating raises, the
agent gets the real result and the span gets an ``agentchaos.injector.skipped`` event. Only the
tool's own exceptions propagate, because handling those is the agent's business.
"""

from __future__ import annotations

import functools
import inspect
import json
import random
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import wrapt
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider

from agentchaos_otel import attributes as A
from agentchaos_otel import signals, tool_signals
from agentchaos_otel.faults.tool_result import (
    TOOL_FAULT_KINDS,
    EpisodeToolState,
    UntransformableResult,
    apply_tool_fault,
)
from agentchaos_otel.plans import binding
from agentchaos_otel.plans.binding import EpisodeState, FaultRecord
from agentchaos_otel.plans.schedule import INDEPENDENT_RATE, TOOL_CONDITIONS, ToolFaultSchedule
from agentchaos_otel.seeds import derive_seed
from agentchaos_otel.trace.annotate import content_capture_enabled

TRACER_NAME = "agentchaos_otel"
# Keyword a wrapped tool accepts out-of-band (and never passes on) to label its span with the
# model's tool-call id: ``tools.get_stock_info(symbol="NVDA", agentchaos_call_id="call_7")``.
CALL_ID_KWARG = "agentchaos_call_id"
# The wrappers ``wrap_function`` made, by identity: ``functools.wraps`` copies the tool's
# ``__dict__`` and a marker attribute would leak onto any decorator wrapped around ours, which
# would then be handed a keyword it does not take.
_call_id_wrappers: weakref.WeakSet[Callable[..., Any]] = weakref.WeakSet()


def call_id_keyword(fn: Callable[..., Any]) -> str | None:
    """The keyword that passes the model's tool-call id to ``fn``, if ``fn`` is one of our wrappers.

    Agents that know the call id (the bundled reference agent does) pass it so the tool's
    ``execute_tool`` span joins up with the model's call; any other callable gets None.
    """
    try:
        return CALL_ID_KWARG if fn in _call_id_wrappers else None
    except TypeError:  # not weak-referenceable: not ours
        return None
# Where ``for_current_episode`` keeps the episode's injector.
SCRATCH_KEY = "tool_fault_injector"

def _current_episode() -> EpisodeState | None:
    """The episode bound to this task/thread (never the process-wide default)."""
    return binding.current_episode()


def _active_state() -> EpisodeState | None:
    """This task's episode, else the process-wide plan set by ``configure``."""
    return binding.active_state()



def _episode_condition(ep: Any) -> str | None:
    plan_condition = getattr(getattr(ep, "plan", None), "tool_condition", None)
    if plan_condition in TOOL_CONDITIONS:
        return str(plan_condition)
    condition = getattr(ep, "condition", None)
    return str(condition) if condition in TOOL_CONDITIONS else None


def _json_or_none(value: Any) -> str | None:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return None


class ToolFaultInjector:
    """Wraps tools so each call gets an ``execute_tool`` span and, per the schedule, a fault.

    ``condition``, ``seed`` and ``episode_key`` left as None come from the episode bound to the
    current context, or the process-wide plan of ``configure`` (its plan's ``tool_condition``,
    else its condition if that names a tool condition; its seed; its task id), else ``"none"``,
    0 and ``""``. Equal (condition, seed, episode_key, kinds) give equal fault logs and equal
    shown results for equal tool results. ``rate`` is the per-step probability of the
    ``independent`` condition (1.0 and 0.0 are the sanity checks of docs/design.md 6). A
    ``once_<kind>`` condition faults exactly one of the first four tool calls with that kind
    (see ``schedule.ONCE_STEP_RANGE``), which gives an episode a single known root cause.
    """

    def __init__(self, condition: str | None = None, *, seed: int | None = None,
                 episode_key: str | None = None, kinds: Sequence[str] = TOOL_FAULT_KINDS,
                 rate: float = INDEPENDENT_RATE, tracer_provider: TracerProvider | None = None) -> None:
        ep = _active_state()
        if condition is None:
            condition = (_episode_condition(ep) if ep is not None else None) or "none"
        if seed is None:
            seed = int(getattr(ep, "seed", 0) or 0) if ep is not None else 0
        if episode_key is None:
            episode_key = str(getattr(ep, "task_id", "") or "") if ep is not None else ""
        self.condition = condition
        self.seed = seed
        self.episode_key = episode_key
        self.experiment = f"tool_{condition}"
        schedule_rng = random.Random(derive_seed("tool-schedule", seed, episode_key))
        self.schedule = ToolFaultSchedule(condition, schedule_rng, kinds=kinds, rate=rate)
        self.state = EpisodeToolState(seed=derive_seed("tool-rename", seed, episode_key))
        self._mutate_seed = derive_seed("tool-mutate", seed, episode_key)
        self._episode = ep
        self._tracer_provider = tracer_provider
        self._lock = threading.Lock()
        self._tools: dict[str, Callable[..., Any]] = {}
        self._signatures: dict[str, inspect.Signature | None] = {}
        self.fault_log: list[dict[str, Any]] = []
        self.calls = 0

    @classmethod
    def for_current_episode(cls, **kwargs: Any) -> ToolFaultInjector:
        """The episode's injector, created on first use; a fresh one outside any episode."""
        ep = _current_episode()
        scratch = getattr(ep, "scratch", None)
        if not isinstance(scratch, dict):
            return cls(**kwargs)
        injector = scratch.get(SCRATCH_KEY)
        if not isinstance(injector, cls):
            injector = cls(**kwargs)
            scratch[SCRATCH_KEY] = injector
        return injector

    # -- wrapping ----------------------------------------------------------------------------------
    def wrap(self, tools: Any) -> Any:
        """Wrap a function, a mapping of name -> function, a list of functions, an object or a module.

        An object comes back as a transparent proxy (``isinstance`` and attribute writes reach the
        real instance, so graders that inspect tool state keep working) whose public methods are
        wrapped under their method names.
        """
        if isinstance(tools, type):
            raise TypeError("wrap an instance of the tool class, not the class itself")
        if isinstance(tools, Mapping):
            return {name: self.wrap_function(fn, name=str(name)) if callable(fn) else fn
                    for name, fn in tools.items()}
        if isinstance(tools, list | tuple):
            return type(tools)(self.wrap_function(fn) for fn in tools)
        if inspect.isroutine(tools) or isinstance(tools, functools.partial):
            return self.wrap_function(tools)
        return _ToolProxy(tools, self)

    def wrap_function(self, fn: Callable[..., Any], name: str | None = None) -> Callable[..., Any]:
        if not callable(fn):
            raise TypeError(f"tool {name or fn!r} is not callable")
        tool = name or getattr(fn, "__name__", None) or getattr(getattr(fn, "func", None), "__name__", None) \
            or type(fn).__name__
        self._tools[tool] = fn

        if _is_async(fn):
            @functools.wraps(fn)
            async def async_tool(*args: Any, **kwargs: Any) -> Any:
                call_id = kwargs.pop(CALL_ID_KWARG, None)
                return await self._ainvoke(tool, fn, args, kwargs, call_id)
            _call_id_wrappers.add(async_tool)
            return async_tool

        @functools.wraps(fn)
        def tool_wrapper(*args: Any, **kwargs: Any) -> Any:
            call_id = kwargs.pop(CALL_ID_KWARG, None)
            return self._invoke(tool, fn, args, kwargs, call_id)
        _call_id_wrappers.add(tool_wrapper)
        return tool_wrapper

    @property
    def tool_names(self) -> list[str]:
        return sorted(self._tools)

    def _lookup(self, name: str) -> Callable[..., Any]:
        fn = self._tools.get(name)
        if fn is None:
            known = ", ".join(sorted(self._tools)) or "none"
            raise LookupError(f"unknown tool {name!r}; wrapped tools: {known}")
        return fn

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None,
                  call_id: str | None = None) -> Any:
        """Run a wrapped tool by name with keyword arguments, as agent loops dispatch model calls."""
        fn = self._lookup(name)
        if _is_async(fn):
            raise TypeError(f"tool {name!r} is async; use acall_tool")
        return self._invoke(name, fn, (), dict(arguments or {}), call_id)

    async def acall_tool(self, name: str, arguments: Mapping[str, Any] | None = None,
                         call_id: str | None = None) -> Any:
        fn = self._lookup(name)
        if _is_async(fn):
            return await self._ainvoke(name, fn, (), dict(arguments or {}), call_id)
        return self._invoke(name, fn, (), dict(arguments or {}), call_id)

    # -- one call --------------------------------------------------------------------------------
    def _tracer(self) -> trace.Tracer:
        return trace.get_tracer(TRACER_NAME, tracer_provider=self._tracer_provider)

    def _arguments(self, name: str, fn: Callable[..., Any], args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> dict[str, Any]:
        """The call's arguments by parameter name, the form the model produced them in."""
        if not args:
            return dict(kwargs)
        if name not in self._signatures:
            try:
                self._signatures[name] = inspect.signature(fn)
            except (TypeError, ValueError):
                self._signatures[name] = None
        sig = self._signatures[name]
        if sig is not None:
            try:
                return dict(sig.bind_partial(*args, **kwargs).arguments)
            except TypeError:
                pass
        return {"args": list(args), **kwargs}

    def _start_attributes(self, name: str, call_id: str | None, arguments: dict[str, Any]) -> dict[str, Any]:
        attrs: dict[str, Any] = {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: name}
        if call_id:
            attrs[A.GEN_AI_TOOL_CALL_ID] = str(call_id)
        try:
            attrs.update(tool_signals.call_signals(arguments))
            if content_capture_enabled():
                text = _json_or_none(arguments)
                if text is not None:
                    attrs[A.GEN_AI_TOOL_CALL_ARGUMENTS] = text
        except Exception:  # annotation must never stop the call
            pass
        return attrs

    # -- calls made outside ``wrap`` (MCP tool calls: agentchaos_otel/mcp) -----------------------
    def next_call(self, span: Span) -> tuple[int, str | None]:
        """Count one tool call and decide its fault, exactly as for a wrapped tool's call."""
        return self._decide(span)

    def mutation_rng(self, index: int) -> random.Random:
        """The random stream the content-carrying kinds draw from for tool call ``index``."""
        return random.Random(derive_seed(self._mutate_seed, index))

    def transform(self, index: int, change: Callable[[random.Random, EpisodeToolState], Any]) -> Any:
        """``change(rng, renames)`` with call ``index``'s stream and the episode's key renames (shared, locked)."""
        rng = self.mutation_rng(index)
        with self._lock:
            return change(rng, self.state)

    def call_attributes(self, index: int, kind: str | None) -> dict[str, Any]:
        """What every tool span of this injector carries about its call, faulted or not."""
        return {A.TOOL_CALL_INDEX: index, A.FAULT_INJECTED: kind is not None,
                A.FAULT_STRATEGY: self.condition, A.FAULT_EXPERIMENT: self.experiment}

    def log_firing(self, record: dict[str, Any], *, fault: str | None = None, target: str = A.TARGET_TOOL_RESULT,
                   fault_type: str | None = None) -> None:
        """Keep a firing in the injector's log and mirror it into the episode's, beside the LLM faults."""
        with self._lock:
            self.fault_log.append(record)
        self._log_to_episode(record, fault=fault, target=target, fault_type=fault_type)

    def _decide(self, span: Span) -> tuple[int, str | None]:
        with self._lock:
            index = self.calls
            self.calls += 1
            try:
                return index, self.schedule.next_step()
            except Exception as exc:  # fail open
                _skip(span, f"schedule failed: {type(exc).__name__}: {exc}")
                return index, None

    def _open_span(self, name: str, call_id: str | None, arguments: dict[str, Any]) -> Any:
        """The ``execute_tool`` span; its start attributes let the episode processor number it."""
        return self._tracer().start_as_current_span(
            A.tool_span_name(name), kind=SpanKind.INTERNAL,
            attributes=self._start_attributes(name, call_id, arguments),
            record_exception=False, set_status_on_exception=False)

    def _invoke(self, name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                call_id: str | None) -> Any:
        arguments = self._safe_arguments(name, fn, args, kwargs)
        with self._open_span(name, call_id, arguments) as span:
            index, kind = self._decide(span)
            try:
                result = fn(*args, **kwargs)
            except Exception as exc:
                self._tool_raised(span, index, kind, exc)
                raise
            return self._deliver(span, name, index, kind, result, call_id, arguments)

    async def _ainvoke(self, name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                       call_id: str | None) -> Any:
        arguments = self._safe_arguments(name, fn, args, kwargs)
        with self._open_span(name, call_id, arguments) as span:
            index, kind = self._decide(span)
            try:
                result = await fn(*args, **kwargs)
            except Exception as exc:
                self._tool_raised(span, index, kind, exc)
                raise
            return self._deliver(span, name, index, kind, result, call_id, arguments)

    def _safe_arguments(self, name: str, fn: Callable[..., Any], args: tuple[Any, ...],
                        kwargs: dict[str, Any]) -> dict[str, Any]:
        try:
            return self._arguments(name, fn, args, kwargs)
        except Exception:  # fail open
            return {}

    def _tool_raised(self, span: Span, index: int, kind: str | None, exc: Exception) -> None:
        """The agent sees the tool's exception; a scheduled fault had nothing to replace."""
        try:
            span.record_exception(exc)
            span.set_attribute(A.ERROR_TYPE, type(exc).__name__)
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            attrs: dict[str, Any] = {A.TOOL_CALL_INDEX: index, A.FAULT_INJECTED: False,
                                     A.FAULT_STRATEGY: self.condition, A.FAULT_EXPERIMENT: self.experiment}
            if kind is not None:
                attrs[A.FAULT_SKIPPED] = f"tool raised; {kind} not applied"
            attrs.update(tool_signals.exception_signals(exc))
            span.set_attributes(attrs)
        except Exception:  # fail open
            pass

    def _deliver(self, span: Span, name: str, index: int, kind: str | None, result: Any,
                 call_id: str | None, arguments: dict[str, Any]) -> Any:
        """Transform (if scheduled), annotate, log; on any failure hand back the real result."""
        try:
            if kind is not None and inspect.isawaitable(result):
                raise UntransformableResult("the tool returned an awaitable to a sync caller")
            shown, attrs, record = self._transform(span, name, index, kind, result, call_id, arguments)
        except UntransformableResult as exc:
            _skip(span, str(exc), kind)
            self._annotate_fallback(span, index, kind, result, f"{kind} not applicable: {exc}")
            return result
        except Exception as exc:  # fail open
            _skip(span, f"{type(exc).__name__}: {exc}", kind)
            self._annotate_fallback(span, index, kind, result, f"injector error; {kind} not applied")
            return result
        try:
            span.set_attributes(attrs)
            if record is not None:
                span.add_event(A.EVENT_FAULT_APPLIED, {A.FAULT_TYPE: str(kind),
                                                       A.FAULT_CHANGED: record["changed"]})
                self.log_firing(record)
        except Exception as exc:  # fail open
            _skip(span, f"annotation failed: {type(exc).__name__}: {exc}", kind)
        return shown

    def _transform(self, span: Span, name: str, index: int, kind: str | None, result: Any,
                   call_id: str | None, arguments: dict[str, Any]
                   ) -> tuple[Any, dict[str, Any], dict[str, Any] | None]:
        before_text = tool_signals.result_text(result)
        before = signals.digest(before_text)
        shown = result
        if kind is not None:  # key renames are shared episode state
            shown = self.transform(index, lambda rng, renames: apply_tool_fault(kind, result, rng=rng, state=renames))
        after_text = tool_signals.result_text(shown) if kind is not None else before_text
        after = signals.digest(after_text)
        changed = before != after
        attrs: dict[str, Any] = self.call_attributes(index, kind)
        record: dict[str, Any] | None = None
        if kind is not None:
            attrs.update({A.FAULT_TYPE: kind, A.FAULT_TARGET: A.TARGET_TOOL_RESULT, A.FAULT_CHANGED: changed,
                          A.FAULT_DIGEST_BEFORE: before, A.FAULT_DIGEST_AFTER: after,
                          A.FAULT_DETAIL: f"tool_{kind}_{self.condition}"})
            episode_step = getattr(span, "attributes", None) or {}
            record = {"step": index, "episode_step": episode_step.get(A.STEP), "tool": name,
                      "call_id": call_id, "kind": kind, "changed": changed,
                      "digest_before": before, "digest_after": after}
        attrs.update(tool_signals.tool_result_signals(shown))
        # an identifier the call asked for that comes back different: a neighbouring entity
        attrs[A.TOOL_RESULT_ECHO_MISMATCH] = signals.echo_mismatches(arguments, shown)
        if content_capture_enabled():
            attrs[A.GEN_AI_TOOL_CALL_RESULT] = after_text
            if kind is not None and changed:
                attrs[A.ORIGINAL_TOOL_RESULT] = before_text
        return shown, attrs, record

    def _annotate_fallback(self, span: Span, index: int, kind: str | None, result: Any, reason: str) -> None:
        try:
            attrs: dict[str, Any] = {A.TOOL_CALL_INDEX: index, A.FAULT_INJECTED: False,
                                     A.FAULT_STRATEGY: self.condition, A.FAULT_EXPERIMENT: self.experiment}
            if kind is not None:
                attrs[A.FAULT_SKIPPED] = reason
            span.set_attributes(attrs)
            span.set_attributes(tool_signals.tool_result_signals(result))
        except Exception:  # fail open
            pass

    def _log_to_episode(self, record: dict[str, Any], *, fault: str | None = None,
                        target: str = A.TARGET_TOOL_RESULT, fault_type: str | None = None) -> None:
        """Mirror the firing into the bound episode's log, beside the LLM-side faults."""
        ep = _current_episode() or self._episode
        if ep is None:
            return
        try:
            ep.log(FaultRecord(call=record["step"], step=record["episode_step"],
                                 fault=fault or f"tool_{record['kind']}", fault_type=fault_type or record["kind"],
                                 target=target, strategy=self.condition,
                                 changed=record["changed"], digest_before=record["digest_before"],
                                 digest_after=record["digest_after"], detail=record["tool"]))
        except Exception:  # fail open
            pass


def _is_async(fn: Any) -> bool:
    """Coroutine functions, including callable objects whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(fn):
        return True
    call = inspect.getattr_static(type(fn), "__call__", None) if not inspect.isroutine(fn) else None
    return inspect.iscoroutinefunction(call)


def _skip(span: Span, reason: str, kind: str | None = None) -> None:
    try:
        event: dict[str, Any] = {A.SKIP_REASON: reason[:500]}
        if kind is not None:
            event[A.FAULT_TYPE] = kind
        span.add_event(A.EVENT_INJECTOR_SKIP, event)
    except Exception:  # fail open
        pass


def _public_methods(obj: Any) -> list[str]:
    """Public methods defined on the object's class, or public functions defined in a module.

    Properties are left alone: reading one could have side effects, and it is not a tool.
    """
    if inspect.ismodule(obj):
        return [name for name, value in vars(obj).items()
                if not name.startswith("_") and inspect.isroutine(value)
                and getattr(value, "__module__", None) == obj.__name__]
    names = []
    for name in dir(type(obj)):
        if name.startswith("_"):
            continue
        try:
            static = inspect.getattr_static(obj, name)
        except AttributeError:
            continue
        if isinstance(static, staticmethod | classmethod) or inspect.isfunction(static) \
                or inspect.ismethoddescriptor(static) and not inspect.isdatadescriptor(static):
            names.append(name)
    return names


class _ToolProxy(wrapt.ObjectProxy):  # type: ignore[misc]
    """An object whose public methods report to the injector; everything else is the object."""

    def __init__(self, wrapped: Any, injector: ToolFaultInjector) -> None:
        super().__init__(wrapped)
        self._self_methods: dict[str, Callable[..., Any]] = {
            name: injector.wrap_function(getattr(wrapped, name), name=name)
            for name in _public_methods(wrapped)
        }

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("_self_"):
            method = self._self_methods.get(name)
            if method is not None:
                return method
        return super().__getattr__(name)
