"""``agentchaos traces import``: trace files from elsewhere into traces.duckdb, whatever their format.

A fleet exports through the user's Collector (file exporter: OTLP JSON Lines or protobuf),
Phoenix holds OpenInference spans, and many agent harnesses only save the conversation. Each file
(or each directory, recursively) is sniffed, parsed by the module for its format
(``otlp_files``, ``openinference``, ``trajectories``) into rows of the ``spans`` table, and
stored in committed batches once every file has been checked, so a bad file stops the import before
anything is written and the error names the file and line. Files are read record by record
(``.gz`` decompressed as they are read, with a bound), so memory holds one record and one batch
of rows whatever the file's size.
"""

from __future__ import annotations

import codecs
import gzip
import io
import itertools
import json
import os
import struct
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from agentchaos_otel.errors import UsageError, directory_as_store, no_such_file, unknown
from agentchaos_otel.store.database.connect import StoreError, connect
from agentchaos_otel.store.exporter import insert_rows
from agentchaos_otel.store.importers import openinference, otlp_files, trajectories
from agentchaos_otel.store.receivers.otlp_http import BadPayload, rows_from_protobuf

MAX_FILE_BYTES = 1 << 30  # decompressed bytes of one file: a gzip bomb stops here
# What the importer holds at a time: one record (a JSON Lines line, a whole JSON document or one
# protobuf message, decompressed) and one batch of rows. Peak memory follows these, not the file.
MAX_RECORD_BYTES = 16 << 20
BATCH_ROWS = 5000
IMPORT_MEMORY = "128MB"  # DuckDB's share while storing (its buffers and the primary-key index spill beyond)
SUFFIXES = (".json", ".jsonl", ".ndjson", ".pb", ".binpb", ".protobuf", ".otlp", ".proto", ".parquet")
FORMATS = ("otlp-json", "otlp-protobuf", "openinference", "messages")
_SNIFF_BYTES = 1 << 16
_WHITESPACE = b" \t\r\n\xef\xbb\xbf"  # and a UTF-8 byte order mark


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


def _mib(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


class _Bounded(io.RawIOBase):
    """A file's decompressed bytes, refused past ``MAX_FILE_BYTES`` (gzip undone on the way)."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._raw: IO[bytes] = open(path, "rb")  # noqa: SIM115 - closed in close()
        self._src: IO[bytes] = self._raw
        if path.suffix == ".gz" or self._raw.read(2) == b"\x1f\x8b":
            self._raw.seek(0)
            self._src = gzip.GzipFile(fileobj=self._raw, mode="rb")
        else:
            self._raw.seek(0)
        self.total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            n = self._src.readinto(buffer)  # type: ignore[attr-defined]
        except (OSError, EOFError, zlib.error) as exc:
            raise TraceImportError(f"{self.path}: bad gzip data ({exc})") from None
        self.total += n or 0
        if self.total > MAX_FILE_BYTES:
            raise TraceImportError(f"{self.path}: decompresses to more than {_mib(MAX_FILE_BYTES)}")
        return n or 0

    def close(self) -> None:
        try:
            if self._src is not self._raw:
                self._src.close()
            self._raw.close()
        finally:
            super().close()


def _open(path: Path) -> io.BufferedReader:
    return io.BufferedReader(_Bounded(path), buffer_size=_SNIFF_BYTES)


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


def _looks_like_text(head: bytes) -> bool:
    """JSON, not protobuf: the first bytes are UTF-8 (a character cut by the sniff window is fine),
    or the first non-blank byte opens a JSON object or array (invalid UTF-8 further on is then said
    as such, not as a protobuf wire-format error)."""
    if head.lstrip(_WHITESPACE)[:1] in (b"{", b"["):
        return True
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return bool(head)


class FileParse:
    """One file, parsed record by record into batches of ``spans`` rows.

    ``format`` and ``episodes`` are known once ``batches()`` has been consumed; every error is a
    ``TraceImportError`` naming the file (and the line of a JSON Lines file).
    """

    def __init__(self, path: Path, fmt: str | None = None) -> None:
        self.path, self.fmt = path, fmt
        self.format: str | None = None
        self.episodes = 0
        self._pending: list[dict[str, Any]] = []
        self._phoenix: list[Any] = []

    def batches(self) -> Iterator[list[dict[str, Any]]]:
        if self.path.suffix == ".parquet":
            yield from self._parquet()
            return
        with _open(self.path) as stream:
            head = stream.peek(_SNIFF_BYTES)[:_SNIFF_BYTES]
            if self.fmt == "otlp-protobuf" or (self.fmt is None and not _looks_like_text(head)):
                yield from self._protobuf(stream)
            elif not _looks_like_text(head):
                raise TraceImportError(f"{self.path}: not UTF-8 text, and --format {self.fmt} is a JSON format")
            else:
                yield from self._json(stream)
        if self.format is None:
            raise TraceImportError(f"{self.path}: empty")

    # --- JSON, JSON Lines ----------------------------------------------------------------------

    def _json(self, stream: io.BufferedReader) -> Iterator[list[dict[str, Any]]]:
        first = self._line(stream, 1)
        try:
            value = json.loads(first) if first.strip() else None
        except json.JSONDecodeError:
            value = None  # the first line of a document spread over lines: read it whole
        except RecursionError:
            raise self._too_deep(1) from None
        if value is None and first.strip():
            text = first + self._rest(stream)
            yield from self._records([(0, text)])
        else:
            multi = bool(stream.peek(1))
            lines = itertools.chain([(1, first)], ((n, self._line(stream, n)) for n in itertools.count(2)))
            yield from self._records(itertools.takewhile(lambda nl: nl[1] is not None, lines), multi=multi)
        yield from self._flush()

    def _line(self, stream: io.BufferedReader, n: int) -> Any:
        """Line ``n`` as text (None past the end); one longer than ``MAX_RECORD_BYTES`` is refused."""
        raw = stream.readline(MAX_RECORD_BYTES + 1)
        if not raw:
            return None if n > 1 else ""
        if len(raw) > MAX_RECORD_BYTES:
            raise TraceImportError(f"{self.path} line {n}: longer than {_mib(MAX_RECORD_BYTES)}, the most one JSON "
                                   "record may take (write big exports as JSON Lines, one request per line)")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TraceImportError(f"{self.path} line {n}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at "
                                   f"offset {exc.start}); JSON files must be UTF-8") from None

    def _rest(self, stream: io.BufferedReader) -> str:
        """The rest of a document spread over lines, whole: it is one record, bounded as one."""
        data = stream.read(MAX_RECORD_BYTES + 1)
        if len(data) > MAX_RECORD_BYTES:
            raise TraceImportError(f"{self.path}: a JSON document larger than {_mib(MAX_RECORD_BYTES)}, the most one "
                                   "JSON record may take (write big exports as JSON Lines, one request per line)")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TraceImportError(f"{self.path}: not UTF-8 text (byte 0x{data[exc.start]:02x}); JSON files "
                                   "must be UTF-8") from None

    def _too_deep(self, line: int) -> TraceImportError:
        where = f" line {line}" if line > 1 else ""
        return TraceImportError(f"{self.path}{where}: nested too deep to parse (deeper than Python's recursion "
                                "limit)")

    def _records(self, lines: Iterable[tuple[int, str]], multi: bool = False) -> Iterator[list[dict[str, Any]]]:
        for n, text in lines:
            if not text.strip():
                continue
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                detail = f"line {n}: {exc.msg}" if n and multi else exc.msg
                raise TraceImportError(f"{self.path}: not JSON or JSON Lines ({detail})") from None
            except RecursionError:
                raise self._too_deep(n) from None
            try:
                self._add(value)
            except RecursionError:
                raise self._too_deep(n) from None
            except (BadPayload, KeyError, TypeError, AttributeError) as exc:
                where = f" line {n}" if n and (multi or n > 1) else ""
                raise TraceImportError(f"{self.path}{where}: {exc}") from None
            if len(self._pending) >= BATCH_ROWS:
                yield self._take()

    def _add(self, value: Any) -> None:
        for item in _items(value):
            kind = detect(item) if self.fmt is None else self.fmt
            if self.format is None:
                self.format = kind
            elif kind != self.format:
                raise BadPayload(f"mixes {self.format} and {kind} records")
            if kind == "otlp-json":
                self._pending.extend(otlp_files.rows_from_json_doc(item))
            elif kind == "messages":
                self._pending.extend(trajectories.rows_from_trajectory(item, source=self.path.name,
                                                                       base_ns=self.path.stat().st_mtime_ns))
                self.episodes += 1
            else:
                self._phoenix.append(item)
                if len(self._phoenix) >= BATCH_ROWS:
                    self._pending.extend(openinference.rows_from_phoenix(self._phoenix))
                    self._phoenix = []

    def _take(self) -> list[dict[str, Any]]:
        rows, self._pending = self._pending, []
        return rows

    def _flush(self) -> Iterator[list[dict[str, Any]]]:
        if self._phoenix:
            try:
                self._pending.extend(openinference.rows_from_phoenix(self._phoenix))
            except (BadPayload, KeyError, TypeError, AttributeError) as exc:
                raise TraceImportError(f"{self.path}: {exc}") from None
            self._phoenix = []
        if self._pending:
            yield self._take()

    # --- protobuf ------------------------------------------------------------------------------

    def _protobuf(self, stream: io.BufferedReader) -> Iterator[list[dict[str, Any]]]:
        """One serialized message (at most ``MAX_RECORD_BYTES``), or the Collector's stream of
        length-prefixed messages, read one message at a time."""
        data = stream.read(MAX_RECORD_BYTES + 1)
        try:
            if len(data) <= MAX_RECORD_BYTES:
                rows = otlp_files.rows_from_protobuf_file(data)
                self.format = "otlp-protobuf"
                for i in range(0, len(rows), BATCH_ROWS):
                    yield rows[i:i + BATCH_ROWS]
                return
            for message in self._messages(data, stream):
                self._pending.extend(rows_from_protobuf(message))
                self.format = "otlp-protobuf"
                if len(self._pending) >= BATCH_ROWS:
                    yield self._take()
        except BadPayload as exc:
            raise TraceImportError(f"{self.path}: {exc}") from None
        yield from self._flush()

    def _messages(self, data: bytes, stream: io.BufferedReader) -> Iterator[bytes]:
        buffer = memoryview(data)
        while True:
            if len(buffer) < 4:
                buffer = memoryview(bytes(buffer) + stream.read(4 - len(buffer)))
                if not buffer:
                    return
                if len(buffer) < 4:
                    raise BadPayload("truncated length-prefixed protobuf stream")
            (size,) = struct.unpack(">I", buffer[:4])
            if size == 0 or size > MAX_RECORD_BYTES:
                raise BadPayload(f"larger than {_mib(MAX_RECORD_BYTES)} and not a stream of length-prefixed "
                                 f"messages of at most {_mib(MAX_RECORD_BYTES)} each")
            body = bytes(buffer[4:4 + size])
            buffer = buffer[4 + len(body):]
            if len(body) < size:
                body += stream.read(size - len(body))
                if len(body) < size:
                    raise BadPayload("truncated length-prefixed protobuf stream")
            yield body

    # --- Parquet (Phoenix's get_spans_dataframe().to_parquet) ------------------------------------

    def _parquet(self) -> Iterator[list[dict[str, Any]]]:
        import duckdb

        try:
            with duckdb.connect() as conn:
                cur = conn.execute("SELECT * FROM read_parquet(?)", [str(self.path)])
                cols = [d[0] for d in cur.description or []]
                while batch := cur.fetchmany(BATCH_ROWS):
                    records = [dict(zip(cols, r, strict=True)) for r in batch]
                    if self.format is None and not openinference.is_phoenix_span(records[0]):
                        raise TraceImportError(f"{self.path}: a Parquet import must be OpenInference spans "
                                               "(context.span_id column)")
                    self.format = "openinference"
                    try:
                        rows = openinference.rows_from_phoenix(records)
                    except (BadPayload, KeyError, TypeError, AttributeError) as exc:
                        raise TraceImportError(f"{self.path}: {exc}") from None
                    yield rows
        except duckdb.Error as exc:
            raise TraceImportError(f"{self.path}: not a readable Parquet file "
                                   f"({' '.join(str(exc).split())[:200]})") from None
        if self.format is None:
            raise TraceImportError(f"{self.path}: a Parquet import must be OpenInference spans (context.span_id "
                                   "column)")


def import_paths(paths: Iterable[str | os.PathLike[str]], db: str | os.PathLike[str] | None,
                 fmt: str | None = None, *, parquet: str | os.PathLike[str] | None = None) -> ImportReport:
    """Import every file; a file that cannot be read stops the import before anything is written.

    Files are read twice, record by record: first to check every one of them (nothing is kept),
    then to store their rows in committed batches of ``BATCH_ROWS``. Memory holds one record
    (``MAX_RECORD_BYTES``) and one batch, and DuckDB works within ``IMPORT_MEMORY``, whatever the
    size of the files; the check costs a second parse. Should the store fail part way (a full
    disk), the batches already committed stay, and importing the same files again adds only the
    rest (a span is stored once).

    ``parquet``: write hive-partitioned Parquet (by date and service, ``store/parquet.py``)
    into that directory instead of a DuckDB file; ``diagnose``, ``predict`` and ``report`` read
    the directory as one dataset.
    """
    if fmt is not None and fmt not in FORMATS:
        raise TraceImportError(unknown("format", fmt, FORMATS))
    if parquet is not None and Path(parquet).exists() and not Path(parquet).is_dir():
        raise TraceImportError(f"{parquet}: exists and is not a directory (--parquet takes a dataset directory)")
    if parquet is None and db is None:
        raise TraceImportError("no destination: give a trace file or a Parquet directory")
    if parquet is None and db is not None and Path(db).is_dir():
        raise UsageError(directory_as_store(db))
    files = expand(paths)
    if not files:
        raise TraceImportError("no trace files found")
    for f in files:  # every file checked before anything is written
        for _ in FileParse(f, fmt).batches():
            pass
    report = ImportReport()
    sink: _Sink = _ParquetSink(Path(parquet)) if parquet is not None else _DuckDBSink(Path(db))  # type: ignore[arg-type]
    try:
        for f in files:
            parse = FileParse(f, fmt)
            n = 0
            for rows in parse.batches():
                sink.write(f, rows)
                n += len(rows)
            report.files.append(FileResult(str(f), str(parse.format), n, parse.episodes))
    finally:
        sink.close()
    return report


class _Sink:
    def write(self, source: Path, rows: list[dict[str, Any]]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class _DuckDBSink(_Sink):
    """Each batch committed into the store, opened at the first batch with DuckDB's memory bounded."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.conn: Any = None

    def write(self, source: Path, rows: list[dict[str, Any]]) -> None:
        if self.conn is None:
            self.conn = connect(self.db, read_only=False)
            self.conn.execute(f"SET memory_limit = '{IMPORT_MEMORY}'")
        try:
            self.conn.execute("BEGIN TRANSACTION")
            insert_rows(self.conn, rows, in_transaction=True)
            self.conn.execute("COMMIT")
        except Exception as exc:
            self.conn.execute("ROLLBACK")
            raise StoreError(f"{self.db}: could not store {source} ({' '.join(str(exc).split())[:200]})") from None

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.execute("RESET memory_limit")
            finally:
                self.conn.close()
                self.conn = None


class _ParquetSink(_Sink):
    """Each batch as new Parquet files of the dataset."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def write(self, source: Path, rows: list[dict[str, Any]]) -> None:
        import polars as pl

        from agentchaos_otel.store import parquet as dataset
        from agentchaos_otel.store.database.repair import repair_rows

        try:
            dataset.write_rows(self.directory, repair_rows(rows))
        except (OSError, pl.exceptions.PolarsError) as exc:
            raise StoreError(f"{self.directory}: could not store {source} "
                             f"({' '.join(str(exc).split())[:200]})") from None
