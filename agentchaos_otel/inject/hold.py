"""Chat spans kept open for a transport further out in the chain (the response guard).

``LLMCall.end`` normally ends its span; while a guard has ``holding()`` active in the current
context, the finished span is handed to the guard instead, so the guard's decision (which it
can only make after the body is read) lands on the same span. The guard always ends what it
held, even when it raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_HELD: ContextVar[list[Any] | None] = ContextVar("agentchaos_held_spans", default=None)


def hold(span: Any) -> bool:
    """Keep ``span`` open for the guard that asked for it; False when no guard is holding."""
    held = _HELD.get()
    if held is None:
        return False
    held.append(span)
    return True


@contextmanager
def holding() -> Iterator[list[Any]]:
    """Collect the chat spans ended inside the block; the caller must end them."""
    spans: list[Any] = []
    token = _HELD.set(spans)
    try:
        yield spans
    finally:
        _HELD.reset(token)


def begin() -> tuple[list[Any], Any]:
    """``holding()`` for code that cannot use a ``with`` block (a stream being iterated)."""
    spans: list[Any] = []
    return spans, _HELD.set(spans)


def release(token: Any) -> None:
    """Stop holding; a stream finalised from another context (garbage collection) just stops."""
    try:
        _HELD.reset(token)
    except ValueError:
        pass
