"""Handing the interpreter lock to a waiting thread between long C calls of a span write.

``db.short_switches`` makes a thread that waits for the GIL get it within 0.1 ms while Python
code runs. Building Arrow arrays from Python lists defeats that: back-to-back ``pyarrow`` (or
``numpy``) conversions kept an agent thread waiting for milliseconds, most likely because they
release and retake the lock inside the call, which resets the waiting thread's switch request
(measured: a thread that sleeps 200 µs and then wants the lock waited a median 4 ms beside a loop
of 2048-string ``pa.array`` calls, 0.27 ms with a yield after each). ``hand_off()`` after each
column is a real blocking call, which the waiting thread always wins.

A blocking ``time.sleep(0)`` lasts at least the thread's timer slack, 50 µs by default on Linux;
``fine_sleeps()`` lowers it to 1 ns for the calling thread while a batch is built (and restores
it), so a yield costs about 15 µs. Elsewhere the yield costs what the platform's sleep costs.
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


def hand_off() -> None:
    """Let a thread waiting for the interpreter lock take it now."""
    time.sleep(0)


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
