"""The exporter's kept connection and fast row path: same rows, same guarantees, file given back."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentchaos_otel import attributes as A
from agentchaos_otel.store.database.connect import StoreError, open_store
from agentchaos_otel.store.database.writer import WriterCache, writers
from agentchaos_otel.store.durability.spool import Spool, spool_path
from agentchaos_otel.store.exporter import DuckDBSpanExporter, clean_attributes, dumps, span_to_row
from tests.agentchaos_otel.store.test_spool import episode_spans, read_only_file


def warm(exp: DuckDBSpanExporter, task: str = "w") -> int:
    """Two batches back to back, so the exporter keeps its connection; returns the spans written."""
    assert exp.export(episode_spans(f"{task}1")) == SpanExportResult.SUCCESS
    assert exp.export(episode_spans(f"{task}2")) == SpanExportResult.SUCCESS
    return 6


def count(path: Path) -> int:
    with open_store(path, timeout_s=10.0) as conn:
        return conn.execute("SELECT count(*) FROM spans").fetchone()[0]


@pytest.fixture
def held_long(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Connections stay cached until something releases them (no idle timer in the way)."""
    monkeypatch.setattr(writers, "idle_close_s", 30.0)
    monkeypatch.setattr(writers, "max_hold_s", 60.0)
    yield
    writers.close_all()


_WRITE_ONCE = textwrap.dedent("""
    import sys, duckdb
    conn = duckdb.connect(sys.argv[1])  # no retry: fails at once if another process holds the file
    conn.execute("INSERT INTO spans (trace_id, span_id, name) VALUES (?, ?, 'other')", ["1" * 32, "1" * 16])
    conn.close()
    print("wrote")
""")


def _other_process_writes(db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _WRITE_ONCE, str(db)], capture_output=True, text=True,
                          timeout=60)


def test_connection_released_after_idle_so_another_process_can_write(tmp_path: Path) -> None:
    db = tmp_path / "idle.duckdb"
    exp = DuckDBSpanExporter(db)
    spans = episode_spans("a", 3)
    n = warm(exp)
    assert exp.export(spans) == SpanExportResult.SUCCESS
    while writers.is_open(str(db)):  # the closer gives it back after the idle time, however slow the machine
        time.sleep(0.01)
    r = _other_process_writes(db)
    assert r.returncode == 0 and "wrote" in r.stdout, r.stderr
    assert exp.export(episode_spans("b")) == SpanExportResult.SUCCESS
    exp.shutdown()
    assert count(db) == n + len(spans) + 3 + 1


def test_held_connection_locks_others_out_until_flush(tmp_path: Path, held_long: None) -> None:
    db = tmp_path / "held.duckdb"
    exp = DuckDBSpanExporter(db)
    assert exp.export(episode_spans("a")) == SpanExportResult.SUCCESS
    assert exp.export(episode_spans("b")) == SpanExportResult.SUCCESS
    assert writers.is_open(str(db))  # kept between batches
    refused = _other_process_writes(db)
    assert refused.returncode != 0 and "lock" in refused.stderr.lower()
    assert exp.force_flush() is True  # flushing gives the file back at once
    assert not writers.is_open(str(db))
    r = _other_process_writes(db)
    assert r.returncode == 0, r.stderr
    exp.shutdown()
    assert count(db) == 3 + 3 + 1


def test_lone_batch_closes_the_file_at_once(tmp_path: Path, held_long: None) -> None:
    """Outside a flood nothing is held: a reader that opens right after an export gets in."""
    db = tmp_path / "lone.duckdb"
    exp = DuckDBSpanExporter(db)
    assert exp.export(episode_spans("a")) == SpanExportResult.SUCCESS
    assert not writers.is_open(str(db))
    r = _other_process_writes(db)
    assert r.returncode == 0, r.stderr


def test_the_file_is_opened_while_the_batch_converts(tmp_path: Path, held_long: None) -> None:
    """`expect` opens a file that is not open yet; the batch's acquire takes that connection, or its error."""
    cache = WriterCache(idle_close_s=0.05, max_hold_s=60.0)
    path = str(tmp_path / "ahead.duckdb")
    cache.expect(path, 60.0)
    while not cache.is_open(path):  # opened in a thread of its own
        time.sleep(0.005)
    assert Path(path).exists()  # created before any write asked for it
    conn = cache.acquire(path, 5.0)
    assert conn.execute("SELECT count(*) FROM spans").fetchone() == (0,)
    cache.release(path, conn, ok=True)
    cache.close(path)
    bad = tmp_path / "not-a-store.duckdb"
    bad.write_text("plain text, not DuckDB")
    cache.expect(str(bad), 1.0)
    with pytest.raises(StoreError, match="not a DuckDB database"):
        cache.acquire(str(bad), 1.0)
    assert not cache.is_open(str(bad))


def test_reader_in_this_process_makes_the_exporter_let_go(tmp_path: Path, held_long: None) -> None:
    db = tmp_path / "same.duckdb"
    exp = DuckDBSpanExporter(db)
    n = warm(exp)
    assert writers.is_open(str(db))
    # The reader waits at most 10 s and the idle timer is 30 s: it gets in because it asked.
    assert count(db) == n
    assert not writers.is_open(str(db))
    assert exp.export(episode_spans("b")) == SpanExportResult.SUCCESS
    exp.shutdown()
    assert count(db) == n + 3


def test_reader_gets_in_during_continuous_writing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bounded hold with a pause lets a polling reader in while batches keep coming."""
    monkeypatch.setattr(writers, "max_hold_s", 0.2)
    monkeypatch.setattr(writers, "idle_close_s", 5.0)  # only the hold limit can let the reader in
    db = tmp_path / "busy.duckdb"
    exp = DuckDBSpanExporter(db, lock_timeout_s=10.0)
    assert exp.export(episode_spans("t0", 5)) == SpanExportResult.SUCCESS
    stop = threading.Event()
    written = [1]

    def writer() -> None:  # writes until the reader has had its turn, however long that takes
        i = 1
        while not stop.is_set():
            assert exp.export(episode_spans(f"t{i}", 5)) == SpanExportResult.SUCCESS
            written[0] += 1
            i += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        reader = subprocess.run(
            [sys.executable, "-c", "import sys; from agentchaos_otel.store.database.connect import open_store\n"
             "with open_store(sys.argv[1], timeout_s=60.0) as c:\n"
             "    print(c.execute('SELECT count(*) FROM spans').fetchone()[0])", str(db)],
            capture_output=True, text=True, timeout=300)
        still_writing = t.is_alive()
    finally:
        stop.set()
        t.join(timeout=60)
    exp.shutdown()
    assert reader.returncode == 0, reader.stderr
    assert int(reader.stdout) > 0
    assert still_writing, "the writer finished before the reader tried; the test proves nothing"
    assert count(db) == written[0] * 6  # every batch stored (or spooled and loaded), none lost
    assert not spool_path(db).exists()


def test_file_made_read_only_while_held_spools(tmp_path: Path, held_long: None) -> None:
    db = tmp_path / "ro.duckdb"
    first, second, third = episode_spans("a"), episode_spans("b"), episode_spans("c")
    exp = DuckDBSpanExporter(db, lock_timeout_s=0.2)
    n = warm(exp)
    assert exp.export(first) == SpanExportResult.SUCCESS
    assert writers.is_open(str(db))
    with read_only_file(db):
        assert exp.export(second) == SpanExportResult.SUCCESS
        assert len(spool_path(db).read_text().splitlines()) == len(second)
    assert exp.export(third) == SpanExportResult.SUCCESS
    exp.shutdown()
    assert not spool_path(db).exists()
    assert count(db) == n + len(first) + len(second) + len(third)


def test_file_moved_away_while_held_gets_a_new_file(tmp_path: Path, held_long: None) -> None:
    db = tmp_path / "moved.duckdb"
    exp = DuckDBSpanExporter(db)
    n = warm(exp)
    assert writers.is_open(str(db))
    db.rename(tmp_path / "old.duckdb")  # the user moves the file away while the exporter holds it
    assert exp.export(episode_spans("c", 4)) == SpanExportResult.SUCCESS
    exp.shutdown()
    assert count(tmp_path / "old.duckdb") == n  # the moved file got its spans, not the new batch
    assert count(db) == 5


def test_partial_overlap_keeps_stored_rows(tmp_path: Path) -> None:
    db = tmp_path / "overlap.duckdb"
    a, b = episode_spans("a", 3), episode_spans("b", 3)
    exp = DuckDBSpanExporter(db)
    assert exp.export(a) == SpanExportResult.SUCCESS
    with open_store(db, timeout_s=10.0) as conn:
        before = dict(conn.execute("SELECT span_id, exported_ns FROM spans").fetchall())
    assert exp.export([*a[:2], *b]) == SpanExportResult.SUCCESS  # two stored, four new
    exp.shutdown()
    with open_store(db) as conn:
        after = dict(conn.execute("SELECT span_id, exported_ns FROM spans").fetchall())
    assert len(after) == len(a) + len(b)
    assert all(after[k] == v for k, v in before.items())  # first export time kept


def test_spooled_row_of_the_wrong_type_is_set_aside(tmp_path: Path) -> None:
    db = tmp_path / "typed.duckdb"
    spans = episode_spans("a")
    bad = {**span_to_row(spans[0]), "start_ns": "yesterday"}
    Spool(db).append([bad])
    exp = DuckDBSpanExporter(db)
    assert exp.export(spans[1:]) == SpanExportResult.SUCCESS
    exp.shutdown()
    assert count(db) == len(spans) - 1
    rejected = Path(str(db) + ".spool.rejected.jsonl").read_text().splitlines()
    assert [json.loads(line)["start_ns"] for line in rejected] == ["yesterday"]


def _spans_with(attrs: dict[str, object], resource: dict[str, object] | None = None) -> ReadableSpan:
    tp = TracerProvider(resource=Resource(resource or {A.SERVICE_NAME: "s"}))
    mem = InMemorySpanExporter()
    tp.add_span_processor(SimpleSpanProcessor(mem))
    with tp.get_tracer("t").start_as_current_span("x", attributes=attrs) as sp:
        sp.add_event("e", {"k": 1, "authorization": "Bearer sk-e", "f": float("inf")})
    tp.shutdown()
    (span,) = mem.get_finished_spans()
    return span


@pytest.mark.parametrize("attrs", [
    {"s": "x", "i": 3, "b": False, "f": 0.5, "seq": ("a", "b"), "nums": (1, 2)},
    {"nan": float("nan"), "inf": float("-inf"), "ok": 1.0},
    {"http.request.header.authorization": ("Bearer sk-1",), "API_KEY": "sk-2", "keep": "é ☃"},
    {"map": {"authorization": "Bearer sk-3", "inner": {"cookie": "c", "n": float("nan")}, "v": [1, 2]}},
    {"maps": ({"x-api-key": "sk-4", "y": 1},), "empty": ()},
])
def test_fast_rows_equal_the_general_conversion(attrs: dict[str, object]) -> None:
    span = _spans_with(attrs, {A.SERVICE_NAME: "svc", "x_api_key": "sk-r", "n": 1})
    row = span_to_row(span, 1)
    assert row["attributes"] == dumps(clean_attributes(span.attributes))
    assert row["resource"] == dumps({A.SERVICE_NAME: "svc", "n": 1})
    assert json.loads(row["events"]) == [{"name": "e", "time_ns": span.events[0].timestamp,
                                          "attributes": {"k": 1, "f": None}}]
    text = row["attributes"] + row["resource"] + row["events"]
    assert "sk-" not in text and "NaN" not in text and "Infinity" not in text
    parsed = json.loads(row["attributes"])
    if "nan" in attrs:
        assert parsed == {"nan": None, "inf": None, "ok": 1.0}
    if "seq" in attrs:
        assert parsed["seq"] == ["a", "b"] and not math.isnan(parsed["f"])


def test_resources_are_not_mixed_up() -> None:
    one = _spans_with({"a": 1}, {A.SERVICE_NAME: "one"})
    two = _spans_with({"a": 1}, {A.SERVICE_NAME: "two"})
    for _ in range(2):  # second round from the cache
        assert (span_to_row(one)["service_name"], span_to_row(two)["service_name"]) == ("one", "two")
        assert json.loads(span_to_row(two)["resource"]) == {A.SERVICE_NAME: "two"}


def test_fork_child_does_not_close_the_parents_connection(tmp_path: Path, held_long: None) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("no fork here")
    db = tmp_path / "fork.duckdb"
    exp = DuckDBSpanExporter(db)
    n = warm(exp)
    assert writers.is_open(str(db))
    pid = os.fork()
    if pid == 0:  # child: forget the parent's connection, exit without touching the file
        os._exit(0 if not writers.is_open(str(db)) else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert writers.is_open(str(db))
    assert exp.export(episode_spans("b")) == SpanExportResult.SUCCESS
    exp.shutdown()
    assert count(db) == n + 3


class Clock:
    """The cache's clock, moved by the test: flood and idle decisions without wall-clock timing."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_slow_batches_in_a_flood_keep_the_connection(tmp_path: Path) -> None:
    """The flood test looks at the idle gap before a batch, not at how long the batch took."""
    clock = Clock()
    cache = WriterCache(idle_close_s=0.05, max_hold_s=60.0, clock=clock)
    path = str(tmp_path / "slow.duckdb")
    conn = cache.acquire(path, 5.0)
    cache.release(path, conn, ok=True)
    assert not cache.is_open(path)  # a lone batch
    clock.now += 0.01
    conn = cache.acquire(path, 5.0)  # right after: a flood
    clock.now += 0.2  # a batch slower than the idle time
    cache.release(path, conn, ok=True)
    assert cache.is_open(path)
    clock.now += 0.01
    assert cache.acquire(path, 5.0) is conn  # reused
    cache.release(path, conn, ok=False)  # a failed write never keeps its connection
    assert not cache.is_open(path)
    clock.now += 0.01
    conn = cache.acquire(path, 5.0)
    cache.release(path, conn, ok=True)
    assert cache.is_open(path)
    clock.now += 0.04
    cache.close_idle_now()
    assert cache.is_open(path)  # not idle long enough yet
    clock.now += 0.02
    cache.close_idle_now()
    assert not cache.is_open(path)


def test_announced_batch_keeps_the_connection_while_it_converts(tmp_path: Path) -> None:
    """The idle gap ends when a batch arrives (`expect`), not when its converted rows are ready."""
    from agentchaos_otel.store.database import writer as writer_mod

    clock = Clock()
    cache = WriterCache(idle_close_s=0.05, max_hold_s=60.0, clock=clock)
    path = str(tmp_path / "announced.duckdb")
    for _ in range(2):  # a lone batch, then one right after it: a flood, so the connection is kept
        conn = cache.acquire(path, 5.0)
        cache.release(path, conn, ok=True)
        clock.now += 0.01
    assert cache.is_open(path)
    cache.expect(path)
    clock.now += 0.15  # converting takes three idle times
    cache.close_idle_now()
    assert cache.is_open(path)
    assert cache.acquire(path, 5.0) is conn
    cache.release(path, conn, ok=True)
    assert cache.is_open(path)  # it came right after its arrival: still a flood
    cache.expect(path)  # a batch announced that never comes gives the file back after the grace
    clock.now += writer_mod.EXPECT_GRACE_S - 0.01
    cache.close_idle_now()
    assert cache.is_open(path)
    clock.now += 0.02
    cache.close_idle_now()
    assert not cache.is_open(path)


def test_writes_without_pyarrow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Arrow path is a speed-up only: without pyarrow the general insert stores the same rows."""
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # `import pyarrow` now raises ImportError
    db = tmp_path / "noarrow.duckdb"
    exp = DuckDBSpanExporter(db)
    spans = episode_spans("a", 3)
    assert exp.export(spans) == SpanExportResult.SUCCESS
    assert exp.export(spans[:2]) == SpanExportResult.SUCCESS  # re-export: still no duplicates
    exp.shutdown()
    assert count(db) == len(spans)
    assert not spool_path(db).exists()


def test_exit_waits_for_the_background_threads_and_closes_in_the_main_thread(tmp_path: Path) -> None:
    """At interpreter exit no DuckDB work may be left in a daemon thread (it would abort the process
    in the middle of C++ code): the closer and openers end, and the held connections close here."""
    clock = Clock()
    cache = WriterCache(idle_close_s=0.05, max_hold_s=60.0, clock=clock)
    path = str(tmp_path / "exit.duckdb")
    for _ in range(2):  # a flood: the connection is kept and the closer thread waits to close it
        conn = cache.acquire(path, 5.0)
        cache.release(path, conn, ok=True)
        clock.now += 0.01
    closer = cache._closer  # noqa: SLF001 - the thread under test
    assert cache.is_open(path) and closer is not None and closer.is_alive()
    other = str(tmp_path / "ahead.duckdb")
    cache.expect(other, 60.0)  # an opener thread at work
    cache.shutdown_at_exit()
    assert not closer.is_alive()
    assert not [t for t in threading.enumerate() if t.name == "agentchaos-store-opener" and t.is_alive()]
    assert not cache.is_open(path) and not cache.is_open(other)
    cache.expect(str(tmp_path / "late.duckdb"), 60.0)  # nothing new starts once exiting
    assert not cache.is_open(str(tmp_path / "late.duckdb"))
