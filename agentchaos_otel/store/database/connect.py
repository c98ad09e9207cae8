"""Opening traces.duckdb: clear one-line errors, lock retries, version checks and migration.

DuckDB allows one writing process or several reading processes per file, and inside one process
a file can only be open with one configuration at a time. Every writer (exporter, derived-table
writers) therefore opens, writes and closes quickly (the exporter keeps its connection only in
a flood of batches, see `writer.py`), and every opener retries briefly when the file is busy
instead of failing on the first conflict.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from agentchaos_otel import settings
from agentchaos_otel.errors import no_such_file
from agentchaos_otel.store.database import schema, template
from agentchaos_otel.store.database.columns import SpanBatch

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class StoreError(ValueError):
    """A trace store cannot be used; the message is one line meant for the user."""


class StoreBusyError(StoreError):
    """Another process (or another configuration in this process) holds the file."""


def default_path() -> str:
    return settings.DB.value()


def is_busy(exc: Exception) -> bool:
    """Whether a DuckDB error means another connection holds the file (worth retrying)."""
    return _is_busy(exc)


def _is_busy(exc: Exception) -> bool:
    text = str(exc)
    return ("Could not set lock" in text or "Conflicting lock" in text
            or "different configuration" in text or "Unique file handle conflict" in text)


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    text = re.sub(r"\s*See also https?://\S+", "", text)
    return text[:300]


# Set by store/writer.py: closes this process's idle cached writer of a path (no-op otherwise).
release_writer: Callable[[str], None] | None = None


def _open(path: str, read_only: bool, timeout_s: float) -> duckdb.DuckDBPyConnection:
    deadline = time.monotonic() + max(0.0, timeout_s)
    delay = 0.02
    asked = False
    while True:
        try:
            conn = duckdb.connect(path, read_only=read_only)
            # A progress bar on stdout would corrupt CLI output (and --json) on long queries.
            conn.execute("SET enable_progress_bar = false")
            return conn
        except duckdb.Error as exc:
            if read_only and release_writer is not None and "different configuration" in str(exc):
                release_writer(path)  # our own exporter may hold it between batches: ask it to let go
                if not asked:
                    asked = True
                    continue
            if _is_busy(exc):
                if time.monotonic() + delay > deadline:
                    raise StoreBusyError(f"{path}: locked by another connection ({_one_line(exc)})") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.1)
                continue
            if "not a valid DuckDB database" in str(exc):
                raise StoreError(f"{path}: not a DuckDB database (corrupt or foreign file)") from None
            raise StoreError(f"{path}: cannot open ({_one_line(exc)})") from None


def _tables(conn: duckdb.DuckDBPyConnection) -> set[str]:
    rows = conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
    ).fetchall()
    return {r[0] for r in rows}


def read_version(conn: duckdb.DuckDBPyConnection) -> tuple[int, str, str | None] | None:
    """(version, app, views digest) of an initialised store, None for an empty database."""
    tables = _tables(conn)
    if "schema_version" not in tables:
        if tables:
            raise StoreError("not an agentchaos trace store (tables present but no schema_version)")
        return None
    rows = conn.execute("SELECT version, app, views_digest FROM schema_version").fetchall()
    if len(rows) != 1:
        raise StoreError(f"not an agentchaos trace store ({len(rows)} rows in schema_version)")
    version, app, digest = rows[0]
    if app != schema.STORE_APP:
        raise StoreError(f"not an agentchaos trace store (written by {app!r})")
    return int(version), str(app), digest


def _check_not_newer(version: int) -> None:
    if version > schema.SCHEMA_VERSION:
        raise StoreError(
            f"schema version {version} is newer than this agentchaos-otel supports "
            f"({schema.SCHEMA_VERSION}); upgrade agentchaos-otel to read it")


def ensure_schema(conn: duckdb.DuckDBPyConnection) -> None:
    """Create, migrate or refresh the store layout on a writable connection (idempotent)."""
    info = read_version(conn)
    digest = schema.views_digest()
    if info is not None:
        version, _, stored_digest = info
        _check_not_newer(version)
        if version == schema.SCHEMA_VERSION and stored_digest == digest:
            return
    conn.execute("BEGIN TRANSACTION")
    try:
        if info is None:
            conn.execute(schema.SPANS_DDL)
            conn.execute(schema.VERSION_DDL)
            conn.execute("INSERT INTO schema_version VALUES (?, ?, NULL, ?)",
                         [schema.SCHEMA_VERSION, schema.STORE_APP, time.time_ns()])
        else:
            for v in range(info[0], schema.SCHEMA_VERSION):
                step = schema.MIGRATIONS.get(v)
                if step is None:
                    raise StoreError(f"no migration from schema version {v}")
                step(conn)
        schema.create_views(conn)
        conn.execute("UPDATE schema_version SET version = ?, views_digest = ?, updated_ns = ?",
                      [schema.SCHEMA_VERSION, digest, time.time_ns()])
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def connect(path: str | os.PathLike[str], read_only: bool = True, *,
            timeout_s: float = 5.0) -> duckdb.DuckDBPyConnection:
    """Open a trace store. Writers create or migrate it; readers get a checked, current layout.

    A directory is a Parquet span dataset: readers get it as one in-memory store, writers (of
    derived tables) get its ``derived.duckdb``.

    A writer of a file that does not exist yet gets a copy of the empty store (``template.py``).
    A reader that finds an older version migrates it through a short write connection first, so
    views always match this code; if that is impossible (read-only medium) it reads as is.
    """
    p = str(path)
    if Path(p).is_dir():  # a hive-partitioned Parquet dataset (store/parquet.py)
        from agentchaos_otel.store import parquet

        if read_only:
            return parquet.open_dataset(p)
        p = str(Path(p) / parquet.DERIVED_DB)  # derived tables of a dataset live beside it
    if read_only:
        if not Path(p).exists():
            raise StoreError(no_such_file(p))
        if Path(p).is_file() and Path(p).stat().st_size == 0:
            raise StoreError(f"{p}: empty database, no spans have been exported to it yet")
        conn = _open(p, True, timeout_s)
        try:
            info = read_version(conn)
            if info is None:
                raise StoreError("empty database, no spans have been exported to it yet")
            _check_not_newer(info[0])
            stale = info[0] < schema.SCHEMA_VERSION or info[2] != schema.views_digest()
        except StoreError as exc:
            conn.close()
            raise StoreError(f"{p}: {exc}") from None
        except duckdb.Error as exc:
            conn.close()
            raise StoreError(f"{p}: unreadable ({_one_line(exc)})") from None
        if not stale:
            return conn
        conn.close()
        try:
            writer = connect(p, read_only=False, timeout_s=timeout_s)
            writer.close()
        except StoreError:
            if info[0] < schema.SCHEMA_VERSION:
                raise
        return _open(p, True, timeout_s)
    if Path(p).is_file() and Path(p).stat().st_size == 0:
        Path(p).unlink()  # a zero-byte file (touch, mkstemp) holds nothing; DuckDB would call it corrupt
    parent = Path(p).parent
    if not parent.exists():
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{p}: cannot create directory ({exc.strerror})") from None
    # A new store: a copy of the empty one, not DDL (does nothing when the file exists).
    template.create_from_template(p, _TEMPLATE_KEY, _create_empty)
    conn = _open(p, False, timeout_s)
    try:
        ensure_schema(conn)
    except StoreError as exc:
        conn.close()
        raise StoreError(f"{p}: {exc}") from None
    except duckdb.Error as exc:
        conn.close()
        raise StoreError(f"{p}: cannot initialise ({_one_line(exc)})") from None
    return conn


# Computed once: the layout cannot change while the process runs.
_TEMPLATE_KEY = template.template_key(schema.SCHEMA_VERSION, schema.SPANS_DDL, schema.VERSION_DDL,
                                      schema.STORE_APP, schema.views_digest())


def _create_empty(path: str) -> None:
    """An empty store made from DDL and closed (checkpointed): what templates are copies of."""
    conn = _open(path, False, 5.0)
    try:
        ensure_schema(conn)
    finally:
        conn.close()


@contextmanager
def open_store(path: str | os.PathLike[str], read_only: bool = True, *,
               timeout_s: float = 5.0) -> Iterator[duckdb.DuckDBPyConnection]:
    conn = connect(path, read_only=read_only, timeout_s=timeout_s)
    try:
        yield conn
    finally:
        conn.close()


def attach_read_only(path: str | os.PathLike[str], alias: str) -> str:
    """The statement that attaches the DuckDB file at ``path`` read-only as ``alias`` (a path
    cannot be a bound parameter of ATTACH, so its quotes are doubled here, in one place)."""
    quoted = str(path).replace("'", "''")
    return f"ATTACH '{quoted}' AS {_quote(alias)} (READ_ONLY)"


def _quote(name: str) -> str:
    if not _IDENT.match(name):
        raise StoreError(f"invalid SQL identifier: {name!r}")
    return f'"{name}"'


def _sql_value(value: Any) -> Any:
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, default=str)
    if isinstance(value, tuple):
        return list(value)
    return value


def _scannable(values: Sequence[Any]) -> bool:
    """Whether DuckDB can infer one column type from these Python values."""
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {int, float}:
        return True
    return len(kinds) == 1 and next(iter(kinds)) in (str, bool, list, datetime.datetime, datetime.date)


def bulk_execute(conn: duckdb.DuckDBPyConnection, sql_template: str, cols: Sequence[str],
          rows: Sequence[Sequence[Any]]) -> None:
    """Run `sql_template` (with `{rel}` for a relation of the rows) without per-row Python binding.

    Binding parameters from Python costs milliseconds per row in DuckDB; scanning numpy object
    columns costs microseconds. Columns whose Python values mix types DuckDB cannot unify go
    row by row, which is slow but exact.
    """
    data = {}
    for i, c in enumerate(cols):
        arr = np.empty(len(rows), dtype=object)
        for j, r in enumerate(rows):
            arr[j] = r[i]
        data[c] = arr
    if not all(_scannable(a) for a in data.values()):
        _rowwise(conn, sql_template, cols, rows)
        return
    name = f"_agentchaos_rows_{uuid.uuid4().hex}"
    conn.register(name, data)
    try:
        conn.execute(sql_template.format(rel=name))
    finally:
        conn.unregister(name)


def _rowwise(conn: duckdb.DuckDBPyConnection, sql_template: str, cols: Sequence[str],
             rows: Sequence[Sequence[Any]]) -> None:
    sub = "(SELECT " + ", ".join(f"? AS {_quote(c)}" for c in cols) + ")"
    for r in rows:
        conn.execute(sql_template.format(rel=sub), list(r))


_SPAN_COLS_SQL = ", ".join(schema.SPAN_COLUMNS)
_SPAN_INSERT = f"INSERT INTO spans ({_SPAN_COLS_SQL}) SELECT {_SPAN_COLS_SQL} FROM {{rel}}"
_SPAN_INSERT_NEW_ONLY = _SPAN_INSERT + " ON CONFLICT DO NOTHING"


def _is_duplicate_key(exc: duckdb.Error) -> bool:
    text = str(exc)
    return "Duplicate key" in text or "violates primary key" in text


def insert_span_rows(conn: duckdb.DuckDBPyConnection, rows: Sequence[dict[str, Any]], *,
                     in_transaction: bool = False) -> None:
    """Insert `spans` rows (unique keys) in one statement; keys already stored are left as they are.

    The rows go to DuckDB as one Arrow table, so no Python runs per value while DuckDB works.
    A plain INSERT is tried first because DuckDB's ON CONFLICT costs several times the insert
    itself; a batch that repeats a stored key (a retry, a spool overlapping a batch) fails as a
    whole and is inserted again skipping stored keys. Rows whose values do not fit the column
    types (hand-edited spools) go through the general path, which reports DuckDB's error.
    Inside the caller's own transaction (``in_transaction``) a failed statement would abort it,
    so there the insert skips stored keys from the start.
    """
    if not rows:
        return
    table = SpanBatch.from_rows(rows).arrow()
    if table is None:
        bulk_execute(conn, _SPAN_INSERT_NEW_ONLY, schema.SPAN_COLUMNS,
                     [[r.get(c) for c in schema.SPAN_COLUMNS] for r in rows])
        return
    if not in_transaction and insert_new_spans(conn, table):
        return
    insert_spans_skipping_stored(conn, table)


def insert_new_spans(conn: duckdb.DuckDBPyConnection, table: Any) -> bool:
    """Insert an Arrow table of new spans; False, with nothing inserted, when a key is stored or repeated.

    The usual batch holds only new spans, so it goes in as a plain positional insert of the
    Arrow relation (``SPAN_COLUMNS`` is the table's column order, which the migrations keep):
    no name to register, no join, the primary key the only check. A batch that repeats a key
    (an SDK retry, a spool overlapping a batch, a journal replayed after a crash, or twice in
    the batch itself) makes that statement fail as a whole, atomically. Measured on 512-span
    batches, the plain insert takes about two thirds of the time of an anti-join against the
    stored spans of the batch's start range.
    """
    try:
        conn.from_arrow(table).insert_into("spans")
        return True
    except duckdb.ConstraintException as exc:
        if not _is_duplicate_key(exc):
            raise
        return False


def insert_spans_skipping_stored(conn: duckdb.DuckDBPyConnection, table: Any) -> None:
    """Insert an Arrow table in `spans` layout (unique keys) with ON CONFLICT DO NOTHING.

    It costs several times the plain insert, hence only after ``insert_new_spans`` refused.
    """
    name = f"_agentchaos_spans_{uuid.uuid4().hex}"
    conn.register(name, table)
    try:
        conn.execute(_SPAN_INSERT_NEW_ONLY.format(rel=name))
    finally:
        conn.unregister(name)


def write_rows(path_or_conn: str | os.PathLike[str] | duckdb.DuckDBPyConnection, table: str,
               rows: Sequence[dict[str, Any]], ddl: str, key: Sequence[str]) -> int:
    """Create a derived table if missing and upsert rows by key; returns the number of rows written.

    `ddl` is either a full CREATE TABLE statement or just the column list. Upsert is done as
    delete-then-insert in one transaction so tables without a declared primary key work too.
    Dict values are stored as JSON text.
    """
    if not key:
        raise StoreError(f"write_rows({table}): key must name at least one column")
    tname = _quote(table)
    key_cols = [_quote(k) for k in key]
    stmt = ddl.strip()
    if not stmt.upper().startswith("CREATE"):
        stmt = f"CREATE TABLE IF NOT EXISTS {tname} ({stmt})"
    own = not isinstance(path_or_conn, duckdb.DuckDBPyConnection)
    conn = connect(path_or_conn, read_only=False) if own else path_or_conn  # type: ignore[arg-type]
    try:
        conn.execute(stmt)
        if not rows:
            return 0
        cols: list[str] = []
        for r in rows:
            for c in r:
                if c not in cols:
                    cols.append(c)
        missing = [k for k in key if k not in cols]
        if missing:
            raise StoreError(f"write_rows({table}): rows lack key column(s) {missing}")
        unique: dict[tuple[Any, ...], dict[str, Any]] = {}
        for r in rows:  # the last row wins when a batch repeats a key
            unique[tuple(json.dumps(r.get(k), sort_keys=True, default=str) for k in key)] = r
        rows = list(unique.values())
        qcols = [_quote(c) for c in cols]
        values = [[_sql_value(r.get(c)) for c in cols] for r in rows]
        match = " AND ".join(f"t.{k} IS NOT DISTINCT FROM b.{k}" for k in key_cols)
        conn.execute("BEGIN TRANSACTION")
        try:
            delete = f"DELETE FROM {tname} AS t WHERE EXISTS (SELECT 1 FROM {{rel}} AS b WHERE {match})"
            insert = f"INSERT INTO {tname} ({', '.join(qcols)}) SELECT {', '.join(qcols)} FROM {{rel}}"
            bulk_execute(conn, delete, cols, values)
            bulk_execute(conn, insert, cols, values)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return len(rows)
    except duckdb.Error as exc:
        raise StoreError(f"write_rows({table}): {_one_line(exc)}") from None
    finally:
        if own:
            conn.close()
