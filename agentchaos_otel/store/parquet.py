"""Trace storage for fleets: span rows as hive-partitioned Parquet, read back as one DuckDB dataset.

Layout: ``DIR/date=YYYY-MM-DD/service=NAME/part-<time>-<id>.parquet``, one file per partition per
written batch, columns exactly the ``spans`` table's (JSON columns as text). Date is the span's
start in UTC; ``service`` is the resource's ``service.name`` made path-safe (the exact name stays
in the ``service_name`` column). Files appear atomically (written under a temporary name, then
renamed), so a reader never sees half a file, and many writers (receivers, importers, Ray
workers) can add to one directory without coordinating.

Reading: ``open_dataset(DIR)`` gives an in-memory DuckDB connection where ``spans`` is a view
over every file (``read_parquet(..., hive_partitioning = true)``) with duplicates of one
(trace_id, span_id) collapsed to the first export, as the DuckDB store's primary key does, and
all of the store's views on top. ``store.db.connect`` hands directories here, so ``diagnose``,
``predict`` and ``report`` read a dataset as they read a traces.duckdb file. Derived tables
(diagnoses, predictions) written for a dataset go to ``DIR/derived.duckdb``, which the dataset
connection attaches.
"""

from __future__ import annotations

import datetime
import logging
import os
import re
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from agentchaos_otel.store.database import schema
from agentchaos_otel.store.database.connect import StoreError, attach_read_only

logger = logging.getLogger(__name__)

DERIVED_DB = "derived.duckdb"
_INT_COLUMNS = {"start_ns", "end_ns", "exported_ns"}
_JSON_COLUMNS = {"attributes", "resource", "events"}
POLARS_SCHEMA = {c: (pl.Int64 if c in _INT_COLUMNS else pl.Utf8) for c in schema.SPAN_COLUMNS}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class DatasetError(StoreError):
    """A directory that cannot be read as a span dataset; one line for the user."""


def partition_of(row: Mapping[str, Any]) -> tuple[str, str]:
    """(date, service) partition values of a span row."""
    start = row.get("start_ns")
    if isinstance(start, int) and not isinstance(start, bool) and start > 0:
        day = datetime.datetime.fromtimestamp(start / 1e9, tz=datetime.UTC).date().isoformat()
    else:
        day = "unknown"
    service = str(row.get("service_name") or "unknown")
    return day, (_UNSAFE.sub("_", service).strip("._") or "unknown")[:100]


def write_rows(directory: str | os.PathLike[str], rows: Sequence[Mapping[str, Any]]) -> list[Path]:
    """Write span rows (``spans`` layout) as one new Parquet file per partition; returns the files.

    Every partition's file is written under a temporary name first and only then renamed, so a
    failure (disk full, a row Parquet refuses) leaves none of this call's files behind: an
    importer's file is stored whole or not at all, as in the DuckDB store.
    """
    root = Path(directory)
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[partition_of(r)].append(r)
    stamp = time.time_ns()
    staged: list[tuple[Path, Path]] = []
    try:
        for (day, service), group in sorted(groups.items()):
            part = root / f"date={day}" / f"service={service}"
            part.mkdir(parents=True, exist_ok=True)
            frame = pl.DataFrame({c: [r.get(c) for r in group] for c in schema.SPAN_COLUMNS},
                                 schema=POLARS_SCHEMA)
            name = f"part-{stamp}-{uuid.uuid4().hex[:12]}"
            tmp = part / f".{name}.tmp"
            staged.append((tmp, part / f"{name}.parquet"))
            frame.write_parquet(tmp)
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, final in staged:
        os.replace(tmp, final)
    return [final for _, final in staged]


class ParquetSpanSink(SpanExporter):
    """A span sink writing partitioned Parquet: an OTel exporter, and a row sink for the receiver.

    ``export_rows`` is the interface the OTLP receiver and importers call with rows already in
    ``spans`` layout (redacted by whoever built them: ``span_to_row`` / ``spans_to_batch`` or
    the receiver's conversion). Each call's rows are on disk before it returns SUCCESS; a failed
    write returns FAILURE so the sender keeps and retries the batch instead of it being lost here.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.path = os.path.abspath(str(directory))
        self._lock = threading.Lock()
        self._shutdown = False
        self.files_written = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        from agentchaos_otel.store.exporter import spans_to_batch

        # the rows of `span_to_row`, redacted and repaired, built as one batch
        return self.export_rows(spans_to_batch(spans, time.time_ns()).rows())

    def export_rows(self, rows: list[dict[str, Any]]) -> SpanExportResult:
        if self._shutdown:
            logger.error("%s: export after shutdown, %d spans not written", self.path, len(rows))
            return SpanExportResult.FAILURE
        if not rows:
            return SpanExportResult.SUCCESS
        try:
            with self._lock:
                self.files_written += len(write_rows(self.path, rows))
        except (OSError, pl.exceptions.PolarsError) as exc:
            logger.error("%s: %d spans not written (%s); the sender keeps them", self.path, len(rows), exc)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # nothing is buffered: every call's rows are on disk when it returns

    def shutdown(self) -> None:
        self._shutdown = True


def _files_glob(root: Path) -> str:
    return str(root / "**" / "*.parquet").replace("'", "''")


def has_files(directory: str | os.PathLike[str]) -> bool:
    return any(Path(directory).rglob("*.parquet"))


def dataset_sql(directory: str | os.PathLike[str]) -> str:
    """SELECT of the raw span columns over every Parquet file under ``directory`` (duplicates kept)."""
    root = Path(directory)
    if not root.is_dir():
        raise DatasetError(f"{root}: not a directory")
    if not has_files(root):
        raise DatasetError(f"{root}: no Parquet span files (expected date=*/service=*/*.parquet)")
    cols = ", ".join(f"{c}::JSON AS {c}" if c in _JSON_COLUMNS else c for c in schema.SPAN_COLUMNS)
    return (f"SELECT {cols} FROM read_parquet('{_files_glob(root)}', hive_partitioning = true, "
            "union_by_name = true)")


def dedup_sql(select: str) -> str:
    """One row per (trace_id, span_id), the first exported, as the store's primary key keeps."""
    return (f"SELECT * FROM ({select}) QUALIFY row_number() OVER "
            "(PARTITION BY trace_id, span_id ORDER BY exported_ns NULLS LAST) = 1")


def open_dataset(directory: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """An in-memory connection where ``spans`` and every store view read the dataset."""
    root = Path(directory)
    sql = dataset_sql(root)
    conn = duckdb.connect()
    try:
        conn.execute("SET enable_progress_bar = false")
        conn.execute(f"CREATE VIEW spans AS {dedup_sql(sql)}")
        schema.create_views(conn)
        # Readers that check the layout see the current one: the views are this code's own.
        conn.execute(schema.VERSION_DDL)
        conn.execute("INSERT INTO schema_version VALUES (?, ?, ?, ?)",
                     [schema.SCHEMA_VERSION, schema.STORE_APP, schema.views_digest(), time.time_ns()])
        derived = root / DERIVED_DB
        if derived.is_file() and derived.stat().st_size > 0:
            conn.execute(attach_read_only(derived, "derived"))
            tables = conn.execute("SELECT table_name FROM information_schema.tables WHERE table_catalog = "
                                  "'derived' AND table_type = 'BASE TABLE'").fetchall()
            for (name,) in tables:
                if name not in ("spans", "schema_version") and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                    conn.execute(f'CREATE VIEW "{name}" AS SELECT * FROM derived."{name}"')
    except duckdb.Error as exc:
        conn.close()
        raise DatasetError(f"{root}: cannot read the dataset ({' '.join(str(exc).split())[:200]})") from None
    except BaseException:
        conn.close()
        raise
    return conn


def export_store(db: str | os.PathLike[str], directory: str | os.PathLike[str], *,
                 batch_rows: int = 50_000) -> int:
    """Copy every span of a traces.duckdb file into a Parquet dataset; returns the span count."""
    from agentchaos_otel.store.database.connect import open_store

    sink = ParquetSpanSink(directory)
    n = 0
    with open_store(db) as conn:
        cur = conn.execute(f"SELECT {', '.join(schema.SPAN_COLUMNS)} FROM spans ORDER BY rowid")
        while batch := cur.fetchmany(batch_rows):
            rows = [dict(zip(schema.SPAN_COLUMNS, r, strict=True)) for r in batch]
            if sink.export_rows(rows) is not SpanExportResult.SUCCESS:
                raise DatasetError(f"{directory}: could not write Parquet files")
            n += len(rows)
    return n
