"""Per-call overhead through the official openai SDK: sync, async and streaming, side by side.

Run: ``python -m benchmarks.bench_overhead_sdk [--quick] [--calls 200] [--rounds 5]``

Three stacks under the same ``openai`` client code, against the same loopback SIMULATED model (in
another process, so its work does not take the client's interpreter lock):

- plain: the SDK on a bare ``httpx2`` client;
- OTel: the same with OpenTelemetry's httpx instrumentation (``HTTPX2ClientInstrumentor``);
- ours, trace-only: the same with this project's transport (its own LLM span, request and
  response annotation, episode bookkeeping, no fault plan) and the episode span processor.

Both traced stacks hand their spans to a batch processor whose exporter drops them, so span
creation and annotation are compared, not storage (the exporter has its own benchmark). Ours runs
inside episodes of 20 calls each, as an agent's calls do. Stacks are interleaved round by round
so machine load hits them alike; each figure is the median (p50) per-call wall clock over all rounds,
with the p99 beside it. Target: ours / OTel <= 1.2 in every mode.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable
from typing import Any

import httpx2
import openai
from opentelemetry.instrumentation.httpx import HTTPX2ClientInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.transport import AsyncChaosTransport, ChaosTransport
from agentchaos_otel.trace.processors import EpisodeSpanProcessor
from benchmarks.bench_overhead import _pct, alternate, loopback_model

TARGET = 1.2
EPISODE_CALLS = 20
MODES = ("sync", "async", "stream")
STACKS = ("plain httpx", "OTel httpx instrumentation", "ours, trace-only")


class _Discard(SpanExporter):
    def export(self, spans: Any) -> SpanExportResult:
        return SpanExportResult.SUCCESS


MESSAGES = [{"role": "system", "content": "You answer questions."},
            {"role": "user", "content": "What is the answer?"}]


def _providers() -> tuple[TracerProvider, TracerProvider]:
    otel = TracerProvider()
    otel.add_span_processor(BatchSpanProcessor(_Discard()))
    ours = TracerProvider()
    ours.add_span_processor(EpisodeSpanProcessor())
    ours.add_span_processor(BatchSpanProcessor(_Discard()))
    return otel, ours


def _sync_clients(base_url: str, otel: TracerProvider, ours: TracerProvider) -> dict[str, openai.OpenAI]:
    instrumented = httpx2.Client()
    HTTPX2ClientInstrumentor.instrument_client(instrumented, tracer_provider=otel)
    http = {"plain httpx": httpx2.Client(), "OTel httpx instrumentation": instrumented,
            "ours, trace-only": httpx2.Client(transport=ChaosTransport(httpx2.HTTPTransport(), tracer_provider=ours))}
    return {k: openai.OpenAI(base_url=base_url, api_key="sk-simulated", http_client=c, max_retries=0)
            for k, c in http.items()}


def _async_clients(base_url: str, otel: TracerProvider, ours: TracerProvider) -> dict[str, openai.AsyncOpenAI]:
    instrumented = httpx2.AsyncClient()
    HTTPX2ClientInstrumentor.instrument_client(instrumented, tracer_provider=otel)
    http = {"plain httpx": httpx2.AsyncClient(), "OTel httpx instrumentation": instrumented,
            "ours, trace-only": httpx2.AsyncClient(
                transport=AsyncChaosTransport(httpx2.AsyncHTTPTransport(), tracer_provider=ours))}
    return {k: openai.AsyncOpenAI(base_url=base_url, api_key="sk-simulated", http_client=c, max_retries=0)
            for k, c in http.items()}


def _episodes(stack: str, ours: TracerProvider, i: int) -> Any:
    if stack != "ours, trace-only" or i % EPISODE_CALLS:
        return None
    return episode(f"bench-{i}", plan=None, tracer_provider=ours)


def _time_sync(client: openai.OpenAI, stack: str, ours: TracerProvider, calls: int, stream: bool) -> list[float]:
    out, ep = [], None
    for i in range(calls):
        nxt = _episodes(stack, ours, i)
        if nxt is not None:
            if ep is not None:
                ep.__exit__(None, None, None)
            ep = nxt
            ep.__enter__()
        t0 = time.perf_counter()
        if stream:
            for _ in client.chat.completions.create(model="sim-bench", messages=MESSAGES, stream=True):
                pass
        else:
            client.chat.completions.create(model="sim-bench", messages=MESSAGES)
        out.append(time.perf_counter() - t0)
    if ep is not None:
        ep.__exit__(None, None, None)
    return out


async def _time_async(client: openai.AsyncOpenAI, stack: str, ours: TracerProvider, calls: int) -> list[float]:
    out, ep = [], None
    for i in range(calls):
        nxt = _episodes(stack, ours, i)
        if nxt is not None:
            if ep is not None:
                ep.__exit__(None, None, None)
            ep = nxt
            ep.__enter__()
        t0 = time.perf_counter()
        await client.chat.completions.create(model="sim-bench", messages=MESSAGES)
        out.append(time.perf_counter() - t0)
    if ep is not None:
        ep.__exit__(None, None, None)
    return out


def measure(calls: int, rounds: int) -> dict[str, dict[str, tuple[float, float]]]:
    """(p50, p99) seconds per call, by mode and stack."""
    samples: dict[str, dict[str, list[float]]] = {m: {s: [] for s in STACKS} for m in MODES}
    otel, ours = _providers()
    with loopback_model() as base_url:
        sync = _sync_clients(base_url, otel, ours)
        loop = asyncio.new_event_loop()
        try:
            aclients = _async_clients(base_url, otel, ours)
            runs: dict[str, Callable[[str, int], list[float]]] = {
                "sync": lambda s, n: _time_sync(sync[s], s, ours, n, False),
                "async": lambda s, n: loop.run_until_complete(_time_async(aclients[s], s, ours, n)),
                "stream": lambda s, n: _time_sync(sync[s], s, ours, n, True),
            }
            alternate(runs, STACKS, samples, rounds=rounds, calls=calls, warmup=20)
            for c in aclients.values():
                loop.run_until_complete(c.close())
        finally:
            loop.close()
        for c in sync.values():
            c.close()
    otel.shutdown()
    ours.shutdown()
    return {m: {s: (_pct(v, 0.5), _pct(v, 0.99)) for s, v in by.items()} for m, by in samples.items()}


def run(quick: bool = False, calls: int | None = None, rounds: int | None = None) -> list[dict[str, Any]]:
    calls = calls or (30 if quick else 50)  # short alternating blocks: load drift falls on every stack
    rounds = rounds or (4 if quick else 20)
    figures = measure(calls, rounds)
    rows = []
    for mode in MODES:
        (plain, plain99), (otel, otel99), (ours, ours99) = (figures[mode][s] for s in STACKS)
        rows.append({"figure": f"per-call time, {mode}, ours trace-only vs OTel httpx alone",
                     "value": round(ours * 1e6), "unit": "µs", "baseline": "OTel httpx instrumentation alone, same run",
                     "baseline_value": round(otel * 1e6), "ratio": round(ours / otel, 3),
                     "target": f"<= {TARGET}x", "holds": ours / otel <= TARGET, "simulated": True,
                     "plain_us": round(plain * 1e6), "added_vs_plain_us": round((ours - plain) * 1e6),
                     "otel_added_vs_plain_us": round((otel - plain) * 1e6), "calls": calls * rounds,
                     "p99_us": {"plain": round(plain99 * 1e6), "otel": round(otel99 * 1e6),
                                "ours": round(ours99 * 1e6)}})
        rows.append({"figure": f"per-call time, {mode}, ours trace-only vs plain httpx",
                     "value": round(ours * 1e6), "unit": "µs", "baseline": "plain httpx (openai SDK), same run",
                     "baseline_value": round(plain * 1e6), "ratio": round(ours / plain, 3),
                     "target": "report only", "holds": None, "simulated": True, "calls": calls * rounds})
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--calls", type=int, default=None, help="calls per stack per mode per round")
    ap.add_argument("--rounds", type=int, default=None)
    args = ap.parse_args(argv)
    print("SIMULATED loopback model; p50 per-call wall clock through the openai SDK")
    for r in run(args.quick, args.calls, args.rounds):
        holds = "" if r["holds"] is None else f"  target {r['target']}: {'holds' if r['holds'] else 'MISSED'}"
        print(f"{r['figure']}: {r['value']} µs vs {r['baseline_value']} µs ({r['baseline']}) = {r['ratio']}x{holds}")


if __name__ == "__main__":
    main()
