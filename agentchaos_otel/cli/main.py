"""The ``agentchaos`` command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from agentchaos_otel import plugins
from agentchaos_otel.cli import traces as _traces_cli
from agentchaos_otel.cli.errors import entry, typer_app, usage_error

app = typer_app(help="Chaos engineering and fault diagnosis for LLM agents, on OpenTelemetry.")
faults_app = typer_app(help="The fault catalog.")
traces_app = typer_app(help="Inspect a traces.duckdb file.")
app.add_typer(faults_app, name="faults")
app.add_typer(traces_app, name="traces")

console = Console()


@faults_app.command("list")
def faults_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print the catalog as JSON.")] = False,
    family: Annotated[str | None, typer.Option(help="Only this family (agentchaos, compound, positional, variant, "
                                                    "http, stream).")] = None,
) -> None:
    """Every fault configuration with its type, target, strategy and description."""
    from agentchaos_otel.faults.catalog import CATALOG

    specs = [s for s in CATALOG.values() if family is None or s.family == family]
    if family is not None and not specs:
        families = sorted({s.family for s in CATALOG.values()})
        raise usage_error(f"unknown family {family!r}; expected one of {', '.join(families)}")
    if as_json:
        typer.echo(json.dumps([{"name": s.name, "type": s.fault_type, "target": s.target,
                                "strategy": s.strategy, "family": s.family,
                                "description": s.description} for s in specs], indent=2))
        return
    table = Table(title=f"{len(specs)} fault configurations")
    for col in ("name", "type", "target", "strategy", "description"):
        table.add_column(col, overflow="fold")
    for s in specs:
        table.add_row(s.name, s.fault_type, s.target, s.strategy, s.description)
    console.print(table)


@faults_app.command("show")
def faults_show(name: str) -> None:
    """Everything about one configuration."""
    from dataclasses import asdict

    from agentchaos_otel.faults.catalog import get_fault

    try:
        spec = get_fault(name)
    except ValueError as exc:  # an unknown name (with a did-you-mean) is a bad argument
        raise usage_error(str(exc)) from None
    for key, value in asdict(spec).items():
        console.print(f"[bold]{key}[/bold]: {dict(value) if key == 'params' else value}")


@traces_app.command("summary")
def traces_summary(
    db: Annotated[Path, typer.Argument(help="A traces.duckdb file.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Counts of episodes, calls and faults, and success rates, in a trace file."""
    from agentchaos_otel.cli.render import print_summary
    from agentchaos_otel.store.read.summary import summarize

    if not db.exists():
        raise ValueError(f"no such file: {db}")
    summary = summarize(str(db))
    if as_json:
        typer.echo(json.dumps(summary, indent=2, default=str))
    else:
        print_summary(console, summary, title=str(db))


@traces_app.command("receive")
def traces_receive(
    db: Annotated[Path, typer.Option(help="Trace file to land spans in.")] = Path("traces.duckdb"),
    port: Annotated[int, typer.Option(min=0, max=65535, help="Loopback port (0 picks a free one).")] = 4318,
    seconds: Annotated[float | None, typer.Option(help="Stop after this many seconds (default: until Ctrl-C).")] = None,
    parquet: Annotated[Path | None, typer.Option(help="Write hive-partitioned Parquet (date, service) into this "
                                                      "directory instead of --db.")] = None,
    workers: Annotated[int | None, typer.Option(min=0, help="Processes that parse requests beside the writer "
                                                            "(default: one per core, at most 4; 0 parses in "
                                                            "the receiver's process).")] = None,
    queue: Annotated[int | None, typer.Option(min=1, help="Requests that may wait for the writer; beyond it "
                                                          "senders get 503 with Retry-After (default: "
                                                          "AGENTCHAOS_RECEIVER_QUEUE or 64).")] = None,
) -> None:
    """Receive OTLP/HTTP traces from any agent on loopback and store them in DuckDB (or Parquet)."""
    import time

    from agentchaos_otel.store.receivers.otlp_http import OTLPReceiver
    from agentchaos_otel.store.receivers.parse_workers import default_workers

    sink = None
    if parquet is not None:
        from agentchaos_otel.store.parquet import ParquetSpanSink

        sink = ParquetSpanSink(parquet)
    with OTLPReceiver(str(db), port=port, sink=sink, queue_size=queue,
                      workers=default_workers() if workers is None else workers) as receiver:
        console.print(f"listening: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT={receiver.endpoint}  →  {parquet or db}")
        deadline = None if seconds is None else time.monotonic() + seconds
        try:
            while deadline is None or time.monotonic() < deadline:
                time.sleep(0.2)
        except KeyboardInterrupt:
            pass
        console.print(f"received {receiver.received} spans")


@app.command("demo")
def demo(
    db: Annotated[Path, typer.Option(help="Where to write traces.")] = Path("traces.duckdb"),
    episodes: Annotated[int, typer.Option(min=1, help="Number of episodes.")] = 40,
    seed: Annotated[int, typer.Option(help="Seed of every random choice.")] = 0,
    workers: Annotated[int, typer.Option(min=1, max=64)] = 8,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint (default: the bundled "
                                                     "simulated model).")] = None,
    model: Annotated[str | None, typer.Option(help="Model name for --base-url.")] = None,
    api_key_env: Annotated[str, typer.Option(help="Environment variable holding the API key.")] = "OPENAI_API_KEY",
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace --db if it exists.")] = False,
) -> None:
    """Run the reference agent under a spread of faults into a trace file and summarise it."""
    from agentchaos_otel.cli.demo import run_demo

    run_demo(db=db, episodes=episodes, seed=seed, workers=workers, base_url=base_url, model=model,
             api_key_env=api_key_env, console=console, overwrite=overwrite)


_LAZY_AREAS = {
    "campaign": ("agentchaos_otel.cli.campaign", "campaign_app",
                 "Robustness campaigns: tasks x fault conditions x seeds."),
    "report": ("agentchaos_otel.cli.campaign", "report_app",
               "Robustness report (tables, JSON, HTML plots) from a trace file."),
    "bfcl": ("agentchaos_otel.cli.bfcl", "app",
             "BFCL v4 multi-turn tasks (see `agentchaos campaign run --agent bfcl`)."),
    "sim": ("agentchaos_otel.cli.sim", "app", "Run the bundled SIMULATED model server (not a real LLM)."),
}


def _lazy_area(name: str, module: str, attr: str, help_text: str) -> None:
    """Register a command that imports its area only when used, so startup stays fast."""

    @app.command(name, help=help_text, add_help_option=False,
                 context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def _delegate(ctx: typer.Context) -> None:
        import importlib

        from agentchaos_otel.cli.errors import run_app

        sub = getattr(importlib.import_module(module), attr)
        code = run_app(sub, f"agentchaos {name}", list(ctx.args))
        if code:
            raise typer.Exit(code)


for _name, (_module, _attr, _help) in _LAZY_AREAS.items():
    _lazy_area(_name, _module, _attr, _help)

# Areas other packages register (``diagnose``, ``predict``): the core does not import them.
_PLUGIN_HELP = {"diagnose": "Name the fault type and step of every failed episode.",
                "predict": "Early failure warning from external signals and logprob entropy."}
for _name, _ep in sorted(plugins.available(plugins.COMMANDS).items()):
    if _name not in _LAZY_AREAS:
        _module, _, _attr = _ep.value.partition(":")
        _lazy_area(_name, _module, _attr, _PLUGIN_HELP.get(_name, f"{_name} (from {_module})"))

_traces_cli.register(traces_app)

main = entry(app, "agentchaos")
