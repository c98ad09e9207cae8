"""The typer classes every command line of the project is built from.

``typer_app`` gives a ``typer.Typer`` whose groups and commands share three behaviours, whether
the app runs alone (the standalone ``diagnose``), mounted under ``agentchaos`` with ``add_typer``,
or under a test runner:

- errors: anything a command raises becomes the one ``agentchaos: error:`` line and its exit code
  (``cli/errors.py``), so a command never prints a traceback;
- help: usage lines name arguments in capitals (``DB``, not ``{db}``), flags and ``--help`` show
  no ``<bool>`` type, option values that come from a fixed set are listed;
- choices: ``choice(Enum, ...)`` is an option whose values are an Enum's, completed by the shell
  and refused with the project's wording (``unknown method 'x'; choose one of ...``).

Sub-apps are real typer groups mounted with ``add_typer``, so ``--help`` and shell completion work
at every level; modules that define them import only typer and these helpers at import time.
"""

from __future__ import annotations

import enum
import re
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from typer._click import Context  # typer vendors click
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from agentchaos_otel.cli.errors import exit_code, reported
from agentchaos_otel.errors import unknown

E = TypeVar("E", bound=enum.Enum)


_LIST_TYPE = re.compile(r"<list\[(.+)\]>")


def _one_value(label: str | None) -> str | None:
    """``<list[Path]>`` -> ``<path>``: a repeatable option or a variadic argument takes one value each."""
    return _LIST_TYPE.sub(lambda m: f"<{m.group(1).lower()}>", label) if label else label


def _quiet_types(command: Any, ctx: Context) -> list[str]:
    """Usage pieces with arguments in capitals; flags (and ``--help``) get no type column.

    Types are said per value (``<path>``, not typer's ``<list[Path]>``, a Python annotation).
    """
    pieces = [command.options_metavar] if command.options_metavar else []
    for param in command.get_params(ctx):
        if isinstance(param, TyperOption) and param.metavar is None and (param.is_flag or param.is_bool_flag):
            param.metavar = ""
        if isinstance(param, TyperOption) and param.metavar is None and param.multiple:
            param.metavar = _one_value(param.display_type(ctx))
        if isinstance(param, TyperArgument) and param.nargs != 1 and "display_type_rich" not in vars(param):
            typed = param.display_type_rich
            param.display_type_rich = lambda ctx, typed=typed: _one_value(typed(ctx))  # type: ignore[method-assign]
        if isinstance(param, TyperArgument):
            name = (param.metavar or param.name or "ARG").upper()
            if param.metavar is None:
                param.metavar = name
            piece = name if param.required else f"[{name}]"
            pieces.append(piece + ("..." if param.nargs != 1 else ""))
    return pieces


def _main(main: Callable[..., Any], args: Any, prog_name: str | None,
          complete_var: str | None, standalone_mode: bool, **extra: Any) -> Any:
    """Standalone runs (``app()``, a test runner) end the way ``run_app`` does: one line, one code."""
    if not standalone_mode:
        return main(args, prog_name, complete_var, standalone_mode=False, **extra)
    sys.exit(exit_code(lambda: main(args, prog_name, complete_var, standalone_mode=False, **extra)))


class Command(TyperCommand):
    """A typer command whose errors are the one-line kind and whose help hides flag types."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        return _main(super().main, args, prog_name, complete_var, standalone_mode, **extra)

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        return _quiet_types(self, ctx)

    def format_help(self, ctx: Context, formatter: Any) -> None:
        _quiet_types(self, ctx)
        super().format_help(ctx, formatter)

    def invoke(self, ctx: Context) -> Any:
        with reported():
            return super().invoke(ctx)


class Group(TyperGroup):
    """A typer group with the same error and help behaviour as ``Command``."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        return _main(super().main, args, prog_name, complete_var, standalone_mode, **extra)

    def collect_usage_pieces(self, ctx: Context) -> list[str]:
        return [*_quiet_types(self, ctx), self.subcommand_metavar]

    def format_help(self, ctx: Context, formatter: Any) -> None:
        _quiet_types(self, ctx)
        super().format_help(ctx, formatter)

    def invoke(self, ctx: Context) -> Any:
        with reported():
            return super().invoke(ctx)


class App(typer.Typer):
    """``typer.Typer`` whose commands are ``Command`` unless told otherwise."""

    def command(self, name: str | None = None, *, cls: type[TyperCommand] | None = None,
                **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        return super().command(name, cls=cls or Command, **kwargs)


def typer_app(**kwargs: Any) -> App:
    """An ``App`` with the project's settings: help when called bare, no pretty tracebacks.

    Shell completion (``--install-completion``) is offered by the root commands only
    (``add_completion=True`` there); a sub-app mounted with ``add_typer`` completes through it.
    """
    kwargs.setdefault("cls", Group)
    kwargs.setdefault("no_args_is_help", True)
    kwargs.setdefault("add_completion", False)
    kwargs.setdefault("pretty_exceptions_enable", False)
    kwargs.setdefault("rich_markup_mode", None)
    return App(**kwargs)


def _noun(enum_cls: type[enum.Enum]) -> str:
    """``FeatureSet`` -> ``feature set``: how a refused value names what it should have been."""
    return re.sub(r"(?<!^)(?=[A-Z])", " ", enum_cls.__name__).lower()


def choice(enum_cls: type[E], *param_decls: str, help: str, **kwargs: Any) -> Any:  # noqa: A002
    """A ``typer.Option`` taking one of ``enum_cls``'s values (shown in help, completed by the shell).

    A value outside the set is refused as a bad command line with the project's wording.
    """
    values = [str(member.value) for member in enum_cls]

    def parse(value: Any) -> E:
        if isinstance(value, enum_cls):
            return value
        try:
            return enum_cls(value)
        except ValueError:
            raise typer.BadParameter(unknown(_noun(enum_cls), value, values)) from None

    def complete(incomplete: str) -> list[str]:
        return [v for v in values if v.startswith(incomplete)]

    return typer.Option(*param_decls, help=help, parser=parse, autocompletion=complete,
                        metavar="[" + "|".join(values) + "]", **kwargs)
