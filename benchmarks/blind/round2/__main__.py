"""python -m benchmarks.blind.round2 --db OUT.duckdb --labels OUT.jsonl --seed N [--episodes M] [--check]"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.blind.round2",
                                 description="Blind round 2: build a labelled corpus of traced agent episodes.")
    ap.add_argument("--db", required=True, type=Path, help="DuckDB trace store to write (replaced)")
    ap.add_argument("--labels", required=True, type=Path, help="JSONL label file to write")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--episodes", type=int, default=320)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--check", action="store_true", help="only check existing labels against the store")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    from .build import build, check

    if a.check:
        return check(a.db, a.labels)
    return build(a.db, a.labels, a.seed, a.episodes, a.concurrency, progress=not a.quiet)


if __name__ == "__main__":
    sys.exit(main())
