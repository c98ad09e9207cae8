"""Errors whose message is written for the user, and the wording of the mistakes users make most.

Any layer may raise these; the command line (``agentchaos_otel.cli.errors``) prints them as one
``agentchaos: error: ...`` line and leaves with their ``code``: ``UsageError`` (2) when the command
line itself is wrong, ``UserError`` (1) when a well-formed command could not do its job. Domain
errors that are ``ValueError`` or ``OSError`` get the same treatment, so a parser's caller can keep
catching ``ValueError``.

The same mistake reads the same in every command: a missing file is ``no_such_file(path)``, a
value outside a fixed set is ``unknown(what, value, choices)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from os import PathLike

USAGE = 2  # the command line is wrong
FAILURE = 1  # the command could not do its job


class UserError(Exception):
    """A failure whose message is meant for the user as is (exit 1)."""

    code = FAILURE


class UsageError(UserError, ValueError):
    """A bad or conflicting option value (exit 2); a ValueError, so parsers' callers still catch it."""

    code = USAGE


def no_such_file(path: str | PathLike[str]) -> str:
    """The one wording of a path that does not exist."""
    return f"no such file: {path}"


def directory_as_store(path: str | PathLike[str]) -> str:
    """The one wording of a directory given where a trace store file is written."""
    return (f"--db {path} is a directory; a trace store is a file (to write a Parquet dataset into a directory, "
            "use --parquet)")


def unknown(what: str, value: object, choices: Iterable[object]) -> str:
    """The one wording of a value outside a fixed set: ``unknown method 'x'; choose one of a, b``."""
    return f"unknown {what} {value!r}; choose one of {', '.join(str(c) for c in choices)}"
