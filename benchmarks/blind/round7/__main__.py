"""``python -m benchmarks.blind.round7 --db D --labels L --seed S [--n N] [--check]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.blind.round7.check import check


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Blind round 7: a freight-operations corpus (SIMULATED model).")
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--labels", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--n", type=int, default=320, help="episodes (default 320)")
    parser.add_argument("--check", action="store_true", help="verify the labels against the store; build nothing")
    parser.add_argument("--summary", action="store_true", help="print the composition of a built corpus")
    args = parser.parse_args(argv)
    if args.summary:
        from benchmarks.blind.round7.summary import summary

        sys.stdout.write(summary(args.db, args.labels))
        return 0
    if args.check:
        problems = check(args.db, args.labels)
        for p in problems:
            print(p)
        print(f"{len(problems)} problems", file=sys.stderr)
        return 1 if problems else 0
    from benchmarks.blind.round7.build import build

    return 1 if build(args.db, args.labels, args.seed, args.n) else 0


if __name__ == "__main__":
    raise SystemExit(main())
