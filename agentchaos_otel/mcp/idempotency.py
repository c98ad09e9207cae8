"""The idempotency guard for MCP tools, declared from the tools' own annotations.

MCP servers describe each tool in ``tools/list``: ``readOnlyHint`` (it changes nothing),
``idempotentHint`` (repeating it with the same arguments changes nothing more) and
``destructiveHint``. By the specification's defaults a tool that says nothing is destructive and
not idempotent. So a tool may be repeated when it is read-only or idempotent, and not otherwise;
the user's own declaration (``idempotent=``) wins over what the server says.

Switched on with one line, for one session (``guard_idempotency(session)``) or for every session
of the process (``guard_idempotency()``: one guard per episode and session, so its memory of
calls is the episode's). The guard is the same ``IdempotencyGuard`` as for wrapped tools: its
agent layer sits where ``call_tool`` is called, its execution layer where the real
``CallToolResult`` arrives, the injected faults between them, and a suppressed repeat is recorded
on an ``execute_tool`` span of its own.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from agentchaos_otel.guards.idempotency import FIRST_RESULT, IdempotencyGuard, looks_like_error
from agentchaos_otel.mcp import hooks, results, sdk, sessions
from agentchaos_otel.plans import binding

SCRATCH_KEY = "mcp_idempotency_guards"
Declaration = Collection[str] | Mapping[str, bool] | Callable[[str, Mapping[str, Any]], bool | None] | None


def idempotent_from_annotations(hints: Mapping[str, Any]) -> bool:
    """May a call of a tool with these annotations be repeated? Read-only or idempotent: yes."""
    return bool(hints.get("readOnlyHint")) or bool(hints.get("idempotentHint"))


def declare_from_annotations(guard: IdempotencyGuard, annotations: Mapping[str, Mapping[str, Any]]) -> None:
    for name, hints in annotations.items():
        guard.declare(name, idempotent_from_annotations(hints))


def observe(value: Any) -> Any:
    """What the agent reads from a result, a guard reply that wraps one, or anything else."""
    if sdk.is_call_tool_result(value):
        return results.observed(sdk.wire(value))
    if isinstance(value, Mapping) and sdk.is_call_tool_result(value.get("result")):
        return {**value, "result": observe(value["result"])}
    return value


def is_error(value: Any) -> bool:
    """An exception, an ``isError`` result, or a result whose content reads as an error."""
    if sdk.is_call_tool_result(value) and sdk.wire(value).get(results.IS_ERROR):
        return True
    return looks_like_error(observe(value))


def as_result(reply: Any) -> Any:
    """A guard's reply in MCP's result shape (its ``already_applied`` note becomes the text)."""
    if sdk.is_call_tool_result(reply) or not isinstance(reply, Mapping):
        return reply
    text = json.dumps(observe(reply), ensure_ascii=False, default=str)
    return sdk.result_from_wire(None, {"content": [{"type": "text", "text": text}], "isError": False})


@dataclass(frozen=True)
class GuardOptions:
    idempotent: Declaration = None
    window: int = 3
    reply: str = FIRST_RESULT
    tracer_provider: Any = None

    def build(self, session: Any) -> IdempotencyGuard:
        guard = IdempotencyGuard(self.idempotent, window=self.window, reply=self.reply, is_error=is_error,
                                 observe=observe, tracer_provider=self.tracer_provider or hooks.tracer_provider())
        declare_from_annotations(guard, sessions.state(session).annotations)
        return guard


_process: GuardOptions | None = None
_lock = threading.Lock()


def guard_idempotency(session: Any = None, *, idempotent: Declaration = None, window: int = 3,
                      reply: str = FIRST_RESULT, tracer_provider: Any = None) -> IdempotencyGuard | None:
    """Switch the guard on for ``session``, or (no session) for every MCP session of the process.

    Returns the session's guard (None process-wide). ``idempotent`` is the user's declaration
    (names, a mapping name -> bool, or a callable ``(name, arguments) -> bool | None``).
    """
    global _process
    options = GuardOptions(idempotent, window, reply, tracer_provider)
    if session is None:
        _process = options
        return None
    guard = options.build(session)
    sessions.state(session).guard = guard
    return guard


def unguard_idempotency(session: Any = None) -> None:
    """Switch the guard off for ``session``, or the process-wide one."""
    global _process
    if session is None:
        _process = None
    else:
        sessions.state(session).guard = None


def guard_for(session: Any) -> IdempotencyGuard | None:
    """The guard a call of ``session`` goes through: the session's own, else the process-wide one's
    instance for (this episode, this session), else None."""
    st = sessions.state(session)
    if st.guard is not None:
        return st.guard  # type: ignore[no-any-return]
    options = _process
    if options is None:
        return None
    state = binding.active_state()
    holder = state.scratch if state is not None else st.scratch
    with _lock:
        guards = holder.setdefault(SCRATCH_KEY, {})
        guard = guards.get(st.key)
        if guard is None:
            guard = guards[st.key] = options.build(session)
    return guard  # type: ignore[no-any-return]


def declare_for_session(session: Any) -> None:
    """Annotations of ``session`` changed: tell every guard that watches it."""
    st = sessions.state(session)
    targets = [st.guard] if st.guard is not None else []
    state = binding.active_state()
    holder = state.scratch if state is not None else st.scratch
    found = holder.get(SCRATCH_KEY, {}).get(st.key)
    if found is not None:
        targets.append(found)
    for guard in targets:
        declare_from_annotations(guard, st.annotations)
