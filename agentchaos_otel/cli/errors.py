"""One error style for every command: ``agentchaos: error: ...`` on one line, never a traceback.

The API is the exceptions of ``agentchaos_otel.errors``: a command (or anything under it) raises
``UsageError`` when the command line is wrong (exit 2) and ``UserError`` when a well-formed
command could not do its job (exit 1); a ``ValueError`` or ``OSError`` from below counts as the
latter, with its message as written. Commands built with ``cli/app.py`` turn what they raise into
the one line through ``reported()``; ``run_app``/``entry`` do the same for the command-line
parser's own errors (unknown option, bad value). Anything else is a bug and is named by its type.
``AGENTCHAOS_DEBUG=1`` re-raises instead, to show the traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import typer
from typer._click import exceptions as click_exc  # typer vendors click; its parse errors live here

from agentchaos_otel import extras, settings
from agentchaos_otel.errors import FAILURE, USAGE, UserError
from agentchaos_otel.terminal import printable

__all__ = ["echo_error", "entry", "exit_code", "reported", "run_app"]

PREFIX = "agentchaos: error: "
_PASS_THROUGH = (typer.Exit, typer.Abort, click_exc.ClickException, KeyboardInterrupt, BrokenPipeError)


def _debug() -> bool:
    return settings.DEBUG.value()


def echo_error(message: object) -> None:
    """The one line on stderr; span text in a message cannot move the cursor or change the title."""
    text = " ".join(printable(str(message)).split()) or "failed"
    typer.echo(PREFIX + text, err=True)


def _line_and_code(exc: BaseException) -> tuple[str, int]:
    missing = extras.missing_line(exc, "this command")
    if missing is not None:  # an optional dependency: which extra brings it
        return missing, FAILURE
    if isinstance(exc, UserError):
        return str(exc) or type(exc).__name__, exc.code
    if isinstance(exc, (ValueError, OSError)):
        return str(exc) or type(exc).__name__, FAILURE
    return f"unexpected {type(exc).__name__}: {exc} (set {settings.DEBUG.name}=1 for the traceback)", FAILURE


@contextmanager
def reported() -> Iterator[None]:
    """What the block raises becomes the one error line and ``typer.Exit`` with its code."""
    try:
        yield
    except _PASS_THROUGH:
        raise
    except Exception as exc:
        if _debug():
            raise
        line, code = _line_and_code(exc)
        echo_error(line)
        raise typer.Exit(code) from None


def exit_code(run: Callable[[], Any]) -> int:
    """Call ``run`` (a command's ``main`` without standalone mode); the one error line, and the exit code."""
    try:
        result = run()
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
    except BrokenPipeError:  # the reader went away (``| head``): nothing to say, and nowhere to say it
        _silence_stdout()
        return 141
    except Exception as exc:  # raised outside a command (a callback, a parser) or under AGENTCHAOS_DEBUG
        if _debug():
            raise
        line, code = _line_and_code(exc)
        echo_error(line)
        return code
    return 0


def run_app(app: typer.Typer, prog: str, args: list[str] | None = None) -> int:
    """Run a typer app; usage errors and failures print one line, and the exit code comes back."""
    command = typer.main.get_command(app)
    return exit_code(lambda: command.main(args=args, prog_name=prog, standalone_mode=False))


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a captured stdout has no file descriptor
        pass


def entry(app: typer.Typer, prog: str) -> Callable[[], Any]:
    """A console-script ``main`` for ``app``."""

    def main() -> None:
        sys.exit(run_app(app, prog))

    return main
