"""Putting the response guard under clients: one SDK or httpx client, or every client of the process.

The guard must be the outermost transport so it sees what the fault injector did; both entry
points wrap the transport the client has at that moment, so install the injector first
(``agentchaos_otel.configure`` or ``inject.install.install``) and the guard second.
"""

from __future__ import annotations

import importlib
from typing import Any

import wrapt

from agentchaos_otel.guards.policy import GuardPolicy
from agentchaos_otel.guards.transport import AsyncGuardTransport, GuardTransport

HTTP_MODULES = ("httpx", "httpx2")
_installed: list[tuple[Any, str]] = []


def _http_client(client: Any) -> Any:
    """The httpx/httpx2 client of an SDK client (``openai.OpenAI``, ``anthropic.Anthropic``) or itself."""
    inner = getattr(client, "_client", None)
    return inner if inner is not None and hasattr(inner, "_transport") else client


def _wrap(transport: Any, is_async: bool, policy: GuardPolicy) -> Any:
    if transport is None or isinstance(transport, GuardTransport | AsyncGuardTransport):
        return transport
    return AsyncGuardTransport(transport, policy=policy) if is_async else GuardTransport(transport, policy=policy)


def guard_client(client: Any, policy: GuardPolicy | str | None = None) -> Any:
    """Guard one client in place (an SDK client or an httpx/httpx2 client); returns it.

    ``policy`` is a ``GuardPolicy`` or an action name (``raise``, ``retry``, ``annotate``).
    """
    pol = GuardPolicy.of(policy)
    http = _http_client(client)
    is_async = hasattr(http, "aclose") and not hasattr(http, "close")
    http._transport = _wrap(http._transport, is_async, pol)
    http._mounts = {pattern: _wrap(t, is_async, pol) for pattern, t in http._mounts.items()}
    return client


def unguard_client(client: Any) -> Any:
    http = _http_client(client)

    def unwrap(t: Any) -> Any:
        return t.wrapped if isinstance(t, GuardTransport | AsyncGuardTransport) else t

    http._transport = unwrap(http._transport)
    http._mounts = {pattern: unwrap(t) for pattern, t in http._mounts.items()}
    return client


def install(policy: GuardPolicy | str | None = None) -> None:
    """Guard every httpx/httpx2 client built from now on (the SDKs build theirs this way). Idempotent."""
    if _installed:
        return
    pol = GuardPolicy.of(policy)

    def after_init(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
        wrapped(*args, **kwargs)
        try:
            guard_client(instance, pol)
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
    """Undo ``install``; call it before uninstalling the injector (wrappers unwind outermost first)."""
    while _installed:
        cls, attr = _installed.pop()
        current = vars(cls).get(attr)
        original = getattr(current, "__wrapped__", None)
        if original is not None:
            setattr(cls, attr, original)


def installed() -> bool:
    return bool(_installed)
