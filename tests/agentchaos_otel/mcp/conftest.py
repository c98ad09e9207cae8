"""Fixtures of the MCP tests: the real SDK's client against real servers on loopback, our hooks on a
test provider, and nothing left switched on afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

pytest.importorskip("mcp")

from agentchaos_otel import mcp as chaos_mcp  # noqa: E402
from agentchaos_otel.trace.processors import EpisodeSpanProcessor  # noqa: E402
from tests.support.mcp_harness import http_server  # noqa: E402


@pytest.fixture
def tracing() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """A real SDK pipeline with our step processor; the MCP hooks report to it."""
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(EpisodeSpanProcessor())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    chaos_mcp.instrument(provider)
    try:
        yield provider, exporter
    finally:
        chaos_mcp.uninstrument()
        chaos_mcp.set_protocol_faults(None)
        chaos_mcp.unguard_idempotency()
        provider.shutdown()


@pytest.fixture(scope="module")
def http(tmp_path_factory: Any) -> Iterator[tuple[str, Path]]:
    """One Streamable HTTP server for the module: its URL and its order ledger."""
    ledger = tmp_path_factory.mktemp("mcp") / "ledger.txt"
    with http_server(ledger) as url:
        yield url, ledger
