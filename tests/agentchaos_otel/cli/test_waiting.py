"""The wait of long-running commands, on an injected clock: no sleeping, no wall-clock limits."""

from __future__ import annotations

import os
import signal
import threading

from agentchaos_otel.cli.waiting import INTERRUPTED, TERMINATED, TIME_LIMIT, sigterm_sets, wait


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Ticking(threading.Event):
    """An event whose wait advances the clock instead of sleeping."""

    def __init__(self, clock: Clock, after: float | None = None) -> None:
        super().__init__()
        self.clock, self.after, self.waits = clock, after, 0

    def wait(self, timeout: float | None = None) -> bool:
        self.waits += 1
        self.clock.now += timeout or 0.0
        if self.after is not None and self.clock.now >= self.after:
            self.set()
        return self.is_set()


def test_the_time_limit_ends_the_wait_on_the_injected_clock() -> None:
    clock = Clock()
    stop = Ticking(clock)
    assert wait(stop, 1.0, clock=clock, tick=0.25) == TIME_LIMIT
    assert clock.now == 1.0 and stop.waits == 4


def test_a_stop_before_the_limit_is_a_termination() -> None:
    clock = Clock()
    assert wait(Ticking(clock, after=0.5), 10.0, clock=clock, tick=0.25) == TERMINATED
    assert clock.now == 0.5


def test_ctrl_c_is_an_interruption() -> None:
    class Interrupting(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            raise KeyboardInterrupt

    assert wait(Interrupting(), None) == INTERRUPTED


def test_sigterm_sets_the_event_and_the_previous_handler_comes_back() -> None:
    stop = threading.Event()
    before = signal.getsignal(signal.SIGTERM)
    with sigterm_sets(stop):
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.wait(5)
    assert signal.getsignal(signal.SIGTERM) == before
