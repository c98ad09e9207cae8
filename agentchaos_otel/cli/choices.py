"""The fixed sets command-line options choose from, as Enums (help lists them, the shell completes them).

They are spelled here, not imported from the modules that use them, because the command tree is
built at start-up and those modules pull in DuckDB, the OTel SDK or the fault catalog; a test
checks each Enum against the constant its module owns.
"""

from __future__ import annotations

import enum


class Family(enum.StrEnum):
    """Fault families of the catalog (``faults/spec.py`` FAMILIES)."""

    agentchaos = "agentchaos"
    compound = "compound"
    positional = "positional"
    http = "http"
    stream = "stream"
    variant = "variant"


class Format(enum.StrEnum):
    """Trace file formats ``traces import`` reads (``store/importers/trace_files.py`` FORMATS)."""

    otlp_json = "otlp-json"
    otlp_protobuf = "otlp-protobuf"
    openinference = "openinference"
    messages = "messages"


class Protocol(enum.StrEnum):
    """OTLP protocols (``otlp_exporters.py`` PROTOCOLS; http/json is named and then refused there)."""

    grpc = "grpc"
    http_protobuf = "http/protobuf"
    http_json = "http/json"


class DiagnoseMode(enum.StrEnum):
    """Which diagnoses ``traces export`` attaches (``traces_export.py`` DIAGNOSE_MODES)."""

    auto = "auto"
    stored = "stored"
    rule = "rule"
    none = "none"


class Executor(enum.StrEnum):
    """Where episodes (campaigns) or episode chunks (diagnosis) run."""

    local = "local"
    ray = "ray"
