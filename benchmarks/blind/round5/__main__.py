"""``python -m benchmarks.blind.round5 --db D --labels L --seed S [--size N] [--check]``.

Builds the round-5 blind corpus (an accounts-payable agent on the official ``openai`` SDK with ERP
tools over MCP stdio; the model is SIMULATED), or with ``--check`` verifies an existing build's
labels against its store.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.blind.round5", description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--labels", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--size", type=int, default=320)
    ap.add_argument("--check", action="store_true", help="verify the labels against the store instead of building")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    if args.check:
        from benchmarks.blind.round5.check import check

        return check(args.db, args.labels)
    from benchmarks.blind.round5.build import build

    return build(args.db, args.labels, args.seed, args.size, args.quiet)


if __name__ == "__main__":
    sys.exit(main())
