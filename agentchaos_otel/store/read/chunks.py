"""Evaluating the store's views over a large trace store a group of whole traces at a time.

Every view in ``schema.py`` joins only within one trace (roots, wrappers and step numbers are all
per trace), so evaluating them on a subset of whole traces gives exactly the rows they give on
the full store. Doing that in a private in-memory DuckDB connection has two benefits: memory is
bounded by the chunk rather than the store, and the intermediate views that the episode and step
views read several times (span roles, wrappers, roots) can be computed once per chunk as tables
instead of being re-evaluated, with their JSON parsing, by every view that reads them.

The view SQL is the store's own (``schema.VIEWS``); nothing here restates it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import duckdb

from agentchaos_otel.store.database import schema
from agentchaos_otel.store.database.connect import StoreError, attach_read_only, connect, is_busy

# Intermediate views read more than once by the public views; computed once per chunk.
MATERIALISED = ("span_roles", "wrapper_spans", "trace_roots", "agent_roots", "step_spans")
# Spans per chunk: large enough that the per-chunk statements (a scan of the source, planning and
# filling the materialised views, about 40 ms a chunk) are a small share of the work, small enough
# that the chunks alive at once (being built, prefetched) stay near 200 MB.
DEFAULT_CHUNK_SPANS = 10_000

ATTACH_TIMEOUT_S = 10.0

_COLUMNS = ", ".join(schema.SPAN_COLUMNS)


def source_sql(path: str | os.PathLike[str]) -> tuple[str, str | None]:
    """(SELECT over the raw spans, file to ATTACH as ``src`` or None) for a store or a dataset.

    A directory is a hive-partitioned Parquet dataset (``store/parquet.py``); anything else is a
    traces.duckdb file, checked (version, layout) by the normal opener first. The SELECT carries
    a ``_pos`` column: the row id in a DuckDB file (so a chunk reads only the row range its
    traces were stored in), 0 in a dataset.
    """
    p = Path(path)
    if p.is_dir():
        from agentchaos_otel.store.parquet import dataset_sql

        return f"SELECT 0::BIGINT AS _pos, {_COLUMNS} FROM ({dataset_sql(p)})", None
    connect(p).close()  # clear errors for missing, empty, foreign or newer files; migrates older ones
    return f"SELECT rowid AS _pos, {_COLUMNS} FROM src.spans", str(p)


class ChunkedStore:
    """A read-only view of a store whose public views can be evaluated chunk by chunk."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        sql, attach = source_sql(path)
        self.conn = duckdb.connect()
        self._attach_sql = None if attach is None else attach_read_only(attach, "src")
        try:
            self.conn.execute("SET enable_progress_bar = false")
            with self._source():
                self.conn.execute(f"CREATE TEMP VIEW src_spans AS {sql}")
        except duckdb.Error as exc:
            self.conn.close()
            raise StoreError(f"{self.path}: cannot read spans ({' '.join(str(exc).split())[:200]})") from None
        self._views_made = False

    @contextmanager
    def _source(self) -> Iterator[None]:
        """The store file attached only while a statement reads it.

        In between, this process may open the same file for writing (derived tables, the LLM
        diagnoser's cache), which DuckDB refuses while any connection of the process has it.
        """
        if self._attach_sql is None:
            yield
            return
        deadline = time.monotonic() + ATTACH_TIMEOUT_S
        delay = 0.01
        while True:  # a writer of this process holding the file for a moment: wait for it
            try:
                self.conn.execute(self._attach_sql)
                break
            except duckdb.Error as exc:
                if not is_busy(exc) or time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.1)
        try:
            yield
        finally:
            self.conn.execute("DETACH src")

    def close(self) -> None:
        self.conn.close()

    def plan(self, *, trace_ids: Sequence[str] | None = None,
             chunk_spans: int = DEFAULT_CHUNK_SPANS) -> int:
        """Assign every trace to a chunk, in the order traces were stored; returns the chunk count.

        Each chunk records the row range its traces occupy: spans of one trace are exported
        within seconds of each other, so consecutive traces occupy narrow, adjacent ranges and a
        chunk reads its range rather than the whole store. That keeps the total work linear in
        the store size.
        """
        params: list[object] = []
        filt = ""
        if trace_ids is not None:
            filt = "WHERE trace_id IN (SELECT unnest(?::VARCHAR[]))"
            params.append(list(trace_ids))
        with self._source():
            self._plan(filt, params, chunk_spans)
        row = self.conn.execute("SELECT max(chunk) FROM _chunk_ids").fetchone()
        return 0 if row is None or row[0] is None else int(row[0]) + 1

    def _plan(self, filt: str, params: list[object], chunk_spans: int) -> None:
        self.conn.execute(f"""
            CREATE OR REPLACE TEMP TABLE _chunk_ids AS
            WITH t AS (SELECT trace_id, min(start_ns) AS first_ns, count(*) AS n,
                              min(_pos) AS lo, max(_pos) AS hi
                       FROM src_spans {filt} GROUP BY trace_id)
            SELECT trace_id, first_ns, lo, hi,
                   (sum(n) OVER (ORDER BY lo, first_ns NULLS LAST, trace_id ROWS UNBOUNDED PRECEDING) - n)
                       // {max(1, int(chunk_spans))} AS chunk
            FROM t""", params)

    def chunks(self) -> list[int]:
        """Chunk numbers that hold traces (a large trace may skip numbers)."""
        return [int(r[0]) for r in self.conn.execute("SELECT DISTINCT chunk FROM _chunk_ids ORDER BY 1").fetchall()]

    def load_chunk(self, chunk: int) -> duckdb.DuckDBPyConnection:
        """Make ``spans`` and the views hold exactly the traces of ``chunk``; returns the connection."""
        c = self.conn
        lo, hi = c.execute("SELECT min(lo), max(hi) FROM _chunk_ids WHERE chunk = ?", [chunk]).fetchone()
        # A dataset has no primary key: QUALIFY keeps the first export of a span seen twice. A
        # DuckDB store's key already makes (trace_id, span_id) unique, so it skips that sort.
        dedup = ("" if self._attach_sql is not None else
                 " QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY exported_ns NULLS LAST) = 1")
        with self._source():
            c.execute(f"CREATE OR REPLACE TABLE spans AS SELECT {_COLUMNS} FROM src_spans "
                      "WHERE _pos BETWEEN ? AND ? AND trace_id IN (SELECT trace_id FROM _chunk_ids WHERE chunk = ?)"
                      + dedup, [lo, hi, chunk])
        for name in MATERIALISED:
            c.execute(f"CREATE OR REPLACE TABLE {name} AS {schema.VIEWS[name]}")
        if not self._views_made:
            for name, sql in schema.VIEWS.items():
                if name not in MATERIALISED:
                    c.execute(f"CREATE OR REPLACE VIEW {name} AS {sql}")
            self._views_made = True
        return c


@contextmanager
def chunked_store(path: str | os.PathLike[str]) -> Iterator[ChunkedStore]:
    store = ChunkedStore(path)
    try:
        yield store
    finally:
        store.close()
