"""Per-call cost of a traced MCP tool call against the same call untraced, side by side.

Run: ``python -m benchmarks mcp`` (or ``python -m benchmarks.bench_mcp [--calls N] [--rounds R]``).

One MCP client session per transport (Streamable HTTP on loopback, stdio) to the reference tool
server (``agentchaos_otel.agents.mcp.server``, SIMULATED data) calls ``get_weather`` repeatedly.
The two configurations take turns on the same session, round by round, so machine load hits
both alike: *untraced* is the SDK with our hooks uninstalled; *traced* is the MCP hooks on a
provider with our step processor and the DuckDB store behind a batch processor, inside an
episode (condition none: every call gets its span, signals and an injector decision, no fault).
Figures are the median wall-clock time per ``call_tool`` and this process's CPU time per call
(``time.process_time`` over each batch; on a shared machine the wall clock also counts the waits
of the server process, the CPU time only what the client does); the ratio is traced / untraced.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agentchaos_otel import mcp as chaos_mcp
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.trace.processors import EpisodeSpanProcessor

CONFIGS = ("untraced", "traced")
ARGS = {"city": "Lisbon"}


async def _calls(session: Any, n: int, cpu: list[float] | None = None) -> list[float]:
    out = []
    c0 = time.process_time()
    for _ in range(n):
        t0 = time.perf_counter()
        await session.call_tool("get_weather", ARGS)
        out.append(time.perf_counter() - t0)
    if cpu is not None:
        cpu.append((time.process_time() - c0) / n)
    return out


async def _measure(transport: str, url: str, provider: TracerProvider, calls: int,
                   rounds: int) -> dict[str, dict[str, float]]:
    from mcp import ClientSession, StdioServerParameters

    if transport == "http":
        from mcp.client.streamable_http import streamable_http_client

        manager: Any = streamable_http_client(url)
    else:
        from mcp.client.stdio import stdio_client

        manager = stdio_client(StdioServerParameters(command=sys.executable,
                                                     args=["-m", "agentchaos_otel.agents.mcp.server", "stdio"]))
    chaos_mcp.instrument(provider)  # before the transport opens: its transport attributes are known
    samples: dict[str, list[float]] = {c: [] for c in CONFIGS}
    cpu: dict[str, list[float]] = {c: [] for c in CONFIGS}
    try:
        async with manager as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                await session.list_tools()
                await _calls(session, 10)  # warm both paths up
                for _ in range(rounds):
                    for config in CONFIGS:
                        if config == "traced":
                            chaos_mcp.instrument(provider)
                            with episode(f"bench-{transport}", tracer_provider=provider):
                                samples[config] += await _calls(session, calls, cpu[config])
                        else:
                            chaos_mcp.uninstrument()
                            samples[config] += await _calls(session, calls, cpu[config])
    finally:
        chaos_mcp.uninstrument()
    return {c: {"wall": statistics.median(samples[c]), "cpu": statistics.median(cpu[c])} for c in CONFIGS}


def measure(calls: int, rounds: int) -> dict[str, dict[str, dict[str, float]]]:
    from agentchaos_otel.agents.mcp.server import ServerProcess

    tmp = Path(tempfile.mkdtemp(prefix="agentchaos-bench-mcp-"))
    provider = TracerProvider()
    provider.add_span_processor(EpisodeSpanProcessor())
    provider.add_span_processor(BatchSpanProcessor(DuckDBSpanExporter(str(tmp / "traces.duckdb"))))
    server = ServerProcess()
    try:
        url = server.url()
        return {t: asyncio.run(_measure(t, url, provider, calls, rounds)) for t in ("http", "stdio")}
    finally:
        server.stop()
        provider.shutdown()


def run(quick: bool = False, calls: int | None = None, rounds: int | None = None) -> list[dict[str, Any]]:
    calls = calls or (20 if quick else 50)  # short turns, many rounds: load changes hit both alike
    rounds = rounds or (4 if quick else 20)
    med = measure(calls, rounds)
    rows = []
    for transport, by in med.items():
        for measure_, what in (("wall", "wall-clock time"), ("cpu", "client CPU time")):
            traced, untraced = by["traced"][measure_], by["untraced"][measure_]
            rows.append({"figure": f"MCP tools/call over {transport}, {what} per call, traced vs untraced",
                         "value": round(traced * 1e6), "unit": "µs",
                         "baseline": "the same call untraced, same session", "baseline_value": round(untraced * 1e6),
                         "ratio": round(traced / untraced, 3), "target": "report only", "holds": None,
                         "simulated": True, "added_us": round((traced - untraced) * 1e6), "calls": calls * rounds})
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--calls", type=int, default=None, help="calls per configuration per round")
    ap.add_argument("--rounds", type=int, default=None)
    args = ap.parse_args(argv)
    print("SIMULATED tool data on a loopback MCP server; median per-call wall clock of call_tool")
    for r in run(args.quick, args.calls, args.rounds):
        print(f"{r['figure']}: {r['value']} µs vs {r['baseline_value']} µs ({r['baseline']}) = {r['ratio']}x"
              f" (+{r['added_us']} µs)")


if __name__ == "__main__":
    main()
