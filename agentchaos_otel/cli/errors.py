"""One error style for every command: ``agentchaos: error: ...`` on one line, never a traceback.

Every command line of the project (``agentchaos`` and its areas, the standalone ``diagnose``)
is built with ``typer_app`` and started through ``entry``/``run_app``, so they all fail the same
way: one line on stderr, exit code 2 when the command line itself is wrong (unknown option, bad
or conflicting values) and 1 when a well-formed command could not do its job (missing or foreign
file, unreachable endpoint, data that does not allow it). ``AGENTCHAOS_DEBUG=1`` re-raises instead,
to show the traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import typer
from typer._click import exceptions as click_exc  # typer vendors click; its parse errors live here

from agentchaos_otel.errors import FAILURE, USAGE, CLIError, UsageError, usage_error

__all__ = ["CLIError", "UsageError", "usage_error", "fail", "usage", "user_errors", "typer_app", "run_app", "entry"]

PREFIX = "agentchaos: error: "
DEBUG_ENV = "AGENTCHAOS_DEBUG"


def exit_code(exc: BaseException) -> int:
    return exc.code if isinstance(exc, CLIError) else FAILURE


def _one_line(message: object) -> str:
    text = " ".join(str(message).split())
    return text or "failed"


def _debug() -> bool:
    return os.environ.get(DEBUG_ENV, "").strip() not in ("", "0", "false", "no")


def echo_error(message: object) -> None:
    typer.echo(PREFIX + _one_line(message), err=True)


def fail(message: object, code: int | None = None) -> NoReturn:
    """Print the one error line and leave the command with ``code`` (1 failure, 2 usage).

    ``message`` may be the exception itself: its code is then used unless one is given, and with
    AGENTCHAOS_DEBUG=1 it is raised instead, traceback and all.
    """
    if isinstance(message, BaseException) and _debug():
        raise message
    echo_error(message)
    raise typer.Exit(code if code is not None else exit_code(message) if isinstance(message, BaseException)
                     else FAILURE)


def usage(message: object) -> NoReturn:
    fail(message, USAGE)


@contextmanager
def user_errors(*extra: type[BaseException]) -> Iterator[None]:
    """Known failures inside the block (ours, ValueError, OSError, ``extra``) become the one line."""
    try:
        yield
    except (CLIError, ValueError, OSError, *extra) as exc:
        fail(exc)


def typer_app(**kwargs: Any) -> typer.Typer:
    """A ``typer.Typer`` with the project's settings (no completion, no pretty tracebacks)."""
    kwargs.setdefault("no_args_is_help", True)
    kwargs.setdefault("add_completion", False)
    kwargs.setdefault("pretty_exceptions_enable", False)
    return typer.Typer(**kwargs)


def run_app(app: typer.Typer, prog: str, args: list[str] | None = None) -> int:
    """Run a typer app; usage errors and failures print one line, and the exit code comes back."""
    command = typer.main.get_command(app)
    try:
        result = command.main(args=args, prog_name=prog, standalone_mode=False)
        if isinstance(result, int) and not isinstance(result, bool):
            return result  # without standalone mode, an Exit's code comes back as the return value
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        echo_error("aborted")
        return 130
    except click_exc.NoArgsIsHelpError as exc:
        typer.echo(exc.format_message(), err=True)  # no arguments: the help, as usage
        return USAGE
    except click_exc.ClickException as exc:
        if not exc.format_message().strip():
            return exc.exit_code  # "no arguments: show help" has already printed the help
        hint = ""
        if isinstance(exc, click_exc.UsageError) and exc.ctx is not None:
            hint = f" (see '{exc.ctx.command_path} --help')"
        echo_error(f"{exc.format_message()}{hint}")
        return USAGE if isinstance(exc, click_exc.UsageError) else FAILURE
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        # Our input errors (PlanError, StoreError, unknown faults...) are ValueErrors with a message
        # written for the user; anything else is named by its type so it can be reported.
        if _debug():
            raise
        known = isinstance(exc, (CLIError, ValueError, OSError))
        echo_error(exc if known else f"unexpected {type(exc).__name__}: {exc} (set {DEBUG_ENV}=1 for the "
                                     "traceback)")
        return exit_code(exc)
    return 0


def entry(app: typer.Typer, prog: str) -> Callable[[], Any]:
    """A console-script ``main`` for ``app``."""

    def main() -> None:
        sys.exit(run_app(app, prog))

    return main
