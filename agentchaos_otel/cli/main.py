"""The ``agentchaos`` command: every area mounted once, as a typer sub-app.

Areas are real sub-apps (``add_typer``), so ``--help`` and shell completion work at every level.
Their modules import only typer and the CLI helpers at import time; DuckDB, the OTel SDK, the
campaign and analysis code load inside the command that needs them. ``diagnose`` and ``predict``
come from the ``agentchaos_otel.commands`` entry points of the analysis packages, which the core
never imports by name.
"""

from __future__ import annotations

import typer

from agentchaos_otel import plugins
from agentchaos_otel.cli import bfcl, campaign, faults, sim, traces
from agentchaos_otel.cli.app import typer_app
from agentchaos_otel.cli.demo import demo_cmd
from agentchaos_otel.cli.errors import entry
from agentchaos_otel.cli.report import report_cmd
from agentchaos_otel.errors import UserError

app = typer_app(help="Chaos engineering and fault diagnosis for LLM agents, on OpenTelemetry.",
                add_completion=True)
app.add_typer(faults.app, name="faults")
app.add_typer(traces.app, name="traces")
app.add_typer(campaign.app, name="campaign")
app.command("report")(report_cmd)
app.command("demo")(demo_cmd)
app.add_typer(sim.app, name="sim")
app.add_typer(bfcl.app, name="bfcl")



def _unavailable(name: str, exc: Exception) -> typer.Typer:
    """A stand-in for an area whose package cannot be imported: it says why when used."""
    stub = typer_app(help=f"(unavailable: {type(exc).__name__})", no_args_is_help=False)

    @stub.callback(invoke_without_command=True)
    def _explain() -> None:
        raise UserError(f"'{name}' cannot be loaded ({type(exc).__name__}: {exc}); install agentchaos-otel "
                        "with its analysis packages")

    return stub


# Areas the analysis packages register (``diagnose``, ``predict``); a user's package can add more.
_CORE = {info.name for info in app.registered_groups} | {c.name for c in app.registered_commands}
for _name, _ep in sorted(plugins.available(plugins.COMMANDS).items()):
    if _name in _CORE:
        continue
    try:
        _sub = _ep.load()
    except Exception as _exc:  # a broken plug-in must not take the other commands down
        _sub = _unavailable(_name, _exc)
    app.add_typer(_sub, name=_name)

main = entry(app, "agentchaos")
