"""`diagnose --metrics-otlp` / `report --metrics-otlp` say whether the OTLP endpoint took the counts.

The SDK's periodic reader logs a failed export and carries on; a one-shot command that then said
"pushed" would fail without a word. These tests push to a loopback collector and to a port
nothing listens on."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from agentchaos_otel import metrics_setup
from tests.support import REPO
from tests.support.collector import Post, otlp_collector


@pytest.fixture
def collector() -> Iterator[tuple[str, list[Post]]]:
    with otlp_collector() as running:
        yield running


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _publish(monkeypatch: pytest.MonkeyPatch, endpoint: str) -> metrics_setup.Published:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", f"{endpoint}/v1/metrics")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "2000")  # milliseconds
    return metrics_setup.publish_diagnoses([("timeout", "rule"), ("timeout", "rule"), ("auth", "rule")],
                                           prometheus_port=None, otlp=True)


def test_counts_taken_by_the_endpoint_are_said_pushed(monkeypatch: pytest.MonkeyPatch, collector) -> None:
    url, posts = collector
    published = _publish(monkeypatch, url)
    assert published.pushed is True and not published.failed
    assert "metrics pushed" in metrics_setup.describe(published, 0)
    received = [ExportMetricsServiceRequest.FromString(p.body) for p in posts]
    points = [p for req in received for rm in req.resource_metrics for sm in rm.scope_metrics
              for m in sm.metrics for p in m.sum.data_points]
    assert sorted(p.as_int for p in points) == [1, 2]


def test_counts_nobody_took_are_said_not_pushed(monkeypatch: pytest.MonkeyPatch) -> None:
    published = _publish(monkeypatch, f"http://127.0.0.1:{_closed_port()}")
    assert published.pushed is False and published.failed
    assert "metrics NOT pushed" in metrics_setup.describe(published, 0)


def test_the_commands_exit_non_zero_when_the_push_failed(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCHAOS_"))}
    cli = [sys.executable, "-m", "agentchaos_otel.cli"]
    done = subprocess.run([*cli, "traces", "import", str(REPO / "docs/examples/import"), "--db", str(db)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    env |= {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": f"http://127.0.0.1:{_closed_port()}/v1/metrics",
            "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "2000"}
    for args in (["diagnose", str(db), "--metrics-otlp"], ["report", str(db), "--resamples", "10", "--metrics-otlp"]):
        out = subprocess.run([*cli, *args], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 1 and "metrics NOT pushed" in out.stderr, (args, out.stderr)
