"""python -m benchmarks.blind.round1 --db OUT.duckdb --labels OUT.jsonl --seed N [--episodes M] [--check] [--verbose]"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.blind.round1", description=__doc__)
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--labels", required=True, type=Path)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--episodes", type=int, default=320)
    ap.add_argument("--check", action="store_true", help="only check an existing build against its store")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args(argv)
    from .check import check

    if a.check:
        return check(a.db, a.labels)
    from .build import build

    rc = build(a.db, a.labels, a.seed, a.episodes, verbose=a.verbose)
    rc2 = check(a.db, a.labels)
    return rc or rc2


if __name__ == "__main__":
    sys.exit(main())
