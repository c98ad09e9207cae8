"""``agentchaos traces summary | sql | import | export | receive | receive-grpc``: a store's way in and out.

Every import of a heavy module (DuckDB, the receivers, the OTel exporters) happens inside the
command, so building the command tree for ``agentchaos --help`` stays fast.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from agentchaos_otel import settings
from agentchaos_otel.cli.app import choice, typer_app
from agentchaos_otel.cli.choices import DiagnoseMode, Format, Protocol
from agentchaos_otel.cli.notes import note_spooled
from agentchaos_otel.cli.waiting import wait_for_stop
from agentchaos_otel.errors import UsageError, UserError, directory_as_store, no_such_file

app = typer_app(help="Inspect, import, export and receive traces.duckdb files.")

DbArg = Annotated[Path, typer.Argument(help="A traces.duckdb file.", show_default=False)]
DbOpt = Annotated[Path, typer.Option("--db", help="Trace file (created if missing).")]
HostOpt = Annotated[str, typer.Option(help="Address to listen on; beyond loopback (e.g. 0.0.0.0) a --token is "
                                          "required.")]
TokenOpt = Annotated[str | None, typer.Option(envvar=settings.RECEIVER_TOKEN.name, show_default=False,
                                              help="Bearer token every sender must present (Authorization: Bearer "
                                                   "TOKEN; OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20TOKEN).")]
SecondsOpt = Annotated[float | None, typer.Option(help="Stop after this many seconds (default: until Ctrl-C "
                                                       "or SIGTERM).")]


@app.command("summary")
def summary_cmd(
    db: DbArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Counts of episodes, calls and faults, and success rates, in a trace file."""
    from agentchaos_otel.cli.render import print_summary
    from agentchaos_otel.store.read.summary import summarize
    from agentchaos_otel.terminal import data_console

    if not db.exists():
        raise FileNotFoundError(no_such_file(db))
    summary = summarize(str(db))
    note_spooled(db)
    if as_json:
        typer.echo(json.dumps(summary, indent=2, default=str))
    else:
        print_summary(data_console(), summary, title=str(db))


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


@app.command("sql")
def sql_cmd(
    db: DbArg,
    query: Annotated[str, typer.Argument(help="SQL over spans and the views (read-only).", show_default=False)],
    as_csv: Annotated[bool, typer.Option("--csv", help="Print CSV instead of a table (exact strings, as "
                                                       "--json).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON rows instead of a table.")] = False,
    max_rows: Annotated[int | None, typer.Option("--max-rows", min=1, help="Show at most N rows.")] = None,
) -> None:
    """Run SELECT queries on a trace file opened read-only (no duckdb command needed).

    Read-only means the store and nothing else: COPY, EXPORT, INSTALL, LOAD, ATTACH and any other
    statement than a query are refused before they run, and DuckDB's access to files beyond the
    store (read_text, read_csv, glob...) and to extensions is switched off for the connection.
    """
    import duckdb
    from rich.table import Table

    from agentchaos_otel.store.database.connect import StoreError, open_store
    from agentchaos_otel.terminal import data_console

    _only_queries(query)
    with open_store(db, read_only=True) as conn:
        _sandbox(conn, db)
        try:
            cur = conn.execute(query)
            cols = [d[0] for d in cur.description or []]
            rows = cur.fetchmany(max_rows) if max_rows else cur.fetchall()
        except duckdb.PermissionException:
            raise UserError("query failed: traces sql is read-only: files beyond the store and extensions "
                            "cannot be read") from None
        except duckdb.Error as exc:
            raise StoreError(f"query failed: {' '.join(str(exc).split())[:300]}") from None
    note_spooled(db)
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
        data_console().print(table)


# Statement types ``traces sql`` runs: a query (SHOW, DESCRIBE and SUMMARIZE parse as SELECT) or its plan.
_QUERY_TYPES = frozenset({"SELECT", "EXPLAIN"})


def _only_queries(query: str) -> None:
    """Refuse, before anything runs, a statement that is not a query (each of several is checked)."""
    import duckdb

    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as exc:
        raise UserError(f"query failed: {' '.join(str(exc).split())[:300]}") from None
    for statement in statements:
        if statement.type.name not in _QUERY_TYPES:
            keyword = (statement.query.split() or [statement.type.name])[0].upper()
            raise UserError(f"query failed: traces sql is read-only: {keyword} is refused (run SELECT, SHOW, "
                            "DESCRIBE or SUMMARIZE queries)")


def _sandbox(conn: Any, db: Path) -> None:
    """No file access beyond the store (a Parquet dataset's own directory), no extensions, for good."""
    if db.is_dir():
        conn.execute("SET allowed_directories = ?", [[str(db.resolve()) + "/"]])
    conn.execute("SET enable_external_access = false")
    conn.execute("SET lock_configuration = true")


@app.command("import")
def import_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Files or directories (searched recursively).",
                                                show_default=False)],
    db: DbOpt = Path("traces.duckdb"),
    fmt: Annotated[Format | None, choice(Format, "--format", help="File format (default: detected per "
                                                                  "file).")] = None,
    parquet: Annotated[Path | None, typer.Option(help="Write hive-partitioned Parquet (date, service) into this "
                                                      "directory instead of --db.", show_default=False)] = None,
) -> None:
    """Load OTLP JSON / JSON Lines / protobuf, OpenInference (Phoenix) spans or message-list trajectories."""
    from rich.table import Table

    from agentchaos_otel.store.importers.trace_files import import_paths
    from agentchaos_otel.terminal import data_console

    report = import_paths(paths, None if parquet is not None else db, None if fmt is None else fmt.value,
                          parquet=parquet)
    table = Table(title=f"imported {report.spans} spans into {parquet if parquet is not None else db}")
    for col in ("file", "format", "spans", "episodes built"):
        table.add_column(col, overflow="fold")
    for f in report.files:
        table.add_row(f.path, f.format, str(f.spans), str(f.episodes) if f.format == "messages" else "")
    data_console().print(table)


def _headers(values: list[str] | None) -> dict[str, str] | None:
    out = {}
    for v in values or []:
        key, sep, value = v.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--header {v!r} is not KEY=VALUE")
        out[key.strip()] = value.strip()
    return out or None


@app.command("export")
def export_cmd(
    db: DbArg,
    endpoint: Annotated[str | None, typer.Option(help="OTLP endpoint URL (default: OTEL_EXPORTER_OTLP_"
                                                      "[TRACES_]ENDPOINT, else the SDK's localhost default).")]
    = None,
    protocol: Annotated[Protocol | None, choice(Protocol, "--protocol", help="OTLP protocol (default: "
                                                "OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL, else http/protobuf).")]
    = None,
    header: Annotated[list[str] | None, typer.Option("--header", help="KEY=VALUE sent with every request "
                                                                      "(repeatable; default: the OTLP headers "
                                                                      "variables).")] = None,
    diagnose: Annotated[DiagnoseMode, choice(DiagnoseMode, "--diagnose", help="Diagnoses to attach: auto "
                                             "(stored ones, else the rule diagnoser now), stored, rule or "
                                             "none.")] = DiagnoseMode.auto,
    timeout: Annotated[float | None, typer.Option(min=0.1, help="Seconds per request.")] = None,
    project: Annotated[str | None, typer.Option(show_default=False, help="Phoenix project: sets "
                                                "openinference.project.name (default: an x-project-name "
                                                "header, else OTEL_RESOURCE_ATTRIBUTES, else as stored).")]
    = None,
    phoenix: Annotated[str, typer.Option(help="auto: annotate when the OTLP/HTTP endpoint is Phoenix; off; or "
                                              "Phoenix's URL (needed with grpc).")] = "auto",
    phoenix_wait: Annotated[float, typer.Option(min=0.0, help="Seconds to wait for Phoenix to store the spans "
                                                              "before annotating them.")] = 60.0,
) -> None:
    """Replay stored traces to any OTLP backend with original ids and timings, plus diagnoses and predictions."""
    from agentchaos_otel.terminal import data_console
    from agentchaos_otel.traces_export import export_file

    if not db.exists():
        raise FileNotFoundError(no_such_file(db))
    lines = export_file(db, endpoint=endpoint, protocol=None if protocol is None else protocol.value,
                        headers=_headers(header), timeout=timeout, diagnose=diagnose.value, project=project,
                        phoenix=phoenix, wait_s=phoenix_wait)
    for line in lines:
        data_console().print(line)
    note_spooled(db)


@app.command("receive")
def receive_cmd(
    db: Annotated[Path, typer.Option(help="Trace file to land spans in.")] = Path("traces.duckdb"),
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0 picks a free one).")] = 4318,
    host: HostOpt = "127.0.0.1",
    token: TokenOpt = None,
    seconds: SecondsOpt = None,
    parquet: Annotated[Path | None, typer.Option(help="Write hive-partitioned Parquet (date, service) into this "
                                                      "directory instead of --db.")] = None,
    workers: Annotated[int | None, typer.Option(min=0, help="Processes that parse requests beside the writer "
                                                            "(default: one per core, at most 4; 0 parses in "
                                                            "the receiver's process).")] = None,
    queue: Annotated[int | None, typer.Option(min=1, help="Requests that may wait for the writer; beyond it "
                                                          "senders get 503 with Retry-After (default: "
                                                          f"{settings.RECEIVER_QUEUE.name} or "
                                                          f"{settings.RECEIVER_QUEUE.default}).")] = None,
) -> None:
    """Receive OTLP/HTTP traces from any agent and store them in DuckDB (or Parquet).

    It listens on loopback unless told otherwise, answers only requests addressed to it (the Host
    header), and with a token only senders that present it. Ctrl-C or SIGTERM stops it cleanly:
    accepted spans are in the store before it exits.
    """
    from agentchaos_otel.store.receivers.access import needs_token
    from agentchaos_otel.store.receivers.otlp_http import OTLPReceiver
    from agentchaos_otel.store.receivers.parse_workers import default_workers
    from agentchaos_otel.terminal import data_console

    if parquet is None and db.is_dir():
        raise UsageError(directory_as_store(db))
    needs_token(host, token)
    console = data_console(soft_wrap=True)
    sink = None
    if parquet is not None:
        from agentchaos_otel.store.parquet import ParquetSpanSink

        sink = ParquetSpanSink(parquet)
    with OTLPReceiver(str(db), host=host, port=port, sink=sink, queue_size=queue, token=token,
                      workers=default_workers() if workers is None else workers) as receiver:
        console.print(f"listening: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT={receiver.endpoint}  →  {parquet or db}"
                      + ("  (bearer token required)" if token else ""))
        why = wait_for_stop(seconds)
    # Out of the block: the queue is drained and the journal loaded into the store by now.
    console.print(f"received {receiver.received} spans; stopped ({why})")
    note_spooled(db if parquet is None else None)


@app.command("receive-grpc")
def receive_grpc_cmd(
    db: DbOpt = Path("traces.duckdb"),
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0 picks a free one).")] = 4317,
    host: HostOpt = "127.0.0.1",
    token: TokenOpt = None,
    seconds: SecondsOpt = None,
) -> None:
    """Receive OTLP/gRPC traces from any agent (on loopback unless told otherwise) and store them in DuckDB."""
    import os

    os.environ.setdefault("GRPC_VERBOSITY", "NONE")  # a busy port is our one-line error, not gRPC's log

    from agentchaos_otel.store.receivers.access import needs_token
    from agentchaos_otel.store.receivers.otlp_grpc import OTLPGrpcReceiver
    from agentchaos_otel.terminal import data_console

    if db.is_dir():
        raise UsageError(directory_as_store(db))
    needs_token(host, token)
    console = data_console(soft_wrap=True)
    with OTLPGrpcReceiver(str(db), host=host, port=port, token=token) as receiver:
        console.print(f"listening: OTEL_EXPORTER_OTLP_PROTOCOL=grpc "
                      f"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT={receiver.endpoint}  →  {db}"
                      + ("  (bearer token required)" if token else ""))
        why = wait_for_stop(seconds)
    console.print(f"received {receiver.received} spans; stopped ({why})")
    note_spooled(db)
