"""Rule-based diagnosis throughput: 10,000 simulated episodes, printed as episodes per second.

Episodes come from ``diagnosers.synthetic`` (SIMULATED): a pool of distinct episodes over every
configuration is generated once and cycled up to the requested count, because generating is
slower than diagnosing and is not what is measured. Two figures are printed: diagnosis of
in-memory episodes, and (``--store``) the full path of loading them from a DuckDB trace file.

    .venv/bin/python -m benchmarks.bench_diagnose [--episodes 10000] [--pool 600] [--store]
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

from diagnosers import synthetic
from diagnosers.base import diagnose_episodes
from diagnosers.rules import RuleDiagnoser
from diagnosers.spans import write_episodes
from diagnosers.tracefile import load


def corpus(n: int, pool: int, long: bool) -> list:
    configs = synthetic.all_configs(heldout=True)
    per = max(1, pool // (len(configs) + 1))
    base = synthetic.make_corpus(per, 1, heldout=True, long=long)
    return [dataclasses.replace(base[i % len(base)], trace_id=f"{base[i % len(base)].trace_id}-{i}")
            for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=10_000)
    ap.add_argument("--pool", type=int, default=600, help="distinct simulated episodes generated")
    ap.add_argument("--long", action="store_true", help="15-30 LLM calls per episode")
    ap.add_argument("--store", action="store_true", help="also time loading from a DuckDB trace file")
    args = ap.parse_args()
    t0 = time.perf_counter()
    eps = corpus(args.episodes, args.pool, args.long)
    steps = sum(len(e.steps) for e in eps)
    print(f"SIMULATED corpus: {len(eps)} episodes, {steps} steps "
          f"({steps / len(eps):.1f} per episode), generated in {time.perf_counter() - t0:.1f} s")
    diagnoser = RuleDiagnoser()
    t0, c0 = time.perf_counter(), time.process_time()
    out = diagnose_episodes(diagnoser, eps)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    found = sum(d.found for d in out)
    print(f"rule-based, in memory: {len(out)} episodes in {dt:.2f} s = {len(out) / dt:,.0f} episodes/s "
          f"({steps / dt:,.0f} steps/s; CPU time {cpu:.2f} s = {len(out) / cpu:,.0f} episodes/s per core); "
          f"{found} with a diagnosis")
    if args.store:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bench.duckdb"
            t0 = time.perf_counter()
            write_episodes(eps, path)
            print(f"wrote {len(eps)} episodes as spans in {time.perf_counter() - t0:.1f} s")
            t0 = time.perf_counter()
            loaded = load(path)
            t1 = time.perf_counter()
            diagnose_episodes(diagnoser, loaded)
            t2 = time.perf_counter()
            print(f"rule-based from the trace file: load {t1 - t0:.2f} s + diagnose {t2 - t1:.2f} s = "
                  f"{len(loaded) / (t2 - t0):,.0f} episodes/s")


if __name__ == "__main__":
    main()
