"""``python -m benchmarks.blind.round8 --db D --labels L --seed S [--n N] [--check]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--labels", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--n", type=int, default=320, help="episodes (default 320)")
    parser.add_argument("--check", action="store_true", help="verify the labels against the store only")
    args = parser.parse_args(argv)
    if args.check:
        from .check import check
        problems = check(args.db, args.labels)
    else:
        from .build import build
        problems = build(args.db, args.labels, args.seed, args.n)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
