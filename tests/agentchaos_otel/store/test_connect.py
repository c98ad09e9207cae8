"""Opening stores: versions, migration, refusal of newer and foreign files, derived-table upserts."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from opentelemetry.sdk.trace.export import SpanExportResult

from agentchaos_otel.store.database import schema
from agentchaos_otel.store.database.connect import StoreError, connect, open_store, write_rows
from agentchaos_otel.store.durability.spool import spool_path
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from tests.agentchaos_otel.store.test_support_builders import Step, emit_episode, finished, provider

V1_SPANS = """
CREATE TABLE spans (trace_id VARCHAR NOT NULL, span_id VARCHAR NOT NULL, parent_span_id VARCHAR,
    name VARCHAR, kind VARCHAR, start_ns BIGINT, end_ns BIGINT, status_code VARCHAR,
    status_message VARCHAR, service_name VARCHAR, scope_name VARCHAR, attributes JSON, resource JSON,
    events JSON, PRIMARY KEY (trace_id, span_id))
"""


def make_v1(path: Path) -> None:
    """A store as version 1 wrote it: no exported_ns column, no views digest."""
    conn = duckdb.connect(str(path))
    conn.execute(V1_SPANS)
    conn.execute(schema.VERSION_DDL)
    conn.execute("INSERT INTO schema_version VALUES (1, ?, NULL, 0)", [schema.STORE_APP])
    conn.execute("INSERT INTO spans VALUES ('0' || repeat('a', 31), 'bbbbbbbbbbbbbbbb', NULL, 'chat m', "
                 "'CLIENT', 1, 2, 'UNSET', NULL, 's', 'x', ?, '{}', '[]')",
                 ['{"gen_ai.operation.name": "chat"}'])
    conn.close()


def version(path: Path) -> int:
    conn = duckdb.connect(str(path), read_only=True)
    try:
        return conn.execute("SELECT version FROM schema_version").fetchone()[0]
    finally:
        conn.close()


def test_new_store_layout(tmp_path: Path) -> None:
    db = tmp_path / "new.duckdb"
    connect(db, read_only=False).close()
    with open_store(db) as conn:
        names = {r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        (v, digest) = conn.execute("SELECT version, views_digest FROM schema_version").fetchone()
    assert {"spans", "schema_version", *schema.PUBLIC_VIEWS} <= names
    with open_store(db) as conn:
        assert [r[0] for r in conn.execute("DESCRIBE spans").fetchall()] == list(schema.SPAN_COLUMNS)
    assert v == schema.SCHEMA_VERSION and digest == schema.views_digest()


def test_writer_migrates_v1(tmp_path: Path) -> None:
    db = tmp_path / "v1.duckdb"
    make_v1(db)
    with provider(db) as (tracer, _, _):
        emit_episode(tracer, "t", [Step("llm")])
    assert version(db) == schema.SCHEMA_VERSION
    with open_store(db) as conn:
        cols = [r[0] for r in conn.execute("DESCRIBE spans").fetchall()]
        old = conn.execute("SELECT exported_ns FROM spans WHERE start_ns = 1").fetchone()
        n_llm = conn.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
    assert "exported_ns" in cols and old == (None,)  # old rows kept, new column empty
    assert cols == list(schema.SPAN_COLUMNS)  # the exporter's positional insert relies on this order
    assert n_llm == 2


def test_reader_migrates_v1(tmp_path: Path) -> None:
    db = tmp_path / "v1.duckdb"
    make_v1(db)
    with open_store(db) as conn:
        assert conn.execute("SELECT count(*) FROM steps").fetchone()[0] == 1
    assert version(db) == schema.SCHEMA_VERSION


def test_reader_refreshes_stale_views(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    with provider(db) as (tracer, _, _):
        emit_episode(tracer, "t", [Step("llm"), Step("tool")])
    conn = duckdb.connect(str(db))
    conn.execute("CREATE OR REPLACE VIEW steps AS SELECT 1 AS stale")
    conn.execute("UPDATE schema_version SET views_digest = 'old'")
    conn.close()
    with open_store(db) as conn:
        assert conn.execute("SELECT count(*) FROM steps WHERE kind = 'tool'").fetchone()[0] == 1


def test_newer_version_refused(tmp_path: Path) -> None:
    db = tmp_path / "future.duckdb"
    connect(db, read_only=False).close()
    conn = duckdb.connect(str(db))
    conn.execute("UPDATE schema_version SET version = 99")
    conn.close()
    for read_only in (True, False):
        with pytest.raises(StoreError, match="schema version 99 is newer") as info:
            connect(db, read_only=read_only)
        assert "\n" not in str(info.value) and str(db) in str(info.value)
    # The exporter keeps the spans aside instead of writing into a layout it does not know.
    with provider(None) as (tracer, mem, _):
        emit_episode(tracer, "t", [Step("llm")])
    assert DuckDBSpanExporter(db).export(finished(mem)) == SpanExportResult.SUCCESS
    assert spool_path(db).exists() and version(db) == 99


@pytest.mark.parametrize("setup_sql, message", [
    ("CREATE TABLE foo (x INTEGER)", "not an agentchaos trace store"),
    ("CREATE TABLE schema_version (version INTEGER, app VARCHAR, views_digest VARCHAR, updated_ns BIGINT);"
     "INSERT INTO schema_version VALUES (1, 'other-tool', NULL, 0)", "written by 'other-tool'"),
])
def test_foreign_database_refused(tmp_path: Path, setup_sql: str, message: str) -> None:
    db = tmp_path / "foreign.duckdb"
    conn = duckdb.connect(str(db))
    conn.execute(setup_sql)
    conn.close()
    for read_only in (True, False):
        with pytest.raises(StoreError, match=message):
            connect(db, read_only=read_only)
    conn = duckdb.connect(str(db), read_only=True)
    tables = {r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    conn.close()
    assert "spans" not in tables  # nothing was added to someone else's file


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no such file"):
        connect(tmp_path / "nope.duckdb")
    assert not (tmp_path / "nope.duckdb").exists()
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    with pytest.raises(StoreError, match="empty database"):
        connect(empty)
    zero = tmp_path / "zero.duckdb"
    zero.touch()  # e.g. from mkstemp: readers call it empty, writers initialise it
    with pytest.raises(StoreError, match="empty database"):
        connect(zero)
    connect(zero, read_only=False).close()
    with open_store(zero) as conn:
        assert conn.execute("SELECT count(*) FROM spans").fetchone() == (0,)


def test_store_error_is_value_error() -> None:
    # The CLI reports ValueErrors as one line without a traceback.
    assert issubclass(StoreError, ValueError)


DIAG_DDL = "trace_id VARCHAR, diagnoser VARCHAR, fault_type VARCHAR, step INTEGER, detail JSON"


def test_write_rows_creates_and_upserts(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    rows = [{"trace_id": "a", "diagnoser": "rules", "fault_type": "timeout", "step": 2, "detail": {"x": 1}},
            {"trace_id": "b", "diagnoser": "rules", "fault_type": "empty", "step": 0, "detail": None}]
    assert write_rows(db, "diagnoses", rows, DIAG_DDL, key=["trace_id", "diagnoser"]) == 2
    again = [{"trace_id": "a", "diagnoser": "rules", "fault_type": "truncate", "step": 3},
             {"trace_id": "a", "diagnoser": "llm", "fault_type": "error", "step": 1}]
    write_rows(db, "diagnoses", again, DIAG_DDL, key=["trace_id", "diagnoser"])
    with open_store(db) as conn:
        got = conn.execute("SELECT trace_id, diagnoser, fault_type, step, detail FROM diagnoses "
                           "ORDER BY trace_id, diagnoser").fetchall()
    assert got == [("a", "llm", "error", 1, None), ("a", "rules", "truncate", 3, None),
                   ("b", "rules", "empty", 0, None)]
    # Also through an open connection and with a full CREATE statement; duplicate keys: last wins.
    conn = connect(db, read_only=False)
    try:
        ddl = "CREATE TABLE IF NOT EXISTS predictions (id INTEGER PRIMARY KEY, score DOUBLE)"
        write_rows(conn, "predictions", [{"id": 1, "score": 0.1}, {"id": 1, "score": 0.7}], ddl, key=["id"])
        assert conn.execute("SELECT id, score FROM predictions").fetchall() == [(1, 0.7)]
    finally:
        conn.close()


def test_write_rows_dict_values_are_json(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    write_rows(db, "diagnoses", [{"trace_id": "a", "diagnoser": "r", "detail": {"k": [1, 2]}}], DIAG_DDL,
               key=["trace_id"])
    with open_store(db) as conn:
        (detail,) = conn.execute("SELECT detail FROM diagnoses").fetchone()
    assert json.loads(detail) == {"k": [1, 2]}


def test_write_rows_rejects_bad_input(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    with pytest.raises(StoreError, match="invalid SQL identifier"):
        write_rows(db, "x; DROP TABLE spans", [{"a": 1}], "a INTEGER", key=["a"])
    with pytest.raises(StoreError, match="lack key"):
        write_rows(db, "t1", [{"a": 1}], "a INTEGER, b INTEGER", key=["b"])
    with pytest.raises(StoreError, match="write_rows"):
        write_rows(db, "t2", [{"nope": 1}], "a INTEGER", key=["nope"])
    with open_store(db) as conn:
        assert conn.execute("SELECT count(*) FROM spans").fetchone()[0] == 0
