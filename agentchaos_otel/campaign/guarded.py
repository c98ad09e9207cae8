"""Guarded conditions: each fault condition run again with the guards on, on the same tasks and seeds.

``--guard response,idempotency`` adds, for every condition ``c``, the condition ``c+guarded``:
the same fault plan, the same seeds (so the injector faults the same calls as long as the agent
makes the same calls), with the guards switched on. The report then pairs ``c+guarded`` with
``c`` on (agent, task, seed), which is what a guard is worth under that condition.

What the campaign switches on (stated in ``campaign_runs.args`` and the README):

* ``response``: the response guard on a second client, outside the injector, with
  ``CAMPAIGN_POLICY`` (retry twice with a short seeded backoff, then pass the answer on
  annotated, so a guard never ends an episode the agent could have finished);
* ``idempotency``: an ``IdempotencyGuard`` per episode around the agent's tools, with the
  tool-result injector between its two layers. BFCL tools are declared idempotent when they
  only read (``BFCL_READ_ONLY``); every other tool counts as state-changing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from agentchaos_otel.guards.policy import GuardPolicy

GUARD_NAMES = ("response", "idempotency")
GUARDED_SUFFIX = "+guarded"
# Short waits keep simulated campaigns quick; the measured latency cost includes them.
CAMPAIGN_POLICY = GuardPolicy(action="retry", max_retries=2, backoff=0.05, max_backoff=0.5, then="annotate")
# BFCL functions that only read state (a repeat changes nothing), by name prefix or name.
BFCL_READ_ONLY = ("get_", "list_", "display_", "check_", "search_", "find", "view_", "retrieve_", "ls", "pwd",
                  "cat", "grep", "wc", "sort", "diff", "tail", "du", "mean", "max_value", "min_value",
                  "standard_deviation", "logarithm", "compute_", "estimate_", "verify_", "message_get",
                  "show_", "fill_", "gallon", "liter")


def parse_guards(text: str | None) -> tuple[str, ...]:
    """``response,idempotency`` -> the guards, in a fixed order; empty text -> no guards."""
    if not text:
        return ()
    given = [g.strip() for g in text.split(",") if g.strip()]
    unknown = sorted(set(given) - set(GUARD_NAMES))
    if unknown:
        raise ValueError(f"unknown guard(s) {', '.join(unknown)}; expected some of {', '.join(GUARD_NAMES)}")
    return tuple(g for g in GUARD_NAMES if g in given)


def guarded(condition: str) -> str:
    return condition + GUARDED_SUFFIX


def split_label(label: str) -> tuple[str, bool]:
    """(base condition, guarded?) of a stored condition label."""
    if label.endswith(GUARDED_SUFFIX):
        return label[: -len(GUARDED_SUFFIX)], True
    return label, False


def expand_conditions(conditions: Sequence[str], guards: Sequence[str]) -> list[str]:
    """Every condition, then its guarded twin (interleaved so pairs finish together)."""
    if not guards:
        return list(conditions)
    out: list[str] = []
    for c in conditions:
        out.extend([c, guarded(c)])
    return out


def bfcl_is_idempotent(name: str, arguments: Any = None) -> bool:
    return name.startswith(BFCL_READ_ONLY)


def idempotency_factory(tracer_provider: Any = None) -> Callable[[], Any]:
    from agentchaos_otel.guards.idempotency import IdempotencyGuard

    return lambda: IdempotencyGuard(bfcl_is_idempotent, tracer_provider=tracer_provider)


def guarded_client(client: Any, policy: GuardPolicy = CAMPAIGN_POLICY) -> Any:
    """A second ``openai.OpenAI`` like ``client`` with the response guard outermost.

    Built after tracing is configured, so the injector is already under its transport and the
    guard wraps it: the guard sees injected faults, as it would see real ones.
    """
    import openai

    from agentchaos_otel.guards.clients import guard_client

    twin = openai.OpenAI(base_url=str(client.base_url), api_key=client.api_key, max_retries=client.max_retries,
                         timeout=client.timeout)
    return guard_client(twin, policy)


class GuardedClients:
    """The plain client and, made once on first use, its guarded twin."""

    def __init__(self, client: Any, guards: Sequence[str]) -> None:
        self.client = client
        self.guards = tuple(guards)
        self._guarded: Any = None
        self._lock = threading.Lock()

    def for_label(self, label: str) -> tuple[Any, bool]:
        _, is_guarded = split_label(label)
        if not is_guarded or "response" not in self.guards:
            return self.client, is_guarded
        with self._lock:
            if self._guarded is None:
                self._guarded = guarded_client(self.client)
        return self._guarded, True
