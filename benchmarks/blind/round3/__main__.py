"""``python -m benchmarks.blind.round3 --db D --labels L --seed S [--size N] [--check]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.blind.round3.build import build
from benchmarks.blind.round3.check import check


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Blind round 3: a pydantic-ai shop agent on a loopback model.")
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--labels", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--size", type=int, default=320)
    parser.add_argument("--check", action="store_true", help="verify the labels against the store instead of building")
    args = parser.parse_args(argv)
    if args.check:
        return check(args.db, args.labels)
    return build(args.db, args.labels, args.seed, args.size)


if __name__ == "__main__":
    sys.exit(main())
