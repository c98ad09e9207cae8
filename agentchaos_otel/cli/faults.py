"""``agentchaos faults list | show``: the fault catalog."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from agentchaos_otel.cli.app import choice, typer_app
from agentchaos_otel.cli.choices import Family
from agentchaos_otel.errors import UsageError

app = typer_app(help="The fault catalog.")


@app.command("list")
def faults_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print the catalog as JSON.")] = False,
    family: Annotated[Family | None, choice(Family, "--family", help="Only this family.")] = None,
) -> None:
    """Every fault configuration with its type, target, strategy and description."""
    from rich.table import Table

    from agentchaos_otel.faults.catalog import CATALOG
    from agentchaos_otel.terminal import data_console

    specs = [s for s in CATALOG.values() if family is None or s.family == family]
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
    data_console().print(table)


@app.command("show")
def faults_show(name: Annotated[str, typer.Argument(help="A catalog name, e.g. llm_error_single.")]) -> None:
    """Everything about one configuration."""
    from dataclasses import asdict

    from rich.text import Text

    from agentchaos_otel.faults.catalog import get_fault
    from agentchaos_otel.terminal import data_console

    try:
        spec = get_fault(name)
    except ValueError as exc:  # an unknown name (with a did-you-mean) is a bad argument
        raise UsageError(str(exc)) from None
    console = data_console()
    for key, value in asdict(spec).items():
        console.print(Text.assemble((key, "bold"), f": {dict(value) if key == 'params' else value}"))
