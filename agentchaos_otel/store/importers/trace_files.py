"""``agentchaos traces import``: trace files from elsewhere into traces.duckdb, whatever their format.

A fleet exports through the user's Collector (file exporter: OTLP JSON Lines or protobuf),
Phoenix holds OpenInference spans, and many agent harnesses only save the conversation. Each file
(or each directory, recursively) is sniffed, parsed by the module for its format
(``otlp_files``, ``openinference``, ``trajectories``) into rows of the ``spans`` table, and
written in one transaction per file, so a file is either stored whole or not at all and the error
names the file and line. ``.gz`` files are decompressed with a bound.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentchaos_otel.content_encoding import TooLarge, bounded_decompress
from agentchaos_otel.errors import no_such_file
from agentchaos_otel.store.database.connect import StoreError, connect
from agentchaos_otel.store.exporter import insert_rows
from agentchaos_otel.store.importers import openinference, otlp_files, trajectories
from agentchaos_otel.store.receivers.otlp_http import BadPayload

MAX_FILE_BYTES = 1 << 30  # decompressed
SUFFIXES = (".json", ".jsonl", ".ndjson", ".pb", ".binpb", ".protobuf", ".otlp", ".proto", ".parquet")
FORMATS = ("otlp-json", "otlp-protobuf", "openinference", "messages")


class TraceImportError(ValueError):
    """A file that cannot be imported; the message names the file (and line) in one line."""


@dataclass
class FileResult:
    path: str
    format: str
    spans: int
    episodes: int


@dataclass
class ImportReport:
    files: list[FileResult] = field(default_factory=list)

    @property
    def spans(self) -> int:
        return sum(f.spans for f in self.files)


def expand(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Files named, plus files under named directories with a known suffix (sorted, so runs repeat)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.is_file()
                              and f.name.removesuffix(".gz").endswith(SUFFIXES)))
        elif p.is_file():
            out.append(p)
        else:
            raise TraceImportError(no_such_file(p))
    return out


def read_bytes(path: Path) -> bytes:
    if path.stat().st_size > MAX_FILE_BYTES:
        raise TraceImportError(f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB")
    data = path.read_bytes()
    if path.suffix == ".gz" or data[:2] == b"\x1f\x8b":
        try:
            data = bounded_decompress(data, "gzip", MAX_FILE_BYTES)
        except TooLarge:
            raise TraceImportError(f"{path}: decompresses to more than {MAX_FILE_BYTES >> 20} MiB") from None
        except ValueError as exc:
            raise TraceImportError(f"{path}: bad gzip data ({exc})") from None
    return data


def _records(text: str) -> Iterator[tuple[int, Any]]:
    """(line number, JSON value) of a JSON document or of each non-blank JSON Lines line."""
    stripped = text.lstrip()
    try:
        yield 1, json.loads(text)
        return
    except json.JSONDecodeError:
        if not stripped.startswith("{"):
            raise
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                yield n, json.loads(line)
            except json.JSONDecodeError as exc:
                raise json.JSONDecodeError(f"line {n}: {exc.msg}", exc.doc, exc.pos) from None


def _items(value: Any) -> list[Any]:
    """Records inside one JSON value: a list, Phoenix's ``{"data": [...]}``, or the value itself."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict) and isinstance(value.get("data"), list) and "resourceSpans" not in value:
        return value["data"]
    return [value]


def detect(record: Any) -> str:
    if isinstance(record, dict) and "resourceSpans" in record:
        return "otlp-json"
    if trajectories.is_trajectory(record):
        return "messages"
    if openinference.is_phoenix_span(record):
        return "openinference"
    raise BadPayload("unrecognised record (expected OTLP resourceSpans, an OpenInference span with "
                     "context.span_id, or a trajectory with a messages list)")


def _parquet_records(path: Path) -> list[dict[str, Any]]:
    """Rows of a Parquet file (Phoenix's ``get_spans_dataframe().to_parquet(...)``) as dicts."""
    import duckdb

    try:
        with duckdb.connect() as conn:
            cur = conn.execute("SELECT * FROM read_parquet(?)", [str(path)])
            cols = [d[0] for d in cur.description or []]
            return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    except duckdb.Error as exc:
        raise TraceImportError(f"{path}: not a readable Parquet file ({' '.join(str(exc).split())[:200]})") from None


def parse_file(path: Path, fmt: str | None = None) -> tuple[str, list[dict[str, Any]], int]:
    """(format, rows, episodes built) of one file; raises TraceImportError naming the file and line."""
    if path.suffix == ".parquet":
        records = _parquet_records(path)
        if not records or not openinference.is_phoenix_span(records[0]):
            raise TraceImportError(f"{path}: a Parquet import must be OpenInference spans (context.span_id column)")
        try:
            return "openinference", openinference.rows_from_phoenix(records), 0
        except (BadPayload, KeyError, TypeError, AttributeError) as exc:
            raise TraceImportError(f"{path}: {exc}") from None
    data = read_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if fmt == "otlp-protobuf" or (fmt is None and text is None):
        try:
            return "otlp-protobuf", otlp_files.rows_from_protobuf_file(data), 0
        except BadPayload as exc:
            raise TraceImportError(f"{path}: {exc}") from None
    if text is None:
        raise TraceImportError(f"{path}: not UTF-8 text, and --format {fmt} is a JSON format")
    rows: list[dict[str, Any]] = []
    found: str | None = fmt
    phoenix: list[Any] = []
    episodes = 0
    base_ns = path.stat().st_mtime_ns
    line = 0
    try:
        for n, value in _records(text):
            line = n  # named in the error if this record is refused
            for item in _items(value):
                kind = detect(item) if fmt is None else fmt
                if found is None:
                    found = kind
                elif kind != found:
                    raise BadPayload(f"mixes {found} and {kind} records")
                if kind == "otlp-json":
                    rows.extend(otlp_files.rows_from_json_doc(item))
                elif kind == "messages":
                    rows.extend(trajectories.rows_from_trajectory(item, source=path.name, base_ns=base_ns))
                    episodes += 1
                else:
                    phoenix.append(item)
        line = 0
        if phoenix:
            rows.extend(openinference.rows_from_phoenix(phoenix))
    except json.JSONDecodeError as exc:
        raise TraceImportError(f"{path}: not JSON or JSON Lines ({exc.msg})") from None
    except (BadPayload, KeyError, TypeError, AttributeError) as exc:
        where = f" line {line}" if line and len(text.splitlines()) > 1 else ""
        raise TraceImportError(f"{path}{where}: {exc}") from None
    if found is None:
        raise TraceImportError(f"{path}: empty")
    return found, rows, episodes


def import_paths(paths: Iterable[str | os.PathLike[str]], db: str | os.PathLike[str] | None,
                 fmt: str | None = None, *, parquet: str | os.PathLike[str] | None = None) -> ImportReport:
    """Import every file; each file is one transaction (stored whole, or not at all).

    ``parquet``: write hive-partitioned Parquet (by date and service, ``store/parquet.py``)
    into that directory instead of a DuckDB file; ``diagnose``, ``predict`` and ``report`` read
    the directory as one dataset.
    """
    if fmt is not None and fmt not in FORMATS:
        raise TraceImportError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if parquet is not None and Path(parquet).exists() and not Path(parquet).is_dir():
        raise TraceImportError(f"{parquet}: exists and is not a directory (--parquet takes a dataset directory)")
    files = expand(paths)
    if not files:
        raise TraceImportError("no trace files found")
    parsed = [(f, *parse_file(f, fmt)) for f in files]  # every file checked before anything is written
    report = ImportReport()
    if parquet is not None:
        return _import_parquet(parsed, Path(parquet), report)
    if db is None:
        raise TraceImportError("no destination: give a trace file or a Parquet directory")
    conn = connect(db, read_only=False)
    try:
        for f, kind, rows, episodes in parsed:
            conn.execute("BEGIN TRANSACTION")
            try:
                insert_rows(conn, rows, in_transaction=True)
                conn.execute("COMMIT")
            except Exception as exc:
                conn.execute("ROLLBACK")
                raise StoreError(f"{db}: could not store {f} ({' '.join(str(exc).split())[:200]})") from None
            report.files.append(FileResult(str(f), kind, len(rows), episodes))
    finally:
        conn.close()
    return report


def _import_parquet(parsed: list[tuple[Path, str, list[dict[str, Any]], int]], directory: Path,
                    report: ImportReport) -> ImportReport:
    """Each file's rows as new Parquet files in the dataset: all its partitions, or none of them.

    Rows pass the store's repair (a lone surrogate cannot go into Parquet either); they were
    redacted where they were built, as for the DuckDB file. A span already in the dataset is
    written again and read once (the dataset keeps the first export, as the file's key does).
    """
    import polars as pl

    from agentchaos_otel.store import parquet as dataset
    from agentchaos_otel.store.database.repair import repair_rows

    for f, kind, rows, episodes in parsed:
        try:
            dataset.write_rows(directory, repair_rows(rows))
        except (OSError, pl.exceptions.PolarsError) as exc:
            raise StoreError(f"{directory}: could not store {f} ({' '.join(str(exc).split())[:200]})") from None
        report.files.append(FileResult(str(f), kind, len(rows), episodes))
    return report
