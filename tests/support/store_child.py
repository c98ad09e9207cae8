"""A small agent process for the durability tests: runs episodes through ``configure()``, then
optionally kills itself with SIGKILL, and prints what it produced (one JSON line per ended episode).

``python -m tests.support.store_child DB N [--kill between|in_flight] [--fill DIR]``: with ``--fill`` the
episodes in the middle third run while DIR's filesystem is full (a filler file takes all free
space), and the child counts the stored spans itself with plain DuckDB SQL before it exits (the
filesystem may not outlive the process).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from pathlib import Path

from opentelemetry import trace

from agentchaos_otel.episode_scope import episode
from agentchaos_otel.setup import configure

STEPS = 3  # child spans per episode (plus the root)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def run_episode(tracer: trace.Tracer, name: str) -> str:
    with episode(name) as ep:
        for j in range(STEPS):
            with tracer.start_as_current_span(f"step-{j}", attributes={"step.index": j}):
                pass
        ep.set_outcome(True)
        assert ep.span is not None
        return format(ep.span.get_span_context().trace_id, "032x")


def fill(directory: Path) -> Path:
    filler = directory / "filler.bin"
    with open(filler, "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    return filler


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("n", type=int)
    ap.add_argument("--kill", choices=("between", "in_flight"))
    ap.add_argument("--fill")
    args = ap.parse_args()
    collect = _Collect()
    logging.getLogger("agentchaos_otel").addHandler(collect)
    configure(db=args.db, instrument=False)
    tracer = trace.get_tracer("store-child")
    filler = None
    for i in range(args.n):
        if args.fill and i == args.n // 3:
            filler = fill(Path(args.fill))
        if filler is not None and i == 2 * args.n // 3:
            filler.unlink()
            filler = None
        tid = run_episode(tracer, f"task-{i}")
        print(json.dumps({"ended": tid, "spans": STEPS + 1}), flush=True)
    if args.kill == "between":
        os.kill(os.getpid(), signal.SIGKILL)
    if args.kill == "in_flight":
        with episode("in-flight"):
            with tracer.start_as_current_span("step-0"):
                pass
            os.kill(os.getpid(), signal.SIGKILL)
    trace.get_tracer_provider().shutdown()  # type: ignore[attr-defined]
    if args.fill:
        import duckdb

        with duckdb.connect(args.db, read_only=True) as conn:
            stored = conn.execute("SELECT trace_id, count(*) FROM spans GROUP BY 1").fetchall()
        print(json.dumps({"stored": dict(stored), "log": collect.messages,
                          "spool": os.path.exists(args.db + ".spool.jsonl")}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
