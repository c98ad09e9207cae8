"""While the store keeps getting locked, the exporter says so once per period, with a count.

Eight writers taking turns on one file lock each other out again and again; one error line per
lock event (143 of them in such a run) buries everything else in the log. The exporter says the
first one, then counts, and says the count once per period (on an injected clock here).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from agentchaos_otel.store.exporter import DuckDBSpanExporter
from tests.agentchaos_otel.store.test_disk_faults import locked
from tests.support import ecosystem as B

pytestmark = pytest.mark.reliability


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _spooling_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno >= logging.WARNING and "spooling spans" in r.getMessage()]


def test_lock_events_are_said_once_per_period_with_a_count(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = tmp_path / "t.duckdb"
    exporter = DuckDBSpanExporter(str(db), lock_timeout_s=0.2)
    clock = Clock()
    exporter.spool_notice.clock = clock
    caplog.set_level(logging.DEBUG, logger="agentchaos_otel")
    spans = B.sdk_spans("n")
    exporter.export(spans[:1])  # the file exists and is writable
    for i in range(4):  # locked, then free, four times within one period
        with locked(db):
            exporter.export(B.sdk_spans(f"locked-{i}"))
        exporter.export(B.sdk_spans(f"free-{i}"))
        clock.now += 5
    assert len(_spooling_lines(caplog)) == 1
    clock.now += exporter.spool_notice.period_s
    with locked(db):
        exporter.export(B.sdk_spans("after-the-period"))
    lines = _spooling_lines(caplog)
    assert len(lines) == 2
    assert "4 times" in lines[1] and f"{4 * len(spans)} spans" in lines[1]
    exporter.shutdown()
