"""Span processor that puts every LLM and tool span in its episode's step order, whoever traced it.

A step's number is its rank by start time among its episode's steps (the ``steps`` view computes
exactly that). The processor writes it as ``agentchaos.step`` when the span starts, from the
task's bound episode, shared by LLM and tool spans and isolated per task. A span whose
attributes say what it is only after it started (Google ADK's ``execute_tool``, OpenInference's
LangChain spans) is numbered as soon as it is known: by its conventional name
(``execute_tool {tool}``), or when the next step starts while it is open, or, when it ends
unnumbered, its number is taken so the later steps keep their rank.

**One logical call, two spans.** Most agents already have GenAI tracing around the SDK call
(OpenInference ``ChatCompletion``, the official openai-v2 ``chat {model}``, OpenLLMetry
``openai.chat`` / ``anthropic.chat``, the anthropic SDK's own ``anthropic.messages.create``)
and our transport opens its ``chat`` span for each HTTP attempt under it. Our span stays the
HTTP attempt (an SDK retry is a second attempt, as without the other instrumentation); when a
step span starts directly under a still-open step span of the same kind (LLM under LLM, tool
under tool), or, for instrumentations that start their span without making it current
(OpenLLMetry's ``anthropic.chat``), beside a still-open foreign one with the same parent:

- it takes the enclosing span's step if it is the first span under it, a new step otherwise
  (a retry), so the numbering is the one the agent gets without the other instrumentation;
- it records ``agentchaos.step.wrapper_span_id`` (the enclosing span) and the enclosing span
  counts ``agentchaos.step.wrapped_attempts``;
- when it ends, its ``agentchaos.*`` attributes (ground truth, signals; not its step) are
  mirrored onto the enclosing span while that is still open, so a Phoenix or Jaeger user sees
  them on the span their tool shows; an attempt without a fault never hides an earlier
  attempt's fault.

The store's views, the diagnosers' input and the live predictor count the inner spans as the
steps and leave out the enclosing one; a foreign LLM span with nothing of ours below it
(imported traces, no injector) is itself the call.

**Episodes without ``episode()``** (zero-code): each root span of the application (its own
root span, a web request, an agent framework's ``invoke_agent``) whose trace reaches an LLM or
tool step gets a fresh copy of the process-wide plan bound to its trace, so every root trace has
its own schedule and step numbering, and the root is marked as the episode
(``agentchaos.episode.root``, the plan's condition, seed and experiment) when its first step
starts. A root with no step costs two dictionary operations and is no episode. An LLM call made
where no span is current, while another instrumentation's LLM span is open (an instrumentor that
starts spans without making them current), is started under that span (``adoptable_parent``)
so it stays in the application's trace; with none open it is its own trace and keeps the
process-wide state.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import weakref
from collections import OrderedDict
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from agentchaos_otel import attributes as A
from agentchaos_otel import redact
from agentchaos_otel.plans import binding
from agentchaos_otel.trace import foreign
from agentchaos_otel.trace.kinds import LLM, step_kind, step_kind_at_start

OWN_SCOPE = "agentchaos_otel"
# Copied onto the enclosing span as they are: everything of ours except where the step sits.
_NOT_MIRRORED = frozenset({A.STEP, A.STEP_WRAPPER_SPAN_ID, A.STEP_WRAPPED_ATTEMPTS, A.TASK_ID})


def _span_id(span: ReadableSpan) -> str:
    return format(span.get_span_context().span_id, "016x")


def _is_ours(span: ReadableSpan) -> bool:
    scope = span.instrumentation_scope
    return scope is not None and scope.name == OWN_SCOPE


def _trace_id(span: ReadableSpan) -> int:
    return span.get_span_context().trace_id


def _is_root(span: ReadableSpan) -> bool:
    return span.parent is None or span.parent.is_remote


def _names_agree(a: Any, b: Any, kind: str) -> bool:
    """Whether two spans may be the same call: same model (LLM) or tool name, when both say."""
    names = foreign.REQUEST_MODEL if kind == LLM else foreign.TOOL_NAME
    x, y = foreign.first_truthy(a or {}, names), foreign.first_truthy(b or {}, names)
    if not x or not y:
        return True
    x, y = str(x), str(y)
    return x == y or x.endswith("/" + y) or y.endswith("/" + x)  # LiteLLM's "openai/model"


_PROCESSORS: weakref.WeakSet[EpisodeSpanProcessor] = weakref.WeakSet()
# The same processors as a list, for the per-call question "is a span of another instrumentation
# open anywhere?": iterating a WeakSet costs microseconds on every LLM call. Each reference takes
# itself out of the list when its processor is collected.
_PROCESSOR_REFS: list[weakref.ref[EpisodeSpanProcessor]] = []
# Spans of other instrumentations that turned out, at their end, to be an LLM call one of our
# spans under them already counts (their attributes came too late to mark them); live readers
# (``store.read.live_steps``) leave them out as the views do. Bounded: the newest are kept.
_DUPLICATES: OrderedDict[int, None] = OrderedDict()
_MAX_DUPLICATES = 4096


def is_duplicate(span_id: int) -> bool:
    """Whether ``span_id`` is another instrumentation's view of an LLM call we counted."""
    return span_id in _DUPLICATES


_Where = tuple[int, Any, otel_context.Context]


def _where() -> _Where:
    """The thread and asyncio task running now, and the current context: a span started here
    belongs to what runs here."""
    loop = asyncio._get_running_loop()  # None outside a loop, where current_task() would raise
    return threading.get_ident(), asyncio.current_task(loop) if loop is not None else None, otel_context.get_current()


def _same_flow(started: _Where | None, here: _Where) -> bool:
    """Whether a span started at ``started`` belongs to the work running ``here``.

    The same thread and task; or a callback that an asyncio application ran in an executor
    thread with a copy of the calling task's context (LangChain runs the synchronous callback
    handlers of an async chain that way, OpenInference's tracer among them): outside any task,
    in another thread, with the very context object that is current here.
    """
    if started is None:
        return False
    if started[:2] == here[:2]:
        return True
    return started[1] is None and started[0] != here[0] and started[2] is here[2]


def adoptable_parent(model: str | None, current: Any = None) -> Span | None:
    """Another instrumentation's open span an LLM call made outside any span belongs to.

    An instrumentor that starts its spans without making them current (OpenInference's
    LangChain tracer, which also sets their attributes only at their end) leaves the HTTP call
    with no current span; our span would start a trace of its own. The latest-started open span
    of another instrumentation started in the same thread and asyncio task, and not known to be
    anything but an LLM call (or, when one is known, an LLM span whose model agrees), owns the
    call: our span is started under it and stays in the application's trace. With a current span
    (``current``, e.g. the episode's root), only such a span of the same trace started after it
    can own the call: it is the more specific context the other instrumentation did not attach.
    """
    if not _anything_tracked():
        return None  # no span of another instrumentation is open: the common case, decided at once
    current = current if current is not None else trace.get_current_span()
    best: Span | None = None
    here = _where()
    for proc in list(_PROCESSORS):
        found = proc.open_owner(model, here, current)
        if found is not None and (best is None or (found.start_time or 0) > (best.start_time or 0)):
            best = found
    return best


def _anything_tracked() -> bool:
    """Whether some processor has an open span of another instrumentation."""
    for ref in _PROCESSOR_REFS:
        proc = ref()
        if proc is not None and proc._started_in:
            return True
    return False


# Attribute keys repeat across spans: the name check runs once per distinct key (bounded).
_is_secret_name = functools.lru_cache(maxsize=4096)(redact.is_secret_name)


def _redact_credential_headers(span: Span) -> None:
    """Mask credential-named attributes (captured ``Authorization`` and API-key headers) at start.

    HTTP instrumentations set captured request headers as start attributes; masking them here,
    before any exporter of the process sees the span, keeps keys out of the user's own exporters
    too, without rewriting OTel's sanitize variables in the environment.
    """
    attrs = span.attributes
    if not attrs:
        return
    for key in _secret_keys(tuple(attrs)):
        span.set_attribute(key, (redact.MARKER,))


@functools.lru_cache(maxsize=1024)
def _secret_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    """The credential-named keys among a span's start keys: spans of one kind start with the same
    keys, so the whole set is judged once instead of one cached look-up per key per span."""
    return tuple(k for k in keys if _is_secret_name(k))


class EpisodeSpanProcessor(SpanProcessor):
    """Adds ``agentchaos.step`` and ``agentchaos.task.id`` to LLM and tool spans, and pairs them."""

    def __init__(self) -> None:
        self._wrapper_of: dict[int, Span] = {}  # inner span id -> the span of the same step it pairs with
        self._open: dict[int, dict[int, Span]] = {}  # trace -> open spans of others, in start order
        self._roots: dict[int, Span] = {}  # trace -> its open local root (zero-code episodes)
        self._bound: set[int] = set()  # traces this processor bound a state to
        self._started_in: dict[int, _Where] = {}  # tracked span -> _where() at start
        self._over_ours: set[int] = set()  # tracked spans, kind unknown, with one of our LLM spans under them
        self._lock = threading.Lock()
        self._pending_refusal: str | None = None
        _PROCESSORS.add(self)
        _PROCESSOR_REFS.append(weakref.ref(self, _PROCESSOR_REFS.remove))
        binding.add_trace_binder(self.state_for_trace)

    def state_for_trace(self, trace_id: int) -> binding.EpisodeState | None:
        """The episode state of an application root's trace, made on first use (``binding``)."""
        default = binding.process_default()
        root = self._roots.get(trace_id)
        if default is None or root is None:
            return None
        return self._bind_root(root, trace_id, default)

    def refuse(self, message: str) -> None:
        """Record ``message`` (why zero-code settings were refused) on the next span to start."""
        self._pending_refusal = message

    # -- which episode a span belongs to ---------------------------------------------------------
    def _state(self, span: Span, trace_id: int, *, bind: bool) -> binding.EpisodeState | None:
        state = binding.current_episode() or binding.trace_state(trace_id)
        if state is not None:
            return state
        default = binding.process_default()
        if default is None:
            return None
        root = self._roots.get(trace_id)
        if root is None or not bind:
            return default
        return self._bind_root(root, trace_id, default)

    def _bind_root(self, root: Span, trace_id: int, default: binding.EpisodeState) -> binding.EpisodeState:
        """The application root of ``trace_id`` becomes an episode of the process-wide plan."""
        with self._lock:
            state = binding.trace_state(trace_id)
            if state is not None:
                return state
            state = default.fresh()
            binding.bind_trace(trace_id, state)
            self._bound.add(trace_id)
        attrs: dict[str, Any] = {A.EPISODE_ROOT: True, A.SEED: state.seed,
                                 A.FAULT_EXPERIMENT: state.experiment.name,
                                 A.CONDITION: state.condition or state.plan.name}
        if state.task_id is not None:
            attrs[A.TASK_ID] = state.task_id
        if root.is_recording():
            root.set_attributes(attrs)
        return state

    # -- span start ------------------------------------------------------------------------------
    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        _redact_credential_headers(span)
        if self._pending_refusal is not None:
            message, self._pending_refusal = self._pending_refusal, None
            span.set_attribute(A.INJECTOR_REFUSED, message)
        attrs = span.attributes or {}
        trace_id = _trace_id(span)
        ours = _is_ours(span)
        kind = step_kind_at_start(attrs, span.name, span.kind)
        if kind is None and _is_root(span):
            if not ours and binding.current_episode() is None and binding.process_default() is not None:
                self._roots[trace_id] = span  # the application's root: an episode once it has a step
            return
        if kind is None or A.STEP in attrs:
            if not ours and (trace_id in self._roots or binding.trace_state(trace_id) is not None
                             or binding.current_episode() is not None):
                self._track(trace_id, span)
            return
        state = self._state(span, trace_id, bind=True)
        if state is None:
            return
        self._number_known(trace_id, state, span.start_time or 0)
        parent = trace.get_current_span(parent_context)
        enclosing = self._enclosing(span, kind, trace_id, parent, ours)
        step = None
        if enclosing is not None:
            attempts = int((enclosing.attributes or {}).get(A.STEP_WRAPPED_ATTEMPTS, 0))
            enclosing.set_attribute(A.STEP_WRAPPED_ATTEMPTS, attempts + 1)
            span.set_attribute(A.STEP_WRAPPER_SPAN_ID, _span_id(enclosing))
            with self._lock:
                self._wrapper_of[span.get_span_context().span_id] = enclosing
            if attempts == 0:
                step = enclosing.attributes[A.STEP]
        self._number(span, state, state.next_step() if step is None else step)
        if not ours:
            self._track(trace_id, span)
        elif enclosing is None and kind == LLM:
            self._note_over_ours(parent)

    def _note_over_ours(self, parent: Any) -> None:
        """Remember a tracked span of unknown kind that one of our LLM spans started under."""
        if isinstance(parent, Span) and parent.is_recording() and not _is_ours(parent) \
                and step_kind(parent.attributes, parent.kind) is None:
            with self._lock:
                if parent.get_span_context().span_id in self._started_in:
                    self._over_ours.add(parent.get_span_context().span_id)

    def _track(self, trace_id: int, span: Span) -> None:
        span_id = span.get_span_context().span_id
        where = _where()
        with self._lock:
            self._open.setdefault(trace_id, {})[span_id] = span
            self._started_in[span_id] = where

    @staticmethod
    def _number(span: Span, state: binding.EpisodeState, step: int) -> None:
        attrs: dict[str, Any] = {A.STEP: step}
        if state.task_id is not None:
            attrs[A.TASK_ID] = state.task_id
        span.set_attributes(attrs)

    def _number_known(self, trace_id: int, state: binding.EpisodeState, before: int) -> None:
        """Number the open spans of others that started before ``before`` and are now known steps."""
        if trace_id not in self._open:
            return  # none tracked in this trace (a lookup is atomic; the lock guards the walk below)
        with self._lock:
            pending = [s for s in self._open.get(trace_id, {}).values()
                       if A.STEP not in (s.attributes or {}) and (s.start_time or 0) <= before]
        for other in pending:
            if other.is_recording() and step_kind(other.attributes, other.kind) is not None:
                self._number(other, state, state.next_step())

    def _enclosing(self, span: Span, kind: str, trace_id: int, parent: Any, ours: bool) -> Span | None:
        """The open span of another instrumentation that sees the same step as ``span``, if any.

        Only LLM calls pair by parenthood alone (an LLM span directly under another LLM span is
        one call seen twice); a tool run inside another tool is a nested call of its own, and
        is paired only when it is ours (our tool injector inside a framework's tool span). ``parent``:
        the span current where ``span`` started.
        """
        if isinstance(parent, Span) and parent.is_recording() and not _is_ours(parent) \
                and (ours or kind == LLM) \
                and step_kind(parent.attributes, parent.kind) == kind and A.STEP in (parent.attributes or {}):
            return parent
        if not ours or trace_id not in self._open:
            return None
        with self._lock:
            candidates = [c for c in self._open.get(trace_id, {}).values()
                          if c.is_recording() and A.STEP in (c.attributes or {})
                          and step_kind(c.attributes, c.kind) == kind
                          and _names_agree(c.attributes, span.attributes, kind)]
        unpaired = [c for c in candidates if not (c.attributes or {}).get(A.STEP_WRAPPED_ATTEMPTS)]
        pool = unpaired or candidates  # a span already paired takes the retries of its call
        return max(pool, key=lambda c: c.start_time or 0) if pool else None

    def open_owner(self, model: str | None, where: _Where, current: Any) -> Span | None:
        """The span of another instrumentation an LLM call belongs to (``adoptable_parent``)."""
        ctx = current.get_span_context()
        after = getattr(current, "start_time", None) or 0 if ctx.is_valid else 0
        with self._lock:
            pool = self._open.get(ctx.trace_id, {}).values() if ctx.is_valid \
                else [s for trace_spans in self._open.values() for s in trace_spans.values()]
            spans = [s for s in pool if _same_flow(self._started_in.get(s.get_span_context().span_id), where)
                     and (s.start_time or 0) > after and s is not current]
        if not spans:
            return None
        latest = max(spans, key=lambda s: s.start_time or 0)
        attrs = latest.attributes or {}
        kind = step_kind(attrs, latest.kind)
        if not latest.is_recording() or kind not in (None, LLM) or attrs.get(A.STEP_WRAPPED_ATTEMPTS):
            return None
        if kind == LLM and not _names_agree(attrs, {A.GEN_AI_REQUEST_MODEL: model} if model else {}, LLM):
            return None
        return latest

    # -- span end --------------------------------------------------------------------------------
    def on_end(self, span: ReadableSpan) -> None:
        ctx = span.get_span_context()
        trace_id = ctx.trace_id
        if _is_root(span):
            self._end_root(span, trace_id)
            return
        with self._lock:
            enclosing = self._wrapper_of.pop(ctx.span_id, None)
            trace_spans = self._open.get(trace_id)
            tracked = trace_spans.pop(ctx.span_id, None) if trace_spans is not None else None
            self._started_in.pop(ctx.span_id, None)
            over_ours = ctx.span_id in self._over_ours
            self._over_ours.discard(ctx.span_id)
        if tracked is not None:
            attrs = span.attributes or {}
            kind = step_kind(attrs, span.kind)
            if A.STEP not in attrs and kind is not None:
                if over_ours and kind == LLM:  # the call our span under it counts
                    _DUPLICATES[ctx.span_id] = None
                    while len(_DUPLICATES) > _MAX_DUPLICATES:
                        _DUPLICATES.popitem(last=False)
                else:  # known only now: its number is taken, so the steps after it keep their rank
                    state = binding.current_episode() or binding.trace_state(trace_id)
                    if state is not None:
                        state.next_step()
        if enclosing is not None and enclosing.is_recording():
            enclosing.set_attributes(self._mirror(span.attributes or {}, enclosing.attributes or {}))

    def _end_root(self, span: ReadableSpan, trace_id: int) -> None:
        with self._lock:
            root = self._roots.get(trace_id)
            if root is not None and root.get_span_context().span_id != span.get_span_context().span_id:
                return  # another root of the same trace (a remote parent's other child)
            self._roots.pop(trace_id, None)
            for span_id in self._open.pop(trace_id, {}):
                self._started_in.pop(span_id, None)
                self._over_ours.discard(span_id)
            bound = trace_id in self._bound
            self._bound.discard(trace_id)
        if bound:
            binding.unbind_trace(trace_id)

    @staticmethod
    def _mirror(inner: Any, outer: Any) -> dict[str, Any]:
        keep_outer_fault = bool(outer.get(A.FAULT_INJECTED)) and not inner.get(A.FAULT_INJECTED)
        return {k: v for k, v in inner.items() if k.startswith("agentchaos.") and k not in _NOT_MIRRORED
                and not (keep_outer_fault and k.startswith(A.FAULT_PREFIX))}

    def shutdown(self) -> None:
        binding.remove_trace_binder(self.state_for_trace)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
