"""The analysis jobs the analysis benchmark times, each run as its own process.

``python -m benchmarks.analysis_jobs JOB FILE``; ``diagnose`` and ``report`` are the real CLI
commands (run by the benchmark directly), the two here have no command of their own:

- ``features``: step-prefix feature rows (``agentchaos_otel.predictors.features.prefix_table``, feature set
  ``both``) of every episode, streamed from the store;
- ``baseline``: every column of every span of the file read into Python through DuckDB's
  ``fetchall``, the floor any analysis that reads the spans pays.
"""

from __future__ import annotations

import sys

import duckdb


def features(path: str) -> int:
    from agentchaos_otel.predictors.features import feature_names, prefix_table
    from agentchaos_otel.store.episodes import iter_episodes

    return len(prefix_table(iter_episodes(path), feature_names("both")).rows)  # type: ignore[arg-type]


def baseline(path: str) -> int:
    conn = duckdb.connect(path, read_only=True)
    try:
        conn.execute("SET enable_progress_bar = false")
        return len(conn.execute("SELECT * FROM spans").fetchall())
    finally:
        conn.close()


JOBS = {"features": features, "baseline": baseline}


def main(argv: list[str]) -> None:
    if len(argv) != 2 or argv[0] not in JOBS:
        raise SystemExit(f"usage: python -m benchmarks.analysis_jobs {{{'|'.join(JOBS)}}} FILE")
    print(JOBS[argv[0]](argv[1]))


if __name__ == "__main__":
    main(sys.argv[1:])
