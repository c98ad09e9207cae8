"""One MCP client request as a span, and a tool call as a tool step with its faults and signals.

Requests get a CLIENT span named and attributed by the OTel MCP conventions (``tools/list``,
``initialize``, ``prompts/get {name}``, ...). A ``tools/call`` is an agent's tool step: its span
(``tools/call {tool}``, ``gen_ai.operation.name=execute_tool`` from the start, so the episode
processor numbers it) covers ``ClientSession.call_tool`` as a whole, the SDK's output-schema
validation included, because the tool-result fault is applied after that validation: the agent
gets the faulted result, as from a server that really sent it, instead of the SDK's complaint
about our replacement.

Faults come from the same per-episode ``ToolFaultInjector`` as wrapped tools (the one stored on
the episode), so a plan and seed fault the same tool calls whether the tools come over MCP or
through ``wrap_tools``; protocol faults come from the rules set with ``mcp.protocol_faults``.
When a tool-execution span of another instrumentation is already open for the same tool (the
conventions' "avoid duplicates" case), no second span is made: the MCP attributes, signals and
ground truth go on that span; if it is our own ``wrap_tools`` span, its injector has the call and
only the MCP attributes are added.

Everything here fails open: the agent gets the real result (or the SDK's own exception) and the
span an ``agentchaos.injector.skipped`` event when anything of ours goes wrong.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from agentchaos_otel import attributes as A
from agentchaos_otel import signals, tool_signals
from agentchaos_otel.faults.tool_result import UntransformableResult
from agentchaos_otel.inject.tools import SCRATCH_KEY, ToolFaultInjector
from agentchaos_otel.mcp import context, hooks, idempotency, results, sdk, sessions
from agentchaos_otel.mcp import protocol as P
from agentchaos_otel.mcp.transports import Planned, digest_of
from agentchaos_otel.plans import binding
from agentchaos_otel.trace.annotate import content_capture_enabled
from agentchaos_otel.trace.foreign import TOOL_NAME, first_truthy
from agentchaos_otel.trace.kinds import TOOL, step_kind

TRACER_NAME = "agentchaos_otel"
PROTOCOL_SCRATCH_KEY = "mcp_protocol_schedule"
PROTOCOL_EXPERIMENT = "mcp_protocol"

_lock = threading.Lock()
_tracers: weakref.WeakKeyDictionary[Any, trace.Tracer] = weakref.WeakKeyDictionary()


def _tracer() -> trace.Tracer:
    """Our tracer on the hooks' provider (or the global one), made once per provider."""
    provider = hooks.tracer_provider() or trace.get_tracer_provider()
    try:
        found = _tracers.get(provider)
        if found is None:
            found = _tracers[provider] = trace.get_tracer(TRACER_NAME, tracer_provider=provider)
        return found
    except TypeError:  # a provider that cannot be weakly referenced
        return trace.get_tracer(TRACER_NAME, tracer_provider=provider)


# --- request ids ----------------------------------------------------------------------------------
class RequestIds:
    """The JSON-RPC id a request was sent with, and what must happen as soon as it is known."""

    __slots__ = ("id", "on_id")

    def __init__(self, on_id: Callable[[Any], None] | None = None) -> None:
        self.id: Any = None
        self.on_id = on_id

    def set(self, rid: Any) -> None:
        if self.id is None and rid is not None:
            self.id = rid
            if self.on_id is not None:
                try:
                    self.on_id(rid)
                except Exception:  # fail open
                    pass


_request: contextvars.ContextVar[RequestIds | None] = contextvars.ContextVar("agentchaos_mcp_request", default=None)


def note_request_id(rid: Any) -> None:
    """2.x: ``JSONRPCDispatcher._allocate_id`` minted ``rid`` for the request this task is sending."""
    ids = _request.get()
    if ids is not None:
        ids.set(rid)


# --- one tool call --------------------------------------------------------------------------------
@dataclass
class ToolCall:
    session: Any
    name: str
    arguments: dict[str, Any]
    call_id: str | None
    span: Span
    own_span: bool
    outer_injector: bool = False
    injector: ToolFaultInjector | None = None
    index: int = -1
    kind: str | None = None
    planned: Planned | None = None
    claimed: bool = False


_call: contextvars.ContextVar[ToolCall | None] = contextvars.ContextVar("agentchaos_mcp_call", default=None)


def pending_call(session: Any, method: str | None, params: Any) -> ToolCall | None:
    """The tool call whose request this ``send_request`` is, if ``call_tool`` opened one."""
    call = _call.get()
    if call is None or call.claimed or call.session is not session or method != A.MCP_TOOLS_CALL:
        return None
    return call if sdk.param(params, "name") == call.name else None


def _skip(span: Span, reason: str, kind: str | None = None) -> None:
    try:
        event: dict[str, Any] = {A.SKIP_REASON: reason[:500]}
        if kind is not None:
            event[A.FAULT_TYPE] = kind
        span.add_event(A.EVENT_INJECTOR_SKIP, event)
    except Exception:
        pass


def _injector(session: Any) -> ToolFaultInjector:
    """The episode's injector (shared with ``wrap_tools``), else the session's own, condition none."""
    state = binding.active_state()
    if state is None:
        st = sessions.state(session)
        with _lock:
            if st.injector is None:
                st.injector = ToolFaultInjector("none", tracer_provider=hooks.tracer_provider())
        return st.injector  # type: ignore[no-any-return]
    with _lock:
        found = state.scratch.get(SCRATCH_KEY)
        if not isinstance(found, ToolFaultInjector):
            found = state.scratch[SCRATCH_KEY] = ToolFaultInjector(tracer_provider=hooks.tracer_provider())
    return found


def _protocol_schedule(session: Any) -> P.ProtocolSchedule | None:
    rules = context.current_rules()
    if not rules:
        return None
    state = binding.active_state()
    holder = state.scratch if state is not None else sessions.state(session).scratch
    with _lock:
        found = holder.get(PROTOCOL_SCRATCH_KEY)
        if not isinstance(found, P.ProtocolSchedule) or found.rules != rules:
            found = holder[PROTOCOL_SCRATCH_KEY] = P.ProtocolSchedule(
                rules, seed=int(getattr(state, "seed", 0) or 0),
                episode_key=str(getattr(state, "task_id", "") or ""))
    return found


def _outer_tool_span(name: str) -> tuple[Span, bool] | None:
    """An open tool-execution span of another instrumentation for this very tool, and whether it is
    our own ``wrap_tools`` span (whose injector then has the call)."""
    span = trace.get_current_span()
    if not span.is_recording():
        return None
    attrs = getattr(span, "attributes", None) or {}
    if step_kind(attrs) != TOOL or A.MCP_METHOD_NAME in attrs or first_truthy(attrs, TOOL_NAME) != name:
        return None
    scope = getattr(span, "instrumentation_scope", None)
    return span, getattr(scope, "name", None) == TRACER_NAME


def _start_attributes(session: Any, name: str, arguments: Mapping[str, Any], call_id: str | None) -> dict[str, Any]:
    attrs: dict[str, Any] = {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: name,
                             A.MCP_METHOD_NAME: A.MCP_TOOLS_CALL}
    if call_id:
        attrs[A.GEN_AI_TOOL_CALL_ID] = str(call_id)
    try:
        attrs.update(sessions.session_attributes(session))
        attrs.update(sessions.annotation_attributes(session, name))
        attrs.update(tool_signals.call_signals(dict(arguments)))
        if content_capture_enabled():
            attrs[A.GEN_AI_TOOL_CALL_ARGUMENTS] = json.dumps(dict(arguments), ensure_ascii=False, default=str)
    except Exception:  # annotation never stops a call
        pass
    return attrs


@contextlib.contextmanager
def _reused(span: Span, attrs: Mapping[str, Any], outer_injector: bool) -> Iterator[Span]:
    """The conventions' "avoid duplicates": the MCP attributes on the tool span already open."""
    keep = {k: v for k, v in attrs.items() if not (outer_injector and k.startswith("agentchaos."))
            and k not in (A.GEN_AI_OPERATION_NAME, A.GEN_AI_TOOL_NAME)}
    with contextlib.suppress(Exception):
        span.set_attributes(keep)
    yield span


def _decide(call: ToolCall) -> None:
    """The call's tool-result fault (the injector's schedule) and protocol fault (the rules)."""
    try:
        call.injector = _injector(call.session)
        call.index, call.kind = call.injector.next_call(call.span)
    except Exception as exc:  # fail open
        _skip(call.span, f"schedule failed: {type(exc).__name__}: {exc}")
        return
    try:
        schedule = _protocol_schedule(call.session)
        fault = schedule.decide(call.index, call.name) if schedule is not None else None
    except Exception as exc:
        _skip(call.span, f"protocol schedule failed: {type(exc).__name__}: {exc}")
        return
    if fault is None or schedule is None:
        return
    info = sessions.transport_of(call.session)
    reason = fault.applies_to(info.kind if info is not None else None)
    if reason is not None:
        schedule.release(fault)
        _skip(call.span, reason, fault.fault_type)
        return
    call.planned = Planned(fault)
    if call.kind is not None:
        _skip(call.span, f"protocol fault {fault.detail} on the same call; {call.kind} not applied", call.kind)
        call.kind = None


def _plan_delivery(call: ToolCall, rid: Any) -> None:
    """The request id is known: hand the planned HTTP or stdio fault to the transport that delivers it."""
    planned = call.planned
    if planned is None or planned.fault.kind == P.RPC_ERROR:
        return
    info = sessions.transport_of(call.session)
    if info is None:
        planned.note = "the session's transport is unknown"
    elif planned.fault.kind in P.HTTP_KINDS and info.http is not None:
        info.http_planned[str(rid)] = planned
    elif planned.fault.kind == P.STALL and info.reader is not None:
        info.reader.hold(rid, planned)
    else:
        planned.note = f"{planned.fault.kind} cannot be delivered over {info.kind}"


async def send_tool_request(call: ToolCall, wrapped: Callable[..., Awaitable[Any]], session: Any,
                            args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The ``tools/call`` request of ``call``: its id, trace context and transport attributes on the span."""
    call.claimed = True
    ids = RequestIds(lambda rid: _plan_delivery(call, rid))
    return await _send(call.span, ids, wrapped, session, args, kwargs)


async def _send(span: Span, ids: RequestIds, wrapped: Callable[..., Awaitable[Any]], session: Any,
                args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    token = _request.set(ids)
    try:
        if sdk.MAJOR == 1:
            args, kwargs = _with_trace_context(args, kwargs)
            ids.set(getattr(session, "_request_id", None))  # the id send_request is about to use
        return await wrapped(*args, **kwargs)
    finally:
        _request.reset(token)
        with contextlib.suppress(Exception):
            if ids.id is not None:
                span.set_attribute(A.JSONRPC_REQUEST_ID, str(ids.id))
            span.set_attributes(sessions.session_attributes(session))


def _with_trace_context(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    try:
        if args:
            return (sdk.with_trace_context(args[0]), *args[1:]), kwargs
        if "request" in kwargs:
            return args, {**kwargs, "request": sdk.with_trace_context(kwargs["request"])}
    except Exception:  # fail open: the request goes out as it was
        pass
    return args, kwargs


async def run_tool_call(session: Any, name: str, arguments: Mapping[str, Any] | None,
                        send: Callable[[ToolCall], Awaitable[Any]], *, timeout: float | None) -> Any:
    """A tool call of the agent's through the idempotency guard (when on), traced and faulted."""
    args = dict(arguments or {})
    cid = context.current_call_id()
    guard = idempotency.guard_for(session)
    if guard is None:
        return await _traced_tool_call(session, name, args, cid, send, timeout, None)

    async def run() -> Any:
        return await _traced_tool_call(session, name, args, cid, send, timeout, guard)

    return idempotency.as_result(await guard.acall(name, args, run, call_id=cid))


async def _traced_tool_call(session: Any, name: str, arguments: dict[str, Any], cid: str | None,
                            send: Callable[[ToolCall], Awaitable[Any]], timeout: float | None, guard: Any) -> Any:
    outer = _outer_tool_span(name)
    attrs = _start_attributes(session, name, arguments, cid)
    if outer is None:
        opened: Any = _tracer().start_as_current_span(
            A.mcp_span_name(A.MCP_TOOLS_CALL, name), kind=SpanKind.CLIENT, attributes=attrs,
            record_exception=False, set_status_on_exception=False)
    else:
        opened = _reused(outer[0], attrs, outer[1])
    with opened as span:
        call = ToolCall(session, name, arguments, cid, span, own_span=outer is None,
                        outer_injector=outer is not None and outer[1])
        if not call.outer_injector:
            _decide(call)
        token = _call.set(call)
        try:
            result = await _bounded(call, send, timeout)
        except BaseException as exc:
            _raised(call, exc)
            raise
        finally:
            _call.reset(token)
        if guard is not None:
            guard.record_execution(name, result)
        return _deliver(call, result)


async def _bounded(call: ToolCall, send: Callable[[ToolCall], Awaitable[Any]], timeout: float | None) -> Any:
    """``send``; a stalled call fails after the stall's seconds when the caller set no shorter timeout."""
    planned = call.planned
    if planned is None or planned.fault.kind != P.STALL or (timeout is not None and timeout <= planned.fault.seconds):
        return await send(call)
    with anyio.move_on_after(planned.fault.seconds):
        return await send(call)
    raise sdk.make_timeout_error(A.MCP_TOOLS_CALL, planned.fault.seconds)


# --- what the agent gets ----------------------------------------------------------------------------
def _base_attributes(call: ToolCall, kind: str | None) -> dict[str, Any]:
    return call.injector.call_attributes(call.index, kind) if call.injector is not None else {}


def _set_error(call: ToolCall, error_type: str, code: int | None = None) -> None:
    span = call.span
    with contextlib.suppress(Exception):
        span.set_attribute(A.ERROR_TYPE, error_type)
        if code is not None:
            span.set_attribute(A.RPC_RESPONSE_STATUS_CODE, str(code))
        if call.own_span:
            span.set_status(Status(StatusCode.ERROR, error_type))


def _record_protocol(call: ToolCall, planned: Planned, *, after: str | None, changed: bool) -> None:
    fault = planned.fault
    attrs = {**_base_attributes(call, None), A.FAULT_INJECTED: True, A.FAULT_TYPE: fault.fault_type,
             A.FAULT_TARGET: A.TARGET_MCP, A.FAULT_CHANGED: changed, A.FAULT_STRATEGY: fault.strategy,
             A.FAULT_EXPERIMENT: PROTOCOL_EXPERIMENT, A.FAULT_DETAIL: fault.detail,
             A.FAULT_DIGEST_BEFORE: planned.before or "", A.FAULT_DIGEST_AFTER: after or planned.after or ""}
    with contextlib.suppress(Exception):
        call.span.set_attributes(attrs)
        call.span.add_event(A.EVENT_FAULT_APPLIED, {A.FAULT_TYPE: fault.fault_type, A.FAULT_CHANGED: changed})
        if call.injector is not None:
            episode_step = (getattr(call.span, "attributes", None) or {}).get(A.STEP)
            call.injector.log_firing(
                {"step": call.index, "episode_step": episode_step, "tool": call.name, "call_id": call.call_id,
                 "kind": fault.kind, "changed": changed, "digest_before": planned.before or "",
                 "digest_after": after or planned.after or ""},
                fault=fault.detail, target=A.TARGET_MCP, fault_type=fault.fault_type)


def _is_cancellation(exc: BaseException) -> bool:
    return isinstance(exc, anyio.get_cancelled_exc_class()) or type(exc).__name__ == "CancelledError"


def _raised(call: ToolCall, exc: BaseException) -> None:
    """The agent got an exception instead of a result: JSON-RPC error, timeout, broken transport."""
    try:
        planned = call.planned
        if call.outer_injector:
            parts = sdk.rpc_error_parts(exc)
            if parts is not None:
                call.span.set_attribute(A.RPC_RESPONSE_STATUS_CODE, str(parts[0]))
            return
        if _is_cancellation(exc) and not (planned is not None and planned.applied):
            return  # the caller's own cancellation is no failure of the call
        attrs = _base_attributes(call, None)
        if call.kind is not None:
            attrs[A.FAULT_SKIPPED] = f"the call failed; {call.kind} not applied"
        parts = sdk.rpc_error_parts(exc)
        if parts is not None:
            code, message = parts
            attrs.update(results.error_signals(code, message))
            _set_error(call, str(code), code)
        else:
            attrs.update(results.error_signals(None, f"{type(exc).__name__}: {exc}"))
            _set_error(call, type(exc).__qualname__)
        call.span.set_attributes(attrs)
        call.span.add_event("exception", {A.EXCEPTION_TYPE: type(exc).__qualname__})
        if planned is not None:
            if planned.applied:
                after = digest_of({"code": parts[0], "message": parts[1]}) if parts else planned.after
                _record_protocol(call, planned, after=after, changed=True)
            else:
                _skip(call.span, planned.note or f"{planned.fault.detail} was not delivered", planned.fault.fault_type)
    except Exception:  # fail open
        pass


def _deliver(call: ToolCall, result: Any) -> Any:
    """The result the agent is shown: the real one, a tool-result fault, or a JSON-RPC error."""
    if call.outer_injector:
        return result
    if not sdk.is_call_tool_result(result):
        with contextlib.suppress(Exception):
            call.span.set_attributes(_base_attributes(call, None))
        return result
    try:
        wire = sdk.wire(result)
    except Exception as exc:  # fail open
        _skip(call.span, f"result not readable: {type(exc).__name__}")
        return result
    planned = call.planned
    if planned is not None and planned.fault.kind == P.RPC_ERROR:
        return _rpc_error(call, planned, result, wire)
    if planned is not None:
        _skip(call.span, planned.note or f"{planned.fault.detail}: the real result arrived", planned.fault.fault_type)
    kind = call.kind
    shown_wire, shown = wire, result
    if kind is not None and call.injector is not None:
        try:
            shown_wire = call.injector.transform(
                call.index, lambda rng, renames: results.shape_fault(kind, wire, rng=rng, state=renames))
            shown = sdk.result_from_wire(result, shown_wire)
        except UntransformableResult as exc:
            _skip(call.span, f"{kind} not applicable: {exc}", kind)
            kind, shown_wire, shown = None, wire, result
        except Exception as exc:  # fail open
            _skip(call.span, f"{type(exc).__name__}: {exc}", kind)
            kind, shown_wire, shown = None, wire, result
    _annotate(call, kind, wire, shown_wire)
    return shown


def _annotate(call: ToolCall, kind: str | None, wire: dict[str, Any], shown_wire: dict[str, Any]) -> None:
    try:
        attrs = _base_attributes(call, kind)
        attrs.update(results.result_signals(shown_wire))
        attrs[A.TOOL_RESULT_ECHO_MISMATCH] = signals.echo_mismatches(call.arguments, results.observed(shown_wire))
        record = None
        if kind is not None:
            before, after = results.wire_digest(wire), results.wire_digest(shown_wire)
            changed = before != after
            attrs.update({A.FAULT_TYPE: kind, A.FAULT_TARGET: A.TARGET_TOOL_RESULT, A.FAULT_CHANGED: changed,
                          A.FAULT_DIGEST_BEFORE: before, A.FAULT_DIGEST_AFTER: after,
                          A.FAULT_DETAIL: f"tool_{kind}_{call.injector.condition if call.injector else ''}"})
            record = {"step": call.index, "episode_step": (getattr(call.span, "attributes", None) or {}).get(A.STEP),
                      "tool": call.name, "call_id": call.call_id, "kind": kind, "changed": changed,
                      "digest_before": before, "digest_after": after}
        if content_capture_enabled():
            attrs[A.GEN_AI_TOOL_CALL_RESULT] = results.observed_text(shown_wire)
            if shown_wire is not wire:
                attrs[A.ORIGINAL_TOOL_RESULT] = results.observed_text(wire)
        call.span.set_attributes(attrs)
        if shown_wire.get(results.IS_ERROR):
            _set_error(call, A.ERROR_TYPE_TOOL_ERROR)
        if record is not None and call.injector is not None:
            call.span.add_event(A.EVENT_FAULT_APPLIED, {A.FAULT_TYPE: str(kind), A.FAULT_CHANGED: record["changed"]})
            call.injector.log_firing(record)
    except Exception as exc:  # fail open
        _skip(call.span, f"annotation failed: {type(exc).__name__}: {exc}", kind)


def _rpc_error(call: ToolCall, planned: Planned, result: Any, wire: dict[str, Any]) -> Any:
    """The tool ran and answered; the agent gets the JSON-RPC error the rule names instead."""
    fault = planned.fault
    try:
        error = sdk.make_rpc_error(fault.code, fault.rpc_message)
    except Exception as exc:  # fail open
        _skip(call.span, f"{fault.detail}: {type(exc).__name__}", fault.fault_type)
        return result
    planned.before, planned.applied = results.wire_digest(wire), True
    after = digest_of({"code": fault.code, "message": fault.rpc_message})
    with contextlib.suppress(Exception):
        call.span.set_attributes(results.error_signals(fault.code, fault.rpc_message))
        _set_error(call, str(fault.code), fault.code)
    _record_protocol(call, planned, after=after, changed=True)
    raise error


# --- every other request ---------------------------------------------------------------------------
def _request_attributes(session: Any, method: str, params: Any) -> tuple[str, dict[str, Any]]:
    target = sdk.param(params, "name") if method in (A.MCP_TOOLS_CALL, A.MCP_PROMPTS_GET) else None
    attrs: dict[str, Any] = {A.MCP_METHOD_NAME: method}
    with contextlib.suppress(Exception):
        attrs.update(sessions.session_attributes(session))
        if method == A.MCP_PROMPTS_GET and isinstance(target, str):
            attrs[A.GEN_AI_PROMPT_NAME] = target
        uri = sdk.param(params, "uri")
        if uri is not None and method.startswith("resources/"):
            attrs[A.MCP_RESOURCE_URI] = str(uri).split("?", 1)[0].split("#", 1)[0]  # no query strings
    return A.mcp_span_name(method, target if isinstance(target, str) else None), attrs


async def run_request(session: Any, method: str, params: Any, wrapped: Callable[..., Awaitable[Any]],
                      args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Any request other than an agent's tool call: one CLIENT span per the MCP conventions."""
    name, attrs = _request_attributes(session, method, params)
    with _tracer().start_as_current_span(name, kind=SpanKind.CLIENT, attributes=attrs, record_exception=False,
                                         set_status_on_exception=False) as span:
        try:
            result = await _send(span, RequestIds(), wrapped, session, args, kwargs)
        except BaseException as exc:
            parts = sdk.rpc_error_parts(exc)
            if parts is not None or not _is_cancellation(exc):
                error_type = str(parts[0]) if parts is not None else type(exc).__qualname__
                with contextlib.suppress(Exception):
                    span.set_attribute(A.ERROR_TYPE, error_type)
                    if parts is not None:
                        span.set_attribute(A.RPC_RESPONSE_STATUS_CODE, error_type)
                    span.set_status(Status(StatusCode.ERROR, error_type))
            raise
        with contextlib.suppress(Exception):
            if method == A.MCP_INITIALIZE:
                version = getattr(result, "protocolVersion", None) or getattr(result, "protocol_version", None)
                if isinstance(version, str):
                    sessions.state(session).protocol_version = version
                    span.set_attribute(A.MCP_PROTOCOL_VERSION, version)
            elif method == A.MCP_TOOLS_LIST:
                sessions.remember_tools(session, getattr(result, "tools", None))
                idempotency.declare_for_session(session)
        return result
