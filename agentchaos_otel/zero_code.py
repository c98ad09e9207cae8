"""Zero-code entry points: ``opentelemetry-instrument python agent.py`` with only our variables set.

``opentelemetry-instrument`` loads a *distro* (defaults for the ``OTEL_*`` variables), then a
*configurator* (builds the SDK providers and exporters from them), then every instrumentor. With
only ``pip install agentchaos-otel`` there is neither, so nothing would read
``OTEL_TRACES_EXPORTER`` and no span would be recorded; with ``opentelemetry-distro`` also
installed, its distro defaults metrics and logs to OTLP over gRPC, and an exporter that is not
installed (a gRPC log exporter, zipkin, ...) makes the SDK abort start-up with a traceback. So
the project brings its own:

- ``AgentChaosDistro``: traces to ``agentchaos_duckdb`` (plus OTLP over HTTP when an
  ``OTEL_EXPORTER_OTLP_*ENDPOINT`` is set), metrics and logs off, and, when the store is the
  only trace exporter, the batch processor sized for it (``exporter.batch_processor_sizes``),
  unless the user chose otherwise; every default leaves a variable the user set alone;
- ``AgentChaosConfigurator``: the SDK's standard configuration, except that an exporter the
  user named but did not install is left out with one line on stderr instead of aborting.

Which distro and configurator ``opentelemetry-instrument`` picks when several are installed is
the order in which Python lists installed packages, which is the file system's. The launcher
imports every ``opentelemetry_environment_variables`` entry point before it starts the program,
and ``zero_code_launcher`` is ours: when the user asked for this project (a variable that asks
for injection or the store, ``settings.asks_for_us``, or our exporter in ``OTEL_TRACES_EXPORTER``)
and chose no distro or configurator, it
names ours in ``OTEL_PYTHON_DISTRO`` / ``OTEL_PYTHON_CONFIGURATOR``, so the same line behaves
the same whether or not ``opentelemetry-distro`` is installed.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from opentelemetry.environment_variables import OTEL_LOGS_EXPORTER, OTEL_METRICS_EXPORTER, OTEL_TRACES_EXPORTER
from opentelemetry.instrumentation.distro import BaseDistro
from opentelemetry.sdk._configuration import _get_exporter_entry_point, _OTelSDKConfigurator
from opentelemetry.sdk.environment_variables import OTEL_EXPORTER_OTLP_PROTOCOL
from opentelemetry.util._importlib_metadata import entry_points

from agentchaos_otel import redact
from agentchaos_otel.zero_code_launcher import DUCKDB_EXPORTER, ENTRY_POINT_NAME

_SIGNALS = {"traces": OTEL_TRACES_EXPORTER, "metrics": OTEL_METRICS_EXPORTER, "logs": OTEL_LOGS_EXPORTER}
_OTLP_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
_log = redact.get_logger(__name__)
REDACTING_OTLP_EXPORTER = "agentchaos_otlp"  # OTLP/HTTP behind our redaction (pyproject entry point)


class _OtherConfiguratorsSkipped(logging.Filter):
    """The loader warns once per configurator it skipped; skipping them is what we asked for."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (str(record.msg).startswith("Configuration of %s not loaded")
                    and ENTRY_POINT_NAME in (str(a) for a in record.args or ()))


class AgentChaosDistro(BaseDistro):  # type: ignore[misc]
    """Defaults for a process that asked for the DuckDB store and nothing else."""

    def _configure(self, **kwargs: Any) -> None:
        otlp = any(os.environ.get(v) for v in _OTLP_ENDPOINTS)
        traces = f"{DUCKDB_EXPORTER},{REDACTING_OTLP_EXPORTER}" if otlp else DUCKDB_EXPORTER
        os.environ.setdefault(OTEL_TRACES_EXPORTER, traces)
        if [n.strip() for n in os.environ[OTEL_TRACES_EXPORTER].split(",")] == [DUCKDB_EXPORTER]:
            # the SDK sizes every batch processor from these; with the store alone, they are ours
            from agentchaos_otel.store.exporter import batch_processor_sizes

            sizes = batch_processor_sizes()
            if sizes:
                os.environ["OTEL_BSP_MAX_EXPORT_BATCH_SIZE"] = str(sizes["max_export_batch_size"])
                os.environ["OTEL_BSP_MAX_QUEUE_SIZE"] = str(sizes["max_queue_size"])
        os.environ.setdefault(OTEL_METRICS_EXPORTER, "none")
        os.environ.setdefault(OTEL_LOGS_EXPORTER, "none")
        os.environ.setdefault(OTEL_EXPORTER_OTLP_PROTOCOL, "http/protobuf")  # the OTLP exporter we depend on
        logging.getLogger("opentelemetry.instrumentation.auto_instrumentation._load").addFilter(
            _OtherConfiguratorsSkipped())


def _missing(signal: str, name: str) -> str | None:
    """The entry point ``name`` resolves to, when no installed package provides it."""
    try:
        resolved = _get_exporter_entry_point(name, signal)  # type: ignore[arg-type]
    except RuntimeError:  # an OTLP protocol the SDK does not know: it would abort on it
        return f"{name} over {os.environ.get(OTEL_EXPORTER_OTLP_PROTOCOL)!r}"
    return None if entry_points(group=f"opentelemetry_{signal}_exporter", name=resolved) else resolved


def drop_missing_exporters() -> list[str]:
    """Leave the exporters that are not installed out of ``OTEL_*_EXPORTER``; one message per signal."""
    messages = []
    for signal, var in _SIGNALS.items():
        names = [n.strip() for n in os.environ.get(var, "").split(",") if n.strip()]
        if not names or names == ["none"]:
            continue
        missing = {name: _missing(signal, name) for name in names}
        if any(missing.values()):
            os.environ[var] = ",".join(n for n, m in missing.items() if m is None) or "none"
            absent = ", ".join(m for m in missing.values() if m)
            messages.append(f"agentchaos: {var} asks for {absent}, which is not installed; "
                            f"{signal} are exported to {os.environ[var]!r} instead")
    return messages


class AgentChaosConfigurator(_OTelSDKConfigurator):  # type: ignore[misc]
    """The SDK's configuration, minus exporters that are named but not installed."""

    def _configure(self, **kwargs: Any) -> None:
        for message in drop_missing_exporters():
            _log.error(message)
        super()._configure(**kwargs)
        add_episode_flushes()


def add_episode_flushes(provider: Any = None) -> int:
    """After the SDK built its batch processors, flush ours at every episode end (store/durability.py)."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from agentchaos_otel.store.durability.episode_flush import add_episode_flush
    from agentchaos_otel.store.exporter import DuckDBSpanExporter

    provider = provider or trace.get_tracer_provider()
    active = getattr(provider, "_active_span_processor", None)
    targets = [p for p in getattr(active, "_span_processors", ())
               if isinstance(p, BatchSpanProcessor) and isinstance(getattr(p, "span_exporter", None),
                                                                   DuckDBSpanExporter)]
    for target in targets:
        add_episode_flush(provider, target)
    return len(targets)
