"""What the response guard does with a finding: raise, retry with backoff, or only annotate.

Backoff is exponential with jitter, and the jitter is drawn from a generator seeded by the
policy's seed, the request body and the attempt number, so a re-run waits exactly as long as
the first run did and concurrent calls never share a random stream.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

from agentchaos_otel.guards.checks import CHECK_KINDS

RAISE, RETRY, ANNOTATE = "raise", "retry", "annotate"
ACTIONS = (RAISE, RETRY, ANNOTATE)


@dataclass(frozen=True)
class GuardPolicy:
    """How a response guard acts.

    ``action``: ``raise`` a typed ``GuardError``; ``retry`` the identical request up to
    ``max_retries`` times, waiting ``backoff * multiplier**k`` seconds (capped at
    ``max_backoff``, times 1 +/- ``jitter``) before retry k+1, then do ``then`` (``raise`` or
    ``annotate``) if every answer still fails; ``annotate`` only records the finding on the span.
    ``checks`` limits which kinds of finding count (default: all of ``CHECK_KINDS``).
    """

    action: str = RAISE
    max_retries: int = 2
    backoff: float = 0.5
    multiplier: float = 2.0
    max_backoff: float = 8.0
    jitter: float = 0.25
    seed: int = 0
    then: str = RAISE
    checks: tuple[str, ...] = field(default=CHECK_KINDS)

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"guard action must be one of {', '.join(ACTIONS)}, got {self.action!r}")
        if self.then not in (RAISE, ANNOTATE):
            raise ValueError(f"'then' must be raise or annotate, got {self.then!r}")
        if self.max_retries < 0 or self.backoff < 0 or self.max_backoff < 0 or not 0 <= self.jitter <= 1:
            raise ValueError("max_retries, backoff and max_backoff must be >= 0 and jitter within [0, 1]")
        unknown = set(self.checks) - set(CHECK_KINDS)
        if unknown:
            raise ValueError(f"unknown check(s) {', '.join(sorted(unknown))}; known: {', '.join(CHECK_KINDS)}")

    @classmethod
    def of(cls, value: GuardPolicy | str | None) -> GuardPolicy:
        """A policy from a policy, an action name, or None (raise)."""
        if isinstance(value, GuardPolicy):
            return value
        return cls(action=value or RAISE)

    def delay(self, retry: int, key: bytes = b"") -> float:
        """Seconds to wait before retry number ``retry`` (1-based) of the request ``key``."""
        base = min(self.max_backoff, self.backoff * self.multiplier ** max(0, retry - 1))
        digest = hashlib.sha256(repr((self.seed, retry)).encode() + key).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        return round(max(0.0, base * (1.0 + self.jitter * (2.0 * rng.random() - 1.0))), 6)
