"""Fixtures shared by the core tests: a real OTel SDK pipeline and the simulated model server."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentchaos_otel.sim.policy import Turn, last_user_text
from agentchaos_otel.sim.server import SimulatedModelServer
from agentchaos_otel.trace.processors import EpisodeSpanProcessor

LONG_TEXT = ("The weather in Paris is sunny with a high of 21 °C near the café terraces and a light "
             "breeze from the west; no rain is expected before the weekend.")


class ModePolicy:
    """Answers by what the last user message asks for: ``TOOL`` -> a tool call, else text.

    Simulated: exists only so tests can shape responses; never evidence about a real model.
    """

    name = "sim-core-test"

    def respond(self, request: dict[str, Any], rng: random.Random) -> Turn:
        text = last_user_text(request)
        n = text.rsplit(" ", 1)[-1]
        if text.startswith("TOOL"):
            return Turn(tool_calls=[("get_weather", {"city": f"Paris-{n}", "unit": "celsius"})])
        return Turn(content=f"{LONG_TEXT} (answer {n})")


WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
                   "required": ["city"]}}}


@pytest.fixture
def memory_tracing() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(EpisodeSpanProcessor())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


@pytest.fixture(scope="session")
def mode_server() -> Iterator[SimulatedModelServer]:
    with SimulatedModelServer(ModePolicy(), seed=0) as server:
        yield server
