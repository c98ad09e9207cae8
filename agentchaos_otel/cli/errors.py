"""One-line errors for every command: bad input is reported, never a traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import typer
from typer._click import exceptions as click_exc  # typer vendors click; its parse errors live here


class CLIError(Exception):
    """An error whose message is meant for the user as is."""


def fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def run_app(app: typer.Typer, prog: str, args: list[str] | None = None) -> int:
    """Run a typer app so usage errors and known failures print one line and exit non-zero."""
    command = typer.main.get_command(app)
    try:
        result = command.main(args=args, prog_name=prog, standalone_mode=False)
        if isinstance(result, int) and not isinstance(result, bool):
            return result  # without standalone mode, an Exit's code comes back as the return value
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        typer.echo("aborted", err=True)
        return 130
    except click_exc.ClickException as exc:
        if not exc.format_message().strip():
            return exc.exit_code  # "no arguments: show help" has already printed the help
        hint = ""
        if isinstance(exc, click_exc.UsageError) and exc.ctx is not None:
            hint = f" (see '{exc.ctx.command_path} --help')"
        typer.echo(f"{prog}: error: {exc.format_message()}{hint}", err=True)
        return exc.exit_code
    except (CLIError, ValueError, OSError) as exc:
        # Our input errors (PlanError, StoreError, unknown faults...) are ValueErrors with a
        # message written for the user; AGENTCHAOS_DEBUG=1 shows the traceback instead.
        if os.environ.get("AGENTCHAOS_DEBUG"):
            raise
        typer.echo(f"{prog}: error: {exc}", err=True)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


def entry(app: typer.Typer, prog: str) -> Callable[[], Any]:
    def main() -> None:
        sys.exit(run_app(app, prog))

    return main
