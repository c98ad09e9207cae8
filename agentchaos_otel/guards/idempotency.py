"""The idempotency guard: a non-idempotent tool call the agent repeats after an error is not run twice.

After a timeout the agent often sends the identical call again, although the tool had already
run; for an order, a transfer or a file move that applies the operation twice. Whether a call
may be repeated is a property of the tool, so it is decided here, outside the agent.

The guard works in two layers around the tool:

* the *execution* layer sits right at the tool and records what each execution really returned;
* the *agent* layer sits where the agent calls, sees what the agent was shown (an error, when a
  timeout or a fault came in between) and decides whether to execute again.

A call is suppressed when it is identical (same tool, same arguments, key order ignored) to a
call that ran at most ``window`` tool calls earlier, the agent was shown an error-looking
result for it, and the execution layer saw the operation complete (a real result that does not
itself look like an error). The agent then gets the real result of the first execution (reply
``first_result``) or an explicit note that it was already applied (``already_applied``), and
the suppression is recorded on an ``execute_tool`` span of its own. A call that really failed
may always be repeated; so may any call of a tool declared idempotent.

Tools are declared with the ``idempotent`` / ``not_idempotent`` decorators, a set of idempotent
names, a mapping name -> bool, or a callable ``(name, arguments) -> bool`` (None: no opinion).
Tools that describe themselves (MCP's ``readOnlyHint`` / ``idempotentHint`` / ``destructiveHint``
annotations) are declared from that description with ``declare``; the user's own declaration
wins over it. Undeclared tools count as not idempotent.
"""

from __future__ import annotations

import contextvars
import copy
import functools
import inspect
import threading
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, TracerProvider

from agentchaos_otel import attributes as A
from agentchaos_otel import tool_signals

TRACER_NAME = "agentchaos_otel"
FIRST_RESULT, ALREADY_APPLIED = "first_result", "already_applied"
_MARK = "__agentchaos_idempotent__"
CALL_ID_KWARG = "agentchaos_call_id"
_ERROR_WORDS = ("timeout", "timed out", "rate limit", "rate_limit", "too many requests", "unavailable")

# The execution layer writes each real result into the slot its agent-layer call opened.
_SLOT: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("agentchaos_idem_slot", default=None)


def idempotent(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Declare a tool safe to run again with the same arguments (reads, upserts, ``set_x``)."""
    setattr(fn, _MARK, True)
    return fn


def not_idempotent(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Declare a tool whose repeated execution changes the world again (orders, sends, moves)."""
    setattr(fn, _MARK, False)
    return fn


def looks_like_error(result: Any) -> bool:
    """What an agent reads as "it did not work": an error object, an error or timeout message."""
    if isinstance(result, BaseException):
        return True
    value = tool_signals.parsed_result(result)
    if isinstance(value, Mapping):
        if value.get("error") not in (None, "", False):
            return True
        status = value.get("status") if "status" in value else value.get("status_code")
        return isinstance(status, int) and (status in (408, 429) or status >= 500)
    if isinstance(value, str):
        low = value.strip().lower()
        return low.startswith(("error", "exception")) or any(w in low for w in _ERROR_WORDS)
    return False


@dataclass
class _Entry:
    seq: int  # guard sequence number of the call that executed
    real: Any
    completed: bool  # the execution layer saw a result that is not itself an error
    shown_error: bool  # what the agent got back looked like an error


class IdempotencyGuard:
    """One per episode (it remembers the episode's calls). See the module docstring for the rule.

    ``idempotent``: None (decorators only), a collection of idempotent tool names, a mapping
    name -> bool, or a callable ``(name, arguments) -> bool | None``. ``window``: how many tool
    calls later an identical repeat is still suppressed. ``reply``: ``first_result`` or
    ``already_applied``. ``is_error``: what counts as an error-looking result (default
    ``looks_like_error``). ``observe``: the value the agent reads from a result (for tools whose
    results are envelopes, such as MCP's ``CallToolResult``), used for the signals of a
    suppression's span.
    """

    def __init__(self, idempotent: Collection[str] | Mapping[str, bool]
                 | Callable[[str, Mapping[str, Any]], bool | None] | None = None, *,
                 window: int = 3, reply: str = FIRST_RESULT, is_error: Callable[[Any], bool] = looks_like_error,
                 observe: Callable[[Any], Any] | None = None,
                 tracer_provider: TracerProvider | None = None) -> None:
        if reply not in (FIRST_RESULT, ALREADY_APPLIED):
            raise ValueError(f"reply must be {FIRST_RESULT!r} or {ALREADY_APPLIED!r}, got {reply!r}")
        if window < 1:
            raise ValueError(f"window must be at least 1 tool call, got {window}")
        self._declared = idempotent
        self.window = window
        self.reply = reply
        self.is_error = is_error
        self.observe = observe
        self._described: dict[str, bool] = {}  # from the tools' own description (``declare``)
        self._tracer_provider = tracer_provider
        self._lock = threading.Lock()
        self._ledger: dict[tuple[str, str], _Entry] = {}
        self._seq = 0
        self._raw: dict[str, Callable[..., Any]] = {}
        self.suppressed = 0
        self.executed = 0

    # -- declarations ------------------------------------------------------------------------
    def is_idempotent(self, name: str, arguments: Mapping[str, Any] | None = None) -> bool:
        """The decorator mark, else the user's declaration, else the tool's own description, else False."""
        fn = self._raw.get(name)
        mark = getattr(fn, _MARK, None) if fn is not None else None
        if isinstance(mark, bool):
            return mark
        declared = self._declared
        if isinstance(declared, Mapping):
            said = declared.get(name)
        elif callable(declared):
            said = declared(name, dict(arguments or {}))
        elif declared is not None and name in declared:
            said = True
        else:
            said = None
        if said is not None:
            return bool(said)
        return self._described.get(name, False)

    def declare(self, name: str, idempotent: bool) -> None:
        """What a tool says of itself (e.g. its MCP annotations); a declaration of the user's wins."""
        self._described[name] = bool(idempotent)

    # -- wrapping ------------------------------------------------------------------------------
    def wrap(self, tools: Any, injector: Any = None) -> Any:
        """Guarded tools: a function, a mapping name -> function, or a list of functions.

        With ``injector`` (a ``ToolFaultInjector``) the tool-result faults go between the two
        layers, where a real timeout would be: ``agent layer(injector(execution layer(tool)))``.
        """
        inner = self.executions(tools)
        shown = injector.wrap(inner) if injector is not None else inner
        if isinstance(shown, Mapping):
            return {name: self._agent_layer(fn, str(name)) if callable(fn) else fn for name, fn in shown.items()}
        if isinstance(shown, list | tuple):
            return type(shown)(self._agent_layer(fn, _name(fn)) for fn in shown)
        return self._agent_layer(shown, _name(shown))

    def executions(self, tools: Any) -> Any:
        """The execution layer alone (for agent loops that dispatch through ``call``).

        A tool object (not a function, mapping or list) becomes a mapping of its public methods;
        the object itself is untouched, so graders keep inspecting its state.
        """
        if isinstance(tools, type):
            raise TypeError("wrap an instance of the tool class, not the class itself")
        if not (isinstance(tools, Mapping | list | tuple) or inspect.isroutine(tools)
                or isinstance(tools, functools.partial)):
            from agentchaos_otel.inject.tools import _public_methods

            tools = {name: getattr(tools, name) for name in _public_methods(tools)}
        if isinstance(tools, Mapping):
            return {name: self._execution_layer(fn, str(name)) if callable(fn) else fn
                    for name, fn in tools.items()}
        if isinstance(tools, list | tuple):
            return type(tools)(self._execution_layer(fn, _name(fn)) for fn in tools)
        return self._execution_layer(tools, _name(tools))

    def record_execution(self, name: str, result: Any) -> Any:
        """The execution layer: what one execution of ``name`` really returned (before any fault)."""
        slot = _SLOT.get()
        if slot is not None:
            slot.append(result)
        try:
            trace.get_current_span().set_attribute(A.GUARD_IDEMPOTENT, self.is_idempotent(name))
        except Exception:
            pass
        return result

    def _execution_layer(self, fn: Callable[..., Any], name: str) -> Callable[..., Any]:
        self._raw[name] = fn

        def note(result: Any) -> Any:
            return self.record_execution(name, result)

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def async_run(*args: Any, **kwargs: Any) -> Any:
                return note(await fn(*args, **kwargs))
            return async_run

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            return note(fn(*args, **kwargs))
        return run

    def _agent_layer(self, fn: Callable[..., Any], name: str) -> Callable[..., Any]:
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def async_call(*args: Any, **kwargs: Any) -> Any:
                arguments = _arguments(args, kwargs)
                reply = self._before(name, arguments, kwargs.get(CALL_ID_KWARG))
                if reply is not None:
                    return reply[0]
                slot: list[Any] = []
                token = _SLOT.set(slot)
                try:
                    result = await fn(*args, **kwargs)
                except Exception as exc:
                    self._after(name, arguments, slot, exc)
                    raise
                finally:
                    _SLOT.reset(token)
                self._after(name, arguments, slot, result)
                return result
            return async_call

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            arguments = _arguments(args, kwargs)
            return self.call(name, arguments, lambda: fn(*args, **kwargs), call_id=kwargs.get(CALL_ID_KWARG))
        return call

    # -- one call ------------------------------------------------------------------------------
    def call(self, name: str, arguments: Mapping[str, Any], run: Callable[[], Any], *,
             call_id: str | None = None) -> Any:
        """Run ``run()`` (the call as the agent makes it) unless it must be suppressed."""
        reply = self._before(name, arguments, call_id)
        if reply is not None:
            return reply[0]
        slot: list[Any] = []
        token = _SLOT.set(slot)
        try:
            result = run()
        except Exception as exc:
            self._after(name, arguments, slot, exc)
            raise
        finally:
            _SLOT.reset(token)
        self._after(name, arguments, slot, result)
        return result

    async def acall(self, name: str, arguments: Mapping[str, Any], run: Callable[[], Awaitable[Any]], *,
                    call_id: str | None = None) -> Any:
        """``call`` for a coroutine: ``await run()`` unless the call must be suppressed."""
        reply = self._before(name, arguments, call_id)
        if reply is not None:
            return reply[0]
        slot: list[Any] = []
        token = _SLOT.set(slot)
        try:
            result = await run()
        except Exception as exc:
            self._after(name, arguments, slot, exc)
            raise
        finally:
            _SLOT.reset(token)
        self._after(name, arguments, slot, result)
        return result

    def _key(self, name: str, arguments: Mapping[str, Any]) -> tuple[str, str]:
        clean = {k: v for k, v in arguments.items() if k != CALL_ID_KWARG}
        return (name, tool_signals.args_digest(clean))

    def _before(self, name: str, arguments: Mapping[str, Any], call_id: str | None) -> tuple[Any] | None:
        """(reply,) when this call is suppressed, else None (and the call goes ahead)."""
        try:
            key = self._key(name, arguments)
            with self._lock:
                self._seq += 1
                seq = self._seq
                entry = self._ledger.get(key)
                suppress = (entry is not None and entry.shown_error and entry.completed
                            and seq - entry.seq <= self.window and not self.is_idempotent(name, arguments))
                if not suppress or entry is None:
                    return None
                entry.shown_error = False  # the agent now holds an answer for this call
                first_seq = entry.seq
                entry.seq = seq
                self.suppressed += 1
                real = entry.real
        except Exception:  # fail open: an unhashable or odd call simply runs
            return None
        reply = copy.deepcopy(real) if self.reply == FIRST_RESULT else {
            "already_applied": True,
            "message": f"{name} with these arguments already ran (call #{first_seq}) and was not run again; "
                       "its result is under 'result'.",
            "result": copy.deepcopy(real)}
        self._record_suppression(name, arguments, call_id, first_seq, reply)
        return (reply,)

    def _after(self, name: str, arguments: Mapping[str, Any], slot: list[Any], shown: Any) -> None:
        try:
            key = self._key(name, arguments)
            real = slot[-1] if slot else None
            with self._lock:
                self.executed += bool(slot)
                self._ledger[key] = _Entry(seq=self._seq, real=real, completed=bool(slot) and not self.is_error(real),
                                           shown_error=self.is_error(shown))
        except Exception:  # fail open
            pass

    def _record_suppression(self, name: str, arguments: Mapping[str, Any], call_id: str | None, first_seq: int,
                            reply: Any) -> None:
        try:
            tracer = trace.get_tracer(TRACER_NAME, tracer_provider=self._tracer_provider)
            attrs: dict[str, Any] = {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: name,
                                     A.GUARD_IDEMPOTENT: False, A.GUARD_SUPPRESSED: True,
                                     A.GUARD_SUPPRESSED_OF: first_seq, A.GUARD_REPLY: self.reply,
                                     A.FAULT_INJECTED: False}
            if call_id:
                attrs[A.GEN_AI_TOOL_CALL_ID] = str(call_id)
            attrs.update(tool_signals.call_signals({k: v for k, v in arguments.items() if k != CALL_ID_KWARG}))
            with tracer.start_as_current_span(A.tool_span_name(name), kind=SpanKind.INTERNAL, attributes=attrs) as span:
                span.set_attributes(tool_signals.tool_result_signals(
                    self.observe(reply) if self.observe is not None else reply))
                span.add_event(A.EVENT_GUARD_SUPPRESSED, {A.GUARD_SUPPRESSED_OF: first_seq, A.GUARD_REPLY: self.reply})
        except Exception:  # fail open
            pass


def _name(fn: Any) -> str:
    return str(getattr(fn, "__name__", None) or type(fn).__name__)


def _arguments(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    clean = {k: v for k, v in kwargs.items() if k != CALL_ID_KWARG}
    return {"args": list(args), **clean} if args else clean
