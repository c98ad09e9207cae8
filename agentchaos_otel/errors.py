"""Errors whose message is meant for the user as is, raised below the command line.

Layers under the CLI (campaign agents, agent adapters) refuse bad option values with these; the
CLI (``agentchaos_otel.cli.errors``) prints them as one line with their exit code.
"""

from __future__ import annotations

USAGE = 2  # the command line is wrong
FAILURE = 1  # the command could not do its job


class CLIError(Exception):
    """An error whose message is meant for the user as is; ``code`` is the exit status."""

    def __init__(self, message: str, code: int = FAILURE) -> None:
        super().__init__(message)
        self.code = code


class UsageError(CLIError, ValueError):
    """A bad or conflicting option value (exit 2); a ValueError, so parsers' callers still catch it."""

    def __init__(self, message: str) -> None:
        super().__init__(message, USAGE)


def usage_error(message: str) -> UsageError:
    """``raise usage_error("--a needs --b")``: an error in the command line (exit 2)."""
    return UsageError(message)
