"""Cost of a root span without LLM or tool steps (a web request) under our processors, side by side.

Run: ``python -m benchmarks root_span`` (or ``python -m benchmarks.bench_root_span [--roots N] [--rounds R]``).

A traced web application under zero-code makes a root span per request, most of them with no
LLM or tool call under them. Two tracer providers take turns, round by round, so machine load
hits both alike:

- *baseline*: the plain OTel SDK with the same store exporter behind a batch processor (what
  the application would have with only the exporter, none of our processors);
- *ours*: what zero-code builds: our episode processor (``instrumentor.add_episode_processor``)
  before the same batch processor, and the episode flush after it
  (``zero_code.add_episode_flushes``), with the process-wide state zero-code sets (no plan).

Two shapes: a root span alone, and a root with two child spans (a database query and an HTTP
call, no LLM). The figures are the median wall-clock time to start and end one root (with its
children), and the CPU time of this process per root; the ratio is ours / baseline. The run
also counts the episode flushes (synchronous store writes) our side made: a root without steps
makes no episode, so the target is none.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind

from agentchaos_otel.instrumentor import add_episode_processor
from agentchaos_otel.plans import binding
from agentchaos_otel.plans.binding import EpisodeState
from agentchaos_otel.plans.plan import NO_FAULTS
from agentchaos_otel.store.durability.episode_flush import EpisodeFlushProcessor
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.zero_code import add_episode_flushes

CONFIGS = ("baseline", "ours")
SHAPES = ("root alone", "root + 2 children")
REQUEST = {"http.request.method": "GET", "url.path": "/orders/42", "http.route": "/orders/{id}"}


def _provider(db: Path, ours: bool, queue: int) -> TracerProvider:
    provider = TracerProvider()
    if ours:
        add_episode_processor(provider)
    # every span of a timed batch fits the queue and none is exported while it is timed: the
    # store write is the same for both sides and happens between batches (``force_flush``)
    provider.add_span_processor(BatchSpanProcessor(DuckDBSpanExporter(str(db)), max_queue_size=queue,
                                                   schedule_delay_millis=600_000, max_export_batch_size=512))
    if ours:
        assert add_episode_flushes(provider) == 1
    return provider


def _flushes(provider: TracerProvider) -> int:
    procs = provider._active_span_processor._span_processors  # noqa: SLF001 - what the SDK holds
    return sum(p.flushes for p in procs if isinstance(p, EpisodeFlushProcessor))


def _roots(tracer: Any, n: int, children: bool, cpu: list[float]) -> list[float]:
    out = []
    c0 = time.process_time()
    for _ in range(n):
        t0 = time.perf_counter()
        with tracer.start_as_current_span("GET /orders/{id}", kind=SpanKind.SERVER, attributes=REQUEST):
            if children:
                with tracer.start_as_current_span("SELECT orders", kind=SpanKind.CLIENT,
                                                  attributes={"db.system.name": "postgresql"}):
                    pass
                with tracer.start_as_current_span("GET", kind=SpanKind.CLIENT,
                                                  attributes={"http.request.method": "GET"}):
                    pass
        out.append(time.perf_counter() - t0)
    cpu.append((time.process_time() - c0) / n)
    return out


def measure(roots: int, rounds: int) -> tuple[dict[str, dict[str, dict[str, float]]], int]:
    tmp = Path(tempfile.mkdtemp(prefix="agentchaos-bench-root-"))
    providers = {c: _provider(tmp / f"{c}.duckdb", c == "ours", queue=3 * max(roots, 200) + 16) for c in CONFIGS}
    tracers = {c: p.get_tracer("web-app") for c, p in providers.items()}
    previous = binding.process_default()
    binding.set_process_default(EpisodeState(task_id=None, plan=NO_FAULTS, seed=0))  # as zero-code does
    try:
        out: dict[str, dict[str, dict[str, float]]] = {}
        for shape in SHAPES:
            children = shape != "root alone"
            wall: dict[str, list[float]] = {c: [] for c in CONFIGS}
            cpu: dict[str, list[float]] = {c: [] for c in CONFIGS}
            for c in CONFIGS:
                _roots(tracers[c], 200, children, [])  # warm up
                providers[c].force_flush()
            for _ in range(rounds):
                for c in CONFIGS:
                    wall[c] += _roots(tracers[c], roots, children, cpu[c])
                    providers[c].force_flush()  # the store write, untimed
            out[shape] = {c: {"wall": statistics.median(wall[c]), "cpu": statistics.median(cpu[c])}
                          for c in CONFIGS}
        flushes = _flushes(providers["ours"])
    finally:
        binding.set_process_default(previous)
        for p in providers.values():
            p.shutdown()
    return out, flushes


def run(quick: bool = False, roots: int | None = None, rounds: int | None = None) -> list[dict[str, Any]]:
    roots = roots or (500 if quick else 5000)
    rounds = rounds or (3 if quick else 7)
    med, flushes = measure(roots, rounds)
    rows: list[dict[str, Any]] = []
    for shape, by in med.items():
        for measure_, what in (("wall", "wall-clock time"), ("cpu", "CPU time")):
            ours, base = by["ours"][measure_], by["baseline"][measure_]
            rows.append({"figure": f"{shape} (no LLM or tool step), {what} per root, ours vs the plain SDK",
                         "value": round(ours * 1e6, 1), "unit": "µs",
                         "baseline": "the same spans, the same exporter, without our processors",
                         "baseline_value": round(base * 1e6, 1), "ratio": round(ours / base, 3),
                         "target": "report only", "holds": None, "added_us": round((ours - base) * 1e6, 1),
                         "roots": roots * rounds})
    rows.append({"figure": "episode flushes (synchronous store writes) for roots without steps",
                 "value": flushes, "unit": "flushes", "baseline": None, "baseline_value": None, "ratio": None,
                 "target": "0", "holds": flushes == 0, "roots": 2 * (roots * rounds + 200)})
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--roots", type=int, default=None, help="roots per configuration per round")
    ap.add_argument("--rounds", type=int, default=None)
    args = ap.parse_args(argv)
    for r in run(args.quick, args.roots, args.rounds):
        if r["baseline_value"] is None:
            print(f"{r['figure']}: {r['value']} (target {r['target']})")
        else:
            print(f"{r['figure']}: {r['value']} µs vs {r['baseline_value']} µs = {r['ratio']}x (+{r['added_us']} µs)")


if __name__ == "__main__":
    main()
