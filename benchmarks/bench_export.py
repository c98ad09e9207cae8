"""Span export into traces.duckdb against the floor of a naive JSON-lines dump of the same spans.

Run: ``python -m benchmarks.bench_export [--quick] [--spans 20480] [--batch 512] [--rounds 7] [--json FILE]``

The spans are built once by the real OpenTelemetry SDK: agent episodes of LLM spans (GenAI
attributes, token usage, finish reasons, a fault event on some) and tool spans (call id,
arguments, result), under one resource. The same spans, in the same batches, then go

- through ``DuckDBSpanExporter.export`` into a fresh DuckDB file, and
- through a naive JSON-lines dump (each span's fields and attributes as one ``json.dumps`` line,
  appended to a file per batch), the floor an exporter of the same spans cannot beat by much.

Both run in the same process, back to back in each round, so machine load affects them alike; each
figure is the median over the rounds, and each ratio the median of the rounds' own ratios (a
shared machine's speed drifts between rounds more than between two runs of one round). The DuckDB
time includes creating the file (a copy of the empty store kept in the cache directory,
``store/template.py``: built once per machine and DuckDB version) and the final close
(checkpoint); each batch is committed before `export` returns, the JSON lines are not synced. A
second DuckDB figure times only the exports into a store that already exists and is open (a
long-running agent's case: the file is created once, checkpointed when it goes quiet). Batches are
as large as the project sizes its DuckDB batch processor (``exporter.EXPORT_BATCH``, what
``configure()`` and zero-code with the store alone use); the same figures at the SDK
BatchSpanProcessor's default of 512 (zero-code beside an OTLP exporter, or sizes of the user's
choosing) are reported beside them.

The second figure is the latency the agent sees while the exporter works: an agent-like loop (wait
200 us with the GIL released, as on a network read, then create and end one span), timed around
both, while another thread calls `export` back to back (what the processor's worker does in a
flood, every span a new one), against the same loop with no export running (measured in turns with
it, over 8 rounds; the figure is the median of the rounds' percentiles, the ratio the median of
their ratios, and the pooled p99 is given beside). The two threads share the GIL, so an exporter
that holds it for long shows up in the p99. They also share the machine's cores: another row
compares the exporter's p99 with the same loop beside a thread that keeps a core busy without the
GIL, which separates the two causes.

Creating an empty store, the fixed cost in the first figure, is timed on its own: the copy of the
cached empty store that ``db.connect`` makes against the same store made from its DDL.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from agentchaos_otel import attributes as A
from agentchaos_otel.store.database.connect import _create_empty, connect, open_store
from agentchaos_otel.store.exporter import EXPORT_BATCH, DuckDBSpanExporter

TARGET_RATIO = 1.0  # at least the rate of the JSON-lines floor (issue 12: >= 50k spans/s here)
TARGET_SPANS_PER_S = 50_000.0
TARGET_LATENCY_RATIO = 1.5  # p99 span creation while exporting vs no exporter: "stays flat"

_TOOLS = ("search", "calculator", "read_file", "weather", "lookup_order")
_MODELS = ("gpt-4o-mini", "claude-3-5-haiku", "qwen2.5-7b-instruct")


def build_spans(n: int, seed: int = 0) -> list[ReadableSpan]:
    """About `n` finished SDK spans of agent episodes (root + alternating LLM and tool steps)."""
    rng = random.Random(seed)
    tp = TracerProvider(resource=Resource({A.SERVICE_NAME: "bench-agent", "service.version": "1.4.2",
                                           "deployment.environment": "bench", "host.name": "bench-host",
                                           "telemetry.sdk.language": "python"}))
    mem = InMemorySpanExporter()
    tp.add_span_processor(SimpleSpanProcessor(mem))
    tracer = tp.get_tracer("agentchaos_otel", "0.1.0")
    made = 0
    episode = 0
    while made < n:
        steps = rng.randint(4, 14)
        task = f"task-{episode:05d}"
        root_attrs = {A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT, A.GEN_AI_AGENT_NAME: "ref",
                      A.TASK_ID: task, A.SEED: episode, A.CONDITION: rng.choice(("none", "llm:truncate"))}
        with tracer.start_as_current_span(A.agent_span_name("ref"), attributes=root_attrs) as root:
            for i in range(steps):
                base = {A.STEP: i, A.TASK_ID: task}
                if i % 2 == 0:
                    model = rng.choice(_MODELS)
                    attrs: dict[str, Any] = {
                        **base, A.GEN_AI_OPERATION_NAME: A.OP_CHAT, A.GEN_AI_PROVIDER_NAME: A.PROVIDER_OPENAI,
                        A.GEN_AI_REQUEST_MODEL: model, A.GEN_AI_RESPONSE_MODEL: model,
                        A.GEN_AI_RESPONSE_ID: f"chatcmpl-{rng.getrandbits(64):016x}",
                        A.GEN_AI_RESPONSE_FINISH_REASONS: (rng.choice(("stop", "tool_calls")),),
                        A.GEN_AI_USAGE_INPUT_TOKENS: rng.randint(50, 4000),
                        A.GEN_AI_USAGE_OUTPUT_TOKENS: rng.randint(5, 600),
                        A.GEN_AI_REQUEST_TEMPERATURE: 0.2, A.GEN_AI_REQUEST_STREAM: rng.random() < 0.3,
                        A.SERVER_ADDRESS: "127.0.0.1", A.SERVER_PORT: 8000,
                        A.HTTP_RESPONSE_STATUS_CODE: 200,
                    }
                    with tracer.start_as_current_span(A.chat_span_name(model), kind=SpanKind.CLIENT,
                                                      attributes=attrs) as sp:
                        if rng.random() < 0.25:
                            sp.add_event(A.EVENT_FAULT_APPLIED, {A.FAULT_DETAIL: "truncate_50",
                                                                 A.FAULT_CHANGED: True})
                else:
                    tool = rng.choice(_TOOLS)
                    attrs = {**base, A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: tool,
                             A.GEN_AI_TOOL_CALL_ID: f"call_{rng.getrandbits(48):012x}",
                             A.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps({"query": f"q{rng.randint(0, 999)}",
                                                                       "limit": rng.randint(1, 10)}),
                             A.GEN_AI_TOOL_CALL_RESULT: json.dumps({"ok": True, "items": [
                                 rng.randint(0, 99) for _ in range(rng.randint(1, 6))]})}
                    with tracer.start_as_current_span(A.tool_span_name(tool), attributes=attrs) as sp:
                        if rng.random() < 0.05:
                            sp.set_status(Status(StatusCode.ERROR, "tool failed"))
            root.set_attribute(A.EPISODE_SUCCESS, rng.random() < 0.7)
        made += steps + 1
        episode += 1
    tp.shutdown()
    return list(mem.get_finished_spans())[:n]


def _naive_line(span: ReadableSpan) -> str:
    ctx = span.context
    return json.dumps({
        "trace_id": format(ctx.trace_id, "032x"), "span_id": format(ctx.span_id, "016x"),
        "parent_span_id": format(span.parent.span_id, "016x") if span.parent is not None else None,
        "name": span.name, "kind": span.kind.name, "start_ns": span.start_time, "end_ns": span.end_time,
        "status_code": span.status.status_code.name, "status_message": span.status.description,
        "scope_name": span.instrumentation_scope.name if span.instrumentation_scope else None,
        "attributes": dict(span.attributes or {}), "resource": dict(span.resource.attributes),
        "events": [{"name": e.name, "time_ns": e.timestamp, "attributes": dict(e.attributes or {})}
                   for e in span.events],
    })


def jsonl_dump(path: str | os.PathLike[str], spans: Sequence[ReadableSpan], batch: int) -> None:
    """The floor: each batch appended to a JSON-lines file, one json.dumps per span."""
    for i in range(0, len(spans), batch):
        with open(path, "a", encoding="utf-8") as f:
            f.write("".join(_naive_line(s) + "\n" for s in spans[i:i + batch]))


def _time_duckdb(path: Path, spans: Sequence[ReadableSpan], batch: int) -> float:
    exp = DuckDBSpanExporter(path)
    t0 = time.perf_counter()
    for i in range(0, len(spans), batch):
        if exp.export(spans[i:i + batch]) != SpanExportResult.SUCCESS:
            raise RuntimeError("export failed")
    exp.shutdown()  # the file is closed and readable again: part of the cost
    elapsed = time.perf_counter() - t0
    with open_store(path) as conn:
        stored = conn.execute("SELECT count(*) FROM spans").fetchone()[0]
    if stored != len({(s.context.trace_id, s.context.span_id) for s in spans}):
        raise RuntimeError(f"{stored} spans stored of {len(spans)}")
    return elapsed


def _time_duckdb_steady(path: Path, spans: Sequence[ReadableSpan], batch: int,
                        warmup: Sequence[ReadableSpan]) -> float:
    """Only the exports, into a store that exists and is open (a long-running agent's case)."""
    exp = DuckDBSpanExporter(path)
    if exp.export(warmup) != SpanExportResult.SUCCESS:  # creates the file and opens the connection
        raise RuntimeError("export failed")
    t0 = time.perf_counter()
    for i in range(0, len(spans), batch):
        if exp.export(spans[i:i + batch]) != SpanExportResult.SUCCESS:
            raise RuntimeError("export failed")
    elapsed = time.perf_counter() - t0
    exp.shutdown()
    return elapsed


def creation(workdir: Path, rounds: int) -> dict[str, float]:
    """Median time to create an empty store: a copy of the cached one (what ``db.connect`` does)
    against the same store made from its DDL, in turns, each opened, checked and closed."""
    times: dict[str, list[float]] = {"copy": [], "ddl": []}
    for r in range(rounds):
        for how, make in (("copy", lambda p: connect(p, read_only=False).close()), ("ddl", _create_empty)):
            path = workdir / f"created-{how}-{r}.duckdb"
            t0 = time.perf_counter()
            make(str(path))
            times[how].append(time.perf_counter() - t0)
    return {how: statistics.median(ts) * 1e3 for how, ts in times.items()}


def _time_jsonl(path: Path, spans: Sequence[ReadableSpan], batch: int) -> float:
    t0 = time.perf_counter()
    jsonl_dump(path, spans, batch)
    return time.perf_counter() - t0


def throughput(n_spans: int, batch: int, rounds: int, workdir: Path) -> dict[str, float]:
    """Median spans/s of each side over `rounds`, and the median of each round's own ratios.

    The three run back to back in every round (in alternating order), so a round's ratio compares
    runs made under the same machine state; on a shared machine whose speed drifts between rounds,
    that ratio moves much less than either side's best time does.
    """
    spans = build_spans(n_spans, seed=7)
    warmup = build_spans(batch, seed=8)
    times: dict[str, list[float]] = {"duckdb": [], "steady": [], "jsonl": []}
    for r in range(rounds):
        order = ("duckdb", "jsonl", "steady") if r % 2 == 0 else ("steady", "jsonl", "duckdb")
        for which in order:
            if which == "duckdb":
                t = _time_duckdb(workdir / f"export-{r}.duckdb", spans, batch)
            elif which == "steady":
                t = _time_duckdb_steady(workdir / f"steady-{r}.duckdb", spans, batch, warmup)
            else:
                t = _time_jsonl(workdir / f"dump-{r}.jsonl", spans, batch)
            times[which].append(t)
    rate = {k: len(spans) / statistics.median(v) for k, v in times.items()}
    ratio = {k: statistics.median(j / t for j, t in zip(times["jsonl"], times[k], strict=True))
             for k in ("duckdb", "steady")}
    return {"spans": float(len(spans)), "duckdb_spans_per_s": rate["duckdb"], "steady_spans_per_s": rate["steady"],
            "jsonl_spans_per_s": rate["jsonl"], "duckdb_ratio": ratio["duckdb"], "steady_ratio": ratio["steady"]}


class _Flood:
    """Calls the DuckDB exporter back to back with prepared batches until stopped."""

    def __init__(self, inner: DuckDBSpanExporter, spans: Sequence[ReadableSpan], batch: int) -> None:
        self.inner, self.spans, self.batch = inner, spans, batch
        self.stop = threading.Event()
        self.exported = 0
        self.passes = 0

        self._at = 0

    def run(self) -> None:
        i = self._at
        while not self.stop.is_set():
            chunk = self.spans[i:i + self.batch]
            self.inner.export(chunk)
            self.exported += len(chunk)
            i += self.batch
            if i >= len(self.spans):  # only re-exports from here on (the dedup path): counted
                i = 0
                self.passes += 1
        self._at = i  # the next round goes on with new spans


def _agent_loop(n: int) -> list[float]:
    """Per iteration: wait 200 us (the agent waiting on I/O, GIL released), then create one span.

    The time is taken around both, so it includes getting the GIL back after the wait, which is
    where a busy exporter thread would delay the agent.
    """
    tracer = TracerProvider().get_tracer("agent")
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        time.sleep(0.0002)
        with tracer.start_as_current_span("chat m", attributes={A.GEN_AI_OPERATION_NAME: A.OP_CHAT, A.STEP: i}):
            pass
        out.append(time.perf_counter() - t0)
    return out


def _pct(values: Sequence[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def _burn(stop: threading.Event) -> None:
    """Keeps one core busy without the GIL (hashlib releases it for large inputs)."""
    data = b"x" * (1 << 22)
    while not stop.is_set():
        hashlib.sha256(data).digest()


def latency(n_calls: int, n_flood: int, batch: int, workdir: Path, rounds: int = 8) -> dict[str, float]:
    """Span-creation latency in the agent's thread: idle vs while the exporter writes continuously.

    A third loop runs beside a thread that keeps a core busy without ever taking the GIL: what
    any concurrent work costs the agent on this machine through the CPU alone (on a small,
    shared machine the agent's thread can wait for a core, not only for the GIL). The exporter's
    figure above that floor is what the GIL and the exporter's own scheduling add.

    The three loops take turns in `rounds` rounds of `n_calls / rounds` iterations each. Each
    percentile is the median over the rounds of that round's percentile, and each ratio the
    median of the rounds' own ratios: a burst of load from outside the process (frequent on a
    shared virtual machine) then moves one round, not the figure. The percentiles over all
    rounds pooled are returned too (``*_pooled``), where one burst in one loop's turn shows.
    """
    flood_spans = build_spans(n_flood, seed=11)  # enough new spans for the whole loop: see flood_passes
    exp = DuckDBSpanExporter(workdir / "latency.duckdb")
    flood = _Flood(exp, flood_spans, batch)
    per_round = max(1, n_calls // rounds)
    quiet: list[list[float]] = []
    busy: list[list[float]] = []
    cpu: list[list[float]] = []
    for _ in range(rounds):
        quiet.append(_agent_loop(per_round))
        flood.stop.clear()
        worker = threading.Thread(target=flood.run, daemon=True)
        worker.start()
        time.sleep(0.2)
        busy.append(_agent_loop(per_round))
        flood.stop.set()
        worker.join()
        stop = threading.Event()
        burner = threading.Thread(target=_burn, args=(stop,), daemon=True)
        burner.start()
        time.sleep(0.05)
        cpu.append(_agent_loop(per_round))
        stop.set()
        burner.join()
    exp.shutdown()

    def per_round(loops: list[list[float]], q: float) -> list[float]:
        return [_pct(one, q) * 1e6 for one in loops]

    def paired(loops: list[list[float]], q: float) -> float:
        return statistics.median(b / a for b, a in zip(per_round(loops, q), per_round(quiet, q), strict=True))

    out = {f"{name}_p{int(q * 100)}_us": statistics.median(per_round(loops, q))
           for name, loops in (("quiet", quiet), ("busy", busy), ("cpu", cpu)) for q in (0.5, 0.99)}
    pooled = {name: [x for one in loops for x in one] for name, loops in (("quiet", quiet), ("busy", busy))}
    return {**out, "busy_p50_ratio": paired(busy, 0.5), "busy_p99_ratio": paired(busy, 0.99),
            "cpu_p99_ratio": statistics.median(b / c for b, c in zip(per_round(busy, 0.99), per_round(cpu, 0.99),
                                                                      strict=True)),
            "quiet_p99_us_pooled": _pct(pooled["quiet"], 0.99) * 1e6,
            "busy_p99_us_pooled": _pct(pooled["busy"], 0.99) * 1e6,
            "flood_spans": float(flood.exported), "flood_passes": float(flood.passes),
            "busy_mean_us": statistics.fmean(pooled["busy"]) * 1e6}


SDK_BATCH = 512  # the SDK BatchSpanProcessor's default max_export_batch_size


def run(quick: bool = False, *, n_spans: int | None = None, batch: int = EXPORT_BATCH,
        rounds: int | None = None) -> list[dict[str, Any]]:
    """Benchmark rows for `python -m benchmarks all`: each figure beside its same-run baseline."""
    n_spans = n_spans or (4096 if quick else 20480)
    rounds = rounds or (3 if quick else 7)
    n_calls = 1000 if quick else 8000
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        tput = throughput(n_spans, batch, rounds, Path(tmp))
        sdk = None
        if batch != SDK_BATCH:
            (Path(tmp) / "sdk").mkdir()
            sdk = throughput(n_spans, SDK_BATCH, rounds, Path(tmp) / "sdk")
        # new spans all along (a pass over them takes longer than the loop), not re-exports
        lat = latency(n_calls, 16384 if quick else 196608, batch, Path(tmp))
        (Path(tmp) / "created").mkdir()
        made = creation(Path(tmp) / "created", 5 if quick else 15)
    ratio = tput["duckdb_ratio"]
    p50_ratio = lat["busy_p50_ratio"]
    p99_ratio = lat["busy_p99_ratio"]
    at = f", batches of {batch}"
    rows = [
        {"figure": "export into DuckDB (DuckDBSpanExporter)" + at, "value": round(tput["duckdb_spans_per_s"]),
         "unit": "spans/s", "baseline": "naive JSON-lines dump of the same spans",
         "baseline_value": round(tput["jsonl_spans_per_s"]), "ratio": round(ratio, 2),
         "target": f">= {TARGET_RATIO:g}x the JSON-lines floor and >= {TARGET_SPANS_PER_S:,.0f} spans/s",
         "holds": ratio >= TARGET_RATIO and tput["duckdb_spans_per_s"] >= TARGET_SPANS_PER_S},
        {"figure": "export into an open DuckDB store (no file creation, no final checkpoint)" + at,
         "value": round(tput["steady_spans_per_s"]), "unit": "spans/s",
         "baseline": "naive JSON-lines dump of the same spans", "baseline_value": round(tput["jsonl_spans_per_s"]),
         "ratio": round(tput["steady_ratio"], 2), "target": f">= {TARGET_RATIO:g}x the JSON-lines floor",
         "holds": tput["steady_ratio"] >= TARGET_RATIO},
        {"figure": "span creation p50 while exporting", "value": round(lat["busy_p50_us"], 1), "unit": "us",
         "baseline": "same loop, no exporter running", "baseline_value": round(lat["quiet_p50_us"], 1),
         "ratio": round(p50_ratio, 2), "target": f"<= {TARGET_LATENCY_RATIO:g}x",
         "holds": p50_ratio <= TARGET_LATENCY_RATIO},
        {"figure": "span creation p99 while exporting" + (" (flood re-exported spans)" if lat["flood_passes"] else ""),
         "value": round(lat["busy_p99_us"], 1), "unit": "us",
         "baseline": "same loop, no exporter running", "baseline_value": round(lat["quiet_p99_us"], 1),
         "ratio": round(p99_ratio, 2), "target": f"<= {TARGET_LATENCY_RATIO:g}x",
         "holds": p99_ratio <= TARGET_LATENCY_RATIO},
        {"figure": "span creation p99 while exporting, vs a GIL-free busy core", "value": round(lat["busy_p99_us"], 1),
         "unit": "us", "baseline": "same loop beside a thread busy in C without the GIL (the CPU alone)",
         "baseline_value": round(lat["cpu_p99_us"], 1), "ratio": round(lat["cpu_p99_ratio"], 2),
         "target": "informational: what the exporter adds above any concurrent work", "holds": None},
        {"figure": "span creation p99 while exporting, all rounds pooled", "value": round(lat["busy_p99_us_pooled"], 1),
         "unit": "us", "baseline": "same loop, no exporter running, all rounds pooled",
         "baseline_value": round(lat["quiet_p99_us_pooled"], 1),
         "ratio": round(lat["busy_p99_us_pooled"] / lat["quiet_p99_us_pooled"], 2),
         "target": "informational: one burst of outside load in one loop's turn moves it", "holds": None},
    ]
    rows.append({"figure": "create a new empty store (copy of the cached empty store, opened and closed)",
                 "value": round(made["copy"], 1), "unit": "ms", "baseline": "the same store made from its DDL",
                 "baseline_value": round(made["ddl"], 1), "ratio": round(made["copy"] / made["ddl"], 2),
                 "target": "informational: part of the first figure", "holds": None})
    if sdk is not None:
        for key, what in (("duckdb_spans_per_s", "export into DuckDB"),
                          ("steady_spans_per_s", "export into an open DuckDB store")):
            rows.append({"figure": f"{what}, batches of {SDK_BATCH} (the SDK's default)", "value": round(sdk[key]),
                         "unit": "spans/s", "baseline": "naive JSON-lines dump of the same spans",
                         "baseline_value": round(sdk["jsonl_spans_per_s"]),
                         "ratio": round(sdk[key.replace("spans_per_s", "ratio")], 2),
                         "target": "informational: sizes the user chose", "holds": None})
    return rows


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer spans and rounds (a smoke run)")
    ap.add_argument("--spans", type=int, help="spans per round (default 20480, quick 4096)")
    ap.add_argument("--batch", type=int, default=EXPORT_BATCH,
                    help=f"spans per export call (default {EXPORT_BATCH}, as configure() sizes it; SDK default 512)")
    ap.add_argument("--rounds", type=int, help="rounds; medians count (default 7, quick 3)")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = ap.parse_args(argv)
    rows = run(quick=args.quick, n_spans=args.spans, batch=args.batch, rounds=args.rounds)
    for r in rows:
        print(f"{r['figure']}: {r['value']:,} {r['unit']}  vs  {r['baseline']}: {r['baseline_value']:,} "
              f"{r['unit']}  ratio {r['ratio']}x  target {r['target']}  holds={r['holds']}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return rows


if __name__ == "__main__":
    main()
