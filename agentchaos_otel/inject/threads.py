"""Carry the episode (and the OTel context) into worker threads.

A new thread starts with an empty ``contextvars`` context, so an LLM call an agent makes from a
``ThreadPoolExecutor`` worker or a ``threading.Thread`` would run with no plan, task id, step
numbering or parent span. Like OTel's threading instrumentation, work is wrapped where it is
handed over: ``ThreadPoolExecutor.submit`` captures the submitter's context for each task, and
``Thread.start`` captures the starter's for the thread's ``run``.

Each executor task binds exactly what its submitter had, including "no episode": a pooled worker
thread outlives the episode that created it, and its later tasks must not inherit that episode.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import wrapt
from opentelemetry import context as otel_context

from agentchaos_otel.plans import binding

_patched: list[tuple[type, str]] = []


def _carrying(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` run under the context of the caller of this function."""
    ctx = otel_context.get_current()
    state = binding.current_episode()

    def run(*args: Any, **kwargs: Any) -> Any:
        ctx_token = otel_context.attach(ctx)
        state_token = binding.bind(state)
        try:
            return fn(*args, **kwargs)
        finally:
            binding.unbind(state_token)
            otel_context.detach(ctx_token)

    return run


def _submit(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if not args:
        return wrapped(*args, **kwargs)
    return wrapped(_carrying(args[0]), *args[1:], **kwargs)


def _start(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    # Only threads started with something to carry are touched; the instance's own ``run`` is
    # wrapped so Thread subclasses that override ``run`` are covered too.
    if binding.current_episode() is not None or otel_context.get_current():
        instance.run = _carrying(instance.run)
    return wrapped(*args, **kwargs)


def install() -> None:
    """Propagate from now on. Idempotent."""
    if _patched:
        return
    for cls, name, wrapper in ((ThreadPoolExecutor, "submit", _submit), (threading.Thread, "start", _start)):
        wrapt.wrap_function_wrapper(cls, name, wrapper)
        _patched.append((cls, name))


def uninstall() -> None:
    while _patched:
        cls, name = _patched.pop()
        original = getattr(vars(cls).get(name), "__wrapped__", None)
        if original is not None:
            setattr(cls, name, original)
