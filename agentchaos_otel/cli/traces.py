"""``agentchaos traces import | export | sql | receive-grpc``: the store's way in and out.

Registered on the ``traces`` group of ``cli/main.py`` by :func:`register`; every import of a
heavy module happens inside the command so ``agentchaos --help`` stays fast.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from agentchaos_otel.cli.errors import usage_error

console = Console()

DbOpt = Annotated[Path, typer.Option("--db", help="Trace file (created if missing).")]


def _import(
    paths: Annotated[list[Path], typer.Argument(help="Files or directories (searched recursively).",
                                                show_default=False)],
    db: DbOpt = Path("traces.duckdb"),
    fmt: Annotated[str | None, typer.Option("--format", help="otlp-json | otlp-protobuf | openinference | "
                                                             "messages (default: detected per file).")] = None,
    parquet: Annotated[Path | None, typer.Option(help="Write hive-partitioned Parquet (date, service) into this "
                                                      "directory instead of --db.", show_default=False)] = None,
) -> None:
    """Load OTLP JSON / JSON Lines / protobuf, OpenInference (Phoenix) spans or message-list trajectories."""
    from agentchaos_otel.store.importers.trace_files import import_paths

    report = import_paths(paths, None if parquet is not None else db, fmt, parquet=parquet)
    table = Table(title=f"imported {report.spans} spans into {parquet if parquet is not None else db}")
    for col in ("file", "format", "spans", "episodes built"):
        table.add_column(col, overflow="fold")
    for f in report.files:
        table.add_row(f.path, f.format, str(f.spans), str(f.episodes) if f.format == "messages" else "")
    console.print(table)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _sql(
    db: Annotated[Path, typer.Argument(help="A traces.duckdb file.", show_default=False)],
    query: Annotated[str, typer.Argument(help="SQL over spans and the views (read-only).", show_default=False)],
    as_csv: Annotated[bool, typer.Option("--csv", help="Print CSV instead of a table.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON rows instead of a table.")] = False,
    max_rows: Annotated[int | None, typer.Option("--max-rows", min=1, help="Show at most N rows.")] = None,
) -> None:
    """Run one SQL query on a trace file opened read-only (no duckdb command needed)."""
    import duckdb

    from agentchaos_otel.store.database.connect import StoreError, open_store

    with open_store(db, read_only=True) as conn:
        try:
            cur = conn.execute(query)
            cols = [d[0] for d in cur.description or []]
            rows = cur.fetchmany(max_rows) if max_rows else cur.fetchall()
        except duckdb.Error as exc:
            raise StoreError(f"query failed: {' '.join(str(exc).split())[:300]}") from None
    if as_json:
        typer.echo(json.dumps([dict(zip(cols, r, strict=True)) for r in rows], indent=2, default=str))
    elif as_csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(cols)
        writer.writerows([[_cell(v) for v in r] for r in rows])
    else:
        table = Table(caption=f"{len(rows)} row(s)")
        for c in cols:
            table.add_column(c, overflow="fold")
        for r in rows:
            table.add_row(*[_cell(v) for v in r])
        console.print(table)


def _receive_grpc(
    db: DbOpt = Path("traces.duckdb"),
    port: Annotated[int, typer.Option(min=0, max=65535, help="Loopback port (0 picks a free one).")] = 4317,
    seconds: Annotated[float | None, typer.Option(help="Stop after this many seconds (default: until Ctrl-C).")] = None,
) -> None:
    """Receive OTLP/gRPC traces from any agent on loopback and store them in DuckDB."""
    import os
    import time

    os.environ.setdefault("GRPC_VERBOSITY", "NONE")  # a busy port is our one-line error, not gRPC's log

    from agentchaos_otel.store.receivers.otlp_grpc import OTLPGrpcReceiver

    with OTLPGrpcReceiver(str(db), port=port) as receiver:
        console.print(f"listening: OTEL_EXPORTER_OTLP_PROTOCOL=grpc "
                      f"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT={receiver.endpoint}  →  {db}")
        deadline = None if seconds is None else time.monotonic() + seconds
        try:
            while deadline is None or time.monotonic() < deadline:
                time.sleep(0.2)
        except KeyboardInterrupt:
            pass
        console.print(f"received {receiver.received} spans")


def _headers(values: list[str] | None) -> dict[str, str] | None:
    out = {}
    for v in values or []:
        key, sep, value = v.partition("=")
        if not sep or not key.strip():
            raise usage_error(f"--header {v!r} is not KEY=VALUE")
        out[key.strip()] = value.strip()
    return out or None


def _export(
    db: Annotated[Path, typer.Argument(help="A traces.duckdb file.", show_default=False)],
    endpoint: Annotated[str | None, typer.Option(help="OTLP endpoint URL (default: OTEL_EXPORTER_OTLP_"
                                                      "[TRACES_]ENDPOINT, else the SDK's localhost default).")]
    = None,
    protocol: Annotated[str | None, typer.Option(help="grpc | http/protobuf (default: OTEL_EXPORTER_OTLP_"
                                                      "[TRACES_]PROTOCOL, else http/protobuf).")] = None,
    header: Annotated[list[str] | None, typer.Option("--header", help="KEY=VALUE sent with every request "
                                                                      "(repeatable; default: the OTLP headers "
                                                                      "variables).")] = None,
    diagnose: Annotated[str, typer.Option(help="auto (stored diagnoses, else the rule diagnoser now) | stored | "
                                               "rule | none.")] = "auto",
    timeout: Annotated[float | None, typer.Option(min=0.1, help="Seconds per request.")] = None,
) -> None:
    """Replay stored traces to any OTLP backend with original ids and timings, plus diagnoses and predictions."""
    from agentchaos_otel.otlp_exporters import span_exporter_from_env
    from agentchaos_otel.trace.redacting import RedactingSpanExporter
    from agentchaos_otel.traces_export import replay

    if not db.exists():
        raise ValueError(f"no such file: {db}")
    exporter = RedactingSpanExporter(span_exporter_from_env(endpoint=endpoint, protocol=protocol,
                                                            headers=_headers(header), timeout=timeout))
    try:
        summary = replay(db, exporter, diagnose=diagnose)
    finally:
        exporter.shutdown()
    console.print(f"exported {summary.spans} spans of {summary.traces} traces; {summary.diagnoses} diagnoses "
                  f"({summary.diagnoses_source}) and {summary.predictions} step predictions attached")


def register(traces_app: typer.Typer) -> None:
    traces_app.command("export")(_export)
    traces_app.command("import")(_import)
    traces_app.command("sql")(_sql)
    traces_app.command("receive-grpc")(_receive_grpc)
