"""Build (or check) blind round 6.

``python -m benchmarks.blind.round6 --db D --labels L --seed S [--size N] [--check]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .build import build
from .check import check
from .stats import composition, forms_table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path)
    ap.add_argument("--labels", type=Path)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--size", type=int, default=320)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--check", action="store_true", help="verify every labelled step against the store")
    ap.add_argument("--stats", action="store_true", help="print the composition of a built corpus")
    ap.add_argument("--forms", action="store_true", help="print the form catalogue as a Markdown table")
    a = ap.parse_args(argv)
    if a.forms:
        print(forms_table(), end="")
        return 0
    if a.stats:
        print(composition(a.labels, a.seed, a.size), end="")
        return 0
    if a.db is None or a.labels is None:
        ap.error("--db and --labels are required")
    if a.check:
        problems = check(a.db, a.labels)
        for p in problems:
            print(p, file=sys.stderr)
        print(f"{len(problems)} problems")
        return 1 if problems else 0
    problems = build(a.db, a.labels, a.seed, a.size, a.concurrency)
    for p in problems:
        print(p, file=sys.stderr)
    print(f"built {a.size} episodes into {a.db}; labels in {a.labels}; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
