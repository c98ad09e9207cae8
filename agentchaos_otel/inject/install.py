"""Putting the injecting transport under clients: one client, or every client of the process.

Process-wide installation is the injector's layer on the shared client hook (``inject.hook``):
every httpx/httpx2 client, whether built before or after installation, has its LLM calls traced
and faulted; the official SDKs build their clients this way, so they are covered without code
changes. ``instrument_client`` wraps one client explicitly (no process-wide hook needed).

Carrying episodes into worker threads is separate (``threads``): ``configure()`` turns it on,
the instrumentor only when asked, and under zero-code OTel's threading instrumentation does it,
since the episode travels in the OTel context.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import trace

from agentchaos_otel.inject import hook
from agentchaos_otel.inject.transport import AsyncChaosTransport, ChaosTransport

HTTP_MODULES = hook.HTTP_MODULES
_TYPES = (ChaosTransport, AsyncChaosTransport)


def _wrap_transport(transport: Any, is_async: bool, tracer_provider: trace.TracerProvider | None) -> Any:
    if transport is None or isinstance(transport, _TYPES):
        return transport
    if is_async:
        return AsyncChaosTransport(transport, tracer_provider=tracer_provider)
    return ChaosTransport(transport, tracer_provider=tracer_provider)


def instrument_client(client: Any, *, tracer_provider: trace.TracerProvider | None = None) -> Any:
    """Wrap the transport and every mount of one httpx/httpx2 client, in place; returns the client."""
    is_async = hook.is_async_client(client)
    client._transport = _wrap_transport(client._transport, is_async, tracer_provider)
    client._mounts = {pattern: _wrap_transport(t, is_async, tracer_provider)
                      for pattern, t in client._mounts.items()}
    return client


def uninstrument_client(client: Any) -> Any:
    def unwrap(t: Any) -> Any:
        return t.wrapped if isinstance(t, _TYPES) else t

    client._transport = unwrap(client._transport)
    client._mounts = {pattern: unwrap(t) for pattern, t in client._mounts.items()}
    return client


def install(tracer_provider: trace.TracerProvider | None = None) -> None:
    """Cover every httpx/httpx2 client of the process, those already built included. Idempotent."""
    if hook.active(hook.INJECTOR):
        return
    hook.add(hook.Layer(hook.INJECTOR, 0, lambda t, is_async: _wrap_transport(t, is_async, tracer_provider),
                        _TYPES))


def uninstall() -> None:
    hook.remove(hook.INJECTOR)


def installed() -> bool:
    return hook.active(hook.INJECTOR)
