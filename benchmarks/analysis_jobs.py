"""The baseline the analysis benchmark times beside the real commands, as its own process.

``python -m benchmarks.analysis_jobs baseline FILE``: every column of every span of the file read
into Python through DuckDB's ``fetchall``, the floor any analysis that reads the spans pays.
(``diagnose``, ``predict features`` and ``report`` are the real CLI commands, run directly.)
"""

from __future__ import annotations

import sys

import duckdb


def baseline(path: str) -> int:
    conn = duckdb.connect(path, read_only=True)
    try:
        conn.execute("SET enable_progress_bar = false")
        return len(conn.execute("SELECT * FROM spans").fetchall())
    finally:
        conn.close()


JOBS = {"baseline": baseline}


def main(argv: list[str]) -> None:
    if len(argv) != 2 or argv[0] not in JOBS:
        raise SystemExit(f"usage: python -m benchmarks.analysis_jobs {{{'|'.join(JOBS)}}} FILE")
    print(JOBS[argv[0]](argv[1]))


if __name__ == "__main__":
    main(sys.argv[1:])
