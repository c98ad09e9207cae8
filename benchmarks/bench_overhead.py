"""Trace-only per-call overhead of this project against plain httpx and OTel's httpx instrumentation.

Run: ``python -m benchmarks.bench_overhead [--quick] [--calls 50] [--rounds 40]``; ``--sdk`` measures
through the official openai SDK instead, sync, async and streaming (``benchmarks.bench_overhead_sdk``);
``--full`` the whole stack (OTel's httpx instrumentation, our transport, the DuckDB exporter) with no
fault and with a fault on every call.

Three stacks send the same chat-completions request to the same loopback SIMULATED model, sync
(``httpx2.Client``) and async (``httpx2.AsyncClient``), the client the openai and anthropic SDKs use:

- plain httpx: a bare client;
- OTel httpx instrumentation: the same client instrumented (``HTTPX2ClientInstrumentor``);
- ours, trace-only: the same client over our transport (its LLM span, request and response
  annotation, step numbering, episodes of 20 calls as an agent's calls come, no fault plan);
- two floors, informational: one bare SDK span around the call, and that span with both bodies
  parsed as JSON: what any design with a span per call pays before it annotates anything.

Both traced stacks hand their spans to a batch processor whose exporter drops them: span work is
compared, not storage (the exporter has its own benchmark). The model runs in another process, so
its work does not take the client's interpreter lock. Stacks alternate in short rounds so machine
load falls on them alike. Per stack: the wall clock per call at p50 and p99, and the calling
thread's CPU time per call at p50 (what the stack itself costs, less sensitive to a busy machine).
Target: ours adds at most 100 µs per call at p50 over plain httpx, sync and async. The model is
simulated: absolute latencies say nothing about real providers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

TARGET_ADDED_US = 100.0
EPISODE_CALLS = 20
STACKS = ("plain httpx", "OTel httpx instrumentation", "ours, trace-only")
# Floors: what any design that puts one span on each call pays before it annotates anything.
FLOORS = ("floor: one bare span", "floor: one bare span, both bodies parsed")
MODES = ("sync", "async")
BODY = {"model": "sim-bench", "messages": [{"role": "system", "content": "You answer questions."},
                                           {"role": "user", "content": "What is the answer?"}]}


class ShortAnswer:
    """The simulated model of every overhead benchmark: one short answer."""

    name = "sim-bench"

    def respond(self, request: dict[str, Any], rng: random.Random) -> Any:
        from agentchaos_otel.sim.policy import Turn

        return Turn(content="The answer is 42, as simulated, in a few more words than one.")


def _serve() -> None:
    """``--serve``: the model in this process until stdin closes; prints its base URL first."""
    from agentchaos_otel.sim.server import SimulatedModelServer

    with SimulatedModelServer(ShortAnswer(), seed=0) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()


@contextlib.contextmanager
def loopback_model() -> Iterator[str]:
    """The simulated model in a child process; yields its base URL (``.../v1``)."""
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.bench_overhead", "--serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parent.parent)
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        if not base_url.startswith("http"):
            raise RuntimeError("the simulated model did not start")
        yield base_url
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


class _Discard:
    """A span exporter that drops spans, so traced stacks pay for spans but not for I/O."""

    def export(self, spans: Any) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def _providers() -> tuple[Any, Any]:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from agentchaos_otel.trace.processors import EpisodeSpanProcessor

    otel = TracerProvider()
    otel.add_span_processor(BatchSpanProcessor(_Discard()))  # type: ignore[arg-type]
    ours = TracerProvider()
    ours.add_span_processor(EpisodeSpanProcessor())
    ours.add_span_processor(BatchSpanProcessor(_Discard()))  # type: ignore[arg-type]
    return otel, ours


class _FloorTransport:
    """The least a span-per-call transport does: one SDK span around the call with the request's
    model as its one attribute and, with ``parse``, both bodies read and parsed as JSON (the reply
    handed back as read). Benchmark only: it measures the floor under our per-call time."""

    def __init__(self, wrapped: Any, provider: Any, parse: bool) -> None:
        self.wrapped, self.parse = wrapped, parse
        self.tracer = provider.get_tracer("agentchaos.bench.floor")

    def _start(self, request: Any) -> Any:
        model = json.loads(request.content).get("model") if self.parse else None
        return self.tracer.start_as_current_span("chat", attributes={"gen_ai.request.model": model or ""})

    def _reply(self, request: Any, response: Any, raw: bytes) -> Any:
        import httpx2

        json.loads(raw)
        return httpx2.Response(response.status_code, headers=response.headers.raw, content=raw,
                               request=request, extensions=response.extensions)

    def handle_request(self, request: Any) -> Any:
        with self._start(request):
            response = self.wrapped.handle_request(request)
            if not self.parse:
                return response
            return self._reply(request, response, response.read())

    async def handle_async_request(self, request: Any) -> Any:
        with self._start(request):
            response = await self.wrapped.handle_async_request(request)
            if not self.parse:
                return response
            return self._reply(request, response, await response.aread())

    def close(self) -> None:
        self.wrapped.close()

    async def aclose(self) -> None:
        await self.wrapped.aclose()


def _clients(otel: Any, ours: Any, asynchronous: bool) -> dict[str, Any]:
    import httpx2
    from opentelemetry.instrumentation.httpx import HTTPX2ClientInstrumentor

    from agentchaos_otel.inject.transport import AsyncChaosTransport, ChaosTransport

    if asynchronous:
        instrumented = httpx2.AsyncClient()
        ours_client = httpx2.AsyncClient(transport=AsyncChaosTransport(httpx2.AsyncHTTPTransport(),
                                                                       tracer_provider=ours))
        plain = httpx2.AsyncClient()
    else:
        instrumented = httpx2.Client()
        ours_client = httpx2.Client(transport=ChaosTransport(httpx2.HTTPTransport(), tracer_provider=ours))
        plain = httpx2.Client()
    HTTPX2ClientInstrumentor.instrument_client(instrumented, tracer_provider=otel)
    client = httpx2.AsyncClient if asynchronous else httpx2.Client
    inner = httpx2.AsyncHTTPTransport if asynchronous else httpx2.HTTPTransport
    floors = [client(transport=_FloorTransport(inner(), otel, parse)) for parse in (False, True)]
    return dict(zip(STACKS + FLOORS, (plain, instrumented, ours_client, *floors), strict=True))


class _Episodes:
    """Episodes of ``EPISODE_CALLS`` calls around the traced stack's calls (none for the others)."""

    def __init__(self, provider: Any, on: bool) -> None:
        self.provider, self.on, self.n, self.current = provider, on, 0, None

    def before_call(self) -> None:
        """Start an episode every ``EPISODE_CALLS`` calls (and after ``close``)."""
        if self.on and self.current is None:
            self.n = 0
        if not self.on or self.n % EPISODE_CALLS:
            self.n += 1
            return
        from agentchaos_otel.episode_scope import episode

        self.close()
        self.current = episode(f"bench-{self.n}", plan=None, tracer_provider=self.provider)
        self.current.__enter__()
        self.n += 1

    def close(self) -> None:
        if self.current is not None:
            self.current.__exit__(None, None, None)
            self.current = None


def _time_sync(client: Any, url: str, calls: int, episodes: _Episodes) -> list[tuple[float, float]]:
    out = []
    try:
        for _ in range(calls):
            episodes.before_call()
            c0, w0 = time.thread_time(), time.perf_counter()
            client.post(url, json=BODY).read()
            out.append((time.perf_counter() - w0, time.thread_time() - c0))
    finally:
        episodes.close()
    return out


async def _time_async(client: Any, url: str, calls: int, episodes: _Episodes) -> list[tuple[float, float]]:
    out = []
    try:  # an episode ends in the task it started in
        for _ in range(calls):
            episodes.before_call()
            c0, w0 = time.thread_time(), time.perf_counter()
            response = await client.post(url, json=BODY)
            await response.aread()
            out.append((time.perf_counter() - w0, time.thread_time() - c0))
    finally:
        episodes.close()
    return out


def alternate(runs: dict[str, Callable[[str, int], list[Any]]], stacks: Sequence[str],
              samples: dict[str, dict[str, list[Any]]], *, rounds: int, calls: int, warmup: int) -> None:
    """Every (mode, stack) warmed up, then timed in alternating blocks of ``calls`` for ``rounds``
    rounds, so a change in the machine's load falls on every stack alike."""
    for mode in runs:
        for stack in stacks:
            runs[mode](stack, warmup)
    for _ in range(rounds):
        for mode in runs:
            for stack in stacks:
                samples[mode][stack].extend(runs[mode](stack, calls))


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(calls: int, rounds: int) -> dict[str, dict[str, dict[str, float]]]:
    """Per mode and stack: wall p50/p99 and CPU p50 per call, in µs."""
    stacks = STACKS + FLOORS
    samples: dict[str, dict[str, list[tuple[float, float]]]] = {m: {s: [] for s in stacks} for m in MODES}
    otel, ours = _providers()
    with loopback_model() as base_url:
        url = f"{base_url}/chat/completions"
        sync = _clients(otel, ours, asynchronous=False)
        loop = asyncio.new_event_loop()
        try:
            aclients = _clients(otel, ours, asynchronous=True)
            episodes = {(m, s): _Episodes(ours, s == STACKS[2]) for m in MODES for s in stacks}
            runs: dict[str, Callable[[str, int], list[tuple[float, float]]]] = {
                "sync": lambda s, n: _time_sync(sync[s], url, n, episodes["sync", s]),
                "async": lambda s, n: loop.run_until_complete(_time_async(aclients[s], url, n,
                                                                          episodes["async", s])),
            }
            alternate(runs, stacks, samples, rounds=rounds, calls=calls, warmup=50)
            for c in aclients.values():
                loop.run_until_complete(c.aclose())
        finally:
            loop.close()
        for c in sync.values():
            c.close()
    otel.shutdown()
    ours.shutdown()
    return {m: {s: {"wall_p50_us": _pct([w for w, _ in v], 0.5) * 1e6,
                    "wall_p99_us": _pct([w for w, _ in v], 0.99) * 1e6,
                    "cpu_p50_us": statistics.median(c for _, c in v) * 1e6, "calls": len(v)}
                for s, v in by.items()} for m, by in samples.items()}


def rows(figures: dict[str, dict[str, dict[str, float]]]) -> list[dict[str, Any]]:
    """Rows for ``python -m benchmarks``: per mode, ours vs plain (the target) and vs OTel alone."""
    out = []
    for mode, by in figures.items():
        plain, otel, ours = (by[s] for s in STACKS)
        added = ours["wall_p50_us"] - plain["wall_p50_us"]
        common = {"unit": "µs", "simulated": True, "calls": ours["calls"],
                  "p50_us": {s: round(by[s]["wall_p50_us"]) for s in STACKS},
                  "p99_us": {s: round(by[s]["wall_p99_us"]) for s in STACKS},
                  "cpu_p50_us": {s: round(by[s]["cpu_p50_us"]) for s in STACKS}}
        out.append({"figure": f"trace-only time added per call, {mode}, p50: ours - plain httpx",
                    "value": round(added), "baseline": "plain httpx (httpx2), same run",
                    "baseline_value": round(plain["wall_p50_us"]),
                    "ratio": round(ours["wall_p50_us"] / plain["wall_p50_us"], 3),
                    "target": f"<= +{TARGET_ADDED_US:.0f} µs", "holds": added <= TARGET_ADDED_US,
                    "cpu_added_us": round(ours["cpu_p50_us"] - plain["cpu_p50_us"]), **common})
        out.append({"figure": f"per-call time, {mode}, p50: ours trace-only vs OTel httpx instrumentation alone",
                    "value": round(ours["wall_p50_us"]), "baseline": "OTel httpx instrumentation alone, same run",
                    "baseline_value": round(otel["wall_p50_us"]),
                    "ratio": round(ours["wall_p50_us"] / otel["wall_p50_us"], 3), "target": "report only",
                    "holds": None, "otel_added_us": round(otel["wall_p50_us"] - plain["wall_p50_us"]), **common})
        for floor in FLOORS:
            f = by[floor]
            out.append({"figure": f"{floor}: time added per call, {mode}, p50, over plain httpx",
                        "value": round(f["wall_p50_us"] - plain["wall_p50_us"]),
                        "baseline": "plain httpx (httpx2), same run", "baseline_value": round(plain["wall_p50_us"]),
                        "ratio": round(f["wall_p50_us"] / plain["wall_p50_us"], 3),
                        "target": "informational: what one span per call costs before any annotation",
                        "holds": None, "cpu_added_us": round(f["cpu_p50_us"] - plain["cpu_p50_us"]),
                        "unit": "µs", "simulated": True, "calls": f["calls"]})
    return out


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Rows for ``python -m benchmarks all``: these figures, then the openai SDK's."""
    from benchmarks import bench_overhead_sdk

    return rows(measure(30 if quick else 50, 10 if quick else 40)) + bench_overhead_sdk.run(quick)


def _print(figures: dict[str, dict[str, dict[str, float]]]) -> None:
    print("SIMULATED loopback model in another process; per call: wall clock p50 / p99 and the calling "
          "thread's CPU time p50, in µs")
    for mode, by in figures.items():
        plain = by[STACKS[0]]
        print(f"{mode}:")
        for stack, f in by.items():
            print(f"  {stack:42} wall p50 {f['wall_p50_us']:7.0f} (+{f['wall_p50_us'] - plain['wall_p50_us']:4.0f})"
                  f"  p99 {f['wall_p99_us']:7.0f}  cpu p50 {f['cpu_p50_us']:6.0f} "
                  f"(+{f['cpu_p50_us'] - plain['cpu_p50_us']:4.0f})  [{f['calls']} calls]")
    for r in rows(figures):
        holds = "" if r["holds"] is None else f"  target {r['target']}: {'holds' if r['holds'] else 'MISSED'}"
        print(f"{r['figure']}: {r['value']} µs (baseline {r['baseline_value']} µs, ratio {r['ratio']}){holds}")


def _full(calls: int, rounds: int) -> None:
    """``--full``: OTel's httpx instrumentation + our transport + the DuckDB exporter, no fault and a
    fault on every call, against plain httpx and OTel alone (each call its own episode)."""
    import httpx2
    from opentelemetry.instrumentation.httpx import HTTPX2ClientInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from agentchaos_otel.episode_scope import episode
    from agentchaos_otel.inject.transport import ChaosTransport
    from agentchaos_otel.store.exporter import DuckDBSpanExporter
    from agentchaos_otel.trace.processors import EpisodeSpanProcessor

    tmp = Path(tempfile.mkdtemp(prefix="agentchaos-bench-"))
    otel_provider, _ = _providers()
    full_provider = TracerProvider()
    full_provider.add_span_processor(EpisodeSpanProcessor())
    full_provider.add_span_processor(BatchSpanProcessor(DuckDBSpanExporter(str(tmp / "bench.duckdb"))))
    results: dict[str, list[float]] = {}
    with loopback_model() as base_url:
        url = f"{base_url}/chat/completions"
        plain, otel_only = httpx2.Client(), httpx2.Client()
        HTTPX2ClientInstrumentor.instrument_client(otel_only, tracer_provider=otel_provider)
        full = httpx2.Client(transport=ChaosTransport(httpx2.HTTPTransport(), tracer_provider=full_provider))
        HTTPX2ClientInstrumentor.instrument_client(full, tracer_provider=full_provider)
        configs: list[tuple[str, Any, str | None, bool]] = [
            ("plain httpx", plain, None, False), ("OTel httpx instrumentation", otel_only, None, False),
            ("agentchaos, no fault", full, None, True), ("agentchaos, fault every call", full,
                                                          "llm_error_persistent", True)]
        for _ in range(rounds + 1):  # the first round warms up
            for name, client, plan, episodes in configs:
                for i in range(calls):
                    scope = episode(f"bench-{i}", plan=plan, tracer_provider=full_provider) if episodes \
                        else contextlib.nullcontext()
                    with scope:
                        t0 = time.perf_counter()
                        client.post(url, json=BODY).read()
                        results.setdefault(name, []).append(time.perf_counter() - t0)
        for client in (plain, otel_only, full):
            client.close()
    otel_provider.shutdown()
    full_provider.shutdown()
    base = statistics.median(results["plain httpx"][calls:])
    print(f"SIMULATED loopback model; per-call wall clock over {calls * rounds} calls per configuration, in µs")
    for name, samples in results.items():
        kept = samples[calls:]
        print(f"  {name:30} p50 {_pct(kept, 0.5) * 1e6:7.0f} (+{(_pct(kept, 0.5) - base) * 1e6:5.0f})  "
              f"p99 {_pct(kept, 0.99) * 1e6:7.0f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--calls", type=int, default=None, help="calls per stack per mode per round (default 50)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 40)")
    parser.add_argument("--sdk", action="store_true", help="through the openai SDK: sync / async / stream")
    parser.add_argument("--full", action="store_true", help="the whole stack with the DuckDB exporter")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        _serve()
        return
    calls = args.calls or (30 if args.quick else 50)
    rounds = args.rounds or (10 if args.quick else 40)
    if args.sdk:
        from benchmarks import bench_overhead_sdk

        bench_overhead_sdk.main(["--calls", str(calls), "--rounds", str(rounds)])
    elif args.full:
        _full(calls, rounds)
    else:
        _print(measure(calls, rounds))


if __name__ == "__main__":
    main()
