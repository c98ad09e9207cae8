"""Handing the interpreter lock over between long C calls, and no setting of the user's interpreter changed.

The exporter runs in the agent's process: it may pause to let a waiting thread run, but it must
not change the interpreter's switch interval or a thread's timer slack. Nothing here asserts a
wall-clock limit: the hand-off test counts iterations, however slow the machine.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from agentchaos_otel.gil_handoff import hand_off
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.store.parquet import ParquetSpanSink
from tests.support import ecosystem as B

_watching = False
_foreign_calls: list[str] = []


def _audit(event: str, args: Any) -> None:  # ctypes calls into libc (prctl) raise this audit event
    if _watching and event == "ctypes.call_function":
        _foreign_calls.append(event)


sys.addaudithook(_audit)


@pytest.mark.parametrize("sink", ["duckdb", "parquet"])
def test_exporting_changes_no_interpreter_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  sink: str) -> None:
    global _watching
    switches: list[float] = []
    monkeypatch.setattr(sys, "setswitchinterval", switches.append)
    spans = [s for i in range(60) for s in B.sdk_spans(f"g-{i}")]  # a batch big enough for every slice
    exporter = DuckDBSpanExporter(str(tmp_path / "t.duckdb")) if sink == "duckdb" else ParquetSpanSink(tmp_path / "d")
    _foreign_calls.clear()
    _watching = True
    try:
        assert exporter.export(spans).name == "SUCCESS"
    finally:
        _watching = False
    exporter.shutdown()
    assert switches == [], "the exporter changed the interpreter's switch interval"
    assert _foreign_calls == [], "the exporter called into libc (the thread's timer slack)"


def test_a_waiting_thread_runs_at_each_hand_off() -> None:
    """A thread that wants the lock runs between two hand_off() calls of a thread that never lets go otherwise."""
    ran = threading.Event()
    started = threading.Event()

    def waiter() -> None:
        started.set()
        threading.Event().wait(0.001)  # then it wants the lock back
        ran.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1.0)  # the test's own process: without a hand-off the waiter would wait a second
    try:
        t = threading.Thread(target=waiter)
        t.start()
        started.wait()
        turns = 0
        while not ran.is_set() and turns < 100_000:  # a count, not a clock: a loaded machine only takes longer
            sum(range(20_000))  # holds the lock for a while, as a conversion does
            hand_off()
            turns += 1
        assert ran.is_set()
        t.join()
    finally:
        sys.setswitchinterval(old)
