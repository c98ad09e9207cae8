"""Handing the interpreter lock to a waiting thread between long C calls of a span write.

``db.short_switches`` makes a thread that waits for the GIL get it within 0.1 ms while Python
code runs. Long C calls defeat that: the interpreter can only ask a thread for the lock between
bytecodes, and building Arrow arrays from Python lists both holds it for the whole call and,
most likely, releases and retakes it inside (``pyarrow`` allocations), which resets a waiting
thread's claim. Measured: a thread that sleeps 200 µs and then wants the lock waited a median
4 ms beside a loop of 2048-string ``pa.array`` calls.

``hand_off()`` is a real blocking pause of ``PAUSE_S``. A pause of zero (``time.sleep(0)``)
releases the lock, but the caller takes it back before a waiting thread has woken up, so the
waiter often lost; 20 µs is enough for it to wake and take the lock (measured: the agent's p99
while exporting fell from about 1.7x to about 1.4x its quiet p99). ``Slices`` pays that pause
only once the caller has run ``SLICE_S`` of C calls since its last one, so a thread nobody waits
for loses a few percent at most.

A blocking sleep lasts at least the thread's timer slack, 50 µs by default on Linux;
``fine_sleeps()`` lowers it to 1 ns for the calling thread while a batch is built (and restores
it). Elsewhere a pause costs what the platform's sleep costs.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_PR_SET_TIMERSLACK = 29
_PR_GET_TIMERSLACK = 30
_prctl: Any = None
if sys.platform.startswith("linux"):
    try:
        _prctl = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True).prctl
        _prctl.restype = ctypes.c_long
        _prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    except (OSError, AttributeError):  # no usable libc: yields simply cost more
        _prctl = None


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


@contextmanager
def fine_sleeps() -> Iterator[None]:
    """Within the block, ``hand_off()`` in this thread returns after microseconds, not the timer slack."""
    old = _prctl(_PR_GET_TIMERSLACK, 0, 0, 0, 0) if _prctl is not None else -1
    if old <= 1:  # unknown, failed, or already fine: nothing to change or restore
        yield
        return
    _prctl(_PR_SET_TIMERSLACK, 1, 0, 0, 0)
    try:
        yield
    finally:
        _prctl(_PR_SET_TIMERSLACK, old, 0, 0, 0)
