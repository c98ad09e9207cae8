"""Putting the injecting transport under clients: one client, or every client of the process.

Process-wide installation wraps ``Client.__init__`` of httpx and httpx2 so each client built
afterwards gets its transport and mounts wrapped; the official SDKs build their clients this way,
so they are covered without code changes. Clients built before installation can be covered with
``instrument_client``. Installing also carries episodes into worker threads (``threads``), since
calls made from an executor inside an episode belong to it.
"""

from __future__ import annotations

import importlib
from typing import Any

import wrapt
from opentelemetry import trace

from agentchaos_otel.inject import threads
from agentchaos_otel.inject.transport import AsyncChaosTransport, ChaosTransport

HTTP_MODULES = ("httpx", "httpx2")
_installed: list[tuple[Any, str]] = []


def _wrap_transport(transport: Any, is_async: bool, tracer_provider: trace.TracerProvider | None) -> Any:
    if transport is None or isinstance(transport, ChaosTransport | AsyncChaosTransport):
        return transport
    if is_async:
        return AsyncChaosTransport(transport, tracer_provider=tracer_provider)
    return ChaosTransport(transport, tracer_provider=tracer_provider)


def _is_async_client(client: Any) -> bool:
    return hasattr(client, "aclose") and not hasattr(client, "close")


def instrument_client(client: Any, *, tracer_provider: trace.TracerProvider | None = None) -> Any:
    """Wrap the transport and every mount of one httpx/httpx2 client, in place; returns the client."""
    is_async = _is_async_client(client)
    client._transport = _wrap_transport(client._transport, is_async, tracer_provider)
    client._mounts = {pattern: _wrap_transport(t, is_async, tracer_provider)
                      for pattern, t in client._mounts.items()}
    return client


def uninstrument_client(client: Any) -> Any:
    def unwrap(t: Any) -> Any:
        return t.wrapped if isinstance(t, ChaosTransport | AsyncChaosTransport) else t

    client._transport = unwrap(client._transport)
    client._mounts = {pattern: unwrap(t) for pattern, t in client._mounts.items()}
    return client


def install(tracer_provider: trace.TracerProvider | None = None) -> None:
    """Cover every httpx/httpx2 client created from now on. Idempotent."""
    threads.install()
    if _installed:
        return

    def after_init(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
        wrapped(*args, **kwargs)
        try:
            instrument_client(instance, tracer_provider=tracer_provider)
        except Exception:  # fail open: an unknown client shape must still work
            pass

    for name in HTTP_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for cls_name in ("Client", "AsyncClient"):
            cls = getattr(module, cls_name)
            wrapt.wrap_function_wrapper(cls, "__init__", after_init)
            _installed.append((cls, "__init__"))


def uninstall() -> None:
    threads.uninstall()
    while _installed:
        cls, attr = _installed.pop()
        current = vars(cls).get(attr)
        original = getattr(current, "__wrapped__", None)
        if original is not None:
            setattr(cls, attr, original)


def installed() -> bool:
    return bool(_installed)
