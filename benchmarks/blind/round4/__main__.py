"""``python -m benchmarks.blind.round4 --db D --labels L --seed S [--size N] [--check]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.blind.round4", description=__doc__)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--labels", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--size", type=int, default=320, help="episodes (the composition scales with it)")
    parser.add_argument("--check", action="store_true", help="verify the labels against an existing store")
    args = parser.parse_args(argv)
    if args.check:
        from benchmarks.blind.round4.check import check
        return check(args.db, args.labels)
    from benchmarks.blind.round4.build import build
    return build(args.db, args.labels, args.seed, args.size)


if __name__ == "__main__":
    sys.exit(main())
