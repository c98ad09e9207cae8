"""Guards: protection an agent switches on, measured by the same campaigns that break it.

* The response guard (``guard_client``, ``install``, ``GuardTransport``) checks every LLM
  response against its request, whatever the HTTP status said, and raises a typed
  ``GuardError``, retries with backoff, or only annotates, by ``GuardPolicy``.
* The idempotency guard (``IdempotencyGuard``) keeps an agent from applying a non-idempotent
  tool call twice when it repeats the call after an error-looking result.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AsyncGuardTransport": "agentchaos_otel.guards.transport",
    "ContentFiltered": "agentchaos_otel.guards.errors",
    "EmptyAnswer": "agentchaos_otel.guards.errors",
    "Finding": "agentchaos_otel.guards.checks",
    "FormatMismatch": "agentchaos_otel.guards.errors",
    "GuardError": "agentchaos_otel.guards.errors",
    "GuardPolicy": "agentchaos_otel.guards.policy",
    "GuardTransport": "agentchaos_otel.guards.transport",
    "IdempotencyGuard": "agentchaos_otel.guards.idempotency",
    "InvalidArguments": "agentchaos_otel.guards.errors",
    "LengthStop": "agentchaos_otel.guards.errors",
    "SchemaMismatch": "agentchaos_otel.guards.errors",
    "check_response": "agentchaos_otel.guards.checks",
    "guard_client": "agentchaos_otel.guards.clients",
    "idempotent": "agentchaos_otel.guards.idempotency",
    "install": "agentchaos_otel.guards.clients",
    "installed": "agentchaos_otel.guards.clients",
    "not_idempotent": "agentchaos_otel.guards.idempotency",
    "unguard_client": "agentchaos_otel.guards.clients",
    "uninstall": "agentchaos_otel.guards.clients",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentchaos_otel.guards' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
