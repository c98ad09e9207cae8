"""Every ``AGENTCHAOS_*`` environment variable the project reads: its default, how it is read, what it does.

One home, so that no module spells a variable's name, default or parse rule of its own; the
reference table in docs/configuration.md is checked against ``SETTINGS`` by a test, and the
zero-code launcher asks ``asks_for_us`` which variables mean "use this project" (those that ask
for injection or the store, not a debug switch or a cache directory).

Standard library only: the ``opentelemetry-instrument`` launcher imports this module (through
``zero_code_launcher``) before the program starts.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")
_log = logging.getLogger(__name__)


class SettingError(ValueError):
    """A variable holds a value that cannot be used; the message is one line naming it."""


# -- parse rules: each takes the stripped, non-empty text and raises ValueError saying what it wanted --

def _text(raw: str) -> str:
    return raw


def _integer(raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise ValueError("must be an integer") from None


def _positive_integer(raw: str) -> int:
    value = _integer(raw)
    if value < 1:
        raise ValueError("must be an integer of at least 1")
    return value


def _port(raw: str) -> int:
    if not raw.isdigit() or int(raw) > 65535:
        raise ValueError("is not a port number")
    return int(raw)


def _non_negative(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("is not a number") from None
    if not value >= 0:  # also refuses nan
        raise ValueError("must not be negative")
    return value


_OFF = ("off", "0", "false", "no")


def _switch(raw: str) -> bool:
    """Anything but off/0/false/no switches on (as the variables always read)."""
    return raw.lower() not in _OFF


@dataclass(frozen=True)
class Setting(Generic[T]):
    """One variable: ``value()`` is its parsed value, or ``default`` when it is unset or blank."""

    name: str
    default: T
    parse: Callable[[str], T]
    rule: str  # how the text is read, for the reference table
    doc: str  # one line: what it does, who reads it
    asks_for_us: bool = False  # setting it selects our distro under ``opentelemetry-instrument``
    lenient: bool = False  # a bad value is a warning and the default, not an error

    def raw(self, env: Mapping[str, str] | None = None) -> str | None:
        """The variable's text, stripped; None when unset or blank."""
        text = (os.environ if env is None else env).get(self.name, "").strip()
        return text or None

    def value(self, env: Mapping[str, str] | None = None) -> T:
        """The parsed value; a bad one raises ``SettingError`` (or, lenient, logs and gives the default)."""
        raw = self.raw(env)
        if raw is None:
            return self.default
        try:
            return self.parse(raw)
        except ValueError as exc:
            message = f"{self.name}={raw!r} {exc}"
            if self.lenient:
                _log.warning("%s; using %s", message, self.default)
                return self.default
            raise SettingError(message) from None

    def is_set(self, env: Mapping[str, str] | None = None) -> bool:
        return self.raw(env) is not None


# -- the variables -------------------------------------------------------------------------------

PLAN: Setting[str | None] = Setting(
    "AGENTCHAOS_PLAN", None, _text, "a fault name, a comma-separated list, a condition or a plan file",
    "Faults to inject under zero-code and `configure(plan=None)`; unset: traced only, no faults.",
    asks_for_us=True)
SEED: Setting[int] = Setting(
    "AGENTCHAOS_SEED", 0, _integer, "integer",
    "Seed of every fault decision under zero-code and `configure(seed=None)`.", asks_for_us=True)
DB: Setting[str] = Setting(
    "AGENTCHAOS_DB", "traces.duckdb", _text, "path",
    "Trace store the in-process exporter writes (zero-code, `configure()`, `DuckDBSpanExporter()`).",
    asks_for_us=True)
TASK_ID: Setting[str | None] = Setting(
    "AGENTCHAOS_TASK_ID", None, _text, "text",
    "Task id recorded on the steps of episodes started without `episode()` (zero-code).",
    asks_for_us=True)
MCP: Setting[bool] = Setting(
    "AGENTCHAOS_MCP", True, _switch, "switch: off, 0, false or no turn it off",
    "Trace and fault the official `mcp` SDK's client sessions (`instrument(mcp=...)` overrides).")
PROMETHEUS_PORT: Setting[int | None] = Setting(
    "AGENTCHAOS_PROMETHEUS_PORT", None, _port, "port number",
    "Serve a Prometheus `/metrics` endpoint on this port from `configure()` (`prometheus_port=` overrides).")
PROMETHEUS_HOST: Setting[str] = Setting(
    "AGENTCHAOS_PROMETHEUS_HOST", "127.0.0.1", _text, "address",
    "Address the Prometheus endpoint binds (`prometheus_host=` overrides).")
PROMETHEUS_WAIT: Setting[float | None] = Setting(
    "AGENTCHAOS_PROMETHEUS_WAIT", None, _non_negative, "seconds, not negative",
    "Seconds shutdown waits for Prometheus to collect the final values; unset: three scrape intervals "
    "seen so far (at most 60 s; 15 s after a single scrape; none if nothing scraped).")
MEMORY_SPOOL_MB: Setting[float] = Setting(
    "AGENTCHAOS_MEMORY_SPOOL_MB", 64.0, _non_negative, "MiB, not negative (a bad value: warning, default)",
    "Spans the exporter holds in memory while neither the store nor its spool can be written.",
    lenient=True)
RECEIVER_TOKEN: Setting[str | None] = Setting(
    "AGENTCHAOS_RECEIVER_TOKEN", None, _text, "text (never stored or logged)",
    "Bearer token `traces receive` / `receive-grpc` require of senders (`--token` overrides).")
RECEIVER_QUEUE: Setting[int] = Setting(
    "AGENTCHAOS_RECEIVER_QUEUE", 64, _positive_integer, "integer of at least 1 (a bad value: warning, default)",
    "Requests a receiver lets wait for its writer before answering 'retry later' (`--queue` overrides).",
    lenient=True)
CACHE_DIR: Setting[str | None] = Setting(
    "AGENTCHAOS_CACHE_DIR", None, _text, "path",
    "Where empty-store templates are cached; unset: `$XDG_CACHE_HOME/agentchaos-otel` or `~/.cache/agentchaos-otel`.")
DEBUG: Setting[bool] = Setting(
    "AGENTCHAOS_DEBUG", False, _switch, "switch: anything but off, 0, false or no turns it on",
    "The command line shows the traceback of an unexpected error instead of one line.")

SETTINGS: tuple[Setting[Any], ...] = (PLAN, SEED, DB, TASK_ID, MCP, PROMETHEUS_PORT, PROMETHEUS_HOST,
                                      PROMETHEUS_WAIT, MEMORY_SPOOL_MB, RECEIVER_TOKEN, RECEIVER_QUEUE,
                                      CACHE_DIR, DEBUG)
BY_NAME: dict[str, Setting[Any]] = {s.name: s for s in SETTINGS}


def asks_for_us(env: Mapping[str, str]) -> bool:
    """Whether ``env`` sets a variable that asks for injection or the store."""
    return any(s.asks_for_us and s.is_set(env) for s in SETTINGS)
