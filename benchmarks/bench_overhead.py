"""Per-call overhead of the agentchaos stack against plain httpx and OTel's httpx instrumentation.

Run: ``python -m benchmarks.bench_overhead [--calls 400] [--rounds 5]``; with ``--sdk`` it measures
through the official openai SDK instead, sync, async and streaming side by side
(``benchmarks.bench_overhead_sdk``, the figures ``python -m benchmarks all`` reports).

Every configuration sends the same chat-completions requests to the same loopback simulated
model; configurations are interleaved round by round so machine load affects them alike. The
figures are wall-clock per call (median over calls); the overhead column subtracts the plain
httpx median. The model is simulated: absolute latencies say nothing about real providers.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
from opentelemetry.instrumentation.httpx import HTTPX2ClientInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.transport import ChaosTransport
from agentchaos_otel.sim.policy import Turn
from agentchaos_otel.sim.server import SimulatedModelServer
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.trace.processors import EpisodeSpanProcessor


class _ShortAnswer:
    name = "sim-bench"

    def respond(self, request: dict[str, Any], rng: random.Random) -> Turn:
        return Turn(content="The answer is 42, as simulated.")


BODY = {"model": "sim-bench", "messages": [{"role": "user", "content": "What is the answer?"}]}


def _time_calls(client: httpx2.Client, url: str, calls: int, wrap: Callable[[], Any] | None) -> list[float]:
    out = []
    for i in range(calls):
        ctx = wrap(i) if wrap else None
        if ctx is not None:
            ctx.__enter__()
        t0 = time.perf_counter()
        r = client.post(url, json=BODY)
        r.read()
        out.append(time.perf_counter() - t0)
        if ctx is not None:
            ctx.__exit__(None, None, None)
    return out


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400, help="calls per configuration per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sdk", action="store_true", help="openai SDK, sync / async / stream side by side")
    args = parser.parse_args(argv)
    if args.sdk:
        from benchmarks import bench_overhead_sdk

        bench_overhead_sdk.main(["--calls", str(args.calls), "--rounds", str(args.rounds)])
        return {}
    tmp = Path(tempfile.mkdtemp(prefix="agentchaos-bench-"))
    results: dict[str, list[float]] = {}
    with SimulatedModelServer(_ShortAnswer(), seed=0) as server:
        url = f"{server.base_url}/chat/completions"
        otel_provider = TracerProvider()
        otel_provider.add_span_processor(BatchSpanProcessor(_Discard()))
        full_provider = TracerProvider()
        full_provider.add_span_processor(EpisodeSpanProcessor())
        full_provider.add_span_processor(BatchSpanProcessor(DuckDBSpanExporter(str(tmp / "bench.duckdb"))))

        plain = httpx2.Client()
        otel_only = httpx2.Client()
        HTTPX2ClientInstrumentor.instrument_client(otel_only, tracer_provider=otel_provider)
        full = httpx2.Client(transport=ChaosTransport(httpx2.HTTPTransport(), tracer_provider=full_provider))
        HTTPX2ClientInstrumentor.instrument_client(full, tracer_provider=full_provider)

        def ep(plan: str | None) -> Callable[[int], Any]:
            return lambda i: episode(f"bench-{i}", plan=plan, tracer_provider=full_provider)

        configs: list[tuple[str, httpx2.Client, Callable[[int], Any] | None]] = [
            ("plain httpx", plain, None),
            ("OTel httpx instrumentation", otel_only, None),
            ("agentchaos, no fault", full, ep(None)),
            ("agentchaos, fault every call", full, ep("llm_error_persistent")),
        ]
        for client, _ in ((plain, 0), (otel_only, 0), (full, 0)):
            _time_calls(client, url, 50, None)  # warm up connections and code paths
        for _ in range(args.rounds):
            for name, client, wrap in configs:
                results.setdefault(name, []).extend(_time_calls(client, url, args.calls, wrap))
        for client in (plain, otel_only, full):
            client.close()
        otel_provider.shutdown()
        full_provider.shutdown()
    base = statistics.median(results["plain httpx"])
    otel = statistics.median(results["OTel httpx instrumentation"])
    table: dict[str, dict[str, float]] = {}
    print("SIMULATED loopback model; per-call wall clock, median over "
          f"{args.calls * args.rounds} calls per configuration")
    print(f"{'configuration':32} {'median µs':>10} {'p90 µs':>10} {'vs plain':>9} {'vs OTel':>8} {'overhead µs':>12}")
    for name, samples in results.items():
        med = statistics.median(samples)
        p90 = statistics.quantiles(samples, n=10)[-1]
        table[name] = {"median_us": med * 1e6, "p90_us": p90 * 1e6, "ratio_plain": med / base,
                       "ratio_otel": med / otel, "overhead_us": (med - base) * 1e6}
        print(f"{name:32} {med * 1e6:10.0f} {p90 * 1e6:10.0f} {med / base:9.2f} {med / otel:8.2f} "
              f"{(med - base) * 1e6:12.0f}")
    return table


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Rows for ``python -m benchmarks all``: the openai SDK side-by-side figures."""
    from benchmarks import bench_overhead_sdk

    return bench_overhead_sdk.run(quick)


class _Discard:
    """A span exporter that drops spans, so the OTel-only baseline pays for spans but not for I/O."""

    def export(self, spans: Any) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


if __name__ == "__main__":
    main()
