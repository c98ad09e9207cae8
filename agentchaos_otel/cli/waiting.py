"""How a long-running command (a receiver, the simulated server) waits: until a time limit, Ctrl-C or SIGTERM.

``kill PID`` (SIGTERM, what service managers and ``docker stop`` send) must stop a receiver as
cleanly as Ctrl-C: the receiver then drains its queue and loads its journal into the store before
the process exits, instead of dying with accepted spans only in the spool. The clock and the
wait are injectable, so the time limit is tested without sleeping.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

TICK_SECONDS = 0.2  # how often the wait wakes: Ctrl-C is noticed between waits on every platform

INTERRUPTED = "interrupted"
TERMINATED = "terminated"
TIME_LIMIT = "time limit reached"


@contextmanager
def sigterm_sets(stop: threading.Event) -> Iterator[None]:
    """While inside, SIGTERM sets ``stop`` (only possible from the main thread; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def wait(stop: threading.Event, seconds: float | None, *, clock: Callable[[], float] = time.monotonic,
         tick: float = TICK_SECONDS) -> str:
    """Block until ``stop`` is set, ``seconds`` have passed on ``clock`` or Ctrl-C; say which."""
    deadline = None if seconds is None else clock() + seconds
    try:
        while not stop.is_set():
            remaining = None if deadline is None else deadline - clock()
            if remaining is not None and remaining <= 0:
                return TIME_LIMIT
            stop.wait(tick if remaining is None else min(tick, remaining))
    except KeyboardInterrupt:
        return INTERRUPTED
    return TERMINATED


def wait_for_stop(seconds: float | None) -> str:
    """``wait`` with SIGTERM handled: the common case of a command that serves until told to stop."""
    stop = threading.Event()
    with sigterm_sets(stop):
        return wait(stop, seconds)
