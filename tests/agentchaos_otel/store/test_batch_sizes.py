"""The batch processor in front of the DuckDB exporter: sized for DuckDB unless the user sized it.

``configure()`` passes the sizes to the processor it builds; zero-code's distro sets them in the
``OTEL_BSP_*`` variables the SDK reads, only when the store is the only trace exporter (every
batch processor of the SDK reads them, and OTLP requests of 2048 spans can exceed a collector's
limit). Either way a size the user set wins, and the SDK's rule batch <= queue keeps holding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

import agentchaos_otel
from agentchaos_otel.store.exporter import EXPORT_BATCH, EXPORT_QUEUE, DuckDBSpanExporter
from agentchaos_otel.zero_code import AgentChaosDistro

_SIZES = ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "OTEL_BSP_MAX_QUEUE_SIZE")


@pytest.fixture(autouse=True)
def _no_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (*_SIZES, "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)


def _duckdb_sizes(handle: Any) -> tuple[int, int]:
    (proc,) = [p for p in handle.processors if isinstance(p, BatchSpanProcessor)
               and isinstance(p._batch_processor._exporter, DuckDBSpanExporter)]  # noqa: SLF001
    inner = proc._batch_processor  # noqa: SLF001 - the SDK keeps the sizes there
    return inner._max_export_batch_size, inner._max_queue_size  # noqa: SLF001


def test_configure_sizes_the_store_processor_for_duckdb(tmp_path: Path) -> None:
    handle = agentchaos_otel.configure(db=tmp_path / "t.duckdb", tracer_provider=TracerProvider(), instrument=False,
                                       metrics=False)
    try:
        assert _duckdb_sizes(handle) == (EXPORT_BATCH, EXPORT_QUEUE)
        assert EXPORT_BATCH > 512 and EXPORT_QUEUE >= 2 * EXPORT_BATCH
    finally:
        handle.shutdown()


@pytest.mark.parametrize("var,value,expected", [
    ("OTEL_BSP_MAX_QUEUE_SIZE", "1000", (512, 1000)),  # ours beside it would break batch <= queue
    ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "100", (100, 2048)),
])
def test_configure_leaves_sizes_the_user_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, var: str,
                                             value: str, expected: tuple[int, int]) -> None:
    monkeypatch.setenv(var, value)
    handle = agentchaos_otel.configure(db=tmp_path / "t.duckdb", tracer_provider=TracerProvider(), instrument=False,
                                       metrics=False)
    try:
        assert _duckdb_sizes(handle) == expected  # the SDK's defaults and the user's value
    finally:
        handle.shutdown()


def test_distro_sizes_the_processor_only_when_the_store_is_the_only_trace_exporter(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    AgentChaosDistro()._configure()  # noqa: SLF001
    assert os.environ["OTEL_TRACES_EXPORTER"] == "agentchaos_duckdb"
    assert (os.environ[_SIZES[0]], os.environ[_SIZES[1]]) == (str(EXPORT_BATCH), str(EXPORT_QUEUE))
    for var in (*_SIZES, "OTEL_TRACES_EXPORTER"):
        monkeypatch.delenv(var)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    AgentChaosDistro()._configure()  # noqa: SLF001
    assert "agentchaos_otlp" in os.environ["OTEL_TRACES_EXPORTER"]
    assert not any(v in os.environ for v in _SIZES), "OTLP shares the SDK's sizes: they stay the SDK's"
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT")
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "agentchaos_duckdb")
    monkeypatch.setenv(_SIZES[1], "4096")
    AgentChaosDistro()._configure()  # noqa: SLF001
    assert os.environ[_SIZES[1]] == "4096" and _SIZES[0] not in os.environ
