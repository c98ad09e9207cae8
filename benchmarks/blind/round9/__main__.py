"""Build or check blind round 9 (healthcare front office on LangGraph; the model is SIMULATED).

``python -m benchmarks.blind.round9 --db D --labels L --seed S`` builds the DuckDB store and the
label file; with ``--check`` it verifies every labelled step against the store instead.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--labels", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--size", type=int, default=320, help="episodes (default 320)")
    parser.add_argument("--workers", type=int, default=8, help="episodes run at once")
    parser.add_argument("--check", action="store_true", help="verify the labels against the store")
    args = parser.parse_args(argv)
    if args.check:
        from benchmarks.blind.round9.check import check

        problems = check(args.db, args.labels)
        for p in problems:
            print(p, file=sys.stderr)
        print(f"{len(problems)} problems")
        return 1 if problems else 0
    from benchmarks.blind.round9.build import build

    return build(args.db, args.labels, args.seed, args.size, args.workers)


if __name__ == "__main__":
    raise SystemExit(main())
