"""When the database cannot take a batch: spool, say so once, recover on the next open."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from agentchaos_otel.store.database.connect import StoreError, connect, open_store
from agentchaos_otel.store.durability.spool import Spool, spool_line, spool_path
from agentchaos_otel.store.exporter import DuckDBSpanExporter, span_to_row
from tests.agentchaos_otel.store.test_support_builders import Step, emit_episode, finished, provider

EXPORTER_LOGGER = "agentchaos_otel.store.exporter"


def episode_spans(task: str, n_steps: int = 2) -> tuple[ReadableSpan, ...]:
    with provider(None) as (tracer, mem, _):
        emit_episode(tracer, task, [Step("llm") if i % 2 == 0 else Step("tool") for i in range(n_steps)])
        return finished(mem)


def count(path: Path) -> int:
    with open_store(path) as conn:
        return conn.execute("SELECT count(*) FROM spans").fetchone()[0]


def spool_lines(db: Path) -> int:
    p = spool_path(db)
    return len(p.read_text().splitlines()) if p.exists() else 0


def errors(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == EXPORTER_LOGGER and r.levelno >= logging.ERROR]


@contextmanager
def read_only_file(path: Path) -> Iterator[None]:
    """Make a file unwritable for this user (root ignores mode bits, so it gets the immutable flag)."""
    if os.geteuid() == 0:
        r = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
        if r.returncode != 0:
            pytest.skip("cannot make a file read-only for root on this filesystem")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
    else:
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(0o644)


def test_read_only_file_spools_then_recovers(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = tmp_path / "ro.duckdb"
    first, second, third = episode_spans("a"), episode_spans("b"), episode_spans("c", 4)
    exp = DuckDBSpanExporter(db, lock_timeout_s=0.2)
    assert exp.export(first) == SpanExportResult.SUCCESS
    with read_only_file(db), caplog.at_level(logging.DEBUG):
        assert exp.export(second) == SpanExportResult.SUCCESS
        assert exp.export(second[:1]) == SpanExportResult.SUCCESS
        assert spool_lines(db) == len(second) + 1
        errs = errors(caplog)
        assert len(errs) == 1, "a failure streak is reported once, not per batch"
        assert str(spool_path(db)) in errs[0].getMessage() and "\n" not in errs[0].getMessage()
        assert count(db) == len(first)  # readers still work on a read-only file
    assert exp.export(third) == SpanExportResult.SUCCESS
    assert not spool_path(db).exists()
    assert count(db) == len(first) + len(second) + len(third)  # the repeated span is stored once


def test_corrupt_file_spools_and_shutdown_drains(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = tmp_path / "bad.duckdb"
    db.write_bytes(bytes(range(256)) * 64)
    spans = episode_spans("a", 3)
    exp = DuckDBSpanExporter(db, lock_timeout_s=0.2)
    with caplog.at_level(logging.ERROR):
        assert exp.export(spans) == SpanExportResult.SUCCESS
    assert spool_lines(db) == len(spans)
    (err,) = errors(caplog)
    assert "not a DuckDB database" in err.getMessage()
    with pytest.raises(StoreError, match="not a DuckDB database") as info:
        connect(db)
    assert "\n" not in str(info.value)
    db.rename(tmp_path / "bad.duckdb.junk")  # the user moves the broken file away
    exp.shutdown()
    assert not spool_path(db).exists()
    assert count(db) == len(spans)


_HOLDER = """
import sys, duckdb
conn = duckdb.connect(sys.argv[1])
print("holding", flush=True)
sys.stdin.read()
conn.close()
"""


def test_lock_held_by_another_process(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = tmp_path / "locked.duckdb"
    first, second, third = episode_spans("a"), episode_spans("b"), episode_spans("c")
    exp = DuckDBSpanExporter(db, lock_timeout_s=0.3)
    assert exp.export(first) == SpanExportResult.SUCCESS
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        with caplog.at_level(logging.ERROR):
            assert exp.export(second) == SpanExportResult.SUCCESS
        (err,) = errors(caplog)
        assert "locked" in err.getMessage()
        assert spool_lines(db) == len(second)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert exp.export(third) == SpanExportResult.SUCCESS
    assert not spool_path(db).exists()
    assert count(db) == len(first) + len(second) + len(third)


def test_unwritable_spool_reports_failure(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCHAOS_MEMORY_SPOOL_MB", "0")  # no memory hold: the spans are lost, and said so
    db = tmp_path / "bad.duckdb"
    db.write_bytes(b"not a database" * 100)
    spool_path(db).mkdir()  # the spool cannot be created as a file
    exp = DuckDBSpanExporter(db, lock_timeout_s=0.1)
    with caplog.at_level(logging.ERROR):
        assert exp.export(episode_spans("a")) == SpanExportResult.FAILURE
    assert "lost" in errors(caplog)[-1].getMessage()


def test_unreadable_spool_lines_are_kept_aside(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = tmp_path / "t.duckdb"
    spans = episode_spans("a")
    good = json.dumps(span_to_row(spans[0]))
    spool_path(db).write_text(good + "\n" + '{"trace_id": "half a li' + "\n")
    with caplog.at_level(logging.ERROR):
        assert DuckDBSpanExporter(db).export(spans[1:]) == SpanExportResult.SUCCESS
    assert count(db) == len(spans)
    rejected = Path(str(db) + ".spool.rejected.jsonl")
    assert rejected.read_text().startswith('{"trace_id": "half')
    assert any("unreadable spool line" in r.getMessage() for r in caplog.records)


def test_spool_row_the_database_refuses_does_not_block_new_batches(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = tmp_path / "t.duckdb"
    spans = episode_spans("a")
    broken = {**span_to_row(spans[0]), "trace_id": None}  # violates NOT NULL
    Spool(db).append([broken])
    exp = DuckDBSpanExporter(db)
    with caplog.at_level(logging.ERROR):
        assert exp.export(spans[:2]) == SpanExportResult.SUCCESS
        assert exp.export(spans[2:]) == SpanExportResult.SUCCESS
    assert count(db) == len(spans)
    assert not spool_path(db).exists()
    rejected = Path(str(db) + ".spool.rejected.jsonl").read_text().splitlines()
    assert [json.loads(line)["span_id"] for line in rejected] == [broken["span_id"]]  # kept, not dropped
    assert len(errors(caplog)) == 1 and "refused" in errors(caplog)[0].getMessage()


def test_concurrent_appends_and_claims_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    n_writers, per_writer = 4, 60
    claimed: list[dict[str, object]] = []
    done = threading.Event()

    def writer(w: int) -> None:
        sp = Spool(db)  # each writer has its own file handle, like separate processes
        for i in range(per_writer):
            sp.append([{"w": w, "i": i}])

    def claimer() -> None:
        sp = Spool(db)
        while not done.is_set():
            with sp.claim() as rows:
                claimed.extend(rows)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(n_writers)]
    c = threading.Thread(target=claimer)
    c.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    c.join()
    with Spool(db).claim() as rest:
        claimed.extend(rest)
    got = sorted((int(r["w"]), int(r["i"])) for r in claimed)  # type: ignore[call-overload]
    assert got == [(w, i) for w in range(n_writers) for i in range(per_writer)]
    assert not spool_path(db).exists()


def _spool_rows(n: int, tag: str) -> list[dict[str, object]]:
    return [{"trace_id": f"{i:032x}", "span_id": f"{i:016x}", "name": f"{tag} {i} \ud800 é",
             "start_ns": i, "attributes": '{"k":"v"}'} for i in range(n)]


def test_claiming_what_only_this_spool_wrote_equals_reading_the_file(tmp_path: Path) -> None:
    ours = Spool(tmp_path / "t.duckdb")
    ours.append(_spool_rows(3, "a"))
    ours.append(_spool_rows(2, "b"))
    on_disk = [json.loads(line) for line in spool_path(tmp_path / "t.duckdb").read_text().splitlines()]
    with ours.claim() as rows:  # served from memory
        assert rows == on_disk and len(rows) == 5
    assert not ours.exists()
    ours.append(_spool_rows(1, "c"))
    with Spool(tmp_path / "t.duckdb").claim() as rows:  # another object decodes the file; then ours must too
        assert rows == _spool_rows(1, "c")
    ours.append(_spool_rows(4, "d"))
    with ours.claim() as rows:
        assert rows == _spool_rows(4, "d")


def test_lines_another_writer_added_are_never_missed(tmp_path: Path) -> None:
    ours, other = Spool(tmp_path / "t.duckdb"), Spool(tmp_path / "t.duckdb")
    ours.append(_spool_rows(2, "a"))
    other.append(_spool_rows(1, "x"))
    ours.append(_spool_rows(1, "b"))
    with ours.claim() as rows:
        names = [r["name"].split()[0] for r in rows]
    assert names == ["a", "a", "x", "b"]


def test_a_line_separator_inside_a_value_does_not_split_a_spooled_row(tmp_path: Path) -> None:
    row = {"trace_id": "a" * 32, "span_id": "b" * 16, "name": "x\u2028y\x85z\x1c", "start_ns": 1}
    Spool(tmp_path / "t.duckdb").append([row])
    with Spool(tmp_path / "t.duckdb").claim() as rows:  # read from the file
        assert rows == [row]


_plain = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.binary(),
                      lambda inner: (st.lists(inner, max_size=3)
                                     | st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                      max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=8), _plain, max_size=6))
def test_spool_lines_are_what_the_json_module_writes(row: dict) -> None:
    """The spool's prebuilt C encoders give json.JSONEncoder's text (non-finite floats, bytes, lone
    surrogates included), and a line that UTF-8 cannot carry falls back to the escaped form."""
    utf8 = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode(row)
    try:
        utf8.encode("utf-8")
        expected = utf8 + "\n"
    except UnicodeEncodeError:
        expected = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), default=str).encode(row) + "\n"
    assert spool_line(row) == expected


def test_appends_go_on_while_a_claim_stores_its_rows(tmp_path: Path) -> None:
    """A claim holds the spool's lock only to take its rows: an append during the block neither waits nor mixes in."""
    db = tmp_path / "t.duckdb"
    sp = Spool(db)
    sp.append(_spool_rows(3, "a"))
    appended = threading.Event()
    with sp.claim() as rows:
        assert len(rows) == 3
        t = threading.Thread(target=lambda: (Spool(db).append(_spool_rows(2, "b")), appended.set()))
        t.start()
        assert appended.wait(5), "the append waited for the claim's block"
        t.join()
        assert sp.exists()
    with sp.claim() as rows:
        assert [r["name"].split()[0] for r in rows] == ["b", "b"]
    assert not sp.exists() and not sp.loading_files()


def test_a_failed_claim_puts_its_rows_back_beside_new_ones(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    sp = Spool(db)
    sp.append(_spool_rows(3, "a"))
    with pytest.raises(RuntimeError), sp.claim() as rows:
        assert len(rows) == 3
        Spool(db).append(_spool_rows(1, "b"))
        raise RuntimeError("the database refused the batch")
    assert not sp.loading_files()
    with sp.claim() as rows:
        assert sorted(r["name"].split()[0] for r in rows) == ["a", "a", "a", "b"]


def test_rows_a_dead_process_was_loading_are_claimed_and_counted(tmp_path: Path) -> None:
    """A process killed between taking the spool and storing it leaves a loading file: nothing is lost."""
    from agentchaos_otel.store.read.spooled import waiting_in_spool

    db = tmp_path / "t.duckdb"
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(child.stdout)
    Spool(db).append(_spool_rows(2, "a"))
    spool_path(db).rename(f"{spool_path(db)}.loading.{dead}.0")
    live = f"{spool_path(db)}.loading.{os.getppid()}.0"  # a live process's load under way: not ours to take
    Path(live).write_text(json.dumps(_spool_rows(1, "z")[0]) + "\n")
    Spool(db).append(_spool_rows(1, "b"))
    assert waiting_in_spool(db) == (4, 0)
    sp = Spool(db)
    assert sp.exists()
    with sp.claim() as rows:
        assert sorted(r["name"].split()[0] for r in rows) == ["a", "a", "b"]
    assert [p.name for p in sp.loading_files()] == [Path(live).name]
    assert waiting_in_spool(db) == (1, 0)
