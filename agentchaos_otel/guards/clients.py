"""Putting the response guard under clients: one SDK or httpx client, or every client of the process.

The guard must be the outermost transport so it sees what the fault injector did.
``guard_client`` wraps the transport one client has at that moment, so instrument that client
first; ``install`` puts the guard on the shared client hook, outside the injector whatever the
order of installation.
"""

from __future__ import annotations

from typing import Any

from agentchaos_otel.guards.policy import GuardPolicy
from agentchaos_otel.guards.transport import AsyncGuardTransport, GuardTransport
from agentchaos_otel.inject import hook

_TYPES = (GuardTransport, AsyncGuardTransport)


def _http_client(client: Any) -> Any:
    """The httpx/httpx2 client of an SDK client (``openai.OpenAI``, ``anthropic.Anthropic``) or itself."""
    inner = getattr(client, "_client", None)
    return inner if inner is not None and hasattr(inner, "_transport") else client


def _wrap(transport: Any, is_async: bool, policy: GuardPolicy) -> Any:
    if transport is None or isinstance(transport, _TYPES):
        return transport
    return AsyncGuardTransport(transport, policy=policy) if is_async else GuardTransport(transport, policy=policy)


def guard_client(client: Any, policy: GuardPolicy | str | None = None) -> Any:
    """Guard one client in place (an SDK client or an httpx/httpx2 client); returns it.

    ``policy`` is a ``GuardPolicy`` or an action name (``raise``, ``retry``, ``annotate``).
    """
    pol = GuardPolicy.of(policy)
    http = _http_client(client)
    is_async = hook.is_async_client(http)
    http._transport = _wrap(http._transport, is_async, pol)
    http._mounts = {pattern: _wrap(t, is_async, pol) for pattern, t in http._mounts.items()}
    return client


def unguard_client(client: Any) -> Any:
    http = _http_client(client)

    def unwrap(t: Any) -> Any:
        return t.wrapped if isinstance(t, _TYPES) else t

    http._transport = unwrap(http._transport)
    http._mounts = {pattern: unwrap(t) for pattern, t in http._mounts.items()}
    return client


def install(policy: GuardPolicy | str | None = None) -> None:
    """Guard every httpx/httpx2 client of the process (those already built too). Idempotent.

    The guard is a layer of the shared client hook (``inject.hook``), always outside the
    injector's, whichever was installed first.
    """
    if hook.active(hook.GUARD):
        return
    pol = GuardPolicy.of(policy)
    hook.add(hook.Layer(hook.GUARD, 10, lambda t, is_async: _wrap(t, is_async, pol), _TYPES))


def uninstall() -> None:
    """Undo ``install``; the injector's layer, if any, stays."""
    hook.remove(hook.GUARD)


def installed() -> bool:
    return hook.active(hook.GUARD)
