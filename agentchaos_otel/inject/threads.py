"""Carry the OTel context, and with it the episode, into worker threads: opt-in.

A new thread starts with an empty ``contextvars`` context, so an LLM call an agent makes from a
``ThreadPoolExecutor`` worker or a ``threading.Thread`` would run with no plan, task id, step
numbering or parent span. The episode lives in the OTel context (``plans.binding``), so OTel's
own threading instrumentation (``opentelemetry-instrumentation-threading``, loaded by
``opentelemetry-instrument`` when installed) carries it as it carries the parent span. This
module does the same for processes without it, and only when asked: ``configure(threads=True)``
(its default, the documented behaviour of ``configure``) or
``AgentChaosInstrumentor().instrument(threads=True)``; zero-code leaves it to OTel's
instrumentation. Patching ``threading`` is a process-wide change the user must choose.

Work is wrapped where it is handed over: ``ThreadPoolExecutor.submit`` captures the submitter's
context for each task, and ``Thread.start`` captures the starter's for the thread's ``run``.
Each executor task runs with exactly what its submitter had, including "no episode": a pooled
worker thread outlives the episode that created it, and its later tasks must not inherit it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import wrapt
from opentelemetry import context as otel_context
from opentelemetry.instrumentation.utils import unwrap

_patched: list[tuple[type, str]] = []


def _carrying(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` run under the OTel context of the caller of this function (episode included)."""
    ctx = otel_context.get_current()

    def run(*args: Any, **kwargs: Any) -> Any:
        token = otel_context.attach(ctx)
        try:
            return fn(*args, **kwargs)
        finally:
            otel_context.detach(token)

    return run


def _submit(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if not args:
        return wrapped(*args, **kwargs)
    return wrapped(_carrying(args[0]), *args[1:], **kwargs)


def _start(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    # Only threads started with something to carry are touched; the instance's own ``run`` is
    # wrapped so Thread subclasses that override ``run`` are covered too.
    if otel_context.get_current():
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
        unwrap(cls, name)


def installed() -> bool:
    return bool(_patched)
