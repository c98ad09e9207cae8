"""Handing the interpreter lock to a waiting thread between long C calls of a span write.

The exporter converts spans in the agent's own process, beside the agent's threads, and must not
change that interpreter's settings (its switch interval, a thread's timer slack): those belong to
the user. What it can do is keep its C calls short and pause between them. The interpreter can
only ask a thread for the lock between bytecodes, and building Arrow arrays from Python lists both
holds it for the whole call and, most likely, releases and retakes it inside (``pyarrow``
allocations), which resets a waiting thread's claim: a thread that sleeps 200 µs and then wants
the lock waited a median 4 ms beside a loop of 2048-string ``pa.array`` calls.

``hand_off()`` is a real blocking pause of ``PAUSE_S``. A pause of zero (``time.sleep(0)``)
releases the lock, but the caller takes it back before a waiting thread has woken up, so the
waiter often lost; a short sleep lets it wake and take the lock. A blocking sleep lasts at least
the thread's timer slack (50 µs by default on Linux), so ``Slices`` pays that pause only once the
caller has run ``SLICE_S`` of C calls since its last one.
"""

from __future__ import annotations

import time

PAUSE_S = 20e-6
SLICE_S = 200e-6


def hand_off() -> None:
    """Let a thread waiting for the interpreter lock take it now."""
    time.sleep(PAUSE_S)


class Slices:
    """Calls ``hand_off()`` at most once per ``SLICE_S`` of the caller's work (``tick`` after each C call)."""

    __slots__ = ("_since",)

    def __init__(self) -> None:
        self._since = time.perf_counter()

    def tick(self) -> None:
        now = time.perf_counter()
        if now - self._since >= SLICE_S:
            hand_off()
            self._since = time.perf_counter()
