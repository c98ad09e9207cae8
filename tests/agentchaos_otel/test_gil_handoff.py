"""Handing the interpreter lock over between long C calls: a waiting thread gets it, nothing lasts."""

from __future__ import annotations

import sys
import threading
import time

import pytest

from agentchaos_otel import gil_handoff as handoff
from agentchaos_otel.gil_handoff import fine_sleeps, hand_off


@pytest.mark.skipif(handoff._prctl is None, reason="timer slack is a Linux setting")  # noqa: SLF001
def test_fine_sleeps_lowers_this_threads_timer_slack_and_restores_it() -> None:
    get = lambda: handoff._prctl(handoff._PR_GET_TIMERSLACK, 0, 0, 0, 0)  # noqa: E731, SLF001
    before = get()
    with fine_sleeps():
        assert get() == 1
        with fine_sleeps():  # nested: the outer block restores
            assert get() == 1
        assert get() == 1
    assert get() == before
    with pytest.raises(RuntimeError), fine_sleeps():
        raise RuntimeError("restored on the way out too")
    assert get() == before
    seen: list[int] = []
    go = threading.Event()
    t = threading.Thread(target=lambda: (go.wait(), seen.append(get())))
    t.start()
    with fine_sleeps():
        go.set()
        t.join()
    assert seen == [before], "another thread's slack is left alone"


def test_a_waiting_thread_runs_at_each_hand_off() -> None:
    """A thread that wants the lock runs between two hand_off() calls of a thread that never lets go otherwise."""
    ran = threading.Event()
    started = threading.Event()

    def waiter() -> None:
        started.set()
        time.sleep(0.001)  # then it wants the lock back
        ran.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1.0)  # without a hand-off the waiter would wait a whole second
    try:
        t = threading.Thread(target=waiter)
        t.start()
        started.wait()
        deadline = time.perf_counter() + 0.5
        with fine_sleeps():
            while not ran.is_set() and time.perf_counter() < deadline:
                sum(range(20_000))  # holds the lock for a while, as a conversion does
                hand_off()
        assert ran.is_set()
        t.join()
    finally:
        sys.setswitchinterval(old)
